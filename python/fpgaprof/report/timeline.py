"""timeline.json: the trace as Chrome/Perfetto trace-event JSON (open in ui.perfetto.dev or
chrome://tracing, or load with Perfetto's trace processor).

Layout:
  process "GPU <id>: <name>"   one thread (track) per CUDA stream: kernels, copies, memsets
                               (args: bytes, memory bandwidth (GB/s), grid/block, HLO op and
                               source line when known)
  process "host"               one thread per OS thread: CUDA API calls, NVTX ranges (XLA's
                               module/thunk ranges included) and fpgaprof regions
  flow arrows                  from each launching API call to the kernel/copy/memset it queued
                               (v2 flows: bind_id = CUPTI correlation id, flow_out/flow_in)

It follows Kineto's conventions (PyTorch profiler traces), so Holistic Trace Analysis reads it
as it reads Kineto's: categories "kernel", "gpu_memcpy", "gpu_memset" on the GPU and
"cuda_runtime", "cuda_driver" (API calls), "nvtx", "region" on the host; GPU args "device",
"stream", "correlation" (API calls: "correlation"); a top-level "distributedInfo" (rank 0) and
"deviceProperties".

Timestamps are microseconds from the trace start written from integer nanoseconds (three
decimals: no rounding through doubles). Each record becomes exactly one slice ("X" events;
instantaneous NVTX markers become "i" events), so slice counts equal record counts.

A renderer of the report layer: it takes the timeline's model (report.model.TimelineRecords:
the record columns, never a Profile) and writes it column-wise (report.json_rows: every
category is a row template rendered with numpy in chunks). Memory: the record columns, a few
per-row index arrays and one chunk (16 MB of rows), whatever the size of the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from fpgaprof.base import records
from fpgaprof.base.atomic import open_atomic
from fpgaprof.base.constants import TIMELINE_MAX_EVENTS
from fpgaprof.base.core import core
from fpgaprof.base.text import shown_name
from fpgaprof.report.json_rows import EventWriter, Int, Lit, Str, dense_ids, factorize
from fpgaprof.report.model import TimelineRecords, untimed_note

__all__ = [
    "write_timeline",
    "write_timeline_to",
    "assign_lanes",
    "gpu_tid",
    "host_tid",
    "MAX_EVENTS",
    "CATEGORIES",
]

HOST_PID = 1
GPU_PID_BASE = 1000
# GPU stream tracks get their own thread ids so that they never collide with OS thread ids.
GPU_TID_BASE = 2_000_000_000

MAX_GPU_LANES = 20
MAX_HOST_LANES = 200
HOST_LANE_STRIDE = 10_000_000  # above any Linux thread id (pid_max <= 4194304)


def gpu_tid(device_id: int, stream_id: int, lane: int = 0) -> int:
    return (
        GPU_TID_BASE
        + min(int(lane), MAX_GPU_LANES - 1) * 100_000_000
        + (int(device_id) % 100) * 1_000_000
        + (int(stream_id) % 1_000_000)
    )


def host_tid(thread_id: int, lane: int = 0) -> int:
    return int(thread_id) + min(int(lane), MAX_HOST_LANES - 1) * HOST_LANE_STRIDE


# ---------------------------------------------------------------------------------------------
# Lanes

MAX_PEEL = 64  # rounds of _lanes before the rest goes to the greedy


def assign_lanes(keys: Sequence, starts: Sequence, ends: Sequence) -> list[int]:
    """Lane per interval so that, within a (key, lane) track, intervals nest or are disjoint.

    Viewers nest slices per thread track; intervals that partly overlap (kernels overlapping
    on one stream with programmatic dependent launch, NVTX start/end ranges that do not nest,
    clock skew) would be mis-drawn or dropped, so the overlapping one moves to the next lane
    ("stream 7 (overlap 1)"). Greedy: longest first at equal starts; lane 0 when possible.
    """
    kid, _ = factorize(keys)
    s, e = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    return _lanes(kid, s, e).tolist()


def _lanes(kid: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """assign_lanes on int64 arrays (kid: track key ids), running the greedy (in Python) only
    on the few intervals whose lanes depend on each other.

    Per track the intervals fall into blocks: an interval that starts when everything before
    it (in greedy order) has ended starts a new block, and the greedy's stacks are all spent
    there, so blocks are independent; a block of one interval is lane 0. In a block, let R be
    the first interval with the latest end. Intervals after R lie inside R in time, and R sits
    at the bottom of its lane's stack for the rest of the block, so it never changes their
    lanes: without R the rest splits into sub-blocks again. Sub-blocks that start after R are
    independent of everything before them (next round); the ones that start before R decide
    R's lane, so they go to the greedy together with R. Nested traces (serial kernels, launch
    calls inside XLA thunk ranges inside regions) leave the greedy next to nothing.
    """
    n = len(s)
    lanes = np.zeros(n, dtype=np.int64)
    if n == 0:
        return lanes
    order = np.lexsort((-e, s, kid))  # stable: index order at equal (key, start, end)
    so, eo = s[order], e[order]
    pos = np.arange(n)
    blk = _blocks(kid[order], so, eo)
    greedy = []
    for _ in range(MAX_PEEL):
        first, size = _runs(blk)
        multi = np.repeat(size > 1, size)
        if not multi.all():
            pos, blk = pos[multi], blk[multi]
            if len(pos) == 0:
                break
            first, size = _runs(blk)
        bid = np.repeat(np.arange(len(first)), size)  # dense block number per row
        ends = eo[pos]
        is_max = ends == np.repeat(np.maximum.reduceat(ends, first), size)
        r_idx = np.minimum.reduceat(np.where(is_max, np.arange(len(pos)), len(pos)), first)
        rest = np.ones(len(pos), dtype=bool)
        rest[r_idx] = False
        ri = np.nonzero(rest)[0]
        sub = _blocks(bid[ri], so[pos[ri]], eo[pos[ri]])
        sfirst, ssize = _runs(sub)
        pre_sub = ri[sfirst] < r_idx[bid[ri[sfirst]]]
        pre_row = np.repeat(pre_sub, ssize)
        has_pre = np.zeros(len(first), dtype=bool)
        has_pre[bid[ri[sfirst[pre_sub]]]] = True
        g = np.sort(np.concatenate([ri[pre_row], r_idx[has_pre]]))
        if len(g):
            greedy.append((pos[g], bid[g]))
        pos, blk = pos[ri[~pre_row]], sub[~pre_row]
        if len(pos) == 0:
            break
    else:
        greedy.append((pos, blk))
    for p, gid in greedy:
        lanes[order[p]] = _greedy_lanes(gid.tolist(), so[p].tolist(), eo[p].tolist())
    return lanes


def _runs(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start index and length of each run of equal values."""
    first = np.nonzero(np.r_[True, ids[1:] != ids[:-1]])[0]
    return first, np.diff(np.r_[first, len(ids)])


