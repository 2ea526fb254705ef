"""The trace totals, region paths, kernels by name, DRAM peaks and attribution of
`core.analysis.analyze` (docs/architecture.md, "The analysis pipeline"), which every report
section reads: by hand on a constructed trace with nested regions and overlapping copies, and
on the saved GPU traces against plain reference computations written here (a sort-and-merge
interval union, a per-name tally, a walk up the recorded parent links) from the raw record
columns; summary.json's sections show the same numbers."""
from __future__ import annotations

import glob
import os
from collections import defaultdict

import numpy as np
import pytest

import fpgaprof
from fpgaprof.api.profile import Profile
from fpgaprof.base import records
from fpgaprof.base.core import core
from fpgaprof.capture import xla_flags
from fpgaprof.report import model
from _store_builder import store_from_lists

HERE = os.path.dirname(os.path.abspath(__file__))
TRACES = sorted(glob.glob(os.path.join(HERE, "..", "data", "traces", "*.fpgaprof")))
NONE32 = 0xFFFFFFFF

# Regions: "step" [0, 1000] > "fwd" [100, 500] > "inner" [150, 400]; "step" [2000, 3000] >
# "fwd" [2100, 2500]; a top-level "fwd" [5000, 5100]. Kernels, copies and memsets in them, two
# kernels overlapping, a copy overlapping a kernel, one kernel with its end before its start.
SPEC = {
    "devices": [{"name": "A", "cc_major": 8, "sm_count": 100, "core_clock_khz": 1_000_000,
                 "memory_clock_khz": 1_000_000, "memory_bus_width_bits": 4096},
                {"name": "B", "id": 1, "cc_major": 8, "memory_clock_khz": 500_000,
                 "memory_bus_width_bits": 4096}],
    "regions": [{"name": "step", "start_ns": 0, "end_ns": 1000},
                {"name": "fwd", "start_ns": 100, "end_ns": 500, "parent": 0, "depth": 1},
                {"name": "step", "start_ns": 2000, "end_ns": 3000},
                {"name": "fwd", "start_ns": 2100, "end_ns": 2500, "parent": 2, "depth": 1},
                {"name": "inner", "start_ns": 150, "end_ns": 400, "parent": 1, "depth": 2},
                {"name": "fwd", "start_ns": 5000, "end_ns": 5100}],
    "kernels": [{"name": "b", "start_ns": 200, "end_ns": 260, "region": 4},
                {"name": "a", "start_ns": 250, "end_ns": 340, "region": 1},
                {"name": "b", "start_ns": 2200, "end_ns": 2300, "region": 3},
                {"name": "c", "start_ns": 600, "end_ns": 610, "region": 0},
                {"name": "a", "start_ns": 5010, "end_ns": 5030, "region": 5},
                {"name": "z", "start_ns": 7000, "end_ns": 6990}],
    "memcpys": [{"start_ns": 210, "end_ns": 230, "bytes": 100, "copy_kind": 1, "region": 4},
                {"start_ns": 2600, "end_ns": 2700, "bytes": 50, "copy_kind": 2, "region": 2}],
    "memsets": [{"start_ns": 2400, "end_ns": 2405, "bytes": 8, "region": 3}],
    "start_ns": 0, "end_ns": 8000,
}


def _profiles():
    out = [("constructed", Profile(store_from_lists(SPEC)))]
    out += [(os.path.basename(p), fpgaprof.load(p)) for p in TRACES]
    return out


@pytest.fixture(scope="module", params=_profiles(), ids=lambda p: p[0])
def analysed(request):
    _, prof = request.param
    return prof, core.analysis.analyze(prof.store, with_attribution=True)


def _columns(prof, table, names):
    c = records.columns(getattr(prof, table), names)
    return c, records.nrows(c)


def _intervals(prof, table):
    c, n = _columns(prof, table, ("start_ns", "end_ns"))
    return [(int(s), int(e)) for s, e in zip(records.col(c, "start_ns", n), records.col(c, "end_ns", n))]


