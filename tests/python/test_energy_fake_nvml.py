"""GPU energy end to end without a GPU: the libcupti test double (scenario "ranks": kernels at
chosen times) and the NVML test double (tests/fake_nvml: a scripted power curve) through
capture -> power samples -> the C++ energy analysis -> prof.energy_report(), and through a saved
trace. Every expected number is worked out from the curve by hand.

The curve (FAKE_NVML_POWER_W="60,100:300,500:60"), with T0 the fake NVML's nvmlInit_v2 (on the
sampling thread, just after the trace starts): 60 W before T0 + 100 ms, 300 W until T0 + 500 ms,
60 W after. The energy counter is its integral (whole mJ). With B the fake CUPTI's time base
(emit(), just after T0), kernels fusion.1 at [B + 150, B + 190) ms and fusion.2 at
[B + 190, B + 230) ms run inside the 300 W plateau; the region "step" runs from T0 + 120 ms to T0 + 300 ms, also inside it; the trace
ends after T0 + 900 ms.
"""

from __future__ import annotations

import pytest
from _fake_cupti import need_fake_nvml, run_traced

CURVE = "60,100:300,500:60"
MS = 1_000_000


def curve_joules(a_ns: int, b_ns: int, t0: int) -> float:
    """Integral of the curve over [a, b] (ns on the trace clock), by its three pieces."""
    pieces = [(-(10**18), 100 * MS, 60.0), (100 * MS, 500 * MS, 300.0), (500 * MS, 10**18, 60.0)]
    j = 0.0
    for lo, hi, w in pieces:
        x, y = max(a_ns - t0, lo), min(b_ns - t0, hi)
        if y > x:
            j += w * (y - x) / 1e9
    return j


TRACED = """
import time
nvml = ctypes.CDLL(os.environ["FPGAPROF_NVML_LIBRARY"])
nvml.fake_nvml_base_ns.restype = ctypes.c_uint64
_fake.fake_cupti_kernel.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_char_p,
                                    ctypes.c_uint64, ctypes.c_uint64]
MS = 1_000_000
def until(t0, ms):
    while time.time_ns() < t0 + ms * MS:
        time.sleep(0.001)
with fpgaprof.trace() as prof:
    while nvml.fake_nvml_base_ns() == 0:  # the sampling thread initializes NVML on its own
        time.sleep(0.001)
    t0 = nvml.fake_nvml_base_ns()
    emit()
    b = time.time_ns()
    _fake.fake_cupti_kernel(0, b"loop_fusion_1", b"fusion.1", 150 * MS, 190 * MS)
    _fake.fake_cupti_kernel(0, b"loop_fusion_2", b"fusion.2", 190 * MS, 230 * MS)
    until(t0, 120)
    with fpgaprof.region("step"):
        until(t0, 300)
    until(t0, 900)
prof.save(SAVE)
back = fpgaprof.load(SAVE)
def report(p):
    return {by: [dict(r) for r in p.energy_report(by=by)] for by in ("region", "op", "device")}
meta = prof.energy_report().meta
kern = [(k.start_ns, k.end_ns) for k in prof.kernels]
reg = [(r.start_ns, r.end_ns) for r in prof.regions]
samples = prof.power_samples.columns()
done({"t0": t0, "b": b, "kernels": kern, "regions": reg, "report": report(prof),
      "back": report(back), "meta": meta, "warnings": prof.warnings,
      "sample_times": [int(x) for x in samples["time_ns"]],
      "devices": sorted(set(int(x) for x in samples["device_id"])),
      "power_w": sorted(set(int(x) // 1000 for x in samples["power_mw"])),
      "trace_meta": {k: prof.meta[k]
                     for k in ("power_sample_period_ns", "energy_update_period_ns")}})
"""


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    nvml = need_fake_nvml()
    save = str(tmp_path_factory.mktemp("energy") / "energy.fpgaprof")
    return run_traced(
        TRACED.replace("SAVE", repr(save)),
        scenario="ranks",
        extra_env={"FPGAPROF_NVML_LIBRARY": nvml, "FAKE_NVML_POWER_W": CURVE},
    )


