"""What summary.json says about a trace itself, built once from a Profile: the overview that
``prof.summary()`` and the Profile's Jupyter view show, and that the report layer's model
(fpgaprof.report.model.collect) completes with the run's environment and measurements.

Sections that cannot be filled say why ({"available": false, "reason": ...}); a failing
analysis is a warning too (a bug to see, not a section dropped quietly). Every section comes
from the one C++ analysis the Profile caches (Profile.analyses), its attribution included:
totals, kernels, regions, transfers, memory, devices, ops, roofline points and FPGA candidates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from fpgaprof.analysis import attribution, sections
from fpgaprof.analysis.targets import presets, target_spec
from fpgaprof.analysis.trace_analysis import AnalysisResult, store_of
from fpgaprof.api import roofline
from fpgaprof.api.fpga import best_rows
from fpgaprof.base import records
from fpgaprof.base.columns import STATIC_COST_FIELDS
from fpgaprof.base.constants import DEFAULT_TARGET, FULL_ROWS, TOP_ROWS
from fpgaprof.base.diagnostics import diagnostic
from fpgaprof.views.ranking import has_no_gpu_time

__all__ = [
    "TraceOverview",
    "trace_overview",
    "analysis_of",
    "attribution_of",
    "roofline_section",
    "candidates_section",
    "report_analysis_options",
    "region_empty_reason",
    "ROOFLINE_POINTS",
    "MEASURED_FIELDS",
]


@dataclasses.dataclass
class TraceOverview:
    """``data``: the sections of summary.json about the trace (trace, device, devices, totals,
    kernels, transfers, memory, by_device, regions, ops, roofline, candidates, warnings), in
    that order; ``region_instances``: the region records as columns (for the measurements);
    ``analysis``: the analysis result the sections come from (None when it failed)."""

    data: dict
    region_instances: sections.RegionInstances
    analysis: AnalysisResult | None


def _ops_rows(rows: list[dict]) -> list[dict]:
    """prof.ops' rows (the attribution's OpStats: hlo_op, module_name, executions, total_ns,
    mean_ns per timed execution, the static cost of one execution) as the overview's op rows,
    largest time first, each with its `op_index` (its position in prof.ops, the analysis' op
    index); the cost is None where the op has none."""
    out = []
    for i, r in enumerate(rows):
        no_cost = not r["has_cost"] or r["cost_unknown"]
        out.append(
            {
                "op": str(r["hlo_op"]),
                "op_index": i,
                "module": r["module_name"],
                # several compilations of one jitted function share module and op names (the
                # sweep trace: 18 of jit_sort's `fusion`); XLA's program id tells them apart
                "program_id": records.program_id(r),
                "category": r["category"] or None,
                "count": int(r["executions"]),
                "kernel_count": r["kernel_count"],
                # the executions whose kernels all have a duration: mean_s is over these
                "timed_count": int(r["timed_executions"]),
                "total_s": float(r["total_ns"]) / 1e9,
                # over the executions whose kernels all have timestamps (a counter replay can
                # leave some without): none timed, no mean, as kernels.top's mean_s
                "mean_s": float(r["mean_ns"]) / 1e9 if r["timed_executions"] else None,
                "flops": None if no_cost else r["flops"],
                "bytes": None if no_cost else r["bytes_accessed"],
                "pattern": r["pattern"] or None,
                "source": records.source_location(r),
            }
        )
    out.sort(key=lambda r: -(r["total_s"] or 0.0))
    return out


def attribution_of(prof: Any, analysis: Mapping | None = None) -> Any:
    """The AttributionResult of a Profile (its cached prof.attribution: the analysis' own once
    an analysis ran), else the one `analysis` (an analysis result of `prof`) holds, else the
    attribution of the store of a profile-like object."""
    if getattr(type(prof), "attribution", None) is not None:
        return prof.attribution
    if analysis is not None and analysis.get("attribution") is not None:
        return analysis["attribution"]
    store = store_of(prof)
    if store is None:
        raise AttributeError("no attribution: this profile has no trace store")
    return attribution.attribute(store)


def _ops_of(prof: Any, analysis: Mapping | None) -> Any:
    if getattr(type(prof), "ops", None) is not None or "ops" in getattr(prof, "__dict__", {}):
        return prof.ops
    return attribution_of(prof, analysis).ops


def _op_key(module: Any, op: Any) -> tuple[str, str]:
    return ("" if module is None else str(module), str(op))


def _add_op_energy(items: list[dict], energy: Mapping | None) -> None:
    """Each op row's attributed GPU joules (the energy analysis' by-op split: an attribution,
    not a measurement), by op index; None where the trace has no energy or the op none."""
    joules: dict[int, float] = {}
    if energy and energy.get("measured"):
        joules = {int(r["op_index"]): float(r["joules"]) for r in energy["ops"]}
    for r in items:
        r["gpu_energy_j"] = joules.get(r["op_index"])


def _ops_section(
    prof: Any,
    analysis: Mapping | None,
    roof_rows: list[dict],
    warnings: list[str],
    kernel_count: int | None = None,
    gpu_available: bool = False,
    untraced_processes: int = 0,
) -> dict:
    """Every HLO op (up to FULL_ROWS, largest time first: `fpgaprof compare` reads the
    complete table), with its bound from the roofline analysis joined by (module, op).
    kernel_count / gpu_available: say why there is no op (sections.empty_reason)."""
    if kernel_count == 0:  # nothing to attribute: the same reason as every GPU table
        return sections.unavailable(sections.empty_reason(0, "", gpu_available, untraced_processes))
    sec = sections.analysis_section(
        lambda: _ops_of(prof, analysis), "per-op attribution (prof.ops)", warnings
    )
    if not sec["available"]:
        return sec
    rows = _ops_rows(sec["rows"])
    if not rows:
        return sections.unavailable(sections.unattributed_note(kernel_count))
    # The roofline's ops are the analysis' (prof.ops' order): by index, one op each even where
    # several compilations share a module and op name.
    by_index = list(analysis["roofline"]["ops"]) if analysis is not None else []
    if len(by_index) == len(sec["rows"]):
        for r in rows:
            r["bound"] = by_index[r["op_index"]].get("bound")
    else:
        bound = {_op_key(r.get("module"), r.get("op")): r.get("bound") for r in roof_rows}
        for r in rows:
            r["bound"] = bound.get(_op_key(r["module"], r["op"]))
    return {
        "available": True,
        "count": len(rows),
        "items": rows[:FULL_ROWS],
        "rows_left_out": max(len(rows) - FULL_ROWS, 0),
    }


def _ceilings(prof: Any) -> tuple[dict | None, str | None]:
    """Device ceilings (peak FLOP/s per precision, DRAM and link bandwidth, with their
    sources) from the analysis, or (None, why)."""
    try:
        if getattr(type(prof), "ceilings", None) is not None:
            c = prof.ceilings() if callable(prof.ceilings) else prof.ceilings
        else:
            c = roofline.ceilings(prof)
    except Exception as e:  # noqa: BLE001 - shown as the reason next to the chart
        return None, f"device ceilings not available: {type(e).__name__}: {records.one_line(e)}"
    if c is None:
        return None, "device ceilings not available: no device in this trace"
    if not isinstance(c, Mapping):
        c = {
            k: getattr(c, k)
            for k in dir(c)
            if not k.startswith("_") and not callable(getattr(c, k))
        }
    return records.to_plain(dict(c)), None


# Roofline points kept in summary.json and drawn (largest time first; the rest is counted).
ROOFLINE_POINTS = 200
# Hardware-counter values of a roofline row (docs/roofline.md); null where not collected.
# measured_coverage: share (0..1) of the point's kernel time that has counters; the measured
# rates and roof fraction are over that time only.
MEASURED_FIELDS = (
    "measured_flops",
    "measured_bytes",
    "measured_intensity",
    "measured_roof_fraction",
    "measured_bound",
    "measured_coverage",
)


# The values of an op's point that rest on its static cost: null when that is unknown.
UNKNOWN_COST_POINT_FIELDS = (*STATIC_COST_FIELDS, "roof_fraction")
# The values of a point that divide by its GPU time: null when its kernels have none.
UNTIMED_POINT_FIELDS = ("achieved_flops_per_s", "achieved_bytes_per_s", "roof_fraction")


def _roofline_point(r: dict) -> dict:
    """A roofline row of the analysis (fields: result_fields("roofline_point"), with op, module
    and source for an op's row) as summary.json shows it: the roof as a fraction."""
    t = r.get("time_s")
    if t is None and r.get("time_ns") is not None:
        t = float(r["time_ns"]) / 1e9
    pct = r.get("percent_of_roof")
    p = {
        "op": str(records.first(r, "op", default="?")),
        "module": r.get("module"),
        "time_s": t,
        "flops": r.get("flops"),
        "bytes": r.get("bytes"),
        "intensity": r.get("intensity"),
        "achieved_flops_per_s": r.get("achieved_flops_per_s"),
        "achieved_bytes_per_s": r.get("achieved_bytes_per_s"),
        "precision": r.get("precision"),
        "roof_flops_per_s": r.get("roof_flops_per_s"),
        "roof_fraction": None if pct is None else float(pct) / 100.0,
        "bound": records.first(r, "bound", default="unknown"),
        "source": r.get("source") or None,
    }
    measured = bool(r.get("has_measured"))
    p["has_measured"] = measured
    m_pct = r.get("measured_percent_of_roof") if measured else None
    p.update(
        {
            "measured_flops": r.get("measured_flops") if measured else None,
            "measured_bytes": r.get("measured_bytes") if measured else None,
            "measured_intensity": r.get("measured_intensity") if measured else None,
            "measured_roof_fraction": None if m_pct is None else float(m_pct) / 100.0,
            "measured_bound": r.get("measured_bound") if measured else None,
            "measured_coverage": r.get("measured_coverage") if measured else None,
        }
    )
    if r.get("cost_known") is False:
        # No static cost (a custom call the cost model has no rule for): its 0 FLOPs and bytes
        # are not measured zeros, so neither are the values built on them (null, as ops.items[];
        # the parquet/CSV rows keep them with cost_known and lower_bound_bytes).
        p.update({k: None for k in UNKNOWN_COST_POINT_FIELDS})
    if not t and int(r.get("kernel_count") or 0) > 0:
        # Kernels but no GPU time (a counter replay left them without timestamps): rates over
        # 0 s are not measured zeros either (the FPGA rows say "not estimated" for them).
        p.update({k: None for k in UNTIMED_POINT_FIELDS})
    note = roofline.roof_note(r)
    if note:
        p["roof_note"] = note
    return p


def roofline_section(
    prof: Any,
    roof_rows: list[dict] | None,
    roof_reason: str | None,
    ops: dict,
    kernel_count: int | None = None,
    gpu_available: bool = False,
    untraced_processes: int = 0,
) -> dict:
    """Points per HLO op from the roofline analysis; without it, from the ops' static cost and
    measured time (intensity and achieved rates only, no bound). Without any kernel the reason
    is sections.empty_reason's, as for the ops."""
    ceilings, ceilings_reason = _ceilings(prof)
    points = []
    source = None
    reason: str | None
    if roof_rows:
        source = "analysis"
        points = [_roofline_point(r) for r in roof_rows]
    elif ops.get("available"):
        source = "ops"
        for r in ops["items"]:
            t, fl, b = r["total_s"], r["flops"], r["bytes"]
            if not t or fl is None or not b:
                continue
            # the ops' cost is per execution; a point's FLOPs and bytes are all executions'
            # (as the roofline analysis gives them)
            runs = r["count"] or 1
            p = {
                "op": r["op"],
                "module": r.get("module"),
                "time_s": t,
                "flops": fl * runs,
                "bytes": b * runs,
                "intensity": fl / b,
                "achieved_flops_per_s": fl * runs / t,
                "achieved_bytes_per_s": b * runs / t,
                "roof_fraction": None,
                "bound": "unknown",
                "source": r["source"],
                "has_measured": False,
            }
            p.update({k: None for k in MEASURED_FIELDS})
            points.append(p)
    if not points:
        if kernel_count == 0:
            reason = sections.empty_reason(0, "", gpu_available, untraced_processes)
        elif roof_rows is None:
            reason = roof_reason
        elif ops.get("available") is False:
            reason = f"no roofline point: {ops['reason']}"
        else:
            reason = None
        out = sections.unavailable(reason or "no op with FLOPs, bytes and a measured time")
        out["ceilings"] = ceilings
        return out
    points.sort(key=lambda p: -(p["time_s"] or 0.0))
    out = {
        "available": True,
        "points_from": source,
        "ceilings": ceilings,
        "ceilings_reason": ceilings_reason,
        "count": len(points),
        "points": points[:ROOFLINE_POINTS],
        "points_left_out": max(len(points) - ROOFLINE_POINTS, 0),
        "has_measured": any(p["has_measured"] for p in points),
    }
    if source == "ops":
        out["points_reason"] = roof_reason
    return out


def _totals_point(r: dict) -> dict:
    """A roofline point that is not an op's (the trace, a region path): the point's values
    (as _roofline_point) without op, module and source, with its kernel count and the share
    of its kernel time whose static cost is known (cost_coverage)."""
    p = _roofline_point(r)
    for k in ("op", "module", "source"):
        p.pop(k, None)
    untimed = not p.get("time_s") and int(r.get("kernel_count", 0)) > 0
    return {
        "kernel_count": int(r.get("kernel_count", 0)),
        # a share of 0 s of kernel time is no share: null, not "cost known for 0.0 %"
        "cost_coverage": None if untimed else r.get("cost_coverage"),
        **p,
    }


def _region_roofline_point(r: dict) -> dict:
    """A region path's roofline point (the analysis' row), keyed by the path (`region`)."""
    return {
        "region": str(r.get("region")),
        "name": str(r.get("name")),
        "depth": int(r.get("depth", 0)),
        "instances": int(r.get("instances", 0)),
        **_totals_point(r),
    }


def _roofline_totals(
    an: Mapping | None,
    reason: str | None,
    kernel_count: int | None,
    gpu_available: bool,
    region_count: int | None,
    untraced_processes: int = 0,
) -> dict:
    """The roofline of the whole trace (`trace`: every kernel, attributed or not, with the
    static cost of the attributed ones) and of each region path (`by_region`, inclusive of
    nested regions, the ROOFLINE_POINTS with most kernel time; `items_left_out`), as
    prof.roofline(by="trace") and prof.roofline(by="region") give them. They are there when
    the analysis ran, also when no op has a point (`available` is about the op points)."""
    if an is None:
        why = reason or "the roofline analysis gave no result"
        return {"trace": None, "by_region": sections.unavailable(why)}
    r = an["roofline"]
    trace = None
    if kernel_count != 0:
        trace = _totals_point(dict(r["trace"]))
    rows = [dict(x) for x in r.get("regions", []) if "path_index" in x] if kernel_count != 0 else []
    rows = [x for x in rows if int(x.get("kernel_count", 0)) > 0]
    if not rows:
        return {
            "trace": trace,
            "by_region": sections.unavailable(
                region_empty_reason(kernel_count, region_count, gpu_available, untraced_processes)
            ),
        }
    rows.sort(key=lambda x: (-int(x.get("time_ns") or 0), str(x.get("region"))))
    return {
        "trace": trace,
        "by_region": {
            "available": True,
            "count": len(rows),
            "items": [_region_roofline_point(x) for x in rows[:ROOFLINE_POINTS]],
            "items_left_out": max(len(rows) - ROOFLINE_POINTS, 0),
        },
    }


def candidates_section(
    fpga: dict | None,
    reason: str | None,
    tgt: str,
    kernel_count: int | None = None,
    gpu_available: bool = False,
    region_count: int | None = None,
    untraced_processes: int = 0,
) -> dict:
    """Rows of the FPGA model (as prof.fpga_candidates(target) gives them), best first: the
    first TOP_ROWS; the rest is counted in items_left_out. Empty tables say why with
    sections.empty_reason (no kernel at all) or their own reason."""
    if fpga is None:
        return {**sections.unavailable(reason or "the FPGA model gave no result"), "target": tgt}
    tgt = (fpga.get("target") or {}).get("name") or tgt  # a card file's card by its own name
    rows = [records.to_plain(dict(c)) for c in fpga.get("candidates", [])]
    regions = _region_candidates(
        fpga, kernel_count, gpu_available, region_count, untraced_processes
    )
    if not rows:
        why = sections.empty_reason(
            kernel_count,
            "no candidate op (no attributed GPU time)",
            gpu_available,
            untraced_processes,
        )
        return {**sections.unavailable(why), "target": tgt, "regions": regions}
    return {
        "available": True,
        "target": tgt,
        **_best_rows(rows),
        "what_if": records.to_plain(
            {k: v for k, v in fpga.items() if k not in ("candidates", "regions")}
        ),
        # of what_if's not_estimated_count: the ops whose kernels have no GPU time (the rest
        # have no static cost), over every row, listed or not
        "no_gpu_time_count": sum(has_no_gpu_time(r) for r in rows),
        "regions": regions,
    }


def _best_rows(rows: list) -> dict:
    """The first TOP_ROWS of a ranked table and every later row holding more GPU time than one
    of them (api.fpga.best_rows), with the count of all and of those left out."""
    items = best_rows(rows, TOP_ROWS)
    return {
        "count": len(rows),
        "items": items,
        "items_left_out": max(len(rows) - len(items), 0),
    }


def region_empty_reason(
    kernel_count: int | None,
    region_count: int | None,
    gpu_available: bool = False,
    untraced_processes: int = 0,
) -> str:
    """Why there is no region row in a GPU table (region candidates, roofline by region):
    no GPU kernels at all (sections.empty_reason) first, then no region, then no kernel in one."""
    if region_count == 0 and kernel_count != 0:
        return "no fpgaprof.region() in the trace"
    return sections.empty_reason(
        kernel_count,
        "no fpgaprof.region() with GPU kernels inside",
        gpu_available,
        untraced_processes,
    )


def _region_candidates(
    fpga: dict,
    kernel_count: int | None = None,
    gpu_available: bool = False,
    region_count: int | None = None,
    untraced_processes: int = 0,
) -> dict:
    """fpgaprof.region() paths ranked as offload units (prof.fpga_candidates(by="region")),
    best first: the first TOP_ROWS, the rest counted in items_left_out."""
    rows = [records.to_plain(dict(c)) for c in fpga.get("regions", [])]
    if not rows:
        return sections.unavailable(
            region_empty_reason(kernel_count, region_count, gpu_available, untraced_processes)
        )
    return {"available": True, **_best_rows(rows)}


def _totals(prof: Any, facts: dict, an: AnalysisResult | None) -> dict:
    """summary.json's totals from the analysis' (an["totals"]): GPU busy (union of the kernel,
    copy and memset intervals), idle and busy share of the wall time, all None for a trace
    without GPU data (nothing was measured, so no idle time either), 0 busy for a traced GPU
    that ran nothing; summed kernel time; copies, their bytes and busy time (union); record
    counts. Without an analysis result (`an` None) the times and bytes are None."""
    wall_s = facts["wall_time_s"]
    busy: float | None = None
    copy_busy_s: float | None = None
    kernel_time_s: float | None = None
    copy_bytes: int | None = None
    if an is None:
        kernel_count = records.table_len(records.attr_or(prof, "kernels"))
        copy_count = records.table_len(sections.transfer_table(prof))
        memset_count = records.table_len(records.attr_or(prof, "memsets"))
        idle = frac = None
    else:
        t = an["totals"]
        kernel_count = int(t["kernel_count"])
        copy_count = int(t["copy_count"])
        memset_count = int(t["memset_count"])
        kernel_time_s = int(t["kernel_time_ns"]) / 1e9
        copy_bytes = int(t["copy_bytes"])
        if kernel_count + copy_count + memset_count == 0:
            if facts.get("gpu_available"):
                busy, idle, frac = 0.0, wall_s, 0.0
            else:
                idle = frac = None
        else:
            busy = int(t["gpu_busy_ns"]) / 1e9
            idle = max(wall_s - busy, 0.0)
            frac = busy / wall_s if wall_s else None
        # without GPU data (busy None) copy time was not measured either: null, not 0
        copy_busy_s = int(t["copy_busy_ns"]) / 1e9 if busy is not None else None
    return {
        "gpu_busy_s": busy,
        "gpu_idle_s": idle,
        "gpu_busy_fraction": frac,
        "kernel_count": kernel_count,
        "kernel_time_s": kernel_time_s,
        "transfer_count": copy_count,
        "transfer_bytes": copy_bytes,
        "transfer_busy_s": copy_busy_s,
        "transfer_share_of_wall": (
            copy_busy_s / wall_s if wall_s and copy_busy_s is not None else None
        ),
        "transfer_share_of_gpu_busy": (
            copy_busy_s / busy if busy and copy_busy_s is not None else None
        ),
        "memset_count": memset_count,
        "api_call_count": records.table_len(records.attr_or(prof, "api_calls")),
        "marker_count": records.table_len(records.attr_or(prof, "markers")),
        "region_count": records.table_len(records.attr_or(prof, "regions")),
    }


def report_analysis_options(target: Any, row_imbalance: float | None = None) -> dict:
    """The options of the report's one analysis (fpgaprof.roofline.analyze keywords): the
    chosen card, every other preset card for the answer (``other_targets``) and the row
    imbalance ratio the user gave (``row_imbalance``, only when given). Whatever else a report
    asks of the analysis passes the same, so the cache serves it."""
    # Every preset but the one the chosen card is called by (a preset named in any case, or a
    # card file that took a preset's name: its own figures answer for that name).
    own = _card_name(target)
    others = tuple(n for n in (p["name"] for p in presets()) if n.lower() != own)
    out: dict = {"target": target, "other_targets": others}
    if row_imbalance is not None:
        out["row_imbalance"] = row_imbalance
    return out


def _card_name(target: Any) -> str:
    """The lower-cased name `target` goes by ('' when it has none or cannot be read: the
    analysis reports that)."""
    try:
        spec = target_spec(target)
    except Exception:  # noqa: BLE001 - an unreadable target is the analysis' to report
        return ""
    name = spec if isinstance(spec, str) else spec.get("name")
    return str(name or "").lower()


def analysis_of(
    prof: Any, target: str, warnings: list[str], row_imbalance: float | None = None
) -> tuple[AnalysisResult | None, str | None, str | None]:
    """The whole C++ analysis (fpgaprof.roofline.analyze: transfers, memory, roofline, FPGA
    model; computed once and cached on the profile) for `target`, with the FPGA rankings on
    every other preset card (``fpga_other_targets``: the answer compares cards from this one
    analysis). Returns (result, why it is missing, why the FPGA part is missing). An unknown
    target only costs the FPGA part. ``row_imbalance``: the user's ratio for every ranking."""

    def spec() -> Any:
        return target_spec(target)

    _, target_reason = sections.run_analysis(spec, f"FPGA target {target!r}")
    tgt = target if target_reason is None else DEFAULT_TARGET

    def analyze() -> Any:
        return roofline.analyze(prof, **report_analysis_options(tgt, row_imbalance))

    an, why = sections.run_analysis(analyze, "the analysis (fpgaprof.roofline.analyze)", warnings)
    if an is not None and target_reason is not None:
        return an, None, f"FPGA candidates (target={target!r}): {target_reason}"
    return an, why, why


class _Steps:
    """Calls progress.stage(name) when a progress display is given."""

    def __init__(self, progress: Any) -> None:
        self.progress = progress

    def __call__(self, what: str) -> None:
        if self.progress is not None:
            self.progress.stage(what)


def trace_overview(
    prof: Any,
    *,
    target: str | None = None,
    trace_path: str | None = None,
    extra_warnings: Iterable[Any] = (),
    progress: Any = None,
    untraced_processes: int = 0,
    row_imbalance: float | None = None,
) -> TraceOverview:
    """Everything summary.json says about the trace itself, from a Profile (or an object with
    the same tables): trace facts, devices, totals, kernels, transfers, memory, per-device rows,
    regions, ops, roofline, FPGA candidates for `target` and every warning (extra_warnings
    after the trace's own, then the analyses'). progress: an object with stage(name), told
    when the analysis (the attribution included) begins. untraced_processes: further Python
    processes of a `fpgaprof run` that ran untraced (the reason of an empty GPU table says they
    may have launched kernels). The analysis comes from the Profile's cache
    (Profile.analyses). row_imbalance: the user's row imbalance ratio (HiSpMV's delta) for the
    FPGA rankings (None: not known)."""
    step = _Steps(progress)
    tgt = target or DEFAULT_TARGET
    failures: list[str] = []  # analyses that failed (not missing): shown as warnings
    facts = sections.trace_facts(prof, trace_path)
    step("analysis")
    an, an_reason, fpga_reason = analysis_of(prof, tgt, failures, row_imbalance)
    dram = an["device_dram_bytes_per_s"] if an is not None else None
    devices = sections.devices_of(prof, dram)
    dev = _get_device(prof, devices, dram)
    instances = sections.region_instances(prof)
    regions = sections.regions_section(prof, an, instances, an_reason)
    kernels = sections.kernels_section(prof, an, an_reason)
    totals = _totals(prof, facts, an)
    copies = totals["transfer_count"]
    unattributed, names = _unattributed_kernels(prof, an)
    roof_rows = None
    if an is not None:
        roof_rows = sorted(
            (dict(r) for r in an["roofline"]["ops"]), key=lambda r: -(r.get("time_ns") or 0)
        )
    n_kernels, gpu = kernels.get("count", 0), facts["gpu_available"]
    n_regions = records.table_len(records.attr_or(prof, "regions"))
    ops = _ops_section(prof, an, roof_rows or [], failures, n_kernels, gpu, untraced_processes)
    roofline_sec = roofline_section(
        prof, roof_rows, an_reason, ops, n_kernels, gpu, untraced_processes
    )
    roofline_sec.update(
        _roofline_totals(an, an_reason, n_kernels, gpu, n_regions, untraced_processes)
    )
    candidates = candidates_section(
        an["fpga"] if an is not None and fpga_reason is None else None,
        fpga_reason,
        tgt,
        n_kernels,
        gpu,
        n_regions,
        untraced_processes,
    )
    transfers = sections.transfers_section(
        an["transfers"] if an is not None else None,
        copies,
        reason=an_reason,
        op_modules=None if an is None else [r.get("module") for r in an["roofline"]["ops"]],
        gpu_available=gpu,
    )
    memory = sections.memory_section_of(
        prof, an["memory"] if an is not None else None, facts["start_ns"], an_reason
    )
    energy = sections.energy_section(an, an_reason)
    if ops.get("available") and an is not None:
        _add_op_energy(ops["items"], an.get("energy"))
    by_device = sections.devices_section(
        an.get("devices") if an is not None else None,
        facts["start_ns"],
        an_reason if an is None else "the device analysis is not in this fpgaprof build",
    )

    # Records with their codes (base.diagnostics); a plain string handed in by a caller is kept
    # as one without a code.
    extra: list[Any] = list(extra_warnings)
    extra += [diagnostic("report.analysis_failed", w) for w in failures]
    if an is not None:
        extra += list(an.get("warnings", []))
        t = an["transfers"]
        extra += [
            diagnostic("report.transfer_flag", str(f["message"]))
            for f in t.get("flags", [])
            if f.get("message")
        ]
        if t.get("flags_left_out"):
            extra.append(
                diagnostic(
                    "report.transfer_flag",
                    f"{t['flags_left_out']} more transfer flags for other regions not "
                    "shown (prof.transfer_report()['flags'] has the worst regions)",
                    [t["flags_left_out"]],
                )
            )
    if unattributed is None and an is not None:
        unattributed = int(an["roofline"].get("unattributed_kernels", 0))
    if unattributed:
        extra.append(
            diagnostic(
                "attribution.unattributed_kernels",
                f"{unattributed} kernels could not be attributed to an HLO op"
                + (f" (most time: {', '.join(names)})" if names else ""),
                [unattributed],
            )
        )
    counters = records.table_len(records.attr_or(store_of(prof), "counters"))
    if counters:
        extra.append(
            diagnostic(
                "counters.replay_timing",
                "hardware counters were collected by kernel replay: every kernel ran "
                "serialized and once per pass, so kernel times and overlaps in this trace "
                "are not those of a normal run (trace again without counters for timing); "
                "counter values are kept apart from timings",
            )
        )
    data = {
        "trace": facts,
        "device": dev,
        "devices": devices,
        "totals": totals,
        "kernels": kernels,
        "transfers": transfers,
        "memory": memory,
        "by_device": by_device,
        "energy": energy,
        "regions": regions,
        "ops": ops,
        "roofline": roofline_sec,
        "candidates": candidates,
        "warnings": sections.warnings_of(prof, facts, extra),
    }
    return TraceOverview(data, instances, an)


def _get_device(prof: Any, devices: list[dict], dram: list | None) -> dict | None:
    """The device of `prof` (its first, prof.device) as a device dict; `dram`: the analysis'
    DRAM peaks per device."""
    d = records.attr_or(prof, "device")
    if d is not None:
        return sections.device_dict(d, dram[0] if dram else None) or None
    return devices[0] if devices else None


def _unattributed_kernels(prof: Any, an: Mapping | None) -> tuple[int | None, list[str]]:
    """How many kernels the attribution could not place and the names taking most time;
    (None, []) when the attribution is not available (the analysis' count is used then)."""
    try:
        res = attribution_of(prof, an)
        names = [str(u.name) for u in list(res.unattributed)[:5]]
        return int(res.unattributed_count), names
    except Exception:  # noqa: BLE001 - the analysis' count is used then
        return None, []
