"""docs/mbirjax-findings.md holds what scripts/mbirjax_findings.py writes from the saved traces,
and the script's figures are fpgaprof's public API's (checked on the H100 trace of parallel
forward and back projection at 128^3)."""
import importlib.util
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import fpgaprof
from fpgaprof.base.units import fmt_s, fmt_speedup, fmt_speedup_range

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "mbirjax_findings.py"
TRACE = ROOT / "tests" / "data" / "traces" / "mbirjax_parallel_128_h100.fpgaprof"

_spec = importlib.util.spec_from_file_location("mbirjax_findings", SCRIPT)
F = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = F  # its dataclass looks its module up
_spec.loader.exec_module(F)


@pytest.fixture(scope="module")
def generated() -> str:
    return F.generate()


@pytest.fixture(scope="module")
def units():
    row = F.readme_rows()[TRACE.name]
    return F.analyse(TRACE, row)


def test_the_doc_holds_what_the_script_writes(generated):
    text = (ROOT / "docs" / "mbirjax-findings.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- findings:start -->\n(.*?)<!-- findings:end -->", text, re.S)
    assert m, "docs/mbirjax-findings.md has no findings block"
    assert m.group(1) == generated, "out of date: run scripts/mbirjax_findings.py"


def test_the_script_checks(tmp_path):
    r = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "up to date"


def test_every_saved_mbirjax_trace_is_in_the_doc(generated):
    names = [p.name for p, _row in F.mbirjax_traces()]
    assert TRACE.name in names and len(names) >= 3
    for n in names:
        assert f"`{n}`" in generated
    # a README line of "same" takes the line above's value
    rows = F.readme_rows()
    assert "mbirjax 0.6.17.1" in rows["mbirjax_parallel_64_counters_h100.fpgaprof"]["versions"]


def test_figures_are_the_apis_on_one_trace(units, generated):
    facts, us = units
    prof = fpgaprof.load(str(TRACE))
    assert facts["kernels"] == len(prof.kernels) and facts["copies"] == len(prof.transfers)
    assert [(u.op, u.size, u.path) for u in us] == [
        ("parallel_back_project", 128, "back_project"), ("parallel_forward_project", 128, "forward_project")]
    roof = {r["region"]: r for r in prof.roofline(by="region")}
    k = prof.kernels.columns(["start_ns", "end_ns", "region_index"])
    regions = list(prof.regions)
    for u in us:
        r = roof[u.path]
        # kernel count and time: the roofline's, and a recount from the kernel records
        assert u.kernels == r["kernel_count"]
        assert u.kernel_ns == r["time_ns"]
        idx = [i for i, reg in enumerate(regions) if reg.name == u.path]
        mask = np.isin(k["region_index"], idx)
        assert int(mask.sum()) == u.kernels
        assert int((k["end_ns"][mask] - k["start_ns"][mask]).sum()) == u.kernel_ns
        assert u.calls == len(idx) == 1
        assert u.wall_ns == sum(regions[i].end_ns - regions[i].start_ns for i in idx)
        assert 0 < u.busy_ns <= u.wall_ns
        # the top HLO op's kernel time is attribution's, per (module, op)
        att = prof.attribution.kernels
        site = np.asarray(att.site_index)[mask]
        dur = (k["end_ns"] - k["start_ns"])[mask]
        top = u.top_ops[0]
        ns = sum(int(d) for s, d in zip(site, dur)
                 if att.sites[s].hlo_op == top["op"] and att.sites[s].module_name == top["module"])
        assert ns == top["ns"]
        # copies: the transfer report's region group
        group = next(g for g in prof.transfer_report(by="region")["groups"]
                     if g["kind"] == "region_path" and g["region"] == u.path)
        for d, v in u.copies.items():
            assert v["bytes"] == group["directions"][d]["bytes"]
        # the FPGA rows are fpga_candidates(card, by="region") with and without the link
        for card in F.CARDS:
            for cross in (True, False):
                row = next(x for x in prof.fpga_candidates(card, by="region", inputs_cross_link=cross)
                           if x["region"] == u.path)
                got = u.fpga[(card, cross)]
                for key in ("region_speedup", "region_speedup_low", "region_speedup_high",
                            "restructured_region_speedup", "restructured_region_speedup_low",
                            "restructured_region_speedup_high", "scenario"):
                    assert got[key] == row[key], (card, cross, key)
        # and the document prints them as every report does
        pc = u.fpga[("alveo-u55c", True)]
        cell = (f"{fmt_speedup(pc['region_speedup'])} "
                f"({fmt_speedup_range(pc['region_speedup_low'], pc['region_speedup_high'])})")
        assert f"| alveo-u55c | {cell} |" in generated
        assert f"GPU kernels {fmt_s(u.kernel_ns * 1e-9)} ({u.kernels} kernels)" in generated


def test_verdicts_follow_the_numbers():
    def unit(compiled, restructured, high):
        row = {"estimated": True, "region_speedup": compiled, "restructured_region_speedup": restructured,
               "restructured_region_speedup_low": restructured / 2, "restructured_region_speedup_high": high}
        return F.Unit(trace="t", op="op", size=64, path="op/64", calls=1, wall_ns=1, busy_ns=1, kernel_ns=1.0,
                      kernels=1, copies={}, before_ns=None, modules=[], top_ops=[], top_kernels=[], roofline={},
                      fpga={(c, x): row for c in F.CARDS for x in (True, False)})

    assert F.verdict(unit(2.0, 3.0, 4.0), short=True).startswith("yes, as compiled")
    assert F.verdict(unit(0.5, 1.5, 2.0), short=True) == "only restructured, data on the card"
    assert F.verdict(unit(0.01, 0.8, 1.2), short=True) == "no (only the range's fast end passes 1x)"
    assert F.verdict(unit(0.01, 0.4, 0.7), short=True) == "no"
    assert "even restructured with the data on the card" in F.verdict(unit(0.01, 0.4, 0.7))


def test_a_unit_without_kernel_times_ranks_no_op_and_gives_no_share_of_the_roof(generated):
    """The counter traces' parallel forward projections have no kernel times (counter replay).
    No op of theirs is "the costliest" at 0 %, and no "0.0 % of the roof" reads as a measured,
    idle kernel; the timed units keep both."""
    glance = [ln for ln in generated.splitlines() if ln.startswith("| parallel_forward_project | 128³ |")]
    untimed = [ln for ln in glance if "no GPU time" in ln]
    assert len(untimed) == 2
    for ln in untimed:
        assert "(0 %)" not in ln and "– (no kernel times)" in ln
    assert any(re.search(r"`custom-call\.1` \(\d+ %\)", ln) for ln in glance if ln not in untimed)
    sections = generated.split("\n#### ")
    without = [s for s in sections if "no kernel times" in s and s.startswith("parallel_forward_project")]
    assert len(without) == 2
    for s in without:
        assert "% of the roof" not in s and "share of the roof unknown" in s
        assert "- **HLO ops** by kernel time" not in s and "- **Kernels**" not in s