def test_samples_cover_the_trace_at_the_requested_period(traced):
    t0 = traced["t0"]
    times = traced["sample_times"]
    assert traced["devices"] == [0]
    assert traced["trace_meta"]["power_sample_period_ns"] == MS
    # The counter changes at every reading (the fake has no update period of its own): the
    # measured update period is about the sampling period, never 0 or a second.
    assert 0 < traced["trace_meta"]["energy_update_period_ns"] < 20 * MS
    assert times[0] - t0 < 20 * MS and times[-1] - t0 > 900 * MS
    assert traced["power_w"] == [60, 300]
    assert not [w for w in traced["warnings"] if "GPU energy" in w]


def test_region_energy_is_300_w_times_its_length(traced):
    t0 = traced["t0"]
    ((start, end),) = traced["regions"]
    # The premise of the hand-worked number: the region lies inside the 300 W plateau.
    assert t0 + 100 * MS < start and end < t0 + 500 * MS, (
        "the region left the plateau (a slow host?)"
    )
    (row,) = traced["report"]["region"]
    assert row["region"] == "step" and row["device_id"] == 0
    assert row["joules"] == pytest.approx(300 * (end - start) / 1e9, abs=0.01)
    assert row["mean_w"] == pytest.approx(300, abs=0.5)
    assert row["peak_w"] == 300
    assert row["from_counter"] is True


def test_ops_share_the_busy_energy(traced):
    t0, b = traced["t0"], traced["b"]
    (k1, k2) = sorted(traced["kernels"])
    assert t0 + 100 * MS < k1[0] and k2[1] < t0 + 500 * MS, "the kernels left the plateau"
    ops = {r["hlo_op"]: r for r in traced["report"]["op"]}
    # Each kernel runs 40 ms alone at 300 W: 12 J each, whatever the readings' alignment
    # (power is constant across every interval a kernel touches).
    assert ops["fusion.1"]["joules"] == pytest.approx(12.0, abs=0.05)
    assert ops["fusion.2"]["joules"] == pytest.approx(12.0, abs=0.05)
    assert ops["fusion.1"]["busy_ns"] == 40 * MS
    assert all(r["attribution"] for r in traced["report"]["op"])
    # The rest of the trace is idle; the rows add up to the device's total.
    total = traced["meta"]["total_joules"]
    assert sum(r["joules"] for r in traced["report"]["op"]) == pytest.approx(total, rel=1e-9)
    assert b >= t0


def test_device_total_and_idle_power(traced):
    t0 = traced["t0"]
    times = traced["sample_times"]
    (dev,) = traced["report"]["device"]
    assert dev["device_id"] == 0 and dev["has_counter"] and dev["backwards_intervals"] == 0
    # The counter's integral between the first and the last reading (whole mJ per reading).
    assert dev["joules"] == pytest.approx(curve_joules(times[0], times[-1], t0), abs=0.01)
    assert dev["peak_w"] == 300
    # Idle: ~100 ms at 60 W before the plateau and ~400 ms after it, against ~320 ms of the
    # plateau outside the kernels: the time-weighted median is 60 W.
    assert dev["idle_w"] == 60


def test_a_saved_trace_gives_the_same_energy(traced):
    assert traced["back"] == traced["report"]


def test_energy_report_rejects_an_unknown_grouping():
    got = run_traced(
        """
        with fpgaprof.trace(power_sample_ms=0) as prof:
            emit()
        try:
            prof.energy_report(by="kernel")
            err = None
        except fpgaprof.InvalidArgumentError as e:
            err = str(e)
        t = prof.energy_report(by="device")
        done({"err": err, "rows": len(t), "note": t.empty_note, "measured": t.meta["measured"],
              "samples": len(prof.power_samples)})
    """,
        scenario="ranks",
    )
    assert "by='kernel'" in got["err"]
    assert got["rows"] == 0 and got["measured"] is False and got["samples"] == 0
    assert "power_sample_ms=0" in got["note"]


