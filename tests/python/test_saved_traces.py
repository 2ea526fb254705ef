"""Cross-output consistency on saved traces: every real trace under tests/data/traces/ and,
always, one captured through the libcupti test double.

What the test checks holds for any trace, so it needs no expected numbers: each output
(summary.json, timeline.json, every CSV table, the printed summary, `compare` of a trace with
itself, a save/load round trip) must agree with the record tables it was made from. The record
tables are the reference; the checks recount them independently with numpy here.

Real traces (captured on a GPU with tests/gpu/run_on_gpu.sh, see tests/data/traces/README.md)
are picked up by name: drop `<name>.fpgaprof` into tests/data/traces/ and this file tests it.
"""
from __future__ import annotations

import csv
import glob
import io
import json
import math
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

import fpgaprof
from fpgaprof import report
from _store_builder import store_from_lists

jsonschema = pytest.importorskip("jsonschema")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TRACE_DIR = os.path.join(ROOT, "tests", "data", "traces")
SCHEMA = os.path.join(ROOT, "docs", "summary.schema.json")
REAL = sorted(glob.glob(os.path.join(TRACE_DIR, "*.fpgaprof")))

# The test double's trace: 2 threads x 48 kernels with copies, memsets, an allocation, XLA
# module/thunk ranges and an open range, inside one region (tests/fake_cupti/fake_cupti.hpp).
FAKE_CODE = """
path = os.environ["TRACE_OUT"]
with fpgaprof.trace(path) as prof:
    with fpgaprof.region("outer"):
        with fpgaprof.region("inner"):
            emit()
done({"kernels": len(prof.kernels)})
"""

COPY_KIND = {1: "HtoD", 2: "DtoH", 8: "DtoD", 10: "PtoP", 0: "unknown"}


def _fake_trace(tmp_path_factory) -> str:
    fake = pytest.importorskip("_fake_cupti")
    fake.need_fake()
    path = str(tmp_path_factory.mktemp("fake") / "fake.fpgaprof")
    out = fake.run_traced(FAKE_CODE, kernels=48, threads=2, extra_env={"TRACE_OUT": path})
    assert out["kernels"] == 96, out
    return path


