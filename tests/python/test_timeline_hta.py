"""timeline.json read by Holistic Trace Analysis (PyPI holistictraceanalysis), the check of the
timeline's Kineto conventions: every real trace in tests/data/traces is exported with
`fpgaprof export --format perfetto` and loaded by HTA's TraceAnalysis.

The expected numbers are HTA's own results compared with the record tables, recounted here with
numpy (sums, unions, spans), and with fpgaprof's analysis totals. Where the definitions differ:
HTA's temporal breakdown measures its "kernel_time" as the span from the first GPU activity's
start to the last one's end (kernels, copies and memsets of every device together), and its idle
time as that span less the union of the activities; fpgaprof's GPU busy time is the same union,
but its idle share is taken of the trace's wall time (docs/reports.md, "Opening the outputs in
other tools"). HTA's compute time is the union of the kernels it classifies as computation (by
name: not NCCL, not Memcpy/Memset), which is fpgaprof's kernel busy time when no kernel name
looks like a copy.

Kernels and copies without GPU timestamps (kernel replay whose counter window was not paired: two
of the H200 traces) are not on the timeline (its otherData counts them): the expected values are
recounted from the records that have times.

HTA rounds nanosecond timestamps to whole microseconds unless HTA_DISABLE_NS_ROUNDING is set;
the test sets it, so HTA works on fpgaprof's exact times (µs as floats: compared to 1e-6 µs per
event).
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fpgaprof

hta = pytest.importorskip("hta.trace_analysis")

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data", "traces")
REAL = sorted(glob.glob(os.path.join(TRACE_DIR, "*.fpgaprof")))


class _TimedTable:
    """A record table seen through its records that have GPU times (start or end not 0)."""

    def __init__(self, table):
        self._t = table
        c = table.columns()
        self._keep = np.flatnonzero((np.asarray(c["start_ns"]) != 0) | (np.asarray(c["end_ns"]) != 0))
        self.untimed = len(table) - len(self._keep)

    def __len__(self):
        return len(self._keep)

    def __iter__(self):
        return (self._t[int(i)] for i in self._keep)

    def columns(self):
        return {k: np.asarray(v)[self._keep] for k, v in self._t.columns().items()}


class _Timed:
    """A Profile's GPU records that the timeline holds: those with times."""

    def __init__(self, prof):
        self.kernels = _TimedTable(prof.kernels)
        self.transfers = _TimedTable(prof.transfers)
        self.memsets = _TimedTable(prof.memsets)
        self.api_calls = prof.api_calls


def _intervals(prof):
    """(start_ns, end_ns, stream, device) of every GPU activity, from the record tables."""
    parts = [t.columns() for t in (prof.kernels, prof.transfers, prof.memsets) if len(t)]
    cat = lambda k: np.concatenate([np.asarray(c[k], dtype=np.int64) for c in parts])  # noqa: E731
    return cat("start_ns"), cat("end_ns"), cat("stream_id"), cat("device_id")


def _union(s, e):
    """(length, number of pieces) of the union of [s, e) intervals, by a plain sweep."""
    total, pieces, cur_s, cur_e = 0, 0, None, None
    for a, b in sorted(zip(s.tolist(), e.tolist())):
        b = max(a, b)
        if cur_e is None or a > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e, pieces = a, b, pieces + 1
        else:
            cur_e = max(cur_e, b)
    return total + (cur_e - cur_s if cur_e is not None else 0), pieces


def _union_ns(s, e):
    return _union(s, e)[0]


