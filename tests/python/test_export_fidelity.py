"""What the exports keep exactly, found wanting by reading them with the tools users use: a
name holding a carriage return in CSV (duckdb refused the file), a memset's byte pattern
0xFFFFFFFF (read as "none" in CSV and Parquet), Parquet column types that changed with the
trace (a table's schema must not), and two GPU streams 1,000,000 apart sharing one timeline
track. Stores built by hand; expected values are the records themselves."""
from __future__ import annotations

import csv
import glob
import io
import json
import os
import subprocess
import sys

import pytest

import fpgaprof
from fpgaprof.base.core import core

NONE32 = 0xFFFFFFFF
HERE = os.path.dirname(os.path.abspath(__file__))
TRACE_DIR = os.path.join(os.path.dirname(HERE), "data", "traces")


def _cli(*args):
    """stdout as written (bytes decoded, newlines untranslated: text mode would turn a "\r"
    inside a field into "\n")."""
    r = subprocess.run([sys.executable, "-m", "fpgaprof", *args], capture_output=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout.decode("utf-8")


def _trace(tmp_path, name="t.fpgaprof"):
    s = core.TraceStore()
    d = core.DeviceInfo()
    d.name = "GPU"
    d.id = 0
    s.add_device(d)
    s.append("regions", start_ns=0, end_ns=100_000, thread_id=1, name="load\r64", parent=NONE32,
             depth=0)
    s.append("kernels", start_ns=1000, end_ns=3000, name="k\rr", device_id=0, stream_id=7,
             region_index=0, marker_index=NONE32, grid_x=1, grid_y=1, grid_z=1)
    s.append("kernels", start_ns=2000, end_ns=4000, name="k2", device_id=0, stream_id=1_000_007,
             region_index=NONE32, marker_index=NONE32, grid_x=1, grid_y=1, grid_z=1)
    s.append("memsets", start_ns=5000, end_ns=6000, bytes=4096, value=NONE32, device_id=0,
             region_index=0)
    s.append("memsets", start_ns=7000, end_ns=8000, bytes=4096, value=0, device_id=0,
             region_index=NONE32)
    s.set_meta(start_ns=0, end_ns=100_000)
    path = str(tmp_path / name)
    s.save(path)
    return path


def test_csv_keeps_a_carriage_return_inside_a_name(tmp_path):
    t = _trace(tmp_path)
    out = _cli("export", t, "--format", "csv", "--table", "regions")
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    assert [r["name"] for r in rows] == ["load\r64"]
    assert rows[0]["parent"] == ""  # none
    kern = list(csv.DictReader(io.StringIO(_cli("export", t, "--format", "csv"), newline="")))
    assert [r["name"] for r in kern] == ["k\rr", "k2"]
    duckdb = pytest.importorskip("duckdb")
    f = tmp_path / "regions.csv"
    f.write_text(out, newline="")
    assert duckdb.sql(f"select name from read_csv('{f}', header=true)").fetchall() == [("load\r64",)]


def test_csv_writes_a_name_a_spreadsheet_would_run_as_text(tmp_path):
    """Names from a trace that start as a formula (=, +, -, @, tab, carriage return) come out
    after an apostrophe, the spreadsheets' mark for text; others, and numbers, as they are."""
    s = core.TraceStore()
    d = core.DeviceInfo()
    d.name = "GPU"
    d.id = 0
    s.add_device(d)
    names = ['=HYPERLINK("http://x","y")', "+1", "-2", "@SUM(A1)", "\tk", "\rk", "k=1"]
    for i, n in enumerate(names):
        s.append("kernels", start_ns=1000 * i, end_ns=1000 * i + 500, name=n, device_id=0,
                 stream_id=7, region_index=NONE32, marker_index=NONE32, grid_x=1, grid_y=1, grid_z=1)
    s.set_meta(start_ns=0, end_ns=100_000)
    path = str(tmp_path / "f.fpgaprof")
    s.save(path)
    out = _cli("export", path, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    assert [r["name"] for r in rows] == ["'" + n for n in names[:6]] + ["k=1"]
    assert [r["start_ns"] for r in rows] == [str(1000 * i) for i in range(len(names))]

    t = _trace(tmp_path)
    rows = list(csv.DictReader(io.StringIO(_cli("export", t, "--format", "csv", "--table", "memsets"),
                                           newline="")))
    assert [r["value"] for r in rows] == [str(NONE32), "0"]
    assert [r["region_index"] for r in rows] == ["0", ""]  # an index's none stays empty
    pq = pytest.importorskip("pyarrow.parquet")
    _cli("export", t, "--format", "parquet", "-o", str(tmp_path / "pq"))
    m = pq.read_table(str(tmp_path / "pq" / "memsets.parquet")).to_pydict()
    assert m["value"] == [NONE32, 0]
    assert m["region_index"] == [0, None]


def test_two_streams_a_million_apart_get_two_timeline_tracks(tmp_path):
    t = _trace(tmp_path)
    out = tmp_path / "t.timeline.json"
    _cli("export", t, "--format", "perfetto", "-o", str(out))
    events = json.loads(out.read_text())["traceEvents"]
    kern = {e["name"]: e["tid"] for e in events if e.get("ph") == "X" and e["name"] in ("k\rr", "k2")}
    assert kern["k\rr"] != kern["k2"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e["name"] == "thread_name" and e["tid"] in kern.values()}
    assert names == {kern["k\rr"]: "stream 7", kern["k2"]: "stream 1000007"}


def test_parquet_column_types_do_not_depend_on_the_trace(tmp_path):
    """Every table's columns, record and analysis tables alike, have the same types in every
    bundled real trace and in a trace with no none in them (before: uint32 or int64 by whether
    a none occurred, string where a column was all none, int64 by name where the analysis'
    field is a float)."""
    pytest.importorskip("pyarrow")
    traces = sorted(glob.glob(os.path.join(TRACE_DIR, "*.fpgaprof"))) + [_trace(tmp_path)]
    schemas = []
    for i, t in enumerate(traces):
        d = tmp_path / f"pq{i}"
        _cli("export", t, "--format", "parquet", "-o", str(d))
        schemas.append(json.loads((d / "index.json").read_text())["tables"])
    tables = sorted({name for s in schemas for name in s})
    assert {"kernels", "memsets", "regions", "ops", "roofline"} <= set(tables), tables
    mixed = {}
    for table in tables:
        seen: dict[str, set] = {}
        for s in schemas:
            for col, typ in (s.get(table) or {}).get("columns", {}).items():
                seen.setdefault(col, set()).add(typ)
        mixed.update({f"{table}.{c}": t for c, t in seen.items() if len(t) > 1})
    assert not mixed, mixed
