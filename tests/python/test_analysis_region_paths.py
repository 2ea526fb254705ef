"""Region results per path: prof.transfer_report(), prof.memory_report() and
prof.roofline(by="region") give one row per fpgaprof.region() path ("outer > inner", instances
summed in C++); by="region_instance" gives one row per region record. The summary step never asks
the analysis for per-instance rows.

The trace (hand-built; every expected number below is worked out from it):
  "step" instances R0 [0, 900], R1 [1000, 1900], R2 [2000, 2900] (thread 1), and
  R3 "proj" [1050, 1500] inside R1 (path "step > proj").
  Instance i has an HtoD copy of 1000 B at [i*1000 + 100, i*1000 + 200) and a 100 ns kernel at
  [i*1000 + 300, i*1000 + 400); instance 1's copy and kernel are in R3.
  Allocations: +100 @150 (R0), -100 @800 (R0), +300 @1100 (R3), -300 @1400 (R3), +200 @2150 (R2).
"""
from __future__ import annotations

import pytest

import fpgaprof  # noqa: F401  (the package first, as the other tests)
from fpgaprof.base.core import core
from fpgaprof import Profile
from _store_builder import store_from_lists

NONE32 = 0xFFFFFFFF


def _spec(n: int = 3) -> dict:
    """n instances of "step" (the trace above for n = 3; R3 is always the last region)."""
    regions = [{"name": "step", "start_ns": i * 1000, "end_ns": i * 1000 + 900, "thread_id": 1}
               for i in range(n)]
    regions.append({"name": "proj", "start_ns": 1050, "end_ns": 1500, "thread_id": 1, "parent": 1})
    proj = len(regions) - 1

    def where(i: int) -> int:
        return proj if i == 1 else i

    return {
        "start_ns": 0, "end_ns": n * 1000,
        "regions": regions,
        "memcpys": [{"start_ns": i * 1000 + 100, "end_ns": i * 1000 + 200, "bytes": 1000,
                     "copy_kind": 1, "src_kind": 2, "dst_kind": 3, "async": True,
                     "region": where(i)} for i in range(n)],
        "kernels": [{"start_ns": i * 1000 + 300, "end_ns": i * 1000 + 400, "name": "k",
                     "region": where(i)} for i in range(n)],
        "allocations": [
            {"timestamp_ns": 150, "address": 0x1000, "bytes": 100, "region": 0},
            {"timestamp_ns": 800, "address": 0x1000, "bytes": 100, "alloc": False, "region": 0},
            {"timestamp_ns": 1100, "address": 0x2000, "bytes": 300, "region": proj},
            {"timestamp_ns": 1400, "address": 0x2000, "bytes": 300, "alloc": False, "region": proj},
            {"timestamp_ns": 2150, "address": 0x3000, "bytes": 200, "region": 2},
        ],
    }


@pytest.fixture
def prof() -> Profile:
    return Profile(store_from_lists(_spec()))


def test_transfer_report_one_group_per_path(prof):
    t = prof.transfer_report()
    assert [g["kind"] for g in t["groups"]] == ["trace", "region_path", "region_path"]
    by = {g["region"]: g for g in t["groups"] if g["kind"] == "region_path"}
    step, nested = by["step"], by["step > proj"]
    assert (step["name"], step["depth"], step["instances"]) == ("step", 0, 3)
    assert (nested["name"], nested["depth"], nested["instances"]) == ("proj", 1, 1)
    # "step": the 3 copies (instance 1's through its nested region), 3000 B in 3 x 100 ns
    assert (step["all"]["count"], step["all"]["bytes"], step["all"]["busy_ns"]) == (3, 3000, 300)
    # 3000 B / 300 ns = 10 GB/s
    assert step["directions"]["HtoD"]["achieved_bytes_per_s"] == pytest.approx(1e10)
    assert (nested["all"]["count"], nested["all"]["bytes"]) == (1, 1000)


