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

How it is written: traces have millions of records, so events are not formatted one by one.
Each category is a row template (literal text, integers, microsecond times, and strings looked
up in small tables of pre-escaped JSON, each part optionally present per row); chunks of rows
are rendered column-wise with numpy into a byte matrix padded with NUL bytes (JSON text never
contains NUL: json.dumps escapes control characters), the padding is squeezed out and the chunk
goes straight to the file. Memory: the record columns, a few per-row index arrays and one
chunk (16 MB of rows), whatever the size of the file.
"""
from __future__ import annotations

import codecs
import json
import os
from typing import IO, Any, Sequence

import numpy as np

from fpgaprof.analysis import attribution
from fpgaprof.api.overview import attribution_of
from fpgaprof.base.atomic import open_atomic
from fpgaprof.analysis import sections
from fpgaprof.base import records

HOST_PID = 1
GPU_PID_BASE = 1000
# GPU stream tracks get their own thread ids so that they never collide with OS thread ids.
GPU_TID_BASE = 2_000_000_000

MAX_GPU_LANES = 20
MAX_HOST_LANES = 200
HOST_LANE_STRIDE = 10_000_000  # above any Linux thread id (pid_max <= 4194304)


def _gpu_tid(device_id: int, stream_id: int, lane: int = 0) -> int:
    return (GPU_TID_BASE + min(int(lane), MAX_GPU_LANES - 1) * 100_000_000
            + (int(device_id) % 100) * 1_000_000 + (int(stream_id) % 1_000_000))


def _host_tid(thread_id: int, lane: int = 0) -> int:
    return int(thread_id) + min(int(lane), MAX_HOST_LANES - 1) * HOST_LANE_STRIDE


# ---------------------------------------------------------------------------------------------
# Lanes


def assign_lanes(keys: Sequence, starts: Sequence, ends: Sequence) -> list[int]:
    """Lane per interval so that, within a (key, lane) track, intervals nest or are disjoint.

    Viewers nest slices per thread track; intervals that partly overlap (kernels overlapping
    on one stream with programmatic dependent launch, NVTX start/end ranges that do not nest,
    clock skew) would be mis-drawn or dropped, so the overlapping one moves to the next lane
    ("stream 7 (overlap 1)"). Greedy: longest first at equal starts; lane 0 when possible.
    """
    kid, _ = _factorize(keys)
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
    for _ in range(_MAX_PEEL):
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


def _tracks(kid: np.ndarray, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (key id, lane) pairs, sorted."""
    if len(kid) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    width = int(lanes.max()) + 1
    u, _ = _dense(kid * width + lanes)
    return u // width, u % width


def _dense(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, index of each element in them) of an int64 array; by table
    lookup when the values span a small range (ids, streams, threads), else by sorting."""
    if len(a) == 0:
        return a[:0], np.zeros(0, dtype=np.int64)
    lo, hi = int(a.min()), int(a.max())
    if hi - lo < (1 << 22):
        present = np.zeros(hi - lo + 1, dtype=bool)
        present[a - lo] = True
        index = np.cumsum(present) - 1
        return np.nonzero(present)[0] + lo, index[a - lo]
    o = np.argsort(a, kind="stable")
    sa = a[o]
    new = np.r_[True, sa[1:] != sa[:-1]]
    inv = np.empty(len(a), dtype=np.int64)
    inv[o] = np.cumsum(new) - 1
    return sa[new], inv


# ---------------------------------------------------------------------------------------------
# Column-wise JSON rendering

_LUT2 = np.array([[48 + i // 10, 48 + i % 10] for i in range(100)], dtype=np.uint8)
# Strings longer than this, in at most a quarter of a chunk's rows, are spliced into the
# rendered chunk instead of widening every row.
_STR_CAP = 192
_ASCII_SAFE = {"utf-8", "ascii", "latin-1", "iso8859-1", "cp1252"}
_MAX_PEEL = 64  # rounds of _lanes before the rest goes to the greedy
_CHUNK_BYTES = 16 << 20


def _factorize(values: Any) -> tuple[np.ndarray, list]:
    """(ids, distinct values in first-seen order, or sorted for integer arrays)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu" and values.dtype != np.uint64:
        uniq, inv = _dense(values.astype(np.int64))
        return inv, uniq.tolist()
    lst = values.tolist() if isinstance(values, np.ndarray) else list(values)
    d = dict.fromkeys(lst)
    uniq = list(d)
    for i, k in enumerate(uniq):
        d[k] = i
    ids = np.fromiter(map(d.__getitem__, lst), dtype=np.int64, count=len(lst))
    return ids, uniq