def _blocks(grp: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Block number per interval (sorted by group, start, -end): a new block starts with a new
    group or where an interval starts at or after the latest end so far in its group."""
    rank = np.cumsum(np.r_[0, grp[1:] != grp[:-1]])
    base = min(int(s.min()), int(e.min()))
    span = max(int(s.max()), int(e.max())) - base + 1
    if (int(rank[-1]) + 1) * span >= (1 << 62):
        # times far apart (a record without timestamps at 0): their ranks order them the same
        times = np.sort(np.concatenate([s, e]))
        s, e = np.searchsorted(times, s), np.searchsorted(times, e)
        base, span = 0, len(times)
    # groups shifted apart so that one running maximum serves them all
    off = rank * span - base
    run_end = np.maximum.accumulate(e + off)
    new = np.r_[True, (s + off)[1:] >= run_end[:-1]]
    return np.cumsum(new) - 1


def _greedy_lanes(keys: list, starts: list, ends: list) -> list[int]:
    """The greedy on intervals already sorted by (key, start, -end)."""
    lanes = [0] * len(starts)
    stacks: list[list[int]] = []
    cur_key = object()
    for i, (k, s, e) in enumerate(zip(keys, starts, ends)):
        if k != cur_key:
            cur_key = k
            stacks = []
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


def _tracks(kid: np.ndarray, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (key id, lane) pairs, sorted, and each record's index among them."""
    if len(kid) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    width = int(lanes.max()) + 1
    u, track = dense_ids(kid * width + lanes)
    return u // width, u % width, track


# ---------------------------------------------------------------------------------------------
# Record columns


def _attribution_cols(c: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-record HLO op / source line columns when the table carries them."""
    out = {}
    for key, alts in (
        ("hlo_op", ("hlo_op", "op")),
        ("module", ("module", "hlo_module")),
        ("source", ("source", "source_line", "source_location")),
    ):
        for a in alts:
            if a in c:
                out[key] = c[a]
                break
    return out


def _shown_value(v: Any) -> Any:
    """An args value: a string cut as a name is (shown_name), anything else as it is."""
    return shown_name(v) if isinstance(v, str) else v


def _attr_fields(attr: dict[str, np.ndarray]) -> list:
    """`,"hlo_op":"…"` etc. per row; nothing where the value is missing or empty."""
    out = []
    for k, v in attr.items():
        ids, uniq = factorize(v)
        table = [
            b""
            if u is None or str(u) == ""
            else f',"{k}":{json.dumps(_shown_value(records.to_plain(u)))}'.encode("ascii")
            for u in uniq
        ]
        out.append(Str(ids, table))
    return out


def _names(values: np.ndarray) -> Str:
    """Slice names: each distinct one escaped once."""
    ids, uniq = factorize(values)
    return Str(ids, [json.dumps(shown_name(str(u))).encode("ascii") for u in uniq])


def _gbps(nbytes: np.ndarray, dur: np.ndarray) -> Str:
    """GB/s = bytes/ns rounded to 3 decimals as Python writes it (null for zero time)."""
    # float.__repr__ is what json.dumps writes for a float
    txt = [
        repr(round(b / d, 3)).encode("ascii") if d else b"null"
        for b, d in zip(nbytes.tolist(), dur.tolist())
    ]
    return Str(None, txt)


def _i64(c: dict[str, np.ndarray], name: str, n: int) -> np.ndarray:
    return np.asarray(records.col(c, name, n)).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# Writer


def _gpu_head(
    cat: str, name: Str, g: dict[str, np.ndarray], sl: slice, flow: np.ndarray, corr: np.ndarray
) -> list:
    """Fields of a GPU slice up to its Kineto args (device, stream, correlation: what HTA reads
    to tell GPU work from host work and to join it to its launch); g: pid, tid, ts, dur,
    device, stream of all GPU rows."""
    has_flow = flow != 0  # where it is set, the flow id is the correlation id
    return [
        Lit(f',\n{{"ph":"X","cat":"{cat}","name":'),
        name,
        Lit(',"pid":'),
        Int(g["pid"][sl]),
        Lit(',"tid":'),
        Int(g["tid"][sl]),
        Lit(',"ts":'),
        Int(g["ts"][sl], us=True),
        Lit(',"dur":'),
        Int(g["dur"][sl], us=True),
        Lit(',"bind_id":', has_flow),
        Int(corr, has_flow),
        Lit(',"flow_in":true', has_flow),
        Lit(',"args":{"device":'),
        Int(g["device"][sl]),
        Lit(',"stream":'),
        Int(g["stream"][sl]),
        Lit(',"correlation":'),
        Int(corr),
    ]


def _write_host(
    out: EventWriter,
    hc: tuple,
    hs: np.ndarray,
    he: np.ndarray,
    thread: np.ndarray,
    lanes: np.ndarray,
    t0: int,
    api_corr: np.ndarray,
    flow_ids: np.ndarray,
) -> None:
    """API calls, NVTX ranges/markers and regions as one template, written longest-first at
    equal start so that viewers nest them: (start, -duration, category, record order)."""
    (ac, na), (nc, nn), (rc, nr) = hc
    nh = na + nn + nr
    order = np.lexsort((hs - he, hs))  # stable: category then record order at ties
    tid = thread[order] + np.minimum(lanes[order], MAX_HOST_LANES - 1) * HOST_LANE_STRIDE
    ts = hs[order] - t0
    dur = np.maximum(he - hs, 0)[order]
    del thread, lanes, hs, he

    def spread(v: Any, lo: int) -> np.ndarray:
        """One category's column over all host rows (0 elsewhere), in written order."""
        v = np.asarray(v)
        a = np.zeros(nh, dtype=v.dtype)
        a[lo : lo + len(v)] = v
        return a[order]

    cat = spread(np.repeat(np.arange(3, dtype=np.int8), [na, nn, nr]), 0)
    is_api, is_nvtx, is_reg = cat == 0, cat == 1, cat == 2
    ranged = (
        ~spread(~np.asarray(nc["is_range"]).astype(bool), na)
        if nn and "is_range" in nc
        else np.ones(nh, dtype=bool)
    )
    open_nvtx = (
        spread(~np.asarray(nc["is_closed"]).astype(bool), na)
        if nn and "is_closed" in nc
        else np.zeros(nh, dtype=bool)
    )
    # head: 0 runtime API call, 1 nvtx range, 2 nvtx instant, 3 region, 4 driver API call
    head = np.where(cat == 2, np.int8(3), cat)
    head[is_nvtx & ~ranged] = 2
    api_kind_ids, api_kinds = factorize(records.col(ac, "kind", na))
    driver_kind = np.array([_api_kind_name(k) == "driver" for k in api_kinds], dtype=bool)
    head[is_api & spread(driver_kind[api_kind_ids] if na else np.zeros(0, bool), 0)] = 4
    del cat
    heads = [
        b',\n{"ph":"X","cat":"cuda_runtime","name":',
        b',\n{"ph":"X","cat":"nvtx","name":',
        b',\n{"ph":"i","s":"t","cat":"nvtx","name":',
        b',\n{"ph":"X","cat":"region","name":',
        b',\n{"ph":"X","cat":"cuda_driver","name":',
    ]
    name_ids, names = factorize(
        np.concatenate([records.names_of(c, n).astype(object) for c, n in hc])
    )
    name_ids = name_ids.astype(np.int32)[order]
    dom = nc.get("domain", np.full(nn, "", dtype=object)) if nn else np.zeros(0, object)
    dom_ids, doms = factorize(np.asarray(dom, dtype=object))
    cid = spread(api_corr, 0)
    has_flow = is_api & np.isin(cid, flow_ids)
    fields = [
        Str(head, heads),
        Str(name_ids, [json.dumps(shown_name(str(u))).encode() for u in names]),
        Lit(f',"pid":{HOST_PID},"tid":'),
        Int(tid),
        Lit(',"ts":'),
        Int(ts, us=True),
        Lit(',"dur":', ranged),
        Int(dur, ranged, us=True),
        Lit(',"bind_id":', has_flow),
        Int(cid, has_flow),
        Lit(',"flow_out":true', has_flow),
        Lit(',"args":{'),
        Lit('"correlation":', is_api),
        Int(cid, is_api),
        Lit(',"cbid":', is_api),
        Int(spread(records.col(ac, "callback_id", na), 0), is_api),
        Lit(',"return":', is_api),
        Int(spread(records.col(ac, "return_value", na), 0), is_api),
        Lit('"domain":', is_nvtx),
        Str(
            spread(dom_ids.astype(np.int32), na),
            [json.dumps(shown_name(str(u))).encode() for u in doms],
            is_nvtx,
        ),
        Lit(',"closed":false', open_nvtx),
        Lit('"depth":', is_reg),
        Int(spread(records.col(rc, "depth", nr), na + nn), is_reg),
        Lit("}}"),
    ]
    out.rows(fields, nh, {"cuda_api": na, "nvtx": nn, "region": nr})


def _device_properties(d: dict) -> dict:
    """A device as an entry of Kineto's deviceProperties (only the fields the trace knows)."""
    out: dict[str, Any] = {"id": int(d.get("id", 0)), "name": str(d.get("name", ""))}
    for ours, kineto in (
        ("global_memory_bytes", "totalGlobalMem"),
        ("compute_capability_major", "computeMajor"),
        ("compute_capability_minor", "computeMinor"),
        ("sm_count", "numSms"),
    ):
        if d.get(ours) is not None:
            out[kineto] = int(d[ours])
    return out


def _api_kind_name(kind: Any) -> str:
    """ "runtime" or "driver" of an API record's kind (its enum value or name)."""
    if isinstance(kind, str):
        return kind
    return str(records.enum_names(np.asarray([kind]), core.API_KIND_NAMES)[0])


# Records written at most by default (base.constants.TIMELINE_MAX_EVENTS).
MAX_EVENTS = TIMELINE_MAX_EVENTS
CATEGORIES = ("kernel", "memcpy", "memset", "cuda_api", "nvtx", "region")


def write_timeline(
    timeline: TimelineRecords, path: str | os.PathLike, max_events: int | None = MAX_EVENTS
) -> dict[str, int]:
    """Writes the timeline JSON of `timeline` (report.model.timeline_records; its columns are
    handed over: the model is empty afterwards) atomically. Returns the number of slices per
    category
    ("kernel", "memcpy", "memset", "cuda_api", "nvtx", "region") and "flow" arrows; when
    records were left out (see write_timeline_to), also "omitted" (their number),
    "omitted_<category>" and "cut_ns" (the trace time from which on they are left out)."""
    with open_atomic(path) as f:
        counts = write_timeline_to(timeline, f, max_events=max_events)
    return counts


def _first_records(
    cols: list[dict[str, np.ndarray]], max_events: int
) -> tuple[list[dict[str, np.ndarray]], list[int], int]:
    """The first `max_events` records of all categories together, by start time (ties in
    category order): the columns cut to them, the count left out per category, and the start
    (ns) of the last record kept."""
    sizes = [records.nrows(c) for c in cols]
    starts = np.concatenate([_i64(c, "start_ns", n) for c, n in zip(cols, sizes)])
    keep = np.zeros(len(starts), dtype=bool)
    order = np.argsort(starts, kind="stable")[: max(max_events, 0)]
    keep[order] = True
    cut_ns = int(starts[order[-1]]) if len(order) else 0
    out, omitted, lo = [], [], 0
    for c, n in zip(cols, sizes):
        m = keep[lo : lo + n]
        lo += n
        omitted.append(int(n - np.count_nonzero(m)))
        out.append({k: np.asarray(v)[m] for k, v in c.items()} if omitted[-1] else c)
    return out, omitted, cut_ns


def write_timeline_to(
    timeline: TimelineRecords, f: IO[str], max_events: int | None = MAX_EVENTS
) -> dict[str, int]:
    """The timeline JSON into `f`. With more than `max_events` records (None: no limit) only
    the first `max_events` by start time are written (every category cut at the same trace
    time, so the picture up to there is complete); the number left out per category is in
    "otherData" and a global instant event marks the cut on the timeline."""
    # the columns are taken out of the model: a column left out of the cut below is freed
    kc, mc, sc, ac, nc, rc = timeline.take()
    facts = timeline.facts
    devices = {d.get("id", i): d for i, d in enumerate(timeline.devices)}
    omitted = [0] * len(CATEGORIES)
    cut_ns = 0
    all_cols = [kc, mc, sc, ac, nc, rc]
    if max_events is not None and sum(records.nrows(c) for c in all_cols) > max_events:
        all_cols, omitted, cut_ns = _first_records(all_cols, max_events)
        kc, mc, sc, ac, nc, rc = all_cols
    nk, nm, ns = records.nrows(kc), records.nrows(mc), records.nrows(sc)
    na, nn, nr = records.nrows(ac), records.nrows(nc), records.nrows(rc)

    starts = [int(facts["start_ns"])] if facts["start_ns"] else []
    for c in (kc, mc, sc, ac, nc, rc):
        if records.nrows(c):
            starts.append(int(np.min(c["start_ns"])))
    t0 = min(starts) if starts else 0

    # launching API call per correlation id → flow ids
    api_corr = _i64(ac, "correlation_id", na)
    api_ids = api_corr[api_corr != 0]

    def activity_flows(c: dict[str, np.ndarray], n: int) -> np.ndarray:
        corr = _i64(c, "correlation_id", n)
        return np.where(np.isin(corr, api_ids), corr, 0)

    kflow, mflow, sflow = activity_flows(kc, nk), activity_flows(mc, nm), activity_flows(sc, ns)
    flow_ids = np.sort(np.concatenate([kflow, mflow, sflow]))
    distinct = flow_ids != 0
    distinct[1:] &= flow_ids[1:] != flow_ids[:-1]
    flow_ids = flow_ids[distinct]

    out = EventWriter(f)
    # Kineto's header: HTA finds the rank with the regex '"rank":\\s+(\\d+)' (a space is needed)
    out.text('{"displayTimeUnit":"ns","distributedInfo":{"rank": 0},"deviceProperties":')
    out.text(json.dumps([_device_properties(d) for d in timeline.devices]))
    out.text(',"otherData":')
    other = {
        "tool": "fpgaprof",
        "clock": facts["clock"],
        "t0_ns": t0,
        "dropped_records": facts["dropped_records"],
    }
    untimed = facts.get("untimed_records") or {}
    if any(untimed.values()):
        other["untimed_records"] = dict(untimed)
        other["untimed_note"] = untimed_note(untimed)
    if sum(omitted):
        other.update(
            {
                "omitted_records": sum(omitted),
                "omitted_by_category": dict(zip(CATEGORIES, omitted)),
                "cut_ns": cut_ns,
                "note": _cut_note(omitted, max_events),
            }
        )
    out.text(json.dumps(other))
    out.text(',"traceEvents":[')
    if sum(omitted):
        # A global instant event: the viewer draws a line across every track at the cut.
        rel = max(cut_ns - t0, 0)
        out.event(
            '{"ph":"i","s":"g","cat":"fpgaprof","name":'
            + json.dumps("timeline cut: " + _cut_note(omitted, max_events))
            + f',"pid":{HOST_PID},"tid":0,'
            f'"ts":{rel // 1000}.{rel % 1000:03d}' + "}"
        )

    # --- GPU tracks: one per (device, stream), plus overlap lanes where slices partly overlap
    gdev = np.concatenate([_i64(c, "device_id", n) for c, n in ((kc, nk), (mc, nm), (sc, ns))])
    gst = np.concatenate([_i64(c, "stream_id", n) for c, n in ((kc, nk), (mc, nm), (sc, ns))])
    gs = np.concatenate([_i64(c, "start_ns", n) for c, n in ((kc, nk), (mc, nm), (sc, ns))])
    ge = np.concatenate([_i64(c, "end_ns", n) for c, n in ((kc, nk), (mc, nm), (sc, ns))])
    udev, dev_id = dense_ids(gdev)
    ust, st_id = dense_ids(gst)
    gk, gkid = dense_ids(dev_id * len(ust) + st_id)
    gkeys = np.stack([udev[gk // max(len(ust), 1)], ust[gk % max(len(ust), 1)]], axis=1)
    glanes = _lanes(gkid, gs, ge)
    tk, tl, gtrack = _tracks(gkid, glanes)
    for dev in sorted(set(gkeys[tk, 0].tolist())):
        dname = shown_name(str(devices.get(dev, {}).get("name", "")))
        out.meta("process_name", GPU_PID_BASE + dev, 0, f"GPU {dev}: {dname}".rstrip(": "))
    # Each track's tid: gpu_tid() (the stream readable in it); a track whose gpu_tid() another
    # track of the same process took already (streams 1,000,000 apart, lanes past the last)
    # gets one of its own past every gpu_tid(), so no two tracks share one.
    track_tids = np.zeros(len(tk), np.int64)
    taken: set[tuple[int, int]] = set()
    spill = GPU_TID_BASE + MAX_GPU_LANES * 100_000_000
    for i, ((dev, st), ln) in enumerate(zip(gkeys[tk].tolist(), tl.tolist())):
        tid = gpu_tid(dev, st, ln)
        if (dev, tid) in taken:
            tid, spill = spill, spill + 1
        taken.add((dev, tid))
        track_tids[i] = tid
        out.meta(
            "thread_name",
            GPU_PID_BASE + dev,
            tid,
            f"stream {st}" + (f" (overlap {ln})" if ln else ""),
        )
    g = {
        "pid": GPU_PID_BASE + gdev,
        "tid": track_tids[gtrack],  # each record's track's
        "ts": gs - t0,
        "dur": np.maximum(ge - gs, 0),
        "device": gdev,
        "stream": gst,
    }
    gdur = g["dur"]

    if nk:
        sl = slice(0, nk)
        graph = _i64(kc, "graph_id", nk)
        has_graph = graph != 0
        shared = _i64(kc, "static_shared_bytes", nk) + _i64(kc, "dynamic_shared_bytes", nk)
        corr = np.asarray(records.col(kc, "correlation_id", nk))
        fields = (
            _gpu_head("kernel", _names(records.names_of(kc, nk)), g, sl, kflow, corr)
            + [
                Lit(',"grid":['),
                Int(records.col(kc, "grid_x", nk)),
                Lit(","),
                Int(records.col(kc, "grid_y", nk)),
                Lit(","),
                Int(records.col(kc, "grid_z", nk)),
                Lit('],"block":['),
                Int(records.col(kc, "block_x", nk)),
                Lit(","),
                Int(records.col(kc, "block_y", nk)),
                Lit(","),
                Int(records.col(kc, "block_z", nk)),
                Lit('],"registers_per_thread":'),
                Int(records.col(kc, "registers_per_thread", nk)),
                Lit(',"shared_bytes":'),
                Int(shared),
                Lit(',"graph_id":', has_graph),
                Int(graph, has_graph),
            ]
            + _attr_fields(_attribution_cols(kc))
            + [Lit("}}")]
        )
        out.rows(fields, nk, {"kernel": nk})
        kc.clear()  # the kernel columns (names as Python strings) are done with

    if nm:
        sl = slice(nk, nk + nm)
        kind_ids, kinds = factorize(records.col(mc, "copy_kind", nm))
        kind_names = records.enum_names(kinds, core.COPY_KIND_NAMES).tolist()
        src_ids, srcs = factorize(records.col(mc, "src_kind", nm))
        dst_ids, dsts = factorize(records.col(mc, "dst_kind", nm))
        src_names = records.enum_names(srcs, core.MEMORY_KIND_NAMES).tolist()
        dst_names = records.enum_names(dsts, core.MEMORY_KIND_NAMES).tolist()
        nbytes = _i64(mc, "bytes", nm)
        corr = np.asarray(records.col(mc, "correlation_id", nm))
        mnames = Str(kind_ids, [json.dumps(f"Memcpy {k}").encode() for k in kind_names])
        fields = (
            _gpu_head("gpu_memcpy", mnames, g, sl, mflow, corr)
            + [
                Lit(',"bytes":'),
                Int(nbytes),
                Lit(',"memory bandwidth (GB/s)":'),
                _gbps(nbytes, gdur[sl]),
                Lit(',"copy_kind":'),
                Str(kind_ids, [json.dumps(k).encode() for k in kind_names]),
                Lit(',"src_kind":'),
                Str(src_ids, [json.dumps(k).encode() for k in src_names]),
                Lit(',"dst_kind":'),
                Str(dst_ids, [json.dumps(k).encode() for k in dst_names]),
                Lit(',"async":'),
                Str(
                    np.asarray(records.col(mc, "is_async", nm)).astype(bool).astype(np.int64),
                    [b"false", b"true"],
                ),
            ]
            + _attr_fields(_attribution_cols(mc))
            + [Lit("}}")]
        )
        out.rows(fields, nm, {"memcpy": nm})

    if ns:
        sl = slice(nk + nm, nk + nm + ns)
        nbytes = _i64(sc, "bytes", ns)
        corr = np.asarray(records.col(sc, "correlation_id", ns))
        fields = _gpu_head(
            "gpu_memset", Str(np.zeros(ns, np.int64), [b'"Memset"']), g, sl, sflow, corr
        ) + [
            Lit(',"bytes":'),
            Int(nbytes),
            Lit(',"memory bandwidth (GB/s)":'),
            _gbps(nbytes, gdur[sl]),
            Lit(',"value":'),
            Int(records.col(sc, "value", ns)),
            Lit("}}"),
        ]
        out.rows(fields, ns, {"memset": ns})
    del gdev, gst, gs, ge, gkid, glanes, g, gdur  # before the host rows need memory

    # --- host tracks: one per OS thread, plus overlap lanes (NVTX start/end ranges need not
    # nest, ranges left open end at the trace end)
    hc = ((ac, na), (nc, nn), (rc, nr))
    nh = na + nn + nr
    hs = np.concatenate([_i64(c, "start_ns", n) for c, n in hc])
    he = np.concatenate([_i64(c, "end_ns", n) for c, n in hc])
    hkeys, hkid = dense_ids(np.concatenate([_i64(c, "thread_id", n) for c, n in hc]))
    hlanes = _lanes(hkid, hs, he)
    tk, tl, _ = _tracks(hkid, hlanes)
    if len(tk):
        out.meta("process_name", HOST_PID, 0, "host")
    for t, ln in zip(hkeys[tk].tolist(), tl.tolist()):
        out.meta(
            "thread_name",
            HOST_PID,
            host_tid(t, ln),
            f"thread {t}" + (f" (overlap {ln})" if ln else ""),
        )
    if nh:
        _write_host(out, hc, hs, he, hkeys[hkid], hlanes, t0, api_corr, flow_ids)

    out.text("\n]}\n")
    out.counts["flow"] = len(flow_ids)
    if sum(omitted):
        out.counts["omitted"] = sum(omitted)
        out.counts["cut_ns"] = cut_ns
        for cat, n in zip(CATEGORIES, omitted):
            out.counts[f"omitted_{cat}"] = n
    return out.counts


def _cut_note(omitted: list[int], max_events: int | None) -> str:
    parts = [f"{n:,} {cat}" for cat, n in zip(CATEGORIES, omitted) if n]
    return (
        f"only the first {max_events:,} records by start time are shown; {sum(omitted):,} "
        f"later ones are left out ({', '.join(parts)}); the trace file has them all "
        f"(`fpgaprof report TRACE --timeline-events 0` writes every one)"
    )
