"""summary.json: numbers worked out by hand from the records in _reports_fixtures.py, the
JSON Schema, the MBIRJAX timing fields, and the not-available paths."""
import json
import os
import pathlib

import _reports_fixtures as F
import pytest
from fpgaprof.analysis import sections
from fpgaprof.api import overview
from fpgaprof.capture.run_environment import ENVIRONMENT_FILE
from fpgaprof.report import model, summary_json
from _store_builder import store_from_lists

jsonschema = pytest.importorskip("jsonschema")
SCHEMA_PATH = pathlib.Path(__file__).resolve().parents[2] / "docs" / "summary.schema.json"


@pytest.fixture(scope="module")
def schema():
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        s = json.load(f)
    jsonschema.Draft202012Validator.check_schema(s)
    return s


def validate(doc, schema):
    jsonschema.Draft202012Validator(schema).validate(doc)


def _kernel_busy_ns(intervals):
    """Kernel busy time (ns) of kernels at `intervals`, as the summary reads it: the C++
    analysis' totals (each kernel at its own [start, end))."""
    from fpgaprof import roofline
    from fpgaprof.api.profile import Profile
    from fpgaprof.base.core import core
    spec = {"start_ns": 0, "end_ns": 100,
            "kernels": [{"start_ns": s, "end_ns": e, "name": "k"} for s, e in intervals]}
    return roofline.analyze(Profile(store_from_lists(spec)))["totals"]


def test_union_of_intervals():
    # [0,10) ∪ [5,12) ∪ [20,21) ∪ [11,15) = [0,15) + [20,21) = 16; summed 10 + 7 + 1 + 4 = 22
    t = _kernel_busy_ns([(0, 10), (5, 12), (20, 21), (11, 15)])
    assert (t["kernel_busy_ns"], t["gpu_busy_ns"], t["kernel_time_ns"]) == (16, 16, 22)
    # a contained interval and a zero-length one: [0,10) ∪ [2,3) ∪ [30,30) = 10
    t = _kernel_busy_ns([(0, 10), (2, 3), (30, 30)])
    assert (t["kernel_busy_ns"], t["kernel_time_ns"]) == (10, 11)
    assert _kernel_busy_ns([])["gpu_busy_ns"] == 0


def test_totals_by_hand(schema):
    s = model.collect(F.SyntheticProfile())
    validate(s, schema)
    t = s["totals"]
    assert t["kernel_count"] == 4
    # kernels 0.5 + 1.0 + 0.5 + 1.0 ms
    assert t["kernel_time_s"] == pytest.approx(3.0e-3)
    # busy = [1.0,1.6] ∪ [2.0,3.5] ∪ [3.6,3.8] ∪ [5.1,5.6] ∪ [6.0,6.01]
    #      = 0.6 + 1.5 + 0.2 + 0.5 + 0.01 = 2.81 ms of a 10 ms trace
    assert t["gpu_busy_s"] == pytest.approx(2.81e-3)
    assert t["gpu_idle_s"] == pytest.approx(7.19e-3)
    assert t["gpu_busy_fraction"] == pytest.approx(0.281)
    # copies busy 0.1 + 0.2 ms: 3 % of wall, 0.3/2.81 of GPU busy
    assert t["transfer_busy_s"] == pytest.approx(0.3e-3)
    assert t["transfer_share_of_wall"] == pytest.approx(0.03)
    assert t["transfer_share_of_gpu_busy"] == pytest.approx(0.3 / 2.81)
    assert t["transfer_bytes"] == 3_000_000
    assert (t["memset_count"], t["api_call_count"], t["marker_count"], t["region_count"]) == \
        (1, 7, 2, 3)


def test_kernels_and_transfers_by_hand():
    s = model.collect(F.SyntheticProfile())
    top = {r["name"]: r for r in s["kernels"]["top"]}
    assert top["fusion_a"]["count"] == 2
    assert top["fusion_a"]["total_s"] == pytest.approx(1.0e-3)
    assert top["fusion_a"]["mean_s"] == pytest.approx(0.5e-3)
    assert top["gemm<float>"]["share"] == pytest.approx(1 / 3)
    dirs = {r["direction"]: r for r in s["transfers"]["by_direction"]}
    # HtoD: 1e6 B in 0.1 ms = 1e6 B / 1e5 ns = 10 GB/s, pageable source, synchronous
    assert dirs["HtoD"]["gbps"] == pytest.approx(10.0)
    assert (dirs["HtoD"]["pageable_count"], dirs["HtoD"]["async_count"]) == (1, 0)
    # DtoH: 2e6 B in 0.2 ms = 10 GB/s, pinned destination, async
    assert dirs["DtoH"]["gbps"] == pytest.approx(10.0)
    assert (dirs["DtoH"]["pageable_count"], dirs["DtoH"]["async_count"]) == (0, 1)
    # both copies ran in the first forward_project/64 instance; `instances` counts every
    # instance of the path (2), as the regions section does; the device record has no PCIe
    # generation/width, so the link's peak is unknown: link % is null, not 0
    (reg,) = s["transfers"]["by_region"]
    assert (reg["region"], reg["instances"], reg["count"], reg["bytes"]) == \
        ("forward_project/64", 2, 2, 3_000_000)
    assert reg["busy_s"] == pytest.approx(0.3e-3)
    assert {d["direction"] for d in reg["directions"]} == {"HtoD", "DtoH"}
    assert s["transfers"]["link_bytes_per_s"] is None
    assert all(r["link_percent"] is None for r in s["transfers"]["by_direction"])


