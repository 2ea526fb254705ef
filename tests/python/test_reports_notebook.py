"""Notebook HTML (_repr_html_ helpers): escaped, the numbers of the summary, no script."""
import _reports_fixtures as F
from fpgaprof.api.overview import trace_overview
from fpgaprof.views import profile as profile_views
from fpgaprof.views import tables as views


def test_profile_html():
    h = profile_views.profile_html(trace_overview(F.SyntheticProfile(with_ops=True)).data)
    assert "<script" not in h
    assert "NVIDIA H100 80GB HBM3 &lt;test&gt;" in h
    assert "gemm&lt;float&gt;" in h
    # GPU busy 2.81 ms of 10 ms (worked out in test_reports_summary)
    assert "2.81 ms (28.1 %)" in h
    assert "user &lt;script&gt;alert(1)&lt;/script&gt; warning" in h
    assert "top HLO ops" in h and "model.py:12" in h


def test_profile_html_without_gpu():
    h = profile_views.profile_html(trace_overview(F.SyntheticProfile(with_gpu=False)).data)
    assert "no GPU: no CUDA driver found" in h
    assert "top kernels" not in h


def test_table_html_limits_rows():
    t = F.kernels()
    h = views.table_html(t, "kernels", max_rows=2)
    assert "<b>kernels</b>: 4 rows" in h
    assert h.count("<tr>") == 3  # header + 2 rows
    assert "2 more rows" in h
    assert "gemm&lt;float&gt;" in h
    empty = views.table_html(F.Table(), "empty")
    assert "<b>empty</b>: 0 rows" in empty and "<table>" not in empty


def test_table_html_shows_timestamps_as_integers_and_none_as_a_dash():
    # fusion_a starts at T0 + 1.1 ms (the fixture's layout); its region_index is F.NONE32
    t = F.Table(start_ns=[F.ms(1.1)], end_ns=[F.ms(1.6)], duration_ns=[500_000],
                region_index=[F.NONE32], parent=[3])
    h = views.table_html(t, "kernels")
    assert f"<td>{F.T0 + 1_100_000}</td>" in h and f"<td>{F.T0 + 1_600_000}</td>" in h
    assert "<th>start_ns</th>" in h
    assert "<td>–</td>" in h and "4.29 G" not in h
    assert "500.0 µs" in h or "500.00 µs" in h  # a duration is still a duration


def test_rows_html():
    h = views.rows_html([{"op": "a<b", "score": 0.5, "time_s": 0.002}], "candidates")
    assert "a&lt;b" in h and "2.00 ms" in h and "0.5" in h


def test_progress_only_on_a_terminal(monkeypatch, capsys):
    import io
    import sys

    from fpgaprof.report import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    # not a terminal (pytest captures stderr): silent
    p = Progress(2, "x")
    p.step("a")
    p.step("b")
    assert capsys.readouterr().err == ""
    # a terminal, not CI: a bar, ending with a newline
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")  # TERM=dumb (an editor's shell) also means silent
    p = Progress(2, "x")
    p.step("a")
    p.step("b")
    assert "x [" in tty.getvalue() and "2/2" in tty.getvalue() and tty.getvalue().endswith("\n")
    # a terminal in CI: silent
    tty2 = Tty()
    monkeypatch.setattr(sys, "stderr", tty2)
    monkeypatch.setenv("CI", "true")
    Progress(1, "x").step("a")
    assert tty2.getvalue() == ""


def test_rows_print_as_a_text_table():
    rows = views.Table([{"name": "fusion.3", "total_ns": 1_500_000, "executions": 3, "bytes_accessed": 2.5e6},
                   {"name": "dot.1", "total_ns": 20_000, "executions": 1, "bytes_accessed": 512}])
    rows.title = "HLO ops"
    # Of TEXT_FIRST the rows have name, total_ns, executions (in that order); text left-aligned,
    # numbers right-aligned, *_ns as time (headed without the unit: the cells carry theirs);
    # the column left out is counted.
    assert str(rows) == ("HLO ops: 2 rows\n"
                         "  name        total  executions\n"
                         "  fusion.3  1.50 ms           3\n"
                         "  dot.1     20.0 µs           1\n"
                         "  (1 more column: .to_pandas() or .columns())\n")


# --- one column order for print(), notebook HTML and report.html -------------------------------

def _heads(h):
    import re
    return re.findall(r"<th(?: [^>]*)?>(.*?)</th>", h)


# An op candidate in the analysis' own key order (fpgaprof.fpga.fpga_candidates' docstring):
# score 7th, the speedups last.
CANDIDATE = {"rank": 1, "op": "fusion.3", "module": "jit_f", "source": "model.py:13",
             "pattern": "elementwise", "gpu_time_ns": 10_300, "time_share": 0.25,
             "ridge": 12.5, "memory_boundness": 0.99, "score": 0.0137, "flops": 10240.0,
             "memory_efficiency": 0.85, "card_time_s": 2.0e-4, "transfer_s": 6.7e-6,
             "fpga_total_s": 2.067e-4, "op_speedup": 0.05, "workload_speedup": 0.97,
             "estimate_note": "", "scenario": "neither", "restructured_op_speedup": 0.2,
             "card_limit": "memory"}


