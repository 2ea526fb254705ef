"""The roofline chart of report.html draws only ops with FLOPs and a time (a log axis cannot
place 0). Its legend counts what it draws above the roof and says how many ops the chart leaves
to the table, and how many of those the table flags above the roof, so that "2 above the roof"
on the chart and 5 flagged rows in the table below it read as the same facts."""

from __future__ import annotations

import json
import os
import re

import fpgaprof
from fpgaprof import report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACE = os.path.join(ROOT, "tests", "data", "traces", "mbirjax_parallel_128_h100.fpgaprof")


def test_the_legend_counts_the_drawn_points_and_the_ops_left_to_the_table():
    prof = fpgaprof.load(TRACE)
    s = json.loads(report.summary_json.dumps(report.collect(prof, trace_path=TRACE)))
    pts = s["roofline"]["points"]
    drawn = [
        p for p in pts if (p.get("intensity") or 0) > 0 and (p.get("achieved_flops_per_s") or 0) > 0
    ]
    flagged = [p for p in pts if p.get("roof_note")]
    # the H100 trace at 128³: 77 ops, 40 with FLOPs and a time; 5 flagged, 2 of them drawn
    assert (len(pts), len(drawn), len(flagged)) == (77, 40, 5)
    above_drawn = sum(1 for p in drawn if p.get("roof_note"))
    assert above_drawn == 2
    page = report.render_html(s)
    legend = re.sub(
        r"<[^>]+>", "", re.search(r"above the roof \(dashed ring\).*?\)</", page, re.S).group(0)
    )
    assert "2 drawn above the roof" in page
    assert "37 of 77 ops not drawn" in legend and "3 of those listed above the roof" in legend
    # the table below the chart has the first 50 points only: 12 of the 37 undrawn ops (the
    # other 25 come after row 50), so the legend must not say it lists them all
    undrawn = [i for i, p in enumerate(pts) if p not in drawn]
    assert sum(1 for i in undrawn if i < 50) == 12
    assert "the table below lists 12 of them" in legend, legend


def test_the_legend_of_a_cut_chart_counts_the_ops_of_the_trace():
    # The sweep trace has 417 ops with a time; the chart takes the 200 with most time, 27 of
    # which it cannot place; the table lists 50 points, one of those 27.
    path = os.path.join(ROOT, "tests", "data", "traces", "mbirjax_sweep_32_64_run_h100.fpgaprof")
    s = json.loads(report.summary_json.dumps(report.collect(fpgaprof.load(path), trace_path=path)))
    roof = s["roofline"]
    assert (roof["count"], len(roof["points"]), roof["points_left_out"]) == (417, 200, 217)
    page = report.render_html(s)
    legend = re.sub(r"<[^>]+>", "", re.search(r'<div class="legend">(.*?)</div>', page, re.S).group(1))
    assert "27 of the 200 with most time of 417 ops not drawn" in legend, legend
    assert "the table below lists 1 of them" in legend, legend