def test_memory_timeline_by_hand():
    m = model.collect(F.SyntheticProfile())["memory"]
    # in use: 1 MB @0.5, 3 MB @1, 2 MB @2, 6 MB @3, 4 MB @4, 0 @5
    assert m["peak_bytes"] == 6_000_000
    assert m["peak_time_s"] == pytest.approx(3e-3)
    assert m["end_bytes"] == 0
    assert [v for _, v in m["timeline"]] == [1_000_000, 3_000_000, 2_000_000, 6_000_000,
                                              4_000_000, 0]


def test_regions_and_measurements_by_hand():
    s = model.collect(F.SyntheticProfile())
    regions = {r["name"]: r for r in s["regions"]["items"]}
    # forward_project/64: 3.1 + 2.0 ms wall; GPU work launched in it: kernels 0.5 + 1.0 + 1.0
    # (#0) + 0.5 (#1), copies 0.1 + 0.2 (#0), memset 0.01 (#1) = 3.31 ms
    assert regions["forward_project/64"]["wall_s"] == pytest.approx(5.1e-3)
    assert regions["forward_project/64"]["gpu_s"] == pytest.approx(3.31e-3)
    assert regions["back_project"]["gpu_s"] == 0.0
    assert s["measurements"] == [
        {"operation": "forward_project", "volume_size": 64, "run": 0,
         "time": pytest.approx(3.1e-3)},
        {"operation": "forward_project", "volume_size": 64, "run": 1,
         "time": pytest.approx(2.0e-3)},
        {"operation": "back_project", "volume_size": None, "run": 0, "time": pytest.approx(1.5e-3)},
    ]


@pytest.mark.parametrize("name,op,size", [
    ("fbp_recon/128", "fbp_recon", 128), ("fbp_recon@32", "fbp_recon", 32),
    ("cone.recon[256]", "cone.recon", 256), ("median_filter3d size=64", "median_filter3d", 64),
    ("phantom", "phantom", None), ("a/b", "a/b", None),
])
def test_measurement_names(name, op, size):
    m = model.measurements_from_regions([{"index": 0, "name": name, "start_ns": 10, "end_ns": 2010}])
    assert m == [{"operation": op, "volume_size": size, "run": 0, "time": 2e-6}]


def test_given_environment_and_measurements_win(schema):
    env = {"backend": "gpu", "devices": ["cuda:0"], "jax_version": "0.4.35",
           "mbirjax_version": "0.6.17.1"}
    meas = [{"operation": "forward_project", "volume_size": 32, "run": 2, "time": 0.25}]
    s = model.collect(F.SyntheticProfile(), environment=env, measurements=meas)
    validate(s, schema)
    assert s["environment"] == env
    assert s["measurements"] == meas


def test_environment_json_beside_trace(tmp_path):
    env = {"backend": "cpu", "devices": ["TFRT_CPU_0"], "jax_version": "0.10.2",
           "mbirjax_version": None}
    (tmp_path / ENVIRONMENT_FILE).write_text(json.dumps(env))
    s = model.collect(F.SyntheticProfile(), trace_path=str(tmp_path / "trace.fpgaprof"))
    assert {k: s["environment"][k] for k in env} == env  # the run's values win
    assert s["environment"]["source"] in ("run", "run and trace META")
    assert s["trace"]["path"].endswith("trace.fpgaprof")


