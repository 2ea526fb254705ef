"""summary.json: the machine-readable report (schema: docs/summary.schema.json).

It carries the fields of the MBIRJAX timing JSON (`environment`, `measurements`) so existing
tooling keeps working, plus the profile: device, trace facts, totals, kernels, transfers, memory,
per-device rows and their load balance (`by_device`), regions, ops, roofline, FPGA candidates
and every warning. Sections that cannot be filled say
why ({"available": false, "reason": ...}).
"""
from __future__ import annotations

import json
import math
import os
import re
from typing import Any, Iterable, Mapping

from fpgaprof.base.atomic import write_text_atomic
from fpgaprof.capture.run_environment import ENVIRONMENT_FILE, environment_now, read_environment
from fpgaprof.report import _data as D

SCHEMA_VERSION = 1

# Region names "<operation>/<size>", "<operation>@<size>", "<operation>[<size>]" or
# "<operation> size=<size>" give a measurement a volume size.
_SIZE_RE = re.compile(r"^(?P<op>.+?)(?:[/@]|\s+size=|\[)(?P<size>\d+)\]?$")


def measurements_from_regions(instances: Any) -> list[dict]:
    """One measurement per region instance: operation and volume size from the region name,
    run = how many times the same (operation, size) was seen before, time = wall seconds.
    `instances`: dicts (index, name, start_ns, end_ns) or D.RegionInstances. collect() uses
    region_measurements, which gives the same rows without one dict per instance."""
    if isinstance(instances, D.RegionInstances):
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
        out.append({"operation": op, "volume_size": size, "run": run,
                    "time": max(inst["end_ns"] - inst["start_ns"], 0) / 1e9})
    return out


# Runs listed in `measurements` per (operation, volume size): the first ones, in start order
# (run 0 usually includes compilation); every run is counted in `measurement_stats`.
MEASUREMENT_RUNS = 20


def region_measurements(inst: "D.RegionInstances", runs: int = MEASUREMENT_RUNS,
                        limit: int = D.FULL_ROWS) -> tuple[list[dict], int, dict]:
    """cap_measurements(measurements_from_regions(inst)) and measurement_stats of all of them,
    from the region columns: dicts only for the listed runs and one per (operation, size), so
    a loop of 10^5 instances builds 20 rows, not 10^5 (same values, same order)."""
    import numpy as np
    n = len(inst)
    if n == 0:
        return [], 0, measurement_stats([], limit)
    # by start, then record index (as measurements_from_regions sorts)
    order = np.lexsort((inst.index, inst.start_ns))
    uniq, inv = D.unique_names(inst.names)
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
    kept = [{"operation": key_list[g[i]][0], "volume_size": key_list[g[i]][1],
             "run": int(run[i]), "time": float(t[i])} for i in listed]
    # stats per group, groups in order of their first run (as measurement_stats meets them)
    first_pos = by_group[starts]
    items = []
    for s0, ln, fp in sorted(zip(starts, lengths, first_pos), key=lambda x: x[2]):
        ts = t[by_group[s0:s0 + ln]]  # this group's times in start order
        op, size = key_list[gs[s0]]
        items.append({"operation": op, "volume_size": size, "runs": int(ln),
                      "total": float(ts.sum()), "mean": float(ts.mean()),
                      "median": float(np.median(ts)), "min": float(ts.min()),
                      "max": float(ts.max()), "first": float(ts[0])})
    items.sort(key=lambda r: (-r["total"], r["operation"], str(r["volume_size"])))
    stats = {"runs": n, "count": len(items), "items": items[:limit],
             "items_left_out": max(len(items) - limit, 0)}
    return kept, n - len(kept), stats


def _group_key(m: Mapping) -> tuple:
    return (str(m.get("operation")), m.get("volume_size"))


def cap_measurements(ms: list[dict], runs: int = MEASUREMENT_RUNS,
                     limit: int = D.FULL_ROWS) -> tuple[list[dict], int]:
    """The measurements listed in summary.json: per (operation, volume size) the first `runs`
    in list order, at most `limit` in all; and how many were left out (all of them are in
    measurement_stats). A loop of 10^5 region instances lists 20 runs, not 10^5."""
    seen: dict[tuple, int] = {}
    kept = []
    for m in ms:
        k = _group_key(m)
        n = seen.get(k, 0)
        seen[k] = n + 1
        if n < runs and len(kept) < limit:
            kept.append(m)
    return kept, len(ms) - len(kept)


