"""Reads a Profile into plain columns and JSON-ready facts for every report.

Every report (summary.json, report.html, the CLI's compare) is built from the one dict that
`collect()` returns, so they cannot disagree. A section whose data the profile cannot give is
{"available": false, "reason": "..."}: it is never filled with invented numbers.
"""
from __future__ import annotations

import math
import os
from typing import Any, Callable, Iterable

import numpy as np

# CopyKind values of records.hpp (stable in the trace file).
COPY_KIND_NAMES = {
    0: "unknown", 1: "HtoD", 2: "DtoH", 3: "DtoD", 4: "HtoH", 5: "PtoP",
    6: "HtoA", 7: "AtoH", 8: "AtoA", 9: "AtoD", 10: "DtoA",
}
# MemoryKind values of records.hpp.
MEMORY_KIND_NAMES = {
    0: "unknown", 1: "pageable", 2: "pinned", 3: "device", 4: "array", 5: "managed",
    6: "device_static", 7: "managed_static",
}
NONE32 = 0xFFFFFFFF

# How many rows a list section keeps in summary.json / the HTML (the rest is counted).
TOP_ROWS = 50
# Points kept in the memory timeline (the timeline is downsampled to this many steps).
MEMORY_POINTS = 400


class Unavailable(Exception):
    """A section cannot be built; the message says why (shown as "not available: <why>")."""


def _unavailable(reason: str) -> dict:
    return {"available": False, "reason": reason}


# ---------------------------------------------------------------------------------------------
# Columns


def columns(table: Any, fields: Iterable[str] = ()) -> dict[str, np.ndarray]:
    """Columns of one record table as numpy arrays.

    Uses the table's own `columns()` (the fast path of fpgaprof's tables); otherwise reads the
    named fields off each record (slow, for plain lists of objects). Missing tables give {}.
    """
    if table is None:
        return {}
    cols = getattr(table, "columns", None)
    if callable(cols):
        out = cols()
        return {k: np.asarray(v) for k, v in dict(out).items()}
    if isinstance(cols, dict):
        return {k: np.asarray(v) for k, v in cols.items()}
    rows = list(table)
    names = list(fields)
    if not names and rows:
        first = rows[0]
        names = [n for n in dir(first) if not n.startswith("_") and not callable(getattr(first, n))]
    return {n: np.asarray([getattr(r, n) for r in rows]) for n in names}


def table_len(table: Any) -> int:
    if table is None:
        return 0
    try:
        return len(table)
    except TypeError:
        return 0


def col(c: dict[str, np.ndarray], name: str, n: int, default: Any = 0) -> np.ndarray:
    """One column, or `default` repeated when the table does not have it."""
    if name in c:
        return c[name]
    return np.full(n, default)


def nrows(c: dict[str, np.ndarray]) -> int:
    for v in c.values():
        return len(v)
    return 0


def names_of(c: dict[str, np.ndarray], n: int) -> np.ndarray:
    v = c.get("name")
    if v is None:
        return np.full(n, "", dtype=object)
    return v.astype(object)