def test_unavailable_sections_say_why(schema):
    s = model.collect(F.SyntheticProfile(with_gpu=False))
    validate(s, schema)
    assert s["kernels"]["available"] is False and "no kernels" in s["kernels"]["reason"]
    assert s["memory"]["available"] is False
    no_gpu = "the trace has no GPU kernels: trace on a machine with an NVIDIA GPU"
    assert s["ops"] == {"available": False, "reason": no_gpu}
    assert s["roofline"]["available"] is False and s["roofline"]["reason"] == no_gpu
    assert s["candidates"]["available"] is False and s["candidates"]["reason"] == no_gpu
    assert s["candidates"]["regions"] == {"available": False, "reason": no_gpu}
    assert s["device"] is None
    assert any("no GPU data" in w["message"] and "install the NVIDIA driver" in w["message"]
               for w in s["warnings"])
    # no GPU traced: busy, idle and busy share are unknown (null), not 0 and the wall time
    assert (s["totals"]["gpu_busy_s"], s["totals"]["gpu_idle_s"],
            s["totals"]["gpu_busy_fraction"]) == (None, None, None)
    # regions and measurements still come from the host side
    assert len(s["measurements"]) == 3


def test_warnings_are_collected():
    s = model.collect(F.SyntheticProfile())
    ws = s["warnings"]
    # the stand-in's own warning is prose: kept whole, as a warning of an older trace
    assert {"code": "trace.older_warning", "severity": "warning", "source": "trace", "count": 1,
            "numbers": [], "message": "user <script>alert(1)</script> warning"} in ws
    (dropped,) = [w for w in ws if w["message"].startswith("3 CUPTI records were dropped")]
    assert (dropped["code"], dropped["numbers"]) == ("report.records_dropped", [3.0])


def test_ops_and_roofline_from_ops(schema):
    s = model.collect(F.SyntheticProfile(with_ops=True))
    validate(s, schema)
    ops = {r["op"]: r for r in s["ops"]["items"]}
    assert ops["fusion.1"]["source"] == "model.py:12"
    assert ops["fusion.1"]["mean_s"] == pytest.approx(0.5e-3)
    assert ops["dot.2"]["bytes"] == 1e7
    pts = {p["op"]: p for p in s["roofline"]["points"]}
    assert s["roofline"]["points_from"] == "ops"
    # fusion.1: 1e6 FLOP / 4e6 B = 0.25 FLOP/B; 2 calls x 1e6 FLOP in 1 ms = 2e9 FLOP/s
    assert pts["fusion.1"]["intensity"] == pytest.approx(0.25)
    assert pts["fusion.1"]["achieved_flops_per_s"] == pytest.approx(2e9)
    # dot.2: 2e9 / 1e7 = 200 FLOP/B; 2e9 FLOP in 1 ms = 2e12 FLOP/s
    assert pts["dot.2"]["intensity"] == pytest.approx(200.0)
    assert pts["dot.2"]["achieved_flops_per_s"] == pytest.approx(2e12)
    assert pts["dot.2"]["bound"] == "unknown"  # no bound invented without ceilings


def test_write_is_atomic_and_valid_json(tmp_path, schema):
    p = tmp_path / "out" / "summary.json"
    old_mask = os.umask(0o022)
    try:
        summary_json.write_summary(p, model.collect(F.SyntheticProfile()))
    finally:
        os.umask(old_mask)
    doc = json.loads(p.read_text())
    validate(doc, schema)
    assert [x for x in os.listdir(p.parent) if x.startswith(".tmp-")] == []
    assert p.stat().st_mode & 0o777 == 0o644  # as open() would give, not mkstemp's 0600


def test_failed_write_keeps_old_file(tmp_path, monkeypatch):
    p = tmp_path / "summary.json"
    p.write_text("old")

    def fail(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError):
        summary_json.write_summary(p, model.collect(F.SyntheticProfile()))
    old = "old"
    assert p.read_text() == old  # the previous file is untouched
    assert [x for x in os.listdir(p.parent) if x.startswith(".tmp-")] == []


def test_nan_becomes_null():
    txt = summary_json.dumps({"a": float("nan"), "b": [float("inf"), 1.5]})
    assert json.loads(txt) == {"a": None, "b": [None, 1.5]}


def _add_outer_region(prof, start_ms, end_ms, parent, depth):
    """Appends region "outer" [start_ms, end_ms] on thread 101 (index 3) to the fixture's three
    regions, with the given parent and depth columns for all four."""
    import numpy as np
    r = prof.regions.columns()
    prof.regions = F.Table(
        name=np.append(r["name"], "outer").astype(object),
        start_ns=np.append(r["start_ns"], F.ms(start_ms)).astype(np.uint64),
        end_ns=np.append(r["end_ns"], F.ms(end_ms)).astype(np.uint64),
        thread_id=np.append(r["thread_id"], 101).astype(np.uint32),
        parent=np.array(parent, dtype=np.uint32),
        depth=np.array(depth, dtype=np.uint16))


