"""Energy figures where nothing was measured, end to end through the CUPTI and NVML test doubles
(tests/fake_cupti, tests/fake_nvml): a figure must read as unknown (null in the results, "–"
with a reason under the tables), never as a measured 0 J / 0 W, and what is computed from it
(energy ratios, verdicts) must be unknown too. The module, the card and the traced prelude are
those of test_energy_verdict_fake_nvml.py; every expected number is worked out by hand below.
"""

from __future__ import annotations

import pytest
from _fake_cupti import counter_joules, need_fake_nvml, run_traced
from test_energy_verdict_fake_nvml import CARD, CURVE, MODULE, PRELUDE

MS = 1_000_000

REPORT = """
from fpgaprof import report as _report
paths = _report.write_all(prof, OUT)
with open(paths["summary"], encoding="utf-8") as f:
    s = json.load(f)
with open(paths["html"], encoding="utf-8") as f:
    html = f.read()
best = {}
for i in s["answer"]["items"]:
    if i.get("best_card"):
        for r in prof.fpga_candidates(i["best_card"], by="region"):
            if r["region"] == i["region"]:
                best[i["region"]] = dict(r)
done({"t0": t0, "summary": s, "html": html, "best": best,
      "samples": [(int(t) - t0, int(p)) for t, p in zip(prof.power_samples.columns()["time_ns"],
                                                       prof.power_samples.columns()["power_mw"])],
      "readings": [(int(t) - t0, int(e)) for t, e in zip(prof.power_samples.columns()["time_ns"],
                                                        prof.power_samples.columns()["energy_mj"])],
      "regions": [dict(r) for r in prof.fpga_candidates(CARD, by="region")],
      "windows": {by: [dict(r) for r in prof.energy_report(by=by)]
                  for by in ("region", "region_instance", "device")},
      "texts": {by: str(prof.energy_report(by=by)) for by in ("region", "device")},
      "summary_text": prof.summary(),
      "region_windows": [(r.start_ns - t0, r.end_ns - t0) for r in prof.regions],
      "kernels": [(k.start_ns - t0, k.end_ns - t0) for k in prof.kernels]})
"""


def _run(tmp_path, body: str, env: dict) -> dict:
    dump = tmp_path / "hlo"
    dump.mkdir()
    code = (
        f"import json\nMODULE = {MODULE!r}\nCARD = {CARD!r}\nOUT = {str(tmp_path / 'out')!r}\n"
        + PRELUDE
        + body
        + REPORT
    )
    return run_traced(
        code,
        scenario="ranks",
        extra_env={
            "FPGAPROF_NVML_LIBRARY": need_fake_nvml(),
            "FPGAPROF_HLO_DUMP_DIR": str(dump),
            "XLA_FLAGS": "",
            **env,
        },
    )


# A region wholly after the energy counter's last step: 200 W throughout, the counter steps
# every 100 ms (T0 + 100, 200, 300 ms) and the trace ends at T0 + 380 ms, so the sampled span
# ends at the step at T0 + 300 ms. "early" [20, 280) ms holds fusion.2 [150, 190) ms, sampled:
# 200 W x 40 ms = 8 J. "late" [320, 360) ms holds fusion.1 [325, 345) ms: none of it sampled.
# (The curve's knots are the readings that first saw a step, up to a sampling period or so after
# it, busier hosts later: the 20 J of a step spread over 100 ms +- that lag, so the sampled
# figures are checked to 3 %.)
UNSAMPLED = """
    until(t0, 20)
    with fpgaprof.region("early"):
        _fake.fake_cupti_kernel(0, b"loop_fusion_2", b"fusion.2", 150 * MS, 190 * MS)
        until(t0, 280)
    until(t0, 320)
    with fpgaprof.region("late"):
        _fake.fake_cupti_kernel(0, b"loop_fusion_1", b"fusion.1", 325 * MS, 345 * MS)
        until(t0, 360)
    until(t0, 380)
"""


@pytest.fixture(scope="module")
def unsampled(tmp_path_factory):
    return _run(
        tmp_path_factory.mktemp("unsampled_window"),
        UNSAMPLED,
        {"FAKE_NVML_POWER_W": "200", "FAKE_NVML_ENERGY_UPDATE_MS": "100"},
    )


def _one(rows, key, value):
    (row,) = [r for r in rows if r[key] == value]
    return row


