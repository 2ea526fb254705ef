"""GPU joules beside the card's in the FPGA rankings, end to end without a GPU: the libcupti
test double (scenario "ranks") and the NVML test double (tests/fake_nvml) through capture ->
the C++ energy analysis -> the op and region rankings -> fpga_candidates(), summary.json,
report.html and the text report. Every expected number is worked out by hand below.

The curve (FAKE_NVML_POWER_W="60,100:300,500:60", T0 = the fake NVML's first call): 300 W from
T0 + 100 ms to T0 + 500 ms. A module jit_step (program 5, the fake's XlaModule ranges) of two
loop fusions over f32[1024]: fusion.1 = p x p, fusion.2 = fusion.1 + fusion.1, each 1024 FLOP
and 4096 + 4096 bytes per execution. With B the fake CUPTI's time base, fusion.1 runs at
[B + 150, B + 190) ms and fusion.2 at [B + 190, B + 230) ms, launched inside the region "step"
(T0 + 120 ms to T0 + 300 ms): all inside the 300 W plateau.

The card (from alveo-u55c, every constant the energy verdict depends on given exactly): one
memory channel of 8.192 GB/s driven whole at full efficiency (8192 B: 1 us), fp32 at
1.024 TFLOP/s (1024 FLOP: 1 ns), 0.1 s per launch, 50 W loaded (25-100 W).
"""

from __future__ import annotations

import json
import pathlib

import pytest
from _fake_cupti import need_fake_nvml, run_traced

CURVE = "60,100:300,500:60"
MS = 1_000_000
VERDICTS = {"gains", "wins only on energy", "loses", "uncertain", "unknown: not estimated",
            "unknown: no GPU energy", "unknown: no card energy"}

MODULE = """HloModule jit_step, entry_computation_layout={(f32[1024]{0})->f32[1024]{0}}

%fused_computation.1 (param_0.1: f32[1024]) -> f32[1024] {
  %param_0.1 = f32[1024]{0} parameter(0)
  ROOT %multiply.1 = f32[1024]{0} multiply(f32[1024]{0} %param_0.1, f32[1024]{0} %param_0.1)
}

%fused_computation.2 (param_0.2: f32[1024]) -> f32[1024] {
  %param_0.2 = f32[1024]{0} parameter(0)
  ROOT %add.2 = f32[1024]{0} add(f32[1024]{0} %param_0.2, f32[1024]{0} %param_0.2)
}

ENTRY %main (p: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0} parameter(0)
  %fusion.1 = f32[1024]{0} fusion(f32[1024]{0} %p), kind=kLoop, calls=%fused_computation.1
  ROOT %fusion.2 = f32[1024]{0} fusion(f32[1024]{0} %fusion.1), kind=kLoop, calls=%fused_computation.2
}
"""

CARD = {
    "base": "alveo-u55c",
    "name": "energy-test-card",
    "memory_channels": 1,
    "memory_channel_bytes_per_s": 8.192e9,
    "channel_share": 1.0,
    "stream_efficiency": 1.0,
    "fp32_flops_per_s": 1.024e12,
    "call_latency_s": 0.1,
    "loaded_w": 50.0,
    "loaded_w_low": 25.0,
    "loaded_w_high": 100.0,
}

# The traced script's start: a trace whose HLO dump holds MODULE, and t0, the fake NVML's time
# base (its curve starts there), taken once the sampling thread has started it.
PRELUDE = """
import time
nvml = ctypes.CDLL(os.environ["FPGAPROF_NVML_LIBRARY"])
nvml.fake_nvml_base_ns.restype = ctypes.c_uint64
_fake.fake_cupti_kernel.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_char_p,
                                    ctypes.c_uint64, ctypes.c_uint64]
dump = os.environ["FPGAPROF_HLO_DUMP_DIR"]
MS = 1_000_000
def until(t0, ms):
    while time.time_ns() < t0 + ms * MS:
        time.sleep(0.001)
with fpgaprof.trace() as prof:
    with open(os.path.join(dump, "module_0005.jit_step.sm_90_gpu_after_optimizations.txt"),
              "w") as f:
        f.write(MODULE)
    while nvml.fake_nvml_base_ns() == 0:
        time.sleep(0.001)
    t0 = nvml.fake_nvml_base_ns()
    emit()
"""