def test_candidate_html_leads_with_the_printed_columns():
    from fpgaprof import fpga, roofline
    from fpgaprof.report import html as H
    t = roofline.Table([dict(CANDIDATE)])
    t.display = fpga.OP_TEXT_COLUMNS
    heads = _heads(t._repr_html_())
    # print()'s columns in print()'s order (OP_TEXT_COLUMNS, headers without time units) ...
    printed = str(t).splitlines()[1].split()
    assert printed == ["rank", "op", "op_speedup", "restructured_op_speedup", "gpu_time", "workload_speedup",
                       "module", "score", "time_share", "fpga_total", "pattern", "card_limit", "estimate_note"]
    assert heads[:len(printed)] == printed
    # ... then TEXT_FIRST's (card time, transfer, FLOPs), then the rest in record order
    assert heads[len(printed):] == ["card_time", "transfer", "FLOPs (total)", "source",
                                    "ridge", "memory_boundness", "memory_efficiency", "scenario"]
    # report.html's candidate table: the same order
    doc = H.ranked_table_html([dict(CANDIDATE)], H.CANDIDATE_FIRST, roofline.TOTAL_LABELS)
    assert [h.split(">")[-1] for h in doc.split("</th>")[:-1]][:len(printed)] == printed


def test_ops_html_leads_with_the_printed_columns():
    ops = views.Table([{"bytes_read": 4096.0, "category": "loop fusion", "executions": 10,
                   "flops": 1024.0, "hlo_op": "fusion.3", "mean_ns": 1026,
                   "module_name": "jit_f", "bytes_accessed": 8192.0, "pattern": "elementwise",
                   "source_file": "/src/model.py", "source_line": 13, "total_ns": 10_262}])
    ops.display, ops.labels = views.OP_DISPLAY, views.OP_LABELS
    h = ops._repr_html_()
    # hlo_op was 5th and total 12th (alphabetical record order); source made from file:line
    assert _heads(h) == ["hlo_op", "module_name", "executions", "total", "mean", "FLOPs/exec",
                         "bytes/exec", "pattern", "source", "bytes_read", "category",
                         "source_file", "source_line"]
    assert "<td>/src/model.py:13</td>" in h and "<td>10.3 µs</td>" in h


def test_roofline_html_has_one_time_column():
    from fpgaprof import roofline
    # the analysis gives time_ns and time_s (the same 10.262 µs): one column headed "time"
    t = roofline.Table([{"op": "fusion.3", "time_ns": 10_262, "time_s": 10.262e-6,
                         "mean_kernel_ns": 1026, "flops": 1024.0}])
    heads = _heads(t._repr_html_())
    assert heads == ["op", "time", "FLOPs (total)", "mean_kernel"]
    assert t.columns()["time_s"][0] == 10.262e-6  # the row keeps both


class _Printer:
    """IPython's pretty printer as far as _repr_pretty_ uses it."""

    def __init__(self):
        self.out = ""

    def text(self, s):
        self.out += s


def test_repl_repr_is_the_printed_table():
    from fpgaprof import roofline
    t = roofline.Table([dict(CANDIDATE)])
    t.title = "FPGA offload candidates"
    ops = views.Table([{"hlo_op": "fusion.3", "total_ns": 1_500_000, "executions": 3}])
    ops.title, ops.display = "HLO ops", views.OP_DISPLAY
    for rows in (t, ops):
        assert repr(rows) == str(rows) and "object at 0x" not in repr(rows)
        p = _Printer()
        rows._repr_pretty_(p, False)
        assert p.out == str(rows)
    assert repr(ops).splitlines()[:3] == ["HLO ops: 1 rows",
                                          "  hlo_op    executions    total",
                                          "  fusion.3           3  1.50 ms"]
    # still the list it was
    assert ops[0]["hlo_op"] == "fusion.3" and isinstance(t, list)


def test_unknown_ridge_is_a_dash_not_zero():
    # unknown ceilings give ridge 0 (docs/roofline.md); the model's memory_boundness is then
    # its neutral 0.5 (docs/fpga-model.md) and is shown as it is
    row = dict(CANDIDATE, ridge=0.0, memory_boundness=0.5)
    h = views.rows_html([row], "c")
    cells = dict(zip(_heads(h), __import__("re").findall(r"<td>(.*?)</td>", h)))
    assert cells["ridge"] == "–" and cells["memory_boundness"] == "0.5"
    assert views.text_cell("ridge_flops_per_byte", 0.0) == "–"
    assert views.text_cell("roof_flops_per_s", 0) == "–"
    assert views.text_cell("ridge", 12.5) == "12.5"


def test_region_records_table_has_a_duration():
    # the fixture's regions: [0.9, 4.0] ms, [5.0, 7.0] ms, [7.5, 9.0] ms -> 3.10, 2.00, 1.50 ms
    h = views.table_html(F.regions(), "regions")
    heads = _heads(h)
    assert heads[heads.index("end_ns") + 1] == "duration"
    for d in ("<td>3.10 ms</td>", "<td>2.00 ms</td>", "<td>1.50 ms</td>"):
        assert d in h