def test_region_gpu_time_includes_nested_regions():
    import numpy as np
    prof = F.SyntheticProfile()
    # make back_project [7.5, 9.0] a child of a new outer region "outer" [7.0, 9.5]
    _add_outer_region(prof, 7.0, 9.5, parent=[F.NONE32, F.NONE32, 3, F.NONE32], depth=[0, 0, 1, 0])
    k = prof.kernels.columns()
    # fusion_a #2 (0.5 ms) now launched in back_project
    k["region_index"] = np.array([0, 0, 2, 0], dtype=np.uint32)
    prof.kernels = F.Table(**k)
    items = {x["name"]: x for x in model.collect(prof)["regions"]["items"]}
    assert items["back_project"]["gpu_s"] == pytest.approx(0.5e-3)
    assert items["outer"]["gpu_s"] == pytest.approx(0.5e-3)  # through its child
    # forward_project/64 lost that kernel: 0.5 + 1.0 + 1.0 + 0.3 copies + 0.01 memset
    assert items["forward_project/64"]["gpu_s"] == pytest.approx(2.81e-3)


def test_unattributed_kernels_warning():
    from types import SimpleNamespace

    class WithAttribution(F.SyntheticProfile):
        @property
        def attribution(self):
            return SimpleNamespace(unattributed_count=2, ops=[],
                                   unattributed=[SimpleNamespace(name="gemm<float>"),
                                                 SimpleNamespace(name="fusion_b")])
    ws = [w["message"] for w in model.collect(WithAttribution())["warnings"]]
    assert "2 kernels could not be attributed to an HLO op (most time: gemm<float>, fusion_b)" \
        in ws
    # the plain profile's trace holds no HLO module: all 4 kernels are unattributed
    ws = [w["message"] for w in model.collect(F.SyntheticProfile())["warnings"]]
    # (fusion_a 2 x 0.5 ms, gemm<float> and fusion_b 1 ms each: a tie, in any order)
    (w,) = [w for w in ws if "attributed" in w]
    head = "4 kernels could not be attributed to an HLO op (most time: "
    assert w.startswith(head) and w.endswith(")")
    assert sorted(w[len(head):-1].split(", ")) == ["fusion_a", "fusion_b", "gemm<float>"]


def test_saved_trace_without_environment_json_has_nulls(tmp_path):
    """Reporting a saved trace elsewhere must not pass off this process's jax as the traced
    program's."""
    prof = F.SyntheticProfile()
    s = model.collect(prof, trace_path=str(tmp_path / "trace.fpgaprof"))
    env = s["environment"]
    assert env["backend"] is None and env["jax_version"] is None and env["mbirjax_version"] is None
    # what the trace's own META knows: its devices by name
    assert env["devices"] == [d["name"] for d in prof.devices] and env["devices"]
    assert env["source"] == "trace META"


def _two_device_allocations():
    """The review's case, on two devices (times in ms after T0; A is one address used on both):
    @1 dev0 +A 100 · @2 dev1 +A 100 · @3 dev0 -A · @4 dev1 -B 50 (B never allocated in the
    trace) · @5 dev1 +C 70 · @6 dev0 +D 30. Matching by address alone gave 100, 200, 0, -50,
    20, 50: negative bytes in use."""
    import numpy as np
    A, B, C, D = 0x1000, 0x2000, 0x3000, 0x4000
    return F.Table(
        timestamp_ns=np.array([F.ms(t) for t in (1, 2, 3, 4, 5, 6)], dtype=np.uint64),
        address=np.array([A, A, A, B, C, D], dtype=np.uint64),
        bytes=np.array([100, 100, 100, 50, 70, 30], dtype=np.uint64),
        is_alloc=np.array([True, True, False, False, True, True]),
        device_id=np.array([0, 1, 0, 1, 1, 0], dtype=np.uint32))


