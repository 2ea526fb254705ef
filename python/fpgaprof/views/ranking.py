"""How ranked tables read (the FPGA candidates, the roofline), for every view of them: the
columns a printed ranking shows, the Amdahl line under an op ranking, the "best N" rows, why a
roofline point can sit above its roof, and a ranked table as HTML (each value with its range
under it). api.fpga and api.roofline re-export them; the renderers (report.html, job.html,
report.digest) import them from here."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from fpgaprof.base.columns import (
    bound_mark,
    column_order,
    display_label,
    is_range_key,
    range_text,
    ranged_nominal,
)
from fpgaprof.base.markup import esc, html_cell, html_table
from fpgaprof.base.units import fmt_s, fmt_speedup, fmt_speedup_range, is_finite_number

__all__ = [
    "ABOVE_ROOF_MEASURED",
    "ABOVE_ROOF_STATIC",
    "OP_TEXT_COLUMNS",
    "REGION_TEXT_COLUMNS",
    "best_rows",
    "combined_speedup_text",
    "energy_text",
    "has_no_gpu_time",
    "not_estimated_text",
    "op_labels",
    "program_ids",
    "ranked_table_html",
    "source_cell",
    "FOLD_CHARS",
    "SLOW_END_AS_COMPILED_NOTE",
    "row_imbalance_text",
    "row_imbalance_applied_text",
]


def op_labels(rows: list, program_ids: Mapping | None = None) -> list[str]:
    """Each op row's name as a table without a module column prints it: the op, with its module
    where another row has the same op name ("input_scatter_fusion.1 (jit_f)", as prof.summary()
    names ops: one fusion name in several modules), and XLA's program id before it where op and
    module repeat too ("input_scatter_fusion.1 #7 (jit_f)": one function compiled several
    times; from the row or `program_ids`, op_index -> program id)."""
    ops = [str(r.get("op") or "") for r in rows]
    mods = [str(r.get("module") or "") for r in rows]
    pids = [r.get("program_id", (program_ids or {}).get(r.get("op_index"))) for r in rows]
    n_op: dict[str, int] = {}
    n_pair: dict[tuple[str, str], int] = {}
    for o, m in zip(ops, mods):
        n_op[o] = n_op.get(o, 0) + 1
        n_pair[(o, m)] = n_pair.get((o, m), 0) + 1
    out = []
    for o, m, p in zip(ops, mods, pids):
        if n_op[o] < 2 or not m:
            out.append(o)
            continue
        known = isinstance(p, int) and not isinstance(p, bool) and p >= 0
        out.append(f"{o} #{p} ({m})" if n_pair[(o, m)] > 1 and known else f"{o} ({m})")
    return out


def program_ids(summary: Mapping) -> dict:
    """op_index -> XLA program id (None unknown), from summary.json's ops, for op_labels."""
    return {
        o.get("op_index"): o.get("program_id")
        for o in (summary.get("ops") or {}).get("items") or []
    }


# What a marked speedup range (an item's slow_end_as_compiled) means, in the text and the page.
SLOW_END_AS_COMPILED_NOTE = (
    "* slow end as compiled: a gather + scatter whose time the matrix's structure (row "
    "imbalance, column spread) decides, which the shapes do not show (docs/fpga-model.md, "
    '"When the structure decides")'
)


def row_imbalance_text(value: float | None, source: str | None = "given") -> str:
    """The line a table, an estimate or a report shows for the row imbalance ratio its
    restructured scatters take; "" without one. ``source``: "given" (by the user) or
    "arguments" (computed by estimate() from the function's data)."""
    if value is None:
        return ""
    if source == "arguments":
        return f"row imbalance from the arguments: {value:.3g} (HiSpMV's delta)"
    return f"row imbalance given: {value:.3g} (HiSpMV's delta)"


def row_imbalance_applied_text(value: float | None, every_rank: bool = False) -> str:
    """The line a report prints under its answer for the ratio the user gave (a job's: on every
    rank); "" without one."""
    given = row_imbalance_text(value)
    if not given:
        return ""
    return f"{given}, applied to every restructured scatter" + (
        " on every rank" if every_rank else ""
    )


# Why a point can sit above its roof (percent_of_roof > 100): the static bytes are a count of
# what the HLO reads and writes, not of DRAM traffic.
ABOVE_ROOF_STATIC = (
    "above the roof: the static byte count (XLA's cost model: every operand read counted as "
    "a memory read) includes reads the GPU's L2/L1 caches served (an operand read twice, a "
    "broadcast), so the rate from it exceeds DRAM's; trace(counters=True) measures the DRAM "
    "bytes"
)
ABOVE_ROOF_MEASURED = (
    "above the roof by counters: the measured kernels overlapped others (their time is shorter "
    "than the work they shared) or the DRAM peak from the device record is low"
)


