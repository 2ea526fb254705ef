"""The few lines `fpgaprof run` and `fpgaprof report` print at the end: the answer first (per
operation and size: verdict, best card, speedup, why, what it rests on), then what was traced
and the best FPGA offload candidates (regions as whole units, then HLO ops), from summary.json.

Everything comes from the summary dict (report/summary.py: collect), so the terminal shows the
same numbers as report.html; the full tables are in report.html and summary.json.
"""

from __future__ import annotations

from collections.abc import Mapping

from fpgaprof.base.text import terminal_safe
from fpgaprof.base.units import (
    fmt_bytes,
    fmt_num,
    fmt_pct,
    fmt_s,
    fmt_speedup,
    fmt_speedup_range,
)
from fpgaprof.views.ranking import (
    OP_TEXT_COLUMNS,
    REGION_TEXT_COLUMNS,
    SLOW_END_AS_COMPILED_NOTE,
    answer_gpu_time,
    best_rows,
    combined_speedup_text,
    enclosing_note,
    energy_text,
    row_imbalance_applied_text,
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


def _ranked(section: Mapping, what: str, card: str, columns: tuple, top: int) -> list[str]:
    if not section.get("available"):
        return [
            f"FPGA offload on {card}, {what}: not available ({section.get('reason') or 'no rows'})"
        ]
    items = list(section.get("items") or [])
    count = int(section.get("count") or len(items))
    shown = best_rows(items, top)
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
        f"{r['direction']} {r['link_percent']:.1f} %"
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


def _speedup_text(item: Mapping) -> str:
    sp = item.get("speedup")
    if not isinstance(sp, (int, float)):
        return "–"
    rng = fmt_speedup_range(item.get("speedup_low"), item.get("speedup_high"))
    mark = "≤ " if item.get("bound") else ""
    star = "*" if item.get("slow_end_as_compiled") else ""
    return f"{mark}{fmt_speedup(sp)}" + (f" ({rng}){star}" if rng else "")


def answer_lines(summary: Mapping, top: int = TOP) -> list[str]:
    """The answer first (summary.json's `answer`): per operation and size the verdict, the best
    card, the speedup with its range, its verdict in time and energy with the energy ratio, and
    what decides it, then what the answer rests on."""
    a = summary.get("answer") or {}
    if not a.get("available"):
        return [f"FPGA answer: not available ({a.get('reason') or 'no FPGA candidates'})"]
    items = best_rows(
        [dict(i, gpu_time_ns=(i.get("gpu_time_s") or 0.0) * 1e9) for i in a.get("items") or []],
        top,
    )
    unit = "operation (region) and size" if a.get("unit") == "region" else "HLO op"
    head = f"FPGA answer per {unit}, best of {len(a.get('cards') or [])} cards:"
    cols = [
        "operation",
        "size",
        "gpu time (kernels)",
        "verdict",
        "best card",
        "speedup",
        "energy",
        "why",
    ]
    rows = [
        [
            str(i.get("operation") or ""),
            f"{i['size']}³" if i.get("size") else "–",
            answer_gpu_time(i),
            str(i.get("verdict") or ""),
            str(i.get("best_card") or "–"),
            _speedup_text(i),
            energy_text(i),
            str(i.get("reason") or ""),
        ]
        for i in items
    ]
    # names from traces may hold control characters: one line per row whatever they hold
    rows = [[terminal_safe(v, keep="") for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[k]) for r in rows]) for k, c in enumerate(cols)]
    out = [head, "  " + "  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()]
    out += ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    held = len(a.get("items") or [])
    more, beyond = held - len(items), int(a.get("count") or 0) - held
    if more > 0 or beyond > 0:
        where = [f"{more} more in summary.json"] if more > 0 else []
        where += [f"{beyond} with less GPU time in prof.fpga_candidates()"] if beyond > 0 else []
        out.append("  … " + "; ".join(where))
    if a.get("enclosing_left_out"):
        out.append("  " + terminal_safe(enclosing_note(a), keep=""))
    if any(i.get("slow_end_as_compiled") for i in items):
        out.append(f"  {SLOW_END_AS_COMPILED_NOTE}")
    if given := row_imbalance_applied_text(a.get("row_imbalance")):
        out.append(f"  {given}")
    rests = (a.get("rests_on") or {}).get("text")
    if rests:
        out.append("  rests on: " + terminal_safe(str(rests), keep=""))
    return out


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
    lines += _ranked(c, "HLO ops", card, OP_COLUMNS, top)
    line = combined_speedup_text(c.get("what_if") or {}, card) if c.get("available") else ""
    if line:
        lines.append(f"  {line}")
    return "\n".join(lines) + "\n"
