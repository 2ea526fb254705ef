"""The generated parts of the FPGA docs are what the model and the data give now: the
validation table (calibration and validation apart by source) and the leave-one-source-out
error, both computed here on every run (docs/fpga-validation.md). scripts/fpga_docs.py rewrites
the parts."""
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("jax")
from fpgaprof import fpga_validation as V  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _block(doc: str, name: str) -> str:
    text = (ROOT / doc).read_text(encoding="utf-8")
    m = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    assert m, f"{doc} has no {name} block"
    return m.group(1)


@pytest.fixture(scope="module")
def rows():
    return V.table()


@pytest.fixture(scope="module")
def loso():
    return V.leave_one_source_out()


def test_validation_anchors(rows):
    val = [r for r in rows if r["role"] == "validation"]
    assert len(val) >= 20
    for r in val:
        assert r["within_goal"] == (1 / 2.5 <= r["ratio"] <= 2.5), r["id"]
    for r in rows:
        if r["role"] == "out of model":
            continue
        # the range and the scenarios are computed for every estimated anchor
        assert r["as_compiled_low_s"] <= r["as_compiled_s"] <= r["as_compiled_high_s"]
        assert r["restructured_low_s"] <= r["restructured_s"] <= r["restructured_high_s"]
        assert r["restructured_s"] <= r["as_compiled_s"] * (1 + 1e-9)
    s = V.summary(rows)
    assert s["within_goal"] == sum(r["within_goal"] for r in val)
    # the goals: geomean within 1.5x, none beyond 2.5x, 80 % inside the range
    assert s["goals_met"] == (s["geomean"] <= 1.5 and s["worst"] <= 2.5 and s["in_range_share"] >= 0.8)
    # the summary is the rows': geometric mean of max(r, 1/r), share inside the range
    sym = sorted(max(r["ratio"], 1 / r["ratio"]) for r in val)
    assert s["worst"] == sym[-1]
    assert s["in_range_share"] == pytest.approx(sum(r["in_range"] for r in val) / len(val))
    # out-of-model anchors are listed with their reason, none silently dropped
    assert s["validation"] + s["calibration"] + s["out_of_model"] == len(V.anchors())
    assert all(r["reason"] for r in rows if r["role"] == "out of model")


def test_leave_one_source_out(loso):
    # Every calibration source with estimated anchors is left out once, and each of its anchors
    # is predicted (or named as not predictable without it).
    by_source = {r["source_id"] for r in loso}
    srcs = V.sources()
    expect = {sid for sid, e in srcs.items() if e["role"] == "calibration" and e["anchors"].get("calibration")}
    assert by_source == expect
    assert {"hispmv", "serpens", "hisparse", "hpcc-fpga", "autosa"} <= by_source
    # HiSpMV left out: onchip_lanes is the median of the other eight designs' accesses per cycle,
    # (79.46 + 114.50) / 2 = 96.98 (the PE-count designs recomputed from the timed ones left:
    # test_fpga_calibration.test_lanes_from_ten_designs_and_six_sources), and channel_share the median of the channels STREAM (32),
    # RandomAccess (32), Serpens-16 and -24 (20, 28) and HiSparse-PB and -RI (18, 18) use:
    # (20 + 28) / 2 / 32 = 0.75
    fitted = {(f["scope"], f["field"]): f["values"] for f in V.refit("hispmv")}
    assert fitted[("fabric", "onchip_lanes")][0] == pytest.approx(96.98, abs=0.01)
    assert fitted[("hbm2", "channel_share")][0] == pytest.approx(0.75)
    row = next(r for r in loso if r["id"] == "hispmv16-spmv-fp32-u280-nd6k")
    assert any(c.startswith("onchip_lanes (fabric) 96.98") for c in row["refitted"])
    # RandomAccess alone sets the read-modify-write rate: without HPCC it is not predictable
    ra = next(r for r in loso if r["id"] == "hpcc-randomaccess-u280-hbm")
    assert ra["missing"] == ["rmw_updates_per_s (hbm2)"] and "ratio" not in ra
    ls = V.loso_summary(loso)
    assert ls["count"] + ls["not_predictable"] == len(loso)


def test_calibration_anchors_reproduce_the_end_they_set(rows):
    cal = {r["id"]: r for r in rows if r["role"] == "calibration"}
    # the sort rates are the two sorters' own: each reproduces its end exactly
    assert cal["vitis-compound-sort-u280-131072"]["ratio"] == pytest.approx(1.0, rel=2e-3)
    assert cal["topsort-u280-hbm-4GB"]["ratio"] == pytest.approx(1.0, rel=2e-2)
    # RandomAccess on DDR4 drives both banks as the nominal DDR4 design does: the 2^31 random
    # updates alone take 2^31 / (2 x 20.02e6/s) = 53.63 s, 40.3 / 40.04 of the measured 53.29 s;
    # the streamed indices and values (and XLA's index handling) add a few percent
    assert 40.3 / 40.0444 <= cal["hpcc-randomaccess-u280-ddr-v22"]["ratio"] <= 1.06


def test_the_validation_doc_holds_the_current_table(rows, loso):
    assert _block("docs/fpga-validation.md", "validation-table") == V.markdown(rows, loso)


def test_the_model_doc_holds_the_current_mbirjax_conclusions():
    traces = [str(ROOT / "tests/data/traces" / f) for f in
              ("mbirjax_parallel_128_h100.fpgaprof", "mbirjax_sweep_32_64_run_h100.fpgaprof")]
    assert _block("docs/fpga-model.md", "mbirjax-conclusions") == V.trace_conclusions(traces)


def test_the_script_checks_and_rewrites():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "fpga_docs.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "up to date"


def test_the_figures_written_by_hand_are_the_tables(rows, loso):
    # README and docs/fpga-validation.md quote the validation result in their own words: the
    # error over the 64 validation anchors, over the 36 besides NTUA's measurements, and the
    # leave-one-source-out error. Each quote is what the current rows give.
    import math

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    doc = (ROOT / "docs" / "fpga-validation.md").read_text(encoding="utf-8")
    flat = " ".join(readme.split())
    s = V.summary(rows)
    assert (
        f"error is {s['geomean']:.2f}x, worst {s['worst']:.3g}x, "
        f"{round(100 * s['in_range_share'])} % inside the range"
    ) in flat
    rest = [r for r in rows if r["role"] == "validation" and r["source_id"] != "cslab-ntua-spmv-research"]
    sym = [max(r["ratio"], 1 / r["ratio"]) for r in rest]
    gm = math.exp(sum(math.log(x) for x in sym) / len(sym))
    inside = sum(r["in_range"] for r in rest)
    assert f"(the {len(rest)} besides NTUA's: {gm:.2f}x, worst {max(sym):.3g}x," in flat
    assert (
        f"the other {len(rest)} give {gm:.2f}x, worst {max(sym):.3g}x (the sort), {inside} of "
        f"{len(rest)} ({round(100 * inside / len(rest))} %) inside the range"
    ) in " ".join(doc.split())
    ls = V.loso_summary(loso)
    assert (
        f"against {ls['count']} kernels of calibration sources, each predicted with its own "
        f"source left out of every constant, {ls['geomean']:.2f}x"
    ) in flat
