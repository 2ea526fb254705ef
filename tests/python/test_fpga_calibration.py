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
# The scopes whose constants reach each preset, the most specific first: a constant is the
# preset's when no earlier scope sets its field (a card's own replaces the Intel DDR4 group's,
# which replaces the memory type's, which replaces the Intel cards' runtime group's, which
# replaces the fabric's). Written out by hand.
CHAINS = {"alveo-u55c": ["hbm2", "fabric"], "alveo-u280": ["hbm2", "fabric"],
          "alveo-u250": ["ddr4", "fabric"], "alveo-u200": ["ddr4", "fabric"],
          "versal-v80": ["versal-v80", "hbm2e", "hbm2", "fabric"],
          "intel-pac-a10": ["intel-ddr4", "ddr4", "intel-fabric", "fabric"],
          "bittware-520n-s10gx": ["bittware-520n-s10gx", "intel-ddr4", "ddr4", "intel-fabric", "fabric"],
          "intel-pac-d5005": ["intel-pac-d5005", "intel-ddr4", "ddr4", "intel-fabric", "fabric"],
          "intel-s10mx-2100": ["hbm2", "intel-fabric", "fabric"]}


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


def _reaches(c, preset):
    """The constant is the preset's: its scope is in the preset's chain and no scope ahead of it
    sets the same field."""
    chain = CHAINS[preset]
    if c["scope"] not in chain:
        return False
    ahead = chain[: chain.index(c["scope"])]
    return not any(o["scope"] in ahead and o["field"] == c["field"] for o in CONSTANTS)


def test_every_preset_has_its_chain_and_every_scope_reaches_one():
    assert set(CHAINS) == set(PRESETS)
    for c in CONSTANTS:
        assert any(_reaches(c, name) for name in PRESETS), (c["scope"], c["field"])
    # the validation module's chains are the same
    for name, chain in CHAINS.items():
        got = fpga_validation.scope_chain(PRESETS[name]["memory_type"], name)
        assert [s for s in got if s != name] == [s for s in chain if s != name], name


@pytest.mark.parametrize("c", CONSTANTS, ids=[f"{c['scope']}-{c['field']}" for c in CONSTANTS])
def test_each_constant_is_its_rule_over_its_measurements(c):
    for end in ("nominal", "low", "high"):
        expect = _rule_value(c, end)
        assert c["values"][end] == pytest.approx(expect, rel=1e-9), (end, "the file's own values")
        key = c["field"] if end == "nominal" else f"{c['field']}_{end}"
        for name in (n for n in PRESETS if _reaches(c, n)):
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
    # stated, not measured: the on-chip share (a design assumption) says so in its entry.
    # loaded_w, the board power, has its own measurements: fpga_card_power.json ("Card power").
    assert set(fpga.CALIBRATED_FIELDS) - {"loaded_w"} <= covered
    assumption = next(c for c in CONSTANTS if c["field"] == "onchip_share")
    assert assumption["measurements"] == [] and "assumption" in assumption["why"]


def test_design_facts_are_marked():
    # channel counts, DSP shares and PE counts are what published designs report about
    # themselves, not their timings: each is marked so (docs/fpga-validation.md lists them)
    for field in ("channel_share", "dsp_utilization", "onchip_lanes"):
        for c in (c for c in CONSTANTS if c["field"] == field):
            assert c["measurements"] and all(m.get("design_fact") for m in c["measurements"]), (c["scope"], field)


ANCHORS = {a["id"]: a for a in fpga_validation.anchors()}


def test_calibration_and_validation_are_apart_by_source():
    # A constant may use no fact (time, rate, PE count, channel count, DSP share) of a design whose
    # source validates: every measurement and anchor names its source, and no source both sets a
    # constant (or holds a calibration anchor) and holds a validation anchor.
    for c in CONSTANTS:
        for m in c["measurements"]:
            assert m["source_id"], m["id"]
    assert all(a["source_id"] for a in ANCHORS.values())
    calibrating = {m["source_id"] for c in CONSTANTS for m in c["measurements"]}
    calibrating |= {a["source_id"] for a in ANCHORS.values() if a["role"] == "calibration"}
    validating = {a["source_id"] for a in ANCHORS.values() if a["role"] == "validation"}
    assert validating, "no validation anchor"
    assert calibrating & validating == set()
    assert fpga_validation.source_overlap() == []


