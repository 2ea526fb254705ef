"""The ncu CSV parser and comparison of tests/gpu/ncu_crosscheck.py, on hand-written CSV in the
two layouts Nsight Compute prints with --csv (details page: one row per kernel and metric; --page
raw: one row per kernel, a units row). No GPU and no fpgaprof build needed. Expected values are
the numbers written in the samples, converted by hand (1.5 Mbyte = 1,500,000 bytes, ...)."""
import importlib.util
import os

import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "gpu", "ncu_crosscheck.py")
_spec = importlib.util.spec_from_file_location("ncu_crosscheck", _PATH)
ncu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ncu)

DETAILS = """program output line, then ncu's own lines
==PROF== Connected to process 11 (/usr/bin/python3)
==WARNING== Note: running with --clock-control none
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","11","python3","h","void k<float, 2>(float const*, int) [with ""quotes""]","1","7","(128, 1, 1)","(64, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","Mbyte","1.5"
"0","11","python3","h","void k<float, 2>(float const*, int) [with ""quotes""]","1","7","(128, 1, 1)","(64, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","2.25"
"0","11","python3","h","void k<float, 2>(float const*, int) [with ""quotes""]","1","7","(128, 1, 1)","(64, 1, 1)","0","9.0","Command line profiler metrics","sm__sass_thread_inst_executed_op_ffma_pred_on.sum","inst","1,024"
"3","11","python3","h","second","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","Kbyte","2"
==PROF== Disconnected from process 11
"""

RAW = """"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Device","CC","dram__bytes_op_read.sum","gpu__time_duration.sum"
"","","","","","","","","","Gbyte","msecond"
"5","9","py","h","fusion_1","1","7","0","10.0","0.25","1.5"
"""


def test_details_layout_keeps_quoted_names_and_converts_units():
    ks = ncu.parse_ncu_csv(DETAILS)
    assert [k["id"] for k in ks] == ["0", "3"]
    assert ks[0]["name"] == 'void k<float, 2>(float const*, int) [with "quotes"]'
    r = ncu.by_role(ks[0]["metrics"])
    assert r == {"dram_read": 1_500_000.0, "time_ns": 2_250.0, "ffma": 1_024.0}
    assert ncu.by_role(ks[1]["metrics"]) == {"dram_write": 2_000.0}


def test_raw_layout_with_units_row_and_gb20x_metric_name():
    ks = ncu.parse_ncu_csv(RAW)
    assert len(ks) == 1 and ks[0]["name"] == "fusion_1"
    assert ncu.by_role(ks[0]["metrics"]) == {"dram_read": 250_000_000.0, "time_ns": 1_500_000.0}


def test_no_header_gives_no_kernels():
    assert ncu.parse_ncu_csv("==PROF== Connected\n==WARNING== No kernels were profiled.\n") == []


def _fp_from(kernels_by_op, scale_ffma=1.0):
    ops = {}
    for op, ks in kernels_by_op.items():
        counters = []
        for k in ks:
            m = dict(k["metrics"])
            if ncu.METRIC_FFMA in m:
                m[ncu.METRIC_FFMA] = m[ncu.METRIC_FFMA] * scale_ffma
            counters.append({"name": k["name"], "metrics": m})
        timing = [{"name": k["name"], "duration_ns": k["metrics"][ncu.METRIC_TIME]} for k in ks]
        ops[op] = {"counters": counters, "timing": timing}
    return {"device": "test", "ops": ops}


def _ideal_ncu():
    """ncu rows with exactly the hand-computed values of the two workloads."""
    e = ncu.expected_values()
    row = ('"{id}","1","p","h","{name}","1","7","0","9.0","{r:.0f}","{w:.0f}","{t}","{f:.0f}"')
    text = "\n".join([
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Device","CC",'
        '"dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum",'
        '"sm__sass_thread_inst_executed_op_ffma_pred_on.sum"',
        '"","","","","","","","","","byte","byte","nsecond","inst"',
        row.format(id=0, name="gemm", r=e["matmul"]["dram_min"], w=0, t=1000, f=e["matmul"]["ffma"]),
        row.format(id=1, name="add", r=e["stream"]["dram_read"], w=e["stream"]["dram_write"], t=2000, f=0),
    ])
    ks = ncu.parse_ncu_csv(text)
    return {"matmul": ks[:1], "stream": ks[1:]}


def test_compare_passes_when_both_tools_agree_with_the_hand_values():
    n = _ideal_ncu()
    text, ok = ncu.compare(n, _fp_from(n), [])
    assert ok, text
    assert "PASS matmul flops: fpgaprof vs 2*M*N*K" in text


def test_compare_fails_when_fpgaprof_ffma_is_off_by_ten_percent():
    n = _ideal_ncu()
    text, ok = ncu.compare(n, _fp_from(n, scale_ffma=1.1), [])
    assert not ok
    assert "FAIL matmul ffma: fpgaprof vs ncu" in text
    assert "FAIL matmul flops: fpgaprof vs 2*M*N*K" in text
    assert "PASS matmul flops: ncu vs 2*M*N*K" in text


def test_compare_without_fpgaprof_data_is_not_a_pass():
    text, ok = ncu.compare(_ideal_ncu(), None, ["fpgaprof run failed"])
    assert not ok and "N/A  matmul ffma: fpgaprof vs ncu" in text


@pytest.mark.parametrize("text,unit,value", [
    ("1,234,567", "byte", 1_234_567.0), ("3.5", "Kbyte", 3_500.0), ("2", "msecond", 2e6),
    ("7", "nsecond", 7.0), ("n/a", "byte", None), ("", "", None), ("12", "", 12.0),
])
def test_parse_value(text, unit, value):
    assert ncu.parse_value(text, unit) == value


def test_builtin_selftest():
    assert ncu.selftest() == 0


H100 = os.path.join(os.path.dirname(__file__), "..", "data", "ncu", "h100_2026-11-22")


def test_real_h100_run_passes_every_check():
    # tests/data/ncu/h100_2026-11-22: the files `ncu_crosscheck.py all` wrote on an H100 (ncu
    # 2025.3.1, --page raw). Its report then (ncu_compare_as_run.txt) failed every ncu check
    # because the parser took the X.avg column ncu prints next to X.sum; from the same files:
    text, ok = ncu.compare_saved(H100)
    assert ok, text
    assert "PASS matmul ffma: fpgaprof vs ncu: 8,589,934,592 vs 8,589,934,592: 0.00 %" in text
    assert "PASS stream dram_read: fpgaprof vs ncu: 1,073,803,264 vs 1,073,754,880" in text
    assert "FAIL" in open(os.path.join(H100, "ncu_compare_as_run.txt")).read()
    raw = ncu.parse_ncu_csv(open(os.path.join(H100, "ncu_matmul.csv")).read())
    assert raw[0]["metrics"]["sm__sass_thread_inst_executed_op_ffma_pred_on.avg"] == 65075262.06
    assert ncu.by_role(raw[0]["metrics"])["ffma"] == 8589934592.0   # the .sum, not the per-SM avg
