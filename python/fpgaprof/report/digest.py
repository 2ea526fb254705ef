"""The few lines `fpgaprof run` and `fpgaprof report` print at the end: what was traced and
the best FPGA offload candidates (regions as whole units, then HLO ops), from summary.json.

Everything comes from the summary dict (report/summary.py: collect), so the terminal shows the
same numbers as report.html; the full tables are in report.html and summary.json.
"""
from __future__ import annotations

from typing import Mapping

from fpgaprof.fpga import OP_TEXT_COLUMNS, REGION_TEXT_COLUMNS, combined_speedup_text
from fpgaprof.report.html import fmt_bytes, fmt_num, fmt_pct, fmt_s
from fpgaprof.report.notebook import rows_text

TOP = 5
# The printed tables' columns without the score and the card time (a terminal is narrow).
_NARROW = ("score", "fpga_total_s")
OP_COLUMNS = tuple(c for c in OP_TEXT_COLUMNS if c not in _NARROW)
REGION_COLUMNS = tuple(c for c in REGION_TEXT_COLUMNS if c not in _NARROW)


def _ranked(section: Mapping, what: str, card: str, columns: tuple, top: int) -> list[str]:
    if not section.get("available"):
        return [f"FPGA offload on {card}, {what}: not available ({section.get('reason') or 'no rows'})"]
    items = list(section.get("items") or [])
    count = int(section.get("count") or len(items))
    title = f"FPGA offload on {card}, {what} (best {min(top, count)} of {count})"
    text = rows_text(items[:top], title, columns, max_rows=top,
                     more="report.html, summary.json").splitlines()
    return [title] + text[1:]  # the row count is in the title already


def digest(summary: Mapping, top: int = TOP) -> str:
    """Text: the trace in one line, then the best `top` region and op candidates."""
    t, tot = summary.get("trace") or {}, summary.get("totals") or {}
    if t.get("gpu_available") or tot.get("kernel_count"):
        head = (f"fpgaprof: {fmt_num(tot.get('kernel_count'))} kernels, "
                f"{fmt_s(tot.get('gpu_busy_s'))} GPU busy "
                f"({fmt_pct(tot.get('gpu_busy_fraction'))} of {fmt_s(t.get('wall_time_s'))} wall), "
                f"{fmt_num(tot.get('transfer_count'))} transfers ({fmt_bytes(tot.get('transfer_bytes'))})")
    else:
        head = (f"fpgaprof: {fmt_s(t.get('wall_time_s'))} wall, no GPU data "
                f"({t.get('unavailable_reason') or 'no GPU trace'})")
    lines = [head]
    c = summary.get("candidates") or {}
    card = str(c.get("target") or "the card")
    regions = c.get("regions") or {"available": False, "reason": c.get("reason")}
    lines += _ranked(regions, "regions as whole units", card, REGION_COLUMNS, top)
    lines += _ranked(c, "HLO ops", card, OP_COLUMNS, top)
    line = combined_speedup_text(c.get("what_if") or {}, card) if c.get("available") else ""
    if line:
        lines.append(f"  {line}")
    return "\n".join(lines) + "\n"
