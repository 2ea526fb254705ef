"""The trace as tables: every record table and every analysis table as named columns, the model
the Parquet export (report.parquet) writes (docs/reports.md, "Parquet tables").

Record tables are the store's columns as they are (names carry units: ``start_ns``, ``bytes``);
a uint32 id or index that is "none" (the records' kNone32, 4294967295) becomes a missing value,
as an empty CSV cell does. Analysis tables come from the one cached C++ analysis of the Profile
(``prof.ops``, ``prof.roofline()``, ``prof.transfer_report()``, ``prof.memory_report()``,
``prof.fpga_candidates()``); the few of their columns whose names lack a unit get one
(``RENAMED``). Nothing here is computed again: the tables are the analysis' rows, flattened.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from fpgaprof.base import records
from fpgaprof.base.columns import result_columns

__all__ = [
    "DataTables",
    "data_tables",
    "RECORD_TABLES",
    "ANALYSIS_TABLES",
    "RENAMED",
    "NONE32",
]

NONE32 = 0xFFFFFFFF

# name in the export -> the Profile's record table
RECORD_TABLES = {
    "kernels": "kernels",
    "memcpys": "transfers",
    "memsets": "memsets",
    "allocations": "allocations",
    "api_calls": "api_calls",
    "markers": "markers",
    "regions": "regions",
    "syncs": "syncs",
}

ANALYSIS_TABLES = (
    "ops",
    "roofline",
    "transfers",
    "memory_timeline",
    "memory_devices",
    "memory_buffers",
    "memory_regions",
    "fpga_candidates",
)

# analysis columns whose names do not say their unit -> the exported name
RENAMED = {
    "intensity": "intensity_flops_per_byte",
    "ridge": "ridge_flops_per_byte",
    "mean_blocks": "mean_blocks_per_kernel",
    "time_share": "time_share_fraction",
    "cost_coverage": "cost_coverage_fraction",
    "measured_coverage": "measured_coverage_fraction",
    "memory_efficiency": "memory_efficiency_fraction",
}

# the columns of analysis tables whose rows are dicts, also when a trace gives no row (no
# allocations, no regions): the schema does not depend on the trace
MEMORY_COLUMNS = {
    "memory_devices": ("device_id", "peak_in_use_bytes", "peak_ns", "final_in_use_bytes"),
    "memory_buffers": (
        "bytes",
        "address",
        "alloc_ns",
        "free_ns",
        "device_id",
        "thread_id",
        "region",
        "api_call",
    ),
    "memory_regions": (
        "region",
        "name",
        "depth",
        "instances",
        "path_index",
        "peak_in_use_bytes",
        "peak_region_index",
        "in_use_at_start_bytes",
        "allocated_bytes",
        "freed_bytes",
        "allocations",
        "frees",
    ),
}

Columns = dict[str, Any]


@dataclasses.dataclass
class DataTables:
    """``tables``: export name -> columns (name -> numpy array or list, one entry per row), in
    RECORD_TABLES then ANALYSIS_TABLES order; ``missing``: export name -> why the trace has no
    such table (an analysis that is not available), for the tables left out."""

    tables: dict[str, Columns]
    missing: dict[str, str]


def _rows(cols: Columns) -> int:
    """How many rows a table of columns has (0 without columns)."""
    return len(next(iter(cols.values()))) if cols else 0


def _indexed(cols: Columns) -> Columns:
    """The table with `index` first, the row's position: what the other tables' `*_index` and
    `parent` columns (docs/records.md: "Each row also has `index`"), the transfers' op groups
    (group_index) and fpga_candidates.op_index hold, so a join needs no row numbering."""
    return {"index": np.arange(_rows(cols), dtype=np.int64), **cols} if cols else cols


def _record_columns(table: Any) -> Columns:
    out: Columns = {}
    for k, v in records.columns(table).items():
        v = np.asarray(v)
        if v.dtype == np.uint32 and records.none_when_max(k):
            # a "none" id or index: a missing value (pandas: a nullable integer column); the
            # same (int64 in Parquet) whether or not this trace has a none in the column
            out[k] = [None if x == NONE32 else int(x) for x in v.tolist()]
        elif v.dtype == object:
            out[k] = [records.to_plain(x) for x in v.tolist()]
        elif v.dtype.kind == "u":
            # signed, as the analysis tables' columns: an unsigned column makes a difference
            # that comes out negative (overlapping kernels' gap, launch_ns - start_ns) an
            # error in DuckDB and a wrapped 1.8e19 in numpy, pandas and pyarrow.compute.
            # Times (CLOCK_REALTIME ns), sizes and ids are far below 2**63.
            fits = v.dtype != np.uint64 or not len(v) or int(v.max()) < 2**63
            out[k] = v.astype(np.int64) if fits else v
        else:
            out[k] = v
    return _indexed(out)


def _rows_to_columns(rows: Iterable[Mapping[str, Any]], first: Iterable[str] = ()) -> Columns:
    """Dict rows -> columns (keys in first-seen order; a key a row lacks is missing there)."""
    rows = list(rows)
    keys = list(first)
    for r in rows:
        keys += [k for k in r if k not in keys]
    return {RENAMED.get(k, k): [records.to_plain(r.get(k)) for r in rows] for k in keys}


def _table_columns(table: Any) -> Columns:
    if not len(table):
        # no rows (a trace without GPU kernels): no table, as docs/reports.md says (the empty
        # table's column names, which to_pandas() gives, would take types from their names here,
        # not the ones the same columns have in every trace with rows)
        return {}
    cols = table.columns()
    return {RENAMED.get(k, k): [records.to_plain(x) for x in list(v)] for k, v in cols.items()}


def _transfer_rows(rep: Mapping[str, Any]) -> list[dict]:
    """One row per (group, direction) of the transfer analysis: the trace, each region path (or
    region) and each HLO op; direction "all" is the group's every copy together."""
    out = []
    for g in rep.get("groups", []):
        dirs = dict(g.get("directions", {}))
        dirs["all"] = g.get("all", {})
        for d, stats in dirs.items():
            row = {
                "group_kind": g.get("kind"),
                "group_index": g.get("index"),
                "group_name": g.get("name"),
                "direction": d,
            }
            row.update(stats)
            row["group_host_wait_ns"] = g.get("host_wait_ns")
            row["group_sync_calls"] = g.get("sync_calls")
            out.append(row)
    return out