def test_transfer_report_per_instance_on_request(prof):
    t = prof.transfer_report(by="region_instance")
    regions = [g for g in t["groups"] if g["kind"] == "region"]
    # one group per record with copies, in order of the first copy: R0, R3 (and R1 through it), R2
    assert [(g["index"], g["name"], g["path"]) for g in regions] == \
        [(0, "step", "step"), (3, "proj", "step > proj"), (1, "step", "step"), (2, "step", "step")]
    assert all(g["all"]["bytes"] == 1000 for g in regions)


def test_analyze_names_the_region_rows_as_the_tables_do(prof):
    """roofline.analyze takes by= as prof.roofline()/transfer_report() do; region_rows= is the
    analysis' own name for the same choice: one cached result for both spellings."""
    from fpgaprof import roofline
    per_record = roofline.analyze(prof, by="region_instance")
    assert roofline.analyze(prof, region_rows="instance") is per_record
    assert roofline.analyze(prof) is roofline.analyze(prof, by="region")
    assert [g["kind"] for g in per_record["transfers"]["groups"]].count("region") == 4
    with pytest.raises(ValueError, match="disagree"):
        roofline.analyze(prof, by="region", region_rows="instance")
    with pytest.raises(ValueError, match="region_instance"):
        roofline.analyze(prof, by="op")


def test_memory_report_per_path_and_per_instance(prof):
    m = prof.memory_report()
    rows = {r["region"]: r for r in m["regions"]}
    assert set(rows) == {"step", "step > proj"}
    step = rows["step"]
    # instance peaks: R0 100, R1 300 (R3's buffer), R2 200 -> 300, reached in R1
    assert (step["peak_in_use_bytes"], step["peak_region_index"], step["instances"]) == (300, 1, 3)
    # allocations summed: 100 + 300 + 200 B in 3 calls; 100 + 300 freed in 2
    assert (step["allocated_bytes"], step["allocations"]) == (600, 3)
    assert (step["freed_bytes"], step["frees"]) == (400, 2)
    nested = rows["step > proj"]
    assert (nested["peak_in_use_bytes"], nested["allocated_bytes"]) == (300, 300)
    inst = prof.memory_report(by="region_instance")["regions"]
    assert [(r["index"], r["region"], r["path"], r["peak_in_use_bytes"]) for r in inst] == \
        [(0, "step", "step", 100), (1, "step", "step", 300), (2, "step", "step", 200),
         (3, "proj", "step > proj", 300)]
    # The largest buffers name the region path that allocated them, as the rows above do:
    # 300 B in R3 ("step > proj"), 200 B in R2, 100 B in R0.
    assert [(b["bytes"], b["region"]) for b in m["largest"]] == \
        [(300, "step > proj"), (200, "step"), (100, "step")]


def test_roofline_by_region_is_per_path(prof):
    rows = prof.roofline(by="region")
    # "step": 3 kernels x 100 ns (inclusive); "step > proj": instance 1's kernel
    assert [(r["region"], r["instances"], r["kernel_count"], r["time_ns"]) for r in rows] == \
        [("step", 3, 3, 300), ("step > proj", 1, 1, 100)]
    inst = prof.roofline(by="region_instance")
    assert sorted((r["index"], r["path"], r["kernel_count"]) for r in inst) == \
        [(0, "step", 1), (1, "step", 1), (2, "step", 1), (3, "step > proj", 1)]
    with pytest.raises(ValueError):
        prof.transfer_report(by="op")
    with pytest.raises(ValueError):
        prof.roofline(by="nonsense")


def test_paths_match_the_fpga_region_candidates():
    """The region path strings are the ones fpga_candidates(by="region") uses ("outer > inner";
    a name containing " > " in quotes)."""
    spec = _spec()
    spec["regions"][2]["name"] = "a > b"
    p = Profile(store_from_lists(spec))
    assert {r["region"] for r in p.roofline(by="region")} == {"step", "step > proj", '"a > b"'}
    from fpgaprof.analysis import sections
    regions = sections.regions_section(p, fpgaprof.roofline.analyze(p),
                                       sections.region_instances(p))
    assert {r["path"] for r in regions["items"]} == {"step", "step > proj", '"a > b"'}