TRACED = PRELUDE + """
    until(t0, 120)
    with fpgaprof.region("step"):
        _fake.fake_cupti_kernel(0, b"loop_fusion_1", b"fusion.1", 150 * MS, 190 * MS)
        _fake.fake_cupti_kernel(0, b"loop_fusion_2", b"fusion.2", 190 * MS, 230 * MS)
        until(t0, 300)
    until(t0, 600)
from fpgaprof import report as _report
ops = [dict(r) for r in prof.fpga_candidates(CARD)]
regions = [dict(r) for r in prof.fpga_candidates(CARD, by="region")]
text = str(prof.fpga_candidates(CARD))
paths = _report.write_all(prof, OUT)
default_card = [dict(r) for r in prof.fpga_candidates()]
done({"t0": t0, "ops": ops, "regions": regions, "text": text, "default_card": default_card,
      "region_windows": [(r.start_ns, r.end_ns) for r in prof.regions],
      "kernels": [(k.start_ns, k.end_ns) for k in prof.kernels],
      "paths": {k: str(v) for k, v in paths.items()}})
"""


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    nvml = need_fake_nvml()
    d = tmp_path_factory.mktemp("energy_verdict")
    dump = d / "hlo"
    dump.mkdir()
    code = (
        f"MODULE = {MODULE!r}\nCARD = {CARD!r}\nOUT = {str(d / 'out')!r}\n" + TRACED
    )
    return run_traced(
        code,
        scenario="ranks",
        extra_env={
            "FPGAPROF_NVML_LIBRARY": nvml,
            "FAKE_NVML_POWER_W": CURVE,
            "FPGAPROF_HLO_DUMP_DIR": str(dump),
            "XLA_FLAGS": "",
        },
    )


def _by(rows, key, value):
    (row,) = [r for r in rows if r[key] == value]
    return row


def test_op_gpu_joules_ratio_and_verdict(traced):
    t0 = traced["t0"]
    assert all(t0 + 100 * MS < s and e < t0 + 500 * MS for s, e in traced["kernels"]), (
        "the kernels left the 300 W plateau"
    )
    op = _by(traced["ops"], "op", "fusion.1")
    # GPU: 40 ms alone at 300 W = 12 J, all of it sampled (an attribution: the board's joules).
    assert op["gpu_energy_j"] == pytest.approx(12.0, abs=0.05)
    assert op["gpu_energy_coverage"] == pytest.approx(1.0)
    # Card: one execution, max(1 ns compute, 8192 B / 8.192 GB/s = 1 us) + 0.1 s launch
    # = 0.100001 s; x 25, 50, 100 W = 2.500025, 5.00005, 10.0001 J.
    assert op["card_energy_j"] == pytest.approx(5.00005, rel=1e-9)
    # Ratio = card J / 12 J: 0.208335, 0.416671, 0.833342.
    assert op["energy_ratio_low"] == pytest.approx(2.500025 / 12.0, rel=5e-3)
    assert op["energy_ratio"] == pytest.approx(5.00005 / 12.0, rel=5e-3)
    assert op["energy_ratio_high"] == pytest.approx(10.0001 / 12.0, rel=5e-3)
    # 40 ms on the GPU against more than 0.1 s on the card: slower at every end; less energy
    # across the ratio's range.
    assert op["op_speedup_high"] < 1
    assert op["energy_verdict"] == "wins only on energy"
    # Elementwise: every byte is compulsory, the restructured design is the same.
    assert op["restructured_energy_ratio_high"] == pytest.approx(10.0001 / 12.0, rel=5e-3)
    assert op["restructured_energy_verdict"] == "wins only on energy"


def test_region_gpu_joules_are_its_kernels_not_its_window(traced):
    t0 = traced["t0"]
    ((start, end),) = traced["region_windows"]
    assert t0 + 100 * MS < start and end < t0 + 500 * MS, "the region left the plateau"
    reg = _by(traced["regions"], "region", "step")
    # The region's row compares the same work as its ops: fusion.1 and fusion.2, 40 ms each at
    # 300 W = 24 J, not the window's 300 W x ~180 ms = ~54 J (idle gaps and host work the card
    # would not spend), which energy_report(by="region") keeps as the measurement.
    window_j = 300.0 * (end - start) / 1e9
    assert window_j > 50
    gpu_j = 300.0 * 0.080
    assert reg["gpu_energy_j"] == pytest.approx(gpu_j, abs=0.05)
    assert reg["gpu_energy_coverage"] == pytest.approx(1.0)
    # Card: ops 2 x 1 us + 2 module calls (XlaModule ranges) x 0.1 s = 0.200002 s; x 25, 50,
    # 100 W = 5.00005, 10.0001, 20.0002 J; over gpu_j: 0.208, 0.417, 0.833.
    assert reg["card_energy_j"] == pytest.approx(10.0001, rel=1e-9)
    assert reg["energy_ratio_low"] == pytest.approx(5.00005 / gpu_j, rel=5e-3)
    assert reg["energy_ratio"] == pytest.approx(10.0001 / gpu_j, rel=5e-3)
    assert reg["energy_ratio_high"] == pytest.approx(20.0002 / gpu_j, rel=5e-3)
    assert reg["region_speedup_high"] < 1  # 80 ms on the GPU against 0.2 s
    assert reg["energy_verdict"] == "wins only on energy"