def test_memory_two_devices_never_negative(schema):
    prof = F.SyntheticProfile()
    prof.allocations = _two_device_allocations()
    s = model.collect(prof)
    validate(s, schema)
    m = s["memory"]
    # a free matches the live allocation of the same device and address:
    # @1 100 · @2 200 · @3 dev0's A freed: 100 · @4 unmatched, no change (no step) · @5 170 ·
    # @6 200. Peak 200, first reached @2. End: dev0 D 30 + dev1 A 100 + C 70 = 200.
    assert [v for _, v in m["timeline"]] == [100, 200, 100, 170, 200]
    assert [t for t, _ in m["timeline"]] == pytest.approx([1e-3, 2e-3, 3e-3, 5e-3, 6e-3])
    assert (m["peak_bytes"], m["end_bytes"]) == (200, 200)
    assert m["peak_time_s"] == pytest.approx(2e-3)
    assert (m["unmatched_frees"], m["unmatched_free_bytes"]) == (1, 50)
    assert (m["allocation_count"], m["free_count"], m["events"]) == (4, 2, 6)
    # dev0: 100 @1, 0 @3, 30 @6 → peak 100 @1, end 30; dev1: 100 @2, 170 @5 → peak 170, end 170
    # Each device's own timeline: dev0 100 @1, 0 @3, 30 @6; dev1 100 @2, 170 @5 (the unmatched
    # free @4 is no step).
    assert m["devices"] == [
        {"device_id": 0, "peak_bytes": 100, "peak_time_s": pytest.approx(1e-3), "end_bytes": 30,
         "timeline_points": 3,
         "timeline": [[pytest.approx(1e-3), 100], [pytest.approx(3e-3), 0], [pytest.approx(6e-3), 30]]},
        {"device_id": 1, "peak_bytes": 170, "peak_time_s": pytest.approx(5e-3),
         "end_bytes": 170, "timeline_points": 2,
         "timeline": [[pytest.approx(2e-3), 100], [pytest.approx(5e-3), 170]]}]
    from fpgaprof.report import html
    page = html.render(s)
    assert page.count('class="memdev"') == 2 and "device 0" in page and "device 1" in page
    # the same numbers as the analysis' own memory report (one implementation)
    from fpgaprof import roofline
    r = roofline.memory(prof)
    assert (r["peak_in_use_bytes"], r["timeline_in_use_bytes"]) == (200, [100, 200, 100, 170,
                                                                          200])


def test_memory_timeline_keeps_spikes_when_downsampled():
    import numpy as np
    v = np.zeros(10_000, dtype=np.int64)
    v[1234] = 7  # one short spike in a long flat series
    v[9000] = 5
    pick = sections.downsample_steps(v, 400)
    assert len(pick) <= 401 and 1234 in pick and 9000 in pick and pick[-1] == 9999
    assert list(sections.downsample_steps(np.arange(5))) == [0, 1, 2, 3, 4]


def _nested_profile_with_sync():
    """The fixture plus: region "outer" [0.5, 4.5] (index 3) enclosing the first
    forward_project/64 instance; the DtoH copy moved to [3.4, 3.8] (2 MB), so it overlaps
    fusion_b [2.5, 3.5] by 0.1 ms; a host wait (cuStreamSynchronize) on thread 101 at
    [3.85, 3.95] inside that instance; the GPU on PCIe gen4 x16."""
    import numpy as np
    prof = F.SyntheticProfile()
    _add_outer_region(prof, 0.5, 4.5, parent=[3, F.NONE32, F.NONE32, F.NONE32], depth=[1, 0, 0, 0])
    c = prof.transfers.columns()
    c["start_ns"] = np.array([F.ms(1.0), F.ms(3.4)], dtype=np.uint64)
    prof.transfers = F.Table(**c)
    prof.syncs = F.Table(start_ns=np.array([F.ms(3.85)], dtype=np.uint64),
                         end_ns=np.array([F.ms(3.95)], dtype=np.uint64),
                         thread_id=np.array([101], dtype=np.uint32),
                         correlation_id=np.array([8], dtype=np.uint32))
    dev = dict(F.DEVICE, pcie_generation=4, pcie_link_width=16)
    prof.devices, prof.device = [dev], dev
    return prof


