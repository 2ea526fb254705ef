"""Parquet tables: every record and analysis table of a trace as one Parquet file each, for
pandas, Polars and DuckDB (docs/reports.md, "Parquet tables" has the schema).

A renderer of the report layer: it takes the tables' model (report.tables.DataTables, never a
Profile). The files are written as a set (base.atomic.OutputSet: all appear, or none and the
folder stays as it was); ``index.json`` beside them lists every table with
its row count and column types, and the tables the trace could not give with the reason.
Needs pyarrow (the ``parquet`` extra: ``pip install 'fpgaprof[parquet]'``).
"""

from __future__ import annotations

import json
import os
from typing import Any

from fpgaprof.base import records
from fpgaprof.base.atomic import OutputSet, open_atomic_binary, write_text_atomic
from fpgaprof.base.core import core
from fpgaprof.base.errors import FpgaprofError
from fpgaprof.base.text import read_side_json
from fpgaprof.report.tables import DataTables

__all__ = ["write_parquet", "INDEX_FILE", "FORMAT_VERSION"]

INDEX_FILE = "index.json"
FORMAT_VERSION = 1


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise FpgaprofError(
            "the Parquet export needs pyarrow, which is not installed "
            "(pip install 'fpgaprof[parquet]' or pip install pyarrow)"
        )
    return pa, pq


INT_SUFFIXES = ("_ns", "_bytes", "_count", "_id", "_index", "count", "bytes", "calls")
FLOAT_SUFFIXES = ("_s", "_per_s", "_fraction", "_factor", "_ratio", "_per_byte", "percent")


# integer columns whose names the suffixes do not give
INT_NAMES = ("address", "value")

_FIELD_TYPES: dict[str, Any] | None = None


def _field_types(pa: Any) -> dict[str, Any]:
    """Analysis field name -> its Arrow type, from the C++ result field tables
    (core.analysis.result_fields; a range field's low and high ends included), for the names
    every table gives the same scalar type."""
    global _FIELD_TYPES
    if _FIELD_TYPES is None:
        seen: dict[str, set[str]] = {}
        try:
            for table, _doc in core.analysis.result_tables():
                for f in core.analysis.result_fields(table):
                    # a range field's ends (card_time_low_s, energy_ratio_high) are its type too
                    for name in f.names:
                        seen.setdefault(name, set()).add(f.type)
        except Exception:  # noqa: BLE001 - an older core: names alone decide
            seen = {}
        arrow = {"float": pa.float64(), "int": pa.int64(), "str": pa.string(), "bool": pa.bool_()}
        _FIELD_TYPES = {
            name: arrow[next(iter(t))]
            for name, t in seen.items()
            if len(t) == 1 and next(iter(t)) in arrow
        }
    return _FIELD_TYPES


def _type_of_empty(pa: Any, name: str) -> Any:
    """The type of a column with no value (no rows, or missing everywhere in this trace), so
    that a table's schema does not depend on the trace: the type the analysis' field table
    gives the name, else from the name: int64 for times in ns, bytes, counts, ids and indexes;
    float64 for seconds, rates, fractions; else string."""
    if name in _field_types(pa):
        return _field_types(pa)[name]
    if name.endswith(FLOAT_SUFFIXES):
        return pa.float64()
    if name.endswith(INT_SUFFIXES) or name in INT_NAMES or records.none_when_max(name):
        return pa.int64()
    return pa.string()


def _arrow_table(pa: Any, cols: dict[str, Any]) -> Any:
    arrays = []
    for name, values in cols.items():
        try:
            arr = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            # mixed kinds in one analysis column (a number or a note): kept as text
            arr = pa.array([None if v is None else str(v) for v in values])
        if pa.types.is_null(arr.type):
            arr = pa.array(list(values), type=_type_of_empty(pa, name))
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, names=list(cols))


def _earlier_export_files(out_dir: str) -> set[str]:
    """The table files (<name>.parquet, directly in out_dir) of an earlier write_parquet into
    out_dir, as its index.json lists them; empty when there is none or it cannot be read."""
    try:
        old = read_side_json(os.path.join(out_dir, INDEX_FILE), "an index.json")
        listed = old["tables"].values() if "format_version" in old else []
        files = {str(t["file"]) for t in listed}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()
    return {f for f in files if f.endswith(".parquet") and os.path.basename(f) == f}


def write_parquet(tables: DataTables, out_dir: str | os.PathLike) -> dict[str, str]:
    """Writes DIR/<table>.parquet for every table of `tables` with at least one column, and
    DIR/index.json. Returns table name -> path (index.json under "index")."""
    pa, pq = _pyarrow()
    out_dir = os.fspath(out_dir)
    paths: dict[str, str] = {}
    index: dict[str, Any] = {"format_version": FORMAT_VERSION, "tables": {}, "missing": {}}
    with OutputSet(out_dir) as outs:
        for name, cols in tables.tables.items():
            if not cols:
                index["missing"][name] = "no columns: the analysis returned no rows"
                continue
            table = _arrow_table(pa, cols)
            file = f"{name}.parquet"
            with open_atomic_binary(outs.path(file)) as f:
                pq.write_table(table, f)
            paths[name] = outs.final(file)
            index["tables"][name] = {
                "file": file,
                "rows": table.num_rows,
                "columns": {f.name: str(f.type) for f in table.schema},
            }
        index["missing"].update(tables.missing)
        # Tables of an earlier export into DIR that this one does not write (its trace had no
        # rows for them) would be read as this trace's: removed with the set. Only files the
        # earlier index.json lists, so never a file fpgaprof did not write.
        written = {t["file"] for t in index["tables"].values()}
        for file in _earlier_export_files(out_dir) - written:
            outs.remove(file)
        write_text_atomic(outs.path(INDEX_FILE), json.dumps(index, indent=1) + "\n")
    paths["index"] = os.path.join(out_dir, INDEX_FILE)
    return paths
