"""What people read in printed tables, report.html, the CLI's compare/export and its usage
errors: column headers that say what a value is (no unit suffix contradicting an auto-scaled
value, per execution vs total), one reason for an empty GPU table, speedups as "1.91x", CSV
cells for "none", lists and empty tables. Expected strings are worked out by hand in comments
from the formatting rules of report/html.py (fmt_s, fmt_bytes, fmt_num, fmt_speedup)."""

import _reports_fixtures as F
from fpgaprof.base import columns
from fpgaprof.base import units
import fpgaprof
import pytest
from fpgaprof import cli, roofline
from fpgaprof.base.core import core
from fpgaprof.cli import commands as cli_commands
from fpgaprof.cli import compare
from fpgaprof.base.markup import html_cell
from fpgaprof.analysis import sections
from fpgaprof.report import html as H
from fpgaprof.api import overview
from fpgaprof.views import profile as profile_views
from fpgaprof.views import sections as section_views
from fpgaprof.views import tables as views
from fpgaprof.report import model, summary_json

NO_GPU = "the trace has no GPU kernels: trace on a machine with an NVIDIA GPU"


def _profile(kernels=(), regions=(), gpu=False):
    """A Profile over a hand-built store: kernels (start_ns, end_ns), each with its launch API
    call 100 ns before it on thread 9; regions (name, start_ns, end_ns) on thread 9."""
    s = core.TraceStore()
    s.set_meta(start_ns=0, end_ns=10_000_000, gpu_available=gpu)
    for i, (a, b) in enumerate(kernels):
        s.append("api_calls", correlation_id=i + 1, thread_id=9, start_ns=a - 100, end_ns=a - 50)
        s.append("kernels", correlation_id=i + 1, name="k", start_ns=a, end_ns=b)
    for name, a, b in regions:
        s.append("regions", name=name, thread_id=9, start_ns=a, end_ns=b)
    s.correlate()
    return fpgaprof.Profile(s)


# --- print(prof.ops) -------------------------------------------------------------------------

OPS = [
    {"hlo_op": "fusion.3", "module_name": "jit_f", "executions": 10, "timed_executions": 10,
     "total_ns": 10_262,
     "mean_ns": 1026, "flops": 1024.0, "bytes_accessed": 8192.0, "pattern": "elementwise",
     "source_file": "/src/model.py", "source_line": 13, "method": "nvtx_thunk",
     "kernel_names": ["loop_fusion_3"]},
    {"hlo_op": "dot.1", "module_name": "jit_f", "executions": 2, "timed_executions": 2,
     "total_ns": 3_000_000,
     "mean_ns": 1_500_000, "flops": 2e9, "bytes_accessed": 1e7, "pattern": "dot",
     "source_file": "/home/user/projects/reconstruction/mbirjax/forward_model.py",
     "source_line": 1234, "method": "nvtx_thunk", "kernel_names": ["gemm_a", "gemm_b"]},
]


def test_print_ops_shows_what_the_op_is_and_its_cost_per_execution():
    lines = str(views.op_rows(_profile(), OPS)).splitlines()
    assert lines[0] == "HLO ops: 2 rows"
    assert lines[1].split() == ["hlo_op", "module_name", "executions", "total", "mean",
                                "FLOPs/exec", "bytes/exec", "pattern", "source"]
    # fusion.3: 10,262 ns = 10.3 µs, mean 1,026 ns = 1.0 µs, 1024 FLOP = 1.02 k, 8192 B = 8.19 kB
    assert lines[2].split() == ["fusion.3", "jit_f", "10", "10.3", "µs", "1.0", "µs", "1.02", "k",
                                "8.19", "kB", "elementwise", "/src/model.py:13"]
    # dot.1: 3 ms, mean 1.5 ms, 2e9 FLOP = 2 G, 1e7 B = 10.00 MB; the 64-character source is
    # cut at its start so the file name and line stay: "…" + its last 39 characters
    src = "/home/user/projects/reconstruction/mbirjax/forward_model.py:1234"
    assert lines[3].split()[:-1] == ["dot.1", "jit_f", "2", "3.00", "ms", "1.50", "ms", "2", "G",
                                     "10.00", "MB", "dot"]
    assert lines[3].split()[-1] == "…" + src[-39:] and src[-39:].endswith("forward_model.py:1234")
    # 12 keys + the display column source = 13; 9 shown
    assert lines[4] == "  (5 more columns: .to_pandas() or .columns())"
    # the rows themselves are unchanged (no "source" added)
    assert "source" not in views.op_rows(_profile(), OPS)[0]