def measurement_stats(ms: Iterable[Mapping], limit: int = D.FULL_ROWS) -> dict:
    """Every run per (operation, volume size): runs, total, mean, median, min, max and the
    first run's time (compilation included, usually), most total time first; `limit` rows,
    the rest counted in items_left_out."""
    import numpy as np
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
        items.append({"operation": op, "volume_size": size, "runs": len(ts),
                      "total": float(ok.sum()),
                      "mean": float(ok.mean()) if len(ok) else None,
                      "median": float(np.median(ok)) if len(ok) else None,
                      "min": float(ok.min()) if len(ok) else None,
                      "max": float(ok.max()) if len(ok) else None,
                      "first": ts[0] if math.isfinite(ts[0]) else None})
    # ties in a stable order whatever types a caller gave as sizes
    items.sort(key=lambda r: (-r["total"], r["operation"], str(r["volume_size"])))
    return {"runs": total_runs, "count": len(items), "items": items[:limit],
            "items_left_out": max(len(items) - limit, 0)}


def _ops_rows(rows: list[dict]) -> list[dict]:
    out = []
    for r in rows:
        total_s = D.first(r, "total_s", "time_s")
        if total_s is None and D.first(r, "total_ns") is not None:
            total_s = float(D.first(r, "total_ns")) / 1e9
        # executions of the op (the static cost is per execution); kernels may be more
        count = D.first(r, "executions", "count", "calls", "kernel_count", default=0)
        mean_s = D.first(r, "mean_s")
        if mean_s is None and D.first(r, "mean_ns") is not None:
            mean_s = float(D.first(r, "mean_ns")) / 1e9
        if mean_s is None and total_s is not None and count:
            mean_s = total_s / count
        nbytes = D.first(r, "bytes", "bytes_accessed")
        if nbytes is None and (r.get("bytes_read") is not None
                               or r.get("bytes_written") is not None):
            nbytes = (r.get("bytes_read") or 0) + (r.get("bytes_written") or 0)
        source = D.first(r, "source", "source_location")
        if source is None:
            source = D.source_location(r)
        out.append({
            "op": str(D.first(r, "hlo_op", "op", "name", "instruction", default="?")),
            "module": D.first(r, "module", "module_name", "hlo_module"),
            "category": D.first(r, "category", "kind", "opcode") or None,
            "count": int(count or 0),
            "kernel_count": D.first(r, "kernel_count", "kernels"),
            "total_s": total_s,
            "mean_s": mean_s,
            "flops": None if r.get("has_cost") is False or r.get("cost_unknown") else
            D.first(r, "flops"),
            "bytes": None if r.get("has_cost") is False or r.get("cost_unknown") else nbytes,
            "pattern": D.first(r, "pattern", "access_pattern") or None,
            "source": source or None,
        })
    out.sort(key=lambda r: -(r["total_s"] or 0.0))
    return out


def _attribution_of(prof: Any) -> Any:
    """The AttributionResult of a Profile (cached on it): prof.attribution when the Profile
    has it, else fpgaprof._attribution.attribute(prof._store)."""
    cached = getattr(prof, "_fpgaprof_report_attribution", None)
    if cached is not None:
        return cached
    a = getattr(type(prof), "attribution", None)
    if a is not None:
        res = prof.attribution
    else:
        store = getattr(prof, "_store", None)
        if store is None:
            raise AttributeError("no attribution: this profile has no trace store")
        from fpgaprof import _attribution
        res = _attribution.attribute(store)
    try:
        setattr(prof, "_fpgaprof_report_attribution", res)
    except (AttributeError, TypeError):
        pass
    return res


def _ops_of(prof: Any) -> Any:
    if getattr(type(prof), "ops", None) is not None or "ops" in getattr(prof, "__dict__", {}):
        return prof.ops
    return _attribution_of(prof).ops


def _op_key(module: Any, op: Any) -> tuple[str, str]:
    return ("" if module is None else str(module), str(op))


