"""Roofline and ceilings of a trace, and the whole analysis as one dict (``fpgaprof.roofline``).

Everything is computed by the C++ core in one pass (``fpgaprof._core.analysis.analyze``, through
analysis.trace_analysis) and cached on the Profile; this module picks the pieces and turns them
into tables. Rules and sources: docs/roofline.md. Transfers, device memory and the per-device
rows are in api.resource_reports (also reachable as ``fpgaprof.roofline.transfers`` etc.).

Region results come one row per region *path* ("outer > inner", every instance summed;
``by="region"``, the default) or, on request, one row per region record
(``by="region_instance"``). docs/roofline.md, "Regions".
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from fpgaprof.analysis import ceilings as gpu_ceilings
from fpgaprof.analysis import sections
from fpgaprof.analysis.trace_analysis import (
    AnalysisCache,
    AnalysisOptions,
    AnalysisResult,
    store_of,
)
from fpgaprof.analysis.trace_analysis import run as run_analysis
from fpgaprof.base import records
from fpgaprof.base.columns import TOTAL_LABELS, result_columns
from fpgaprof.base.constants import DEFAULT_TARGET
from fpgaprof.base.errors import InvalidArgumentError
from fpgaprof.views import tables as views
from fpgaprof.views.ranking import ABOVE_ROOF_MEASURED, ABOVE_ROOF_STATIC

__all__ = [
    "Table",
    "ceilings",
    "analyze",
    "roofline",
    "REGION_BY",
    "TOTAL_LABELS",
    "region_rows_of",
    "kernel_count",
    "no_rows_note",
    "roof_note",
    "with_roof_notes",
]


def roof_note(row: Mapping) -> str:
    """Why a roofline row is above 100 % of its roof ("" when it is not): the static count
    includes cache-served reads (percent_of_roof), or the counters' window (measured)."""
    notes = []
    pct = row.get("percent_of_roof")
    if isinstance(pct, (int, float)) and pct > 100:
        notes.append(ABOVE_ROOF_STATIC)
    mpct = row.get("measured_percent_of_roof") if row.get("has_measured") else None
    if isinstance(mpct, (int, float)) and mpct > 100:
        notes.append(ABOVE_ROOF_MEASURED)
    return "; ".join(notes)


def with_roof_notes(rows: list) -> list:
    """Rows (dicts) with a "roof_note" where they are above their roof (roof_note)."""
    out = []
    for r in rows:
        note = roof_note(r) if isinstance(r, Mapping) else ""
        out.append({**r, "roof_note": note} if note else r)
    return out


class Table(views.Table):
    """Rows of a roofline or FPGA analysis (dicts), best first: a views.tables.Table whose FLOPs
    and bytes are every execution's together (headed "FLOPs (total)", "bytes (total)";
    prof.ops gives one execution's)."""

    labels = TOTAL_LABELS


# by= values that choose the region rows: one per path (default) or one per region record.
REGION_BY = {
    "region": "path",
    "regions": "path",
    "region_instance": "instance",
    "region_instances": "instance",
}


def ceilings(prof: Any, device: int = 0, *, use_measured: bool = True) -> dict | None:
    """Peak FLOP/s per precision, DRAM and host-link bandwidth of the traced device: the
    per-architecture table, with values measured by ``fpgaprof.calibrate.run()`` on this GPU
    replacing table values where present (each value carries its source). None without a device."""
    return gpu_ceilings.ceilings(store_of(prof), device, use_measured=use_measured)


def analyze(
    prof: Any,
    *,
    target: str | Mapping | Any = DEFAULT_TARGET,
    ceilings_override: Mapping | None = None,
    workload_s: float | None = None,
    inputs_cross_link: bool = True,
    tiny_bytes: int = 64 * 1024,
    tiny_flood_count: int = 1000,
    latency_kernel_ns: int = 5000,
    top_buffers: int = 20,
    by: str | None = None,
    region_rows: str | None = None,
    other_targets: tuple = (),
    row_imbalance: float | None = None,
    **unknown: Any,
) -> AnalysisResult:
    """The whole analysis as one dict: ceilings, transfers, memory, roofline, fpga, the trace
    totals, region paths, kernels by name, DRAM peaks and the attribution it computed
    (analysis.trace_analysis.AnalysisResult).

    ``by``: "region" (default: one transfer group, memory row and roofline point per region
    path, instances summed) or "region_instance" (one per region record), as every table of a
    Profile names it; ``region_rows`` ("path" or "instance") is the analysis' own name for the
    same choice (analysis.trace_analysis.AnalysisOptions). ``other_targets``: more cards whose
    FPGA rankings the same analysis returns (``fpga_other_targets``). ``row_imbalance``: the row
    imbalance ratio (HiSpMV's delta) the FPGA rankings apply to restructured scatters (None: not
    known; fpgaprof.fpga.fpga_candidates). Cached on ``prof`` per
    argument set (a Profile is immutable once the trace stopped)."""
    if unknown:
        # every table of a Profile passes its options on to here: name them, not a TypeError
        # from inside
        raise InvalidArgumentError(
            f"unknown option{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(sorted(unknown))}: the analysis options are {', '.join(ANALYSIS_OPTIONS)}"
        )
    rows = region_rows_of(by) if by is not None else "path"
    if region_rows is not None:
        if by is not None and region_rows != rows:
            raise InvalidArgumentError(
                f"by={by!r} and region_rows={region_rows!r} disagree: give one"
            )
        rows = region_rows
    options = AnalysisOptions(
        target=target,
        ceilings=ceilings_override,
        workload_s=workload_s,
        inputs_cross_link=inputs_cross_link,
        tiny_bytes=tiny_bytes,
        tiny_flood_count=tiny_flood_count,
        latency_kernel_ns=latency_kernel_ns,
        top_buffers=top_buffers,
        region_rows=rows,
        other_targets=tuple(other_targets),
        row_imbalance=row_imbalance,
    )
    store = store_of(prof)
    cache = getattr(prof, "analyses", None)
    if isinstance(cache, AnalysisCache):
        return cache.analysis(store, options, lambda: ceilings(prof))
    return run_analysis(
        store, options, ceilings(prof) if options.ceilings is None else None, with_attribution=True
    )