def test_transfers_inclusive_with_overlap_host_wait_and_link(schema):
    prof = _nested_profile_with_sync()
    s = model.collect(prof)
    validate(s, schema)
    t = s["transfers"]
    # busy 0.1 + 0.4 ms; overlap with kernels: DtoH [3.4, 3.8] ∩ fusion_b [2.5, 3.5] = 0.1 ms;
    # host wait 0.1 ms in 1 call
    assert t["busy_s"] == pytest.approx(0.5e-3)
    assert t["kernel_overlap_s"] == pytest.approx(0.1e-3)
    assert (t["host_wait_s"], t["sync_calls"]) == (pytest.approx(0.1e-3), 1)
    # PCIe gen4 x16: 16 GT/s x 16 lanes x 128/130 / 8 = 31.508 GB/s per direction.
    # HtoD 1e6 B / 0.1 ms = 10 GB/s = 31.74 %; DtoH 2e6 B / 0.4 ms = 5 GB/s = 15.87 %
    link = 16e9 * 16 * 128 / 130 / 8
    assert t["link_bytes_per_s"] == pytest.approx(link)
    dirs = {r["direction"]: r for r in t["by_direction"]}
    assert dirs["HtoD"]["link_percent"] == pytest.approx(100 * 10e9 / link)
    assert dirs["DtoH"]["link_percent"] == pytest.approx(100 * 5e9 / link)
    assert dirs["DtoH"]["kernel_overlap_s"] == pytest.approx(0.1e-3)
    # inclusive: the copies and the wait of the nested instance count for "outer" too
    by = {r["region"]: r for r in t["by_region"]}
    assert set(by) == {"outer", "outer > forward_project/64"}
    for r in by.values():
        assert (r["count"], r["bytes"], r["sync_calls"]) == (2, 3_000_000, 1)
        assert r["busy_s"] == pytest.approx(0.5e-3)
        assert r["kernel_overlap_s"] == pytest.approx(0.1e-3)
        assert r["host_wait_s"] == pytest.approx(0.1e-3)
    # as prof.transfer_report() counts them (the C++ transfer analysis)
    from fpgaprof import roofline
    (outer,) = [g for g in roofline.transfers(prof)["groups"]
                if g["kind"] == "region_path" and g["region"] == "outer"]
    assert (outer["all"]["bytes"], outer["host_wait_ns"]) == (3_000_000, 100_000)
    (outer,) = [g for g in roofline.transfers(prof, by="region_instance")["groups"]
                if g["kind"] == "region" and g["index"] == 3]
    assert (outer["all"]["bytes"], outer["host_wait_ns"], outer["path"]) == \
        (3_000_000, 100_000, "outer")
    # regions by path: the nested instance is its own row
    paths = {r["path"]: r for r in s["regions"]["items"]}
    assert set(paths) == {"outer", "outer > forward_project/64", "forward_project/64",
                          "back_project"}
    assert paths["outer > forward_project/64"]["name"] == "forward_project/64"


def test_analysis_failure_is_a_warning_not_a_missing_feature(monkeypatch):
    from fpgaprof.api import roofline as api_roofline

    def broken(prof, **kw):
        return None.peak  # an AttributeError from a bug inside the analysis
    monkeypatch.setattr(api_roofline, "analyze", broken)
    s = model.collect(F.SyntheticProfile())
    why = ("the analysis (fpgaprof.roofline.analyze) failed: AttributeError: 'NoneType' "
           "object has no attribute 'peak'")
    assert s["memory"] == {"available": False, "reason": why}
    assert s["transfers"]["reason"] == why
    (failed,) = [w for w in s["warnings"] if w["message"] == why]
    assert (failed["code"], failed["severity"]) == ("report.analysis_failed", "error")
    assert "not in this fpgaprof build" not in json.dumps(s)


def test_missing_core_function_is_not_in_this_build(monkeypatch):
    from fpgaprof.base.core import core
    monkeypatch.delattr(core.analysis, "analyze")
    s = model.collect(F.SyntheticProfile())
    assert s["memory"]["available"] is False
    assert "is not in this fpgaprof build" in s["memory"]["reason"]
    assert not any("analyze" in w["message"] for w in s["warnings"])


def test_measured_roofline_fields_from_counters(schema):
    """Counters on both broadcast_add_fusion kernels (30 µs each): 8000 B read + 4000 B
    written and 500 FFMA (1000 FLOP) per kernel → the op: 2000 FLOP, 24000 B, 0.0833 FLOP/B;
    24000 B in 60 µs = 4e8 B/s of the 1.024e12 B/s DRAM roof = 0.0390625 %."""
    pytest.importorskip("jax")
    import fpgaprof
    from fpgaprof.report import html as H
    from test_analysis_fpga import _hlo_text, _store
    store = _store(_hlo_text())
    for k in (0, 1):
        store.append("counters", kernel_index=k, metric="dram__bytes_read.sum", value=8000.0)
        store.append("counters", kernel_index=k, metric="dram__bytes_write.sum", value=4000.0)
        store.append("counters", kernel_index=k,
                     metric="smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", value=500.0)
    s = model.collect(fpgaprof.Profile(store))
    validate(s, schema)
    roof = s["roofline"]
    assert roof["has_measured"] is True
    pts = {p["op"]: p for p in roof["points"]}
    p = pts["broadcast_add_fusion"]
    assert (p["measured_flops"], p["measured_bytes"]) == (2000, 24000)
    assert p["measured_intensity"] == pytest.approx(2000 / 24000)
    assert p["measured_roof_fraction"] == pytest.approx(24000 / 60e-6 / 1.024e12)
    assert p["measured_bound"] == "memory"
    # ops without counters say so with nulls, not zeros
    assert pts["ynn_fusion"]["has_measured"] is False and pts["ynn_fusion"]["measured_flops"] \
        is None
    # every candidate of the FPGA model is valid under the schema (checked above) and counted
    assert s["candidates"]["count"] == len(s["candidates"]["items"]) + \
        s["candidates"]["items_left_out"]
    doc = H.render(s)
    assert "measured FLOP/B" in doc and "measured (counters): 0.0833 FLOP/B" in doc
    assert p["measured_coverage"] == pytest.approx(1.0)
    assert pts["ynn_fusion"]["measured_coverage"] is None


