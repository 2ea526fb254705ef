"""How ranked tables read (the FPGA candidates, the roofline), for every view of them: the
columns a printed ranking shows, the Amdahl line under an op ranking, the "best N" rows, and
why a roofline point can sit above its roof. api.fpga and api.roofline re-export them; the
renderers (report.html, report.digest) import them from here."""

from __future__ import annotations

import math
from collections.abc import Mapping

from fpgaprof.base.units import fmt_speedup, fmt_speedup_range, is_finite_number

__all__ = [
    "ABOVE_ROOF_MEASURED",
    "ABOVE_ROOF_STATIC",
    "OP_TEXT_COLUMNS",
    "REGION_TEXT_COLUMNS",
    "best_rows",
    "combined_speedup_text",
    "energy_text",
]


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