def _ops_section(prof: Any, roof_rows: list[dict], warnings: list[str],
                 kernel_count: int | None = None, gpu_available: bool = False) -> dict:
    """Every HLO op (up to D.FULL_ROWS, largest time first: `fpgaprof compare` reads the
    complete table), with its bound from the roofline analysis joined by (module, op).
    kernel_count / gpu_available: say why there is no op (D.empty_reason)."""
    if kernel_count == 0:  # nothing to attribute: the same reason as every GPU table
        return D._unavailable(D.empty_reason(0, "", gpu_available))
    sec = D.analysis_section(lambda: _ops_of(prof), "per-op attribution (prof.ops)", warnings)
    if not sec["available"]:
        return sec
    rows = _ops_rows(sec["rows"])
    if not rows:
        return D._unavailable(D.unattributed_note(kernel_count))
    bound = {_op_key(r.get("module"), r.get("op")): r.get("bound") for r in roof_rows}
    for r in rows:
        r["bound"] = bound.get(_op_key(r["module"], r["op"]))
    return {"available": True, "count": len(rows), "items": rows[:D.FULL_ROWS],
            "rows_left_out": max(len(rows) - D.FULL_ROWS, 0)}


def _call(prof: Any, method: str, module: str, func: str, **kwargs: Any) -> Any:
    """prof.<method>(**kwargs) when the Profile has it, else fpgaprof.<module>.<func>(prof, ...)
    (the analysis modules work on any Profile). D.MissingAnalysis when neither exists."""
    m = getattr(type(prof), method, None)
    if m is not None:
        attr = getattr(prof, method)
        return attr(**kwargs) if callable(attr) else attr
    import importlib
    try:
        mod = importlib.import_module(f"fpgaprof.{module}")
    except ImportError as e:
        raise D.MissingAnalysis(f"no fpgaprof.{module}: {e}") from None
    fn = getattr(mod, func, None)
    if fn is None:
        raise D.MissingAnalysis(f"fpgaprof.{module} has no {func}()")
    return fn(prof, **kwargs)


def _ceilings(prof: Any) -> tuple[dict | None, str | None]:
    """Device ceilings (peak FLOP/s per precision, DRAM and link bandwidth, with their
    sources) from the analysis, or (None, why)."""
    try:
        c = _call(prof, "ceilings", "roofline", "ceilings")
    except Exception as e:  # shown as the reason next to the chart
        return None, f"device ceilings not available: {type(e).__name__}: {D.one_line(e)}"
    if c is None:
        return None, "device ceilings not available: no device in this trace"
    if not isinstance(c, Mapping):
        c = {k: getattr(c, k) for k in dir(c)
             if not k.startswith("_") and not callable(getattr(c, k))}
    return D._py(dict(c)), None


# Roofline points kept in summary.json and drawn (largest time first; the rest is counted).
ROOFLINE_POINTS = 200
# Hardware-counter values of a roofline row (docs/roofline.md); null where not collected.
# measured_coverage: share (0..1) of the point's kernel time that has counters; the measured
# rates and roof fraction are over that time only.
MEASURED_FIELDS = ("measured_flops", "measured_bytes", "measured_intensity",
                   "measured_roof_fraction", "measured_bound", "measured_coverage")


def _roofline_point(r: dict) -> dict:
    t = D.first(r, "time_s", "total_s")
    if t is None and D.first(r, "total_ns", "time_ns") is not None:
        t = float(D.first(r, "total_ns", "time_ns")) / 1e9
    frac = D.first(r, "roof_fraction")
    if frac is None and r.get("percent_of_roof") is not None:
        frac = float(r["percent_of_roof"]) / 100.0
    p = {
        "op": str(D.first(r, "op", "hlo_op", "name", default="?")),
        "module": D.first(r, "module"),
        "time_s": t,
        "flops": D.first(r, "flops"),
        "bytes": D.first(r, "bytes"),
        "intensity": D.first(r, "intensity", "arithmetic_intensity", "flops_per_byte"),
        "achieved_flops_per_s": D.first(r, "achieved_flops_per_s", "flops_per_s"),
        "achieved_bytes_per_s": D.first(r, "achieved_bytes_per_s", "bytes_per_s"),
        "precision": D.first(r, "precision"),
        "roof_flops_per_s": D.first(r, "roof_flops_per_s"),
        "roof_fraction": frac,
        "bound": D.first(r, "bound", default="unknown"),
        "source": D.first(r, "source", "source_line") or None,
    }
    measured = bool(r.get("has_measured"))
    p["has_measured"] = measured
    m_pct = r.get("measured_percent_of_roof") if measured else None
    p.update({
        "measured_flops": r.get("measured_flops") if measured else None,
        "measured_bytes": r.get("measured_bytes") if measured else None,
        "measured_intensity": r.get("measured_intensity") if measured else None,
        "measured_roof_fraction": None if m_pct is None else float(m_pct) / 100.0,
        "measured_bound": r.get("measured_bound") if measured else None,
        "measured_coverage": r.get("measured_coverage") if measured else None,
    })
    return p