def test_energy_anchors_of_calibration_sources_do_not_validate():
    # The energy anchors (data/fpga_card_power.json) obey the same rule as the time anchors: a
    # source any of whose facts sets a constant (HiSpMV: onchip_lanes, channel_share) holds no
    # validation anchor, energy included.
    import json
    from importlib import resources

    power = json.loads(resources.files("fpgaprof").joinpath("data/fpga_card_power.json").read_text())
    calibrating = {m["source_id"] for c in CONSTANTS for m in c["measurements"]}
    for a in power["energy_anchors"]:
        assert a["source_id"], a["id"]
        if a["source_id"] in calibrating:
            assert not a["role"].startswith("validation"), a["id"]


def test_the_overlap_check_can_fail():
    # The check sees a source that calibrates and validates: mark one calibration anchor of a
    # source that sets a constant as validation and it is named.
    import copy
    from unittest import mock

    from fpgaprof.api import fpga_validation as impl

    changed = copy.deepcopy(list(ANCHORS.values()))
    hit = next(a for a in changed if a["source_id"] == "hispmv" and a["role"] == "calibration")
    hit["role"] = "validation"
    with mock.patch.object(impl, "anchors", return_value=changed):
        assert fpga_validation.source_overlap() == ["hispmv"]


def test_achieved_lanes_are_each_designs_cells():
    # onchip_lanes: each design's nonzeros per cycle, nnz / (time x its clock), time = the work
    # count its source prints over the measured rate, the median over its cells; recomputed here
    # from the anchors the measurement names.
    lanes = next(c for c in CONSTANTS if c["field"] == "onchip_lanes")
    timed = [m for m in lanes["measurements"] if not m.get("from_pes")]
    assert len(timed) == 6
    for m in timed:
        assert m["cells"]
        vals = []
        for aid in m["cells"]:
            a = ANCHORS[aid]
            assert a["role"] == "calibration" and a["source_id"] == m["source_id"]
            assert a["clock_mhz"] == m["clock_mhz"] and a["resources"]["pes"] == m["pes"]
            seconds = a["work"]["value"] / (a["measured"]["value"] * 1e9)
            vals.append(2 * a["size"]["nnz"] / (seconds * m["clock_mhz"] * 1e6))
        assert m["value"] == pytest.approx(statistics.median(vals), rel=1e-12), m["id"]
        # a design achieves less than one nonzero (two accesses) per PE per cycle
        assert m["value"] < 2 * m["pes"]
    # HiSpMV-16 on nd6k by hand: 49.05 GFLOP/s of 2 (6,897,316 + 18,000) FLOP is 281.97 us;
    # 6,897,316 / (281.97e-6 s x 221e6 /s) = 110.68 nonzeros per cycle, 221.36 accesses
    a = ANCHORS["hispmv16-spmv-fp32-u280-nd6k"]
    assert 2 * 6897316 / (2 * (6897316 + 18000) / 49.05e9 * 221e6) == pytest.approx(221.36, abs=0.01)
    assert a["measured"]["value"] == 49.05 and a["clock_mhz"] == 221 and a["size"]["nnz"] == 6897316