def _union(intervals):
    """Length of the union of [start, end) intervals (an end before its start counts as empty):
    sorted by start, merged one after the other."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted((s, max(e, s)) for s, e in intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0)


def test_the_reference_union_by_hand():
    # [0,10) u [5,12) u [20,21) u [11,15) = [0,15) + [20,21) = 16; contained, empty and reversed
    assert _union([(0, 10), (5, 12), (20, 21), (11, 15)]) == 16
    assert _union([(0, 10), (2, 3), (30, 30), (40, 35)]) == 10
    assert _union([]) == 0


def test_busy_unions_and_counts(analysed):
    prof, an = analysed
    t = an["totals"]
    k, m, z = (_intervals(prof, name) for name in ("kernels", "transfers", "memsets"))
    assert t["gpu_busy_ns"] == _union(k + m + z)
    assert (t["kernel_busy_ns"], t["copy_busy_ns"], t["memset_busy_ns"]) == (_union(k), _union(m), _union(z))
    assert (t["kernel_count"], t["copy_count"], t["memset_count"]) == (len(k), len(m), len(z))
    assert t["kernel_time_ns"] == sum(max(e - s, 0) for s, e in k)
    c, n = _columns(prof, "transfers", ("bytes",))
    assert t["copy_bytes"] == sum(int(b) for b in records.col(c, "bytes", n))


def test_kernels_by_name(analysed):
    prof, an = analysed
    c, n = _columns(prof, "kernels", ("name", "start_ns", "end_ns"))
    per: dict[str, list[int]] = defaultdict(list)
    for name, s, e in zip(records.names_of(c, n), records.col(c, "start_ns", n), records.col(c, "end_ns", n)):
        per[str(name)].append(max(int(e) - int(s), 0))

    def row(k: str, v: list[int]) -> tuple:
        # min and max over the launches with a duration (a counter replay leaves some without)
        timed = [d for d in v if d > 0]
        return (k, len(v), len(timed), sum(v), min(timed, default=0), max(timed, default=0))

    want = sorted((row(k, v) for k, v in per.items()), key=lambda r: (-r[3], r[0]))
    got = [(r["kernel"], r["count"], r["timed_count"], r["total_ns"], r["min_ns"], r["max_ns"])
           for r in an["kernels_by_name"]]
    assert got == want


def test_region_paths_and_their_gpu_time(analysed):
    """Each region record's path is its recorded ancestors' names; a path's GPU time is the
    durations of the kernels, copies and memsets whose region is one of its instances or a
    region nested in one (walking the recorded parent links up)."""
    prof, an = analysed
    c, n = _columns(prof, "regions", ("name", "parent"))
    names = [str(x) for x in records.names_of(c, n)]
    parent = [int(p) for p in records.col(c, "parent", n, NONE32)]
    rows = an["region_paths"]
    assert [r["path_index"] for r in rows] == list(range(len(rows)))
    if n == 0:
        assert rows == [] and an["region_path_of"] == []
        return

    def chain(i):
        out = [i]
        while parent[out[-1]] != NONE32:
            out.append(parent[out[-1]])
        return out[::-1]

    def shown(name):
        return f'"{name}"' if " > " in name else name

    want_path = [" > ".join(shown(names[j]) for j in chain(i)) for i in range(n)]
    assert [rows[p]["region"] for p in an["region_path_of"]] == want_path
    gpu = defaultdict(int)
    for table in ("kernels", "transfers", "memsets"):
        tc, tn = _columns(prof, table, ("start_ns", "end_ns", "region_index"))
        if "region_index" not in tc:
            continue
        for s, e, r in zip(records.col(tc, "start_ns", tn), records.col(tc, "end_ns", tn), tc["region_index"]):
            if int(r) == NONE32:
                continue
            # the path of every ancestor instance gets it once (a path never repeats in a chain)
            for p in {want_path[j] for j in chain(int(r))}:
                gpu[p] += max(int(e) - int(s), 0)
    for r in rows:
        assert r["gpu_ns"] == gpu[r["region"]] == r["kernel_ns"] + r["copy_ns"] + r["memset_ns"], r["region"]
        assert r["instances"] == want_path.count(r["region"])
        assert (r["parent"] is None) == (r["depth"] == 0)
        if r["parent"] is not None:
            assert r["region"].startswith(rows[r["parent"]]["region"] + " > ")


def test_the_summary_shows_the_analysis(analysed):
    """summary.json's totals, kernels and regions are the analysis' numbers in seconds."""
    prof, an = analysed
    s = model.collect(prof)
    t = an["totals"]
    assert s["totals"]["kernel_count"] == t["kernel_count"]
    if t["kernel_count"] + t["copy_count"] + t["memset_count"]:
        assert s["totals"]["gpu_busy_s"] == t["gpu_busy_ns"] / 1e9
        assert s["totals"]["transfer_busy_s"] == t["copy_busy_ns"] / 1e9
    assert s["totals"]["kernel_time_s"] == t["kernel_time_ns"] / 1e9
    top = s["kernels"]["top"]
    assert [(k["name"], k["count"], k["total_s"]) for k in top] == \
        [(k["kernel"], k["count"], k["total_ns"] / 1e9) for k in an["kernels_by_name"][: len(top)]]
    if s["regions"]["available"]:
        by = {r["region"]: r for r in an["region_paths"]}
        for item in s["regions"]["items"]:
            assert item["gpu_s"] == by[item["path"]]["gpu_ns"] / 1e9
            assert item["count"] == by[item["path"]]["instances"]


def test_the_constructed_trace_by_hand():
    """The constructed trace's numbers, worked out by hand (as the C++ test's):
    paths 0 "step", 1 "step > fwd", 2 "step > fwd > inner", 3 "fwd"; inclusive GPU time
    inner 60 + 20 = 80; fwd 80 + 90 (R1) + 100 (R3) + 5 (memset) = 275; step 275 + 10 (R0) + 100
    (copy in R2) = 385; top-level fwd 20. Kernels by name: b 60 + 100, a 90 + 20, c 10, z 0. Busy: kernels [200, 340) + [600, 610) + [2200, 2300) +
    [5010, 5030) = 140 + 10 + 100 + 20 = 270; everything adds the copy [2600, 2700) and the memset
    [2400, 2405) (the copy [210, 230) lies inside the kernels): 375."""
    an = core.analysis.analyze(store_from_lists(SPEC))
    assert [r["region"] for r in an["region_paths"]] == ["step", "step > fwd", "step > fwd > inner", "fwd"]
    assert an["region_path_of"] == [0, 1, 0, 1, 2, 3]
    assert [r["gpu_ns"] for r in an["region_paths"]] == [385, 275, 80, 20]
    assert [r["kernel_count"] for r in an["region_paths"]] == [4, 3, 1, 1]
    assert (an["totals"]["kernel_busy_ns"], an["totals"]["gpu_busy_ns"]) == (270, 375)
    by_name = [(k["kernel"], k["count"], k["total_ns"]) for k in an["kernels_by_name"]]
    assert by_name == [("b", 2, 160), ("a", 2, 110), ("c", 1, 10), ("z", 1, 0)]
    # 2 x memory clock x bus width / 8
    assert an["device_dram_bytes_per_s"] == [2 * 1e9 * 4096 / 8, 2 * 0.5e9 * 4096 / 8]
    assert "attribution" not in an


def test_device_dram_peaks(analysed):
    """2 x memory clock x bus width / 8 per device (0 when unknown)."""
    prof, an = analysed
    want = []
    for d in prof.devices:
        clock, width = int(getattr(d, "memory_clock_khz", 0)), int(getattr(d, "memory_bus_width_bits", 0))
        want.append(2.0 * clock * 1e3 * width / 8 if clock and width else 0.0)
    assert an["device_dram_bytes_per_s"] == want


def test_the_analysis_attribution_is_attribute_of_the_store(analysed):
    prof, an = analysed
    mine, theirs = an["attribution"], core.attribution.attribute(prof.store)
    assert [(o.module_name, o.hlo_op, o.total_ns, o.kernel_count) for o in mine.ops] == \
           [(o.module_name, o.hlo_op, o.total_ns, o.kernel_count) for o in theirs.ops]
    assert np.array_equal(mine.kernels.site_index, theirs.kernels.site_index)
    assert [(s.hlo_op, s.method) for s in mine.kernels.sites] == [(s.hlo_op, s.method) for s in theirs.kernels.sites]
    assert list(mine.warnings) == list(theirs.warnings)
    assert (mine.unattributed_count, mine.unattributed_ns) == (theirs.unattributed_count, theirs.unattributed_ns)


def test_the_keys_the_package_reads_keep_their_order(analysed):
    _, an = analysed
    assert list(an)[:9] == ["ceilings", "warnings", "region_rows", "transfers", "memory", "devices",
                            "roofline", "fpga", "fpga_other_targets"]
    assert list(an)[9:] == ["totals", "region_paths", "region_path_of", "kernels_by_name",
                            "device_dram_bytes_per_s", "module_memory", "collectives", "energy", "attribution"]


def test_enum_names_and_kernel_names_come_from_the_core():
    # records.hpp's CopyKind and MemoryKind, by value
    assert list(core.COPY_KIND_NAMES) == ["unknown", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "HtoA", "AtoH",
                                          "AtoA", "AtoD", "DtoA"]
    assert list(core.MEMORY_KIND_NAMES) == ["unknown", "pageable", "pinned", "device", "array", "managed",
                                            "device_static", "managed_static"]
    assert list(records.enum_names(np.array([1, 2, 99, "HtoD"], dtype=object), core.COPY_KIND_NAMES)) == \
        ["HtoD", "DtoH", "kind99", "HtoD"]
    # XLA's kernel names: every character outside [A-Za-z0-9_$] becomes "_"
    for name, want in (("fusion.12", "fusion_12"), ("loop_add_fusion", "loop_add_fusion"),
                       ("a-b/c d", "a_b_c_d"), ("custom-call.3$x", "custom_call_3$x"), ("", "")):
        assert core.attribution.sanitize_kernel_name(name) == xla_flags.sanitize_kernel_name(name) == want


def test_a_report_runs_one_analysis_and_attributes_once(monkeypatch, tmp_path):
    """write_all: one C++ analysis, which brings its attribution; nothing attributes again."""
    from fpgaprof import report

    calls = {"attribute": 0, "analyze": []}
    real_attribute, real_analyze = core.attribution.attribute, core.analysis.analyze

    def attribute(*args, **kwargs):
        calls["attribute"] += 1
        return real_attribute(*args, **kwargs)

    def analyze(*args, **kwargs):
        calls["analyze"].append(bool(kwargs.get("with_attribution")))
        return real_analyze(*args, **kwargs)

    monkeypatch.setattr(core.attribution, "attribute", attribute)
    monkeypatch.setattr(core.analysis, "analyze", analyze)
    prof = fpgaprof.load(next(t for t in TRACES if "sweep" in t))
    report.write_all(prof, tmp_path / "out")
    assert calls == {"attribute": 0, "analyze": [True]}
    assert prof.attribution is prof.analyses.attribution(prof.store)


def test_summary_roofline_and_candidates_run_one_analysis(monkeypatch):
    """prof.summary() runs the report's analysis (its card and every other preset card); the
    roofline and the candidates on that card alone are read from it, not analysed again: the
    same roofline and rankings as an analysis of their own, and only the other cards they ask
    for."""
    from fpgaprof.analysis import trace_analysis
    from fpgaprof.analysis.targets import presets
    from fpgaprof.api import fpga, roofline

    calls = []
    real_analyze = core.analysis.analyze

    def analyze(*args, **kwargs):
        calls.append(len(kwargs.get("other_targets") or []))
        return real_analyze(*args, **kwargs)

    monkeypatch.setattr(core.analysis, "analyze", analyze)
    path = next(t for t in TRACES if "sweep" in t)
    prof = fpgaprof.load(path)
    prof.summary()
    others = len(presets()) - 1
    assert calls == [others]
    ops = roofline.roofline(prof, by="op")
    cands = fpga.fpga_candidates(prof)
    assert calls == [others]  # no second analysis
    one = [p["name"] for p in presets()][1:3]  # two other cards, in the caller's order
    narrowed = roofline.analyze(prof, other_targets=tuple(reversed(one)))
    assert calls == [others]
    # an analysis of its own (a fresh Profile) gives the same
    fresh = fpgaprof.load(path)
    assert records.to_plain(roofline.roofline(fresh, by="op")) == records.to_plain(ops)
    assert records.to_plain(fpga.fpga_candidates(fresh)) == records.to_plain(cands)
    own = trace_analysis.run(
        fresh.store,
        trace_analysis.AnalysisOptions(other_targets=tuple(reversed(one))),
        trace_analysis.store_ceilings(fresh.store),
    )
    assert calls[1:] == [0, 2]
    assert records.to_plain(narrowed["fpga_other_targets"]) == records.to_plain(
        own["fpga_other_targets"]
    )
    assert records.to_plain(narrowed["fpga"]) == records.to_plain(own["fpga"])
