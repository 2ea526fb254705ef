"""The H100 128³ trace copies 12 B DtoH in 4.16 µs: 2.9 MB/s, 0.0046 % of the 63 GB/s link.
A share above 0 that one decimal would show as 0 is "<0.1 %" (base.units.fmt_pct: "834 µs of
43.8 s is not 0.0 %"); the host link share said "0.0 %" in the run digest, report.html's
transfer tables and prof.summary()."""

from __future__ import annotations

import json
import os
import re

import fpgaprof
from fpgaprof import report
from fpgaprof.report.digest import digest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACE = os.path.join(ROOT, "tests", "data", "traces", "mbirjax_parallel_128_h100.fpgaprof")


def test_a_nonzero_link_share_is_never_zero_percent():
    prof = fpgaprof.load(TRACE)
    s = json.loads(report.summary_json.dumps(report.collect(prof, trace_path=TRACE)))
    dtoh = next(r for r in s["transfers"]["by_direction"] if r["direction"] == "DtoH")
    # by hand: 12 B / 4.159 µs = 2.885 MB/s; / 63.015 GB/s = 0.00458 %
    assert dtoh["bytes"] == 12
    assert abs(dtoh["link_percent"] - 12 / 4.159e-6 / 63.015384615e9 * 100) < 1e-5
    line = next(ln for ln in digest(s).splitlines() if "host link use:" in ln)
    assert "DtoH <0.1 %" in line and "0.0 %" not in line
    page = report.render_html(s)
    assert "0.0 % of link" not in page and ">0.0 %<" not in page
    assert "&lt;0.1 % of link" in page
    text = prof.summary()
    assert not re.search(r"^\s*DtoH\b.*\s0\.0\s", text, flags=re.M)
