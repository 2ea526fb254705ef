"""The keys `core.analysis.analyze` added for what the reports compute in Python today
(issue #20): trace totals (busy-time unions), GPU time per region path, region path names,
kernels by name, per-device DRAM peaks, the analysis' own attribution, the record enums' names.
Each must equal the Python computation it is to replace (fpgaprof.analysis.sections, fpgaprof.capture.xla_flags),
on the saved GPU traces and on a constructed trace with nested regions and overlapping copies;
the keys the package reads today keep their order."""
from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import fpgaprof
from fpgaprof.analysis import sections
from fpgaprof.api.profile import Profile
from fpgaprof.base import constants, records
from fpgaprof.base.core import core
from fpgaprof.capture import xla_flags

HERE = os.path.dirname(os.path.abspath(__file__))
TRACES = sorted(glob.glob(os.path.join(HERE, "..", "data", "traces", "*.fpgaprof")))

# Regions: "step" [0, 1000] > "fwd" [100, 500] > "inner" [150, 400]; "step" [2000, 3000] >
# "fwd" [2100, 2500]; a top-level "fwd" [5000, 5100]. Kernels, copies and memsets in them, two
# kernels overlapping, a copy overlapping a kernel, one kernel with its end before its start.
# Depths are given as capture records them: the reports' roll-up (add_region_gpu_time) goes by
# them, the core's by the parent links alone.
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
    out = [("constructed", Profile(core.analysis._store_from_lists(SPEC)))]
    out += [(os.path.basename(p), fpgaprof.load(p)) for p in TRACES]
    return out


@pytest.fixture(scope="module", params=_profiles(), ids=lambda p: p[0])
def analysed(request):
    _, prof = request.param
    return prof, core.analysis.analyze(prof._store, with_attribution=True)


def _intervals(prof, table):
    c = records.columns(getattr(prof, table), ("start_ns", "end_ns"))
    n = records.nrows(c)
    return (records.col(c, "start_ns", n).astype(np.int64), records.col(c, "end_ns", n).astype(np.int64))


def test_busy_unions_are_the_reports_unions(analysed):
    prof, an = analysed
    t = an["totals"]
    parts = [_intervals(prof, name) for name in ("kernels", "transfers", "memsets")]
    assert t["gpu_busy_ns"] == sections.union_ns(np.concatenate([p[0] for p in parts]),
                                          np.concatenate([p[1] for p in parts]))
    assert t["kernel_busy_ns"] == sections.union_ns(*parts[0])
    assert t["copy_busy_ns"] == sections.union_ns(*parts[1])
    assert t["memset_busy_ns"] == sections.union_ns(*parts[2])
    kernels, _ = sections.kernels_section(prof)
    assert t["kernel_count"] == kernels["count"] == len(prof.kernels)
    assert t["kernel_time_ns"] / 1e9 == pytest.approx(kernels.get("total_s", 0.0), rel=1e-12, abs=0)
    assert (t["copy_count"], t["memset_count"]) == (len(prof.transfers), len(prof.memsets))
    copy_bytes = records.col(records.columns(prof.transfers, ("bytes",)), "bytes", len(prof.transfers))
    assert t["copy_bytes"] == int(np.asarray(copy_bytes, dtype=np.int64).sum())


def test_kernels_by_name_are_the_reports_kernel_rows(analysed):
    prof, an = analysed
    kernels, _ = sections.kernels_section(prof)
    rows = an["kernels_by_name"]
    assert len(rows) == kernels.get("distinct", 0)
    for mine, theirs in zip(rows, kernels.get("top", [])):
        assert mine["kernel"] == theirs["name"]
        assert mine["count"] == theirs["count"]
        assert mine["total_ns"] / 1e9 == pytest.approx(theirs["total_s"], rel=1e-12, abs=0)
        assert (mine["min_ns"] / 1e9, mine["max_ns"] / 1e9) == (theirs["min_s"], theirs["max_s"])


