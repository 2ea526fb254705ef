"""summary.json: the machine-readable report (schema: docs/summary.schema.json).

It carries the fields of the MBIRJAX timing JSON (`environment`, `measurements`) so existing
tooling keeps working, plus the profile: device, trace facts, totals, kernels, transfers, memory,
regions, ops, roofline, FPGA candidates and every warning. Sections that cannot be filled say
why ({"available": false, "reason": ...}).
"""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Iterable, Mapping

from fpgaprof._atomic import write_text_atomic
from fpgaprof.report import _data as D

SCHEMA_VERSION = 1
ENVIRONMENT_FILE = "environment.json"

# Region names "<operation>/<size>", "<operation>@<size>", "<operation>[<size>]" or
# "<operation> size=<size>" give a measurement a volume size.
_SIZE_RE = re.compile(r"^(?P<op>.+?)(?:[/@]|\s+size=|\[)(?P<size>\d+)\]?$")


def environment_now() -> dict:
    """The MBIRJAX-style environment of this process. Imports nothing: a module the program
    did not load is reported as None."""
    env: dict[str, Any] = {"backend": None, "devices": [], "jax_version": None,
                           "mbirjax_version": None}
    jax = sys.modules.get("jax")
    if jax is not None:
        env["jax_version"] = getattr(jax, "__version__", None)
        try:
            env["backend"] = jax.default_backend()
            env["devices"] = [str(d) for d in jax.devices()]
        except Exception as e:  # a broken backend is reported, not fatal for the report
            env["backend"] = f"unavailable ({type(e).__name__}: {e})"
    mj = sys.modules.get("mbirjax")
    if mj is not None:
        env["mbirjax_version"] = getattr(mj, "__version__", None)
        if env["mbirjax_version"] is None:
            try:
                from importlib.metadata import version
                env["mbirjax_version"] = version("mbirjax")
            except Exception:
                pass
    return env


def read_environment(trace_path: str | os.PathLike | None) -> dict | None:
    """environment.json saved beside a trace by `fpgaprof run`, or None."""
    if not trace_path:
        return None
    p = os.path.join(os.path.dirname(os.path.abspath(os.fspath(trace_path))), ENVIRONMENT_FILE)
    try:
        with open(p, encoding="utf-8") as f:
            env = json.load(f)
    except (OSError, ValueError):
        return None
    return env if isinstance(env, dict) else None


def measurements_from_regions(instances: list[dict]) -> list[dict]:
    """One measurement per region instance: operation and volume size from the region name,
    run = how many times the same (operation, size) was seen before, time = wall seconds."""
    seen: dict[tuple, int] = {}
    out = []
    for inst in sorted(instances, key=lambda r: (r["start_ns"], r["index"])):
        m = _SIZE_RE.match(inst["name"])
        op, size = (m.group("op"), int(m.group("size"))) if m else (inst["name"], None)
        run = seen.get((op, size), 0)
        seen[(op, size)] = run + 1
        out.append({"operation": op, "volume_size": size, "run": run,
                    "time": max(inst["end_ns"] - inst["start_ns"], 0) / 1e9})
    return out


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
        if source is None and r.get("source_file"):
            line = r.get("source_line")
            source = (f"{r['source_file']}:{line}" if line is not None and int(line) >= 0
                      else str(r["source_file"]))
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


def _ops_section(prof: Any) -> dict:
    sec = D.analysis_section(lambda: _ops_of(prof), "per-op attribution (prof.ops)")
    if not sec["available"]:
        return sec
    rows = _ops_rows(sec["rows"])
    if not rows:
        return D._unavailable("no kernel could be attributed to an HLO op")
    return {"available": True, "count": len(rows), "items": rows[:D.TOP_ROWS],
            "rows_left_out": max(len(rows) - D.TOP_ROWS, 0)}


def _call(prof: Any, method: str, module: str, func: str, **kwargs: Any) -> Any:
    """prof.<method>(**kwargs) when the Profile has it, else fpgaprof.<module>.<func>(prof, ...)
    (the analysis modules work on any Profile). AttributeError when neither exists."""
    m = getattr(type(prof), method, None)
    if m is not None:
        attr = getattr(prof, method)
        return attr(**kwargs) if callable(attr) else attr
    import importlib
    try:
        mod = importlib.import_module(f"fpgaprof.{module}")
    except ImportError as e:
        raise AttributeError(f"no fpgaprof.{module}: {e}") from None
    fn = getattr(mod, func, None)
    if fn is None:
        raise AttributeError(f"fpgaprof.{module} has no {func}()")
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