def _roofline_section(prof: Any, roof_rows: list[dict] | None, roof_reason: str | None,
                      ops: dict, kernel_count: int | None = None,
                      gpu_available: bool = False) -> dict:
    """Points per HLO op from the roofline analysis; without it, from the ops' static cost and
    measured time (intensity and achieved rates only, no bound). Without any kernel the reason
    is D.empty_reason's, as for the ops."""
    ceilings, ceilings_reason = _ceilings(prof)
    points = []
    source = None
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
                "op": r["op"], "module": r.get("module"), "time_s": t, "flops": fl * runs,
                "bytes": b * runs, "intensity": fl / b,
                "achieved_flops_per_s": fl * runs / t,
                "achieved_bytes_per_s": b * runs / t,
                "roof_fraction": None, "bound": "unknown", "source": r["source"],
                "has_measured": False}
            p.update({k: None for k in MEASURED_FIELDS})
            points.append(p)
    if not points:
        if kernel_count == 0:
            reason = D.empty_reason(0, "", gpu_available)
        elif roof_rows is None:
            reason = roof_reason
        elif ops.get("available") is False:
            reason = f"no roofline point: {ops['reason']}"
        else:
            reason = None
        out = D._unavailable(reason or "no op with FLOPs, bytes and a measured time")
        out["ceilings"] = ceilings
        return out
    points.sort(key=lambda p: -(p["time_s"] or 0.0))
    out = {"available": True, "points_from": source, "ceilings": ceilings,
           "ceilings_reason": ceilings_reason, "count": len(points),
           "points": points[:ROOFLINE_POINTS],
           "points_left_out": max(len(points) - ROOFLINE_POINTS, 0),
           "has_measured": any(p["has_measured"] for p in points)}
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
    return {"kernel_count": int(r.get("kernel_count", 0)),
            "cost_coverage": r.get("cost_coverage"), **p}


def _region_roofline_point(r: dict) -> dict:
    """A region path's roofline point (the analysis' row), keyed by the path (`region`)."""
    return {"region": str(r.get("region")), "name": str(r.get("name")),
            "depth": int(r.get("depth", 0)), "instances": int(r.get("instances", 0)),
            **_totals_point(r)}


def _roofline_totals(an: dict | None, reason: str | None, kernel_count: int | None,
                     gpu_available: bool, region_count: int | None) -> dict:
    """The roofline of the whole trace (`trace`: every kernel, attributed or not, with the
    static cost of the attributed ones) and of each region path (`by_region`, inclusive of
    nested regions, the ROOFLINE_POINTS with most kernel time; `items_left_out`), as
    prof.roofline(by="trace") and prof.roofline(by="region") give them. They are there when
    the analysis ran, also when no op has a point (`available` is about the op points)."""
    if an is None:
        why = reason or "the roofline analysis gave no result"
        return {"trace": None, "by_region": D._unavailable(why)}
    r = an["roofline"]
    trace = None
    if kernel_count != 0:
        trace = _totals_point(dict(r["trace"]))
    rows = [dict(x) for x in r.get("regions", []) if "path_index" in x] \
        if kernel_count != 0 else []
    rows = [x for x in rows if int(x.get("kernel_count", 0)) > 0]
    if not rows:
        return {"trace": trace, "by_region": D._unavailable(
            region_empty_reason(kernel_count, region_count, gpu_available))}
    rows.sort(key=lambda x: (-int(x.get("time_ns") or 0), str(x.get("region"))))
    return {"trace": trace, "by_region": {
        "available": True, "count": len(rows),
        "items": [_region_roofline_point(x) for x in rows[:ROOFLINE_POINTS]],
        "items_left_out": max(len(rows) - ROOFLINE_POINTS, 0)}}