def test_print_ops_says_why_it_is_empty():
    assert str(_profile().ops) == f"HLO ops: no rows ({NO_GPU})\n"
    assert str(_profile(gpu=True).ops) == ("HLO ops: no rows (the trace has no GPU kernels: the "
                                           "traced code launched nothing on the GPU)\n")
    # one kernel, no HLO module in the trace: nothing to attribute it to
    assert str(_profile(kernels=[(5000, 6000)]).ops) == (
        "HLO ops: no rows (the trace has GPU kernels but its 1 kernel could not be attributed "
        "to an HLO op: prof.attribution.unattributed says why)\n")
    assert sections.unattributed_note(3).startswith("the trace has GPU kernels but none of its 3 kernels")


# --- region tables ---------------------------------------------------------------------------


def test_region_tables_say_why_they_are_empty():
    # a region and no kernel (no GPU): the no-GPU note, and no rows of zeros
    p = _profile(regions=[("forward_project", 0, 1000)])
    for t in (p.fpga_candidates(by="region"), p.roofline(by="region")):
        assert len(t) == 0 and t.empty_note == NO_GPU
    assert str(p.roofline(by="region")) == f"roofline by region: no rows ({NO_GPU})\n"
    # kernels but no region
    p = _profile(kernels=[(5000, 6000)])
    assert p.fpga_candidates(by="region").empty_note == "no fpgaprof.region() in the trace"
    # a region, and the kernel outside it
    p = _profile(kernels=[(5000, 6000)], regions=[("forward_project", 0, 1000)])
    assert p.fpga_candidates(by="region").empty_note == \
        "no fpgaprof.region() with GPU kernels inside"
    assert overview.region_empty_reason(1, 1) == "no fpgaprof.region() with GPU kernels inside"
    assert overview.region_empty_reason(1, 0) == "no fpgaprof.region() in the trace"
    assert overview.region_empty_reason(0, 0) == NO_GPU


# --- summary.json / report.html --------------------------------------------------------------


def test_traced_gpu_that_ran_nothing_is_busy_zero_not_unknown():
    s = model.collect(_profile(gpu=True, regions=[("r", 0, 1000)]))
    t = s["totals"]
    # a GPU was traced and ran nothing for 10 ms: 0 busy, all 10 ms idle (measured)
    assert (t["gpu_busy_s"], t["gpu_idle_s"], t["gpu_busy_fraction"]) == (0.0, 0.01, 0.0)
    why = "the trace has no GPU kernels: the traced code launched nothing on the GPU"
    assert s["ops"]["reason"] == why and s["candidates"]["reason"] == why
    assert s["candidates"]["regions"]["reason"] == why


def test_no_gpu_summary_has_null_busy_time_and_html_says_na(tmp_path):
    s = model.collect(_profile(regions=[("r", 0, 1000)]))
    t = s["totals"]
    assert [t[k] for k in ("gpu_busy_s", "gpu_idle_s", "gpu_busy_fraction", "transfer_busy_s",
                           "transfer_share_of_wall")] == [None] * 5
    doc = H.render(s)
    assert '<div class="value">n/a (no GPU)</div>' in doc
    # the answer, ops, roofline, op and region candidates
    assert doc.count(f"not available: {NO_GPU}") == 5
    assert "no candidate op" not in doc and "attributed" not in doc.split("sec-warnings")[2]
    # the notebook overview says the same
    assert "<th>GPU busy</th><td style='text-align:left'>n/a (no GPU)</td>" in \
        profile_views.profile_html(overview.trace_overview(_profile(regions=[("r", 0, 1000)])).data)