def unique_names(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_inverse=True) for a column of strings, without sorting the
    whole column: names repeat (kernels), so the distinct ones are found by hashing and only
    they are sorted."""
    lst = values.tolist()
    index = dict.fromkeys(lst)
    try:
        uniq = sorted(index)
    except TypeError:  # values that do not sort together: numpy says so as before
        u, inv = np.unique(values, return_inverse=True)
        return u, inv.reshape(-1)
    for i, v in enumerate(uniq):
        index[v] = i
    inv = np.fromiter(map(index.__getitem__, lst), dtype=np.int64, count=len(lst))
    out = np.empty(len(uniq), dtype=object)
    out[:] = uniq
    return out, inv


def copy_kind_names(values: np.ndarray) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        if isinstance(v, (str, np.str_)):
            out[i] = str(v)
        else:
            out[i] = COPY_KIND_NAMES.get(int(v), f"kind{int(v)}")
    return out


def memory_kind_names(values: np.ndarray) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        if isinstance(v, (str, np.str_)):
            out[i] = str(v)
        else:
            out[i] = MEMORY_KIND_NAMES.get(int(v), f"kind{int(v)}")
    return out


def union_ns(starts: np.ndarray, ends: np.ndarray) -> int:
    """Length of the union of [start, end) intervals, in ns."""
    if len(starts) == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    s = starts[order].astype(np.int64)
    e = np.maximum(ends[order].astype(np.int64), s)
    # running max of the ends so far: an interval starting after it opens a new block
    run_end = np.maximum.accumulate(e)
    new_block = np.empty(len(s), dtype=bool)
    new_block[0] = True
    new_block[1:] = s[1:] > run_end[:-1]
    block_id = np.cumsum(new_block) - 1
    block_start = s[new_block]
    block_end = np.zeros(block_id[-1] + 1, dtype=np.int64)
    np.maximum.at(block_end, block_id, e)
    return int((block_end - block_start).sum())


def _finite(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


# ---------------------------------------------------------------------------------------------
# Facts about the profile


def _get(obj: Any, name: str, default: Any = None) -> Any:
    try:
        v = getattr(obj, name)
    except Exception:  # a property of another engineer's code may raise: treat as missing
        return default
    return default if v is None else v


def _meta_dict(prof: Any) -> dict:
    meta = _get(prof, "meta")
    if meta is None:
        return {}
    if isinstance(meta, dict):
        return dict(meta)
    keys = ("start_ns", "end_ns", "dropped_records", "incomplete_records", "driver_version",
            "cupti_version", "cupti_path", "clock", "gpu_available", "unavailable_reason",
            "command_buffers_disabled", "fpgaprof_version", "warnings")
    return {k: getattr(meta, k) for k in keys if hasattr(meta, k)}


def device_dict(d: Any) -> dict:
    if d is None:
        return {}
    if isinstance(d, dict):
        src = d
        get = src.get
    else:
        def get(k: str, default: Any = None) -> Any:
            return getattr(d, k, default)
    out = {}
    for k in ("id", "name", "uuid", "compute_capability_major", "compute_capability_minor",
              "sm_count", "core_clock_khz", "memory_clock_khz", "memory_bus_width_bits",
              "global_memory_bytes", "l2_cache_bytes", "pcie_generation", "pcie_link_width"):
        v = get(k, None)
        if v is not None:
            out[k] = v.item() if hasattr(v, "item") else v
    peak = get("peak_dram_bandwidth_bytes_per_s", None)
    if callable(peak):
        peak = peak()
    if peak is None and out.get("memory_clock_khz") and out.get("memory_bus_width_bits"):
        peak = 2.0 * out["memory_clock_khz"] * 1e3 * out["memory_bus_width_bits"] / 8.0
    if peak:
        out["peak_dram_bandwidth_bytes_per_s"] = float(peak)
    return out


def trace_facts(prof: Any, path: str | None = None) -> dict:
    meta = _meta_dict(prof)
    start_ns = int(meta.get("start_ns", 0) or 0)
    end_ns = int(meta.get("end_ns", 0) or 0)
    wall_ns = _get(prof, "wall_time_ns")
    if wall_ns is None:
        wall_ns = max(end_ns - start_ns, 0)
    gpu = _get(prof, "gpu_available", meta.get("gpu_available", False))
    return {
        "path": os.fspath(path) if path else None,
        "start_ns": start_ns,
        "end_ns": end_ns,
        "wall_time_s": int(wall_ns) / 1e9,
        "clock": str(meta.get("clock", "CLOCK_REALTIME")),
        "gpu_available": bool(gpu),
        "unavailable_reason": str(meta.get("unavailable_reason", "") or ""),
        "dropped_records": int(_get(prof, "dropped_records", meta.get("dropped_records", 0))),
        "incomplete_records": int(_get(prof, "incomplete_records",
                                       meta.get("incomplete_records", 0))),
        "command_buffers_disabled": bool(meta.get("command_buffers_disabled", False)),
        "cupti_version": int(meta.get("cupti_version", 0) or 0),
        "driver_version": int(meta.get("driver_version", 0) or 0),
        "fpgaprof_version": str(meta.get("fpgaprof_version", "") or ""),
    }


def devices_of(prof: Any) -> list[dict]:
    devs = _get(prof, "devices", [])
    try:
        return [device_dict(d) for d in devs]
    except TypeError:
        return []


def warnings_of(prof: Any, facts: dict, extra: Iterable[str] = ()) -> list[str]:
    """Every warning the user must see: the trace's own plus the ones reports derive."""
    out: list[str] = []
    for w in list(_get(prof, "warnings", []) or []) + list(_meta_dict(prof).get("warnings", [])):
        w = str(w)
        if w not in out:
            out.append(w)
    if facts["dropped_records"]:
        out.append(f"{facts['dropped_records']} CUPTI records were dropped: totals are lower "
                   "bounds (raise trace(buffer_size=...))")
    if facts["incomplete_records"]:
        out.append(f"{facts['incomplete_records']} records had no timestamps (device timestamp "
                   "buffer full) and are left out of times")
    if not facts["gpu_available"]:
        reason = facts["unavailable_reason"] or "no GPU was traced"
        if not any(reason in w for w in out):  # the trace usually says it already
            out.append(f"no GPU data in this trace: {reason}")
    elif not facts["command_buffers_disabled"]:
        out.append("XLA command buffers were on: kernels inside CUDA graphs have no per-op "
                   "NVTX ranges, so attribution falls back to kernel names")
    for w in extra:
        if w not in out:
            out.append(w)
    return out