def _candidates_section(fpga: dict | None, reason: str | None, tgt: str,
                        kernel_count: int | None = None, gpu_available: bool = False,
                        region_count: int | None = None) -> dict:
    """Rows of the FPGA model (as prof.fpga_candidates(target) gives them), best first: the
    first D.TOP_ROWS; the rest is counted in items_left_out. Empty tables say why with
    D.empty_reason (no kernel at all) or their own reason."""
    if fpga is None:
        return {**D._unavailable(reason or "the FPGA model gave no result"), "target": tgt}
    tgt = (fpga.get("target") or {}).get("name") or tgt  # a card file's card by its own name
    rows = [D._py(dict(c)) for c in fpga.get("candidates", [])]
    regions = _region_candidates(fpga, kernel_count, gpu_available, region_count)
    if not rows:
        why = D.empty_reason(kernel_count, "no candidate op (no attributed GPU time)",
                             gpu_available)
        return {**D._unavailable(why), "target": tgt, "regions": regions}
    return {"available": True, "target": tgt, **_best_rows(rows),
            "what_if": D._py({k: v for k, v in fpga.items() if k not in ("candidates", "regions")}),
            "regions": regions}


def _best_rows(rows: list) -> dict:
    """The first D.TOP_ROWS of a ranked table, with the count of all and of those left out."""
    return {"count": len(rows), "items": rows[:D.TOP_ROWS],
            "items_left_out": max(len(rows) - D.TOP_ROWS, 0)}


def region_empty_reason(kernel_count: int | None, region_count: int | None,
                        gpu_available: bool = False) -> str:
    """Why there is no region row in a GPU table (region candidates, roofline by region):
    no GPU kernels at all (D.empty_reason) first, then no region, then no kernel in one."""
    if region_count == 0 and kernel_count != 0:
        return "no fpgaprof.region() in the trace"
    return D.empty_reason(kernel_count, "no fpgaprof.region() with GPU kernels inside",
                          gpu_available)


def _region_candidates(fpga: dict, kernel_count: int | None = None,
                       gpu_available: bool = False, region_count: int | None = None) -> dict:
    """fpgaprof.region() paths ranked as offload units (prof.fpga_candidates(by="region")),
    best first: the first D.TOP_ROWS, the rest counted in items_left_out."""
    rows = [D._py(dict(c)) for c in fpga.get("regions", [])]
    if not rows:
        return D._unavailable(region_empty_reason(kernel_count, region_count, gpu_available))
    return {"available": True, **_best_rows(rows)}


def _interval_totals(facts: dict, *parts: dict) -> dict:
    """GPU busy (union of the kernel, copy and memset intervals), idle and busy share of the
    wall time; all None for a trace without GPU data (nothing was measured, so no idle time
    either), 0 busy for a traced GPU that ran nothing."""
    import numpy as np
    starts = [p["start"] for p in parts if p]
    ends = [p["end"] for p in parts if p]
    wall_s = facts["wall_time_s"]
    if not starts:
        if not facts.get("gpu_available"):
            return {"gpu_busy_s": None, "gpu_idle_s": None, "gpu_busy_fraction": None}
        return {"gpu_busy_s": 0.0, "gpu_idle_s": wall_s, "gpu_busy_fraction": 0.0}
    busy = D.union_ns(np.concatenate(starts), np.concatenate(ends)) / 1e9
    return {"gpu_busy_s": busy, "gpu_idle_s": max(wall_s - busy, 0.0),
            "gpu_busy_fraction": busy / wall_s if wall_s else None}


def _analysis_of(prof: Any, target: str, warnings: list[str]
                 ) -> tuple[dict | None, str | None, str | None]:
    """The whole C++ analysis (fpgaprof.roofline.analyze: transfers, memory, roofline, FPGA
    model; computed once and cached on the profile) for `target`. Returns (result, why it is
    missing, why the FPGA part is missing). An unknown target only costs the FPGA part."""
    def spec() -> Any:
        from fpgaprof import fpga
        return fpga.target_spec(target)
    _, target_reason = D.run_analysis(spec, f"FPGA target {target!r}")
    tgt = target if target_reason is None else DEFAULT_TARGET

    def analyze() -> Any:
        from fpgaprof import roofline
        return roofline.analyze(prof, target=tgt)
    an, why = D.run_analysis(analyze, "the analysis (fpgaprof.roofline.analyze)", warnings)
    if an is not None and target_reason is not None:
        return an, None, f"FPGA candidates (target={target!r}): {target_reason}"
    return an, why, why