def test_flops_per_execution_and_total_are_labelled():
    s = model.collect(F.SyntheticProfile(with_ops=True))
    # fusion.1: 2 executions of 1e6 FLOP and 4e6 B each (the fixture's ops)
    op = next(r for r in s["ops"]["items"] if r["op"] == "fusion.1")
    pt = next(p for p in s["roofline"]["points"] if p["op"] == "fusion.1")
    assert (op["flops"], op["bytes"]) == (1e6, 4e6)          # per execution
    assert (pt["flops"], pt["bytes"]) == (2e6, 8e6)          # both executions
    doc = H.render(s)
    roof = doc.split('id="sec-roofline"')[1].split('id="sec-ops"')[0]
    ops = doc.split('id="sec-ops"')[1].split('id="sec-kernels"')[0]
    assert ">FLOPs (total)</th>" in roof and ">bytes (total)</th>" in roof
    assert 'data-v="2000000">2 M</td>' in roof and 'data-v="8000000">8.00 MB</td>' in roof
    assert ">FLOPs/exec</th>" in ops and ">bytes/exec</th>" in ops
    assert 'data-v="1000000">1 M</td>' in ops and 'data-v="4000000">4.00 MB</td>' in ops
    # printed roofline rows: totals (10 executions of 1024 FLOP, 8192 B = 10.2 k, 81.92 kB)
    t = roofline.Table([{"op": "fusion.3", "time_ns": 102_620, "flops": 10240.0,
                         "bytes": 81920.0}])
    lines = str(t).splitlines()
    assert lines[1].split() == ["op", "time", "FLOPs", "(total)", "bytes", "(total)"]
    assert lines[2].split() == ["fusion.3", "102.6", "µs", "10.2", "k", "81.92", "kB"]


def test_headers_of_auto_scaled_columns_carry_no_unit():
    assert columns.display_label("gpu_time_ns") == "gpu_time"
    assert columns.display_label("fpga_total_s") == "fpga_total"
    assert columns.display_label("median_s") == "median"
    assert columns.display_label("achieved_bytes_per_s") == "achieved_bytes_per_s"  # values in B/s
    assert columns.display_label("bytes") == "bytes"
    assert columns.display_label("flops", {"flops": "FLOPs/exec"}) == "FLOPs/exec"
    # a sweep's timing table (extra table) and the largest buffers
    doc = H.extra_table_html([{"size": 64, "median_s": 0.00589, "warmup_s": 0.98947}])
    assert ">median</th>" in doc and ">warmup</th>" in doc and "median_s" not in doc
    assert ">5.89 ms</td>" in doc and ">989.47 ms</td>" in doc
    doc = section_views.largest_buffers_html([{"bytes": 1000, "alloc_s": 0.43392, "free_s": None}])
    assert ">alloc</th>" in doc and ">free</th>" in doc and ">433.92 ms</td>" in doc
    # a rate is a rate, not a time: 2.5e9 B/s
    assert html_cell("achieved_bytes_per_s", 2.5e9)[0] == "2.5 GB/s"


