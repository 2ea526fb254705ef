"""docs/mbirjax-findings.md's written summary ("What this says", above the generated part that
CI regenerates) quotes figures of the model by hand. When a constant moved (onchip_lanes
172.3 -> 129.6, d05bbb6b) the generated tables followed and the written figures did not: the
same page said 0.34x for the restructured forward projector and "about 2.3x the parallelism
(172 accesses per cycle)" to match the H100, which is 1 / 0.44x, the figure before. These
checks tie the written figures to what fpgaprof computes now."""

from __future__ import annotations

import json
import os
import re

import fpgaprof
from fpgaprof import report
from fpgaprof.base.units import fmt_speedup, fmt_speedup_range

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACES = os.path.join(ROOT, "tests", "data", "traces")


def _doc(name: str) -> str:
    with open(os.path.join(ROOT, "docs", name), encoding="utf-8") as f:
        text = f.read()
    return " ".join(text.split())  # the written part wraps lines anywhere


def _answer(name: str) -> dict:
    path = os.path.join(TRACES, name)
    s = json.loads(report.summary_json.dumps(report.collect(fpgaprof.load(path), trace_path=path)))
    return {i["region"]: i for i in s["answer"]["items"]}


def test_the_on_chip_parallelism_quoted_is_the_models():
    lanes = next(p for p in fpgaprof.fpga.presets() if p["name"] == "alveo-u55c")["onchip_lanes"]
    findings = _doc("mbirjax-findings.md")
    (quoted,) = re.findall(r"\((\d+) accesses per cycle at 222 MHz", findings)
    assert int(quoted) == round(lanes)
    (model,) = re.findall(r"\((\d+) accesses per cycle × 222 MHz", _doc("fpga-model.md"))
    assert int(model) == int(quoted)


def test_the_pallas_back_kernels_operand_bound_is_the_tools():
    prof = fpgaprof.load(os.path.join(TRACES, "mbirjax073_parallel_128_pallas_h200.fpgaprof"))
    (row,) = [
        r
        for r in prof.fpga_candidates("alveo-u55c", inputs_cross_link=False)
        if r["op"] == "pallas_call.1"
    ]
    assert row["estimate_basis"] == "operand bound"
    want = (
        f"at most {fmt_speedup(row['op_speedup'])}, range "
        f"{fmt_speedup_range(row['op_speedup_low'], row['op_speedup_high'])}"
    )
    assert want in _doc("mbirjax-findings.md"), want


def test_the_pallas_gpu_speedups_quoted_are_the_traces():
    pallas = _answer("mbirjax073_parallel_128_pallas_h200.fpgaprof")
    xla = _answer("mbirjax073_parallel_128_xla_h200.fpgaprof")
    findings = _doc("mbirjax-findings.md")
    for region in ("forward_project", "back_project"):
        ratio = xla[region]["gpu_time_s"] / pallas[region]["gpu_time_s"]
        assert f"({ratio:.1f}x" in findings, (region, ratio)


def _glance_best(operation: str, size: str, trace: str) -> str:
    """The "FPGA, best case" cell of the generated "At a glance" table (CI regenerates it)."""
    findings = _doc("mbirjax-findings.md")
    row = re.search(
        rf"\| {operation} \| {size} \| {trace} \|(.*?)\| (no|yes|uncertain)[^|]*\|", findings
    )
    assert row, (operation, trace)
    return row.group(1).split("|")[-1].strip()


def test_the_pallas_region_figures_quoted_are_the_tables():
    # "forward 0.080x, 0.051-0.11x on the V80; cone forward 0.28x, 0.18-0.40x": the written summary
    # quotes the best case the generated table gives for both Pallas forward projections.
    findings = _doc("mbirjax-findings.md")
    for operation, size, trace, label in (
        ("parallel_forward_project", "128³", "mbirjax073_parallel_128_pallas_h200", "forward"),
        ("cone_forward_project", "64³", "mbirjax073_cone_64_pallas_counters_h200", "cone forward"),
    ):
        cell = _glance_best(operation, size, trace)
        m = re.fullmatch(r"versal-v80 (\S+) \((\S+)\)", cell)
        assert m, cell
        assert f"{label} {m.group(1)}, {m.group(2)}" in findings, (label, cell)


def test_the_structure_decided_example_quoted_is_the_tables():
    # "the range's slow end is the as-compiled design, e.g. 0.27x (0.00083-0.66x) at 64³": the
    # sweep's parallel forward projection at 64³, as the generated table gives it.
    cell = _glance_best("parallel_forward_project", "64³", "mbirjax_sweep_32_64_run_h100")
    m = re.fullmatch(r"\S+ (\S+) \((\S+)\)", cell)
    assert m, cell
    assert f"e.g. {m.group(1)} ({m.group(2)}) at 64³" in _doc("mbirjax-findings.md"), cell
