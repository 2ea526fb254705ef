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


def test_differences_of_times_can_be_negative(exported):
    """Times, sizes and ids are signed (int64) as in the analysis tables, so a difference that
    comes out negative is a negative number: the gap to the previous kernel on a stream where
    kernels overlap (programmatic dependent launch), launch_ns - start_ns. Unsigned columns
    made DuckDB refuse the query ("Overflow in subtraction of UINT64") and pyarrow.compute and
    numpy wrap it to about 1.8e19."""
    prof, out, _, con = exported
    index = json.loads((out / "index.json").read_text())
    for name in RECORDS:
        for col, ty in index["tables"][name]["columns"].items():
            assert not ty.startswith("uint"), (name, col, ty)
    (neg,), = _q(con, "select count(*) filter (where gap < 0) from (select start_ns - lag(end_ns) "
                      "over (partition by device_id, stream_id order by start_ns) as gap "
                      "from '{d}/kernels.parquet')", out)
    c = prof.kernels.columns()
    s, e = np.asarray(c["start_ns"], np.int64), np.asarray(c["end_ns"], np.int64)
    want = 0
    for key in set(zip(np.asarray(c["device_id"]).tolist(), np.asarray(c["stream_id"]).tolist())):
        m = (np.asarray(c["device_id"]) == key[0]) & (np.asarray(c["stream_id"]) == key[1])
        order = np.argsort(s[m], kind="stable")
        want += int((s[m][order][1:] - e[m][order][:-1] < 0).sum())
    assert neg == want
    if len(s):
        (lead,), = _q(con, "select min(launch_ns - start_ns) from '{d}/kernels.parquet'", out)
        assert lead == int((np.asarray(c["launch_ns"], np.int64) - s).min())


def test_index_columns_join_on_the_index_column(exported):
    """The `*_index` and `parent` columns are row positions (docs/records.md); each record
    table and ops has them as its `index` column, so the joins are plain SQL."""
    prof, out, _, con = exported
    (n, bad), = _q(con, "select count(*), count(*) filter (where k.correlation_id <> "
                        "a.correlation_id) from '{d}/kernels.parquet' k join "
                        "'{d}/api_calls.parquet' a on k.api_index = a.index", out)
    c = np.asarray(prof.kernels.columns()["api_index"])
    assert n == int((c != NONE32).sum()) and bad == 0
    (n,), = _q(con, "select count(*) from '{d}/markers.parquet' m join '{d}/markers.parquet' p "
                    "on m.parent = p.index where p.depth + 1 <> m.depth", out)
    assert n == 0
    index = json.loads((out / "index.json").read_text())
    if "ops" in index["tables"]:
        (n, same), = _q(con, "select count(*), count(*) filter (where o.hlo_op = t.group_name) "
                             "from '{d}/transfers.parquet' t join '{d}/ops.parquet' o "
                             "on t.group_index = o.index where t.group_kind = 'op'", out)
        assert n == same


def test_the_columns_of_a_table_do_not_depend_on_the_trace(exported, tmp_path_factory):
    """docs/reports.md: "a table's schema does not depend on the trace". The roofline's
    measured_* columns (only with counters), its roof_note (only with a point above its roof)
    and the transfers' link_percent (only with a known link) are columns of every trace's table,
    missing values where a trace has none, so one query runs on every export."""
    _, out, _, con = exported
    index = json.loads((out / "index.json").read_text())["tables"]
    for table, cols in (("roofline", ("measured_flops", "measured_bytes", "measured_bound",
                                      "measured_coverage_fraction", "roof_note")),
                        ("transfers", ("link_percent",))):
        if table in index:
            have = index[table]["columns"]
            assert all(c in have for c in cols), (table, [c for c in cols if c not in have])
            _q(con, f"select {', '.join(cols)} from '{{d}}/{table}.parquet'", out)


def test_the_default_folder_is_not_read_as_one_parquet_dataset(tmp_path):
    """Without -o the tables go to TRACE.tables/: a folder named TRACE.parquet is one table's
    dataset to DuckDB (count(*) summed every table's rows), pandas and pyarrow (which stopped
    at index.json)."""
    import shutil
    src = next(p for p in REAL if "mbirjax_parallel_128_h100" in p)
    trace = tmp_path / os.path.basename(src)
    shutil.copy(src, trace)
    _cli("export", str(trace), "--format", "parquet")
    folder = tmp_path / (trace.stem + ".tables")
    assert (folder / "kernels.parquet").is_file()
    assert not (tmp_path / (trace.stem + ".parquet")).exists()
    (n,), = duckdb.connect().execute(f"select count(*) from '{folder}/kernels.parquet'").fetchall()
    assert n == len(fpgaprof.load(src).kernels)


def test_a_range_end_left_empty_keeps_its_numeric_type(tmp_path):
    """docs/reports.md, "Parquet tables": a column a trace leaves empty "keeps a type taken from
    its name ... so a table's schema does not depend on the trace". The ends of a range field
    (card_energy_low_j, energy_ratio_high, ...) are the same floats as its nominal: a trace
    without NVML samples (every saved trace) leaves the energy ratios' ends empty, and a card
    whose board power is unpublished (intel-s10mx-2100) the card energies' ends. They were
    written as strings there and as doubles elsewhere, so one query did not run on both."""
    src = next(p for p in REAL if "parallel_128_xla_h200" in p)
    out = tmp_path / "tables"
    _cli("export", src, "--format", "parquet", "--target", "intel-s10mx-2100", "-o", str(out))
    cols = json.loads((out / "index.json").read_text())["tables"]["fpga_candidates"]["columns"]
    for name in ("card_energy_j", "card_energy_low_j", "card_energy_high_j",
                 "restructured_card_energy_low_j", "restructured_card_energy_high_j",
                 "energy_ratio", "energy_ratio_low", "energy_ratio_high",
                 "restructured_energy_ratio_low", "restructured_energy_ratio_high"):
        assert cols[name] == "double", (name, cols[name])
    (n,), = duckdb.connect().execute(
        f"select count(*) from '{out}/fpga_candidates.parquet' where energy_ratio_high < 1 "
        "or card_energy_low_j > 0").fetchall()
    assert n == 0