def test_candidate_tables_in_html_use_the_printed_formats():
    row = {"rank": 1, "op": "fusion.3", "gpu_time_ns": 10_300, "fpga_total_s": 2.067e-4,
           "op_speedup": 1.914, "workload_speedup": 0.0496, "flops": 10240.0}
    doc = H.ranked_table_html([row], H.CANDIDATE_FIRST, roofline.TOTAL_LABELS)
    heads = [h.split(">")[-1] for h in doc.split("</th>")[:-1]]
    assert heads == ["rank", "op", "op_speedup", "gpu_time", "workload_speedup", "fpga_total",
                     "FLOPs (total)"]
    # 1.914 -> 1.91x; 0.0496 -> 0.050x (below 0.1: two significant digits, as the digest and
    # print()); 10,300 ns; 206.7 µs
    for cell in (">1.91x</td>", ">0.050x</td>", ">10.3 µs</td>", ">206.7 µs</td>", ">10.2 k</td>"):
        assert cell in doc
    # A value with a range: the range under it, its ends no columns of their own.
    row.update(op_speedup_low=1.26, op_speedup_high=3.14, fpga_total_low_s=1.3e-4, fpga_total_high_s=3.1e-4)
    doc = H.ranked_table_html([row], H.CANDIDATE_FIRST, roofline.TOTAL_LABELS)
    heads = [h.split(">")[-1] for h in doc.split("</th>")[:-1]]
    assert "op_speedup_low" not in heads and "fpga_total_high" not in heads
    assert '>1.91x<br><span class="dim">1.2-3.2x</span></td>' in doc
    assert '>206.7 µs<br><span class="dim">130-310 µs</span></td>' in doc
    # 0.00496 to two significant digits: 0.0050 (the trailing zero kept, as a range's ends)
    assert units.fmt_speedup(0.00496) == "0.0050x" and units.fmt_speedup(None) == "–"
    assert views.text_cell("op_speedup", 1.914) == "1.91x"
    assert views.text_cell("op_speedup", 1.914, columns.range_text("op_speedup", row)) == "1.91x (1.2-3.2x)"
    # ranges: two significant digits, no exponent, both ends in the upper end's unit, the low
    # end rounded down and the high end up (the printed range holds the value: 564.9 us sits
    # in "17-570 us", not "17-560 us")
    assert units.fmt_speedup_range(0.004912, 0.0123) == "0.0049-0.013x"
    assert units.fmt_s_range(0.1311, 0.4027) == "130-410 ms"
    assert units.fmt_s_range(8.1e-4, 2.1e-3) == "0.81-2.1 ms"
    assert units.fmt_s_range(1.7e-5, 5.649e-4) == "17-570 µs"
    assert units.fmt_speedup_range(None, 2.0) == "" and units.fmt_s_range(1.0, float("nan")) == ""
    # a high end that rounds up to the next unit is printed in it: 999.96 us rounds up to 1000
    # us at two significant digits, which reads 1.0 ms; and one that rounds up to the next
    # decade keeps two significant digits (0.0996 -> 0.10, not 0.100)
    assert units.fmt_s_range(9e-4, 999.96e-6) == "0.90-1.0 ms"
    assert units.fmt_speedup_range(0.05, 0.0996) == "0.050-0.10x"


def test_a_time_and_its_range_share_one_unit():
    """A nominal printed beside its range is in the range's unit: 0.98 s in 0.81-1.2 s read
    "980.00 ms (0.81-1.2 s)" before."""
    assert units.fmt_s_ranged(0.98, 0.81, 1.2) == "0.980 s (0.81-1.2 s)"
    # below 1 of the range's unit, three significant digits (not 541.4 us's four, nor two)
    assert units.fmt_s_ranged(8e-4, 6e-4, 1.1e-3) == "0.800 ms (0.60-1.1 ms)"
    assert units.fmt_s_ranged(541.4e-6, 2.2e-4, 1.7e-3) == "0.541 ms (0.22-1.7 ms)"
    # the common case is as fmt_s prints it
    assert units.fmt_s_ranged(1.75e-3, 1.3e-3, 2.6e-3) == "1.75 ms (1.3-2.6 ms)"
    assert units.fmt_s_ranged(999.96e-6, 9e-4, 999.97e-6) == "1.00 ms (0.90-1.0 ms)"
    # no range, or one that does not hold the nominal: the nominal as fmt_s prints it
    assert units.fmt_s_ranged(2e-3, None, 3e-3) == "2.00 ms"
    assert units.fmt_s_ranged(0.98, 1.0, 1.2) == "980.00 ms (1.0-1.2 s)"
    assert units.fmt_s_ranged(1.5e-10, 1.1e-10, 2.5e-10) == "0.15 ns (0.11-0.25 ns)"


