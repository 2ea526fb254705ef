"""The report layer's data model: ``collect(prof)`` builds the summary (the dict written as
summary.json, schema docs/summary.schema.json) that every renderer takes: summary_json,
html, digest. The timeline, whose records are too many for the summary, takes
``timeline_records(prof)``. Renderers never see the Profile.

The summary carries the fields of the MBIRJAX timing JSON (`environment`, `measurements`) so
existing tooling keeps working, plus the trace overview (api.overview): device, trace facts,
totals, kernels, transfers, memory, per-device rows and their load balance (`by_device`),
regions, ops, roofline, FPGA candidates and every warning. Sections that cannot be filled say
why ({"available": false, "reason": ...}).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from fpgaprof.analysis import attribution, sections
from fpgaprof.api.answer import SIZE_RE, answer_section
from fpgaprof.api.dataflow import dataflow_section
from fpgaprof.api.module_memory import module_memory_section
from fpgaprof.api.overview import attribution_of, report_analysis_options, trace_overview
from fpgaprof.base import records
from fpgaprof.base.constants import DEFAULT_TARGET, FULL_ROWS
from fpgaprof.base.core import core
from fpgaprof.base.text import shown_name
from fpgaprof.capture.run_environment import (
    environment_now,
    environment_with_meta,
    read_environment,
)

__all__ = [
    "SCHEMA_VERSION",
    "MEASUREMENT_RUNS",
    "collect",
    "collect_job",
    "measurements_from_regions",
    "region_measurements",
    "cap_measurements",
    "measurement_stats",
    "TimelineRecords",
    "timeline_records",
    "xspace_records",
    "timeline_cut_note",
]

# summary.json's schema (docs/summary.schema.json); 2: each warning is a record (code,
# severity, source, count, numbers, message; docs/reports.md "Warnings"), not a string.
SCHEMA_VERSION = 2
# job.json's, which lists no warnings (only each rank's warning_count).
JOB_SCHEMA_VERSION = 1

# Region names "<operation>/<size>", "<operation>@<size>", "<operation>[<size>]" or
# "<operation> size=<size>" give a measurement a volume size (api.answer.SIZE_RE).
_SIZE_RE = SIZE_RE


def measurements_from_regions(instances: Any) -> list[dict]:
    """One measurement per region instance: operation and volume size from the region name,
    run = how many times the same (operation, size) was seen before, time = wall seconds.
    `instances`: dicts (index, name, start_ns, end_ns) or sections.RegionInstances. collect() uses
    region_measurements, which gives the same rows without one dict per instance."""
    if isinstance(instances, sections.RegionInstances):
        instances = instances.rows()
    seen: dict[tuple, int] = {}
    parsed: dict[str, tuple] = {}  # names repeat (a loop body): each is parsed once
    out = []
    for inst in sorted(instances, key=lambda r: (r["start_ns"], r["index"])):
        name = inst["name"]
        key = parsed.get(name)
        if key is None:
            m = _SIZE_RE.match(name)
            key = parsed[name] = (m.group("op"), int(m.group("size"))) if m else (name, None)
        op, size = key
        run = seen.get((op, size), 0)
        seen[(op, size)] = run + 1
        out.append(
            {
                "operation": shown_name(op),
                "volume_size": size,
                "run": run,
                "time": max(inst["end_ns"] - inst["start_ns"], 0) / 1e9,
            }
        )
    return out


# Runs listed in `measurements` per (operation, volume size): the first ones, in start order
# (run 0 usually includes compilation); every run is counted in `measurement_stats`.
MEASUREMENT_RUNS = 20


def region_measurements(
    inst: sections.RegionInstances, runs: int = MEASUREMENT_RUNS, limit: int = FULL_ROWS
) -> tuple[list[dict], int, dict]:
    """cap_measurements(measurements_from_regions(inst)) and measurement_stats of all of them,
    from the region columns: dicts only for the listed runs and one per (operation, size), so
    a loop of 10^5 instances builds 20 rows, not 10^5 (same values, same order)."""

    n = len(inst)
    if n == 0:
        return [], 0, measurement_stats([], limit)
    # by start, then record index (as measurements_from_regions sorts)
    order = np.lexsort((inst.index, inst.start_ns))
    uniq, inv = records.unique_names(inst.names)
    keys: dict[tuple, int] = {}
    group_of_name = np.empty(len(uniq), dtype=np.int64)
    key_list: list[tuple] = []
    for u, name in enumerate(uniq):
        m = _SIZE_RE.match(str(name))
        key = (m.group("op"), int(m.group("size"))) if m else (str(name), None)
        if key not in keys:
            keys[key] = len(key_list)
            key_list.append(key)
        group_of_name[u] = keys[key]
    g = group_of_name[inv][order]
    t = (np.maximum(inst.end_ns - inst.start_ns, 0) / 1e9)[order]
    # run = earlier runs of the same (operation, size) in start order
    by_group = np.argsort(g, kind="stable")
    gs = g[by_group]
    starts = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
    lengths = np.diff(np.r_[starts, n])
    run = np.empty(n, dtype=np.int64)
    run[by_group] = np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)
    listed = np.flatnonzero(run < runs)[:limit]
    kept = [
        {
            "operation": shown_name(key_list[g[i]][0]),
            "volume_size": key_list[g[i]][1],
            "run": int(run[i]),
            "time": float(t[i]),
        }
        for i in listed
    ]
    # stats per group, groups in order of their first run (as measurement_stats meets them)
    first_pos = by_group[starts]
    items = []
    for s0, ln, _first in sorted(zip(starts, lengths, first_pos), key=lambda x: x[2]):
        ts = t[by_group[s0 : s0 + ln]]  # this group's times in start order
        op, size = key_list[gs[s0]]
        items.append(
            {
                "operation": shown_name(op),
                "volume_size": size,
                "runs": int(ln),
                "total": float(ts.sum()),
                "mean": float(ts.mean()),
                "median": float(np.median(ts)),
                "min": float(ts.min()),
                "max": float(ts.max()),
                "first": float(ts[0]),
            }
        )
    items.sort(key=lambda r: (-r["total"], r["operation"], str(r["volume_size"])))
    stats = {
        "runs": n,
        "count": len(items),
        "items": items[:limit],
        "items_left_out": max(len(items) - limit, 0),
    }
    return kept, n - len(kept), stats


def _group_key(m: Mapping) -> tuple:
    return (str(m.get("operation")), m.get("volume_size"))


def cap_measurements(
    ms: list[dict], runs: int = MEASUREMENT_RUNS, limit: int = FULL_ROWS
) -> tuple[list[dict], int]:
    """The measurements listed in summary.json: per (operation, volume size) the first `runs`
    in list order, at most `limit` in all; and how many were left out (all of them are in
    measurement_stats). A loop of 10^5 region instances lists 20 runs, not 10^5."""
    seen: dict[tuple, int] = {}
    kept: list[dict] = []
    for m in ms:
        k = _group_key(m)
        n = seen.get(k, 0)
        seen[k] = n + 1
        if n < runs and len(kept) < limit:
            kept.append(m)
    return kept, len(ms) - len(kept)


def measurement_stats(ms: Iterable[Mapping], limit: int = FULL_ROWS) -> dict:
    """Every run per (operation, volume size): runs, total, mean, median, min, max and the
    first run's time (compilation included, usually), most total time first; `limit` rows,
    the rest counted in items_left_out."""

    groups: dict[tuple, list[float]] = {}
    total_runs = 0
    for m in ms:
        t = m.get("time")
        groups.setdefault(_group_key(m), []).append(float(t) if t is not None else math.nan)
        total_runs += 1
    items = []
    for (op, size), ts in groups.items():
        a = np.asarray(ts, dtype=np.float64)
        ok = a[np.isfinite(a)]
        items.append(
            {
                "operation": shown_name(op),
                "volume_size": size,
                "runs": len(ts),
                "total": float(ok.sum()),
                "mean": float(ok.mean()) if len(ok) else None,
                "median": float(np.median(ok)) if len(ok) else None,
                "min": float(ok.min()) if len(ok) else None,
                "max": float(ok.max()) if len(ok) else None,
                "first": ts[0] if math.isfinite(ts[0]) else None,
            }
        )
    # ties in a stable order whatever types a caller gave as sizes
    items.sort(key=lambda r: (-r["total"], r["operation"], str(r["volume_size"])))
    return {
        "runs": total_runs,
        "count": len(items),
        "items": items[:limit],
        "items_left_out": max(len(items) - limit, 0),
    }


def collect(
    prof: Any,
    *,
    target: str | None = None,
    trace_path: str | None = None,
    environment: Mapping | None = None,
    measurements: Iterable[Mapping] | None = None,
    extra_warnings: Iterable[Any] = (),
    progress: Any = None,
    untraced_processes: int = 0,
    row_imbalance: float | None = None,
) -> dict:
    """Builds the whole summary (the dict written as summary.json) from a Profile: the trace
    overview (api.overview: facts, sections, warnings) with the run's environment and
    measurements.

    environment / measurements: given ones win, as given (e.g. a sweep's own timings).
    Otherwise, for a saved trace (trace_path) the environment.json `fpgaprof run` wrote beside
    it, and this process's environment when reporting in-process; what those leave unknown
    comes from the trace's META (capture.run_environment.environment_with_meta), never from
    the reporting machine;
    one measurement per fpgaprof.region() instance; `measurements` lists the first
    MEASUREMENT_RUNS of each (operation, size) (`measurements_left_out` counts the rest) and
    `measurement_stats` sums up every run. progress: an object with stage(name)
    (fpgaprof.report.Progress), told when attribution and the analysis begin.
    untraced_processes: further Python processes of a `fpgaprof run` that ran untraced (an
    empty GPU table then says they may have launched kernels). row_imbalance: the row
    imbalance ratio (HiSpMV's delta) the FPGA rankings and the answer apply to every
    restructured scatter (None: not known; docs/fpga-model.md, "Row imbalance").
    """
    overview = trace_overview(
        prof,
        target=target,
        trace_path=trace_path,
        extra_warnings=extra_warnings,
        progress=progress,
        untraced_processes=untraced_processes,
        row_imbalance=row_imbalance,
    )
    if environment is not None:
        env = dict(environment)
    elif trace_path:
        # a saved trace: only what the traced process recorded beside it is its environment
        env = read_environment(trace_path) or {}
    else:
        env = environment_now()  # in the traced process itself
    if environment is None:
        # What the run did not record, the trace's own META may know (device, driver, CUPTI;
        # the JAX and MBIRJAX versions in traces written since META records them).
        meta = records.attr_or(prof, "meta")
        names = [str(d.get("name") or "") for d in overview.data.get("devices") or []]
        env = environment_with_meta(
            env, dict(meta) if isinstance(meta, Mapping) else None, [n for n in names if n]
        )
    for k in ("backend", "devices", "jax_version", "mbirjax_version"):
        env.setdefault(k, [] if k == "devices" else None)
    if measurements is not None:
        all_meas = [dict(m) for m in measurements]
        meas, meas_left_out = cap_measurements(all_meas)
        meas_stats = measurement_stats(all_meas)
    else:
        meas, meas_left_out, meas_stats = region_measurements(overview.region_instances)

    answer = _answer(prof, overview.data, overview.analysis)
    out = {
        "answer": answer,
        "schema_version": SCHEMA_VERSION,
        "generated_by": {"tool": "fpgaprof", "version": _version()},
        "environment": env,
        "measurements": meas,
        "measurements_left_out": meas_left_out,
        "measurement_stats": meas_stats,
        **overview.data,
    }
    # XLA's buffer assignment (traces that kept it): the memory view and the dataflow graphs.
    # Absent keys for older traces, whose summaries stay as they were.
    module_memory = module_memory_section(
        prof, **report_analysis_options(target or DEFAULT_TARGET, row_imbalance)
    )
    if module_memory is not None:
        out["module_memory"] = module_memory
        dataflow = dataflow_section(prof, out.get("candidates"))
        if dataflow is not None:
            out["dataflow"] = dataflow
    return out


def _answer(prof: Any, data: Mapping, analysis: Any) -> dict:
    """summary.json's `answer` (api.answer), from the report's one analysis; a failure says
    why instead."""
    try:
        return answer_section(prof, data, analysis)
    except Exception as e:  # noqa: BLE001 - the rest of the report stands without it
        return {"available": False, "reason": f"the answer could not be built: {e}"}


def collect_job(
    job: Any, *, target: str | None = None, on_rank: Any = None, row_imbalance: float | None = None
) -> dict:
    """The job model (job.json; what job_html and job_text render) of an api.job.Job: its
    summary, built by streaming over the rank traces (one in memory at a time), with the
    generator's version. on_rank(done, total): told as each trace is analysed. row_imbalance:
    the ratio every rank's FPGA rankings take (collect())."""
    from_job = job.summary(target or DEFAULT_TARGET, on_rank, row_imbalance)
    return {
        "schema_version": JOB_SCHEMA_VERSION,
        "generated_by": {"tool": "fpgaprof", "version": _version()},
        **from_job,
    }


def _version() -> str:
    return str(core.__version__)


# ---- the timeline's model ---------------------------------------------------------------------


@dataclasses.dataclass
class TimelineRecords:
    """What timeline.json is drawn from: the record columns of each category (kernels with
    their HLO op, module and source line where the attribution knows them), the trace facts
    (sections.trace_facts) and the devices (sections.devices_of)."""

    kernels: dict[str, np.ndarray]
    memcpys: dict[str, np.ndarray]
    memsets: dict[str, np.ndarray]
    api_calls: dict[str, np.ndarray]
    markers: dict[str, np.ndarray]
    regions: dict[str, np.ndarray]
    facts: dict
    devices: list[dict]
    # the trace's HLO modules ({"name", "program_id", "text"}): only xspace_records fills it
    hlo_modules: list[dict] = dataclasses.field(default_factory=list)

    def take(self) -> tuple[dict[str, np.ndarray], ...]:
        """The columns (kernels, memcpys, memsets, api_calls, markers, regions), handed over:
        the model keeps none, so the writer can free each as it is done with it."""
        out = (self.kernels, self.memcpys, self.memsets, self.api_calls, self.markers, self.regions)
        self.kernels = self.memcpys = self.memsets = {}
        self.api_calls = self.markers = self.regions = {}
        return out


# The attribution columns a kernel's timeline args carry.
_KERNEL_ARGS = ("hlo_op", "module", "program_id", "source")


def _kernel_attribution(prof: Any, n: int) -> dict[str, np.ndarray]:
    """hlo_op / module / source columns per kernel from the attribution, when available."""
    if n == 0:
        return {}
    try:
        cols = attribution.kernel_columns(attribution_of(prof), _KERNEL_ARGS)
    except Exception:  # noqa: BLE001 - no attribution for this profile: args stay plain
        return {}
    out = {}
    for k in _KERNEL_ARGS:
        v = cols.get(k)
        if v is not None and len(v) == n:
            out[k] = np.asarray(v, dtype=object)
    return out


def _timed(cols: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], int]:
    """The GPU records that have times, and how many had none (start = end = 0: kernel replay
    whose counter window was not paired, or a full timestamp buffer). Those have no place on a
    time axis: they are left out of the timelines, and their number is said there."""
    n = records.nrows(cols)
    if n == 0 or "start_ns" not in cols or "end_ns" not in cols:
        return cols, 0
    keep = (np.asarray(cols["start_ns"]) != 0) | (np.asarray(cols["end_ns"]) != 0)
    left = int(n - np.count_nonzero(keep))
    if left == 0:
        return cols, 0
    return {k: (v[keep] if len(v) == n else v) for k, v in cols.items()}, left


def untimed_note(untimed: dict[str, int]) -> str:
    """The note for GPU records left out of a timeline for want of times ("" when none)."""
    parts = [f"{n:,} {what}" for what, n in untimed.items() if n]
    if not parts:
        return ""
    return (
        f"{' and '.join(parts)} without GPU timestamps (start = end = 0) are not on the "
        "timeline: kernel replay whose counter window could not be paired, or a full timestamp "
        "buffer (the trace's warnings say which); a trace without counters has their times"
    )


def _counter_values(prof: Any, nk: int, nm: int) -> tuple[np.ndarray, np.ndarray]:
    """Per kernel and per copy, its hardware counter values ({metric: value}, None without):
    the XSpace export carries them as stats."""
    per_kernel = np.full(nk, None, dtype=object)
    per_copy = np.full(nm, None, dtype=object)
    table = records.attr_or(prof, "counters")
    if table is None or not records.table_len(table):
        return per_kernel, per_copy
    c = table.columns(["kernel_index", "memcpy_index", "metric", "value"])
    for k, m, metric, value in zip(
        c["kernel_index"].tolist(), c["memcpy_index"].tolist(), c["metric"], c["value"].tolist()
    ):
        target, i = (per_kernel, k) if k < nk else (per_copy, m)
        if i < len(target):
            if target[i] is None:
                target[i] = {}
            target[i][str(metric)] = float(value)
    return per_kernel, per_copy


def timeline_records(prof: Any, counters: bool = False) -> TimelineRecords:
    """The timeline's model of a Profile (or an object with the same tables). GPU records
    without times are left out (facts["untimed_records"] counts them per table). counters:
    kernels and copies get a "counters" column ({metric: value} or None)."""
    g = records.attr_or
    kc = records.columns(g(prof, "kernels"))
    kc.update(_kernel_attribution(prof, records.nrows(kc)))
    tbl = g(prof, "transfers")
    mc = records.columns(tbl if tbl is not None else g(prof, "memcpys"))
    if counters:
        kc["counters"], mc["counters"] = _counter_values(prof, records.nrows(kc), records.nrows(mc))
    kc, k_left = _timed(kc)
    mc, m_left = _timed(mc)
    sc, s_left = _timed(records.columns(g(prof, "memsets")))
    facts = sections.trace_facts(prof)
    facts["untimed_records"] = {"kernels": k_left, "copies": m_left, "memsets": s_left}
    return TimelineRecords(
        kernels=kc,
        memcpys=mc,
        memsets=sc,
        api_calls=records.columns(g(prof, "api_calls")),
        markers=records.columns(g(prof, "markers")),
        regions=records.columns(g(prof, "regions")),
        facts=facts,
        devices=sections.devices_of(prof),
    )


def xspace_records(prof: Any) -> TimelineRecords:
    """The XSpace export's model: the timeline's, with the trace's HLO modules."""
    t = timeline_records(prof, counters=True)
    mods = records.attr_or(prof, "hlo_modules", None)
    if callable(mods):
        mods = mods()
    t.hlo_modules = [
        {
            "name": str(m.name),
            "program_id": int(m.program_id),
            "text": str(m.text),
            "buffer_assignment": str(getattr(m, "buffer_assignment", "") or ""),
            "live_ranges": str(getattr(m, "live_ranges", "") or ""),
        }
        for m in (mods or [])
    ]
    return t


def timeline_cut_note(prof: Any, max_events: int | None) -> str:
    """The warning for a timeline.json cut at max_events records ("" when all fit)."""
    tables = (
        "kernels",
        "transfers" if records.attr_or(prof, "transfers") is not None else "memcpys",
        "memsets",
        "api_calls",
        "markers",
        "regions",
    )
    total = sum(records.table_len(records.attr_or(prof, t)) for t in tables)
    if max_events is None or total <= max_events:
        return ""
    return (
        f"timeline.json shows the first {max_events:,} of {total:,} records by start time "
        f"({total - max_events:,} later ones left out, a line marks the cut); `fpgaprof "
        f"report TRACE --timeline-events 0` writes them all, --timeline-events N another "
        f"number"
    )
