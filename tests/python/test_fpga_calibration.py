"""Every calibrated constant of the FPGA model is what its published measurements give: the
rule in data/fpga_calibration.json (median, min, max, mean, a stated value, the HBM value for
an unmeasured DDR4 rate, or half the read rate) applied to the measurements, recomputed here
and compared with the presets the C++ core builds. Each measurement names its source, the
place in it and the text it was read from."""
import statistics

import pytest
from fpgaprof import fpga, fpga_validation

DATA = fpga_validation.calibration()
CONSTANTS = DATA["constants"]
PRESETS = {p["name"]: p for p in fpga.presets()}
# Which presets each scope's constants reach (a card-specific constant overrides the fabric's).
SCOPE = {"fabric": ["alveo-u55c", "alveo-u280", "alveo-u250", "alveo-u200", "versal-v80"],
         "hbm2": ["alveo-u55c", "alveo-u280"], "hbm2e": ["versal-v80"], "ddr4": ["alveo-u250", "alveo-u200"],
         "versal-v80": ["versal-v80"]}


def _rule_value(c, end):
    rule = c["rule"][end]
    if isinstance(rule, dict):
        if "value" in rule:
            return rule["value"]
        if "same_as" in rule:
            other = next(o for o in CONSTANTS if o["scope"] == rule["same_as"] and o["field"] == c["field"])
            return _rule_value(other, end)
        assert rule["derived"] == "half the nominal random_reads_per_s"
        reads = next(o for o in CONSTANTS if o["scope"] == "hbm2" and o["field"] == "random_reads_per_s")
        return _rule_value(reads, "nominal") / 2
    values = [m["value"] for m in c["measurements"] if end != "nominal" or m.get("in_nominal", True)]
    how = rule.split(" of ")[0]
    return {"median": statistics.median, "min": min, "max": max, "mean": statistics.fmean}[how](values)


def _overridden(c, preset):
    """A fabric constant a card-specific one replaces on this preset."""
    return c["scope"] == "fabric" and any(o["scope"] == preset and o["field"] == c["field"] for o in CONSTANTS)


@pytest.mark.parametrize("c", CONSTANTS, ids=[f"{c['scope']}-{c['field']}" for c in CONSTANTS])
def test_each_constant_is_its_rule_over_its_measurements(c):
    for end in ("nominal", "low", "high"):
        expect = _rule_value(c, end)
        assert c["values"][end] == pytest.approx(expect, rel=1e-9), (end, "the file's own values")
        key = c["field"] if end == "nominal" else f"{c['field']}_{end}"
        for name in SCOPE[c["scope"]]:
            if _overridden(c, name):
                continue
            assert PRESETS[name][key] == pytest.approx(expect, rel=2e-5), (name, key)
    assert c["values"]["low"] <= c["values"]["nominal"] <= c["values"]["high"]


def test_every_measurement_names_its_source():
    for c in CONSTANTS:
        assert c["why"] and c["unit"]
        for m in c["measurements"]:
            src = m["source"]
            assert src["title"] and src["url"] and src["location"], m["id"]
            assert m["quote"].strip(), m["id"]
            assert m["derived"], m["id"]
            assert m["second_hand"] is False, m["id"]


def test_every_calibrated_field_of_the_model_has_its_measurements():
    covered = {c["field"] for c in CONSTANTS}
    # stated, not measured: the on-chip share (a design assumption) says so in its entry
    assert set(fpga.CALIBRATED_FIELDS) <= covered
    assumption = next(c for c in CONSTANTS if c["field"] == "onchip_share")
    assert assumption["measurements"] == [] and "assumption" in assumption["why"]


def test_design_facts_are_marked():
    # channel counts, DSP shares and PE counts are what published designs report about
    # themselves, not their timings: each is marked so (docs/fpga-validation.md lists them)
    for field in ("channel_share", "dsp_utilization", "onchip_lanes"):
        for c in (c for c in CONSTANTS if c["field"] == field):
            assert c["measurements"] and all(m.get("design_fact") for m in c["measurements"]), (c["scope"], field)