def test_a_printed_time_below_a_nanosecond_stays_inside_its_printed_range():
    # estimate_hlo of a loop's compare: 0.15 ns in 0.11-0.25 ns printed as "0 ns" before
    assert units.fmt_s(1.5e-10) == "0.15 ns"
    assert units.fmt_s_range(1.1e-10, 2.5e-10) == "0.11-0.25 ns"
    assert units.fmt_s(9.99e-10) == "1 ns" and units.fmt_s(240e-9) == "240 ns"
    assert units.fmt_s(0) == "0 s"


def test_a_printed_speedup_never_falls_outside_its_printed_range():
    # 0.01505 in 0.0053-0.01714: two decimals gave "0.02x", above the range's "0.018x"; two
    # significant digits as the ends give 0.015 (0.01505 * 1000 = 15.05 -> 15)
    assert units.fmt_speedup(0.01505) == "0.015x"
    assert units.fmt_speedup_range(0.0053, 0.01714) == "0.0053-0.018x"
    # 0.0104 in 0.0101-0.0107: 0.010x in 0.010-0.011x (two decimals gave 0.01x, one digit)
    assert units.fmt_speedup(0.0104) == "0.010x"
    assert units.fmt_speedup_range(0.0101, 0.0107) == "0.010-0.011x"
    # 0.0996 rounds to 0.10: from 0.1 on a speedup has two decimals, 0.10x not 0.100x
    assert units.fmt_speedup(0.0996) == "0.10x"
    # from 0.1 on unchanged: two decimals
    assert units.fmt_speedup(0.105) == "0.10x" and units.fmt_speedup(0.4567) == "0.46x"
    assert units.fmt_speedup(0) == "0.00x"
    # no exponent for a tiny one: 1.234e-5 -> 0.000012
    assert units.fmt_speedup(1.234e-5) == "0.000012x"


# --- fpgaprof export --format csv ------------------------------------------------------------


