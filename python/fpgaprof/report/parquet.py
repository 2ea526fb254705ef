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
from fpgaprof.base.errors import FpgaprofError
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


def _int_named(name: str) -> bool:
    return name.endswith(INT_SUFFIXES) or name in INT_NAMES or records.none_when_max(name)


def _type_of_empty(pa: Any, name: str) -> Any:
    """The type of a column with no value (no rows, or missing everywhere in this trace), from
    its name, so that a table's schema does not depend on the trace: int64 for times in ns,
    bytes, counts, ids and indexes; float64 for seconds, rates, fractions; else string."""
    if name.endswith(FLOAT_SUFFIXES):
        return pa.float64()
    if _int_named(name):
        return pa.int64()
    return pa.string()


def _arrow_table(pa: Any, cols: dict[str, Any]) -> Any:
    import pyarrow.compute as pc

    arrays = []
    for name, values in cols.items():
        try:
            arr = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            # mixed kinds in one analysis column (a number or a note): kept as text
            arr = pa.array([None if v is None else str(v) for v in values])
        if pa.types.is_null(arr.type):
            arr = pa.array(list(values), type=_type_of_empty(pa, name))
        elif (
            pa.types.is_floating(arr.type)
            and _int_named(name)
            and not name.endswith(FLOAT_SUFFIXES)
            and pc.all(pc.equal(arr, pc.floor(arr))).as_py() is not False
        ):
            # a byte count or count an analysis gave as a whole float: int64, as in the traces
            # where it came as an int
            try:
                arr = arr.cast(pa.int64())
            except (pa.ArrowInvalid, OverflowError):
                pass  # past int64: kept as float
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, names=list(cols))


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
        write_text_atomic(outs.path(INDEX_FILE), json.dumps(index, indent=1) + "\n")
    paths["index"] = os.path.join(out_dir, INDEX_FILE)
    return paths