def test_region_paths_and_their_gpu_time_are_the_reports(analysed):
    prof, an = analysed
    regions, paths, _ = sections.regions_section(prof)
    rows = an["region_paths"]
    assert [rows[p]["region"] for p in an["region_path_of"]] == paths
    assert [r["path_index"] for r in rows] == list(range(len(rows)))
    if not regions.get("available"):
        assert rows == []
        return
    sections.add_region_gpu_time(regions, prof, paths)
    by_path = {r["region"]: r for r in rows}
    assert len(by_path) == len(rows) == regions["paths"]
    for item in regions["items"]:
        r = by_path[item["path"]]
        assert (r["name"], r["depth"], r["instances"]) == (item["name"], item["depth"], item["count"])
        assert r["gpu_ns"] == r["kernel_ns"] + r["copy_ns"] + r["memset_ns"]
        assert r["gpu_ns"] / 1e9 == pytest.approx(item["gpu_s"], rel=1e-12, abs=0)
        parent = r["parent"]
        assert (parent is None) == (r["depth"] == 0)
        if parent is not None:
            assert r["region"].startswith(rows[parent]["region"] + " > ")


def test_the_constructed_trace_by_hand():
    """The constructed trace's numbers, worked out by hand (as the C++ test's):
    paths 0 "step", 1 "step > fwd", 2 "step > fwd > inner", 3 "fwd"; inclusive GPU time
    inner 60 + 20 = 80; fwd 80 + 90 (R1) + 100 (R3) + 5 (memset) = 275; step 275 + 10 (R0) + 100
    (copy in R2) = 385; top-level fwd 20. Kernels by name: b 60 + 100, a 90 + 20, c 10, z 0. Busy: kernels [200, 340) + [600, 610) + [2200, 2300) +
    [5010, 5030) = 140 + 10 + 100 + 20 = 270; everything adds the copy [2600, 2700) and the memset
    [2400, 2405) (the copy [210, 230) lies inside the kernels): 375."""
    an = core.analysis.analyze(core.analysis._store_from_lists(SPEC))
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


def test_device_dram_peaks_are_the_reports(analysed):
    prof, an = analysed
    want = [sections.device_dict(d).get("peak_dram_bandwidth_bytes_per_s", 0.0) for d in prof.devices]
    assert an["device_dram_bytes_per_s"] == want


def test_the_analysis_attribution_is_attribute_of_the_store(analysed):
    prof, an = analysed
    mine, theirs = an["attribution"], core.attribution.attribute(prof._store)
    assert [(o.module_name, o.hlo_op, o.total_ns, o.kernel_count) for o in mine.ops] == \
           [(o.module_name, o.hlo_op, o.total_ns, o.kernel_count) for o in theirs.ops]
    assert np.array_equal(mine.kernels.site_index, theirs.kernels.site_index)
    assert [(s.hlo_op, s.method) for s in mine.kernels.sites] == [(s.hlo_op, s.method) for s in theirs.kernels.sites]
    assert list(mine.warnings) == list(theirs.warnings)
    assert (mine.unattributed_count, mine.unattributed_ns) == (theirs.unattributed_count, theirs.unattributed_ns)


def test_the_keys_the_package_reads_keep_their_order(analysed):
    _, an = analysed
    assert list(an)[:8] == ["ceilings", "warnings", "region_rows", "transfers", "memory", "devices",
                            "roofline", "fpga"]
    assert list(an)[8:] == ["totals", "region_paths", "region_path_of", "kernels_by_name",
                            "device_dram_bytes_per_s", "module_memory", "attribution"]


def test_enum_names_and_kernel_names_come_from_the_core():
    assert dict(enumerate(core.COPY_KIND_NAMES)) == constants.COPY_KIND_NAMES
    assert dict(enumerate(core.MEMORY_KIND_NAMES)) == constants.MEMORY_KIND_NAMES
    # (XLA's names are ASCII; for other text the core, like XLA, replaces each byte)
    for name in ("fusion.12", "loop_add_fusion", "a-b/c d", "custom-call.3$x", ""):
        assert core.attribution.sanitize_kernel_name(name) == xla_flags.sanitize_kernel_name(name)
