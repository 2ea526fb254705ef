"""What a column's name says about its values, and how a cell of it reads.

Analysis rows carry their units in their keys (``*_ns``, ``*_s``, ``*bytes*``, ``*_per_s``,
``*speedup``, ``*_fraction``); every table fpgaprof prints or renders (print(), Jupyter,
report.html, the run digest) formats a value by its column name through ``cell`` and orders
its columns through ``column_order``, so one value reads alike everywhere.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fpgaprof.base.core import core
from fpgaprof.base.units import (
    fmt_bytes,
    fmt_j,
    fmt_num,
    fmt_pct,
    fmt_s,
    fmt_s_nominal,
    fmt_s_range,
    fmt_speedup,
    fmt_speedup_range,
    is_finite_number,
)

__all__ = [
    "STATIC_COST_FIELDS",
    "range_keys",
    "range_text",
    "ranged_nominal",
    "BOUND_BASES",
    "bound_mark",
    "is_range_key",
    "is_time_key",
    "is_ratio_key",
    "display_label",
    "UNKNOWN_WHEN_ZERO",
    "cell",
    "TOTAL_LABELS",
    "TEXT_FIRST",
    "TEXT_COLUMNS",
    "column_order",
    "result_columns",
]


@functools.cache
def _result_ranges() -> dict[str, tuple[str, str]]:
    """Every range field of the C++ result tables (fpgaprof._core.analysis.result_fields): its
    nominal's name -> the names of its low and high ends."""
    return {
        f.name: (f.low_name, f.high_name)
        for table, _ in core.analysis.result_tables()
        for f in core.analysis.result_fields(table)
        if f.range
    }


def result_columns(table: str, lead: Sequence[str] = ()) -> tuple[str, ...]:
    """The keys a row of C++ result table `table` has (core.analysis.result_fields; a range
    field also gives its low and high ends), after `lead` (keys the Python side adds): the
    columns of an empty table's to_pandas(), so that a script's df["score"] works on it too."""
    out = list(lead)
    for f in core.analysis.result_fields(table):
        for k in (f.name, f.low_name, f.high_name) if f.range else (f.name,):
            if k not in out:
                out.append(k)
    return tuple(out)


def range_keys(k: str) -> tuple[str, str]:
    """The columns holding column k's range, as the result tables name them: op_speedup ->
    op_speedup_low, op_speedup_high; card_time_s -> card_time_low_s, card_time_high_s. A column
    no table has (a Python-made one) follows the same rule."""
    known = _result_ranges().get(k)
    if known is not None:
        return known
    if k.endswith("_s") and not k.endswith("per_s"):
        stem = k[:-2]
        return f"{stem}_low_s", f"{stem}_high_s"
    return f"{k}_low", f"{k}_high"


def range_text(k: str, row: Mapping) -> str:
    """The range of column k in `row` as printed ("1.6-3.1x", "0.81-2.1 ms"); "" when the row
    has none."""
    lo_k, hi_k = range_keys(k)
    if lo_k not in row or hi_k not in row:
        return ""
    if k.lower().endswith("speedup") or is_ratio_key(k):
        return fmt_speedup_range(row.get(lo_k), row.get(hi_k))
    if is_time_key(k):
        return fmt_s_range(row.get(lo_k), row.get(hi_k))
    if is_energy_key(k):
        lo, hi = row.get(lo_k), row.get(hi_k)
        return "" if lo is None or hi is None else f"{fmt_j(lo)}-{fmt_j(hi)}"
    return ""


def ranged_nominal(k: str, row: Mapping) -> str | None:
    """Column k's value in `row` as printed beside its range where the two could differ in
    unit: a time in the unit of its range (fmt_s_nominal: "0.980 s" beside "0.81-1.2 s", not
    "980.00 ms"); None where cell() prints it (no range, not a time)."""
    if not (is_time_key(k) and k.endswith("_s")) or not is_finite_number(row.get(k)):
        return None
    lo, hi = (row.get(e) for e in range_keys(k))
    if not (is_finite_number(lo) and is_finite_number(hi)):
        return None
    return fmt_s_nominal(row.get(k), lo, hi)


# The values of a roofline point (op, kernel, region) built on its static cost, besides its
# roof fraction (`roof_fraction` in summary.json, `percent_of_roof` in prof.roofline()): a 0
# there is no measured zero when the cost is unknown (cost_known False).
STATIC_COST_FIELDS = (
    "flops",
    "bytes",
    "intensity",
    "achieved_flops_per_s",
    "achieved_bytes_per_s",
)

# estimate_basis values whose times are lower bounds and speedups upper bounds (an op without a
# static cost, bounded by its counters or by its operands and results: docs/fpga-model.md).
BOUND_BASES = ("measured bound", "operand bound")
_BOUNDED_TIMES = (
    "card_time_s",
    "fpga_total_s",
    "restructured_card_time_s",
    "restructured_fpga_total_s",
    "card_compute_s",
    "card_memory_s",
)


def bound_mark(k: str, row: Mapping) -> str:
    """ "≤ " before a speedup and "≥ " before a card time of a row that is only a bound
    (estimate_basis in BOUND_BASES), "≤ " before what it could save (could_save_ns) of a bound
    or of a row without an estimate (all of its GPU time, at most), else ""."""
    if k == "could_save_ns":
        if not row.get(k):  # ruled out: nothing to save, no bound to mark
            return ""
        return (
            "≤ "
            if row.get("estimate_basis") in BOUND_BASES
            or row.get("cost_known") is False
            or row.get("estimated") is False
            else ""
        )
    if row.get("estimate_basis") not in BOUND_BASES:
        return ""
    if k.lower().endswith("speedup"):
        return "≤ "
    return "≥ " if k in _BOUNDED_TIMES else ""