def test_csv_has_empty_cells_for_none_and_always_a_header(tmp_path, capsys):
    p = _profile(kernels=[(5000, 6000)], regions=[("forward_project", 0, 1000)])
    path = p.save(str(tmp_path / "t.fpgaprof"))
    assert cli.main(["export", path, "--format", "csv", "--table", "regions"]) == 0
    head, row = capsys.readouterr().out.splitlines()
    cells = dict(zip(head.split(","), row.split(",")))
    assert cells["name"] == "forward_project" and cells["parent"] == ""  # top level: no parent
    assert cli.main(["export", path, "--format", "csv", "--table", "kernels"]) == 0
    head, row = capsys.readouterr().out.splitlines()
    cells = dict(zip(head.split(","), row.split(",")))
    assert cells["region_index"] == "" and cells["marker_index"] == ""  # outside any range
    assert cells["start_ns"] == "5000" and "4294967295" not in row
    # no op in the trace: the header alone, the fields of prof.ops' rows
    assert cli.main(["export", path, "--format", "csv", "--table", "ops"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].split(",")[:3] == ["bytes_accessed", "bytes_read",
                                                       "bytes_written"]
    assert "kernel_names" in out[0].split(",") and "hlo_op" in out[0].split(",")
    # lists are joined with ";"
    text = cli_commands.csv_table(type("P", (), {"ops": OPS})(), "ops")
    assert text.splitlines()[2].split(",")[-1] == "gemm_a;gemm_b"


# --- fpgaprof compare ------------------------------------------------------------------------


def test_compare_labels_what_it_compares(tmp_path, capsys):
    s = model.collect(F.SyntheticProfile(with_ops=True))
    summary_json.write_summary(tmp_path / "a.json", s)
    summary_json.write_summary(tmp_path / "b.json", s)
    assert cli.main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    lines = capsys.readouterr().out.splitlines()

    def header(title):
        i = lines.index(title)
        return lines[i + 1].split()
    assert header("per HLO op (module:op), GPU time, sorted by |change|:") == \
        ["name", "runs", "A", "runs", "B", "GPU", "A", "GPU", "B", "change", "B/A", "mean", "A",
         "mean", "B", "mean", "B/A", "bytes/exec", "A", "bytes/exec", "B", "bound", "A→B"]
    assert header("per region (path), wall time, sorted by |change|:") == \
        ["name", "runs", "A", "runs", "B", "wall", "A", "wall", "B", "change", "B/A", "mean",
         "A", "mean", "B", "mean", "B/A"]  # a region has no bound
    assert header("per kernel (top kernels only), GPU time, sorted by |change|:")[:7] == \
        ["name", "runs", "A", "runs", "B", "GPU", "A"]
    # copy directions: no mean (busy time is a union of the copies, not a sum of runs)
    assert header("per transfer direction, busy time, sorted by |change|:")[:12] == \
        ["name", "copies", "A", "copies", "B", "busy", "A", "busy", "B", "change", "B/A",
         "bytes"]
    assert lines[0].endswith("whole-program wall time 10.00 ms")  # the fixture's trace


def _summary_with_runs(ops, regions, wall_s):
    """A summary whose op and region tables are `ops` (op, executions, total s) and `regions`
    (path, instances, wall s), its trace `wall_s` long."""
    s = model.collect(F.SyntheticProfile())
    s["trace"]["wall_time_s"] = wall_s
    s["ops"] = {"available": True, "count": len(ops), "rows_left_out": 0,
                "items": [{"op": op, "module": "jit_f", "count": n, "total_s": t,
                           "mean_s": t / n, "flops": None, "bytes": None, "source": None,
                           "bound": None} for op, n, t in ops]}
    s["regions"] = {"available": True, "count": len(regions), "paths": len(regions),
                    "rows_left_out": 0,
                    "items": [{"path": p, "name": p, "count": n, "wall_s": t, "gpu_s": None}
                              for p, n, t in regions]}
    return s


def test_compare_shows_runs_and_time_per_run(tmp_path, capsys):
    # A runs fusion.1 10 times (1 ms in all, 100 µs each) and region "sweep" 10 times (20 ms,
    # 2 ms each) in a 0.5 s program; B the same work 100 times (10 ms, 200 ms) in a 3 s program:
    # 10x the time, the same time per run.
    a = _summary_with_runs([("fusion.1", 10, 1e-3)], [("sweep", 10, 20e-3)], 0.5)
    b = _summary_with_runs([("fusion.1", 100, 10e-3)], [("sweep", 100, 200e-3)], 3.0)
    rows = {(r["kind"], r["name"]): r for r in compare.compare_summaries(a, b)}
    op, reg = rows[("op", "fusion.1")], rows[("region", "sweep")]
    assert (op["count_before"], op["count_after"]) == (10, 100)
    assert op["mean_before_s"] == pytest.approx(1e-4) and op["mean_after_s"] == pytest.approx(1e-4)
    assert op["change_ratio"] == pytest.approx(10.0) and op["mean_ratio"] == pytest.approx(1.0)
    assert (reg["count_before"], reg["count_after"]) == (10, 100)
    # a region's mean is its wall time / instances: 20 ms / 10 = 200 ms / 100 = 2 ms
    assert reg["mean_before_s"] == pytest.approx(2e-3) and reg["mean_ratio"] == pytest.approx(1.0)
    summary_json.write_summary(tmp_path / "a.json", a)
    summary_json.write_summary(tmp_path / "b.json", b)
    assert cli.main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"A: {tmp_path / 'a.json'}  whole-program wall time 500.00 ms"
    assert out[1] == f"B: {tmp_path / 'b.json'}  whole-program wall time 3.000 s"
    line = next(x for x in out if x.strip().startswith("jit_f:fusion.1")).split()
    # runs 10 100, GPU 1.00 ms 10.00 ms, change +9.00 ms, 10.00x, mean 100.0 µs both, 1.00x
    assert line == ["jit_f:fusion.1", "10", "100", "1.00", "ms", "10.00", "ms", "+9.00", "ms",
                    "10.00x", "100.0", "µs", "100.0", "µs", "1.00x", "–", "–"]
    line = next(x for x in out if x.strip().startswith("sweep")).split()
    assert line == ["sweep", "10", "100", "20.00", "ms", "200.00", "ms", "+180.00", "ms",
                    "10.00x", "2.00", "ms", "2.00", "ms", "1.00x"]


def test_compare_rejects_a_count_that_is_not_an_integer():
    a = _summary_with_runs([("fusion.1", 10, 1e-3)], [], 0.5)
    b = _summary_with_runs([("fusion.1", 10, 1e-3)], [], 0.5)
    b["ops"]["items"][0]["count"] = "ten"
    with pytest.raises(compare.SummaryFormatError, match=r"B: ops.items\[0\].count is 'ten'"):
        compare.compare_summaries(a, b)


# --- usage errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("argv,err", [
    (["--bogus"], "fpgaprof: error: unrecognized arguments: --bogus (see `fpgaprof --help`)"),
    (["calibrate", "--foo"], "fpgaprof calibrate: error: unrecognized arguments: --foo "
     "(see `fpgaprof calibrate --help`)"),
    (["report", "t.fpgaprof", "--target", "alveo-u55"],
     "fpgaprof report: error: unknown FPGA target 'alveo-u55' (did you mean alveo-u55c? use "
     "--target with one of alveo-u55c, alveo-u280, alveo-u250, alveo-u200, versal-v80, intel-pac-a10, bittware-520n-s10gx, intel-pac-d5005, intel-s10mx-2100, or a card file "
     "CARD.json) (see `fpgaprof report --help`)"),
    (["export", "t.fpgaprof", "--format", "json", "--target", "zzz"],
     "fpgaprof export: error: unknown FPGA target 'zzz' (use --target with one of alveo-u55c, "
     "alveo-u280, alveo-u250, alveo-u200, versal-v80, intel-pac-a10, bittware-520n-s10gx, intel-pac-d5005, intel-s10mx-2100, or a card file CARD.json) (see `fpgaprof export --help`)"),
    (["run", "--target", "versal-v8", "--", "true"],
     "fpgaprof run: error: unknown FPGA target 'versal-v8' (did you mean versal-v80? use "
     "--target with one of alveo-u55c, alveo-u280, alveo-u250, alveo-u200, versal-v80, intel-pac-a10, bittware-520n-s10gx, intel-pac-d5005, intel-s10mx-2100, or a card "
     "file CARD.json) (see `fpgaprof run --help`)"),
    (["report", "t.fpgaprof", "--target", "versal-v70"],
     "fpgaprof report: error: unknown FPGA target 'versal-v70' (versal-v70 is not a preset: "
     "describe it in a card file; use --target with one of alveo-u55c, alveo-u280, alveo-u250, "
     "alveo-u200, versal-v80, intel-pac-a10, bittware-520n-s10gx, intel-pac-d5005, intel-s10mx-2100, or a card file CARD.json) (see `fpgaprof report --help`)"),
    (["run", "-o", "out"], "fpgaprof run: error: no command given (usage: fpgaprof run [-o DIR] -- "
     "python script.py ARGS) (see `fpgaprof run --help`)"),
])
def test_usage_errors_name_the_problem_and_the_help_to_read(argv, err, capsys):
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == err + "\n"


