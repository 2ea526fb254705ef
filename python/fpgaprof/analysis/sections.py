"""The analysis of one trace in report units, and the trace-level facts every report shows.

Each function turns one part of a trace (its record tables, read through base.records) or of
the C++ analysis result (analysis.trace_analysis) into a JSON-ready section: seconds instead
of ns, GB/s, region paths, rows sorted and cut to TOP_ROWS with the rest counted. A section
whose data the trace cannot give is {"available": false, "reason": "..."}: it is never filled
with invented numbers. prof.summary(), the Jupyter views, summary.json and report.html all
build their sections here, so they cannot disagree.

What the C++ analysis computes is taken from its result, never computed again here
(docs/architecture.md, "The analysis pipeline: analyze_trace"): busy-time totals,
kernels by name, region paths and their GPU time, transfer groups per region path, DRAM peaks.
"""

from __future__ import annotations

import math
import os
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from fpgaprof.base import diagnostics
from fpgaprof.base.constants import FULL_ROWS, TOP_ROWS, WARNINGS_MAX
from fpgaprof.base.core import core
from fpgaprof.base.records import (
    attr_or,
    col,
    columns,
    meta_dict,
    names_of,
    nrows,
    one_line,
    records_of,
    table_len,
    to_plain,
)
from fpgaprof.base.units import fmt_bytes, fmt_pct, fmt_s

# Points kept in the memory timeline (at most about this many: per time bucket its first
# point and its highest, so no spike is lost).
MEMORY_POINTS = 400


class MissingAnalysis(AttributeError):
    """An analysis this fpgaprof build does not have (its module or function is missing)."""


def unavailable(reason: str) -> dict:
    """A section that cannot be filled: {"available": False, "reason": reason}."""
    return {"available": False, "reason": reason}


# Why a GPU table (ops, roofline, candidates) is empty when the trace has no kernel at all: the
# one wording of print(prof.ops), prof.roofline(), prof.fpga_candidates(), summary.json,
# report.html and the run digest.
NO_GPU_NOTE = "the trace has no GPU kernels: trace on a machine with an NVIDIA GPU"
NO_KERNELS_NOTE = "the trace has no GPU kernels: the traced code launched nothing on the GPU"


def no_kernels_note(gpu_available: bool, untraced_processes: int = 0) -> str:
    """Why a trace has no GPU kernel: NO_GPU_NOTE without GPU data; NO_KERNELS_NOTE when a GPU
    was traced and simply ran nothing, unless `untraced_processes` further Python processes of
    a `fpgaprof run` ran untraced (they may have launched kernels: the note says so)."""
    if not gpu_available:
        return NO_GPU_NOTE
    if untraced_processes:
        n = untraced_processes
        return (
            "the trace has no GPU kernels: the traced process launched nothing on the GPU "
            f"({n} further Python process{'es' if n != 1 else ''} ran untraced and may have)"
        )
    return NO_KERNELS_NOTE


def empty_reason(
    kernel_count: int | None,
    otherwise: str,
    gpu_available: bool = False,
    untraced_processes: int = 0,
) -> str:
    """Why a table built from GPU kernels has no rows: with no kernel in the trace,
    no_kernels_note(); else `otherwise` (the table's own reason, e.g. none of the kernels could
    be attributed). kernel_count None: unknown, `otherwise`."""
    if kernel_count == 0:
        return no_kernels_note(gpu_available, untraced_processes)
    return otherwise


def unattributed_note(kernel_count: int | None) -> str:
    """Why the per-op table is empty although the trace has kernels."""
    if not kernel_count:
        return "no kernel could be attributed to an HLO op"
    what = (
        "its 1 kernel could not"
        if kernel_count == 1
        else f"none of its {kernel_count} kernels could"
    )
    return (
        f"the trace has GPU kernels but {what} be attributed to an HLO op: "
        "prof.attribution.unattributed says why"
    )


