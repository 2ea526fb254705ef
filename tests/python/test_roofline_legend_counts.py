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
    assert "37 of 77 ops not drawn" in legend and "3 of them above the roof" in legend
