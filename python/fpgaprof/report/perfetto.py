"""timeline.json: the trace as Chrome/Perfetto trace-event JSON (open in ui.perfetto.dev or
chrome://tracing, or load with Perfetto's trace processor).

Layout:
  process "GPU <id>: <name>"   one thread (track) per CUDA stream: kernels, copies, memsets
                               (args: bytes, GB/s, grid/block, HLO op and source line when known)
  process "host"               one thread per OS thread: CUDA API calls, NVTX ranges (XLA's
                               module/thunk ranges included) and fpgaprof regions
  flow arrows                  from each launching API call to the kernel/copy/memset it queued
                               (v2 flows: bind_id = CUPTI correlation id, flow_out/flow_in)

Timestamps are microseconds from the trace start written from integer nanoseconds (three
decimals: no rounding through doubles). Each record becomes exactly one slice ("X" events;
instantaneous NVTX markers become "i" events), so slice counts equal record counts.
"""
from __future__ import annotations

import functools
import json
import os
from typing import IO, Any

import numpy as np

from fpgaprof.report import _data as D
from fpgaprof._atomic import open_atomic

HOST_PID = 1
GPU_PID_BASE = 1000
# GPU stream tracks get their own thread ids so that they never collide with OS thread ids.
GPU_TID_BASE = 2_000_000_000


def _us(ns: int) -> str:
    """Integer nanoseconds → microseconds with three decimals, exactly."""
    neg = ns < 0
    q, r = divmod(abs(int(ns)), 1000)
    return f"{'-' if neg else ''}{q}.{r:03d}"


MAX_GPU_LANES = 20
MAX_HOST_LANES = 200
HOST_LANE_STRIDE = 10_000_000  # above any Linux thread id (pid_max <= 4194304)


def _gpu_tid(device_id: int, stream_id: int, lane: int = 0) -> int:
    return (GPU_TID_BASE + min(int(lane), MAX_GPU_LANES - 1) * 100_000_000
            + (int(device_id) % 100) * 1_000_000 + (int(stream_id) % 1_000_000))


def _host_tid(thread_id: int, lane: int = 0) -> int:
    return int(thread_id) + min(int(lane), MAX_HOST_LANES - 1) * HOST_LANE_STRIDE


def assign_lanes(keys: list, starts: list, ends: list) -> list[int]:
    """Lane per interval so that, within a (key, lane) track, intervals nest or are disjoint.

    Viewers nest slices per thread track; intervals that partly overlap (kernels overlapping
    on one stream with programmatic dependent launch, NVTX start/end ranges that do not nest,
    clock skew) would be mis-drawn or dropped, so the overlapping one moves to the next lane
    ("stream 7 (overlap 1)"). Greedy: longest first at equal starts; lane 0 when possible.
    """
    order = sorted(range(len(starts)), key=lambda i: (keys[i], starts[i], -ends[i]))
    lanes = [0] * len(starts)
    stacks: list[list[int]] = []
    cur_key = object()
    for i in order:
        if keys[i] != cur_key:
            cur_key = keys[i]
            stacks = []
        s, e = starts[i], ends[i]
        for lane, stack in enumerate(stacks):
            while stack and stack[-1] <= s:
                stack.pop()
            if not stack or e <= stack[-1]:
                stack.append(e)
                lanes[i] = lane
                break
        else:
            stacks.append([e])
            lanes[i] = len(stacks) - 1
    return lanes


class _Writer:
    def __init__(self, f: IO[str]):
        self.f = f
        self.first = True
        self.counts: dict[str, int] = {}

    def raw(self, ev_json: str, cat: str | None = None) -> None:
        self.f.write("\n" if self.first else ",\n")
        self.first = False
        self.f.write(ev_json)
        if cat is not None:
            self.counts[cat] = self.counts.get(cat, 0) + 1

    def meta(self, kind: str, pid: int, tid: int, name: str) -> None:
        self.raw(json.dumps({"ph": "M", "name": kind, "pid": pid, "tid": tid,
                             "args": {"name": name}}))

    def slice(self, cat: str, name: str, pid: int, tid: int, start_ns: int, dur_ns: int,
              args: dict | str, flow: tuple[str, int] | None = None) -> None:
        """args: a dict, or its JSON text already formatted (the fast path for big tables)."""
        a = args if isinstance(args, str) else json.dumps(args, default=_json_default)
        fl = f',"bind_id":{flow[1]},"{flow[0]}":true' if flow is not None else ""
        self.raw(f'{{"ph":"X","cat":"{cat}","name":{_jname(name)},"pid":{pid},"tid":{tid},'
                 f'"ts":{_us(start_ns)},"dur":{_us(dur_ns if dur_ns > 0 else 0)}{fl},"args":{a}}}',
                 cat)

    def instant(self, cat: str, name: str, pid: int, tid: int, ts_ns: int, args: dict) -> None:
        self.raw(json.dumps({"ph": "i", "s": "t", "cat": cat, "name": name, "pid": pid,
                             "tid": tid, "ts": 0, "args": args},
                            default=_json_default).replace('"ts": 0', f'"ts": {_us(ts_ns)}', 1),
                 cat)


