"""The analysis result field tables (cpp/src/analysis/result_schema.cpp) as Python sees them:
the rows the bindings return carry exactly the tables' fields, in the tables' order (a range as
its nominal, low and high); docs/result-fields.md and the FPGA properties of
docs/summary.schema.json are what scripts/gen_result_fields.py makes of the tables."""

import pathlib
import subprocess
import sys

import pytest

from fpgaprof.base.core import core
from fpgaprof.base.errors import InvalidArgumentError

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "data" / "traces" / "mbirjax073_cone_64_pallas_counters_h200.fpgaprof"
HLO = ROOT / "tests" / "data" / "hlo" / "h100_jax0.11_jit_sparse_back_project_fcn.29170.txt"


def always(table):
    """The output keys every row of a table has (fields without a condition)."""
    out = []
    for f in core.analysis.result_fields(table):
        if not f.only_when:
            out += list(f.names)
    return out


def follows(row, table):
    """`row`'s keys are the table's, in its order: every unconditional field, and conditional
    ones only where they apply."""
    keys = list(row)
    return keys == [n for n in names(table) if n in row] and set(always(table)) <= set(keys)


def names(table, skip=()):
    """The output keys of a table's rows, in order (range fields as name, low, high)."""
    out = []
    for f in core.analysis.result_fields(table):
        if f.name not in skip:
            out += list(f.names)
    return out


def test_docs_and_schema_are_generated_from_the_tables():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_result_fields.py"), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr).strip()


def test_range_fields_name_their_ends_as_the_rows_always_have():
    by_name = {f.name: f for f in core.analysis.result_fields("fpga_op_row")}
    # the names summary.json has carried since the ranking began (docs/fpga-model.md)
    assert by_name["card_time_s"].names == ["card_time_s", "card_time_low_s", "card_time_high_s"]
    assert by_name["op_speedup"].names == ["op_speedup", "op_speedup_low", "op_speedup_high"]
    assert by_name["restructured_fpga_total_s"].range is False
    assert by_name["estimate_basis"].nullable and by_name["estimate_basis"].type == "str"
    assert by_name["card_time_s"].unit == "s" and by_name["gpu_time_ns"].unit == "ns"
    assert all(f.description for t, _ in core.analysis.result_tables() for f in core.analysis.result_fields(t))


def test_an_unknown_table_names_the_known_ones():
    with pytest.raises(InvalidArgumentError, match="fpga_op_row"):
        core.analysis.result_fields("fpga_ops")


def test_the_rows_of_a_saved_trace_carry_the_tables_fields_in_order():
    store = core.TraceStore.load(str(TRACE))
    an = core.analysis.analyze(store)
    assert list(an) == always("trace_analysis")  # no attribution unless asked for
    assert list(core.analysis.analyze(store, with_attribution=True)) == names("trace_analysis")
    assert list(an["devices"]) == names("devices")
    fpga = an["fpga"]
    assert fpga["candidates"] and fpga["regions"]
    for row in fpga["candidates"]:
        assert list(row) == names("fpga_op_row")
    for row in fpga["regions"]:
        assert list(row) == names("fpga_region_row")
    assert list(fpga) == names("fpga_report") + ["candidates", "regions"]
    point = names("roofline_point")
    measured = [n for n in point if n.startswith("measured_")]
    for row in [an["roofline"]["trace"]] + list(an["roofline"]["ops"]):
        keys = [k for k in row if k in point]
        assert keys == (point if row["has_measured"] else [n for n in point if n not in measured])
    assert any(r["has_measured"] for r in an["roofline"]["ops"])  # a counters trace
    for g in an["transfers"]["groups"]:
        assert list(g["all"]) == names("transfer_stats")
    assert list(an["totals"]) == names("trace_totals")
    assert [list(r) for r in an["kernels_by_name"]] == [names("kernel_name_row")] * len(an["kernels_by_name"])
    assert list(an["memory"]) == names("memory")
    assert list(an["collectives"]) == names("collectives")
    assert an["module_memory"]
    for m in an["module_memory"]:
        assert list(m) == names("module_memory")
        for b in m["buffers"]:
            assert list(b) == names("module_buffer")
    assert list(an["energy"]) == names("energy")
    assert list(an["transfers"]) == names("transfers")
    kinds = {g["kind"] for g in an["transfers"]["groups"]}
    assert {"trace", "op"} <= kinds
    for g in an["transfers"]["groups"]:
        assert follows(g, "transfer_group_row")
    assert list(an["roofline"]) == names("roofline")
    for r in an["roofline"]["ops"]:
        assert list(r)[: len(names("roofline_op_keys"))] == names("roofline_op_keys")
    for r in an["roofline"]["kernels"]:
        assert list(r)[0] == "kernel" and follows(dict(list(r.items())[1:]), "roofline_point")
    for r in an["region_paths"]:
        assert list(r) == names("region_path_row")
    for r in an["devices"]["rows"]:
        assert list(r) == names("device_row")
        for st in r["directions"].values():
            assert list(st) == names("device_copy_stats")
    assert list(an["devices"]["balance"]) == names("load_balance")


def test_the_module_estimate_carries_its_tables_fields():
    est = core.analysis.estimate_hlo(HLO.read_text(), "alveo-u55c")
    assert list(est) == names("module_estimate")
    assert est["ops"]
    for row in est["ops"]:
        assert list(row) == names("module_estimate_op")
    # a range as three numbers, the nominal between its ends
    assert est["total_low_s"] <= est["total_s"] <= est["total_high_s"]


def test_the_row_types_are_the_tables_and_the_stubs_name_them():
    import re

    from fpgaprof.base import result_rows

    # one TypedDict per table, its keys the table's output names in order
    assert list(result_rows.FpgaOpRow.__annotations__) == names("fpga_op_row")
    assert list(result_rows.TraceMeta.__annotations__) == names("trace_meta")
    assert len(result_rows.__all__) == len(core.analysis.result_tables())
    # the stubs give the bindings these types (analyze() -> TraceAnalysis, ...), none other
    stubs = "".join(p.read_text() for p in (ROOT / "python" / "fpgaprof" / "_core").glob("*.pyi"))
    named = set(re.findall(r"fpgaprof\.base\.result_rows\.(\w+)", stubs))
    assert {"TraceAnalysis", "TraceMeta", "Diagnostic", "CardField", "CounterPlan"} <= named
    assert named <= set(result_rows.__all__)