def _roofline_section(prof: Any, ops: dict) -> dict:
    """Points per HLO op. Uses the analysis' roofline when the build has it; otherwise the
    ops' static cost and measured time (intensity and achieved rates only, no bound)."""
    sec = D.analysis_section(lambda: _call(prof, "roofline", "roofline", "roofline", by="op"),
                             "roofline (fpgaprof.roofline)")
    ceilings, ceilings_reason = _ceilings(prof)
    points = []
    source = None
    if sec["available"] and sec["rows"]:
        source = "analysis"
        for r in sec["rows"]:
            t = D.first(r, "time_s", "total_s")
            if t is None and D.first(r, "total_ns", "time_ns") is not None:
                t = float(D.first(r, "total_ns", "time_ns")) / 1e9
            frac = D.first(r, "roof_fraction")
            if frac is None and r.get("percent_of_roof") is not None:
                frac = float(r["percent_of_roof"]) / 100.0
            points.append({
                "op": str(D.first(r, "op", "hlo_op", "name", default="?")),
                "module": D.first(r, "module"),
                "time_s": t,
                "flops": D.first(r, "flops"),
                "bytes": D.first(r, "bytes"),
                "intensity": D.first(r, "intensity", "arithmetic_intensity",
                                     "flops_per_byte"),
                "achieved_flops_per_s": D.first(r, "achieved_flops_per_s", "flops_per_s"),
                "achieved_bytes_per_s": D.first(r, "achieved_bytes_per_s", "bytes_per_s"),
                "precision": D.first(r, "precision"),
                "roof_flops_per_s": D.first(r, "roof_flops_per_s"),
                "roof_fraction": frac,
                "bound": D.first(r, "bound", default="unknown"),
                "source": D.first(r, "source", "source_line") or None,
            })
    elif ops.get("available"):
        source = "ops"
        for r in ops["items"]:
            t, fl, b = r["total_s"], r["flops"], r["bytes"]
            if not t or fl is None or not b:
                continue
            points.append({
                "op": r["op"], "time_s": t, "flops": fl, "bytes": b,
                "intensity": fl / b,
                "achieved_flops_per_s": fl * r["count"] / t if r["count"] else fl / t,
                "achieved_bytes_per_s": b * r["count"] / t if r["count"] else b / t,
                "roof_fraction": None, "bound": "unknown", "source": r["source"],
            })
    if not points:
        reason = sec.get("reason") if not sec["available"] else "the roofline has no points"
        if ops.get("available") is False and not sec["available"]:
            reason = f"{reason}; {ops['reason']}"
        out = D._unavailable(reason or "no op with flops, bytes and time")
        out["ceilings"] = ceilings
        return out
    out = {"available": True, "points_from": source, "ceilings": ceilings,
           "ceilings_reason": ceilings_reason, "points": points[:200]}
    if source == "ops":
        out["points_reason"] = sec.get("reason")
    return out


def _candidates_section(prof: Any, target: str | None) -> dict:
    tgt = target or "alveo-u55c"
    holder: dict[str, Any] = {}

    def get() -> Any:
        t = _call(prof, "fpga_candidates", "fpga", "fpga_candidates", target=tgt)
        holder["meta"] = getattr(t, "meta", None)
        return t
    sec = D.analysis_section(get, f"FPGA candidates (fpga_candidates(target={tgt!r}))")
    sec["target"] = tgt
    if sec["available"]:
        sec["items"] = sec.pop("rows")[:D.TOP_ROWS]
        if isinstance(holder.get("meta"), Mapping):
            sec["what_if"] = D._py(dict(holder["meta"]))
        if not sec["items"]:
            return {**D._unavailable("no candidate op (no attributed GPU time)"), "target": tgt}
    return sec


def _analysis_extras(prof: Any) -> tuple[list[str], list[dict] | None]:
    """Transfer flags (pageable copies, floods of tiny copies ...) as warnings, and the
    largest device buffers, from the analysis when this build has it."""
    flags: list[str] = []
    largest = None
    try:
        t = _call(prof, "transfer_report", "roofline", "transfers")
        for f in (t or {}).get("flags", []) or []:
            msg = f.get("message") if isinstance(f, Mapping) else None
            if msg:
                flags.append(str(msg))
    except Exception:
        pass  # the transfers section of the report is computed here; flags are extra
    try:
        m = _call(prof, "memory_report", "roofline", "memory")
        if isinstance(m, Mapping) and m.get("largest") is not None:
            largest = [D._py(dict(b)) for b in m["largest"]]
    except Exception:
        pass
    return flags, largest