COUNTER_STEPS = """
import time
with fpgaprof.trace() as prof:
    emit()
    with fpgaprof.region("solve"):
        time.sleep(SECONDS)
rows = [dict(r) for r in prof.energy_report(by="region")]
dev = [dict(r) for r in prof.energy_report(by="device")]
done({"rows": rows, "devices": dev, "text": str(prof.energy_report(by="region")),
      "summary": prof.summary()})
"""


def _counter_run(update_ms: int, seconds: float) -> dict:
    return run_traced(
        COUNTER_STEPS.replace("SECONDS", repr(seconds)),
        scenario="ranks",
        extra_env={"FPGAPROF_NVML_LIBRARY": need_fake_nvml(), "FAKE_NVML_POWER_W": "200",
                   "FAKE_NVML_ENERGY_UPDATE_MS": str(update_ms)},
    )


def test_a_region_sampled_for_part_of_its_length_says_so():
    # 200 W throughout; the counter steps every 100 ms, so the curve ends at its last step and a
    # region that ends with the trace is sampled for less than its length: its joules are
    # 200 W x the sampled part (not the whole), and the table shows that part and says why.
    out = _counter_run(100, 0.35)
    (row,) = out["rows"]
    assert row["coverage_ns"] < row["duration_ns"]
    assert row["joules"] == pytest.approx(200 * row["coverage_ns"] / 1e9, rel=0.02)
    assert "sampled" in out["text"] and "rows sampled for less than their duration" in out["text"]


def test_a_counter_that_never_steps_gives_way_to_the_power_readings():
    # The counter steps every 60 s: in a 0.3 s trace it never changes. The joules come from the
    # 200 W readings (200 W x the region's 0.3 s = 60 J), not 0 J from the counter, with a
    # warning naming the cause.
    out = _counter_run(60_000, 0.3)
    (row,) = out["rows"]
    assert row["joules"] == pytest.approx(200 * row["coverage_ns"] / 1e9, rel=0.02)
    assert row["joules"] > 50 and row["from_counter"] is False
    (dev,) = out["devices"]
    assert dev["flat_counter"] is True and dev["has_counter"] is True
    assert "its energy counter did not change" in out["summary"]
    assert "did not change while read" in out["text"]


UNSAMPLED_GPU = """
import json, time
from fpgaprof import report as _report
_fake.fake_cupti_device_work.argtypes = [ctypes.c_uint32, ctypes.c_uint64]
with fpgaprof.trace() as prof:
    emit()
    time.sleep(0.05)  # after NVML's first readings
    with fpgaprof.region("on_gpu1"):
        _fake.fake_cupti_device_work(1, 0)
        time.sleep(0.1)
    time.sleep(0.05)  # the counter's last step comes after the region
paths = _report.write_all(prof, OUT)
with open(paths["summary"], encoding="utf-8") as f:
    s = json.load(f)
done({"devices": sorted(int(d.id) for d in prof.devices),
      "rows": [dict(r) for r in prof.energy_report(by="region")],
      "text": str(prof.energy_report(by="region")),
      "device_text": str(prof.energy_report(by="device")),
      "op_text": str(prof.energy_report(by="op")),
      "summary": [r for r in s["regions"]["items"] if r["path"] == "on_gpu1"],
      "warnings": [w for w in prof.warnings if "GPU energy" in w]})
"""