def _memory_tables(mem: Mapping[str, Any]) -> dict[str, Columns]:
    timeline = {
        "time_ns": list(mem.get("timeline_ns", [])),
        "in_use_bytes": list(mem.get("timeline_in_use_bytes", [])),
    }
    dev = list(mem.get("timeline_device_id", []))
    if len(dev) == len(timeline["time_ns"]):
        timeline["device_id"] = dev
        timeline["device_in_use_bytes"] = list(mem.get("timeline_device_in_use_bytes", []))
    return {
        "memory_timeline": timeline,
        "memory_devices": _rows_to_columns(
            mem.get("devices", []), MEMORY_COLUMNS["memory_devices"]
        ),
        "memory_buffers": _rows_to_columns(
            mem.get("largest", []), MEMORY_COLUMNS["memory_buffers"]
        ),
        "memory_regions": _rows_to_columns(
            mem.get("regions", []), MEMORY_COLUMNS["memory_regions"]
        ),
    }


# Columns an analysis row carries only in some traces (the measured roofline with counters, a
# roof note above the roof, the link share with a known link), from the C++ result field
# tables: present in every trace's table, missing values where the trace has none.
def _every_column(table: str) -> tuple[str, ...]:
    if table == "roofline":
        names = (*result_columns("roofline_op_keys"), *result_columns("roofline_point"))
        return (*names, "roof_note")
    return (*result_columns("transfer_stats"), *result_columns("transfer_direction_link"))


def _with_every_column(table: str, cols: Columns) -> Columns:
    n = _rows(cols)
    for name in _every_column(table) if cols else ():
        name = RENAMED.get(name, name)
        if name not in cols:
            cols[name] = [None] * n
    return cols


def _analysis(
    name: str, prof: Any, target: str | None, row_imbalance: float | None = None
) -> dict[str, Columns]:
    kw = {"target": target} if target else {}
    if name == "ops":
        return {"ops": _indexed(_rows_to_columns(records.records_of(prof.ops)))}
    if name == "roofline":
        return {"roofline": _with_every_column("roofline", _table_columns(prof.roofline()))}
    if name == "transfers":
        rows = _rows_to_columns(_transfer_rows(prof.transfer_report()))
        return {"transfers": _with_every_column("transfers", rows)}
    if name == "memory":
        return _memory_tables(prof.memory_report())
    return {
        "fpga_candidates": _table_columns(prof.fpga_candidates(**kw, row_imbalance=row_imbalance))
    }


def data_tables(
    prof: Any, target: str | None = None, row_imbalance: float | None = None
) -> DataTables:
    """Every record table and analysis table of `prof` (a Profile) as columns; `target`: the
    FPGA card of the candidates (None: the default card); `row_imbalance`: the ratio they take
    (None: not known)."""
    tables: dict[str, Columns] = {}
    missing: dict[str, str] = {}
    for name, attr in RECORD_TABLES.items():
        tables[name] = _record_columns(records.attr_or(prof, attr))
    for group in ("ops", "roofline", "transfers", "memory", "fpga_candidates"):
        try:
            tables.update(_analysis(group, prof, target, row_imbalance))
        except Exception as e:  # noqa: BLE001 - the analysis' own reason, said in the export
            names = [n for n in ANALYSIS_TABLES if n.startswith(group)]
            for n in names:
                missing[n] = f"{type(e).__name__}: {e}"
    return DataTables(tables=tables, missing=missing)
