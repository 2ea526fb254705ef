"""A roofline point whose kernels have no GPU time (a counter replay left them without
timestamps) shows no rates: null in summary.json, "–" in report.html, not measured zeros."""

from pathlib import Path

import fpgaprof
from fpgaprof.report import collect

TRACE = Path(__file__).resolve().parents[1] / "data" / "traces" / "mbirjax073_parallel_128_xla_counters_h200.fpgaprof"


def test_untimed_region_and_ops_have_no_rates():
    s = collect(fpgaprof.load(str(TRACE)))
    roof = s["roofline"]
    # forward_project: its 34 kernels all have start = end (the unpaired counter window,
    # tests/data/traces/README.md), so its kernel time is 0 s and nothing was timed.
    fwd = next(r for r in roof["by_region"]["items"] if r["region"] == "forward_project")
    assert (fwd["kernel_count"], fwd["time_s"]) == (34, 0.0)
    assert fwd["achieved_flops_per_s"] is None
    assert fwd["achieved_bytes_per_s"] is None
    assert fwd["roof_fraction"] is None
    assert fwd["cost_coverage"] is None
    assert fwd["flops"] > 0  # its static cost stays: 1.4 GFLOP were attributed
    untimed = [p for p in roof["points"] if p["time_s"] == 0 and p["flops"]]
    assert untimed, "the trace has ops whose kernels all lack timestamps"
    assert all(p["achieved_flops_per_s"] is None and p["roof_fraction"] is None for p in untimed)
    # a timed region keeps its numbers: back_project 69 kernels, 3,006,304 ns
    back = next(r for r in roof["by_region"]["items"] if r["region"] == "back_project")
    assert back["cost_coverage"] == 1.0 and back["achieved_flops_per_s"] > 0