def test_a_window_outside_the_samples_is_unknown_not_0_j(unsampled):
    (late_start, late_end), (early_start, early_end) = sorted(
        unsampled["region_windows"], key=lambda w: -w[0]
    )
    (dev,) = unsampled["windows"]["device"]
    # The premise: the sampled span ends at the counter's step at T0 + 300 ms, before "late".
    assert 290 * MS < dev["last_ns"] - unsampled["t0"] < late_start
    for by in ("region", "region_instance"):
        late = _one(unsampled["windows"][by], "region", "late")
        assert late["coverage_ns"] == 0 and late["duration_ns"] == late_end - late_start
        # nothing measured: unknown, not a measured 0 J at 0 W
        assert late["joules"] is None and late["mean_w"] is None and late["peak_w"] is None
        early = _one(unsampled["windows"][by], "region", "early")
        assert early["joules"] == pytest.approx(200 * (early_end - early_start) / 1e9, rel=0.03)
        assert early["peak_w"] == 200
    text = unsampled["texts"]["region"]
    (late_line,) = [ln for ln in text.splitlines() if ln.strip().startswith("late")]
    assert late_line.split()[2:5] == ["–", "–", "–"]
    assert "1 of 2 rows not sampled at all" in text and "unknown (–), not 0" in text


def test_what_rests_on_an_unsampled_window_is_unknown(unsampled):
    s = unsampled["summary"]
    late = _one(s["regions"]["items"], "path", "late")
    assert late["gpu_energy_j"] is None and late["gpu_energy_coverage"] is None
    early = _one(s["regions"]["items"], "path", "early")
    assert early["gpu_energy_coverage"] == pytest.approx(1.0)
    # The FPGA rows: "late"'s kernels were not sampled, so no GPU joules, no ratio, no verdict
    # in energy; "early"'s fusion.2: 200 W x 40 ms = 8 J.
    reg = _one(unsampled["regions"], "region", "late")
    assert reg["gpu_energy_j"] is None and reg["energy_ratio"] is None
    assert reg["energy_verdict"] == "unknown: no GPU energy"
    (a, b), _ = sorted(unsampled["kernels"])
    sampled = counter_joules(unsampled["readings"], a / MS, b / MS)
    assert sampled == pytest.approx(8.0, rel=0.1)  # 200 W x 40 ms, give or take the knots' lag
    assert _one(unsampled["regions"], "region", "early")["gpu_energy_j"] == pytest.approx(
        sampled, rel=1e-4
    )
    item = _one(s["answer"]["items"], "region", "late")
    assert item["energy_ratio"] is None and item["energy_verdict"] == "unknown: no GPU energy"


# A GPU without a working energy counter: the answer's energy ratios rest on NVML's power
# readings. Two ways there: no counter at all (pre-Volta: the energy read is NOT_SUPPORTED), and
# a counter that never moved while read (it steps every 60 s; the trace lasts 0.6 s).
# The curve: 60 W, 300 W from T0 + 100 ms to T0 + 500 ms, 60 W after. The sampler stores a
# reading only when a value changed, so (no counter) the readings are 60 W at the start, 300 W
# at about T0 + 100 ms, 60 W at about T0 + 500 ms and the last one at the stop; each holds until
# the next. fusion.1 [150, 190) and fusion.2 [190, 230) ms run alone inside the 300 W stretch:
# 300 W x 40 ms = 12 J each, the region "step"'s kernels 24 J, all sampled.
POWER_READINGS = """
    until(t0, 120)
    with fpgaprof.region("step"):
        _fake.fake_cupti_kernel(0, b"loop_fusion_1", b"fusion.1", 150 * MS, 190 * MS)
        _fake.fake_cupti_kernel(0, b"loop_fusion_2", b"fusion.2", 190 * MS, 230 * MS)
        until(t0, 300)
    until(t0, 600)
"""