def test_lanes_from_ten_designs_and_six_sources():
    # Ten designs from six sources, each with its PE count, clock and HBM channels as design
    # facts. The four known only by PE count get 2 x PEs x the median fraction of one nonzero
    # per PE per cycle the six timed designs achieve. By hand from the timed designs' values:
    # HiSpMV-16 195.036 / 256 = 0.7619, HiSpMV-20 224.362 / 320 = 0.7011, Serpens-16
    # 149.625 / 256 = 0.5845, Serpens-24 209.674 / 384 = 0.5460, HiSparse-PB 114.501 / 256 =
    # 0.4473, HiSparse-RI 63.493 / 256 = 0.2480; the median (0.58447 + 0.54603) / 2 = 0.56525.
    # GraphLily (128 PEs): 256 x 0.56525 = 144.70; HiSpMM-balanced (80): 90.44;
    # HiSpMM-imbalanced and Sextans (64): 72.35. Sorted, the ten are 63.49, 72.35, 72.35,
    # 90.44, 114.50, 144.70, 149.63, 195.04, 209.67, 224.36: nominal (114.50 + 144.70) / 2 =
    # 129.60, low 63.49 (HiSparse-RI), high 224.36 (HiSpMV-20).
    lanes = next(c for c in CONSTANTS if c["field"] == "onchip_lanes")
    ms = lanes["measurements"]
    assert len(ms) == 10 and len({m["source_id"] for m in ms}) == 6
    for m in ms:
        assert m["design_fact"] and m["pes"] > 0 and m["clock_mhz"] > 0 and m["matrix_hbm_channels"] > 0
    by_id = {m["id"]: m for m in ms}
    assert by_id["graphlily-pe-lanes"]["value"] == pytest.approx(144.70, abs=0.01)
    assert by_id["hispmm-balanced-pe-lanes"]["value"] == pytest.approx(90.44, abs=0.01)
    assert by_id["hispmm-imbalanced-pe-lanes"]["value"] == pytest.approx(72.35, abs=0.01)
    assert by_id["sextans-pe-lanes"]["value"] == pytest.approx(72.35, abs=0.01)
    assert by_id["sextans-pe-lanes"]["clock_mhz"] == 253 and by_id["graphlily-pe-lanes"]["clock_mhz"] == 166
    assert lanes["values"]["nominal"] == pytest.approx(129.60, abs=0.01)
    assert lanes["values"]["low"] == pytest.approx(63.49, abs=0.01)
    assert lanes["values"]["high"] == pytest.approx(224.36, abs=0.01)
    # the refit recomputes the PE-count designs from the timed designs left: without HiSpMV
    # the fraction is the median of 0.5845, 0.5460, 0.4473, 0.2480, (0.5460 + 0.4473) / 2 =
    # 0.49665; GraphLily 127.14, HiSpMM-balanced 79.46, the 64-PE designs 63.57; with
    # Serpens' 149.63 and 209.67 and HiSparse's 114.50 and 63.49 the median of the eight is
    # (79.46 + 114.50) / 2 = 96.98
    fitted = {(f["scope"], f["field"]): f["values"] for f in fpga_validation.refit("hispmv")}
    assert fitted[("fabric", "onchip_lanes")][0] == pytest.approx(96.98, abs=0.01)
    assert fitted[("fabric", "onchip_lanes")][1:] == pytest.approx((63.49, 209.67), abs=0.01)


def test_every_cell_of_a_source_table_is_present():
    # HiSpMV Table 2 (20 matrices), Table 1 (7 designs x 2 matrices, one 'N / A'), HiSparse
    # Table 7 (4 matrices x 3 designs): every cell is an anchor, estimated or out of model with
    # its reason.
    def count(where):
        return sum(where in a["source"]["location"] for a in ANCHORS.values())

    assert count("Table 2 (M") == 20
    assert count("Table 1 (") == 13
    assert count("Table 7 (") == 12

    # The Vitis benchmark tables: SpMV double, 22 matrices; GEMV on the U280, 6 sizes with their
    # kernel time (validation) and API time (out of model), and on the U50, 6 sizes (out of model)
    def rows(prefix, role=None):
        return [a for a in ANCHORS.values() if a["id"].startswith(prefix) and role in (None, a["role"])]

    assert len(rows("vitis-spmv-fp64-u280-", "validation")) == 22
    assert len(rows("vitis-gemv-fp64-u280-", "validation")) == 6
    assert len(rows("vitis-gemv-fp64-u280-", "out of model")) == 6
    assert len(rows("vitis-gemv-fp64-u50-")) == 6
    # NTUA's results file of the Vitis Sparse SpMV (results_validation_matrices.csv): 28 rows, all
    # validation. Its columns have no header: the time per run is the one the last column is 33 x
    # (the file's energy estimate, J = 33 W x time), and the anchor's measurement is that column.
    ntua = rows("ntua-vitis-spmv-fp64-u280-", "validation")
    assert len(ntua) == 28 and {a["source_id"] for a in ntua} == {"cslab-ntua-spmv-research"}
    for a in ntua:
        cells = a["quote"].split(" || ")[0].split(",")
        assert len(cells) == 11 and cells[6] == "Xilinx_SpMV", a["id"]
        assert float(cells[10]) == pytest.approx(33 * float(cells[7]), rel=1e-9), a["id"]
        assert a["measured"] == {"value": float(cells[7]), "unit": "ms"}, a["id"]
        assert [int(c) for c in cells[1:4]] == [a["size"][k] for k in ("rows", "cols", "nnz")], a["id"]
    for a in ANCHORS.values():
        if a["role"] == "out of model":
            assert a["reason"], a["id"]