DEFAULT_TARGET = "alveo-u55c"


class _Steps:
    """Calls progress.stage(name) when a progress display is given."""

    def __init__(self, progress: Any) -> None:
        self.progress = progress

    def __call__(self, what: str) -> None:
        if self.progress is not None:
            self.progress.stage(what)


def collect(prof: Any, *, target: str | None = None, trace_path: str | None = None,
            environment: Mapping | None = None,
            measurements: Iterable[Mapping] | None = None,
            extra_warnings: Iterable[str] = (), progress: Any = None) -> dict:
    """Builds the whole summary (the dict written as summary.json) from a Profile.

    environment / measurements: given ones win (e.g. a sweep's own timings). Otherwise, for a
    saved trace (trace_path) the environment.json `fpgaprof run` wrote beside it (unknown
    fields stay null without one), and this process's environment when reporting in-process;
    one measurement per fpgaprof.region() instance; `measurements` lists the first
    MEASUREMENT_RUNS of each (operation, size) (`measurements_left_out` counts the rest) and
    `measurement_stats` sums up every run. progress: an object with stage(name)
    (fpgaprof.report.Progress), told when attribution and the analysis begin.
    """
    step = _Steps(progress)
    tgt = target or DEFAULT_TARGET
    failures: list[str] = []  # analyses that failed (not missing): shown as warnings
    facts = D.trace_facts(prof, trace_path)
    devices = D.devices_of(prof)
    dev = _get_device(prof, devices)
    regions, region_paths, instances = D.regions_section(prof)
    kernels, k_iv = D.kernels_section(prof)
    copies = D.table_len(D.transfer_table(prof))
    t_iv = D.transfer_intervals(prof)
    m_iv = D.memsets_intervals(prof)
    D.add_region_gpu_time(regions, prof, region_paths)
    totals = _interval_totals(facts, k_iv, t_iv, m_iv)
    t_busy_s = D.union_ns(t_iv["start"], t_iv["end"]) / 1e9 if t_iv else 0.0
    t_bytes = 0
    if copies:
        c = D.columns(D.transfer_table(prof), ("bytes",))
        t_bytes = int(D.col(c, "bytes", copies).astype("int64").sum())
    totals.update({
        "kernel_count": kernels.get("count", 0),
        "kernel_time_s": kernels.get("total_s", 0.0),
        "transfer_count": copies,
        "transfer_bytes": t_bytes,
        # without GPU data (busy None) copy time was not measured either: null, not 0
        "transfer_busy_s": t_busy_s if totals["gpu_busy_s"] is not None else None,
        "transfer_share_of_wall": (t_busy_s / facts["wall_time_s"]
                                   if facts["wall_time_s"] and totals["gpu_busy_s"] is not None
                                   else None),
        "transfer_share_of_gpu_busy": (t_busy_s / totals["gpu_busy_s"]
                                       if totals["gpu_busy_s"] else None),
        "memset_count": D.table_len(D._get(prof, "memsets")),
        "api_call_count": D.table_len(D._get(prof, "api_calls")),
        "marker_count": D.table_len(D._get(prof, "markers")),
        "region_count": regions.get("count", 0),
    })
    step("attribution")
    unattributed, names = _unattributed_kernels(prof)
    step("analysis")
    an, an_reason, fpga_reason = _analysis_of(prof, tgt, failures)
    roof_rows = None
    if an is not None:
        roof_rows = sorted((dict(r) for r in an["roofline"]["ops"]),
                           key=lambda r: -(r.get("time_ns") or 0))
    n_kernels, gpu = kernels.get("count", 0), facts["gpu_available"]
    ops = _ops_section(prof, roof_rows or [], failures, n_kernels, gpu)
    roofline = _roofline_section(prof, roof_rows, an_reason, ops, n_kernels, gpu)
    roofline.update(_roofline_totals(an, an_reason, n_kernels, gpu,
                                     D.table_len(D._get(prof, "regions"))))
    candidates = _candidates_section(an["fpga"] if an is not None and fpga_reason is None
                                     else None, fpga_reason, tgt, n_kernels, gpu,
                                     D.table_len(D._get(prof, "regions")))
    transfers = D.transfers_section(an["transfers"] if an is not None else None, copies,
                                    reason=an_reason,
                                    op_modules=None if an is None else
                                    [r.get("module") for r in an["roofline"]["ops"]])
    memory = D.memory_section_of(prof, an["memory"] if an is not None else None, facts["start_ns"], an_reason)
    by_device = D.devices_section(an.get("devices") if an is not None else None, facts["start_ns"],
                                  an_reason if an is None else
                                  "the device analysis is not in this fpgaprof build")

    if environment is not None:
        env = dict(environment)
    elif trace_path:
        # a saved trace: only what the traced process recorded beside it is its environment
        env = read_environment(trace_path) or {}
    else:
        env = environment_now()  # in the traced process itself
    for k in ("backend", "devices", "jax_version", "mbirjax_version"):
        env.setdefault(k, [] if k == "devices" else None)
    if measurements is not None:
        all_meas = [dict(m) for m in measurements]
        meas, meas_left_out = cap_measurements(all_meas)
        meas_stats = measurement_stats(all_meas)
    else:
        meas, meas_left_out, meas_stats = region_measurements(instances)

    extra = list(extra_warnings) + failures
    if an is not None:
        extra += [str(w) for w in an.get("warnings", [])]
        t = an["transfers"]
        extra += [str(f["message"]) for f in t.get("flags", []) if f.get("message")]
        if t.get("flags_left_out"):
            extra.append(f"{t['flags_left_out']} more transfer flags for other regions not "
                         "shown (prof.transfer_report()['flags'] has the worst regions)")
    if unattributed is None and an is not None:
        unattributed = int(an["roofline"].get("unattributed_kernels", 0))
    if unattributed:
        extra.append(f"{unattributed} kernels could not be attributed to an HLO op"
                     + (f" (most time: {', '.join(names)})" if names else ""))
    counters = D.table_len(D._get(getattr(prof, "_store", None), "counters"))
    if counters:
        extra.append("hardware counters were collected by kernel replay: every kernel ran "
                     "serialized and once per pass, so kernel times and overlaps in this trace "
                     "are not those of a normal run (trace again without counters for timing); "
                     "counter values are kept apart from timings")
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_by": {"tool": "fpgaprof", "version": _version()},
        "environment": env,
        "measurements": meas,
        "measurements_left_out": meas_left_out,
        "measurement_stats": meas_stats,
        "trace": facts,
        "device": dev,
        "devices": devices,
        "totals": totals,
        "kernels": kernels,
        "transfers": transfers,
        "memory": memory,
        "by_device": by_device,
        "regions": regions,
        "ops": ops,
        "roofline": roofline,
        "candidates": candidates,
        "warnings": D.warnings_of(prof, facts, extra),
    }


def _get_device(prof: Any, devices: list[dict]) -> dict | None:
    d = D._get(prof, "device")
    if d is not None:
        return D.device_dict(d) or None
    return devices[0] if devices else None


def _unattributed_kernels(prof: Any) -> tuple[int | None, list[str]]:
    """How many kernels the attribution could not place and the names taking most time;
    (None, []) when the attribution is not available (the analysis' count is used then)."""
    try:
        res = _attribution_of(prof)
        names = [str(u.name) for u in list(res.unattributed)[:5]]
        return int(res.unattributed_count), names
    except Exception:
        return None, []


def _version() -> str:
    try:
        from fpgaprof import __version__
        return str(__version__)
    except Exception:
        return "unknown"


def _clean(obj: Any) -> Any:
    """JSON-safe copy: numpy scalars to Python, NaN/inf to null."""
    return D._py(obj)


def dumps(summary: Mapping) -> str:
    return json.dumps(_clean(dict(summary)), indent=1, allow_nan=False) + "\n"


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Writes a text file atomically: a temp file in the same folder, fsync, rename."""
    write_text_atomic(path, text)


def write_summary(path: str | os.PathLike, summary: Mapping) -> None:
    write_atomic(path, dumps(summary))