# --- prof.transfer_report() / prof.memory_report() views ---------------------------------------

def test_transfer_report_prints_and_shows_as_tables():
    import json

    from fpgaprof import roofline
    from test_reports_html import _transfers_memory_profile
    prof = _transfers_memory_profile()
    t = roofline.transfers(prof)
    plain = roofline.analyze(prof)["transfers"]
    # the dict the analysis gave, unchanged
    assert isinstance(t, dict) and t == plain and json.loads(json.dumps(t)) == json.loads(
        json.dumps(plain))
    text = repr(t)
    assert text == str(t) and "'groups'" not in text.splitlines()[0]
    lines = text.splitlines()
    # numbers of test_reports_summary::test_transfers_inclusive_with_overlap_host_wait_and_link:
    # busy 0.1 + 0.4 ms, overlap 0.1 ms, wait 0.1 ms; HtoD 1 MB in 0.1 ms = 10 GB/s = 31.7 % of
    # the gen4 x16 link (31.508 GB/s), DtoH 2 MB in 0.4 ms = 5 GB/s = 15.9 %
    assert lines[0] == "transfers:"
    assert lines[1] == ("  2 copies, 3.00 MB, busy 500.0 µs (100.0 µs of it overlapping "
                        "kernels); the host waited 100.0 µs in 1 synchronization calls")
    htod = next(x for x in lines if x.strip().startswith("HtoD")).split()
    assert htod[1:7] == ["1", "1.00", "MB", "100.0", "µs", "10.00"] and htod[7] == "31.7"
    # per region path (inclusive): both copies and the wait count for "outer"
    outer = next(x for x in lines if x.strip().startswith("outer ") and "µs" in x).split()
    assert outer[:6] == ["outer", "1", "2", "3.00", "MB", "500.0"]
    assert any("pageable host memory" in x for x in lines)  # the flags, with their advice
    h = t._repr_html_()
    assert "<script" not in h and "<b>transfers</b>" in h
    assert ">31.7 %</td>" in h and ">15.9 %</td>" in h and "By region" in h


def test_memory_report_prints_and_shows_as_tables():
    from fpgaprof import roofline
    from test_reports_html import _transfers_memory_profile
    prof = _transfers_memory_profile()
    m = roofline.memory(prof)
    assert isinstance(m, dict) and m == roofline.analyze(prof)["memory"]
    lines = repr(m).splitlines()
    # test_reports_summary::test_memory_two_devices_never_negative: peak 200 B first reached
    # 2 ms after the start; end: dev0 30 B + dev1 100 + 70 B = 200 B; 4 allocations, 2 frees,
    # one of them (dev1's B) of a buffer allocated before the trace
    assert lines[1] == ("  peak 200 B at 2.00 ms (all devices), 200 B still allocated at the "
                        "end; 4 allocations, 2 frees, 1 frees of buffers allocated before the "
                        "trace")
    # per device: dev0 100 B at 1 ms, 30 B at the end; dev1 170 B at 5 ms, 170 B at the end
    i = lines.index("  per device: 2 rows")
    assert lines[i + 1].split() == ["device_id", "peak", "peak", "at", "at", "the", "end"]
    assert lines[i + 2].split() == ["0", "100", "B", "1.00", "ms", "30", "B"]
    assert lines[i + 3].split() == ["1", "170", "B", "5.00", "ms", "170", "B"]
    # largest buffer first: 100 B on dev0, allocated at 1 ms, freed at 3 ms
    i = lines.index("  largest buffers: 4 rows")
    assert lines[i + 2].split() == ["100", "B", "–", "–", "0", "0", "1.00", "ms", "3.00", "ms"]
    h = m._repr_html_()
    assert "<script" not in h and "<svg" in h and "Largest buffers" in h


def test_memory_report_per_region_record():
    from fpgaprof import roofline
    from test_reports_html import _transfers_memory_profile
    m = roofline.memory(_transfers_memory_profile(), by="region_instance")
    lines = repr(m).splitlines()
    i = lines.index("  by region record (peak: bytes in use while it was open): 4 rows")
    # bytes in use (all devices): 100 @1 ms, 200 @2, 100 @3, 170 @5, 200 @6. Records: fp/64
    # [0.9, 4.0] ms starts at 0 and sees 200; fp/64 [5.0, 7.0] starts at 100 (C's +70 comes at
    # 5.0) and sees 200 @6; back_project [7.5, 9.0] starts at 200; outer [0.5, 9.5] starts at 0.
    # Every peak is 200 B: the order is by record index.
    rows = [x.split() for x in lines[i + 2:i + 6]]
    # from the end: frees, allocations, freed "0 B", allocated "0 B", in use at start, peak,
    # index
    assert [(r[-11], r[-10]) for r in rows] == [("0", "200"), ("1", "200"), ("2", "200"),
                                                ("3", "200")]
    assert [r[-8] for r in rows] == ["0", "100", "200", "0"]  # in use at start, bytes
    assert lines[i + 2].split()[:3] == ["outer", ">", "forward_project/64"]
    assert "by region record" in m._repr_html_()