def test_measured_roofline_over_the_kernels_with_counters(schema):
    """Counters on the first broadcast_add_fusion kernel only (30 µs of the op's 60 µs): 8000 +
    4000 B and 500 FFMA (1000 FLOP). The measured rate is over that kernel's 30 µs: 12000 B /
    30e-6 s = 4e8 B/s of the 1.024e12 B/s DRAM roof = 0.0390625 % (over all 60 µs it would
    read 0.01953 %); coverage 30 / 60 = 0.5; the trace: 30 µs of 110 µs of kernels."""
    pytest.importorskip("jax")
    import fpgaprof
    from fpgaprof import roofline
    from fpgaprof.report import html as H
    from test_analysis_fpga import _hlo_text, _store
    store = _store(_hlo_text())
    store.append("counters", kernel_index=0, metric="dram__bytes_read.sum", value=8000.0)
    store.append("counters", kernel_index=0, metric="dram__bytes_write.sum", value=4000.0)
    store.append("counters", kernel_index=0,
                 metric="smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", value=500.0)
    prof = fpgaprof.Profile(store)
    s = model.collect(prof)
    validate(s, schema)
    p = {q["op"]: q for q in s["roofline"]["points"]}["broadcast_add_fusion"]
    assert (p["measured_flops"], p["measured_bytes"]) == (1000, 12000)
    assert p["measured_roof_fraction"] == pytest.approx(12000 / 30e-6 / 1.024e12)
    assert p["measured_coverage"] == pytest.approx(0.5)
    row = {r["op"]: r for r in roofline.roofline(store, by="op")}["broadcast_add_fusion"]
    assert (row["measured_kernel_count"], row["measured_time_ns"]) == (1, 30_000)
    assert row["measured_percent_of_roof"] == pytest.approx(100 * 12000 / 30e-6 / 1.024e12)
    trace = roofline.roofline(store, by="trace")
    assert trace["measured_coverage"] == pytest.approx(30_000 / 110_000)
    doc = H.render(s)
    assert "measured coverage" in doc and "counters on 50.0 % of its time" in doc


def test_left_out_counts():
    rows = [{"op": f"op{i}", "module": "m", "time_ns": 1000 - i, "flops": 1.0, "bytes": 1.0,
             "intensity": 1.0, "achieved_flops_per_s": 1.0, "bound": "memory"}
            for i in range(250)]
    roof = overview.roofline_section(F.SyntheticProfile(), rows, None, {"available": False,
                                                                   "reason": "x"})
    assert (roof["count"], len(roof["points"]), roof["points_left_out"]) == (250, 200, 50)
    assert roof["points"][0]["op"] == "op0"  # most time first
    cands = overview.candidates_section({"candidates": [{"rank": i + 1, "op": f"op{i}"}
                                                  for i in range(60)]}, None, "alveo-u55c")
    assert (cands["count"], len(cands["items"]), cands["items_left_out"]) == (60, 50, 10)
    from fpgaprof.report import html as H
    s = model.collect(F.SyntheticProfile())
    s["roofline"], s["candidates"] = roof, cands
    doc = H.render(s)
    assert "10 more candidates not shown" in doc
    assert "200 more of 250 ops not shown (the chart draws the 200 with most time)" in doc


def _valid_candidate():
    return {"rank": 1, "op": "fusion.1", "module": "jit_f", "pattern": "elementwise",
            "gpu_time_ns": 1e6, "time_share": 0.5, "score": 0.3, "card_time_s": 1e-4,
            "card_time_low_s": 5e-5, "card_time_high_s": 3e-4, "fpga_total_s": 2e-4,
            "op_speedup": 2.0, "op_speedup_low": 1.1, "op_speedup_high": 3.2, "workload_speedup": 1.3,
            "restructured_card_time_s": 8e-5, "restructured_op_speedup": 2.2, "scenario": "as compiled"}


