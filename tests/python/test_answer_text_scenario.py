"""The answer's speedup is the better of two scenarios, the op as compiled or a restructured
dataflow design (docs/fpga-model.md). report.html prints which one beside the speedup
("0.31x (0.11-0.66x) restructured"); the text of the same answer (the digest of `fpgaprof
run`/`report`, prof.summary()) printed the bare figure, so a reader of the terminal could not
tell a redesign's target from the compiled op's estimate."""

from __future__ import annotations

import json
import os

import fpgaprof
from fpgaprof import report
from fpgaprof.base.units import fmt_speedup, fmt_speedup_range
from fpgaprof.views.answer_text import answer_lines

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACE = os.path.join(ROOT, "tests", "data", "traces", "mbirjax_parallel_128_h100.fpgaprof")


def test_the_text_answer_names_the_scenario_of_its_speedup():
    s = json.loads(
        report.summary_json.dumps(report.collect(fpgaprof.load(TRACE), trace_path=TRACE))
    )
    items = {i["operation"]: i for i in s["answer"]["items"]}
    item = items["forward_project"]
    assert item["scenario"] == "restructured"
    figure = (
        f"{fmt_speedup(item['speedup'])} "
        f"({fmt_speedup_range(item['speedup_low'], item['speedup_high'])})"
    )  # 0.31x (0.11-0.66x)
    page = report.render_html(s)
    assert f"({fmt_speedup_range(item['speedup_low'], item['speedup_high'])})</span>" not in page
    # (the page names it) ...
    (line,) = [ln for ln in answer_lines(s) if ln.split()[:1] == ["forward_project"]]
    assert f"{figure} restructured" in line  # ... and so does the text
