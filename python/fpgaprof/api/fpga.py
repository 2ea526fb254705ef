"""FPGA offload candidates and the what-if model (docs/fpga-model.md), and HLO export for HLS
(``fpgaprof.fpga``). The cards (presets, card files, FpgaTarget) are analysis.targets'; the
export of one instruction is analysis.hlo_export's.

``fpga_candidates(prof, target="alveo-u55c")`` ranks HLO ops (``by="region"``: user regions)
by what offloading could change (``could_save_ns``: the GPU time it could save at the fast end
of its range; an op without an estimate could save all of its GPU time), then GPU time, then a
documented score, and estimates each one's time on the card, the host-link transfer cost and
the end-to-end speedup (Amdahl). Every input of the score is a column of the returned table.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from fpgaprof.analysis import hlo, hlo_export
from fpgaprof.analysis.hlo_export import HloText, hlo_module_for_op
from fpgaprof.analysis.targets import (
    CALIBRATED_FIELDS,
    FpgaTarget,
    card_file,
    presets,
    resolve_target,
    row_imbalance_arg,
    target_spec,
)
from fpgaprof.analysis.trace_analysis import store_of
from fpgaprof.api.dataflow import export_dataflow
from fpgaprof.api.fpga_data import DataImbalance, as_jitted, data_row_imbalance, row_imbalance
from fpgaprof.api.roofline import Table, analyze, no_rows_note
from fpgaprof.base.columns import result_columns
from fpgaprof.base.constants import DEFAULT_TARGET
from fpgaprof.base.core import core
from fpgaprof.base.errors import InvalidArgumentError
from fpgaprof.base.units import fmt_j, fmt_pct, fmt_s, fmt_s_ranged
from fpgaprof.views.ranking import (
    OP_TEXT_COLUMNS,
    REGION_TEXT_COLUMNS,
    best_rows,
    combined_speedup_text,
    row_imbalance_text,
)

__all__ = [
    "FpgaTarget",
    "Estimate",
    "HloText",
    "presets",
    "target_spec",
    "card_file",
    "resolve_target",
    "fpga_candidates",
    "combined_speedup_text",
    "estimate",
    "estimate_hlo",
    "row_imbalance",
    "row_imbalance_from_args",
    "DataImbalance",
    "export_hlo",
    "hlo_module_for_op",
    "CALIBRATED_FIELDS",
    "OP_TEXT_COLUMNS",
    "REGION_TEXT_COLUMNS",
    "best_rows",
    "deciding_reason",
    "row_speedups",
    "ESTIMATE_TEXT_COLUMNS",
    "RESTRUCTURED_ONCHIP_BASIS",
    "restructured_basis",
]


def fpga_candidates(
    prof: Any,
    target: str | Mapping | FpgaTarget = DEFAULT_TARGET,
    *,
    by: str = "op",
    inputs_cross_link: bool = True,
    workload_s: float | None = None,
    row_imbalance: float | None = None,
    **kwargs: Any,
) -> Table:
    """HLO ops (``by="op"``, default) or user regions (``by="region"``) ranked by what
    offloading them could change, best first: ``could_save_ns`` (the GPU time offloading could
    save at the fast end of the range of either scenario; 0 for a row the model rules out; all
    of its GPU time for a row without an estimate or bound), then GPU time, then ``score``
    (docs/fpga-model.md, "Ranking"). ``verdict`` says the answer in words: "gains", "only
    restructured", "no", "unknown: bound only" or "unknown: not estimated".

    ``by="region"``: one row per fpgaprof.region() path ("outer > inner", nested regions
    included, instances summed), the region's ops moved to the card together and data crossing
    the host link at the jitted calls inside it (docs/fpga-model.md, "Regions"). Columns: rank,
    region, name, depth, instances, kernel_count, op_count, top_op, estimate_note, gpu_time_ns,
    time_share, estimated_share, intensity, memory_boundness, pattern_affinity,
    working_set_bytes, sram_bytes, fits_on_chip, onchip_factor, host_bytes_per_instance,
    link_factor, score, module_calls, module_calls_counted, flops, bytes, random_access_bytes
    (bytes of its gather/scatter ops), memory_efficiency (the share of the card's memory peak its
    bytes got, the ops' efficiencies weighted by their bytes), card_compute_s,
    card_memory_s, card_latency_s, kept_gpu_s, card_time_s, transfer_bytes, transfer_s,
    fpga_total_s, region_speedup, workload_speedup. Nested paths overlap, so region savings
    are not combined.

    ``by="op"``: columns rank, op, module, source,
    pattern, precision, executions, cost_known, estimate_basis, measured_coverage,
    estimate_note, gpu_time_ns, time_share, intensity, ridge, memory_boundness,
    pattern_affinity, working_set_bytes, sram_bytes, fits_on_chip, onchip_factor,
    host_bytes_per_call, link_factor, score, and the what-if (docs/fpga-model.md): flops,
    bytes, stream_bytes, random_bytes, memory_efficiency (the share of the card's memory peak
    its traffic gets), card_limit, card_compute_s, card_memory_s, card_latency_s, card_time_s,
    transfer_bytes, transfer_s, fpga_total_s, op_speedup, workload_speedup (each time and
    speedup with its _low/_high range), the restructured_* columns and scenario.

    Energy beside time (op and region rows; docs/fpga-model.md, "Energy verdict"):
    ``card_energy_j`` / ``restructured_card_energy_j`` (the card times at the card's loaded_w),
    ``gpu_energy_j`` (an op: the joules the trace's energy analysis attributes to it by busy-time
    share, an attribution; a region: the same attribution of the kernels launched in it, its
    sub-regions' included, not its measured window, which energy_report(by="region") gives) with
    ``gpu_energy_coverage`` (the sampled share), ``energy_ratio`` and
    ``restructured_energy_ratio`` (card / GPU joules, with _low/_high), and
    ``energy_verdict`` / ``restructured_energy_verdict``: "gains", "wins only on energy",
    "loses", "uncertain", or "unknown: not estimated" / "unknown: no GPU energy" (no NVML
    samples: every GPU figure None, never 0) / "unknown: no card energy".

    ``restructured_basis`` (op and region rows) labels the restructured figures of an op whose
    data-dependent accesses a restructured design serves on chip (or a region with such
    accesses): RESTRUCTURED_ONCHIP_BASIS ("a designer's target: the on-chip parallelism of
    published HBM sparse designs ..."); "" for the others. The printed table says so in its
    footer (``basis_note``).

    ``estimate_basis`` says what a row's what-if rests on: "static" (the cost model's rule),
    "author" (a custom kernel's own figures), or, for ops whose static cost is unknown
    (``cost_known`` False: a custom call the cost model has no rule for), a bound: "measured
    bound" (counters over ``measured_coverage`` of its time) or "operand bound" (its operands
    and results alone), where every card time is a lower bound and every speedup an upper
    bound; None when not even that is known (every field built on FLOPs or bytes NaN). Such ops
    have no score (NaN, ``fits_on_chip`` None), ``estimate_note`` says why, they take their
    place by what their bound leaves possible (all of their GPU time without one) and stay out
    of the combined speedup; ``scenario`` is "neither" when even their
    upper bounds stay under 1 at the fast ends, else "". ``Table.meta`` holds the target, the
    combined speedup, ``not_estimated_count`` / ``not_estimated_gpu_ns``, ``bounded_count`` and
    ``ruled_out_count`` / ``ruled_out_gpu_ns``.

    ``row_imbalance``: the row imbalance ratio (HiSpMV's delta, from row_imbalance()) of the
    matrix the traced program multiplies, applied to every restructured scatter served on chip
    in both rankings, as estimate() applies it (docs/fpga-model.md, "Row imbalance"); None: not
    known. ``Table.meta["row_imbalance"]`` and the printed footer say it."""
    key = {"op": "candidates", "ops": "candidates", "region": "regions", "regions": "regions"}.get(
        by
    )
    if key is None:
        raise InvalidArgumentError(
            f"by={by!r}: use 'op' (HLO ops) or 'region' (fpgaprof.region paths)"
        )
    res = analyze(
        prof,
        target=target,
        inputs_cross_link=inputs_cross_link,
        workload_s=workload_s,
        row_imbalance=row_imbalance,
        **kwargs,
    )
    f = res["fpga"]
    t = Table([dict(r) for r in f.get(key, [])])
    t.schema = result_columns("fpga_region_row" if key == "regions" else "fpga_op_row")
    card = (f.get("target") or {}).get("name") or "the card"
    if key == "regions":
        t.meta = {
            k: f[k] for k in ("target", "workload_ns", "gpu_kernel_ns", "row_imbalance") if k in f
        }
        t.title = f"FPGA offload candidates on {card}: region paths as whole units"
        t.display = REGION_TEXT_COLUMNS
        t.empty_note = no_rows_note(
            prof, "no fpgaprof.region() with GPU kernels inside", regions=True
        )
        lines = [basis_note(t), row_imbalance_text(f.get("row_imbalance"))]
        t.footer = "\n".join(f"  {x}" for x in lines if x)
    else:
        t.meta = {k: v for k, v in f.items() if k not in ("candidates", "regions")}
        t.title = f"FPGA offload candidates on {card}: HLO ops"
        t.display = OP_TEXT_COLUMNS
        t.empty_note = no_rows_note(prof, "no kernel was attributed to an HLO op")
        if t:
            lines = [
                combined_speedup_text(f, card),
                basis_note(t),
                row_imbalance_text(f.get("row_imbalance")),
            ]
            t.footer = "\n".join(f"  {x}" for x in lines if x)
    return t


def row_speedups(row: Mapping) -> tuple[str, float, float, float] | None:
    """The scenario a row's answer rests on and its speedup with the range: ("as compiled" or
    "restructured", nominal, low, high), the better nominal of the two; None when not estimated
    or when the card cannot run it (no card time in either design). Works for op rows
    (op_speedup) and region rows (region_speedup)."""
    unit = "region" if "region_speedup" in row else "op"
    best = None
    for label, key, card in (
        ("as compiled", f"{unit}_speedup", "card_time_s"),
        ("restructured", f"restructured_{unit}_speedup", "restructured_card_time_s"),
    ):
        v, t = row.get(key), row.get(card)
        if not isinstance(v, (int, float)) or not math.isfinite(v):
            continue
        # a speedup without a card time (0: a precision the card cannot run) has no figure
        if card in row and not (isinstance(t, (int, float)) and math.isfinite(t)):
            continue
        lo, hi = row.get(f"{key}_low"), row.get(f"{key}_high")
        cand = (
            label,
            float(v),
            float(lo) if isinstance(lo, (int, float)) else math.nan,
            float(hi) if isinstance(hi, (int, float)) else math.nan,
        )
        if best is None or cand[1] > best[1]:
            best = cand
    return best


def deciding_reason(row: Mapping) -> str:
    """What decides a row's verdict, in a few words: the host link or the card's limit against
    the GPU time, or why there is no estimate. A region's card time that holds kernels kept on
    the GPU (no cost: kept_gpu_s) says how much, and its link time how much of its bytes are
    hand-offs between those kernels and the card (handoff_bytes): the figures are then those of a
    split design, not of the whole operation on the card."""
    gpu_s = float(row.get("gpu_time_ns") or 0.0) * 1e-9
    verdict = str(row.get("verdict") or "")
    if verdict.startswith("unknown"):
        basis = row.get("estimate_basis")
        note = str(row.get("estimate_note") or "")
        why = note.split("(", 1)[1].split(")", 1)[0] if "(" in note else "no static cost"
        if basis == "measured bound":
            return f"bound only ({why}): counters give the card time's lower bound"
        if basis == "operand bound":
            return f"bound only ({why}): FLOPs unknown, its operands alone give the bound"
        return f"not estimated: {note.removeprefix('not estimated: ') or 'no cost'}"

    def num(key: str) -> float:
        v = row.get(key)
        return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else math.nan

    transfer = num("transfer_s")
    t_lo, t_hi = num("transfer_low_s"), num("transfer_high_s")
    # The card time of the faster scenario (as compiled or restructured), with its own range.
    cards = [
        (num(f"{p}card_time_s"), num(f"{p}card_time_low_s"), num(f"{p}card_time_high_s"), design)
        for p, design in (("", "as-compiled"), ("restructured_", "restructured"))
    ]
    cards = [c for c in cards if math.isfinite(c[0])]
    best_card, c_lo, c_hi, shown = min(cards) if cards else (math.nan, math.nan, math.nan, "")
    if verdict == "no" and not cards:
        # no card time in either design: the card cannot run the op (a precision it has no
        # DSP mapping for), whatever the link would take
        return str(row.get("estimate_note") or "the card cannot run it")
    if verdict == "no" and not gpu_s > 0:
        return "no GPU time to compare with (its kernels were not timed)"
    # What decides "no" must hold at the card's fast end, not only at the nominal: compare the
    # fastest end of either design (the one shown is the faster at the nominal; the other's
    # range may reach further down).
    t_fast = t_lo if math.isfinite(t_lo) else transfer
    c_fast, fast_design = min(
        ((lo if math.isfinite(lo) else nominal, design) for nominal, lo, _, design in cards),
        default=(math.nan, ""),
    )
    # the other design's fast end, named where it is the one that reaches below the shown one's
    other_fast = (
        f"; the {fast_design} design's fast end {fmt_s(c_fast)}"
        if fast_design != shown and math.isfinite(c_lo) and c_fast < c_lo
        else ""
    )
    # card_limit is what bounds the card time *as compiled*: it labels that time only
    limit = str(row.get("card_limit") or "")
    as_compiled = num("card_time_s")
    lim = f" ({limit}-bound)" if limit and best_card == as_compiled else ""
    bound = "≥ " if row.get("estimate_basis") in ("measured bound", "operand bound") else ""
    # the link where the row charges one (data resident on the card charges none)
    link = math.isfinite(transfer) and transfer > 0
    kept, handoff, link_bytes = num("kept_gpu_s"), num("handoff_bytes"), num("transfer_bytes")
    kept_part = (
        f", {fmt_s(kept)} of it kept on the GPU"
        f" ({fmt_pct(kept / gpu_s)} of the GPU time has no cost)"
        if kept > 0 and gpu_s > 0
        else ""
    )
    handoff_part = (
        f", {fmt_pct(handoff / link_bytes)} of its bytes hand-offs with the kernels kept on the GPU"
        if handoff > 0 and link_bytes > 0
        else ""
    )
    card_alone = f"card {bound}{fmt_s_ranged(best_card, c_lo, c_hi)}{lim}{kept_part}"
    link_text = f"link {fmt_s_ranged(transfer, t_lo, t_hi)}{handoff_part}"
    card_and_link = card_alone + (f" + {link_text}" if link else "")
    if verdict == "no":
        if link and t_fast >= gpu_s and c_fast >= gpu_s:
            # each alone loses: name both, the larger first, so that "host link alone" does
            # not read as "keep the data on the card and it gains" when the card alone loses
            link_alone = f"host {link_text}"
            first, second = (
                (card_alone, link_alone) if best_card >= transfer else (link_alone, card_alone)
            )
            return f"{first} and {second}, each alone slower than {fmt_s(gpu_s)} on the GPU"
        # Where one part alone decides it, the times shown still add up to the speedup beside
        # this reason (GPU / (card + link)), and the part that decides is named after them.
        if link and t_fast >= gpu_s:
            return f"{card_and_link} vs {fmt_s(gpu_s)} on the GPU (the host link alone is slower)"
        if c_fast >= gpu_s:
            if link:
                return f"{card_and_link} vs {fmt_s(gpu_s)} on the GPU (the card alone is slower)"
            return f"{card_alone} vs {fmt_s(gpu_s)} on the GPU"
        # each alone can be faster than the GPU, together they are not; or the verdict (of the
        # nominal figures) holds while the fast ends of the ranges reach the GPU
        reach = c_fast + (t_fast if link else 0.0) < gpu_s
        return f"{card_and_link} vs {fmt_s(gpu_s)} on the GPU" + (
            f" (slower at the nominal figures, not at the fast ends{other_fast})" if reach else ""
        )
    if math.isfinite(best_card):
        return f"{card_and_link} vs {fmt_s(gpu_s)} on the GPU"
    return ""


# And print(fpgaprof.fpga.estimate(...)).
ESTIMATE_TEXT_COLUMNS = (
    "op",
    "opcode",
    "pattern",
    "precision",
    "executions",
    "card_time_s",
    "restructured_card_time_s",
    "card_energy_j",
    "card_limit",
    "memory_efficiency",
    "flops",
    "bytes",
    "estimate_note",
)


class Estimate(Table):
    """The static what-if of a whole function or HLO module on one card (``estimate()``,
    ``estimate_hlo()``): one row per op (as ``fpga_candidates()``' rows, without GPU time:
    op, computation, opcode, pattern, precision, executions, flops, bytes, stream_bytes,
    random_bytes, compulsory_bytes, card_compute_s, card_memory_s, card_latency_s (0: one
    launch for the whole function, below), card_time_s, restructured_card_time_s, each time
    with its _low_s/_high_s, memory_efficiency, card_limit, scenario, estimate_note, source)
    and the whole function as attributes, each a nominal value with its (low, high) range:
    ``card_time_s`` / ``card_time_range_s`` (everything on the card, data resident in card
    memory, one launch), ``restructured_card_time_s`` / ``restructured_card_time_range_s``,
    ``transfer_s`` / ``transfer_range_s`` (arguments to the card and results back over the host
    link, with the per-transfer latency), ``total_s`` / ``total_range_s`` (card + transfer),
    ``restructured_total_s`` / ``restructured_total_range_s``; ``card_energy_j`` /
    ``card_energy_range_j`` and ``restructured_card_energy_j`` /
    ``restructured_card_energy_range_j`` (the card times at the card's loaded_w; None when the
    card's power is unknown or the times are lower bounds); ``transfer_bytes``,
    ``not_estimated_count`` (ops without a cost), ``unsupported_count`` (ops in a precision the
    card cannot run: as compiled the function cannot run on it), both in no time above,
    ``notes``, ``target`` (the card as the model saw it),
    ``module``, ``row_imbalance`` (the ratio applied, None when none), ``row_imbalance_source``
    ("given", "arguments": computed by estimate() from the function's data, None)."""

    row_imbalance: float | None = None
    row_imbalance_source: str | None = None

    card_time_s = math.nan
    card_time_range_s: tuple = (math.nan, math.nan)
    restructured_card_time_s = math.nan
    restructured_card_time_range_s: tuple = (math.nan, math.nan)
    transfer_s = math.nan
    transfer_range_s: tuple = (math.nan, math.nan)
    total_s = math.nan
    total_range_s: tuple = (math.nan, math.nan)
    restructured_total_s = math.nan
    restructured_total_range_s: tuple = (math.nan, math.nan)
    card_energy_j: float | None = None
    card_energy_range_j: tuple = (None, None)
    restructured_card_energy_j: float | None = None
    restructured_card_energy_range_j: tuple = (None, None)
    transfer_bytes = 0.0
    not_estimated_count = 0
    unsupported_count = 0
    notes: list = []
    target: dict = {}
    module = ""

    def summary(self) -> dict:
        """The whole-function figures as one dict (what summary.json and the CLI's --json hold)."""
        keys = (
            "module",
            "card_time_s",
            "card_time_range_s",
            "restructured_card_time_s",
            "restructured_card_time_range_s",
            "transfer_bytes",
            "transfer_s",
            "transfer_range_s",
            "total_s",
            "total_range_s",
            "restructured_total_s",
            "restructured_total_range_s",
            "card_energy_j",
            "card_energy_range_j",
            "restructured_card_energy_j",
            "restructured_card_energy_range_j",
            "not_estimated_count",
            "unsupported_count",
            "row_imbalance",
            "row_imbalance_source",
            "notes",
        )
        out = {k: getattr(self, k) for k in keys}
        out["target"] = self.target.get("name")
        return out


# What a restructured figure rests on when an op's (or a region's) data-dependent accesses are
# served on chip: the parallelism published HBM sparse designs achieve (onchip_lanes), which no
# anchor of another access pattern (a projector's, a histogram's) validates. The rows carry the
# core's label (kRestructuredOnchipBasis, fpga_model.hpp); this is its text, for comparisons.
RESTRUCTURED_ONCHIP_BASIS = (
    "a designer's target: the on-chip parallelism of published HBM sparse designs (onchip_lanes: "
    "the typical design's at nominal, the best published design's at the fast end), not "
    "validated for this op's access pattern"
)


def basis_note(rows: Sequence[Mapping]) -> str:
    """The footer line of a printed table whose rows carry a restructured basis: how many rows'
    restructured figures are a designer's target and what that rests on; "" when none does."""
    n = sum(1 for r in rows if r.get("restructured_basis"))
    if not n:
        return ""
    whose = "1 row's" if n == 1 else f"{n} rows'"
    return f"{whose} restructured figures are {RESTRUCTURED_ONCHIP_BASIS}"


def restructured_basis(row: Mapping) -> str:
    """The label of a row's restructured figures, as the core computes it with the row
    (``restructured_basis``): RESTRUCTURED_ONCHIP_BASIS for an op whose data-dependent accesses
    the restructured design serves on chip (``restructured_onchip`` and random bytes), or a
    region with data-dependent accesses; "" otherwise (the figure rests on the streaming,
    compute and memory constants, docs/fpga-validation.md)."""
    return str(row.get("restructured_basis") or "")


def _static_scenario(row: Mapping) -> str:
    a, b = row.get("card_time_s"), row.get("restructured_card_time_s")
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or not (a > 0 and b > 0):
        return ""
    if not math.isfinite(a) or not math.isfinite(b):
        return ""
    return "as compiled" if a <= b * 1.01 else f"restructured {a / b:.1f}x faster"


def _estimate_table(
    res: Mapping, first_notes: tuple[str, ...] = (), imbalance_source: str | None = None
) -> Estimate:
    # The core's row dicts are fresh and used nowhere else: completed in place, not copied (a
    # module of 10^6 ops would hold both copies at once).
    rows = res["ops"]
    for r in rows:
        r["scenario"] = _static_scenario(r)
        # The core's label, moved after the scenario (the order the tables and --json show).
        r["restructured_basis"] = r.pop("restructured_basis")
    t = Estimate(rows)
    for key in ("card_time", "restructured_card_time", "transfer", "total", "restructured_total"):
        setattr(t, f"{key}_s", res[f"{key}_s"])
        setattr(t, f"{key}_range_s", (res[f"{key}_low_s"], res[f"{key}_high_s"]))
    for key in ("card_energy", "restructured_card_energy"):
        setattr(t, f"{key}_j", res[f"{key}_j"])
        setattr(t, f"{key}_range_j", (res[f"{key}_low_j"], res[f"{key}_high_j"]))
    t.transfer_bytes = res["transfer_bytes"]
    t.not_estimated_count = res["not_estimated_count"]
    t.unsupported_count = res["unsupported_count"]
    t.row_imbalance = res["row_imbalance"]
    if t.row_imbalance is not None:
        t.row_imbalance_source = imbalance_source or "given"
    t.notes = list(first_notes) + list(res["notes"])
    t.target = dict(res["target"])
    t.module = res["module"]
    card = t.target.get("name") or "the card"
    t.title = f"FPGA estimate of {res['module'] or 'the module'} on {card}: ops"
    t.display = ESTIMATE_TEXT_COLUMNS
    t.empty_note = "the module computes nothing (only parameters, constants and tuples)"

    def line(label: str, key: str) -> str:
        nominal, (lo, hi) = getattr(t, f"{key}_s"), getattr(t, f"{key}_range_s")
        return f"{label} {fmt_s_ranged(nominal, lo, hi)}"

    footer = [
        f"  whole function on {card}: "
        + ", ".join([line("card", "card_time"), line("restructured", "restructured_card_time")]),
        "  "
        + ", ".join(
            [
                line("host link", "transfer"),
                line("total", "total"),
                line("restructured total", "restructured_total"),
            ]
        ),
    ]
    if t.card_energy_j is None:
        # A preset without a power is one with no published board power (the Intel cards); a
        # card of the user's was given none.
        if t.not_estimated_count or t.unsupported_count:
            footer.append(
                "  card energy: not given: the card time is a lower bound (op(s) in no time "
                "above, see the notes)"
            )
        elif card in {p["name"] for p in presets()}:
            why = f"unknown: no published board power for this card ({card}); give its loaded_w"
            footer.append(f"  card energy: {why} in watts to estimate it")
        else:
            why = f"unknown ({card} has no loaded_w: give the card's board power in watts)"
            footer.append(f"  card energy: {why}")
    else:

        def energy(label: str, key: str) -> str:
            lo, hi = getattr(t, f"{key}_range_j")
            return f"{label} {fmt_j(getattr(t, f'{key}_j'))} ({fmt_j(lo)}-{fmt_j(hi)})"

        footer.append(
            "  card energy at "
            + f"{fmt_w(t.target)}: "
            + ", ".join(
                [energy("card", "card_energy"), energy("restructured", "restructured_card_energy")]
            )
        )
    footer.append(
        "  energy ratio card / GPU: unknown (a static estimate has no GPU energy: trace the "
        "function on a GPU whose driver has NVML for its measured joules beside the card's)"
    )
    if note := row_imbalance_text(t.row_imbalance, t.row_imbalance_source):
        footer.append(f"  {note}")
    footer += [f"  note: {n}" for n in t.notes]
    if basis := basis_note(rows):
        footer.append(f"  note: {basis}")
    t.footer = "\n".join(footer)
    return t


def fmt_w(card: Mapping) -> str:
    """A card's loaded board power as the estimate's footer shows it: "61.8 W (45-65.4 W)"."""
    lo, nominal, hi = card.get("loaded_w_low"), card.get("loaded_w"), card.get("loaded_w_high")
    return f"{nominal:.3g} W ({lo:.3g}-{hi:.3g} W)"


def row_imbalance_from_args(fn: Any, *args: Any, pes: int = 128, **kwargs: Any) -> DataImbalance:
    """The row imbalance estimate(fn, *args) takes from the data (docs/fpga-model.md, "Row
    imbalance from the arguments"), for a trace's rankings too:
    ``fpga_candidates(prof, row_imbalance=row_imbalance_from_args(fn, *args).delta)``. Returns a
    DataImbalance: ``delta`` (None when none could be taken), ``note`` (what it was taken from,
    or why not) and ``scatters`` (each scatter's primitive, file:line, rows, updates and delta
    or reason). Only the part of ``fn`` its scatters' indices depend on is run. ``pes``: as
    row_imbalance()'s (a bad one raises InvalidArgumentError)."""
    row_imbalance([1], pes)  # the pes check, before any tracing
    try:
        import jax  # noqa: F401
    except ImportError:
        raise InvalidArgumentError(
            "fpgaprof.fpga.row_imbalance_from_args needs JAX: pip install 'fpgaprof[jax]' (or "
            "row_imbalance(row_lengths) from the matrix's row lengths)"
        ) from None
    if not callable(fn):
        raise InvalidArgumentError(
            f"row_imbalance_from_args takes a function, not {type(fn).__name__}: "
            "fpgaprof.fpga.row_imbalance_from_args(fn, *args)"
        )
    return data_row_imbalance(fn, args, kwargs, pes)


def estimate_hlo(
    text: str,
    target: str | os.PathLike | Mapping | FpgaTarget = DEFAULT_TARGET,
    *,
    row_imbalance: float | None = None,
) -> Estimate:
    """The static FPGA what-if of an HLO module (XLA's text, optimized or not): every op of its
    entry computation and of the loops and calls it runs (a while body multiplied by XLA's
    known_trip_count; unknown trip counts counted once and named in ``notes``), on ``target``
    (a preset name, card file, dict or FpgaTarget), with data resident in card memory, plus the
    function's transfers over the host link. No GPU needed. ``row_imbalance``: the row imbalance
    ratio of the matrix behind a gather paired with a scatter (an SpMV-like op; see
    row_imbalance()), which the shapes cannot show; None: not known (such ops are marked
    ``restructured_structure_dependent``). Text fpgaprof cannot parse raises
    fpgaprof.HloParseError; a bad target or row_imbalance InvalidArgumentError.
    docs/fpga-model.md, "Static estimate" and "Row imbalance"."""
    if not isinstance(text, str):
        raise InvalidArgumentError(
            f"estimate_hlo takes HLO text (a str), not {type(text).__name__}: read the "
            "file first, or use fpgaprof.fpga.estimate(fn, *args) for a JAX function"
        )
    imbalance = row_imbalance_arg(row_imbalance)
    hlo.check_text(text)  # a lone surrogate: HloParseError, as hlo.analyze gives
    return _estimate_table(core.analysis.estimate_hlo(text, target_spec(target), imbalance))


def estimate(
    fn: Any,
    *args: Any,
    target: str | os.PathLike | Mapping | FpgaTarget = DEFAULT_TARGET,
    row_imbalance: float | None = None,
    **kwargs: Any,
) -> Estimate:
    """The static FPGA what-if of a JAX function: ``fn`` (plain or jitted) is lowered and
    compiled by XLA for the backend at hand (the CPU is fine) with ``args`` / ``kwargs``
    (arrays or ``jax.ShapeDtypeStruct``: nothing is allocated or run, so multi-GB shapes
    work), and its optimized HLO estimated as estimate_hlo() does. ``target`` and
    ``row_imbalance`` (estimate_hlo()) are keyword-only (a function of your own with an argument
    of either name: pass it through functools.partial). Without ``row_imbalance``, called with
    arrays, the ratio is computed from the data when it can be: from the row indices of every
    scatter of the function (fpga_data; the slice of the function its indices depend on is
    run, nothing else), when they all have one and agree; ``row_imbalance_source`` is then
    "arguments", and a note says which scatters gave it, or why none was taken."""
    try:
        import jax
    except ImportError:
        raise InvalidArgumentError(
            "fpgaprof.fpga.estimate needs JAX: pip install 'fpgaprof[jax]' "
            "(or estimate_hlo(text) on HLO text)"
        ) from None
    if not callable(fn):
        raise InvalidArgumentError(
            f"estimate takes a function, not {type(fn).__name__}: "
            "fpgaprof.fpga.estimate(fn, *args, target=...)"
        )
    spec = target_spec(target)  # a bad card fails before the compilation
    imbalance = row_imbalance_arg(row_imbalance)
    jitted = as_jitted(jax, fn)
    # JAX's errors for a function that needs concrete values under jit (Python control flow on
    # an array, an array used as a shape): one typed error with the ways out. The user's own
    # errors (a wrong argument count, a bug) pass through as they are.
    tracer_errors = tuple(
        getattr(jax.errors, n)
        for n in (
            "ConcretizationTypeError",
            "TracerBoolConversionError",
            "TracerIntegerConversionError",
            "TracerArrayConversionError",
        )
        if hasattr(jax.errors, n)
    )
    try:
        lowered = jitted.lower(*args, **kwargs)
    except tracer_errors as e:
        first = (str(e).strip().splitlines() or [""])[0][:200]
        raise InvalidArgumentError(
            f"estimate: JAX could not jit {getattr(fn, '__name__', 'the function')} as a whole "
            f"({type(e).__name__}: {first}); estimate needs a function JAX can trace with "
            "abstract arguments: mark the arguments used as Python values static "
            "(jax.jit(fn, static_argnums=...)), or trace the running program instead (with "
            "fpgaprof.trace(): or fpgaprof run)"
        ) from e
    text = lowered.compile().as_text()
    notes = _backend_notes(jax)
    source = None
    if imbalance == 0:
        data = data_row_imbalance(jitted, args, kwargs)
        if data.delta is not None:
            imbalance, source = data.delta, "arguments"
        notes += (data.note,) if data.note else ()
    if not isinstance(text, str):
        raise InvalidArgumentError(
            "estimate: this JAX gives no optimized HLO text for the function "
            "(compiled.as_text() returned nothing): give the HLO to estimate_hlo(text)"
        )
    return _estimate_table(core.analysis.estimate_hlo(text, spec, imbalance), notes, source)


def _backend_notes(jax: Any) -> tuple[str, ...]:
    """What estimate() estimated when XLA compiled for another backend than a GPU: the
    program as that backend's compiler made it (other fusions, other layouts)."""
    try:
        backend = str(jax.default_backend())
    except Exception:  # noqa: BLE001 - unknown backend: nothing to say
        return ()
    if backend == "gpu":
        return ()
    return (
        f"estimated the {backend.upper()}-compiled program (XLA compiled it for the {backend} "
        "backend here; its GPU compilation fuses and lays out differently): give the GPU's "
        "optimized HLO to estimate_hlo() for the GPU program",
    )


def export_hlo(
    prof: Any, op: str, path: str | os.PathLike, module: str | int | None = None
) -> HloText:
    """Writes the HLO of op ``op`` (from the trace's optimized modules) as a standalone module to
    ``path`` (atomically) and returns the text (an ``HloText``: a str whose repr is one line
    saying what was written where). When several different modules hold an instruction of that
    name, ``module`` (a module name or program id) picks one; without it that raises
    InvalidArgumentError listing them. The op's dataflow graph goes next to it
    (``<stem>.dataflow.dot``, and ``<stem>.dataflow.svg`` laid out by Graphviz when its dot is
    installed; api.dataflow): their paths are the text's ``dataflow_paths``."""
    out = hlo_export.export_hlo(store_of(prof), op, path, module)
    out.dataflow_paths = export_dataflow(out, path)
    return out