@pytest.fixture(scope="module", params=REAL, ids=[os.path.basename(p) for p in REAL])
def loaded(request, tmp_path_factory):
    path = request.param
    out = tmp_path_factory.mktemp("hta")
    r = subprocess.run(
        [sys.executable, "-m", "fpgaprof", "export", path, "--format", "perfetto",
         "--timeline-events", "0", "-o", str(out / "trace.json")],
        capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "export", path, "--format", "json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    try:
        analysis = hta.TraceAnalysis(trace_dir=str(out))
    finally:
        del os.environ["HTA_DISABLE_NS_ROUNDING"]
    prof = _Timed(fpgaprof.load(path))
    # the records left out for want of times are counted in timeline.json's otherData
    other = json.loads((out / "trace.json").read_text())["otherData"]
    untimed = {"kernels": prof.kernels.untimed, "copies": prof.transfers.untimed,
               "memsets": prof.memsets.untimed}
    assert other.get("untimed_records", {"kernels": 0, "copies": 0, "memsets": 0}) == untimed
    assert ("untimed_note" in other) == any(untimed.values())
    return prof, analysis, summary


def test_every_kernel_is_a_gpu_kernel_event(loaded):
    prof, analysis, summary = loaded
    df = analysis.t.get_trace(0)
    sym = analysis.t.symbol_table.get_sym_table()
    cats = df["cat"].map(lambda i: sym[i])
    kern = df[(cats == "kernel") & (df["stream"] != -1)]
    assert len(kern) == len(prof.kernels) > 0
    assert sorted(kern["name"].map(lambda i: sym[i])) == sorted(str(r.name) for r in prof.kernels)
    c = prof.kernels.columns()
    assert sorted(kern["stream"].tolist()) == sorted(int(s) for s in c["stream_id"])
    assert sorted(kern["correlation"].tolist()) == sorted(int(x) for x in c["correlation_id"])
    # copies and memsets are GPU events too, and every host API call is a CUDA runtime/driver one
    copies = df[cats.isin(["gpu_memcpy", "gpu_memset"]) & (df["stream"] != -1)]
    assert len(copies) == len(prof.transfers) + len(prof.memsets)
    api = df[cats.isin(["cuda_runtime", "cuda_driver"])]
    assert len(api) == len(prof.api_calls) and (api["stream"] == -1).all()


def test_kernel_breakdown_sums_to_the_summed_kernel_time(loaded):
    prof, analysis, summary = loaded
    by_type, by_kernel = analysis.get_gpu_kernel_breakdown(
        visualize=False, include_memory_kernels=False, num_kernels=10**6, duration_ratio=1.0)
    c = prof.kernels.columns()
    dur_ns = np.asarray(c["end_ns"], np.int64) - np.asarray(c["start_ns"], np.int64)
    tol = 1e-6 * len(dur_ns)
    # per kernel name: HTA's summed time is the sum of that name's durations
    want = {}
    for name, d in zip((str(r.name) for r in prof.kernels), dur_ns.tolist()):
        want[name] = want.get(name, 0) + d
    got = dict(zip(by_kernel["name"], by_kernel["sum (us)"].astype(float)))
    assert got.keys() == want.keys()
    for name, ns in want.items():
        assert got[name] == pytest.approx(ns / 1e3, abs=tol), name
    total_us = float(by_kernel["sum (us)"].sum())
    assert total_us == pytest.approx(int(dur_ns.sum()) / 1e3, abs=tol)
    # fpgaprof's own summed kernel time (summary.json) is the same
    assert summary["totals"]["kernel_time_s"] * 1e6 == pytest.approx(total_us, rel=1e-9)
    # per kernel type HTA gives the union of the type's kernels, each piece's ends truncated
    # to whole µs (its table is integer): less than 1 µs lost per piece
    kbusy_ns, pieces = _union(np.asarray(c["start_ns"], np.int64), np.asarray(c["end_ns"], np.int64))
    assert by_type["kernel_type"].tolist() == ["COMPUTATION"]
    assert abs(kbusy_ns / 1e3 - float(by_type["sum"].sum())) < pieces


def test_temporal_breakdown_agrees_with_busy_time(loaded):
    prof, analysis, summary = loaded
    tb = analysis.get_temporal_breakdown(visualize=False)
    row = tb[tb["rank"] == 0].iloc[0]
    s, e, _, _ = _intervals(prof)
    span_us = (int(e.max()) - int(s.min())) / 1e3
    busy_us = _union_ns(s, e) / 1e3
    tol = 1e-6 * len(s)
    assert float(row["kernel_time(us)"]) == pytest.approx(span_us, abs=tol)
    assert float(row["idle_time(us)"]) == pytest.approx(span_us - busy_us, abs=tol)
    kc = prof.kernels.columns()
    kernel_busy_us = _union_ns(np.asarray(kc["start_ns"], np.int64),
                               np.asarray(kc["end_ns"], np.int64)) / 1e3
    assert float(row["compute_time(us)"]) == pytest.approx(kernel_busy_us, abs=tol)
    # fpgaprof's summary: the same busy time; its idle time is of the wall time instead
    totals = summary["totals"]
    hta_busy_us = float(row["kernel_time(us)"]) - float(row["idle_time(us)"])
    assert totals["gpu_busy_s"] * 1e6 == pytest.approx(hta_busy_us, rel=1e-9, abs=tol)
    wall_us = summary["trace"]["wall_time_s"] * 1e6
    assert totals["gpu_idle_s"] * 1e6 == pytest.approx(
        float(row["idle_time(us)"]) + wall_us - span_us, rel=1e-9, abs=tol)


def test_idle_time_breakdown_per_stream_is_the_gaps_on_that_stream(loaded):
    prof, analysis, summary = loaded
    idle, _ = analysis.get_idle_time_breakdown(visualize=False)
    s, e, stream, _ = _intervals(prof)
    assert set(idle["stream"].astype(int)) == set(stream.tolist())
    for st, rows in idle.groupby("stream"):
        m = stream == int(st)
        # HTA's idle time of a stream: each activity's start less the end of the one that
        # started before it (negative where they overlap on the stream: launches with
        # programmatic dependent launch), summed; the union-based idle time is fpgaprof's
        order = np.argsort(s[m], kind="stable")
        ss, ee = s[m][order], e[m][order]
        gaps_ns = int((ss[1:] - ee[:-1]).sum())
        got_us = float(rows["idle_time"].sum())
        # HTA rounds the table to 0.01 µs
        assert got_us == pytest.approx(gaps_ns / 1e3, abs=1e-6 * m.sum() + 0.005 * len(rows)), st
    # the host-wait category needs each GPU activity joined to its launch call (args.correlation)
    assert "host_wait" in set(idle["idle_category"].astype(str))


def test_memory_bandwidth_summary_has_every_copy_direction(loaded):
    """HTA's memory bandwidth analysis reads Kineto's arg "memory bandwidth (GB/s)" of each copy
    and memset; under another name its tables are empty. Its mean per direction is the mean of
    bytes/duration over the timed copies of that direction (timeline.json rounds to 3
    decimals)."""
    prof, analysis, _ = loaded
    c = prof.transfers.columns()
    if not len(prof.transfers):
        return
    got = analysis.get_memory_bw_summary()
    assert len(got), "HTA's memory bandwidth summary is empty"
    means = got[("memory_bw_gbps", "mean")]
    kinds = np.asarray(c["copy_kind"]).astype(str)
    dur = np.asarray(c["end_ns"], np.int64) - np.asarray(c["start_ns"], np.int64)
    nbytes = np.asarray(c["bytes"], np.int64)
    for kind in sorted(set(kinds.tolist())):
        m = (kinds == kind) & (dur > 0)
        if not m.any():
            continue
        want = float(np.mean(np.round(nbytes[m] / dur[m], 3)))
        row = [v for k, v in means.items() if str(k[-1]) == f"Memcpy {kind}"]
        assert row and row[0] == pytest.approx(want, rel=1e-6, abs=1e-3), kind


def test_the_documented_hta_command_reads_a_report_folder(tmp_path):
    """docs/reports.md's HTA command, run as written on a `fpgaprof report` folder (timeline.json
    beside summary.json, which HTA would parse as a trace of its own when given the folder)."""
    import re
    doc = open(os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "reports.md"),
               encoding="utf-8").read()
    row = next(line for line in doc.splitlines() if line.startswith("| Holistic Trace Analysis"))
    code = re.search(r'`python -c "(.*?)"`', row).group(1)
    path = next(p for p in REAL if "mbirjax_parallel_128_h100" in p)
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "report", path, "-o",
                        str(tmp_path / "out")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "summary.json").exists()
    env = dict(os.environ, HTA_DISABLE_NS_ROUNDING="1")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "idle_time" in r.stdout
