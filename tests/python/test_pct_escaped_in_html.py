"""A share too small for one decimal is "<0.1 %" (base.units.fmt_pct); in report.html and the
Jupyter views that "<" must be written as "&lt;" like every other text, or the page holds a
raw "<" that starts no tag (an HTML parse error; strict parsers and validators reject it)."""

from __future__ import annotations

import json
import os
import re

import fpgaprof
from fpgaprof import report
from fpgaprof.views.profile import profile_html

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACE = os.path.join(
    ROOT, "tests", "data", "traces", "mbirjax073_parallel_128_pallas_counters_h200.fpgaprof"
)


def _markup(page: str) -> str:
    # the page's script and its embedded JSON are not markup text
    return re.sub(r"<script\b.*?</script>", "", page, flags=re.S)


def test_a_share_below_a_tenth_of_a_percent_is_escaped_in_report_html():
    prof = fpgaprof.load(TRACE)
    s = json.loads(report.summary_json.dumps(report.collect(prof, trace_path=TRACE)))
    # GPU busy 893.6 µs of 41.667 s: "<0.1 % of wall" on the overview card
    assert 0 < s["totals"]["gpu_busy_fraction"] < 0.0005
    page = _markup(report.render_html(s))
    assert "&lt;0.1 % of wall" in page
    assert not re.search(r"<(?![A-Za-z/!?])", page), re.search(r".{60}<(?![A-Za-z/!?]).{20}", page)
    nb = profile_html(s)
    assert not re.search(r"<(?![A-Za-z/!?])", _markup(nb))