def combined_speedup_text(what_if: Mapping, card: str) -> str:
    """The Amdahl line under an op ranking (the table's footer, report.html, the run digest):
    every op that gains (op_speedup > 1) moved to `card` together, with its range, and what
    restructured designs would give; "" when the analysis has no combined figure. `what_if`:
    the FPGA result (``combined_speedup``, ``combined_count``, ``combined_speedup_low/high``,
    ``restructured_combined_speedup``, ``restructured_combined_count``)."""
    combined, count = what_if.get("combined_speedup"), what_if.get("combined_count")
    if not isinstance(combined, (int, float)) or not math.isfinite(combined):
        return ""
    rcount = what_if.get("restructured_combined_count") or 0
    restructured = what_if.get("restructured_combined_speedup")
    tail = ""
    if rcount and isinstance(restructured, (int, float)):
        tail = (
            f"; restructured designs: {rcount} op{'s' if rcount != 1 else ''} gain, "
            f"workload {fmt_speedup(restructured)}"
        )
    if not count:
        return f"no op gains from offloading to {card} as compiled{tail}"
    rng = fmt_speedup_range(
        what_if.get("combined_speedup_low"), what_if.get("combined_speedup_high")
    )
    return (
        f"offloading the {count} op{'s' if count != 1 else ''} that gain to {card}: "
        f"workload speedup {fmt_speedup(combined)}{f' ({rng})' if rng else ''} (Amdahl){tail}"
    )


def has_no_gpu_time(row: Mapping) -> bool:
    """Whether an FPGA ranking row is not estimated because its kernels have no GPU time (no
    timestamps: kernel replay whose counter window could not be paired, a full timestamp
    buffer), not for want of a static cost: the ranking marks such a row ``cost_known`` False
    with no ``estimate_basis`` (not even a bound) and kernels (``kernel_count``) but a
    ``gpu_time_ns`` of 0; its ``estimate_note`` reads "not estimated: its N kernel(s) have no
    GPU time (...)". A row without a static cost has GPU time (or a bound's basis)."""
    gpu = row.get("gpu_time_ns")
    return (
        row.get("cost_known") is False
        and not row.get("estimate_basis")
        and int(row.get("kernel_count") or 0) > 0
        and not (is_finite_number(gpu) and float(gpu or 0) > 0)
    )


def not_estimated_text(what_if: Mapping, no_gpu_time_count: int) -> str:
    """Why the ops of an op ranking without an estimate have none, each reason with its count:
    "24 ops (1.20 ms of GPU time) not estimated: 2 without a static cost, 22 without GPU time
    (no timestamps) (see estimate_note)"; "" when every op is estimated. `what_if`: the FPGA
    result (``not_estimated_count``, ``not_estimated_gpu_ns``); `no_gpu_time_count`: how many
    of them are so for want of GPU time (has_no_gpu_time over all rows), the rest have no static
    cost."""
    total = int(what_if.get("not_estimated_count") or 0)
    if total <= 0:
        return ""
    no_time = min(max(int(no_gpu_time_count), 0), total)
    why = [
        f"{n} {text}"
        for n, text in (
            (total - no_time, "without a static cost"),
            (no_time, "without GPU time (no timestamps)"),
        )
        if n
    ]
    gpu_s = float(what_if.get("not_estimated_gpu_ns") or 0) / 1e9
    return (
        f"{total} op{'s' if total != 1 else ''} ({fmt_s(gpu_s)} of GPU time) not estimated: "
        f"{', '.join(why)} (see estimate_note)"
    )


# The columns print(prof.fpga_candidates(...)) shows (every column stays in the rows), the
# deciding ones first (the verdict in time, the speedups, the verdict in time and energy and the
# card / GPU energy ratios); a column with _low/_high companions prints its range beside it
# ("2.41x (1.6-3.1x)").
OP_TEXT_COLUMNS = (
    "rank",
    "op",
    "verdict",
    "op_speedup",
    "restructured_op_speedup",
    "energy_verdict",
    "energy_ratio",
    "restructured_energy_verdict",
    "restructured_energy_ratio",
    "gpu_time_ns",
    "could_save_ns",
    "workload_speedup",
    "module",
    "score",
    "time_share",
    "fpga_total_s",
    "pattern",
    "card_limit",
    "estimate_note",
)
REGION_TEXT_COLUMNS = (
    "rank",
    "region",
    "verdict",
    "region_speedup",
    "restructured_region_speedup",
    "energy_verdict",
    "energy_ratio",
    "restructured_energy_verdict",
    "restructured_energy_ratio",
    "gpu_time_ns",
    "could_save_ns",
    "workload_speedup",
    "score",
    "time_share",
    "fpga_total_s",
    "instances",
    "estimate_note",
)


