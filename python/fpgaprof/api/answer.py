"""The answer first: per operation (region) and size, whether moving it to an FPGA card gains,
on which card, by how much, what decides it and what the answer rests on (summary.json's
first key, the top of report.html, the first lines `fpgaprof run` / `report` print).

The report's one analysis ranks the ops and regions on the chosen card and on every other
preset card (overview.report_analysis_options: ``fpga`` and ``fpga_other_targets``); the rows
keep the C++ ranking of the chosen card (what offloading could change), and the answer picks
per row the card with the best verdict, then the best nominal speedup of either scenario.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from fpgaprof.api.fpga import best_rows, deciding_reason, row_speedups
from fpgaprof.base import records
from fpgaprof.base.constants import FULL_ROWS, TOP_ROWS

__all__ = ["SIZE_RE", "operation_and_size", "answer_section", "VERDICT_ORDER"]

# Region names "<operation>/<size>", "<operation>@<size>", "<operation>[<size>]" or
# "<operation> size=<size>" give a region a volume size.
SIZE_RE = re.compile(r"^(?P<op>.+?)(?:[/@]|\s+size=|\[)(?P<size>\d+)\]?$")

# The verdicts, best first: a row's answer over the cards is the best any card gives.
VERDICT_ORDER = (
    "gains",
    "only restructured",
    "unknown: bound only",
    "no",
    "unknown: not estimated",
)


def operation_and_size(name: str) -> tuple[str, int | None]:
    """("forward_project", 128) of a region named "forward_project/128" (SIZE_RE); the whole
    name and None without a size."""
    m = SIZE_RE.match(name)
    return (m.group("op"), int(m.group("size"))) if m else (name, None)


def _key(row: Mapping, unit: str) -> tuple:
    """A row's op or region, the same on every card's ranking of one analysis: the op's index
    (several compilations of one function give ops of one module and op name), else its
    names."""
    if unit == "region":
        return (row.get("region"),)
    if row.get("op_index") is not None:
        return ("op_index", int(row["op_index"]))
    return (row.get("module"), row.get("op"))


def _op_stats(row: Mapping, analysis: Mapping) -> Any:
    """The attribution's op (OpStats) of an op row, by its op_index; None where unknown."""
    ops = getattr(analysis.get("attribution"), "ops", None)
    i = row.get("op_index")
    if ops is None or not isinstance(i, int) or not 0 <= i < len(ops):
        return None
    return ops[i]


def _calls(row: Mapping, stats: Any) -> int | None:
    """The calls a row's GPU time sums: a region's instances; an op's executions whose kernels
    were all timed (a counter replay can leave some runs without timestamps)."""
    if row.get("instances"):
        return int(row["instances"])
    timed = getattr(stats, "timed_executions", None)
    n = int(timed if timed is not None else row.get("executions") or 0)
    return n or None


def enclosing_only(rows: list[dict]) -> list[str]:
    """The region paths whose GPU time is all in the rows of their direct sub-paths (at least
    99.9 % of it): each is the sum of rows already in the answer."""
    by_path = {str(r.get("region") or ""): r for r in rows}
    child_ns: dict[str, float] = {}
    for path in by_path:
        parent, sep, _ = path.rpartition(" > ")
        if sep and parent in by_path:
            child_ns[parent] = child_ns.get(parent, 0.0) + float(
                by_path[path].get("gpu_time_ns") or 0.0
            )
    return [
        p for p, ns in child_ns.items() if ns >= 0.999 * float(by_path[p].get("gpu_time_ns") or 0.0)
    ]


def _rows(fpga: Mapping, unit: str) -> list[dict]:
    """One card's ranked rows of `unit` from the analysis' FPGA result."""
    return [dict(r) for r in fpga.get("regions" if unit == "region" else "candidates") or []]


def _verdict_rank(v: str) -> int:
    return VERDICT_ORDER.index(v) if v in VERDICT_ORDER else len(VERDICT_ORDER)