# --- number formatting: rounding before the unit ---------------------------------------------


@pytest.mark.parametrize("value,text", [
    # 999.4e6 = 999.4 M -> 3 significant digits "999" (below 1000: stays in M)
    (999.4e6, "999 MFLOP/s"),
    # 999.6e6 = 999.6 M -> rounds to 1000 M = the next prefix: 1.00 G, printed "1" by .3g
    (999.6e6, "1 GFLOP/s"),
    (999.7e9, "1 TFLOP/s"),
    (1e3, "1 kFLOP/s"),  # a float: prefixed
    (1000, "1000 FLOP/s"),  # an int below 100000: exact
    (0, "0 FLOP/s"), (0.0, "0 FLOP/s"),
    (-999.6e6, "-1 GFLOP/s"),
    (float("nan"), "–"), (float("inf"), "–"), (None, "–"),
    (0.9996, "1 FLOP/s"),  # 0.9996 -> "1" reaches 1: no prefix either way
])
def test_fmt_num_rounds_before_it_picks_the_prefix(value, text):
    assert units.fmt_num(value, "FLOP/s") == text


@pytest.mark.parametrize("seconds,text", [
    (0.99996e-3, "1.00 ms"),  # 999.96 µs -> "1000.0 µs" at 1 decimal: the next unit
    (999.94e-6, "999.9 µs"),
    (0.9999996, "1.000 s"),  # 999.9996 ms -> "1000.00 ms"
    (999.96e-9, "1.0 µs"),  # 999.96 ns -> "1000 ns"
    (999.4e-9, "999 ns"),
    (-0.99996e-3, "-1.00 ms"),
    (0, "0 s"), (float("nan"), "–"),
])
def test_fmt_s_rounds_before_it_picks_the_unit(seconds, text):
    assert units.fmt_s(seconds) == text