class _Lit:
    def __init__(self, text: str, present: np.ndarray | None = None):
        self.b = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        self.present = present


class _Int:
    """A decimal integer; `us=True`: nanoseconds written as microseconds with 3 decimals."""

    def __init__(self, values: np.ndarray, present: np.ndarray | None = None, us: bool = False):
        self.v = np.asarray(values)  # any integer type: chunks are made int64 when rendered
        self.present = present
        self.us = us


class _Str:
    """Pre-escaped JSON text per row: table[ids[i]] (b"" writes nothing)."""

    def __init__(self, ids: np.ndarray | None, table: Sequence[bytes],
                 present: np.ndarray | None = None):
        self.ids = ids if ids is not None else np.arange(len(table), dtype=np.int64)
        self.table = list(table)
        self.lens = np.fromiter((len(t) for t in table), dtype=np.int64, count=len(table))
        width = max(int(self.lens.max()) if len(table) else 1, 1)
        self.mat = (np.array(self.table, dtype=f"S{width}").view(np.uint8)
                    .reshape(len(table), width) if table else np.zeros((0, 1), np.uint8))
        self.present = present


def _pair_table() -> np.ndarray:
    """Two characters per value 0..99 as uint16: [0, 100) both digits; [100, 200) the top
    pair of a number (leading zeros as padding); [200, 300) the top pair when it is also the
    last one (0 writes "0")."""
    t = np.zeros((300, 2), dtype=np.uint8)
    for v in range(100):
        t[v] = (48 + v // 10, 48 + v % 10)
        t[100 + v] = (48 + v // 10 if v >= 10 else 0, 48 + v % 10 if v >= 1 else 0)
        t[200 + v] = (48 + v // 10 if v >= 10 else 0, 48 + v % 10)
    return t.view(np.uint16).reshape(-1)


_PAIRS = _pair_table()


def _put_digits(blk: np.ndarray, x: np.ndarray) -> None:
    """x (int64 >= 0, at most blk's width in digits) right-aligned in blk (m × w), leading
    positions as padding. Two digits per step, through a contiguous uint16 scratch."""
    w = blk.shape[1]
    npair = (w + 1) // 2
    tmp = np.empty((len(x), 2 * npair), dtype=np.uint8)
    t16 = tmp.view(np.uint16)
    hundred: Any = 100
    if int(x.max()) < (1 << 32):
        x, hundred = x.astype(np.uint32), np.uint32(100)
    for k in range(npair):
        q, r = np.divmod(x, hundred)
        t16[:, npair - 1 - k] = _PAIRS[r.astype(np.intp) + (x < hundred) * (200 if k == 0 else 100)]
        x = q
    blk[:] = tmp[:, 2 * npair - w:]


def _put_3digits(blk: np.ndarray, r: np.ndarray) -> None:
    """r in [0, 1000) as exactly three digits."""
    blk[:, 0:2] = _LUT2[r // 10]
    blk[:, 2] = r % 10 + 48


def _render(fields: list, lo: int, hi: int) -> list:
    """Rows lo..hi of a template as a list of byte buffers (in order)."""
    m = hi - lo
    plan = []
    width = 0
    uses: dict[tuple[int, bool], int] = {}  # one column in several places: rendered once
    for f in fields:
        pres = None if f.present is None else f.present[lo:hi]
        if pres is not None and not pres.any():
            continue
        if isinstance(f, _Lit):
            w = len(f.b)
            plan.append((f, width, w, pres, None))
        elif isinstance(f, _Int):
            v = f.v[lo:hi].astype(np.int64, copy=False)
            neg = v < 0
            anyneg = bool(neg.any())
            a = np.abs(v) if anyneg else v
            mn, mx = int(a.min()), int(a.max())
            if f.us:
                nd = max(len(str(mx)), 4)
                w = nd + 1 + anyneg
            else:
                nd = len(str(mx))
                w = nd + anyneg
            const = mn == mx and not anyneg
            plan.append((f, width, w, pres, (a, neg if anyneg else None, nd, const)))
            uses[(id(f.v), f.us)] = uses.get((id(f.v), f.us), 0) + 1
        else:
            ids = f.ids[lo:hi]
            lens = f.lens[ids] if pres is None else np.where(pres, f.lens[ids], 0)
            w = int(lens.max())
            long_rows = np.zeros(0, dtype=np.int64)
            if w > _STR_CAP:
                # a few long strings (C++ template kernel names) would widen every row:
                # splice those in after the chunk is squeezed
                is_long = lens > _STR_CAP
                if 4 * int(np.count_nonzero(is_long)) <= m:
                    long_rows = np.nonzero(is_long)[0]
                    w = int(np.where(is_long, 0, lens).max())
            plan.append((f, width, w, pres, (ids, long_rows)))
        width += w
    mat = np.empty((m, width), dtype=np.uint8)
    splices = []
    done: dict[tuple[int, bool], np.ndarray] = {}
    for f, a0, w, pres, extra in plan:
        blk = mat[:, a0:a0 + w]
        if isinstance(f, _Lit):
            blk[:] = f.b
        elif isinstance(f, _Int) and (id(f.v), f.us) in done:
            blk[:] = done[(id(f.v), f.us)]
        elif isinstance(f, _Int):
            x, neg, nd, const = extra
            if neg is not None:
                blk[:, 0] = np.where(neg, 45, 0)
                blk = blk[:, 1:]
            if f.us:
                q, r = np.divmod(x, 1000) if not const else divmod(int(x[0]), 1000)
                if const:
                    txt = f"{q}.{r:03d}".encode()
                    blk[:, :len(blk[0]) - len(txt)] = 0
                    blk[:, len(blk[0]) - len(txt):] = np.frombuffer(txt, np.uint8)
                else:
                    _put_digits(blk[:, :-4], q)
                    blk[:, -4] = 46  # "."
                    _put_3digits(blk[:, -3:], r)
            elif const:
                txt = str(int(x[0])).encode()
                blk[:, :blk.shape[1] - len(txt)] = 0
                blk[:, blk.shape[1] - len(txt):] = np.frombuffer(txt, np.uint8)
            else:
                _put_digits(blk, x)
        else:
            ids, long_rows = extra
            if w:
                blk[:] = f.mat[:, :w][ids]
            if len(long_rows):
                blk[long_rows] = 0
                splices.append((a0, long_rows, ids[long_rows], f))
        if isinstance(f, _Int) and uses[(id(f.v), f.us)] > 1 and (id(f.v), f.us) not in done:
            done[(id(f.v), f.us)] = mat[:, a0:a0 + w].copy()  # with the sign column
        if pres is not None:
            mat[~pres, a0:a0 + w] = 0
    keep = mat != 0
    flat = mat[keep]
    if not splices:
        return [flat]
    rowstart = np.zeros(m, dtype=np.int64)
    np.cumsum(keep.sum(axis=1)[:-1], out=rowstart[1:])
    offs, order_key, texts = [], [], []
    for k, (a0, rows, ids, f) in enumerate(splices):
        offs.append(rowstart[rows] + keep[rows, :a0].sum(axis=1))
        order_key.append(np.full(len(rows), k))
        texts += [f.table[i] for i in ids.tolist()]
    off = np.concatenate(offs)
    o = np.lexsort((np.concatenate(order_key), off))
    out = []
    prev = 0
    mv = memoryview(flat)
    for j in o.tolist():
        p = int(off[j])
        out.append(mv[prev:p])
        out.append(texts[j])
        prev = p
    out.append(mv[prev:])
    return out


def _merge_literals(fields: list) -> list:
    """Adjacent literals with the same presence become one (fewer numpy steps per chunk)."""
    out: list = []
    for f in fields:
        prev = out[-1] if out else None
        if (isinstance(f, _Lit) and isinstance(prev, _Lit) and prev.present is f.present):
            merged = _Lit("", f.present)
            merged.b = np.concatenate([prev.b, f.b])
            out[-1] = merged
        else:
            out.append(f)
    return out


class _Out:
    """Event writer on the text file: header/meta events as text, rendered chunks as bytes."""

    def __init__(self, f: IO[str]):
        self.f = f
        # The JSON is ASCII (json.dumps escapes the rest), so an ASCII-compatible text file
        # takes the rendered bytes directly on its binary buffer.
        self.buffer = getattr(f, "buffer", None)
        try:
            ascii_ok = codecs.lookup(getattr(f, "encoding", None) or "").name in _ASCII_SAFE
        except LookupError:
            ascii_ok = False
        if not ascii_ok:
            self.buffer = None
        if self.buffer is not None:
            f.flush()  # text already written through f comes first
        self.first = True
        self.counts: dict[str, int] = {}

    def _bytes(self, b: Any) -> None:
        if self.buffer is not None:
            self.buffer.write(b)
        else:
            self.f.write(bytes(b).decode("utf-8"))

    def text(self, s: str) -> None:
        if self.buffer is not None:
            self.buffer.write(s.encode("utf-8"))
        else:
            self.f.write(s)

    def event(self, ev_json: str) -> None:
        self.text(("\n" if self.first else ",\n") + ev_json)
        self.first = False

    def meta(self, kind: str, pid: int, tid: int, name: str) -> None:
        self.event(json.dumps({"ph": "M", "name": kind, "pid": pid, "tid": tid,
                               "args": {"name": name}}))

    def rows(self, fields: list, n: int, counts: dict[str, int] | None = None) -> None:
        """Renders n rows of a template whose rows start with ",\\n"."""
        if n == 0:
            return
        fields = _merge_literals(fields)
        per_row = 8 * len(fields) + 64
        step = max(1024, _CHUNK_BYTES // per_row)
        for lo in range(0, n, step):
            parts = _render(fields, lo, min(n, lo + step))
            if self.first:
                parts[0] = memoryview(parts[0])[1:]  # no comma before the first event
                self.first = False
            self._bytes(parts[0] if len(parts) == 1 else b"".join(parts))
        for cat, k in (counts or {}).items():
            if k:
                self.counts[cat] = self.counts.get(cat, 0) + k


# ---------------------------------------------------------------------------------------------
# Record columns


def _kernel_attribution(prof: Any, n: int) -> dict[str, np.ndarray]:
    """hlo_op / module / source columns per kernel from the attribution, when available."""
    if n == 0:
        return {}
    try:
        cols = attribution.kernel_columns(attribution_of(prof))
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


def _attr_fields(attr: dict[str, np.ndarray]) -> list:
    """`,"hlo_op":"…"` etc. per row; nothing where the value is missing or empty."""
    out = []
    for k, v in attr.items():
        ids, uniq = _factorize(v)
        table = [b"" if u is None or str(u) == "" else
                 f',"{k}":{json.dumps(records.to_plain(u))}'.encode("ascii") for u in uniq]
        out.append(_Str(ids, table))
    return out


def _names(values: np.ndarray) -> _Str:
    """Slice names: each distinct one escaped once."""
    ids, uniq = _factorize(values)
    return _Str(ids, [json.dumps(str(u)).encode("ascii") for u in uniq])


def _gbps(nbytes: np.ndarray, dur: np.ndarray) -> _Str:
    """GB/s = bytes/ns rounded to 3 decimals as Python writes it (null for zero time)."""
    # float.__repr__ is what json.dumps writes for a float
    txt = [repr(round(b / d, 3)).encode("ascii") if d else b"null"
           for b, d in zip(nbytes.tolist(), dur.tolist())]
    return _Str(None, txt)


def _i64(c: dict[str, np.ndarray], name: str, n: int) -> np.ndarray:
    return np.asarray(records.col(c, name, n)).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# Writer


def _gpu_head(cat: str, name: _Str, g: dict[str, np.ndarray], sl: slice, flow: np.ndarray,
              corr: np.ndarray) -> list:
    """Fields of a GPU slice up to its args; g: pid, tid, ts, dur of all GPU rows."""
    has_flow = flow != 0  # where it is set, the flow id is the correlation id
    return [_Lit(f',\n{{"ph":"X","cat":"{cat}","name":'), name,
            _Lit(',"pid":'), _Int(g["pid"][sl]), _Lit(',"tid":'), _Int(g["tid"][sl]),
            _Lit(',"ts":'), _Int(g["ts"][sl], us=True),
            _Lit(',"dur":'), _Int(g["dur"][sl], us=True),
            _Lit(',"bind_id":', has_flow), _Int(corr, has_flow),
            _Lit(',"flow_in":true', has_flow)]


def _write_host(out: _Out, hc: tuple, hs: np.ndarray, he: np.ndarray, thread: np.ndarray,
                lanes: np.ndarray, t0: int, api_corr: np.ndarray, flow_ids: np.ndarray) -> None:
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
        a[lo:lo + len(v)] = v
        return a[order]

    cat = spread(np.repeat(np.arange(3, dtype=np.int8), [na, nn, nr]), 0)
    is_api, is_nvtx, is_reg = cat == 0, cat == 1, cat == 2
    ranged = ~spread(~np.asarray(nc["is_range"]).astype(bool), na) if nn and "is_range" in nc \
        else np.ones(nh, dtype=bool)
    open_nvtx = spread(~np.asarray(nc["is_closed"]).astype(bool), na) if nn and "is_closed" in nc \
        else np.zeros(nh, dtype=bool)
    # head: 0 api, 1 nvtx range, 2 nvtx instant, 3 region
    head = np.where(cat == 2, np.int8(3), cat)
    head[is_nvtx & ~ranged] = 2
    del cat
    heads = [b',\n{"ph":"X","cat":"cuda_api","name":', b',\n{"ph":"X","cat":"nvtx","name":',
             b',\n{"ph":"i","s":"t","cat":"nvtx","name":', b',\n{"ph":"X","cat":"region","name":']
    name_ids, names = _factorize(np.concatenate(
        [records.names_of(c, n).astype(object) for c, n in hc]))
    name_ids = name_ids.astype(np.int32)[order]
    api_kind_ids, api_kinds = _factorize(records.col(ac, "kind", na))
    dom = nc.get("domain", np.full(nn, "", dtype=object)) if nn else np.zeros(0, object)
    dom_ids, doms = _factorize(np.asarray(dom, dtype=object))
    cid = spread(api_corr, 0)
    has_flow = is_api & np.isin(cid, flow_ids)
    fields = [
        _Str(head, heads), _Str(name_ids, [json.dumps(str(u)).encode() for u in names]),
        _Lit(f',"pid":{HOST_PID},"tid":'), _Int(tid),
        _Lit(',"ts":'), _Int(ts, us=True),
        _Lit(',"dur":', ranged), _Int(dur, ranged, us=True),
        _Lit(',"bind_id":', has_flow), _Int(cid, has_flow), _Lit(',"flow_out":true', has_flow),
        _Lit(',"args":{'),
        _Lit('"correlation_id":', is_api), _Int(cid, is_api),
        _Lit(',"cbid":', is_api), _Int(spread(records.col(ac, "callback_id", na), 0), is_api),
        _Lit(',"return":', is_api), _Int(spread(records.col(ac, "return_value", na), 0), is_api),
        _Lit(',"api":', is_api),
        _Str(spread(api_kind_ids.astype(np.int32), 0), [json.dumps(
            k if isinstance(k, str) else ("runtime" if int(k) == 0 else "driver")).encode()
            for k in api_kinds], is_api),
        _Lit('"domain":', is_nvtx),
        _Str(spread(dom_ids.astype(np.int32), na), [json.dumps(str(u)).encode() for u in doms],
             is_nvtx),
        _Lit(',"closed":false', open_nvtx),
        _Lit('"depth":', is_reg), _Int(spread(records.col(rc, "depth", nr), na + nn), is_reg),
        _Lit("}}"),
    ]
    out.rows(fields, nh, {"cuda_api": na, "nvtx": nn, "region": nr})


# Records written at most by default: about 125-250 bytes each, so 150-250 MB of JSON, which
# Perfetto's UI still opens (files past a few hundred MB fail to load in the browser).
MAX_EVENTS = 1_000_000
CATEGORIES = ("kernel", "memcpy", "memset", "cuda_api", "nvtx", "region")


def write_timeline(prof: Any, path: str | os.PathLike,
                   max_events: int | None = MAX_EVENTS) -> dict[str, int]:
    """Writes the timeline JSON atomically. Returns the number of slices per category
    ("kernel", "memcpy", "memset", "cuda_api", "nvtx", "region") and "flow" arrows; when
    records were left out (see write_timeline_to), also "omitted" (their number),
    "omitted_<category>" and "cut_ns" (the trace time from which on they are left out)."""
    with open_atomic(path) as f:
        counts = write_timeline_to(prof, f, max_events=max_events)
    return counts


def _first_records(cols: list[dict[str, np.ndarray]], max_events: int
                   ) -> tuple[list[dict[str, np.ndarray]], list[int], int]:
    """The first `max_events` records of all categories together, by start time (ties in
    category order): the columns cut to them, the count left out per category, and the start
    (ns) of the last record kept."""
    sizes = [records.nrows(c) for c in cols]
    starts = np.concatenate([_i64(c, "start_ns", n) for c, n in zip(cols, sizes)])
    keep = np.zeros(len(starts), dtype=bool)
    order = np.argsort(starts, kind="stable")[:max(max_events, 0)]
    keep[order] = True
    cut_ns = int(starts[order[-1]]) if len(order) else 0
    out, omitted, lo = [], [], 0
    for c, n in zip(cols, sizes):
        m = keep[lo:lo + n]
        lo += n
        omitted.append(int(n - np.count_nonzero(m)))
        out.append({k: np.asarray(v)[m] for k, v in c.items()} if omitted[-1] else c)
    return out, omitted, cut_ns


def write_timeline_to(prof: Any, f: IO[str], max_events: int | None = MAX_EVENTS
                      ) -> dict[str, int]:
    """The timeline JSON into `f`. With more than `max_events` records (None: no limit) only
    the first `max_events` by start time are written (every category cut at the same trace
    time, so the picture up to there is complete); the number left out per category is in
    "otherData" and a global instant event marks the cut on the timeline."""
    g = records.attr_or
    kc = records.columns(g(prof, "kernels"))
    kc.update(_kernel_attribution(prof, records.nrows(kc)))
    tbl = g(prof, "transfers")
    mc = records.columns(tbl if tbl is not None else g(prof, "memcpys"))
    sc = records.columns(g(prof, "memsets"))
    ac = records.columns(g(prof, "api_calls"))
    nc = records.columns(g(prof, "markers"))
    rc = records.columns(g(prof, "regions"))
    facts = sections.trace_facts(prof)
    devices = {d.get("id", i): d for i, d in enumerate(sections.devices_of(prof))}
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

    out = _Out(f)
    out.text('{"displayTimeUnit":"ns","otherData":')
    other = {"tool": "fpgaprof", "clock": facts["clock"], "t0_ns": t0,
             "dropped_records": facts["dropped_records"]}
    if sum(omitted):
        other.update({"omitted_records": sum(omitted),
                      "omitted_by_category": dict(zip(CATEGORIES, omitted)),
                      "cut_ns": cut_ns, "note": _cut_note(omitted, max_events)})
    out.text(json.dumps(other))
    out.text(',"traceEvents":[')
    if sum(omitted):
        # A global instant event: the viewer draws a line across every track at the cut.
        rel = max(cut_ns - t0, 0)
        out.event('{"ph":"i","s":"g","cat":"fpgaprof","name":' + json.dumps(
            "timeline cut: " + _cut_note(omitted, max_events)) + f',"pid":{HOST_PID},"tid":0,'
            f'"ts":{rel // 1000}.{rel % 1000:03d}' + '}')

    # --- GPU tracks: one per (device, stream), plus overlap lanes where slices partly overlap
    gdev = np.concatenate([_i64(c, "device_id", n) for c, n in ((kc, nk), (mc, nm), (sc, ns))])
    gst = np.concatenate([_i64(c, "stream_id", n) for c, n in ((kc, nk), (mc, nm), (sc, ns))])
    gs = np.concatenate([_i64(c, "start_ns", n) for c, n in ((kc, nk), (mc, nm), (sc, ns))])
    ge = np.concatenate([_i64(c, "end_ns", n) for c, n in ((kc, nk), (mc, nm), (sc, ns))])
    udev, dev_id = _dense(gdev)
    ust, st_id = _dense(gst)
    gk, gkid = _dense(dev_id * len(ust) + st_id)
    gkeys = np.stack([udev[gk // max(len(ust), 1)], ust[gk % max(len(ust), 1)]], axis=1)
    glanes = _lanes(gkid, gs, ge)
    tk, tl = _tracks(gkid, glanes)
    for dev in sorted(set(gkeys[tk, 0].tolist())):
        dname = devices.get(dev, {}).get("name", "")
        out.meta("process_name", GPU_PID_BASE + dev, 0, f"GPU {dev}: {dname}".rstrip(": "))
    for (dev, st), ln in zip(gkeys[tk].tolist(), tl.tolist()):
        out.meta("thread_name", GPU_PID_BASE + dev, _gpu_tid(dev, st, ln),
                 f"stream {st}" + (f" (overlap {ln})" if ln else ""))
    g = {"pid": GPU_PID_BASE + gdev,
         "tid": (GPU_TID_BASE + np.minimum(glanes, MAX_GPU_LANES - 1) * 100_000_000
                 + (gdev % 100) * 1_000_000 + gst % 1_000_000),
         "ts": gs - t0, "dur": np.maximum(ge - gs, 0)}
    gdur = g["dur"]

    if nk:
        sl = slice(0, nk)
        graph = _i64(kc, "graph_id", nk)
        has_graph = graph != 0
        shared = _i64(kc, "static_shared_bytes", nk) + _i64(kc, "dynamic_shared_bytes", nk)
        corr = np.asarray(records.col(kc, "correlation_id", nk))
        fields = _gpu_head("kernel", _names(records.names_of(kc, nk)), g, sl, kflow, corr) + [
            _Lit(',"args":{"correlation_id":'), _Int(corr),
            _Lit(',"grid":['), _Int(records.col(kc, "grid_x", nk)), _Lit(","),
            _Int(records.col(kc, "grid_y", nk)), _Lit(","), _Int(records.col(kc, "grid_z", nk)),
            _Lit('],"block":['), _Int(records.col(kc, "block_x", nk)), _Lit(","),
            _Int(records.col(kc, "block_y", nk)), _Lit(","), _Int(records.col(kc, "block_z", nk)),
            _Lit('],"registers_per_thread":'), _Int(records.col(kc, "registers_per_thread", nk)),
            _Lit(',"shared_bytes":'), _Int(shared),
            _Lit(',"graph_id":', has_graph), _Int(graph, has_graph),
        ] + _attr_fields(_attribution_cols(kc)) + [_Lit("}}")]
        out.rows(fields, nk, {"kernel": nk})
        kc.clear()  # the kernel columns (names as Python strings) are done with

    if nm:
        sl = slice(nk, nk + nm)
        kind_ids, kinds = _factorize(records.col(mc, "copy_kind", nm))
        kind_names = sections.copy_kind_names(np.array(kinds, dtype=object)).tolist()
        src_ids, srcs = _factorize(records.col(mc, "src_kind", nm))
        dst_ids, dsts = _factorize(records.col(mc, "dst_kind", nm))
        src_names = sections.memory_kind_names(np.array(srcs, dtype=object)).tolist()
        dst_names = sections.memory_kind_names(np.array(dsts, dtype=object)).tolist()
        nbytes = _i64(mc, "bytes", nm)
        corr = np.asarray(records.col(mc, "correlation_id", nm))
        mnames = _Str(kind_ids, [json.dumps(f"Memcpy {k}").encode() for k in kind_names])
        fields = _gpu_head("memcpy", mnames, g, sl, mflow, corr) + [
            _Lit(',"args":{"bytes":'), _Int(nbytes), _Lit(',"GB/s":'), _gbps(nbytes, gdur[sl]),
            _Lit(',"copy_kind":'), _Str(kind_ids, [json.dumps(k).encode() for k in kind_names]),
            _Lit(',"src_kind":'), _Str(src_ids, [json.dumps(k).encode() for k in src_names]),
            _Lit(',"dst_kind":'), _Str(dst_ids, [json.dumps(k).encode() for k in dst_names]),
            _Lit(',"async":'),
            _Str(np.asarray(records.col(mc, "is_async", nm)).astype(bool).astype(np.int64),
                 [b"false", b"true"]),
            _Lit(',"correlation_id":'), _Int(corr),
        ] + _attr_fields(_attribution_cols(mc)) + [_Lit("}}")]
        out.rows(fields, nm, {"memcpy": nm})

    if ns:
        sl = slice(nk + nm, nk + nm + ns)
        nbytes = _i64(sc, "bytes", ns)
        corr = np.asarray(records.col(sc, "correlation_id", ns))
        fields = _gpu_head("memset", _Str(np.zeros(ns, np.int64), [b'"Memset"']), g, sl, sflow,
                           corr) + [
            _Lit(',"args":{"bytes":'), _Int(nbytes), _Lit(',"GB/s":'), _gbps(nbytes, gdur[sl]),
            _Lit(',"value":'), _Int(records.col(sc, "value", ns)),
            _Lit(',"correlation_id":'), _Int(corr), _Lit("}}")]
        out.rows(fields, ns, {"memset": ns})
    del gdev, gst, gs, ge, gkid, glanes, g, gdur  # before the host rows need memory

    # --- host tracks: one per OS thread, plus overlap lanes (NVTX start/end ranges need not
    # nest, ranges left open end at the trace end)
    hc = ((ac, na), (nc, nn), (rc, nr))
    nh = na + nn + nr
    hs = np.concatenate([_i64(c, "start_ns", n) for c, n in hc])
    he = np.concatenate([_i64(c, "end_ns", n) for c, n in hc])
    hkeys, hkid = _dense(np.concatenate([_i64(c, "thread_id", n) for c, n in hc]))
    hlanes = _lanes(hkid, hs, he)
    tk, tl = _tracks(hkid, hlanes)
    if len(tk):
        out.meta("process_name", HOST_PID, 0, "host")
    for t, ln in zip(hkeys[tk].tolist(), tl.tolist()):
        out.meta("thread_name", HOST_PID, _host_tid(t, ln),
                 f"thread {t}" + (f" (overlap {ln})" if ln else ""))
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
    return (f"only the first {max_events:,} records by start time are shown; {sum(omitted):,} "
            f"later ones are left out ({', '.join(parts)}); the trace file has them all "
            f"(`fpgaprof report TRACE --timeline-events 0` writes every one)")