def _interval_totals(facts: dict, *parts: dict) -> dict:
    import numpy as np
    starts = [p["start"] for p in parts if p]
    ends = [p["end"] for p in parts if p]
    wall_s = facts["wall_time_s"]
    if not starts:
        return {"gpu_busy_s": 0.0, "gpu_idle_s": wall_s, "gpu_busy_fraction": 0.0}
    busy = D.union_ns(np.concatenate(starts), np.concatenate(ends)) / 1e9
    return {"gpu_busy_s": busy, "gpu_idle_s": max(wall_s - busy, 0.0),
            "gpu_busy_fraction": busy / wall_s if wall_s else None}


def collect(prof: Any, *, target: str | None = None, trace_path: str | None = None,
            environment: Mapping | None = None,
            measurements: Iterable[Mapping] | None = None,
            extra_warnings: Iterable[str] = ()) -> dict:
    """Builds the whole summary (the dict written as summary.json) from a Profile.

    environment / measurements: given ones win (e.g. a sweep's own timings). Otherwise, for a
    saved trace (trace_path) the environment.json `fpgaprof run` wrote beside it (unknown
    fields stay null without one), and this process's environment when reporting in-process;
    one measurement per fpgaprof.region() instance.
    """
    facts = D.trace_facts(prof, trace_path)
    devices = D.devices_of(prof)
    dev = _get_device(prof, devices)
    regions, region_names, instances = D.regions_section(prof)
    kernels, k_iv = D.kernels_section(prof)
    transfers, t_iv = D.transfers_section(prof, region_names)
    m_iv = D.memsets_intervals(prof)
    D.add_region_gpu_time(regions, prof, region_names)
    totals = _interval_totals(facts, k_iv, t_iv, m_iv)
    totals.update({
        "kernel_count": kernels.get("count", 0),
        "kernel_time_s": kernels.get("total_s", 0.0),
        "transfer_count": transfers.get("count", 0),
        "transfer_bytes": transfers.get("bytes", 0),
        "transfer_busy_s": transfers.get("busy_s", 0.0),
        "transfer_share_of_wall": (transfers.get("busy_s", 0.0) / facts["wall_time_s"]
                                   if facts["wall_time_s"] else None),
        "transfer_share_of_gpu_busy": (transfers.get("busy_s", 0.0) / totals["gpu_busy_s"]
                                       if totals["gpu_busy_s"] else None),
        "memset_count": D.table_len(D._get(prof, "memsets")),
        "api_call_count": D.table_len(D._get(prof, "api_calls")),
        "marker_count": D.table_len(D._get(prof, "markers")),
        "region_count": regions.get("count", 0),
    })
    ops = _ops_section(prof)
    roofline = _roofline_section(prof, ops)
    candidates = _candidates_section(prof, target)
    memory = D.memory_section(prof, facts["start_ns"])

    if environment is not None:
        env = dict(environment)
    elif trace_path:
        # a saved trace: only what the traced process recorded beside it is its environment
        env = read_environment(trace_path) or {}
    else:
        env = environment_now()  # in the traced process itself
    for k in ("backend", "devices", "jax_version", "mbirjax_version"):
        env.setdefault(k, [] if k == "devices" else None)
    meas = ([dict(m) for m in measurements] if measurements is not None
            else measurements_from_regions(instances))

    flags, largest = _analysis_extras(prof)
    if memory.get("available") and largest is not None:
        t0 = facts["start_ns"]
        for b in largest:
            for k in ("alloc_ns", "free_ns"):
                if b.get(k) is not None:
                    b[k.replace("_ns", "_s")] = (int(b.pop(k)) - t0) / 1e9
        memory["largest"] = largest[:20]
    extra = list(extra_warnings) + flags
    unattributed, names = _unattributed_kernels(prof)
    if unattributed:
        extra.append(f"{unattributed} kernels could not be attributed to an HLO op"
                     + (f" (most time: {', '.join(names)})" if names else ""))
    counters = D.table_len(D._get(getattr(prof, "_store", None), "counters"))
    if counters:
        extra.append("hardware counters were collected by kernel replay: kernels ran several "
                     "times, counter values are kept apart from timings")
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_by": {"tool": "fpgaprof", "version": _version()},
        "environment": env,
        "measurements": meas,
        "trace": facts,
        "device": dev,
        "devices": devices,
        "totals": totals,
        "kernels": kernels,
        "transfers": transfers,
        "memory": memory,
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


def _unattributed_kernels(prof: Any) -> tuple[int, list[str]]:
    """How many kernels the attribution could not place, and the names taking most time."""
    try:
        res = _attribution_of(prof)
        names = [str(u.name) for u in list(res.unattributed)[:5]]
        return int(res.unattributed_count), names
    except Exception:
        pass
    try:
        r = _call(prof, "analysis", "roofline", "analyze")
        return int(r["roofline"]["unattributed_kernels"]), []
    except Exception:
        return 0, []


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