@pytest.fixture(scope="module")
def unsampled_gpu(tmp_path_factory):
    # Two traced GPUs (the "devices" scenario's DEVICE records 0 and 1); NVML lists only GPU 0.
    # The region's work runs on GPU 1, whose energy nothing measured.
    out = str(tmp_path_factory.mktemp("unsampled") / "out")
    return run_traced(
        UNSAMPLED_GPU.replace("OUT", repr(out)),
        scenario="devices",
        extra_env={"FPGAPROF_NVML_LIBRARY": need_fake_nvml(), "FAKE_NVML_POWER_W": "100",
                   "FAKE_NVML_DEVICES": "0"},
    )


def test_a_traced_gpu_without_samples_lowers_the_region_coverage(unsampled_gpu):
    assert unsampled_gpu["devices"] == [0, 1]
    (row,) = unsampled_gpu["rows"]  # GPU 0's window only: GPU 1 has no samples
    assert row["device_id"] == 0 and row["coverage_ns"] == row["duration_ns"]
    # summary.json: the joules are GPU 0's; the windows on the two traced GPUs are half sampled,
    # not "1.0", which would present GPU 0's 100 W x 0.1 s as the region's whole energy.
    (item,) = unsampled_gpu["summary"]
    assert item["gpu_energy_j"] == pytest.approx(row["joules"])
    assert item["gpu_energy_coverage"] == pytest.approx(0.5)
    assert item["gpu_energy_coverage"] == pytest.approx(row["coverage_ns"] / (2 * row["duration_ns"]))
    assert "GPU 1 traced but not sampled" in unsampled_gpu["text"]
    # The per-GPU and per-op tables' total is GPU 0's alone: they say GPU 1 is left out of it.
    for by in ("device_text", "op_text"):
        assert "GPU 1 traced but not sampled" in unsampled_gpu[by]
        assert "the rows and the total leave its energy out" in unsampled_gpu[by]


def test_a_traced_gpu_that_nvml_does_not_list_is_warned_about(unsampled_gpu):
    # One warning naming the cause (the issue: energy faults are said, never silent).
    (w,) = unsampled_gpu["warnings"]
    assert "not among NVML's GPUs" in w and "GPU 1" in w


def test_no_permission_for_either_read_says_no_energy():
    # Both NVML reads refused (NVML_ERROR_NO_PERMISSION): no samples at all, so the one warning
    # must not say the energy "is the integral of its power samples" (there are none).
    out = run_traced(
        """
        import time
        with fpgaprof.trace() as prof:
            emit()
            time.sleep(0.05)
        done({"samples": len(prof.power_samples),
              "warnings": [w for w in prof.warnings if "GPU energy" in w]})
        """,
        scenario="ranks",
        extra_env={"FPGAPROF_NVML_LIBRARY": need_fake_nvml(), "FAKE_NVML_SCENARIO": "no_permission"},
    )
    assert out["samples"] == 0
    (w,) = out["warnings"]
    assert "NVML_ERROR_NO_PERMISSION" in w and "no energy is measured" in w
    assert "integral of its power samples" not in w


def test_a_region_after_the_sampler_stopped_reading_power_has_no_peak():
    # Every power read from T0 + 40 ms on fails: after 10 in a row the sampler stops reading
    # power, the energy counter goes on (200 W). The region (0.3 s of sleep, well after) has
    # the counter's joules and mean, and no peak (unknown: null, "–" and said under the table)
    # rather than the last reading before the failures held for the rest of the trace.
    got = run_traced(
        COUNTER_STEPS.replace("SECONDS", "0.3"),
        scenario="ranks",
        extra_env={"FPGAPROF_NVML_LIBRARY": need_fake_nvml(), "FAKE_NVML_POWER_W": "200",
                   "FAKE_NVML_SCENARIO": "transient", "FAKE_NVML_FAIL_CALL": "power",
                   "FAKE_NVML_FAIL_MS": "40", "FAKE_NVML_FAIL_READS": "100000"},
    )
    (row,) = got["rows"]
    assert row["coverage_ns"] > 0 and row["mean_w"] == pytest.approx(200, rel=0.05)
    assert row["peak_w"] is None
    assert "peak W unknown (–) in 1 sampled rows" in got["text"]