@functools.lru_cache(maxsize=65536)
def _jname(name: str) -> str:
    """JSON text of a name (names repeat: kernels, API calls)."""
    return json.dumps(name)


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _kernel_attribution(prof: Any, n: int) -> dict[str, np.ndarray]:
    """hlo_op / module / source columns per kernel from the attribution, when available."""
    if n == 0:
        return {}
    try:
        from fpgaprof import _attribution
        from fpgaprof.report.summary import _attribution_of
        cols = _attribution.kernel_columns(_attribution_of(prof))
    except Exception:  # no attribution in this build or for this profile: args stay plain
        return {}
    out = {}
    for k in ("hlo_op", "module", "source"):
        v = cols.get(k)
        if v is not None and len(v) == n:
            out[k] = np.asarray(v, dtype=object)
    return out


def _attribution_cols(c: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-record HLO op / source line columns when the table carries them."""
    out = {}
    for key, alts in (("hlo_op", ("hlo_op", "op")), ("module", ("module", "hlo_module")),
                      ("source", ("source", "source_line", "source_location"))):
        for a in alts:
            if a in c:
                out[key] = c[a]
                break
    return out


def write_timeline(prof: Any, path: str | os.PathLike) -> dict[str, int]:
    """Writes the timeline JSON atomically. Returns the number of slices per category
    ("kernel", "memcpy", "memset", "cuda_api", "nvtx", "region") and "flow" arrows."""
    with open_atomic(path) as f:
        counts = write_timeline_to(prof, f)
    return counts


def write_timeline_to(prof: Any, f: IO[str]) -> dict[str, int]:
    g = D._get
    kc = D.columns(g(prof, "kernels"))
    kc.update(_kernel_attribution(prof, D.nrows(kc)))
    tbl = g(prof, "transfers")
    mc = D.columns(tbl if tbl is not None else g(prof, "memcpys"))
    sc = D.columns(g(prof, "memsets"))
    ac = D.columns(g(prof, "api_calls"))
    nc = D.columns(g(prof, "markers"))
    rc = D.columns(g(prof, "regions"))
    facts = D.trace_facts(prof)
    devices = {d.get("id", i): d for i, d in enumerate(D.devices_of(prof))}

    starts = [int(facts["start_ns"])] if facts["start_ns"] else []
    for c, key in ((kc, "start_ns"), (mc, "start_ns"), (sc, "start_ns"), (ac, "start_ns"),
                   (nc, "start_ns"), (rc, "start_ns")):
        if D.nrows(c):
            starts.append(int(np.min(c[key])))
    t0 = min(starts) if starts else 0

    # launching API call per correlation id → flow ids
    n_api = D.nrows(ac)
    api_corr = D.col(ac, "correlation_id", n_api).astype(np.int64)
    flow_ids: set[int] = set()

    def activity_flows(c: dict[str, np.ndarray]) -> np.ndarray:
        n = D.nrows(c)
        corr = D.col(c, "correlation_id", n).astype(np.int64)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        has = np.isin(corr, api_corr[api_corr != 0])
        return np.where(has, corr, 0)

    kflow, mflow, sflow = activity_flows(kc), activity_flows(mc), activity_flows(sc)
    for arr in (kflow, mflow, sflow):
        flow_ids.update(int(x) for x in arr if x)

    w = _Writer(f)
    f.write('{"displayTimeUnit":"ns","otherData":')
    f.write(json.dumps({"tool": "fpgaprof", "clock": facts["clock"], "t0_ns": t0,
                        "dropped_records": facts["dropped_records"]}))
    f.write(',"traceEvents":[')

    # --- GPU tracks: one per (device, stream), plus overlap lanes where slices partly overlap
    gkeys: list = []
    gs: list = []
    ge: list = []
    for c in (kc, mc, sc):
        n = D.nrows(c)
        gkeys += list(zip(D.col(c, "device_id", n).tolist(), D.col(c, "stream_id", n).tolist()))
        gs += D.col(c, "start_ns", n).tolist()
        ge += D.col(c, "end_ns", n).tolist()
    glanes = assign_lanes(gkeys, gs, ge)
    nk, nm = D.nrows(kc), D.nrows(mc)
    klane, mlane, slane = glanes[:nk], glanes[nk:nk + nm], glanes[nk + nm:]
    gpu_tracks = sorted(set((int(d), int(st), int(ln)) for (d, st), ln in zip(gkeys, glanes)))
    for dev in sorted({d for d, _, _ in gpu_tracks}):
        dname = devices.get(dev, {}).get("name", "")
        w.meta("process_name", GPU_PID_BASE + dev, 0, f"GPU {dev}: {dname}".rstrip(": "))
    for dev, st, ln in gpu_tracks:
        w.meta("thread_name", GPU_PID_BASE + dev, _gpu_tid(dev, st, ln),
               f"stream {st}" + (f" (overlap {ln})" if ln else ""))

    n = D.nrows(kc)
    if n:
        names = D.names_of(kc, n).tolist()
        attr = {k: v.tolist() for k, v in _attribution_cols(kc).items()}
        L = {k: D.col(kc, k, n).tolist() for k in (
            "start_ns", "end_ns", "device_id", "stream_id", "correlation_id", "grid_x", "grid_y",
            "grid_z", "block_x", "block_y", "block_z", "registers_per_thread",
            "static_shared_bytes", "dynamic_shared_bytes", "graph_id")}
        kfl = kflow.tolist()
        for i in range(n):
            s, e = int(L["start_ns"][i]), int(L["end_ns"][i])
            args = (f'{{"correlation_id":{int(L["correlation_id"][i])},'
                    f'"grid":[{int(L["grid_x"][i])},{int(L["grid_y"][i])},{int(L["grid_z"][i])}],'
                    f'"block":[{int(L["block_x"][i])},{int(L["block_y"][i])},'
                    f'{int(L["block_z"][i])}],'
                    f'"registers_per_thread":{int(L["registers_per_thread"][i])},'
                    f'"shared_bytes":'
                    f'{int(L["static_shared_bytes"][i]) + int(L["dynamic_shared_bytes"][i])}')
            if int(L["graph_id"][i]):
                args += f',"graph_id":{int(L["graph_id"][i])}'
            for k, v in attr.items():
                if v[i] is not None and str(v[i]) != "":
                    args += f',"{k}":{json.dumps(D._py(v[i]))}'
            args += "}"
            fl = int(kfl[i])
            dev = int(L["device_id"][i])
            w.slice("kernel", str(names[i]), GPU_PID_BASE + dev,
                    _gpu_tid(dev, L["stream_id"][i], klane[i]), s - t0, e - s, args,
                    ("flow_in", fl) if fl else None)

    n = D.nrows(mc)
    if n:
        kinds = D.copy_kind_names(D.col(mc, "copy_kind", n))
        srck = D.memory_kind_names(D.col(mc, "src_kind", n))
        dstk = D.memory_kind_names(D.col(mc, "dst_kind", n))
        attr = _attribution_cols(mc)
        cols = {k: D.col(mc, k, n) for k in ("start_ns", "end_ns", "bytes", "device_id",
                                            "stream_id", "correlation_id", "is_async")}
        for i in range(n):
            s, e, b = int(cols["start_ns"][i]), int(cols["end_ns"][i]), int(cols["bytes"][i])
            dur = max(e - s, 0)
            args = {"bytes": b, "GB/s": round(b / dur, 3) if dur else None,
                    "copy_kind": kinds[i], "src_kind": srck[i], "dst_kind": dstk[i],
                    "async": bool(cols["is_async"][i]),
                    "correlation_id": int(cols["correlation_id"][i])}
            for k, v in attr.items():
                if v[i] is not None and str(v[i]) != "":
                    args[k] = D._py(v[i])
            fl = int(mflow[i])
            w.slice("memcpy", f"Memcpy {kinds[i]}", GPU_PID_BASE + int(cols["device_id"][i]),
                    _gpu_tid(cols["device_id"][i], cols["stream_id"][i], mlane[i]), s - t0, dur,
                    args,
                    ("flow_in", fl) if fl else None)

    n = D.nrows(sc)
    if n:
        cols = {k: D.col(sc, k, n) for k in ("start_ns", "end_ns", "bytes", "device_id",
                                            "stream_id", "correlation_id", "value")}
        for i in range(n):
            s, e, b = int(cols["start_ns"][i]), int(cols["end_ns"][i]), int(cols["bytes"][i])
            dur = max(e - s, 0)
            fl = int(sflow[i])
            w.slice("memset", "Memset", GPU_PID_BASE + int(cols["device_id"][i]),
                    _gpu_tid(cols["device_id"][i], cols["stream_id"][i], slane[i]), s - t0, dur,
                    {"bytes": b, "GB/s": round(b / dur, 3) if dur else None,
                     "value": int(cols["value"][i]),
                     "correlation_id": int(cols["correlation_id"][i])},
                    ("flow_in", fl) if fl else None)

    # --- host tracks: one per OS thread, plus overlap lanes (NVTX start/end ranges need not
    # nest, ranges left open end at the trace end)
    hkeys: list = []
    hs: list = []
    he: list = []
    for c in (ac, nc, rc):
        n = D.nrows(c)
        hkeys += D.col(c, "thread_id", n).tolist()
        hs += D.col(c, "start_ns", n).tolist()
        he += D.col(c, "end_ns", n).tolist()
    hlanes = assign_lanes(hkeys, hs, he)
    na, nn = D.nrows(ac), D.nrows(nc)
    alane, nlane, rlane = hlanes[:na], hlanes[na:na + nn], hlanes[na + nn:]
    host_tracks = sorted(set((int(t), int(ln)) for t, ln in zip(hkeys, hlanes)))
    if host_tracks:
        w.meta("process_name", HOST_PID, 0, "host")
    for t, ln in host_tracks:
        w.meta("thread_name", HOST_PID, _host_tid(t, ln),
               f"thread {t}" + (f" (overlap {ln})" if ln else ""))

    # Host events are written longest-first at equal start so that viewers nest them.
    host: list[tuple[int, int, int]] = []  # (start, -dur, index into host_ev)
    host_ev: list[str] = []
    buf = _Buffer()
    hw = _Writer(buf)

    n = D.nrows(ac)
    if n:
        names = D.names_of(ac, n).tolist()
        L = {k: D.col(ac, k, n).tolist() for k in ("start_ns", "end_ns", "thread_id",
                                                  "correlation_id", "callback_id",
                                                  "return_value", "kind")}
        for i in range(n):
            s, e = int(L["start_ns"][i]), int(L["end_ns"][i])
            cid = int(L["correlation_id"][i])
            kind = L["kind"][i]
            api = kind if isinstance(kind, str) else ("runtime" if int(kind) == 0 else "driver")
            hw.slice("cuda_api", str(names[i]), HOST_PID, _host_tid(L["thread_id"][i], alane[i]),
                     s - t0, e - s,
                     f'{{"correlation_id":{cid},"cbid":{int(L["callback_id"][i])},'
                     f'"return":{int(L["return_value"][i])},"api":"{api}"}}',
                     ("flow_out", cid) if cid in flow_ids else None)
            host.append((s, s - e, len(host)))
            host_ev.append(buf.take())

    n = D.nrows(nc)
    if n:
        names = D.names_of(nc, n)
        domains = nc.get("domain", np.full(n, "", dtype=object))
        cols = {k: D.col(nc, k, n) for k in ("start_ns", "end_ns", "thread_id", "is_range",
                                            "is_closed")}
        is_range = cols["is_range"] if "is_range" in nc else np.ones(n, dtype=bool)
        is_closed = cols["is_closed"] if "is_closed" in nc else np.ones(n, dtype=bool)
        for i in range(n):
            s, e = int(cols["start_ns"][i]), int(cols["end_ns"][i])
            args = {"domain": str(domains[i])}
            if not bool(is_closed[i]):
                args["closed"] = False
            tid = _host_tid(cols["thread_id"][i], nlane[i])
            if bool(is_range[i]):
                hw.slice("nvtx", str(names[i]), HOST_PID, tid, s - t0, e - s, args)
            else:
                hw.instant("nvtx", str(names[i]), HOST_PID, tid, s - t0, args)
            host.append((s, s - e, len(host)))
            host_ev.append(buf.take())

    n = D.nrows(rc)
    if n:
        names = D.names_of(rc, n)
        cols = {k: D.col(rc, k, n) for k in ("start_ns", "end_ns", "thread_id", "depth")}
        for i in range(n):
            s, e = int(cols["start_ns"][i]), int(cols["end_ns"][i])
            hw.slice("region", str(names[i]), HOST_PID, _host_tid(cols["thread_id"][i], rlane[i]),
                     s - t0, e - s,
                     {"depth": int(cols["depth"][i])})
            host.append((s, s - e, len(host)))
            host_ev.append(buf.take())

    host.sort()
    for _, _, j in host:
        w.raw(host_ev[j])
    for cat, k in hw.counts.items():
        w.counts[cat] = w.counts.get(cat, 0) + k

    f.write("\n]}\n")
    w.counts["flow"] = len(flow_ids)
    return w.counts


class _Buffer:
    """A write target that hands back what was written since the last take()."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, s: str) -> None:
        if s not in ("\n", ",\n"):
            self.parts.append(s)

    def take(self) -> str:
        out = "".join(self.parts)
        self.parts.clear()
        return out
