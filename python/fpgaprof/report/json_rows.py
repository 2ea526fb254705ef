"""Chrome/Perfetto trace-event JSON written column-wise (report.timeline's engine).

Traces have millions of records, so events are not formatted one by one. Each category is a
row template (literal text ``Lit``, integers ``Int``, microsecond times ``Int(us=True)``, and
strings looked up in small tables of pre-escaped JSON ``Str``, each part optionally present
per row); chunks of rows are rendered column-wise with numpy into a byte matrix padded with
NUL bytes (JSON text never contains NUL: json.dumps escapes control characters), the padding
is squeezed out and the chunk goes straight to the file (``EventWriter``). Memory: a few
per-row index arrays and one chunk (CHUNK_BYTES of rows), whatever the size of the file.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

__all__ = [
    "Lit",
    "Int",
    "Str",
    "render_rows",
    "merge_literals",
    "EventWriter",
    "factorize",
    "dense_ids",
    "CHUNK_BYTES",
]


def dense_ids(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


_LUT2 = np.array([[48 + i // 10, 48 + i % 10] for i in range(100)], dtype=np.uint8)
# Strings longer than this, in at most a quarter of a chunk's rows, are spliced into the
# rendered chunk instead of widening every row.
_STR_CAP = 192
_ASCII_SAFE = {"utf-8", "ascii", "latin-1", "iso8859-1", "cp1252"}
CHUNK_BYTES = 16 << 20


def factorize(values: Any) -> tuple[np.ndarray, list]:
    """(ids, distinct values in first-seen order, or sorted for integer arrays)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu" and values.dtype != np.uint64:
        distinct, inv = dense_ids(values.astype(np.int64))
        return inv, distinct.tolist()
    lst = values.tolist() if isinstance(values, np.ndarray) else list(values)
    d = dict.fromkeys(lst)
    uniq = list(d)
    for i, k in enumerate(uniq):
        d[k] = i
    ids = np.fromiter(map(d.__getitem__, lst), dtype=np.int64, count=len(lst))
    return ids, uniq


class Lit:
    def __init__(self, text: str, present: np.ndarray | None = None):
        self.b = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        self.present = present


class Int:
    """A decimal integer; `us=True`: nanoseconds written as microseconds with 3 decimals."""

    def __init__(self, values: np.ndarray, present: np.ndarray | None = None, us: bool = False):
        self.v = np.asarray(values)  # any integer type: chunks are made int64 when rendered
        self.present = present
        self.us = us


class Str:
    """Pre-escaped JSON text per row: table[ids[i]] (b"" writes nothing)."""

    def __init__(
        self, ids: np.ndarray | None, table: Sequence[bytes], present: np.ndarray | None = None
    ):
        self.ids = ids if ids is not None else np.arange(len(table), dtype=np.int64)
        self.table = list(table)
        self.lens = np.fromiter((len(t) for t in table), dtype=np.int64, count=len(table))
        width = max(int(self.lens.max()) if len(table) else 1, 1)
        self.mat = (
            np.array(self.table, dtype=f"S{width}").view(np.uint8).reshape(len(table), width)
            if table
            else np.zeros((0, 1), np.uint8)
        )
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
    blk[:] = tmp[:, 2 * npair - w :]


def _put_3digits(blk: np.ndarray, r: np.ndarray) -> None:
    """r in [0, 1000) as exactly three digits."""
    blk[:, 0:2] = _LUT2[r // 10]
    blk[:, 2] = r % 10 + 48


def render_rows(fields: list, lo: int, hi: int) -> list:
    """Rows lo..hi of a template as a list of byte buffers (in order)."""
    m = hi - lo
    plan: list[tuple[Any, int, int, Any, Any]] = []
    width = 0
    uses: dict[tuple[int, bool], int] = {}  # one column in several places: rendered once
    for f in fields:
        pres = None if f.present is None else f.present[lo:hi]
        if pres is not None and not pres.any():
            continue
        if isinstance(f, Lit):
            w = len(f.b)
            plan.append((f, width, w, pres, None))
        elif isinstance(f, Int):
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
    splices: list[tuple[int, np.ndarray, np.ndarray, Str]] = []
    done: dict[tuple[int, bool], np.ndarray] = {}
    for f, a0, w, pres, extra in plan:
        blk = mat[:, a0 : a0 + w]
        if isinstance(f, Lit):
            blk[:] = f.b
        elif isinstance(f, Int) and (id(f.v), f.us) in done:
            blk[:] = done[(id(f.v), f.us)]
        elif isinstance(f, Int):
            x, neg, nd, const = extra
            if neg is not None:
                blk[:, 0] = np.where(neg, 45, 0)
                blk = blk[:, 1:]
            if f.us:
                q, r = np.divmod(x, 1000) if not const else divmod(int(x[0]), 1000)
                if const:
                    txt = f"{q}.{r:03d}".encode()
                    blk[:, : len(blk[0]) - len(txt)] = 0
                    blk[:, len(blk[0]) - len(txt) :] = np.frombuffer(txt, np.uint8)
                else:
                    _put_digits(blk[:, :-4], q)
                    blk[:, -4] = 46  # "."
                    _put_3digits(blk[:, -3:], r)
            elif const:
                txt = str(int(x[0])).encode()
                blk[:, : blk.shape[1] - len(txt)] = 0
                blk[:, blk.shape[1] - len(txt) :] = np.frombuffer(txt, np.uint8)
            else:
                _put_digits(blk, x)
        else:
            ids, long_rows = extra
            if w:
                blk[:] = f.mat[:, :w][ids]
            if len(long_rows):
                blk[long_rows] = 0
                splices.append((a0, long_rows, ids[long_rows], f))
        if isinstance(f, Int) and uses[(id(f.v), f.us)] > 1 and (id(f.v), f.us) not in done:
            done[(id(f.v), f.us)] = mat[:, a0 : a0 + w].copy()  # with the sign column
        if pres is not None:
            mat[~pres, a0 : a0 + w] = 0
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


def merge_literals(fields: list) -> list:
    """Adjacent literals with the same presence become one (fewer numpy steps per chunk)."""
    out: list = []
    for f in fields:
        prev = out[-1] if out else None
        if isinstance(f, Lit) and isinstance(prev, Lit) and prev.present is f.present:
            merged = Lit("", f.present)
            merged.b = np.concatenate([prev.b, f.b])
            out[-1] = merged
        else:
            out.append(f)
    return out


class EventWriter:
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
        self.event(
            json.dumps({"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": {"name": name}})
        )

    def rows(self, fields: list, n: int, counts: dict[str, int] | None = None) -> None:
        """Renders n rows of a template whose rows start with ",\\n"."""
        if n == 0:
            return
        fields = merge_literals(fields)
        per_row = 8 * len(fields) + 64
        step = max(1024, CHUNK_BYTES // per_row)
        for lo in range(0, n, step):
            parts = render_rows(fields, lo, min(n, lo + step))
            if self.first:
                parts[0] = memoryview(parts[0])[1:]  # no comma before the first event
                self.first = False
            self._bytes(parts[0] if len(parts) == 1 else b"".join(parts))
        for cat, k in (counts or {}).items():
            if k:
                self.counts[cat] = self.counts.get(cat, 0) + k