@pytest.mark.parametrize(
    "env,flat",
    [
        ({"FAKE_NVML_SCENARIO": "pre_volta"}, False),
        ({"FAKE_NVML_ENERGY_UPDATE_MS": "60000"}, True),
    ],
    ids=["no_counter", "flat_counter"],
)
def test_the_answer_rests_on_power_readings_without_a_working_counter(tmp_path, env, flat):
    got = _run(tmp_path, POWER_READINGS, {"FAKE_NVML_POWER_W": CURVE, **env})
    assert all(100 * MS < a and b < 500 * MS for a, b in got["kernels"]), (
        "the kernels left the 300 W plateau"
    )
    s = got["summary"]
    (dev,) = s["energy"]["devices"]
    assert dev["has_counter"] is flat and dev["flat_counter"] is flat
    if not flat:
        # stored on change only: 60 W, 300 W, 60 W, and the stop's reading (60 W)
        assert [p // 1000 for _, p in got["samples"]] == [60, 300, 60, 60]
    # The device's joules: each reading's power held until the next one, read off the samples.
    t = got["samples"]
    held = sum(p / 1000 * (t[i + 1][0] - t[i][0]) / 1e9 for i, (_, p) in enumerate(t[:-1]))
    assert dev["joules"] == pytest.approx(held, rel=1e-6)
    # The answer: region "step" on its best card; the GPU side is the 24 J of its kernels from
    # the power readings, so the ratio is that card's region joules / 24 J.
    (item,) = [i for i in s["answer"]["items"] if i.get("region") == "step"]
    best = got["best"]["step"]
    assert best["gpu_energy_j"] == pytest.approx(24.0, abs=0.05)
    assert best["gpu_energy_coverage"] == pytest.approx(1.0)
    scenario = "restructured_" if item["scenario"] == "restructured" else ""
    assert item["energy_ratio"] == pytest.approx(best[f"{scenario}card_energy_j"] / 24.0, rel=5e-3)
    assert item["energy_verdict"] == best[f"{scenario}energy_verdict"]
    assert item["energy_verdict"] != "unknown: no GPU energy"
    # ... and it says so: summary.json's rests_on, and the text of prof.summary() and report.html
    rests = s["answer"]["rests_on"]
    assert rests["gpu_energy"] == "power readings"
    said = (
        "GPU energy from NVML's power readings (1 s averages on Ampere and later), card energy "
        "from each card's loaded watts"
    )
    assert said in rests["text"]
    (line,) = [ln for ln in got["summary_text"].splitlines() if ln.strip().startswith("rests on:")]
    assert said in line
    assert said.replace("'", "&#x27;") in got["html"]


# NVML's power reads fail from T0 + 40 ms on (after 10 in a row the sampler stops reading power)
# while the energy counter goes on. The curve: 60 W, 300 W from T0 + 150 to 250 ms, 60 W after;
# fusion.1 runs [200, 240) ms. Before the failures, [~0, 40) ms: 60 W, nothing running. After
# them the GPU drew 300 W, unread.
POWER_LOST = """
    _fake.fake_cupti_kernel(0, b"loop_fusion_1", b"fusion.1", 200 * MS, 240 * MS)
    until(t0, 400)
"""


@pytest.fixture(scope="module")
def power_lost(tmp_path_factory):
    return _run(
        tmp_path_factory.mktemp("power_lost"),
        POWER_LOST,
        {
            "FAKE_NVML_POWER_W": "60,150:300,250:60",
            "FAKE_NVML_SCENARIO": "transient",
            "FAKE_NVML_FAIL_CALL": "power",
            "FAKE_NVML_FAIL_MS": "40",
            "FAKE_NVML_FAIL_READS": "100000",
        },
    )


def test_power_lost_idle_watts_say_what_they_rest_on(power_lost):
    (dev,) = power_lost["windows"]["device"]
    # The counter's joules: 60 W x 150 ms + 300 W x 100 ms + 60 W x ~150 ms = ~48 J over ~0.4 s.
    assert dev["joules"] == pytest.approx(48.0, abs=1.0)
    # Idle power: the readings before the failures, 60 W over their ~40 ms of idle time
    # (idle_ns); the ~360 ms after them had no power reading (no_power_ns) and are left out.
    assert dev["idle_w"] == 60
    assert 30 * MS < dev["idle_ns"] < 50 * MS
    assert 340 * MS < dev["no_power_ns"] < 380 * MS
    # The peak: 60 W read before the failures is no peak of a GPU that then drew 300 W (its
    # mean, ~120 W, is above it): unknown, as a region's peak after the failures is.
    assert dev["peak_w"] is None
    assert dev["mean_w"] == pytest.approx(120, rel=0.05)
    text = power_lost["texts"]["device"]
    assert "idle for" in text
    assert "GPU 0: no power reading for" in text
    assert "its idle W rests on the" in text and "its peak W is unknown (–)" in text
    (sdev,) = power_lost["summary"]["energy"]["devices"]
    assert sdev["peak_w"] is None and sdev["no_power_ns"] == dev["no_power_ns"]
    assert sdev["idle_ns"] == dev["idle_ns"]
    assert "GPU 0: no power reading for" in power_lost["html"]
