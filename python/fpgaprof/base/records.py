"""Record tables as numpy columns and analysis results as plain rows.

A record table is anything with ``len()`` and ``columns()`` (the C++ store's tables, the test
doubles' tables); a row is a dict, a dataclass or an object with attributes (pybind11 records).
Values are made JSON-safe by ``to_plain`` (numpy scalars to Python, NaN and infinities to None).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "columns",
    "table_len",
    "col",
    "nrows",
    "names_of",
    "unique_names",
    "enum_names",
    "records_of",
    "row_dict",
    "to_plain",
    "first",
    "attr_or",
    "meta_dict",
    "one_line",
    "source_location",
]


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
        first_row = rows[0]
        names = [
            n
            for n in dir(first_row)
            if not n.startswith("_") and not callable(getattr(first_row, n))
        ]
    return {n: np.asarray([getattr(r, n) for r in rows]) for n in names}


def none_when_max(name: str) -> bool:
    """Whether 0xFFFFFFFF in the uint32 column ``name`` means "none" (docs/records.md): the
    fields the records initialise to kNone32 (``*_index``, ``parent``, ``launch_config``,
    ``function``, the peer copies' ``src_device_id`` / ``dst_device_id``, a sync's
    ``stream_id``) and an unread ``power_mw``. Not a value such as a memset's byte pattern,
    where 0xFFFFFFFF is data."""
    return name.endswith("_index") or name in _NONE_WHEN_MAX


_NONE_WHEN_MAX = frozenset(
    (
        "parent",
        "launch_config",
        "function",
        "src_device_id",
        "dst_device_id",
        "stream_id",
        "power_mw",
    )
)


def table_len(table: Any) -> int:
    """Rows of a table (0 for None or something without a length)."""
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
    """Rows of a dict of columns (0 when it has none)."""
    for v in c.values():
        return len(v)
    return 0


def names_of(c: dict[str, np.ndarray], n: int) -> np.ndarray:
    """The "name" column as an object array ("" for every row when there is none)."""
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


def enum_names(values: Sequence[Any] | np.ndarray, names: Sequence[str]) -> np.ndarray:
    """A column of record enum values as names (object array): a number indexes `names` (the
    core's names by value, e.g. core.COPY_KIND_NAMES; "kindN" outside it), a string stays."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        if isinstance(v, (str, np.str_)):
            out[i] = str(v)
        else:
            k = int(v)
            out[i] = names[k] if 0 <= k < len(names) else f"kind{k}"
    return out


def records_of(obj: Any) -> list[dict]:
    """Rows of an analysis result as dicts (row_dict): accepts a list of rows (dicts, objects),
    a table with columns(), a pandas frame."""
    if obj is None:
        return []
    if isinstance(obj, list):
        return [row_dict(r) for r in obj]
    if hasattr(obj, "to_dict") and hasattr(obj, "columns") and not callable(obj.columns):
        return obj.to_dict("records")  # pandas DataFrame
    cols = getattr(obj, "columns", None)
    if callable(cols):
        c = cols()
        n = nrows(c)
        keys = list(c.keys())
        return [{k: to_plain(c[k][i]) for k in keys} for i in range(n)]
    return [row_dict(r) for r in obj]


def row_dict(r: Any) -> dict:
    """One row as a dict of JSON-safe values: a dict's items, a dataclass's fields or an
    object's public attributes (pybind11 records)."""
    if isinstance(r, dict):
        return {k: to_plain(v) for k, v in r.items()}
    if hasattr(r, "__dataclass_fields__"):
        return {k: to_plain(getattr(r, k)) for k in r.__dataclass_fields__}
    return {
        k: to_plain(getattr(r, k))
        for k in dir(r)
        if not k.startswith("_") and not callable(getattr(r, k))
    }


def to_plain(v: Any) -> Any:
    """A JSON-safe copy: numpy scalars to Python, NaN and infinities to None, tuples and arrays
    to lists, other objects to their str()."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, dict):
        return {str(k): to_plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [to_plain(x) for x in v]
    return str(v)


def first(row: Mapping, *keys: str, default: Any = None) -> Any:
    """The value of the first of `keys` that `row` has and is not None."""
    for k in keys:
        if k in row and row[k] is not None:
            return row[k]
    return default


def attr_or(obj: Any, name: str, default: Any = None) -> Any:
    """obj.<name>, or `default` when it is missing, None or raises (a table a profile cannot
    give, e.g. a trace that is still running)."""
    try:
        v = getattr(obj, name)
    except Exception:  # noqa: BLE001 - a property that cannot answer counts as missing
        return default
    return default if v is None else v


def meta_dict(prof: Any) -> dict:
    """A profile's or store's trace-level facts (``meta``) as a dict ({} without any)."""
    meta = attr_or(prof, "meta")
    if meta is None:
        return {}
    if isinstance(meta, dict):
        return dict(meta)
    keys = (
        "start_ns",
        "end_ns",
        "dropped_records",
        "incomplete_records",
        "driver_version",
        "cupti_version",
        "cupti_path",
        "clock",
        "gpu_available",
        "unavailable_reason",
        "command_buffers_disabled",
        "fpgaprof_version",
        "warnings",
    )
    return {k: getattr(meta, k) for k in keys if hasattr(meta, k)}


def one_line(e: BaseException, limit: int = 300) -> str:
    """An exception's message on one line, at most `limit` characters."""
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def source_location(r: Mapping) -> str | None:
    """ "file:line" from a row's source_file and source_line ("file" when the line is unknown,
    i.e. missing or negative); None when the row names no file."""
    f = r.get("source_file")
    if not f:
        return None
    line = r.get("source_line")
    return f"{f}:{line}" if line is not None and int(line) >= 0 else str(f)


def program_id(r: Any) -> int | None:
    """XLA's program id of an op row or attribution record (a mapping or an object with a
    program_id; -1, missing or no record: unknown), None where unknown."""
    pid = r.get("program_id", -1) if isinstance(r, Mapping) else getattr(r, "program_id", -1)
    return int(pid) if pid is not None and int(pid) >= 0 else None