def _pick(per_card: dict[str, dict]) -> tuple[str, dict] | None:
    """The card whose row gives the best answer: the best verdict, then the highest nominal
    speedup of either scenario, then the highest upper end."""
    best = None
    for card, row in per_card.items():
        sp = row_speedups(row)
        key = (
            -_verdict_rank(str(row.get("verdict") or "")),
            sp[1] if sp else -math.inf,
            sp[3] if sp and math.isfinite(sp[3]) else -math.inf,
        )
        if best is None or key > best[0]:
            best = (key, card, row)
    return (best[1], best[2]) if best else None


def _rests_on(prof: Any, summary: Mapping, ops: list[dict], sizes: list) -> dict:
    """What the answer rests on: the GPU and its measured times, the sizes, and the costs
    (static cost rules, kernel authors' figures, bounds from counters or operands)."""
    dev = summary.get("device") or {}
    gpu = str(dev.get("name") or "") or None
    bases: dict[str, int] = {}
    for r in ops:
        b = r.get("estimate_basis") or "not estimated"
        bases[b] = bases.get(b, 0) + 1
    counters = records.table_len(records.attr_or(prof, "counters")) > 0
    words = {
        "static": "static costs (XLA HLO cost model)",
        "author": "kernel authors' figures",
        "measured bound": "bounds from hardware counters",
        "operand bound": "bounds from operands alone",
        "not estimated": "no estimate",
    }
    costs = ", ".join(
        f"{words.get(b, b)} for {n} op{'s' if n != 1 else ''}"
        for b, n in sorted(bases.items(), key=lambda kv: -kv[1])
    )
    parts = [f"GPU times measured on {gpu}" if gpu else "GPU times from the trace"]
    if sizes:
        parts.append("size" + ("s " if len(sizes) > 1 else " ") + ", ".join(f"{s}³" for s in sizes))
    if costs:
        parts.append(costs)
    parts.append("hardware counters" if counters else "no hardware counters")
    # The speedups charge the host link (the rest of the program stays on the GPU); the model's
    # other case, a whole pipeline moved, is the user's to ask for.
    link = any(float(r.get("transfer_s") or 0.0) > 0 for r in ops)
    if link:
        parts.append(
            "speedups include the host link: each call's inputs and outputs cross PCIe (data "
            "resident on the card: prof.fpga_candidates(inputs_cross_link=False))"
        )
    # The energy ratios: the GPU's joules as NVML measured them (its energy counter, or its
    # power readings where a GPU has no counter or one that never moved), the card's from its
    # loaded watts (docs/fpga-model.md, "Card power").
    energy = summary.get("energy") or {}
    gpu_energy = None
    if energy.get("available"):
        devs = energy.get("devices") or []
        counted = bool(devs) and all(
            d.get("has_counter") and not d.get("flat_counter") for d in devs
        )
        gpu_energy = "counter" if counted else "power readings"
        parts.append(
            (
                "GPU energy from NVML's energy counter"
                if counted
                else "GPU energy from NVML's power readings (1 s averages on Ampere and later)"
            )
            + ", card energy from each card's loaded watts"
        )
    return {
        "gpu": gpu,
        "sizes": sizes,
        "cost_bases": bases,
        "counters": counters,
        "host_link": link,
        "gpu_energy": gpu_energy,
        "text": "; ".join(parts),
    }