def _hlo_trace(tmp_path_factory) -> str:
    """A trace built through the bindings around a real XLA module (compiled here on CPU): one
    kernel per entry fusion, named after it (attribution by kernel name), each run 3 times on an
    A100-like device, long enough (0.1-0.7 ms) that some ops gain on the card: every op has a
    static cost and the candidates are scored."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    from fpgaprof.base.core import core

    def f(x, w, idx):
        y = jnp.sin(x) * 2.0 + 1.0
        return jnp.dot(y[idx], w).sum(axis=0), jnp.cumsum(y, axis=1)

    text = jax.jit(f).lower(jnp.ones((256, 256)), jnp.ones((256, 64)),
                            jnp.arange(128)).compile().as_text()
    entry = next(c for c in core.hlo.analyze(text).computations if c.is_entry)
    # GPU kernel names are the fusion names with '.' and '-' replaced, as XLA names them
    names = [core.attribution.sanitize_kernel_name(i.name) for i in entry.instructions
             if i.opcode == "fusion"]
    assert len(names) >= 4, names
    kernels, t = [], 1_000
    for rep in range(3):
        for k, n in enumerate(names):
            d = 100_000 * (k + 1)
            kernels.append({"name": n, "start_ns": t, "end_ns": t + d, "grid": 64})
            t += d + 500
    store = store_from_lists({
        "devices": [{"name": "A100-like", "cc_major": 8, "cc_minor": 0, "sm_count": 108,
                     "core_clock_khz": 1_410_000, "memory_clock_khz": 1_215_000,
                     "memory_bus_width_bits": 5120, "pcie_generation": 4, "pcie_link_width": 16}],
        "kernels": kernels,
        "hlo_modules": [{"name": "jit_f", "text": text}],
        "memcpys": [{"copy_kind": 1, "src_kind": 1, "dst_kind": 3, "bytes": 1 << 18,
                     "start_ns": 100, "end_ns": 900}],
        "start_ns": 0, "end_ns": t + 10_000,
    })
    path = str(tmp_path_factory.mktemp("hlo") / "hlo.fpgaprof")
    fpgaprof.Profile(store).save(path)
    return path


def _transfer_trace(tmp_path_factory) -> str:
    """tests/python/_constructed_trace.py: every copy direction, pageable copies, a tiny-copy
    flood, syncs, allocations, nested regions and copies attributed to ops."""
    import _constructed_trace
    path = str(tmp_path_factory.mktemp("xfer") / "transfers.fpgaprof")
    _constructed_trace.store().save(path)
    return path


@pytest.fixture(scope="module", params=["test-double", "constructed-hlo", "constructed-transfers"]
                + [os.path.basename(p) for p in REAL])
def saved(request, tmp_path_factory):
    """(trace path, loaded Profile, folder with summary.json / timeline.json / report.html)."""
    if request.param == "test-double":
        path = _fake_trace(tmp_path_factory)
    elif request.param == "constructed-hlo":
        path = _hlo_trace(tmp_path_factory)
    elif request.param == "constructed-transfers":
        path = _transfer_trace(tmp_path_factory)
    else:
        path = os.path.join(TRACE_DIR, request.param)
    prof = fpgaprof.load(path)
    out = tmp_path_factory.mktemp("out")
    report.write_all(prof, str(out), trace_path=path)
    return path, prof, str(out)


def _summary(out):
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def _durations_s(table) -> np.ndarray:
    c = table.columns()
    return (c["end_ns"].astype(np.int64) - c["start_ns"].astype(np.int64)) / 1e9


def test_summary_validates_and_counts_match_the_records(saved):
    _, prof, out = saved
    s = _summary(out)
    with open(SCHEMA, encoding="utf-8") as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(s)
    t = s["totals"]
    assert t["kernel_count"] == len(prof.kernels)
    assert t["kernel_time_s"] == pytest.approx(float(_durations_s(prof.kernels).sum()), rel=1e-9, abs=1e-12)
    assert t["transfer_count"] == len(prof.transfers)
    assert t["transfer_bytes"] == int(prof.transfers.columns()["bytes"].astype(np.int64).sum())
    assert t["memset_count"] == len(prof.memsets)
    assert t["api_call_count"] == len(prof.api_calls)
    assert t["marker_count"] == len(prof.markers)
    assert t["region_count"] == len(prof.regions)
    assert s["kernels"]["count"] == len(prof.kernels)
    assert s["kernels"]["distinct"] == len(set(prof.kernels.columns()["name"]))


def test_transfers_by_direction_recount(saved):
    _, prof, out = saved
    s = _summary(out)
    c = prof.transfers.columns()
    want: dict[str, list[int]] = {}
    timed: dict[str, int] = {}  # the bytes of the copies with a duration: the rate's
    for kind, nbytes, start, end in zip(c["copy_kind"], c["bytes"], c["start_ns"], c["end_ns"]):
        key = str(kind) if not isinstance(kind, (int, np.integer)) else COPY_KIND.get(int(kind), str(kind))
        w = want.setdefault(key, [0, 0])
        w[0] += 1
        w[1] += int(nbytes)
        timed[key] = timed.get(key, 0) + (int(nbytes) if int(end) > int(start) else 0)
    got = {r["direction"]: [r["count"], r["bytes"]] for r in s["transfers"]["by_direction"]}
    assert got == want
    for r in s["transfers"]["by_direction"]:
        assert r["pinned_count"] + r["pageable_count"] <= r["count"]
        assert r["async_count"] + r["sync_count"] == r["count"]
        assert 0 <= r["kernel_overlap_s"] <= r["busy_s"] + 1e-12
        if r["busy_s"] > 0:
            assert r["gbps"] == pytest.approx(timed[r["direction"]] / r["busy_s"] / 1e9, rel=1e-6)


def test_busy_time_is_a_union(saved):
    _, prof, out = saved
    s = _summary(out)
    t, wall = s["totals"], s["trace"]["wall_time_s"]
    assert 0 <= t["gpu_busy_s"] <= wall + 1e-9
    assert t["gpu_busy_s"] + t["gpu_idle_s"] == pytest.approx(wall, rel=1e-9, abs=1e-12)
    # the union of kernel intervals is at most their sum and at least the longest one
    d = _durations_s(prof.kernels)
    if len(d):
        assert t["gpu_busy_s"] >= float(d.max()) - 1e-12
    assert s["transfers"]["busy_s"] <= float(_durations_s(prof.transfers).sum()) + 1e-12


def test_per_op_transfers_flags_memory_and_roofline_match_the_analysis(saved):
    """summary.json's per-op copies, transfer flags, memory per region path and roofline of
    the trace and of each region path are the analysis' own rows (prof.transfer_report(),
    prof.memory_report(), prof.roofline()), cut to their first rows with the rest counted."""
    _, prof, out = saved
    s = _summary(out)
    t = s["transfers"]
    if t["available"]:
        tr = prof.transfer_report()
        groups = [g for g in tr["groups"] if g["kind"] == "op"]
        assert len(t["by_op"]) + t["by_op_left_out"] == len(groups)
        want = Counter((g["name"], g["all"]["count"], g["all"]["bytes"]) for g in groups)
        got = Counter((r["op"], r["count"], r["bytes"]) for r in t["by_op"])
        assert not got - want
        assert [f["message"] for f in t["flags"]] == [f["message"] for f in tr["flags"]]
        assert t["flags_left_out"] == tr["flags_left_out"]
        messages = {w["message"] for w in s["warnings"]}
        assert all(f["message"] in messages for f in t["flags"])  # flags are warnings
    m = s["memory"]
    if m["available"]:
        rows = {r["region"]: r for r in prof.memory_report()["regions"]}
        assert len(m["by_region"]) + m["by_region_left_out"] == len(rows)
        for r in m["by_region"]:
            assert r["peak_bytes"] == rows[r["region"]]["peak_in_use_bytes"] <= m["peak_bytes"]
    r = s["roofline"]
    if len(prof.kernels):
        trace = prof.roofline(by="trace")
        assert r["trace"]["time_s"] == pytest.approx(trace["time_s"], rel=1e-12)
        assert r["trace"]["kernel_count"] == trace["kernel_count"] == len(prof.kernels)
        with_kernels = [x for x in prof.roofline(by="region") if x["kernel_count"] > 0]
        br = r["by_region"]
        assert (br["count"] if br["available"] else 0) == len(with_kernels)
        for x in br.get("items", []):
            same = next(y for y in with_kernels if y["region"] == x["region"])
            assert (x["time_s"], x["flops"], x["bytes"]) == \
                (same["time_s"], same["flops"], same["bytes"])
    else:
        assert r["trace"] is None


def test_printed_summary_and_digest_use_the_summary_numbers(saved):
    """prof.summary() and the run digest count the warnings of summary.json (transfer flags
    included) and show its GPU busy (the union) and memory peak."""
    from fpgaprof.report.digest import digest
    from fpgaprof.base.units import fmt_bytes, fmt_s

    _, prof, out = saved
    s = _summary(out)
    text = prof.summary()
    n = len(s["warnings"])
    assert f"\nWarnings: {n}" in text
    assert sum(1 for ln in text.splitlines() if ln.startswith("  - ")) == n
    busy = s["totals"]["gpu_busy_s"]
    if busy is not None:
        assert f"GPU busy: {fmt_s(busy)}" in text
    lines = digest(s).splitlines()  # the answer first, then the trace line and the facts
    facts = lines[next(i for i, ln in enumerate(lines) if ln.startswith("fpgaprof: ")) + 1]
    assert f"{n} warning" in facts
    if s["memory"]["available"]:
        assert f"Device memory: peak {fmt_bytes(s['memory']['peak_bytes'])}" in text
        assert f"device memory peak {fmt_bytes(s['memory']['peak_bytes'])}" in facts


def test_ops_account_for_every_kernel_once(saved):
    _, prof, out = saved
    s = _summary(out)
    a = prof.attribution
    assert a.attributed_count + a.unattributed_count == len(prof.kernels)
    ops = prof.ops
    assert sum(int(o.kernel_count) for o in ops) == a.attributed_count
    kernel_ns = float(_durations_s(prof.kernels).sum()) * 1e9
    assert sum(float(o.total_ns) for o in ops) + a.unattributed_ns == pytest.approx(kernel_ns, rel=1e-9, abs=1)
    if s["ops"]["available"]:
        assert s["ops"]["count"] == len(ops)


def test_timeline_has_one_slice_per_record_and_paired_flows(saved):
    _, prof, out = saved
    with open(os.path.join(out, "timeline.json"), encoding="utf-8") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    by_cat = Counter(e.get("cat") for e in events if e.get("ph") in ("X", "i"))
    # GPU records without times (start = end = 0) have no slice; otherData counts them
    untimed = {}
    for what, table in (("kernels", prof.kernels), ("copies", prof.transfers), ("memsets", prof.memsets)):
        c = table.columns()
        untimed[what] = int(((np.asarray(c["start_ns"]) == 0) & (np.asarray(c["end_ns"]) == 0)).sum())
    assert doc["otherData"].get("untimed_records", dict.fromkeys(untimed, 0)) == untimed
    assert by_cat["kernel"] == len(prof.kernels) - untimed["kernels"]
    assert by_cat["gpu_memcpy"] == len(prof.transfers) - untimed["copies"]
    assert by_cat["gpu_memset"] == len(prof.memsets) - untimed["memsets"]
    assert by_cat["cuda_runtime"] + by_cat["cuda_driver"] == len(prof.api_calls)
    assert by_cat["nvtx"] == len(prof.markers)
    assert by_cat["region"] == len(prof.regions)
    outs = Counter(e["bind_id"] for e in events if e.get("flow_out"))
    ins = Counter(e["bind_id"] for e in events if e.get("flow_in"))
    assert outs == ins and max(outs.values(), default=1) == 1
    # every activity on the timeline whose launching call was recorded has its arrow
    linked = 0
    for t in (prof.kernels, prof.transfers, prof.memsets):
        c = t.columns()
        timed = (np.asarray(c["start_ns"]) != 0) | (np.asarray(c["end_ns"]) != 0)
        linked += int(((np.asarray(c["api_index"]) != 0xFFFFFFFF) & timed).sum())
    assert sum(ins.values()) == linked


TABLES = ["kernels", "transfers", "memsets", "allocations", "api_calls", "markers", "regions", "syncs"]


@pytest.mark.parametrize("table", TABLES)
def test_csv_export_has_every_record(saved, table):
    path, prof, _ = saved
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "export", path, "--format", "csv",
                        "--table", table], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert len(rows) - 1 == len(getattr(prof, table))
    if table in ("kernels", "transfers") and len(rows) > 1:
        c = getattr(prof, table).columns()
        col = rows[0].index("start_ns")
        assert [int(x[col]) for x in rows[1:]] == [int(v) for v in c["start_ns"]]


def test_save_and_load_round_trip_keeps_every_output(saved, tmp_path):
    path, prof, out = saved
    again = fpgaprof.load(prof.save(tmp_path / "again.fpgaprof"))
    for table in TABLES:
        a, b = getattr(prof, table).columns(), getattr(again, table).columns()
        assert a.keys() == b.keys()
        for k in a:
            assert np.array_equal(np.asarray(a[k]), np.asarray(b[k])), (table, k)
    report.write_all(again, str(tmp_path / "o"), trace_path=str(tmp_path / "again.fpgaprof"))
    s1, s2 = _summary(out), _summary(str(tmp_path / "o"))
    for s in (s1, s2):
        s["trace"].pop("path")
        s.pop("generated_by")
    assert s1 == s2


def test_compare_with_itself_changes_nothing(saved):
    path, _, _ = saved
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "compare", "--json", path, path],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    sections = rows.values() if isinstance(rows, dict) else [rows]
    n = 0
    for sec in sections:
        for row in sec if isinstance(sec, list) else []:
            if isinstance(row, dict) and "change_s" in row:
                n += 1
                if row["change_s"] is None:  # untimed on both sides (a counter replay): unknown
                    assert "runs was timed" in row["unknown"], row
                    assert row["time_before_s"] == row["time_after_s"] == 0, row
                    continue
                assert row["change_s"] == 0, row
    assert n > 0


def test_candidates_are_ranked_and_amdahl_holds(saved):
    _, prof, _ = saved
    table = prof.fpga_candidates("alveo-u55c")
    rows = list(table)
    if not rows:
        pytest.skip("no HLO op with GPU time in this trace")
    scores = [r["score"] for r in rows]
    # Ranked by what offloading could change (the GPU time less the fastest card total at the
    # fast ends; all of it with nothing to bound it), then GPU time, then score
    # (docs/fpga-model.md, "Ranking"), recomputed here from each row's GPU time and speedups.
    for r in rows:
        highs = [h for h in (r["op_speedup_high"], r["restructured_op_speedup_high"]) if math.isfinite(h)]
        expect = (r["gpu_time_ns"] if not highs else
                  r["gpu_time_ns"] * (1 - 1 / max(highs)) if max(highs) > 1 else 0.0)
        assert r["could_save_ns"] == pytest.approx(expect, rel=1e-9, abs=1e-6)
    keys = [(-r["could_save_ns"], -r["gpu_time_ns"], -(-1.0 if math.isnan(r["score"]) else r["score"]))
            for r in rows]
    assert keys == sorted(keys)
    assert sum(r["time_share"] for r in rows) <= 1 + 1e-9
    for r in rows:
        if math.isnan(r["score"]):
            continue
        assert (r["op_speedup"] > 1) == (r["workload_speedup"] > 1 + 1e-12) or r["op_speedup"] == 1
    if any(not math.isnan(x) for x in scores):
        saved_s = [r["gpu_time_ns"] / 1e9 - r["fpga_total_s"] for r in rows
                   if not math.isnan(r["score"]) and r["op_speedup"] > 1]
        assert all(x > 0 for x in saved_s)
    combined = table.meta.get("combined_speedup")
    gains = [r["workload_speedup"] for r in rows if not math.isnan(r["score"]) and r["op_speedup"] > 1]
    if combined is not None and gains:
        assert combined >= max(gains) - 1e-9


def test_compare_rows_print_apart(saved):
    # every row of every table has a name no other row of that table has (long XLA names that
    # differ at their end, two C++ kernels shown alike once shortened)
    path, _, _ = saved
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "compare", "--limit", "1000000", path,
                        path], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    seen: dict = {}
    width = None
    for line in r.stdout.splitlines():
        if line.startswith("per "):
            seen = {}
        elif line.startswith("  name "):
            width = len(line) - len(line[7:].lstrip())
        elif width and line.startswith("  ") and not line.startswith(("  (#", "  #")):
            name = line[2:width - 1].rstrip()
            assert name not in seen, (name, line, seen[name])
            seen[name] = line


def test_summary_rows_never_read_alike(saved):
    """prof.summary()'s kernel, HLO op and region rows: no two print the same name (two
    instances of one C++ template, one op name in several compilations of a module, long region
    paths that differ at their end), and each " #k" mark has a line giving the whole name."""
    import re

    _, prof, _ = saved
    lines = prof.summary(top=200).splitlines()

    def table(title: str, head: str, stop: str) -> list[str]:
        start = next((i for i, ln in enumerate(lines) if ln.startswith(title)), None)
        if start is None:
            return []
        h = lines[start + 1] if lines[start + 1].lstrip().startswith(head) else None
        if h is None:
            return []
        at, rows = h.index(head), []
        end = h.index(stop, at + len(head))
        for ln in lines[start + 2 :]:
            if not ln.startswith("  ") or ln.startswith("  ...") or ln.startswith("  #") or ln.startswith("  ("):
                break
            rows.append(ln[at:end].strip())
        return rows

    for title, head, stop in (
        ("Kernels:", "kernel", "count"),
        ("HLO ops", "op (module)", "category"),
        ("Regions:", "region", "count"),
    ):
        rows = table(title, head, stop)
        assert len(set(rows)) == len(rows), (title, [r for r in rows if rows.count(r) > 1])
        marks = {m for r in rows for m in re.findall(r" #(\d+)$", r)}
        notes = {ln.split(":")[0].strip()[1:] for ln in lines if re.match(r"  #\d+: ", ln)}
        assert marks <= notes, (title, marks - notes)