def test_every_view_shows_the_energy_verdict(traced):
    assert "energy_verdict" in traced["text"] and "wins only on energy" in traced["text"]
    # The report (default card): summary.json and report.html carry the rows' GPU joules,
    # ratios and verdicts as the API gives them.
    api = _by(traced["default_card"], "op", "fusion.1")
    assert api["gpu_energy_j"] == pytest.approx(12.0, abs=0.05)
    with open(traced["paths"]["summary"], encoding="utf-8") as f:
        s = json.load(f)
    cand = _by(s["candidates"]["items"], "op", "fusion.1")
    for k in ("gpu_energy_j", "energy_ratio", "energy_ratio_low", "energy_ratio_high",
              "energy_verdict", "restructured_energy_verdict"):
        assert cand[k] == api[k], k
    assert cand["energy_verdict"] in VERDICTS
    # The answer: the best card's row gives its verdict in time and energy, and every GPU
    # figure it shows is the measured one (a ratio only where a card energy exists).
    (item,) = [i for i in s["answer"]["items"] if i.get("region") == "step"]
    assert item["energy_verdict"] in VERDICTS and item["energy_verdict"] != "unknown: no GPU energy"
    # ... and what its energy ratios rest on: the fake NVML's counter moves with its curve
    rests = s["answer"]["rests_on"]
    assert rests["gpu_energy"] == "counter"
    assert "GPU energy from NVML's energy counter, card energy from each card's loaded watts" \
        in rests["text"]
    with open(traced["paths"]["html"], encoding="utf-8") as f:
        doc = f.read()
    assert "energy_verdict" in doc and cand["energy_verdict"] in doc
    assert "energy verdict, card / GPU energy" in doc and item["energy_verdict"] in doc


def test_no_nvml_means_unknown_never_zero():
    got = run_traced(
        """
        with fpgaprof.trace(power_sample_ms=0) as prof:
            emit()
            _fake.fake_cupti_kernel.argtypes = [ctypes.c_uint32, ctypes.c_char_p,
                                                ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64]
            _fake.fake_cupti_kernel(0, b"loop_fusion_1", b"fusion.1", 1_000_000, 2_000_000)
        done({"rows": [dict(r) for r in prof.fpga_candidates("alveo-u55c")]})
        """,
        scenario="ranks",
    )
    (row,) = got["rows"]
    assert row["gpu_energy_j"] is None and row["energy_ratio"] is None
    assert row["energy_ratio_low"] is None and row["restructured_energy_ratio_high"] is None
    # Without HLO the op has no cost: not estimated comes first.
    assert row["energy_verdict"] == "unknown: not estimated"


def test_summary_and_report_carry_energy_beside_time(traced):
    # summary.json: the energy section (the trace's total, its split, one row per GPU), each
    # region's measured joules beside its wall time and each op's attributed joules beside its
    # time; report.html renders them. The 300 W plateau (T0 + 100 to 500 ms) and 60 W elsewhere.
    with open(traced["paths"]["summary"], encoding="utf-8") as f:
        s = json.load(f)
    e = s["energy"]
    assert e["available"] is True
    (dev,) = e["devices"]
    assert dev["device_id"] == 0 and dev["peak_w"] == 300 and dev["has_counter"] is True
    assert e["total_j"] == pytest.approx(dev["joules"])
    # fusion.1 and fusion.2 take 12 J each of the total, the rest is idle time.
    assert e["idle_j"] == pytest.approx(e["total_j"] - 24.0, abs=0.1)
    assert e["unattributed_j"] == 0 and e["copies_j"] == 0
    ops = {r["op"]: r for r in s["ops"]["items"]}
    assert ops["fusion.1"]["gpu_energy_j"] == pytest.approx(12.0, abs=0.05)
    assert ops["fusion.1"]["total_s"] == pytest.approx(0.040)
    ((start, end),) = traced["region_windows"]
    (step,) = [r for r in s["regions"]["items"] if r["path"] == "step"]
    assert step["gpu_energy_j"] == pytest.approx(300.0 * (end - start) / 1e9, abs=0.05)
    assert step["gpu_energy_coverage"] == pytest.approx(1.0)
    jsonschema = pytest.importorskip("jsonschema")
    with open(pathlib.Path(__file__).resolve().parents[2] / "docs" / "summary.schema.json",
              encoding="utf-8") as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(s)
    with open(traced["paths"]["html"], encoding="utf-8") as f:
        doc = f.read()
    assert 'id="sec-energy"' in doc and "GPU energy (attributed)" in doc
    assert ">12 J<" in doc and "energy counter" in doc
