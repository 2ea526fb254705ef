"""The few lines `fpgaprof run` and `fpgaprof report` print at the end: the answer first (per
operation and size: verdict, best card, speedup, why, what it rests on), then what was traced
and the best FPGA offload candidates (regions as whole units, then HLO ops), from summary.json.

Everything comes from the summary dict (report/summary.py: collect), so the terminal shows the
same numbers as report.html; the full tables are in report.html and summary.json.
"""

from __future__ import annotations

from collections.abc import Mapping

from fpgaprof.base.units import (
    fmt_bytes,
    fmt_num,
    fmt_pct,
    fmt_s,
)
from fpgaprof.views.answer_text import answer_lines
from fpgaprof.views.ranking import (
    OP_TEXT_COLUMNS,
    REGION_TEXT_COLUMNS,
    best_rows,
    combined_speedup_text,
    op_labels,
    program_ids,
)
from fpgaprof.views.sections import multi_device
from fpgaprof.views.tables import rows_text

TOP = 5
# The printed tables' columns without the score, the module, the time share, the card time, the
# pattern, what limits the card and the restructured design's energy (a terminal is narrow; the
# speedups and the energy ratio carry their ranges; report.html and summary.json have the rest).
_NARROW = (
    "restructured_energy_verdict",
    "restructured_energy_ratio",
    "score",
    "module",
    "time_share",
    "fpga_total_s",
    "pattern",
    "card_limit",
    "instances",
    "workload_speedup",
)
OP_COLUMNS = tuple(c for c in OP_TEXT_COLUMNS if c not in _NARROW)
REGION_COLUMNS = tuple(c for c in REGION_TEXT_COLUMNS if c not in _NARROW)


def _ranked(
    section: Mapping,
    what: str,
    card: str,
    columns: tuple,
    top: int,
    program_ids: Mapping | None = None,
) -> list[str]:
    """The best `top` rows of a ranked section as a table under its title; op rows
    (`program_ids` given, op_index -> XLA program id) named apart where names repeat."""
    if not section.get("available"):
        return [
            f"FPGA offload on {card}, {what}: not available ({section.get('reason') or 'no rows'})"
        ]
    items = list(section.get("items") or [])
    count = int(section.get("count") or len(items))
    shown = best_rows(items, top)
    if program_ids is not None:
        shown = [dict(r, op=n) for r, n in zip(shown, op_labels(shown, program_ids))]
    extra = len(shown) - min(top, count)
    title = f"FPGA offload on {card}, {what} (best {min(top, count)} of {count}" + (
        f", and {extra} more holding more GPU time)" if extra > 0 else ")"
    )
    text = rows_text(
        shown, title, columns, max_rows=len(shown), more="report.html, summary.json"
    ).splitlines()
    return [title] + text[1:]  # the row count is in the title already


def facts_lines(summary: Mapping) -> list[str]:
    """The host link use per direction (with the link's source), the device-memory peak and
    the warnings count (transfer flags among them), each as summary.json has it."""
    t = summary.get("transfers") or {}
    m = summary.get("memory") or {}
    parts = []
    links = [
        f"{r['direction']} {fmt_pct(r['link_percent'] / 100)}"
        for r in t.get("by_direction") or []
        if r.get("link_percent") is not None
    ]
    if t.get("available") and links:
        src = str(t.get("link_source") or "unknown")
        desc = t.get("link_description")
        parts.append(
            "host link use: "
            + ", ".join(links)
            + " of "
            + fmt_num(t.get("link_bytes_per_s"), "B/s")
            + f" ({src}"
            + (f": {desc}" if desc and desc != src else "")
            + ")"
        )
    elif t.get("available") and any(
        r.get("direction") in ("HtoD", "DtoH") for r in t.get("by_direction") or []
    ):
        parts.append("host link use: n/a (link peak unknown)")
    if m.get("available"):
        at = f" at {fmt_s(m['peak_time_s'])}" if m.get("peak_time_s") is not None else ""
        pool = m.get("pool")
        parts.append(
            f"device memory peak {fmt_bytes(m.get('peak_bytes'))}{at}"
            + (
                f" ({fmt_bytes(pool['bytes'])} of it XLA's preallocated pool: report.html,"
                " Device memory)"
                if pool
                else ""
            )
        )
    ws = summary.get("warnings") or []
    flags = len(t.get("flags") or [])
    parts.append(
        f"{len(ws)} warning{'s' if len(ws) != 1 else ''}"
        + (f" ({flags} transfer flag{'s' if flags != 1 else ''})" if flags else "")
        + (" in report.html" if ws else "")
    )
    return ["  " + "; ".join(parts)]


def _devices_line(summary: Mapping) -> list[str]:
    """With several GPUs, one line: the load balance between them and each one's busy share
    (nothing for one device)."""
    if not multi_device(summary):
        return []
    d = summary["by_device"]
    shares = ", ".join(
        f"device {i['device_id']} {fmt_pct(i.get('busy_fraction'))}" for i in d.get("items") or []
    )
    return [f"  {d['balance']['text']}; busy share of wall: {shares}"]


def digest(summary: Mapping, top: int = TOP) -> str:
    """Text: the trace in one line; with several GPUs, their load balance in a second; host
    link use, memory peak and the warnings count in the next; then the best `top` region and
    op candidates."""
    t, tot = summary.get("trace") or {}, summary.get("totals") or {}
    if t.get("gpu_available") or tot.get("kernel_count"):
        head = (
            f"fpgaprof: {fmt_num(tot.get('kernel_count'))} kernels, "
            f"{fmt_s(tot.get('gpu_busy_s'))} GPU busy "
            f"({fmt_pct(tot.get('gpu_busy_fraction'))} of {fmt_s(t.get('wall_time_s'))} wall), "
            f"{fmt_num(tot.get('transfer_count'))} transfers "
            f"({fmt_bytes(tot.get('transfer_bytes'))})"
        )
    else:
        head = (
            f"fpgaprof: {fmt_s(t.get('wall_time_s'))} wall, no GPU data "
            f"({t.get('unavailable_reason') or 'no GPU trace'})"
        )
    lines = answer_lines(summary, top) + [head] + _devices_line(summary) + facts_lines(summary)
    c = summary.get("candidates") or {}
    card = str(c.get("target") or "the card")
    regions = c.get("regions") or {"available": False, "reason": c.get("reason")}
    lines += _ranked(regions, "regions as whole units", card, REGION_COLUMNS, top)
    lines += _ranked(c, "HLO ops", card, OP_COLUMNS, top, program_ids(summary))
    line = combined_speedup_text(c.get("what_if") or {}, card) if c.get("available") else ""
    if line:
        lines.append(f"  {line}")
    return "\n".join(lines) + "\n"