@pytest.mark.parametrize("mutate", [
    lambda s: s["candidates"]["items"][0].update(score="high"),
    lambda s: s["candidates"]["items"][0].pop("score"),
    lambda s: s["candidates"]["items"][0].pop("op_speedup_low"),
    lambda s: s["candidates"]["items"][0].update(scenario="maybe"),
    lambda s: s["candidates"]["items"][0].update(rank=0),
    lambda s: s["roofline"]["points"][0].update(bound="bogus"),
    lambda s: s["roofline"]["points"][0].update(measured_bound="bogus"),
    lambda s: s["roofline"]["points"][0].pop("measured_flops"),
    lambda s: s["memory"].update(peak_bytes=-1),
    lambda s: s["memory"].update(end_bytes=-200),
    lambda s: s["memory"]["timeline"].append([0.004, -50]),
    lambda s: s["memory"]["devices"][0].update(end_bytes=-5),
    lambda s: s["transfers"]["by_direction"][0].update(link_percent="n/a"),
    lambda s: s["transfers"]["by_direction"][0].update(direction="sideways"),
    lambda s: s["transfers"].pop("host_wait_s"),
    lambda s: s["ops"]["items"][0].update(bound="bogus"),
    lambda s: s["regions"]["items"][0].pop("path"),
], ids=["score-string", "score-missing", "range-missing", "scenario-unknown", "rank-0", "bound-bogus", "measured-bound-bogus",
        "measured-missing", "peak-negative", "end-negative", "timeline-negative",
        "device-end-negative", "link-percent-string", "direction-unknown", "host-wait-missing",
        "op-bound-bogus", "region-path-missing"])
def test_schema_rejects(mutate, schema):
    import copy
    s = model.collect(F.SyntheticProfile(with_ops=True))
    s["candidates"] = {"available": True, "target": "alveo-u55c", "count": 1,
                       "items": [_valid_candidate()], "items_left_out": 0}
    validate(s, schema)  # the unmodified document is valid
    bad = copy.deepcopy(s)
    mutate(bad)
    with pytest.raises(jsonschema.ValidationError):
        validate(bad, schema)


class _Tty:
    """A terminal-like stream that keeps what is written."""

    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, t):
        self.text += t

    def flush(self):
        pass


def test_progress_stages_cover_every_step(tmp_path, monkeypatch):
    from fpgaprof import report
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    seen = []

    class Recorder(report.Progress):
        def stage(self, what):
            seen.append(what)
            super().stage(what)
    tty = _Tty()
    bar = Recorder(1 + len(report.WRITE_STAGES), "fpgaprof report", stream=tty)
    bar.stage("loading trace")  # as the CLI does before fpgaprof.load
    report.write_all(F.SyntheticProfile(), tmp_path, progress=bar)
    # the analysis attributes the kernels itself: no stage of its own for the attribution
    assert seen == ["loading trace", "analysis", "summary.json", "report.html", "timeline.json"]
    # drawn as each stage begins: the first frame says 0/5 and what runs; the last is 5/5
    frames = tty.text.split("\r")[1:]
    assert "0/5 loading trace…" in frames[0] and "2/5 summary.json…" in frames[2]
    assert "5/5 done" in frames[-1] and frames[-1].endswith("\n")


@pytest.mark.parametrize("env,tty", [({"CI": "true"}, True), ({"TERM": "dumb"}, True),
                                     ({}, False)])
def test_progress_silent_off_terminal(env, tty, monkeypatch):
    from fpgaprof import report
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    stream = _Tty()
    if not tty:
        stream.isatty = lambda: False
    bar = report.Progress(2, stream=stream)
    bar.stage("a")
    bar.stage("b")
    bar.done()
    assert stream.text == ""


@pytest.mark.parametrize("name", ["timeline.json", "fpgaprof.xplane.pb", "kernels.parquet"])
def test_a_killed_writers_temp_file_does_not_pass_for_an_output(tmp_path, name):
    """A writer killed with SIGKILL leaves its temp file; readers that take every *.json (HTA:
    hidden files too), *.xplane.pb (XProf) or *.parquet of a folder must not take it for an
    output, so its name does not end like the target's."""
    import signal
    import subprocess
    import sys
    code = (
        "import os, signal, sys\n"
        "from fpgaprof.base.atomic import open_atomic_binary\n"
        "with open_atomic_binary(sys.argv[1]) as f:\n"
        "    f.write(b'{\"traceEvents\": [')\n"
        "    f.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / name)], timeout=120)
    assert r.returncode == -signal.SIGKILL
    left = os.listdir(tmp_path)
    assert len(left) == 1 and left[0].startswith(".tmp-")  # nothing under the target's name
    for suffix in (".json", ".xplane.pb", ".parquet", ".gz"):
        assert not left[0].endswith(suffix), left
