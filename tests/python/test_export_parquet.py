"""`fpgaprof export TRACE --format parquet`, read back with DuckDB (PyPI duckdb) on every real
trace in tests/data/traces and on the test double's trace.

Expected numbers come from elsewhere than the Parquet files: the record tables recounted with
numpy, summary.json (`fpgaprof export --format json`), and queries that join the exported record
tables to the exported analysis tables (copies by direction from memcpys.parquet against the
transfer analysis' rows).
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fpgaprof

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data", "traces")
REAL = sorted(glob.glob(os.path.join(TRACE_DIR, "*.fpgaprof")))
NONE32 = 4294967295

RECORDS = {"kernels": "kernels", "memcpys": "transfers", "memsets": "memsets",
           "allocations": "allocations", "api_calls": "api_calls", "markers": "markers",
           "regions": "regions", "syncs": "syncs"}


def _cli(*args):
    r = subprocess.run([sys.executable, "-m", "fpgaprof", *args], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module", params=REAL, ids=[os.path.basename(p) for p in REAL])
def exported(request, tmp_path_factory):
    path = request.param
    out = tmp_path_factory.mktemp("pq") / "tables"
    _cli("export", path, "--format", "parquet", "-o", str(out))
    summary = json.loads(_cli("export", path, "--format", "json"))
    con = duckdb.connect()
    yield fpgaprof.load(path), out, summary, con
    con.close()


def _q(con, sql, out):
    return con.execute(sql.replace("{d}", str(out))).fetchall()


def test_every_record_table_has_every_record(exported):
    prof, out, _, con = exported
    for name, attr in RECORDS.items():
        (n,), = _q(con, f"select count(*) from '{{d}}/{name}.parquet'", out)
        assert n == len(getattr(prof, attr)), name


def test_kernel_time_by_sql_is_the_summary_kernel_time(exported):
    prof, out, summary, con = exported
    (n, total_ns), = _q(con, "select count(*), sum(end_ns - start_ns) from '{d}/kernels.parquet'",
                        out)
    c = prof.kernels.columns()
    dur = np.asarray(c["end_ns"], np.int64) - np.asarray(c["start_ns"], np.int64)
    assert n == len(dur) and int(total_ns) == int(dur.sum())
    assert int(total_ns) / 1e9 == pytest.approx(summary["totals"]["kernel_time_s"], rel=1e-12)
    # per name, the top kernels of summary.json
    rows = _q(con, "select name, count(*), sum(end_ns - start_ns) from '{d}/kernels.parquet' "
                   "group by name", out)
    by_name = {r[0]: (r[1], int(r[2])) for r in rows}
    for k in summary["kernels"]["top"]:
        count, ns = by_name[k["name"]]
        assert count == k["count"] and ns / 1e9 == pytest.approx(k["total_s"], rel=1e-9)


def test_copies_by_direction_from_records_equal_the_transfer_analysis(exported):
    _, out, summary, con = exported
    from_records = {r[0]: (r[1], int(r[2])) for r in _q(
        con, "select copy_kind, count(*), sum(bytes) from '{d}/memcpys.parquet' "
             "group by copy_kind", out)}
    from_analysis = {r[0]: (r[1], int(r[2])) for r in _q(
        con, "select direction, count, bytes from '{d}/transfers.parquet' "
             "where group_kind = 'trace' and direction <> 'all'", out)}
    assert from_records == from_analysis
    if summary["transfers"]["available"]:
        assert from_records == {d["direction"]: (d["count"], d["bytes"])
                                for d in summary["transfers"]["by_direction"]}


def test_ops_and_candidates(exported):
    prof, out, summary, con = exported
    # every kernel is in one op or unattributed
    (op_ns,), = _q(con, "select coalesce(sum(total_ns), 0) from '{d}/ops.parquet'", out)
    (k_ns,), = _q(con, "select coalesce(sum(end_ns - start_ns), 0) from '{d}/kernels.parquet'",
                  out)
    assert int(op_ns) + int(prof.attribution.unattributed_ns) == int(k_ns)
    if summary["candidates"]["available"]:
        top = _q(con, "select op, module from '{d}/fpga_candidates.parquet' order by rank limit 5",
                 out)
        want = [(i["op"], i["module"]) for i in summary["candidates"]["items"][:5]]
        assert [tuple(r) for r in top] == want
        (n,), = _q(con, "select count(*) from '{d}/fpga_candidates.parquet'", out)
        assert n == summary["candidates"]["count"]


def test_memory_and_schema(exported):
    prof, out, summary, con = exported
    if summary["memory"]["available"] and summary["memory"]["peak_bytes"]:
        (peak,), = _q(con, "select max(peak_in_use_bytes) from '{d}/memory_devices.parquet'", out)
        assert peak == summary["memory"]["peak_bytes"]
    index = json.loads((out / "index.json").read_text())
    assert index["missing"] == {}
    for name, t in index["tables"].items():
        cols = _q(con, f"describe select * from '{{d}}/{t['file']}'", out)
        assert [c[0] for c in cols] == list(t["columns"]), name
    # "none" ids are missing values, not 4294967295
    c = prof.kernels.columns()
    (nulls,), = _q(con, "select count(*) from '{d}/kernels.parquet' where region_index is null",
                   out)
    assert nulls == int((np.asarray(c["region_index"]) == NONE32).sum())
    (big,), = _q(con, f"select count(*) from '{{d}}/kernels.parquet' where region_index = {NONE32}",
                 out)
    assert big == 0


def test_pandas_reads_the_tables(exported):
    pd = pytest.importorskip("pandas")
    prof, out, _, _ = exported
    df = pd.read_parquet(out / "kernels.parquet")
    assert len(df) == len(prof.kernels)
    assert df["name"].tolist() == [str(r.name) for r in prof.kernels]


def test_without_pyarrow_the_export_says_what_to_install(tmp_path):
    # a pyarrow that cannot be imported: the one-line error names the extra
    block = tmp_path / "block"
    block.mkdir()
    (block / "pyarrow").mkdir()
    (block / "pyarrow" / "__init__.py").write_text("raise ImportError('blocked for the test')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(block) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "export", REAL[0], "--format",
                        "parquet", "-o", str(tmp_path / "out")], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 1
    assert "pyarrow" in r.stderr and "fpgaprof[parquet]" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