def answer_section(
    prof: Any, summary: Mapping, analysis: Mapping | None, top: int = TOP_ROWS
) -> dict:
    """summary.json's `answer`: per region path (operation and size; per op when the trace has
    no region with kernels) the verdict over the cards of `analysis` (the report's one
    analysis: ``fpga`` on the chosen card, ``fpga_other_targets`` on the others), the best
    card, the speedup with its range, the deciding reason, the best card's verdict in time and
    energy with its card / GPU energy ratio (of the scenario of the speedup) and what it rests
    on. `summary`: the trace sections already built (device, candidates). Rows keep the chosen
    card's ranking and follow best_rows(rows, top). {"available": False, "reason": ...} without
    FPGA rows."""
    cand = summary.get("candidates") or {}
    if not cand.get("available"):
        return {"available": False, "reason": cand.get("reason") or "no FPGA candidates"}
    if analysis is None or not analysis.get("fpga"):
        return {"available": False, "reason": "the analysis has no FPGA result"}
    regions = cand.get("regions") or {}
    unit = "region" if regions.get("available") else "op"
    fpgas = [analysis["fpga"]] + list(analysis.get("fpga_other_targets") or [])
    # Each card's rows by key, made plain only for the rows the answer shows.
    tables: dict[str, dict[tuple, Any]] = {}
    for f in fpgas:
        name = str((f.get("target") or {}).get("name") or f"card {len(tables) + 1}")
        tables[name] = {_key(r, unit): r for r in _rows(f, unit)}
    ranked = _rows(analysis["fpga"], unit)
    enclosing: list[str] = []
    if unit == "region":
        # Every region path is an operation (and size) of the answer, so all of them are kept;
        # a path that only encloses others (a nested fpgaprof.trace() under `fpgaprof run` is a
        # region "trace" around each "<op>/<n>") is the sum of its parts, not an operation.
        enclosing = enclosing_only(ranked)
        ranked = [r for r in ranked if str(r.get("region") or "") not in enclosing]
        top = max(top, FULL_ROWS)
    shown = best_rows(ranked, top)
    items = []
    sizes: set[int] = set()
    for r in shown:
        k = _key(r, unit)
        per_card = {c: records.to_plain(t[k]) for c, t in tables.items() if k in t}
        pick = _pick(per_card)
        if pick is None:
            continue
        card, row = pick
        sp = row_speedups(row)
        # No card has an estimate (the best verdict is "not estimated"): the first card of
        # the list is no "best card".
        best_card = None if row.get("verdict") == "unknown: not estimated" else card
        if unit == "region":
            name = str(r.get("region") or "")
            operation, size = operation_and_size(name.split(" > ")[-1])
        else:
            operation, size = str(r.get("op") or ""), None
        if size is not None:
            sizes.add(size)
        bound = row.get("estimate_basis") in ("measured bound", "operand bound")
        stats = _op_stats(r, analysis) if unit == "op" else None
        # The best card's verdict in time and energy, of the scenario its speedup is from.
        e = "restructured_" if sp and sp[0] == "restructured" else ""
        items.append(
            {
                "operation": operation,
                "size": size,
                unit: r.get(unit),
                # an op's module and XLA program id (one op name in several modules, one
                # module compiled several times: the printed answer tells them apart)
                **(
                    {"module": r.get("module"), "program_id": records.program_id(stats)}
                    if unit == "op"
                    else {}
                ),
                "gpu_time_s": float(r.get("gpu_time_ns") or 0.0) * 1e-9,
                "calls": _calls(r, stats),
                "verdict": row.get("verdict"),
                "best_card": best_card,
                "scenario": sp[0] if sp else None,
                "speedup": sp[1] if sp else None,
                "speedup_low": sp[2] if sp and math.isfinite(sp[2]) else None,
                "speedup_high": sp[3] if sp and math.isfinite(sp[3]) else None,
                "bound": bound,
                "slow_end_as_compiled": bool(
                    e and row.get("restructured_structure_dependent") is True
                ),
                "reason": deciding_reason(row),
                "energy_verdict": row.get(f"{e}energy_verdict"),
                "energy_ratio": row.get(f"{e}energy_ratio"),
                "energy_ratio_low": row.get(f"{e}energy_ratio_low"),
                "energy_ratio_high": row.get(f"{e}energy_ratio_high"),
                "verdicts_by_card": {c: per_card[c].get("verdict") for c in per_card},
            }
        )
    op_rows = _rows(analysis["fpga"], "op")
    return {
        "available": True,
        "unit": unit,
        "cards": list(tables),
        "count": len(ranked),
        "items": items,
        "items_left_out": max(len(ranked) - len(items), 0),
        # region paths left out as the sum of the ones they enclose (their parts are items)
        "enclosing_left_out": enclosing,
        "rests_on": _rests_on(prof, summary, op_rows, sorted(sizes)),
        # The user's ratio every card's restructured scatters took (None: not given).
        "row_imbalance": analysis["fpga"].get("row_imbalance"),
    }
