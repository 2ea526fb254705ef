"""A region's energy ratio when its kept kernels and the kernels the card would take are sampled
in different shares (docs/energy.md): through the CUPTI and NVML test doubles; the expected
numbers are worked out by hand below."""

from __future__ import annotations

import pytest
from _fake_cupti import counter_joules, need_fake_nvml, run_traced
from test_energy_verdict_fake_nvml import CARD, MODULE, MS, PRELUDE

TRACED = PRELUDE + """
    until(t0, 20)
    with fpgaprof.region("step"):
        for name, op, a, b in KERNELS:
            _fake.fake_cupti_kernel(0, name, op, a * MS, b * MS)
    until(t0, END_MS)
done({"regions": [dict(r) for r in prof.fpga_candidates(CARD, by="region")],
      "ops": [dict(r) for r in prof.fpga_candidates(CARD)],
      "devices": [dict(r) for r in prof.energy_report(by="device")],
      "kernels": [(k.start_ns - t0, k.end_ns - t0) for k in prof.kernels],
      "readings": [(int(t) - t0, int(e)) for t, e in zip(prof.power_samples.columns()["time_ns"],
                                                        prof.power_samples.columns()["energy_mj"])]})
"""



def _run(tmp_path, kernels, end_ms, env):
    dump = tmp_path / "hlo"
    dump.mkdir()
    code = (f"MODULE = {MODULE!r}\nCARD = {CARD!r}\nKERNELS = {kernels!r}\nEND_MS = {end_ms}\n"
            + TRACED)
    return run_traced(code, scenario="ranks", extra_env={
        "FPGAPROF_NVML_LIBRARY": need_fake_nvml(), "FPGAPROF_HLO_DUMP_DIR": str(dump),
        "XLA_FLAGS": "", **env})


def test_region_ratio_uses_the_sampled_share_of_the_cards_work(tmp_path):
    # 200 W throughout; the counter steps every 100 ms, so nothing after T0 + 300 ms is sampled
    # in a trace that ends at T0 + 380 ms. fusion.1 [150, 190) ms (all sampled, 8 J) goes to
    # the card; a kernel without an HLO op [305, 345) ms stays on the GPU, unsampled (0 J).
    got = _run(tmp_path, [(b"loop_fusion_1", b"fusion.1", 150, 190),
                          (b"custom_kernel", b"", 305, 345)], 380,
               {"FAKE_NVML_POWER_W": "200", "FAKE_NVML_ENERGY_UPDATE_MS": "100"})
    (reg,) = got["regions"]
    assert reg["kept_gpu_s"] == pytest.approx(0.040)
    (a, b), _ = sorted(got["kernels"])
    sampled = counter_joules(got["readings"], a / MS, b / MS)
    assert sampled == pytest.approx(8.0, rel=0.1)  # 200 W x 40 ms, give or take the knots' lag
    assert reg["gpu_energy_j"] == pytest.approx(sampled, rel=1e-4)
    assert reg["kept_gpu_energy_j"] == pytest.approx(0.0, abs=1e-9)
    # All of the card's work was sampled: its joules against the GPU's 8 J as they are, as
    # fusion.1's own row does, not halved by the kept kernel's unsampled time.
    for end in ("_low", "", "_high"):
        card = reg["card_energy" + (end + "_j" if end else "_j")]
        assert reg["energy_ratio" + end] == pytest.approx(card / reg["gpu_energy_j"], rel=1e-6)


def test_region_ratio_unknown_when_the_cards_work_was_not_sampled(tmp_path):
    # The other way round: the kept kernel [150, 190) ms sampled (8 J), fusion.1 [305, 345) not.
    got = _run(tmp_path, [(b"custom_kernel", b"", 150, 190),
                          (b"loop_fusion_1", b"fusion.1", 305, 345)], 380,
               {"FAKE_NVML_POWER_W": "200", "FAKE_NVML_ENERGY_UPDATE_MS": "100"})
    (op,) = [r for r in got["ops"] if r["op"] == "fusion.1"]
    assert op["energy_verdict"] == "unknown: no GPU energy"
    (reg,) = got["regions"]
    (a, b), _ = sorted(got["kernels"])
    sampled = counter_joules(got["readings"], a / MS, b / MS)
    assert sampled == pytest.approx(8.0, rel=0.1)  # 200 W x 40 ms, give or take the knots' lag
    assert reg["kept_gpu_energy_j"] == pytest.approx(sampled, rel=1e-4)
    assert reg["energy_ratio"] is None
    assert reg["energy_verdict"] == "unknown: no GPU energy"