# ---------------------------------------------------------------------------------------------
# Sections built from the record tables


def kernels_section(prof: Any) -> tuple[dict, dict]:
    """Top kernels by total time, and (busy intervals) totals."""
    table = _get(prof, "kernels")
    c = columns(table, ("name", "start_ns", "end_ns", "stream_id", "device_id"))
    n = nrows(c)
    if n == 0:
        return ({"available": False, "reason": "no kernels in this trace" if table is not None
                 else "this profile has no kernel table", "count": 0, "total_s": 0.0, "top": []},
                {})
    start = col(c, "start_ns", n).astype(np.int64)
    end = col(c, "end_ns", n).astype(np.int64)
    dur = np.maximum(end - start, 0)
    names = names_of(c, n)
    uniq, inv = unique_names(names)
    k = len(uniq)
    total = np.bincount(inv, weights=dur, minlength=k)
    count = np.bincount(inv, minlength=k)
    mn = np.full(k, np.iinfo(np.int64).max, dtype=np.int64)
    mx = np.zeros(k, dtype=np.int64)
    np.minimum.at(mn, inv, dur)
    np.maximum.at(mx, inv, dur)
    order = np.argsort(-total, kind="stable")
    all_total = float(dur.sum())
    top = []
    for i in order[:TOP_ROWS]:
        top.append({
            "name": str(uniq[i]),
            "count": int(count[i]),
            "total_s": float(total[i]) / 1e9,
            "mean_s": float(total[i]) / count[i] / 1e9,
            "min_s": int(mn[i]) / 1e9,
            "max_s": int(mx[i]) / 1e9,
            "share": float(total[i]) / all_total if all_total else 0.0,
        })
    return ({"available": True, "count": n, "distinct": k, "total_s": all_total / 1e9,
             "top": top, "rows_left_out": max(k - TOP_ROWS, 0)},
            {"start": start, "end": end})


def transfers_section(prof: Any, region_names: dict[int, str]) -> tuple[dict, dict]:
    table = _get(prof, "transfers")
    if table is None:
        table = _get(prof, "memcpys")
    c = columns(table, ("start_ns", "end_ns", "bytes", "copy_kind", "src_kind", "dst_kind",
                        "is_async", "region_index", "stream_id", "device_id"))
    n = nrows(c)
    if n == 0:
        return ({"available": False, "reason": "no memory copies in this trace" if table is not None
                 else "this profile has no transfer table", "count": 0, "bytes": 0,
                 "by_direction": [], "by_region": []}, {})
    start = col(c, "start_ns", n).astype(np.int64)
    end = col(c, "end_ns", n).astype(np.int64)
    nbytes = col(c, "bytes", n).astype(np.int64)
    kinds = copy_kind_names(col(c, "copy_kind", n))
    src = memory_kind_names(col(c, "src_kind", n))
    dst = memory_kind_names(col(c, "dst_kind", n))
    is_async = col(c, "is_async", n, False).astype(bool)
    region = col(c, "region_index", n, NONE32).astype(np.int64)
    pageable = (src == "pageable") | (dst == "pageable")

    by_dir = []
    for kind in sorted(set(kinds.tolist())):
        m = kinds == kind
        busy = union_ns(start[m], end[m])
        b = int(nbytes[m].sum())
        by_dir.append({
            "direction": kind,
            "count": int(m.sum()),
            "bytes": b,
            "busy_s": busy / 1e9,
            "gbps": (b / busy) if busy else None,  # bytes/ns == GB/s
            "pageable_count": int((m & pageable).sum()),
            "async_count": int((m & is_async).sum()),
        })
    by_dir.sort(key=lambda r: -r["busy_s"])

    by_region = []
    for r in sorted(set(region.tolist())):
        m = region == r
        for kind in sorted(set(kinds[m].tolist())):
            mk = m & (kinds == kind)
            busy = union_ns(start[mk], end[mk])
            b = int(nbytes[mk].sum())
            by_region.append({
                "region": region_names.get(r, "(no region)") if r != NONE32 else "(no region)",
                "direction": kind,
                "count": int(mk.sum()),
                "bytes": b,
                "busy_s": busy / 1e9,
                "gbps": (b / busy) if busy else None,
            })
    by_region.sort(key=lambda r: -r["busy_s"])
    return ({"available": True, "count": n, "bytes": int(nbytes.sum()),
             "busy_s": union_ns(start, end) / 1e9, "by_direction": by_dir,
             "by_region": by_region[:TOP_ROWS]},
            {"start": start, "end": end})