def _finite(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


# ---------------------------------------------------------------------------------------------
# Facts about the profile


def device_dict(d: Any, dram_bytes_per_s: float | None = None) -> dict:
    """A device (DeviceInfo or a dict with its fields) as summary.json's device dict; its peak
    DRAM bandwidth (``peak_dram_bandwidth_bytes_per_s``, left out when unknown) is
    `dram_bytes_per_s` (the analysis' ``device_dram_bytes_per_s``), else what the device itself
    says (DeviceInfo.peak_dram_bandwidth_bytes_per_s(), the C++ record's)."""
    if d is None:
        return {}
    if isinstance(d, dict):
        src = d
        get = src.get
    else:

        def get(k: str, default: Any = None) -> Any:
            return getattr(d, k, default)

    out = {}
    for k in (
        "id",
        "name",
        "uuid",
        "compute_capability_major",
        "compute_capability_minor",
        "sm_count",
        "core_clock_khz",
        "memory_clock_khz",
        "memory_bus_width_bits",
        "global_memory_bytes",
        "l2_cache_bytes",
        "pcie_generation",
        "pcie_link_width",
    ):
        v = get(k, None)
        if v is not None:
            out[k] = v.item() if hasattr(v, "item") else v
    peak = dram_bytes_per_s
    if peak is None:
        peak = get("peak_dram_bandwidth_bytes_per_s", None)
        if callable(peak):
            peak = peak()
    if peak:
        out["peak_dram_bandwidth_bytes_per_s"] = float(peak)
    return out


def trace_facts(prof: Any, path: str | None = None) -> dict:
    meta = meta_dict(prof)
    start_ns = int(meta.get("start_ns", 0) or 0)
    end_ns = int(meta.get("end_ns", 0) or 0)
    wall_ns = attr_or(prof, "wall_time_ns")
    if wall_ns is None:
        wall_ns = max(end_ns - start_ns, 0)
    gpu = attr_or(prof, "gpu_available", meta.get("gpu_available", False))
    return {
        "path": os.fspath(path) if path else None,
        "start_ns": start_ns,
        "end_ns": end_ns,
        "wall_time_s": int(wall_ns) / 1e9,
        "clock": str(meta.get("clock", "CLOCK_REALTIME")),
        "gpu_available": bool(gpu),
        "unavailable_reason": str(meta.get("unavailable_reason", "") or ""),
        "dropped_records": int(attr_or(prof, "dropped_records", meta.get("dropped_records", 0))),
        "incomplete_records": int(
            attr_or(prof, "incomplete_records", meta.get("incomplete_records", 0))
        ),
        "command_buffers_disabled": bool(meta.get("command_buffers_disabled", False)),
        "cupti_version": int(meta.get("cupti_version", 0) or 0),
        "driver_version": int(meta.get("driver_version", 0) or 0),
        "fpgaprof_version": str(meta.get("fpgaprof_version", "") or ""),
    }


def devices_of(prof: Any, dram_bytes_per_s: Sequence[float] | None = None) -> list[dict]:
    """device_dict() of every device of `prof`; `dram_bytes_per_s`: the analysis'
    ``device_dram_bytes_per_s`` (one per device, in the same order), if at hand."""
    devs = attr_or(prof, "devices", [])
    try:
        devs = list(devs)
    except TypeError:
        return []
    peaks: list[float | None] = list(dram_bytes_per_s or [])
    peaks += [None] * (len(devs) - len(peaks))
    return [device_dict(d, peak) for d, peak in zip(devs, peaks)]


def warnings_of(prof: Any, facts: dict, extra: Iterable[Any] = ()) -> list[dict]:
    """Every warning the user must see, as records (base.diagnostics): the trace's own plus the
    ones reports derive, each (code, message) once with its count added up (linear: a dict of
    those seen), the first WARNINGS_MAX distinct ones listed and the rest counted in one last
    record (report.warnings_left_out). `extra`: records or plain strings."""
    c = diagnostics.Collector(WARNINGS_MAX)
    own = attr_or(prof, "diagnostics")
    if own is not None:
        c.extend(own)
    else:  # a stand-in without records: its prose (prof.warnings and META's, each once)
        own = [str(w) for w in attr_or(prof, "warnings", []) or []]
        have = set(own)
        c.extend(own + [str(w) for w in meta_dict(prof).get("warnings", []) if str(w) not in have])
    if facts["dropped_records"]:
        c.add(
            diagnostics.diagnostic(
                "report.records_dropped",
                f"{facts['dropped_records']} CUPTI records were dropped: totals are lower "
                "bounds (raise trace(buffer_size=...))",
                [facts["dropped_records"]],
            )
        )
    # the trace's own warning of them names their cause (kernel replay for counters, or a full
    # device timestamp buffer) and fix: said once; a trace without it gets this one
    if facts["incomplete_records"] and not any(
        d.get("code") == "capture.records_incomplete" for d in c.items
    ):
        c.add(
            diagnostics.diagnostic(
                "report.records_incomplete",
                f"{facts['incomplete_records']} records had no timestamps and are left out of "
                "times (kernel replay for counters, or a full device timestamp buffer: "
                "fpgaprof.trace(device_buffer_size=...))",
                [facts["incomplete_records"]],
            )
        )
    if not facts["gpu_available"]:
        reason = facts["unavailable_reason"] or "no GPU was traced"
        if not any(reason in m for m in c.messages()):  # the trace usually says it already
            c.add(diagnostics.diagnostic("report.no_gpu", f"no GPU data in this trace: {reason}"))
    elif not facts["command_buffers_disabled"]:
        c.add(
            diagnostics.diagnostic(
                "attribution.command_buffers",
                "XLA command buffers were on: kernels inside CUDA graphs have no per-op "
                "NVTX ranges, so attribution falls back to kernel names",
            )
        )
    c.extend(extra)
    out = c.items
    if c.left_out:
        out.append(
            diagnostics.diagnostic(
                "report.warnings_left_out",
                f"{c.left_out:,} more distinct warnings not listed ({len(c):,} in all, the first "
                f"{WARNINGS_MAX:,} above): prof.warnings has every one of the trace's own",
                [c.left_out, len(c), WARNINGS_MAX],
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# Sections built from the record tables


def kernels_section(prof: Any, analysis: Mapping | None, reason: str | None = None) -> dict:
    """Top kernels by total time: the analysis' kernels by name (most time first, ties by
    name) and its summed kernel time (``totals``), the first TOP_ROWS names (the rest counted
    in rows_left_out). `analysis`: the C++ analysis result (None: `reason` says why)."""
    table = attr_or(prof, "kernels")
    n = table_len(table)
    if n == 0:
        return {
            "available": False,
            "reason": "no kernels in this trace"
            if table is not None
            else "this profile has no kernel table",
            "count": 0,
            "total_s": 0.0,
            "top": [],
        }
    if analysis is None:
        why = reason or "the analysis gave no result"
        return {"available": False, "reason": why, "count": n, "total_s": None, "top": []}
    totals = analysis["totals"]
    all_ns = int(totals["kernel_time_ns"])
    by_name = analysis["kernels_by_name"]
    top = []
    for k in by_name[:TOP_ROWS]:
        total_ns, timed = int(k["total_ns"]), int(k["timed_count"])
        # mean, min and max are over the launches with a duration: none (a counter replay
        # left every launch of the name without timestamps) has no duration to state
        top.append(
            {
                "name": str(k["kernel"]),
                "demangled": str(core.attribution.demangle_kernel_name(str(k["kernel"]))),
                "count": int(k["count"]),
                "timed_count": timed,
                "total_s": total_ns / 1e9,
                "mean_s": total_ns / timed / 1e9 if timed else None,
                "min_s": int(k["min_ns"]) / 1e9 if timed else None,
                "max_s": int(k["max_ns"]) / 1e9 if timed else None,
                "share": total_ns / all_ns if all_ns else 0.0,
            }
        )
        # The XLA modules whose ops launched the name's kernels, most launches first (XLA
        # names a kernel after its fusion, so one name is often several modules' kernels:
        # compare says so instead of dividing one's time by another's launches).
        if "modules" in k:
            top[-1]["modules"] = [
                {
                    "module": None if m["module"] is None else str(m["module"]),
                    "count": int(m["count"]),
                }
                for m in k["modules"]
            ]
    return {
        "available": True,
        "count": int(totals["kernel_count"]),
        "distinct": len(by_name),
        "total_s": all_ns / 1e9,
        "top": top,
        "rows_left_out": max(len(by_name) - TOP_ROWS, 0),
    }


def transfer_table(prof: Any) -> Any:
    table = attr_or(prof, "transfers")
    return table if table is not None else attr_or(prof, "memcpys")


# Directions whose achieved rate is compared with the host link's peak (as the C++ analysis).
_LINK_DIRECTIONS = ("HtoD", "DtoH")


def _link_percent(direction: str, st: dict, link_bytes_per_s: float) -> Any:
    """Use of the host link(s) in percent; None when no peak is known (never 0.0, which would
    read as an idle link) or for directions that do not cross the link. The analysis gives
    link_bytes / link_capacity_bytes, each device's copies against its own link
    (TransferReport::link_percent, docs/roofline.md "Transfers"); stats without them (older
    analyses): achieved rate over the one link peak."""
    if direction not in _LINK_DIRECTIONS:
        return None
    if "link_capacity_bytes" in st:
        cap = float(st.get("link_capacity_bytes") or 0.0)
        return 100.0 * int(st.get("link_bytes", 0)) / cap if cap > 0 else None
    busy_ns, nbytes = int(st.get("busy_ns", 0)), int(st.get("bytes", 0))
    if not link_bytes_per_s or link_bytes_per_s <= 0 or not busy_ns:
        return None
    return 100.0 * (nbytes * 1e9 / busy_ns) / link_bytes_per_s


def _stats_row(st: dict, direction: str | None, link_bytes_per_s: float) -> dict:
    """One TransferStats dict of the C++ transfer analysis in report units (s, GB/s)."""
    busy_ns = int(st.get("busy_ns", 0))
    nbytes = int(st.get("bytes", 0))
    row: dict[str, Any] = {} if direction is None else {"direction": direction}
    row.update(
        {
            "count": int(st.get("count", 0)),
            "bytes": nbytes,
            "busy_s": busy_ns / 1e9,
            "gbps": float(st.get("achieved_bytes_per_s", 0.0)) / 1e9
            if busy_ns
            else None,  # the core's rate
            "kernel_overlap_s": int(st.get("kernel_overlap_ns", 0)) / 1e9,
            "pageable_count": int(st.get("pageable_count", 0)),
            "pinned_count": int(st.get("pinned_count", 0)),
            "async_count": int(st.get("async_count", 0)),
            "sync_count": int(st.get("sync_count", 0)),
            "tiny_count": int(st.get("tiny_count", 0)),
        }
    )
    if direction is not None:
        row["link_percent"] = _link_percent(direction, st, link_bytes_per_s)
    return row


def _empty_transfers(reason: str, count: int = 0) -> dict:
    return {
        "available": False,
        "reason": reason,
        "count": count,
        "bytes": 0,
        "by_direction": [],
        "by_region": [],
        "by_op": [],
        "flags": [],
    }


def _op_rows(report: dict, link: float, op_modules: list | None) -> list[dict]:
    """One row per HLO op that made copies (groups of kind "op": a copy counts for the op
    whose XLA thunk range launched it), most busy time first. `op_modules`: the module of each
    op index (the roofline's op rows, in the analysis' op order)."""
    rows: list[dict[str, Any]] = []
    for g in report.get("groups", []):
        if g.get("kind") != "op":
            continue
        i = g.get("index")
        module = None
        if op_modules is not None and i is not None and 0 <= int(i) < len(op_modules):
            module = op_modules[int(i)]
        row = {
            "op": str(g.get("name") or "?"),
            "module": module,
            # the analysis' op index (summary.json ops.items[].op_index): its program id there
            "op_index": int(i) if i is not None else None,
        }
        row.update(_stats_row(g.get("all", {}), None, link))
        row["directions"] = sorted(
            (_stats_row(st, d, link) for d, st in g.get("directions", {}).items()),
            key=lambda r: (-r["busy_s"], r["direction"]),
        )
        rows.append(row)
    rows.sort(key=lambda r: (-r["busy_s"], -r["bytes"], str(r["module"] or ""), r["op"]))
    return rows


def _flag_rows(report: dict) -> list[dict]:
    """The transfer flags of the analysis as rows: kind ("pageable", "tiny_transfers",
    "link_exceeded"),
    scope (trace, region path, op), region path (null for the trace), count, bytes, message.
    Every flag is also a warning (its message), see docs/reports.md "Warnings"."""
    out = []
    for f in report.get("flags", []) or []:
        scope = str(f.get("group_kind") or "trace")
        out.append(
            {
                "kind": str(f.get("kind") or "?"),
                "scope": "region" if scope in ("region_path", "region") else scope,
                "region": (str(f["region"]) if f.get("region") is not None else None),
                "count": int(f.get("count", 0)),
                "bytes": int(f.get("bytes", 0)),
                "message": str(f.get("message") or ""),
            }
        )
    return out


def transfers_section(
    report: dict | None,
    copies: int,
    reason: str | None = None,
    op_modules: list | None = None,
    gpu_available: bool = True,
) -> dict:
    """The transfers section from the C++ transfer analysis (`analyze(...)["transfers"]`):
    per direction for the trace, and per region — inclusive, as the analysis counts them: a
    copy made in a nested region counts for its ancestors too. `by_region` has the analysis'
    rows as they are: one per region path for a per-path report (groups of kind
    "region_path": instances summed in C++, busy time a union over them), one per region
    record for a per-instance report (kind "region": `region` is the record's path, `index`
    the record, `instances` 1). `copies`: rows of the copy table; `reason`: why `report` is
    None. `by_op`: per HLO op (op_modules: module of each op index), the first TOP_ROWS by
    busy time (`by_op_left_out`); `flags`: the analysis' transfer flags. A trace without GPU
    data (gpu_available False) recorded no copy: none is not "no copies"."""
    if copies == 0:
        if not gpu_available:
            return _empty_transfers(f"no GPU data in this trace ({NO_GPU_NOTE})")
        return _empty_transfers("no memory copies in this trace")
    if report is None:
        return _empty_transfers(reason or "the transfer analysis gave no result", copies)
    link = float(report.get("link_bytes_per_s") or 0.0)
    trace = next((g for g in report.get("groups", []) if g.get("kind") == "trace"), None)
    if trace is None:
        return _empty_transfers("the transfer analysis has no trace group", copies)
    by_dir = [_stats_row(st, d, link) for d, st in trace.get("directions", {}).items()]
    by_dir.sort(key=lambda r: (-r["busy_s"], r["direction"]))
    by_region: list[dict[str, Any]] = []
    for g in report.get("groups", []):
        row: dict[str, Any]
        if g.get("kind") == "region_path":
            row = {
                "region": str(g.get("region") or g.get("name") or "?"),
                "instances": int(g.get("instances", 0)),
            }
        elif g.get("kind") == "region" and g.get("index") is not None:
            row = {
                "region": str(g.get("path") or g.get("name") or "?"),
                "index": int(g["index"]),
                "instances": 1,
            }
        else:
            continue
        row.update(_stats_row(g.get("all", {}), None, link))
        row["host_wait_s"] = int(g.get("host_wait_ns", 0)) / 1e9
        row["sync_calls"] = int(g.get("sync_calls", 0))
        row["directions"] = sorted(
            (_stats_row(st, d, link) for d, st in g.get("directions", {}).items()),
            key=lambda r: (-r["busy_s"], r["direction"]),
        )
        by_region.append(row)
    by_region.sort(
        key=lambda r: (-(r["busy_s"] + r["host_wait_s"]), r["region"], r.get("index", 0))
    )
    every = trace.get("all", {})
    by_op = _op_rows(report, link, op_modules)
    flags = _flag_rows(report)
    return {
        "available": True,
        "count": int(every.get("count", 0)),
        "bytes": int(every.get("bytes", 0)),
        "busy_s": int(every.get("busy_ns", 0)) / 1e9,
        "kernel_overlap_s": int(every.get("kernel_overlap_ns", 0)) / 1e9,
        "host_wait_s": int(trace.get("host_wait_ns", 0)) / 1e9,
        "sync_calls": int(trace.get("sync_calls", 0)),
        "link_bytes_per_s": link if link > 0 else None,
        "link_source": str(report.get("link_source") or "unknown"),
        "link_description": str(report.get("link_description") or ""),
        "by_direction": by_dir,
        "by_region": by_region[:TOP_ROWS],
        "by_region_left_out": max(len(by_region) - TOP_ROWS, 0),
        "by_op": by_op[:TOP_ROWS],
        "by_op_left_out": max(len(by_op) - TOP_ROWS, 0),
        "flags": flags,
        "flags_left_out": int(report.get("flags_left_out") or 0),
    }


def downsample_steps(values: np.ndarray, limit: int = MEMORY_POINTS) -> np.ndarray:
    """Indices of the points of a step series to draw: all of them up to `limit`; beyond,
    per time bucket (limit/2 buckets) its first point and its highest, and the last point."""
    n = len(values)
    if n <= limit:
        return np.arange(n)
    buckets = max(limit // 2, 1)
    edges = np.linspace(0, n, buckets + 1).astype(np.int64)
    firsts = edges[:-1]
    highs = [int(a + np.argmax(values[a:b])) for a, b in zip(edges[:-1], edges[1:]) if b > a]
    return np.unique(np.concatenate([firsts, np.asarray(highs, dtype=np.int64), [n - 1]]))


POOL_FRACTION = 0.5  # one allocation this large a share of its GPU: an allocator's pool


def pool_allocation(
    largest: list[dict], device_memory: Mapping[int, int] | None, xla: bool = True
) -> dict | None:
    """XLA's preallocated pool, when the trace shows one: on each GPU, its largest buffer if it
    holds at least POOL_FRACTION of that GPU's memory (JAX's default pool is 75 %), in a trace
    of XLA programs (`xla`: the trace holds HLO modules). The program's arrays are carved from
    the pool without further CUDA calls, so the peak says little about them (docs/roofline.md,
    "Device memory"). `bytes` sums the pools of all GPUs; `device_id`, `alloc_s` and
    `share_of_device` are those of the largest. None otherwise, or when the GPUs' memory sizes
    are unknown."""
    if not xla or not largest or not device_memory:
        return None
    first: dict[int, dict] = {}
    for b in largest:
        d = int(b.get("device_id") or 0)
        if d not in first or int(b.get("bytes") or 0) > int(first[d].get("bytes") or 0):
            first[d] = b
    pools = []
    for d, b in first.items():
        total = device_memory.get(d, 0)
        if total > 0 and int(b.get("bytes") or 0) >= POOL_FRACTION * total:
            pools.append((int(b.get("bytes") or 0) / total, d, b))
    if not pools:
        return None
    share, device, top = max(pools, key=lambda p: int(p[2].get("bytes") or 0))
    total_bytes = sum(int(b.get("bytes") or 0) for _s, _d, b in pools)
    what = (
        f"one allocation of {share:.0%} of the GPU's memory ({fmt_bytes(total_bytes)})"
        if len(pools) == 1
        else f"one allocation per GPU on {len(pools)} GPUs, up to {share:.0%} of a GPU's memory "
        f"({fmt_bytes(total_bytes)} in all)"
    )
    return {
        "bytes": total_bytes,
        "device_id": device,
        "alloc_s": top.get("alloc_s"),
        "share_of_device": share,
        "allocations": len(pools),
        "note": (
            f"{what}: XLA's preallocated pool, which holds the program's arrays without "
            "further CUDA calls, so the peak is the pool's size, not the arrays'. For "
            "per-buffer records run with XLA_PYTHON_CLIENT_ALLOCATOR=platform "
            '(docs/roofline.md, "Device memory")'
        ),
    }


def memory_section(
    report: dict | None,
    t0_ns: int,
    records: int,
    reason: str | None = None,
    device_memory: Mapping[int, int] | None = None,
    xla: bool = True,
) -> dict:
    """Device memory from the C++ memory analysis (`analyze(...)["memory"]`): a release is
    matched to the live allocation with the same device and address; a release of anything
    else is counted (unmatched_frees) and changes nothing, so bytes in use never go below
    zero. Per device: peak and bytes still allocated at the end. The timeline is all devices
    together; with more than one device, each device entry also has its own timeline (bytes in
    use on that device, drawn the same way). `records`: rows of the allocation table;
    `reason`: why `report` is None; `device_memory` (device id -> its total memory, bytes) and
    `xla` (the trace holds HLO modules) for `pool` (pool_allocation(); null when none)."""
    if records == 0:
        return unavailable("no device allocation records in this trace")
    if report is None:
        return unavailable(reason or "the memory analysis gave no result")
    # uint64 as in the trace: a valid trace may hold times and sizes beyond int64 (found by
    # fuzzing: allocations whose bytes in use sum past 2^63)
    ts = np.asarray(report.get("timeline_ns", []), dtype=np.uint64)
    vals = np.asarray(report.get("timeline_in_use_bytes", []), dtype=np.uint64)
    pick = downsample_steps(vals)

    def rel_s(ns: Any) -> float | None:
        return None if ns is None else (int(ns) - t0_ns) / 1e9

    devices: list[dict[str, Any]] = [
        {
            "device_id": int(d["device_id"]),
            "peak_bytes": int(d["peak_in_use_bytes"]),
            "peak_time_s": rel_s(d["peak_ns"]) if d["peak_in_use_bytes"] else None,
            "end_bytes": int(d["final_in_use_bytes"]),
        }
        for d in report.get("devices", [])
    ]
    devices.sort(key=lambda d: d["device_id"])
    if len(devices) > 1:
        dev_ids = np.asarray(report.get("timeline_device_id", []), dtype=np.int64)
        dev_vals = np.asarray(report.get("timeline_device_in_use_bytes", []), dtype=np.uint64)
        if len(dev_ids) == len(ts) and len(dev_vals) == len(ts):
            for d in devices:
                sel = np.nonzero(dev_ids == d["device_id"])[0]
                dpick = sel[downsample_steps(dev_vals[sel])] if len(sel) else sel
                d["timeline_points"] = int(len(sel))
                d["timeline"] = [[(int(ts[k]) - t0_ns) / 1e9, int(dev_vals[k])] for k in dpick]
    largest: list[dict[str, Any]] = []
    for b in report.get("largest", []) or []:
        row = {k: to_plain(v) for k, v in dict(b).items() if k not in ("alloc_ns", "free_ns")}
        row["alloc_s"] = rel_s(b.get("alloc_ns"))
        row["free_s"] = rel_s(b.get("free_ns"))  # None: still allocated at the end
        largest.append(row)
    peak = int(report.get("peak_in_use_bytes", 0))
    regions = memory_region_rows(report)
    return {
        "available": True,
        "events": int(report.get("allocation_count", 0)) + int(report.get("free_count", 0)),
        "allocation_count": int(report.get("allocation_count", 0)),
        "free_count": int(report.get("free_count", 0)),
        "peak_bytes": peak,
        "peak_time_s": rel_s(report.get("peak_ns")) if len(ts) else None,
        "end_bytes": sum(d["end_bytes"] for d in devices),
        "unmatched_frees": int(report.get("unmatched_frees", 0)),
        "unmatched_free_bytes": int(report.get("unmatched_free_bytes", 0)),
        "reallocated_live": int(report.get("reallocated_live", 0)),
        "never_freed_count": int(report.get("never_freed_count", 0)),
        "never_freed_bytes": int(report.get("never_freed_bytes", 0)),
        "devices": devices,
        "timeline_points": int(len(ts)),
        "timeline": [[(int(t) - t0_ns) / 1e9, int(v)] for t, v in zip(ts[pick], vals[pick])],
        "largest": largest,
        "pool": pool_allocation(largest, device_memory, xla),
        "by_region": regions[:TOP_ROWS],
        "by_region_left_out": max(len(regions) - TOP_ROWS, 0),
    }


def memory_section_of(
    prof: Any, report: dict | None, t0_ns: int, reason: str | None = None
) -> dict:
    """memory_section() for a profile: its allocation count, its GPUs' memory sizes and whether
    it holds HLO modules (an XLA program, for `pool`) taken from `prof`."""
    device_memory: dict[int, int] = {}
    for d in attr_or(prof, "devices") or []:
        total = int(getattr(d, "global_memory_bytes", 0) or 0)
        if total > 0:
            device_memory[int(getattr(d, "id", 0))] = total
    return memory_section(
        report,
        t0_ns,
        table_len(attr_or(prof, "allocations")),
        reason,
        device_memory=device_memory,
        xla=table_len(attr_or(prof, "hlo_modules")) > 0,
    )


# Precisions whose peaks a device row shows first (fp32: XLA's elementwise work; tf32 tensor:
# XLA's f32 dots by default), docs/roofline.md "Ceilings".
DEVICE_PEAKS = ("fp32", "tf32_tensor")


def _device_ceilings(c: Mapping | None) -> dict:
    """A device row's ceilings in report form: None for every value that is unknown (0)."""
    c = c or {}

    def known(v: Any) -> float | None:
        v = _finite(v)
        return v if v is not None and v > 0 else None

    peaks = {str(k): known(v) for k, v in (c.get("peak_flops_per_s") or {}).items()}
    return {
        "architecture": str(c.get("architecture") or "") or None,
        "peak_flops_per_s": peaks,
        "flops_source": {str(k): str(v) for k, v in (c.get("flops_source") or {}).items()},
        "dram_bytes_per_s": known(c.get("dram_bytes_per_s")),
        "dram_source": str(c.get("dram_source") or "unknown"),
        "link_bytes_per_s": known(c.get("link_bytes_per_s")),
        "link_source": str(c.get("link_source") or "unknown"),
        "link_description": str(c.get("link_description") or ""),
    }


def devices_section(report: Mapping | None, t0_ns: int, reason: str | None = None) -> dict:
    """summary.json's `by_device` from the C++ device analysis (`analyze(...)["devices"]`): one
    item per device (every DeviceInfo and every device id an activity names, by id) with its
    kernels, busy time (union of its kernels, copies and memsets), idle share of the traced wall
    time, copies per direction with the use of that device's own host link, its device-memory
    peak, ceilings and the host threads that launched its kernels; and `balance`, how evenly
    the devices were kept busy (docs/roofline.md, "Several GPUs"). Times are seconds (activity
    times from the trace start), sizes bytes. `reason`: why `report` is None."""
    if report is None:
        return unavailable(reason or "the device analysis gave no result")
    rows = list(report.get("rows") or [])
    if not rows:
        return unavailable("no GPU device in this trace (no device record, no GPU activity)")

    def rel_s(ns: Any) -> float | None:
        return None if ns is None else (int(ns) - t0_ns) / 1e9

    items: list[dict[str, Any]] = []
    for r in rows:
        dirs: list[dict[str, Any]] = []
        for d, st in (r.get("directions") or {}).items():
            busy_ns, nbytes = int(st.get("busy_ns", 0)), int(st.get("bytes", 0))
            dirs.append(
                {
                    "direction": str(d),
                    "count": int(st.get("count", 0)),
                    "bytes": nbytes,
                    "busy_s": busy_ns / 1e9,
                    "gbps": float(st.get("achieved_bytes_per_s", 0.0)) / 1e9
                    if busy_ns
                    else None,  # the core's rate
                    "link_bytes_per_s": _finite(st.get("link_bytes_per_s")),
                    "link_percent": _finite(st.get("link_percent")),
                }
            )
        dirs.sort(key=lambda x: (-x["busy_s"], x["direction"]))
        mem = r.get("memory")
        threads = [
            {
                "thread_id": int(t.get("thread_id", 0)),
                "kernel_count": int(t.get("kernel_count", 0)),
                "kernel_time_s": int(t.get("kernel_time_ns", 0)) / 1e9,
            }
            for t in r.get("threads") or []
        ]
        items.append(
            {
                "device_id": int(r["device_id"]),
                "name": str(r.get("name") or "") or None,
                "has_record": bool(r.get("has_record")),
                "kernel_count": int(r.get("kernel_count", 0)),
                "kernel_time_s": int(r.get("kernel_time_ns", 0)) / 1e9,
                "kernel_busy_s": int(r.get("kernel_busy_ns", 0)) / 1e9,
                "busy_s": int(r.get("busy_ns", 0)) / 1e9,
                "idle_s": int(r.get("idle_ns", 0)) / 1e9,
                "busy_fraction": _finite(r.get("busy_fraction")) if report.get("wall_ns") else None,
                "idle_fraction": _finite(r.get("idle_fraction")) if report.get("wall_ns") else None,
                "copy_count": int(r.get("copy_count", 0)),
                "copy_bytes": int(r.get("copy_bytes", 0)),
                "copy_busy_s": int(r.get("copy_busy_ns", 0)) / 1e9,
                "memset_count": int(r.get("memset_count", 0)),
                "memset_bytes": int(r.get("memset_bytes", 0)),
                "first_start_s": rel_s(r.get("first_start_ns")),
                "last_end_s": rel_s(r.get("last_end_ns")),
                "by_direction": dirs,
                "memory_peak_bytes": int(mem["peak_in_use_bytes"]) if mem else None,
                "memory_peak_time_s": (
                    rel_s(mem["peak_ns"]) if mem and mem.get("peak_in_use_bytes") else None
                ),
                "memory_end_bytes": int(mem["final_in_use_bytes"]) if mem else None,
                "ceilings": _device_ceilings(r.get("ceilings")),
                "threads": threads[:TOP_ROWS],
                "threads_left_out": max(len(threads) - TOP_ROWS, 0),
            }
        )
    b = report.get("balance") or {}
    balance: dict[str, Any] = {
        "device_count": int(b.get("device_count", len(items))),
        "active_devices": int(b.get("active_devices", 0)),
        "imbalance": _finite(b.get("imbalance")),
        "slowest_device": b.get("slowest_device"),
        "least_busy_device": b.get("least_busy_device"),
        "max_busy_s": int(b.get("max_busy_ns", 0)) / 1e9,
        "min_busy_s": int(b.get("min_busy_ns", 0)) / 1e9,
        "mean_busy_s": float(b.get("mean_busy_ns", 0.0)) / 1e9,
        "spread_s": int(b.get("spread_ns", 0)) / 1e9,
        "spread_fraction": _finite(b.get("spread_fraction")),
    }
    balance["text"] = balance_text(balance, items)
    return {
        "available": True,
        "count": len(items),
        "wall_time_s": int(report.get("wall_ns", 0)) / 1e9,
        "items": items,
        "balance": balance,
    }


def device_table_rows(section: Mapping) -> list[dict]:
    """The by_device items as flat rows for printed and notebook tables: per device its name,
    kernels, busy and idle shares, copies, the host-link use of its HtoD and DtoH copies, its
    memory peak, its fp32 and DRAM peaks and the threads that launched its kernels."""
    rows: list[dict[str, Any]] = []
    for i in section.get("items") or []:
        dirs = {d["direction"]: d for d in i.get("by_direction") or []}
        c = i.get("ceilings") or {}
        threads = ", ".join(
            f"{t['thread_id']} ({t['kernel_count']})" for t in i.get("threads") or []
        )
        if i.get("threads_left_out"):
            threads += f", {i['threads_left_out']} more"
        rows.append(
            {
                "device_id": i["device_id"],
                "name": i.get("name") or "",
                "kernel_count": i["kernel_count"],
                "kernel_time_s": i["kernel_time_s"],
                "busy_s": i["busy_s"],
                "busy_fraction": i.get("busy_fraction"),
                "idle_fraction": i.get("idle_fraction"),
                "copy_bytes": i["copy_bytes"],
                "htod_link_percent": (dirs.get("HtoD") or {}).get("link_percent"),
                "dtoh_link_percent": (dirs.get("DtoH") or {}).get("link_percent"),
                "memory_peak_bytes": i.get("memory_peak_bytes"),
                "fp32_flops_per_s": (c.get("peak_flops_per_s") or {}).get("fp32"),
                "dram_bytes_per_s": c.get("dram_bytes_per_s"),
                "threads": threads,
            }
        )
    return rows


# Headers of device_table_rows' columns.
DEVICE_LABELS = {
    "device_id": "device",
    "name": "name",
    "kernel_count": "kernels",
    "kernel_time_s": "kernel time",
    "busy_s": "busy",
    "busy_fraction": "busy share",
    "idle_fraction": "idle share",
    "copy_bytes": "copied",
    "htod_link_percent": "HtoD % link",
    "dtoh_link_percent": "DtoH % link",
    "memory_peak_bytes": "memory peak",
    "fp32_flops_per_s": "fp32 peak",
    "dram_bytes_per_s": "DRAM peak",
    "threads": "threads (kernels)",
}


def balance_text(b: Mapping, items: Sequence[Mapping]) -> str:
    """The load balance in one line, as report.html, the digest and print(prof.device_report())
    say it: "load balance over 2 devices: busiest/mean busy 1.38 (1.00 = even); device 0 the
    busiest (1 ms), device 1 the least busy (450 µs), spread 550 µs (55.0 % of the busiest)"."""
    n = int(b.get("device_count") or len(items))
    active = int(b.get("active_devices") or 0)
    if b.get("imbalance") is None:
        return f"load balance over {n} device{'s' if n != 1 else ''}: no device was busy"
    head = f"load balance over {n} device{'s' if n != 1 else ''}"
    if active < n:
        idle = [str(i["device_id"]) for i in items if not i.get("busy_s")]
        head += (
            f" ({active} active; device{'s' if len(idle) != 1 else ''} "
            f"{', '.join(idle)} ran nothing)"
        )
    return (
        f"{head}: busiest/mean busy {float(b['imbalance']):.2f} (1.00 = even); "
        f"device {b.get('slowest_device')} the busiest ({fmt_s(b.get('max_busy_s'))}), "
        f"device {b.get('least_busy_device')} the least busy ({fmt_s(b.get('min_busy_s'))}), "
        f"spread {fmt_s(b.get('spread_s'))} ({fmt_pct(b.get('spread_fraction'))} of the "
        "busiest)"
    )


def memory_region_rows(report: Mapping) -> list[dict]:
    """Device memory per region path from the C++ memory analysis (rows of kind path: the
    highest instance's peak of bytes in use on all devices while it was open, which counts
    buffers allocated before it too; allocations and frees inside it, nested regions
    included, summed over the instances), highest peak first."""
    rows: list[dict[str, Any]] = []
    for r in report.get("regions", []) or []:
        if "path_index" not in r:  # a per-instance row (region_rows="instance")
            continue
        rows.append(
            {
                "region": str(r.get("region")),
                "name": str(r.get("name")),
                "depth": int(r.get("depth", 0)),
                "instances": int(r.get("instances", 0)),
                "peak_bytes": int(r.get("peak_in_use_bytes", 0)),
                "in_use_at_start_bytes": int(r.get("in_use_at_start_bytes", 0)),
                "allocated_bytes": int(r.get("allocated_bytes", 0)),
                "freed_bytes": int(r.get("freed_bytes", 0)),
                "allocations": int(r.get("allocations", 0)),
                "frees": int(r.get("frees", 0)),
            }
        )
    rows.sort(key=lambda r: (-r["peak_bytes"], r["region"]))
    return rows


class RegionInstances:
    """The region records as columns (no Python object per instance): `index`, `start_ns`,
    `end_ns` (int64 arrays) and `names` (object array), in record order."""

    def __init__(self, names: np.ndarray, start_ns: np.ndarray, end_ns: np.ndarray) -> None:
        self.names = names
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.index = np.arange(len(start_ns), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.start_ns)

    def rows(self) -> list[dict]:
        """One dict per instance (index, name, start_ns, end_ns): for small traces and tests."""
        return [
            {
                "index": int(i),
                "name": str(self.names[i]),
                "start_ns": int(self.start_ns[i]),
                "end_ns": int(self.end_ns[i]),
            }
            for i in self.index
        ]


def region_instances(prof: Any) -> RegionInstances:
    """The region records of `prof` as columns (for the measurements)."""
    c = columns(attr_or(prof, "regions"), ("name", "start_ns", "end_ns"))
    n = nrows(c)
    return RegionInstances(
        names_of(c, n),
        col(c, "start_ns", n).astype(np.int64),
        col(c, "end_ns", n).astype(np.int64),
    )


def regions_section(
    prof: Any,
    analysis: Mapping | None,
    instances: RegionInstances,
    reason: str | None = None,
) -> dict:
    """Regions by name path, every path up to FULL_ROWS, most wall time first: the analysis'
    region paths (name, path, depth, instances, and `gpu_s`: the summed durations of the
    kernels, copies and memsets launched inside its instances, nested regions included; null
    when the trace has no GPU activity at all) with `wall_s`, the summed wall time of its
    instances (`instances`: region_instances(prof)). `analysis`: the C++ analysis result
    (None: `reason` says why). Nothing here builds a Python object per instance."""
    table = attr_or(prof, "regions")
    n = len(instances)
    if n == 0:
        return unavailable(
            "no fpgaprof.region() in this trace"
            if table is not None
            else "this profile has no region table"
        )
    if analysis is None:
        return unavailable(f"no region paths: {reason or 'the analysis gave no result'}")
    paths = analysis["region_paths"]
    path_of = np.asarray(analysis["region_path_of"], dtype=np.int64)
    if len(path_of) != n:
        return unavailable(
            f"the analysis grouped {len(path_of)} region records, the region table has {n}"
        )
    # summed in record order, as adding one instance after the other would
    wall = np.bincount(
        path_of,
        weights=np.maximum(instances.end_ns - instances.start_ns, 0) / 1e9,
        minlength=len(paths),
    )
    t = analysis["totals"]
    gpu_activity = int(t["kernel_count"]) + int(t["copy_count"]) + int(t["memset_count"]) > 0
    energy = path_energy(analysis.get("energy"), len(paths), traced_gpu_ids(analysis))
    items: list[dict[str, Any]] = [
        {
            "name": str(r["name"]),
            "path": str(r["region"]),
            "depth": int(r["depth"]),
            "count": int(r["instances"]),
            "wall_s": float(wall[p]),
            "gpu_s": int(r["gpu_ns"]) / 1e9 if gpu_activity else None,
            **energy[p],
        }
        for p, r in enumerate(paths)
    ]
    items.sort(key=lambda r: (-r["wall_s"], r["path"]))
    return {
        "available": True,
        "count": n,
        "paths": len(items),
        "items": items[:FULL_ROWS],
        "rows_left_out": max(len(items) - FULL_ROWS, 0),
    }


def traced_gpu_ids(analysis: Mapping) -> set[int]:
    """The ids of the trace's GPUs: the device analysis' rows (every device record and every
    device id an activity names)."""
    return {int(r["device_id"]) for r in (analysis.get("devices") or {}).get("rows", [])}


def path_energy(
    energy: Mapping | None, n_paths: int, traced_gpus: Iterable[int] = ()
) -> list[dict[str, Any]]:
    """Per region path, the GPU joules measured over its instances' windows on every sampled
    GPU (the energy analysis' region path rows summed over GPUs) and the share of those windows
    on every traced GPU that the samples cover: {"gpu_energy_j", "gpu_energy_coverage"}, both
    None when the trace has no energy or the path no sampled time. traced_gpus: the ids of the
    trace's GPUs (traced_gpu_ids); one without power samples (NVML did not list it, or could
    not read it) counts as unsampled over the whole window, so its missing joules lower the
    coverage instead of passing unseen."""
    none: dict[str, Any] = {"gpu_energy_j": None, "gpu_energy_coverage": None}
    out = [dict(none) for _ in range(n_paths)]
    if not energy or not energy.get("measured"):
        return out
    gpus = {int(d["device_id"]) for d in energy.get("devices", [])} | {int(g) for g in traced_gpus}
    joules = [0.0] * n_paths
    window = [0] * n_paths  # the instances' summed length (the same on every GPU's row)
    covered = [0] * n_paths
    for r in energy["region_paths"]:
        p = int(r["path_index"])
        if 0 <= p < n_paths:
            # a window with no sampled time has no joules (null): it adds no energy, and its
            # coverage (0) says so
            joules[p] += float(r["joules"] or 0.0)
            window[p] = max(window[p], int(r["duration_ns"]))
            covered[p] += int(r["coverage_ns"])
    for p in range(n_paths):
        if covered[p] > 0 and window[p] > 0:
            out[p] = {
                "gpu_energy_j": joules[p],
                "gpu_energy_coverage": covered[p] / (window[p] * max(len(gpus), 1)),
            }
    return out


ENERGY_NOT_MEASURED = (
    "no GPU power samples in this trace: NVML was not available while tracing (the warnings "
    "say why) or the trace was made with power_sample_ms=0"
)


def energy_section(analysis: Mapping | None, reason: str | None = None) -> dict:
    """The trace's GPU energy (docs/energy.md): the sampling and the counter's update period,
    the total joules and how the per-op attribution splits them, and one row per GPU as the
    energy analysis gives it (joules, mean, peak and idle watts, ...). `analysis`: the C++
    analysis result (None: `reason` says why)."""
    if analysis is None:
        return unavailable(f"no energy: {reason or 'the analysis gave no result'}")
    e = analysis.get("energy")
    if not e or not e.get("measured"):
        return unavailable(ENERGY_NOT_MEASURED)
    update = int(e["update_period_ns"])
    return {
        "available": True,
        "sample_period_s": int(e["sample_period_ns"]) / 1e9,
        "update_period_s": update / 1e9 if update > 0 else None,
        "total_j": float(e["total_joules"]),
        "unattributed_j": float(e["unattributed_joules"]),
        "copies_j": float(e["copies_joules"]),
        "idle_j": float(e["idle_joules"]),
        "devices": [dict(d) for d in e["devices"]],
    }


# ---------------------------------------------------------------------------------------------
# Sections from other engineers' analyses (ops, roofline, candidates): read defensively


def is_missing_analysis(e: BaseException) -> bool:
    """True when `e` says an analysis is not in this build: a MissingAnalysis, the fpgaprof
    analysis module failing to import, or an attribute missing on fpgaprof's C++ module
    (`fpgaprof._core...`). An AttributeError raised by a bug inside an analysis is not."""
    if isinstance(e, MissingAnalysis):
        return True
    if isinstance(e, ImportError):
        return (e.name or "").startswith("fpgaprof")
    if isinstance(e, AttributeError):
        obj = getattr(e, "obj", None)
        return isinstance(obj, types.ModuleType) and obj.__name__.startswith("fpgaprof._core")
    return False


def run_analysis(
    getter: Callable[[], Any], what: str, warnings: list[str] | None = None
) -> tuple[Any, str | None]:
    """(result, None), or (None, why). An analysis this build lacks gives "not in this
    fpgaprof build"; any other failure gives its real error, which is also appended to
    `warnings` (a failing analysis is a bug to see, not a section to drop quietly)."""
    try:
        obj = getter()
    except Exception as e:  # noqa: BLE001 - the reason is shown to the user, nothing hidden
        if is_missing_analysis(e):
            return None, f"{what} is not in this fpgaprof build ({one_line(e)})"
        why = f"{what} failed: {type(e).__name__}: {one_line(e)}"
        if warnings is not None and why not in warnings:
            warnings.append(why)
        return None, why
    if obj is None:
        return None, f"{what} gave no result"
    return obj, None


def analysis_section(
    getter: Callable[[], Any], what: str, warnings: list[str] | None = None
) -> dict:
    """Runs one analysis of another module as rows; its absence or failure becomes the reason
    (failures also become warnings, see run_analysis)."""
    obj, why = run_analysis(getter, what, warnings)
    if why is not None:
        return unavailable(why)
    try:
        rows = records_of(obj)
    except Exception as e:  # noqa: BLE001 - unreadable rows become the section's reason
        why = f"{what} returned rows reports cannot read: {type(e).__name__}: {one_line(e)}"
        if warnings is not None:
            warnings.append(why)
        return unavailable(why)
    return {"available": True, "rows": rows}