def test_summary_never_asks_for_per_instance_rows(monkeypatch):
    """The summary step builds no Python row per region instance: with 400 instances of one
    path the analysis result it receives has one transfer group, memory row and roofline point
    per path, and it asks for nothing else."""
    from fpgaprof.report import model

    n = 400
    real = core.analysis.analyze
    seen: list[dict] = []

    def counting(*args, **kwargs):
        out = real(*args, **kwargs)
        seen.append({"region_rows": args[9] if len(args) > 9 else kwargs.get("region_rows", "path"),
                     "groups": len([g for g in out["transfers"]["groups"] if g["kind"] != "op"]),
                     "memory": len(out["memory"]["regions"]),
                     "roofline": len(out["roofline"]["regions"])})
        return out
    monkeypatch.setattr(core.analysis, "analyze", counting)
    s = model.collect(Profile(store_from_lists(_spec(n))))
    assert seen, "the summary did not run the C++ analysis"
    for call in seen:
        assert call["region_rows"] == "path"
        # trace + 2 paths; 2 paths; 2 paths — not n
        assert (call["groups"], call["memory"], call["roofline"]) == (3, 2, 2)
    by = {r["region"]: r for r in s["transfers"]["by_region"]}
    assert (by["step"]["instances"], by["step"]["count"], by["step"]["bytes"]) == (n, n, 1000 * n)


def test_region_measurements_match_the_row_by_row_functions():
    """model.region_measurements (columns) gives exactly what measurements_from_regions ->
    cap_measurements / measurement_stats give row by row: random names (with and without a
    size, two spellings of one (operation, size)), tied starts and negative durations."""
    import numpy as np
    from fpgaprof.analysis import sections
    from fpgaprof.report import model

    rng = np.random.default_rng(7)
    pool = ["op%d/%d" % (i, s) for i in range(3) for s in (32, 64)] + ["plain", "op1@32", "z[4]"]
    for _ in range(60):
        n = int(rng.integers(0, 200))
        names = np.array([pool[int(rng.integers(0, len(pool)))] for _ in range(n)], dtype=object)
        start = rng.integers(0, 40, n).astype(np.int64)
        end = start + rng.integers(-5, 30, n)
        inst = sections.RegionInstances(names, start, end)
        runs, limit = int(rng.integers(1, 6)), int(rng.integers(1, 40))
        rows = model.measurements_from_regions(inst.rows())
        kept, left = model.cap_measurements(rows, runs=runs, limit=limit)
        assert model.region_measurements(inst, runs=runs, limit=limit) == \
            (kept, left, model.measurement_stats(rows, limit=limit))


def test_summary_builds_no_dict_per_region_instance(monkeypatch):
    """collect() takes the regions and the measurements from columns: the row-by-row
    functions are never called, and 300 instances give 20 listed runs and one stats row."""
    from fpgaprof.analysis import sections
    from fpgaprof.report import model

    def per_instance(*a, **k):
        raise AssertionError("the summary built one Python row per region instance")
    monkeypatch.setattr(sections.RegionInstances, "rows", per_instance)
    monkeypatch.setattr(model, "measurements_from_regions", per_instance)
    n = 300
    s = model.collect(Profile(store_from_lists(_spec(n))))
    assert len(s["measurements"]) == model.MEASUREMENT_RUNS + 1  # "step" runs 0..19, "proj" run 0
    assert s["measurements_left_out"] == n - model.MEASUREMENT_RUNS
    st = {r["operation"]: r for r in s["measurement_stats"]["items"]}
    # instance i of "step" lasts 900 ns; "proj" 450 ns
    assert (st["step"]["runs"], st["step"]["total"]) == (n, pytest.approx(n * 900e-9))
    assert (st["proj"]["runs"], st["proj"]["first"]) == (1, pytest.approx(450e-9))
    paths = {r["path"]: r["count"] for r in s["regions"]["items"]}
    assert paths == {"step": n, "step > proj": 1}