def memsets_intervals(prof: Any) -> dict:
    c = columns(_get(prof, "memsets"), ("start_ns", "end_ns"))
    n = nrows(c)
    if n == 0:
        return {}
    return {"start": col(c, "start_ns", n).astype(np.int64),
            "end": col(c, "end_ns", n).astype(np.int64)}


def memory_section(prof: Any, t0_ns: int) -> dict:
    """Device memory in use over time, from allocation/release records."""
    table = _get(prof, "allocations")
    c = columns(table, ("timestamp_ns", "address", "bytes", "is_alloc", "device_id"))
    n = nrows(c)
    if n == 0:
        return _unavailable("no device allocation records in this trace"
                            if table is not None else "this profile has no allocation table")
    ts = col(c, "timestamp_ns", n).astype(np.int64)
    addr = col(c, "address", n).astype(np.uint64)
    nbytes = col(c, "bytes", n).astype(np.int64)
    is_alloc = col(c, "is_alloc", n, True).astype(bool)
    order = np.argsort(ts, kind="stable")
    live: dict[int, int] = {}
    in_use = 0
    peak = 0
    peak_t = int(ts[order[0]])
    unmatched_frees = 0
    times = np.empty(n, dtype=np.int64)
    values = np.empty(n, dtype=np.int64)
    for j, i in enumerate(order):
        a = int(addr[i])
        if is_alloc[i]:
            live[a] = live.get(a, 0) + int(nbytes[i])
            in_use += int(nbytes[i])
        else:
            b = live.pop(a, None)
            if b is None:
                b = int(nbytes[i])
                unmatched_frees += 1
            in_use -= b
        if in_use > peak:
            peak, peak_t = in_use, int(ts[i])
        times[j] = ts[i]
        values[j] = in_use
    if n > MEMORY_POINTS:
        # keep the peak and an even spread of steps
        pick = np.unique(np.concatenate([np.linspace(0, n - 1, MEMORY_POINTS).astype(np.int64),
                                         [int(np.argmax(values))]]))
        times, values = times[pick], values[pick]
    return {
        "available": True,
        "events": n,
        "peak_bytes": peak,
        "peak_time_s": (peak_t - t0_ns) / 1e9,
        "end_bytes": in_use,
        "unmatched_frees": unmatched_frees,
        "timeline": [[(int(t) - t0_ns) / 1e9, int(v)] for t, v in zip(times, values)],
    }


def regions_section(prof: Any) -> tuple[dict, dict[int, str], list[dict]]:
    table = _get(prof, "regions")
    c = columns(table, ("name", "start_ns", "end_ns", "depth", "thread_id"))
    n = nrows(c)
    if n == 0:
        return (_unavailable("no fpgaprof.region() in this trace" if table is not None
                             else "this profile has no region table"), {}, [])
    names = names_of(c, n)
    start = col(c, "start_ns", n).astype(np.int64)
    end = col(c, "end_ns", n).astype(np.int64)
    depth = col(c, "depth", n).astype(np.int64)
    idx_names = {i: str(names[i]) for i in range(n)}
    instances = [{"index": i, "name": str(names[i]), "start_ns": int(start[i]),
                  "end_ns": int(end[i]), "depth": int(depth[i])} for i in range(n)]
    agg: dict[str, dict] = {}
    for inst in instances:
        a = agg.setdefault(inst["name"], {"name": inst["name"], "count": 0, "wall_s": 0.0})
        a["count"] += 1
        a["wall_s"] += max(inst["end_ns"] - inst["start_ns"], 0) / 1e9
    items = sorted(agg.values(), key=lambda r: -r["wall_s"])
    return {"available": True, "count": n, "items": items[:TOP_ROWS]}, idx_names, instances