@pytest.mark.parametrize("nbytes,text", [
    (999_999, "1.00 MB"),  # 999.999 kB -> "1000.00 kB"
    (999_994, "999.99 kB"),
    (999.6, "1.00 kB"),  # 999.6 B -> "1000 B"
    (999.4, "999 B"), (0, "0 B"), (float("nan"), "–"),
])
def test_fmt_bytes_rounds_before_it_picks_the_unit(nbytes, text):
    assert units.fmt_bytes(nbytes) == text


def test_summary_op_times_round_before_the_unit():
    # the printed summary's op table (fpgaprof.base.units.fmt_ns, 3 significant digits):
    # 999 600 ns = 999.6 µs -> "1e+03 µs" before; 999 400 ns stays "999 µs"
    from fpgaprof.base.units import fmt_ns as format_ns
    assert format_ns(999_600) == "1 ms"
    assert format_ns(999_400) == "999 µs"
    assert format_ns(999.6) == "1 µs"
    assert format_ns(5) == "5 ns"


def test_compare_shows_kernels_as_the_reports_do(tmp_path, capsys):
    # CUPTI reports C++ kernels mangled; report.html and prof.summary() show them demangled and
    # shortened (kernel_display_name), and so does compare: "void cub::EmptyKernel<void>()" ->
    # "cub::EmptyKernel<…>" (from the summary's `demangled`), and
    # _ZN3cub6detail4sort11RadixKernelIiEEvPi (no `demangled`: the core demangles it,
    # "void cub::detail::sort::RadixKernel<int>(int*)") -> "cub::…::RadixKernel<…>".
    empty, radix = "_ZN3cub11EmptyKernelIvEEvv", "_ZN3cub6detail4sort11RadixKernelIiEEvPi"

    def with_kernels(t):
        s = _summary_with_runs([], [], 1.0)
        s["kernels"] = {"available": True, "rows_left_out": 0, "top": [
            {"name": empty, "demangled": "void cub::EmptyKernel<void>()", "count": 1,
             "total_s": t, "mean_s": t},
            {"name": radix, "count": 2, "total_s": 2 * t, "mean_s": t}]}
        return s
    a, b = with_kernels(1e-3), with_kernels(2e-3)
    rows = {r["name"]: r for r in compare.compare_summaries(a, b) if r["kind"] == "kernel"}
    # the rows keep the names as recorded (the keys), with the shown name beside them
    assert rows[empty]["display_name"] == "cub::EmptyKernel<…>"
    assert rows[radix]["display_name"] == "cub::…::RadixKernel<…>"
    summary_json.write_summary(tmp_path / "a.json", a)
    summary_json.write_summary(tmp_path / "b.json", b)
    assert cli.main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert "_ZN3cub" not in out
    lines = out.splitlines()
    # radix: 2 runs each side, 2.00 ms -> 4.00 ms, +2.00 ms, 2.00x
    line = next(x for x in lines if x.strip().startswith("cub::…::RadixKernel<…>")).split()
    assert line[:9] == ["cub::…::RadixKernel<…>", "2", "2", "2.00", "ms", "4.00", "ms", "+2.00", "ms"]
    assert any(x.strip().startswith("cub::EmptyKernel<…> ") for x in lines)
