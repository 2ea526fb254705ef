"""summary.json: numbers worked out by hand from the records in _reports_fixtures.py, the
JSON Schema, the MBIRJAX timing fields, and the not-available paths."""
import json
import os
import pathlib

import _reports_fixtures as F
import pytest
from fpgaprof.report import _data as D
from fpgaprof.report import summary as S

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


def test_union_of_intervals():
    import numpy as np
    # [0,10) ∪ [5,12) ∪ [20,21) ∪ [11,15) = [0,15) + [20,21) = 16
    assert D.union_ns(np.array([0, 5, 20, 11]), np.array([10, 12, 21, 15])) == 16
    # contained interval, zero length, reversed end (clamped to start)
    assert D.union_ns(np.array([0, 2, 30, 40]), np.array([10, 3, 30, 35])) == 10
    assert D.union_ns(np.array([], dtype=np.int64), np.array([], dtype=np.int64)) == 0


def test_totals_by_hand(schema):
    s = S.collect(F.SyntheticProfile())
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
    s = S.collect(F.SyntheticProfile())
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
    assert {(r["region"], r["direction"]) for r in s["transfers"]["by_region"]} == \
        {("forward_project/64", "HtoD"), ("forward_project/64", "DtoH")}


def test_memory_timeline_by_hand():
    m = S.collect(F.SyntheticProfile())["memory"]
    # in use: 1 MB @0.5, 3 MB @1, 2 MB @2, 6 MB @3, 4 MB @4, 0 @5
    assert m["peak_bytes"] == 6_000_000
    assert m["peak_time_s"] == pytest.approx(3e-3)
    assert m["end_bytes"] == 0
    assert [v for _, v in m["timeline"]] == [1_000_000, 3_000_000, 2_000_000, 6_000_000,
                                              4_000_000, 0]


def test_regions_and_measurements_by_hand():
    s = S.collect(F.SyntheticProfile())
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
    m = S.measurements_from_regions([{"index": 0, "name": name, "start_ns": 10, "end_ns": 2010}])
    assert m == [{"operation": op, "volume_size": size, "run": 0, "time": 2e-6}]


def test_given_environment_and_measurements_win(schema):
    env = {"backend": "gpu", "devices": ["cuda:0"], "jax_version": "0.4.35",
           "mbirjax_version": "0.6.17.1"}
    meas = [{"operation": "forward_project", "volume_size": 32, "run": 2, "time": 0.25}]
    s = S.collect(F.SyntheticProfile(), environment=env, measurements=meas)
    validate(s, schema)
    assert s["environment"] == env
    assert s["measurements"] == meas


def test_environment_json_beside_trace(tmp_path):
    env = {"backend": "cpu", "devices": ["TFRT_CPU_0"], "jax_version": "0.10.2",
           "mbirjax_version": None}
    (tmp_path / S.ENVIRONMENT_FILE).write_text(json.dumps(env))
    s = S.collect(F.SyntheticProfile(), trace_path=str(tmp_path / "trace.fpgaprof"))
    assert s["environment"] == env
    assert s["trace"]["path"].endswith("trace.fpgaprof")


def test_unavailable_sections_say_why(schema):
    s = S.collect(F.SyntheticProfile(with_gpu=False))
    validate(s, schema)
    assert s["kernels"]["available"] is False and "no kernels" in s["kernels"]["reason"]
    assert s["memory"]["available"] is False
    assert s["ops"]["available"] is False and "prof.ops" in s["ops"]["reason"]
    assert s["roofline"]["available"] is False and s["roofline"]["reason"]
    assert s["candidates"]["available"] is False and "fpga_candidates" in \
        s["candidates"]["reason"]
    assert s["device"] is None
    assert any("no GPU data" in w and "install the NVIDIA driver" in w for w in s["warnings"])
    assert s["totals"]["gpu_busy_s"] == 0.0
    # regions and measurements still come from the host side
    assert len(s["measurements"]) == 3


def test_warnings_are_collected():
    s = S.collect(F.SyntheticProfile())
    ws = s["warnings"]
    assert "user <script>alert(1)</script> warning" in ws
    assert any(w.startswith("3 CUPTI records were dropped") for w in ws)


def test_ops_and_roofline_from_ops(schema):
    s = S.collect(F.SyntheticProfile(with_ops=True))
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
        S.write_summary(p, S.collect(F.SyntheticProfile()))
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
        S.write_summary(p, S.collect(F.SyntheticProfile()))
    old = "old"
    assert p.read_text() == old  # the previous file is untouched
    assert [x for x in os.listdir(p.parent) if x.startswith(".tmp-")] == []


def test_nan_becomes_null():
    txt = S.dumps({"a": float("nan"), "b": [float("inf"), 1.5]})
    assert json.loads(txt) == {"a": None, "b": [None, 1.5]}


def test_region_gpu_time_includes_nested_regions():
    prof = F.SyntheticProfile()
    r = prof.regions.columns()
    # make back_project [7.5, 9.0] a child of a new outer region "outer" [7.0, 9.5]
    import numpy as np
    prof.regions = F.Table(
        name=np.append(r["name"], "outer").astype(object),
        start_ns=np.append(r["start_ns"], F.ms(7.0)).astype(np.uint64),
        end_ns=np.append(r["end_ns"], F.ms(9.5)).astype(np.uint64),
        thread_id=np.append(r["thread_id"], 101).astype(np.uint32),
        parent=np.array([F.NONE32, F.NONE32, 3, F.NONE32], dtype=np.uint32),
        depth=np.array([0, 0, 1, 0], dtype=np.uint16))
    k = prof.kernels.columns()
    # fusion_a #2 (0.5 ms) now launched in back_project
    k["region_index"] = np.array([0, 0, 2, 0], dtype=np.uint32)
    prof.kernels = F.Table(**k)
    items = {x["name"]: x for x in S.collect(prof)["regions"]["items"]}
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
    ws = S.collect(WithAttribution())["warnings"]
    assert "2 kernels could not be attributed to an HLO op (most time: gemm<float>, fusion_b)" \
        in ws
    ws = S.collect(F.SyntheticProfile())["warnings"]
    assert not any("attributed" in w for w in ws)


def test_saved_trace_without_environment_json_has_nulls(tmp_path):
    """Reporting a saved trace elsewhere must not pass off this process's jax as the traced
    program's."""
    s = S.collect(F.SyntheticProfile(), trace_path=str(tmp_path / "trace.fpgaprof"))
    assert s["environment"] == {"backend": None, "devices": [], "jax_version": None,
                                "mbirjax_version": None}