def add_region_gpu_time(regions: dict, prof: Any, region_names: dict[int, str]) -> None:
    """GPU time of each region name: summed durations of the kernels, copies and memsets
    launched inside its instances, nested regions included (as Profile.summary() counts)."""
    if not regions.get("available"):
        return
    rc = columns(_get(prof, "regions"), ("parent", "depth"))
    n_r = nrows(rc)
    own = np.zeros(n_r, dtype=np.float64)
    have_index = False
    for name in ("kernels", "transfers", "memsets"):
        c = columns(_get(prof, name), ("start_ns", "end_ns", "region_index"))
        n = nrows(c)
        if n == 0 or "region_index" not in c:
            continue
        have_index = True
        idx = c["region_index"].astype(np.int64)
        sel = (idx != NONE32) & (idx >= 0) & (idx < n_r)
        d = np.maximum(col(c, "end_ns", n).astype(np.int64)
                       - col(c, "start_ns", n).astype(np.int64), 0)
        own += np.bincount(idx[sel], weights=d[sel], minlength=n_r)[:n_r]
    if not have_index:
        for r in regions["items"]:
            r["gpu_s"] = None
        return
    inclusive = own.copy()
    parent = col(rc, "parent", n_r, NONE32).astype(np.int64)
    depth = col(rc, "depth", n_r).astype(np.int64)
    for i in np.argsort(-depth, kind="stable"):  # children before parents
        if parent[i] != NONE32 and 0 <= parent[i] < n_r:
            inclusive[parent[i]] += inclusive[i]
    per_name: dict[str, float] = {}
    for i in range(n_r):
        nm = region_names.get(i)
        if nm is not None:
            per_name[nm] = per_name.get(nm, 0.0) + inclusive[i] / 1e9
    for r in regions["items"]:
        r["gpu_s"] = per_name.get(r["name"], 0.0)


# ---------------------------------------------------------------------------------------------
# Sections from other engineers' analyses (ops, roofline, candidates): read defensively


def records_of(obj: Any) -> list[dict]:
    """Rows of an analysis result as dicts: accepts a table with columns(), a pandas frame,
    a list of dicts or of objects (dataclasses, pybind11 records)."""
    if obj is None:
        return []
    if hasattr(obj, "to_dict") and hasattr(obj, "columns") and not callable(obj.columns):
        return obj.to_dict("records")  # pandas DataFrame
    cols = getattr(obj, "columns", None)
    if callable(cols):
        c = cols()
        n = nrows(c)
        keys = list(c.keys())
        return [{k: _py(c[k][i]) for k in keys} for i in range(n)]
    rows = []
    for r in obj:
        if isinstance(r, dict):
            rows.append({k: _py(v) for k, v in r.items()})
        elif hasattr(r, "__dataclass_fields__"):
            rows.append({k: _py(getattr(r, k)) for k in r.__dataclass_fields__})
        else:
            rows.append({k: _py(getattr(r, k)) for k in dir(r)
                         if not k.startswith("_") and not callable(getattr(r, k))})
    return rows


def _py(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, dict):
        return {str(k): _py(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_py(x) for x in v]
    return str(v)


def first(row: dict, *keys: str, default: Any = None) -> Any:
    for k in keys:
        if k in row and row[k] is not None:
            return row[k]
    return default


def one_line(e: BaseException, limit: int = 300) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def analysis_section(getter: Callable[[], Any], what: str) -> dict:
    """Runs one analysis of another module; its absence or failure becomes the reason."""
    try:
        obj = getter()
    except AttributeError as e:
        return _unavailable(f"{what} is not in this fpgaprof build ({one_line(e)})")
    except Exception as e:  # the reason is shown to the user, nothing is hidden
        return _unavailable(f"{what} failed: {type(e).__name__}: {one_line(e)}")
    if obj is None:
        return _unavailable(f"{what} gave no result")
    try:
        rows = records_of(obj)
    except Exception as e:
        return _unavailable(f"{what} returned rows reports cannot read: {type(e).__name__}: "
                            f"{one_line(e)}")
    return {"available": True, "rows": rows}