def best_rows(rows: list, n: int) -> list:
    """The first `n` rows of a ranked table, and after them every later row that holds more GPU
    time (``gpu_time_ns``) than the least of those: a "best N" list never hides an op or region
    that takes more time than one it shows (an op the model rules out changes nothing, so it
    ranks low, but the reader must still see where the time goes)."""
    shown = list(rows[: max(n, 0)])
    if not shown:
        return shown
    least = min(float(r.get("gpu_time_ns") or 0.0) for r in shown)
    shown += [r for r in rows[len(shown) :] if float(r.get("gpu_time_ns") or 0.0) > least]
    return shown


def energy_text(item: Mapping) -> str:
    """An answer row's verdict in time and energy with its card / GPU energy ratio, as the
    answer tables print it: "wins only on energy, 0.42x (0.21-0.84x)", "unknown: no GPU
    energy"; "" when the row has none."""
    verdict = str(item.get("energy_verdict") or "")
    ratio = item.get("energy_ratio")
    if not is_finite_number(ratio):
        return verdict
    rng = fmt_speedup_range(item.get("energy_ratio_low"), item.get("energy_ratio_high"))
    return f"{verdict}, {fmt_speedup(ratio)}" + (f" ({rng})" if rng else "")


def answer_gpu_time(item: Mapping) -> str:
    """An answer row's GPU time with the calls it sums: "4.19 ms (2 calls)", "624.1 µs";
    "not timed" for a row whose kernels have no GPU time (no timestamps: a kernel-replay
    counter window that could not be paired), which is not a time of 0 s."""
    calls = item.get("calls")
    if not item.get("gpu_time_s"):
        return "not timed"
    text = fmt_s(item.get("gpu_time_s"))
    return f"{text} ({calls} calls)" if isinstance(calls, int) and calls > 1 else text


def enclosing_note(answer: Mapping) -> str:
    """Why the answer leaves out region paths that only enclose others ("" when none)."""
    paths = [str(p) for p in answer.get("enclosing_left_out") or []]
    if not paths:
        return ""
    shown = ", ".join(f"'{p}'" for p in paths[:3]) + (", ..." if len(paths) > 3 else "")
    return (
        f"left out: {len(paths)} region path(s) whose GPU time is all in the paths they "
        f"enclose ({shown}; a nested fpgaprof.trace() under `fpgaprof run` is one): each is the "
        "sum of rows above"
    )


FOLD_CHARS = 36  # text cells longer than this fold (<details>), so a row stays one line or two
_NAME_KEYS = frozenset({"op", "region", "name", "top_op"})  # what a row is: never folded


def source_cell(source: str) -> str:
    """A source location as one line: its end (file name and line) shown, the whole path in
    the title (a long path wrapped in a narrow column made a row of numbers ~75 px tall)."""
    if len(source) <= FOLD_CHARS:
        return f'<code class="src">{esc(source)}</code>'
    return f'<code class="src" title="{esc(source)}">…{esc(source[-(FOLD_CHARS - 1) :])}</code>'


def _ranked_cell(k: str, r: Mapping) -> tuple[str, Any]:
    """A ranked table's cell: the value, and under it its range where the row has one; long
    text folded (its start shown, the rest in a <details>)."""
    v = r.get(k)
    if k == "source" and isinstance(v, str):
        return source_cell(v), v
    if isinstance(v, str) and len(v) > FOLD_CHARS and k not in _NAME_KEYS:
        return (
            f'<details class="note"><summary>{esc(v[: FOLD_CHARS - 1])}…</summary>'
            f"{esc(v)}</details>",
            v,
        )
    disp, val = html_cell(k, v)
    nominal = ranged_nominal(k, r)
    if nominal is not None:
        disp = esc(nominal)
    mark = bound_mark(k, r)
    if mark and disp != "–":
        disp = esc(mark) + disp
    rng = range_text(k, r)
    return (f'{disp}<br><span class="dim">{esc(rng)}</span>' if rng else disp), val


def ranked_table_html(items: list, first: tuple, labels: Mapping[str, str] | None = None) -> str:
    """Ranked rows (the FPGA candidates, op or region) as a sortable HTML table: the columns of
    `first` first (columns.column_order), each value formatted by its column name with its
    range under it (a range's ends are no columns of their own), a bound marked (≥, ≤), every
    text escaped. The report.html and job.html candidate tables."""
    keys: list[str] = []
    for r in items:
        keys += [k for k in r if k not in keys]
    # A range's ends are shown under their value, not as columns of their own.
    keys = [k for k in column_order(keys, first, labels) if not is_range_key(k, keys)]
    headers = [
        (
            display_label(k, labels),
            "num"
            if any(
                isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool) for r in items
            )
            else "text",
        )
        for k in keys
    ]
    rows = [[_ranked_cell(k, r) for k in keys] for r in items]
    return html_table(headers, rows, "wide")