def is_range_key(k: str, keys: Iterable[str]) -> bool:
    """True for a column that is the _low/_high end of another column in `keys` (shown with
    that column, not on its own)."""
    keys = set(keys)
    for suffix in ("_low", "_high"):
        if k.endswith(suffix) and k[: -len(suffix)] in keys:
            return True
        if k.endswith(suffix + "_s") and k[: -len(suffix) - 2] + "_s" in keys:
            return True
    return False


def is_time_key(k: str) -> bool:
    """Columns in seconds or ns (by name): shown auto-scaled ("10.3 µs")."""
    kl = k.lower()
    return (
        (kl.endswith("_s") and not kl.endswith("per_s"))
        or kl.endswith("seconds")
        or kl.endswith("_ns")
    )


def is_ratio_key(k: str) -> bool:
    """Card / GPU energy ratios (by name: energy_ratio): shown as a factor ("0.42x")."""
    return k.lower().endswith("energy_ratio")


def is_energy_key(k: str) -> bool:
    """Columns in joules (by name: card_energy_j): shown auto-scaled ("2.58 mJ")."""
    return k.lower().endswith("_j")


def display_label(k: str, labels: Mapping[str, str] | None = None) -> str:
    """The header shown for column `k`: labels[k] when given, else the key without its time
    or energy unit suffix for columns whose values are auto-scaled ("gpu_time_ns" shows
    "10.3 µs", so its header is "gpu_time"; "card_energy_j" shows "2.58 mJ"); the key itself
    stays the name in JSON and pandas."""
    if labels and k in labels:
        return labels[k]
    kl = k.lower()
    if is_time_key(k):
        for suffix in ("_seconds", "_ns", "_s"):
            if kl.endswith(suffix) and len(k) > len(suffix):
                return k[: -len(suffix)]
    if is_energy_key(k) and len(k) > 2:
        return k[:-2]
    return k


# Ceilings the analysis does not know are 0 in its rows (docs/roofline.md: an unknown GPU has
# no FLOP/s roof): shown as "–", not as a ridge of 0 FLOP/B.
UNKNOWN_WHEN_ZERO = frozenset({"ridge", "ridge_flops_per_byte", "roof_flops_per_s"})


def cell(k: str, v: Any) -> tuple[str, Any]:
    """(text, sort value) of value `v` in column `k`, formatted by the column's name: times
    auto-scaled, bytes, rates (B/s, FLOP/s), shares in percent, speedups ("1.91x"), lists and
    dicts as JSON, None as "–". Plain text (report.html escapes it: base.markup.html_cell)."""
    if isinstance(v, bool) or v is None:
        return (fmt_num(v) if isinstance(v, bool) else "–", "" if v is None else int(v))
    if isinstance(v, (int, float)):
        kl = k.lower()
        if kl in UNKNOWN_WHEN_ZERO and v == 0:
            return "–", v
        if kl.endswith("speedup") or is_ratio_key(k):
            return fmt_speedup(v), v
        if kl.endswith("per_s"):  # a rate: B/s, FLOP/s
            unit = "B/s" if "byte" in kl else "FLOP/s" if "flop" in kl else "/s"
            return fmt_num(float(v), unit), v
        if kl.endswith("_ns"):
            return fmt_s(float(v) / 1e9), v
        if is_time_key(k):
            return fmt_s(float(v)), v
        if is_energy_key(k):
            return fmt_j(float(v)), v
        if "bytes" in kl:
            return fmt_bytes(v), v
        if kl in ("share", "score") or kl.endswith("_fraction") or kl.endswith("_share"):
            return (f"{v:.3g}" if kl == "score" else fmt_pct(float(v))), v
        return fmt_num(v), v
    if isinstance(v, (list, dict)):
        t = json.dumps(v)
        return t, t
    return str(v), str(v)


# Headers of the FLOPs and bytes of roofline and FPGA-candidate rows: every execution together
# (prof.ops gives one execution's: "FLOPs/exec"); the keys stay "flops" and "bytes".
TOTAL_LABELS = {"flops": "FLOPs (total)", "bytes": "bytes (total)"}

# Columns a printed table shows first (those a row has, at most TEXT_COLUMNS of them): what it is,
# its rank and score, what offloading would give, then time, cost and the roofline.
TEXT_FIRST = (
    "rank",
    "op",
    "region",
    "name",
    "score",
    "workload_speedup",
    "op_speedup",
    "region_speedup",
    "time_share",
    "gpu_time_ns",
    "time_ns",
    "total_ns",
    "fpga_total_s",
    "card_time_s",
    "transfer_s",
    "flops",
    "bytes",
    "intensity",
    "percent_of_roof",
    "bound",
    "pattern",
    "instances",
    "executions",
    "estimate_note",
)
TEXT_COLUMNS = 10


def column_order(
    keys: Sequence[str], first: Sequence[str] = (), labels: Mapping[str, str] | None = None
) -> list[str]:
    """The one column order of print(), notebook HTML and report.html's ranked tables: the
    `first` columns the rows have (a table's print() columns), then the TEXT_FIRST ones, then
    the rest in record order. A time column whose header would repeat an earlier one's is left
    out of the view (roofline rows carry time_ns and time_s, both headed "time": the same
    value in two units); the rows keep it."""
    out: list[str] = []
    for k in list(first) + list(TEXT_FIRST) + list(keys):
        if k in keys and k not in out:
            out.append(k)
    shown: set[str] = set()
    kept = []
    for k in out:
        label = display_label(k, labels)
        if label in shown and is_time_key(k):
            continue
        shown.add(label)
        kept.append(k)
    return kept