# analyze()'s options, as its signature names them (the error for an unknown one lists them)
ANALYSIS_OPTIONS = tuple(
    name
    for name, p in inspect.signature(analyze).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
)


def region_rows_of(by: str) -> str:
    """The analysis' region_rows ("path" or "instance") of a by= value."""
    rows = REGION_BY.get(by)
    if rows is None:
        raise InvalidArgumentError(
            f"by={by!r}: use 'region' (one row per region path) or 'region_instance'"
        )
    return rows


def roofline(prof: Any, by: str = "op", **kwargs: Any) -> Table | dict:
    """Roofline points: ``by`` = "op" (HLO ops), "region" (one row per region path, e.g.
    "outer > inner", inclusive, every instance summed: key ``region`` = the path, ``name``,
    ``depth``, ``instances``), "region_instance" (one row per region record: ``region`` = its
    name, ``index``, ``path``), "kernel" (kernel names) or "trace" (one dict). Each row: time,
    flops, bytes, intensity, achieved FLOP/s and B/s, the roof and its precision,
    percent_of_roof, bound (memory | compute | latency | unknown; a path's from its sums), and
    measured_* values when counters were collected."""
    if by in REGION_BY:
        r = analyze(prof, by=by, **kwargs)["roofline"]
        # Without any kernel a region has no GPU time, FLOPs or bytes to show: rows of zeros
        # would read as measured, so the table is empty and says why (as report.html).
        rows = [] if kernel_count(prof) == 0 else r["regions"]
        t = Table(with_roof_notes(sorted(rows, key=lambda x: -x["time_ns"])))
        _roof_footer(t)
        t.title = f"roofline by {by}"
        t.schema = result_columns("roofline_point", _POINT_LEAD[by])
        if by == "region_instance":
            # rows of one name (a loop's "step" regions, or "step" under two parents) differ
            # only by their index and path: print() shows them
            t.display = ("region", "index", "path") + _POINT_COLUMNS
        t.empty_note = no_rows_note(
            prof, "no fpgaprof.region() with GPU kernels inside", regions=True
        )
        return t
    r = analyze(prof, **kwargs)["roofline"]
    if by == "trace":
        return r["trace"]
    key = {"op": "ops", "ops": "ops", "kernel": "kernels", "kernels": "kernels"}.get(by)
    if key is None:
        raise InvalidArgumentError(
            f"by={by!r}: use 'op', 'region', 'region_instance', 'kernel' or 'trace'"
        )
    rows = sorted(r[key], key=lambda x: -x["time_ns"])
    t = Table(with_roof_notes(rows))
    _roof_footer(t)
    t.title = f"roofline by {key[:-1]}"
    t.schema = result_columns("roofline_point", _POINT_LEAD[key])
    if key == "kernels":
        t.display = ("kernel",) + _POINT_COLUMNS  # the kernel's name is not in TEXT_FIRST
    t.empty_note = no_rows_note(
        prof, "no kernel was attributed to an HLO op" if key == "ops" else ""
    )
    return t


# The keys a roofline row has before its point's measures (roofline_point), per table.
_POINT_LEAD = {
    "ops": ("op", "module", "pattern", "source", "category", "cost_known", "cost_basis"),
    "kernels": ("kernel",),
    "region": ("region", "name", "depth", "instances", "path_index"),
    "region_instance": ("region", "index", "path"),
}


# The measures print() shows after a roofline row's name (the TEXT_FIRST ones a point has).
_POINT_COLUMNS = (
    "time_ns",
    "flops",
    "bytes",
    "intensity",
    "percent_of_roof",
    "bound",
    "executions",
)


def _roof_footer(t: Table) -> None:
    """The printed table's closing line when a row is above its roof (marked "⚠")."""
    above = [r for r in t if isinstance(r, Mapping) and r.get("roof_note")]
    if above:
        n = len(above)
        t.footer = f"  ⚠ {n} row{'s' if n != 1 else ''} {above[0]['roof_note']}"


def kernel_count(prof: Any) -> int | None:
    """Kernels in the trace of `prof` (None when its store cannot say)."""
    try:
        return len(store_of(prof).kernels)
    except Exception:  # noqa: BLE001 - only a note is at stake
        return None


def no_rows_note(prof: Any, otherwise: str, *, regions: bool = False) -> str:
    """Why an analysis table of `prof` is empty, in the words of every report
    (fpgaprof.analysis.sections.empty_reason): no GPU kernels at all, else `otherwise`.
    regions: a table of region rows, which says so when the trace has no fpgaprof.region()."""
    n = kernel_count(prof)
    if regions and n != 0:
        try:
            if len(store_of(prof).regions) == 0:
                return "no fpgaprof.region() in the trace"
        except Exception:  # noqa: BLE001 - only the note is at stake
            pass
    gpu = bool(records.meta_dict(store_of(prof)).get("gpu_available", False))
    return sections.empty_reason(n, otherwise, gpu)
