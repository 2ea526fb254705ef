"""The answer in text (summary.json's `answer`): per operation and size the verdict, the best
card, the speedup with its range, the energy verdict and what decides it, then what it rests
on. The first lines `fpgaprof run` / `report` print (report.digest) and the first lines of
prof.summary() (api.profile), one text for both.
"""

from __future__ import annotations

from collections.abc import Mapping

from fpgaprof.base.text import terminal_safe
from fpgaprof.base.units import fmt_speedup, fmt_speedup_range
from fpgaprof.views.ranking import (
    SLOW_END_AS_COMPILED_NOTE,
    answer_gpu_time,
    best_rows,
    enclosing_note,
    energy_text,
    op_labels,
    row_imbalance_applied_text,
)

TOP = 5


def speedup_parts(item: Mapping) -> tuple[str, str]:
    """An answer item's speedup as the text and report.html show it: the figure ("≤ 0.80x" for
    a bound) and what follows it, its range with the star of a slow end as compiled and the
    design it is for ("(0.50-1.3x)* as compiled"; no star without a range); ("–", "") without
    a speedup."""
    sp = item.get("speedup")
    if not isinstance(sp, (int, float)):
        return "–", ""
    rng = fmt_speedup_range(item.get("speedup_low"), item.get("speedup_high"))
    mark = "≤ " if item.get("bound") else ""
    star = "*" if item.get("slow_end_as_compiled") else ""
    # which design the figure is for: "restructured" is a dataflow redesign, not the op as XLA
    # compiled it
    scen = str(item.get("scenario") or "")
    return f"{mark}{fmt_speedup(sp)}", " ".join(
        x for x in (f"({rng}){star}" if rng else "", scen) if x
    )


def _speedup_text(item: Mapping) -> str:
    return " ".join(x for x in speedup_parts(item) if x)


def answer_lines(summary: Mapping, top: int = TOP, more_in: str = "summary.json") -> list[str]:
    """The answer first (summary.json's `answer`): per operation and size the verdict, the best
    card, the speedup with its range, its verdict in time and energy with the energy ratio, and
    what decides it, then what the answer rests on. `more_in`: where the rows past `top` are
    (prof.summary() has no summary.json at hand)."""
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
    # HLO ops (a trace without regions): one op name in several modules told apart
    names = op_labels(items) if a.get("unit") != "region" else None
    rows = [
        [
            names[k] if names else str(i.get("operation") or ""),
            f"{i['size']}³" if i.get("size") else "–",
            answer_gpu_time(i),
            str(i.get("verdict") or ""),
            str(i.get("best_card") or "–"),
            _speedup_text(i),
            energy_text(i),
            str(i.get("reason") or ""),
        ]
        for k, i in enumerate(items)
    ]
    # names from traces may hold control characters: one line per row whatever they hold
    rows = [[terminal_safe(v, keep="") for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[k]) for r in rows]) for k, c in enumerate(cols)]
    out = [head, "  " + "  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()]
    out += ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    held = len(a.get("items") or [])
    more, beyond = held - len(items), int(a.get("count") or 0) - held
    if more > 0 or beyond > 0:
        where = [f"{more} more in {more_in}"] if more > 0 else []
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
