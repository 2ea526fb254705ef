"""`fpgaprof compare` on summary.json files built by hand: an op with a row per compiled
instance of its module (summary.json keeps them apart) is one row with the instances' times
and runs added (before, the last row replaced the others); non-finite numbers and negative
counts are refused as malformed; `--json` is strict JSON with the wall times the text shows."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fpgaprof.report.model import SCHEMA_VERSION


def _summary(ops, wall=1.0):
    return {
        "schema_version": SCHEMA_VERSION,
        "trace": {"wall_time_s": wall},
        "ops": {"available": True, "items": ops, "rows_left_out": 0},
        "regions": {"available": True, "items": [], "rows_left_out": 0},
        "kernels": {"available": True, "items": [], "rows_left_out": 0},
        "transfers": {"available": True, "directions": []},
    }


def _op(module, op, total_s, count, nbytes, bound="memory"):
    return {"module": module, "op": op, "total_s": total_s, "count": count,
            "mean_s": total_s / count, "bytes": nbytes, "bound": bound}


def _compare(tmp_path, a, b, *extra):
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b) if not isinstance(b, str) else b)
    return subprocess.run([sys.executable, "-m", "fpgaprof", "compare", str(pa), str(pb), *extra],
                          capture_output=True, text=True, timeout=300)


def test_rows_of_one_op_in_two_instances_of_its_module_are_one(tmp_path):
    # A: jit_gather:wrapped_gather twice (5.0 us, 1 run; 3.6 us, 1 run) -> 8.6 us, 2 runs,
    # mean 4.3 us, bytes 100 on both. B: one row, 4.3 us in 1 run.
    a = _summary([_op("jit_gather", "wrapped_gather", 5.0e-6, 1, 100),
                  _op("jit_gather", "wrapped_gather", 3.6e-6, 1, 100)])
    b = _summary([_op("jit_gather", "wrapped_gather", 4.3e-6, 1, 100)])
    r = _compare(tmp_path, a, b, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    row = [x for x in doc["rows"] if x["kind"] == "op"]
    assert len(row) == 1
    row = row[0]
    assert row["time_before_s"] == pytest.approx(8.6e-6)
    assert row["count_before"] == 2
    assert row["mean_before_s"] == pytest.approx(4.3e-6)
    assert row["bytes_before"] == 100 and row["bytes_after"] == 100
    assert doc["a_wall_time_s"] == 1.0 and doc["b_wall_time_s"] == 1.0
    # instances of different sizes: bytes unknown rather than one instance's
    a2 = _summary([_op("jit_b", "copy.1", 1e-6, 1, 12_950_000), _op("jit_b", "copy.1", 1e-6, 1, 1_020)])
    r = _compare(tmp_path, a2, b, "--json")
    row = [x for x in json.loads(r.stdout)["rows"] if x["name"] == "copy.1"][0]
    assert row["bytes_before"] is None and row["count_before"] == 2


@pytest.mark.parametrize("bad,why", [
    ('{"schema_version": 2, "trace": {}, "ops": {"items": [{"module": "m", "op": "o", "total_s": NaN, "count": 1}]}}',
     "not a finite number"),
    ('{"schema_version": 2, "trace": {}, "ops": {"items": [{"module": "m", "op": "o", "total_s": Infinity, "count": 1}]}}',
     "not a finite number"),
    ('{"schema_version": 2, "trace": {}, "ops": {"items": [{"module": "m", "op": "o", "total_s": 1e-6, "count": -3}]}}',
     "not a whole number from 0 to"),
    ('{"schema_version": 2, "trace": {}, "ops": {"items": [], "rows_left_out": -1}}', "rows_left_out"),
    ('{"schema_version": 2, "trace": {}, "ops": {"items": []}, "roofline": {"points": [{"module": {"x": 1}, "op": "o"}]}}',
     None),
])
def test_malformed_numbers_are_refused_in_one_line(tmp_path, bad, why):
    r = _compare(tmp_path, _summary([]), bad)
    if why is None:  # a module that is an object: compared as text, no internal error
        assert r.returncode == 0, r.stderr
        return
    assert r.returncode == 1, r.stdout
    assert "malformed summary.json" in r.stderr and why in r.stderr, r.stderr
    assert "internal error" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


# --- names that read alike, means of untimed runs, small ratios ----------------------------------


def _name_column(text):
    """{section title: [the name cell of each data row]} of compare's text output."""
    out, title, width = {}, None, None
    for line in text.splitlines():
        if line.startswith("per "):
            title = line
            out[title] = []
        elif title and line.startswith("  name "):
            width = len("  name ") + len(line[len("  name "):]) - len(line[len("  name "):].lstrip())
        elif title and width and line.startswith("  ") and not line.startswith(
                ("  ...", "  (#", "  #", "  all ", "  kernel time in no HLO op")):
            out[title].append(line[2:width - 1].rstrip())
    return out


def test_long_names_that_differ_at_the_end_print_apart(tmp_path):
    # XLA numbers the fusions of a module: names 48 to 55 characters long that differ only at
    # their end (".1") or in their module's middle (back/forward). Cut to 37 characters and
    # "...", they printed alike: "jit__sparse_forward_project:input_sca..." twice.
    ops = [_op(m, o, 1e-6 * (i + 1), 1, 100)
           for i, (m, o) in enumerate([
               ("jit__sparse_forward_project", "input_scatter_fusion"),
               ("jit__sparse_forward_project", "input_scatter_fusion.1"),
               ("jit__sparse_forward_project", "custom-call.3"),
               ("jit__sparse_forward_project", "custom-call.4"),
               ("jit_sparse_back_project_fcn", "loop_dynamic_update_slice_fusion.1"),
               ("jit_sparse_forward_project_fcn", "loop_dynamic_update_slice_fusion.1"),
               ("jit__jit_compute_back_weights", "loop_cosine_divide_multiply_sine_fusion"),
               ("jit__jit_compute_back_weights" + "_x" * 30, "loop_cosine_divide_multiply_sine_fusion"),
           ])]
    b = _summary([dict(o, total_s=o["total_s"] * 2, mean_s=o["mean_s"] * 2) for o in ops])
    r = _compare(tmp_path, _summary(ops), b)
    assert r.returncode == 0, r.stderr
    names = _name_column(r.stdout)["per HLO op (module:op), GPU time, sorted by |change|:"]
    assert len(names) == len(ops)
    assert len(set(names)) == len(names), names
    # names up to 60 characters show whole; a longer one keeps both its ends
    assert "jit__sparse_forward_project:input_scatter_fusion.1" in names
    assert "jit_sparse_forward_project_fcn:loop_dynamic_update_slice_fusion.1" not in names
    assert any(n.startswith("jit_sparse_f") and n.endswith(":loop_dynamic_update_slice_fusion.1")
               for n in names), names
    assert all(len(n) <= 60 for n in names), names
    assert "..." not in r.stdout
    # every row of the table stays aligned: the columns after the name start at one place
    lines = [x for x in r.stdout.splitlines() if x.startswith("  jit")]
    assert len({len(x) - len(x.lstrip()) for x in lines}) == 1
    assert len({x.index(" 1 ") if " 1 " in x else -1 for x in lines}) == 1


def test_kernels_shown_alike_are_marked_with_their_whole_names(tmp_path):
    # Two instances of one C++ template (cub's radix sort, ascending and descending) are both
    # "cub::…::DeviceSegmentedRadixSortKernel<…>" once shortened (kernel_display_name): no cut
    # tells them apart, so each row gets a mark and a line with its name as recorded.
    k1 = "_ZN3cub6detail4sort11RadixKernelILb1EEEvPi"
    k2 = "_ZN3cub6detail4sort11RadixKernelILb0EEEvPi"

    def with_kernels(t):
        s = _summary([])
        s["kernels"] = {"available": True, "rows_left_out": 0, "top": [
            {"name": k1, "demangled": "void cub::detail::sort::RadixKernel<true>(int*)",
             "count": 4, "timed_count": 4, "total_s": 4 * t, "mean_s": t},
            {"name": k2, "demangled": "void cub::detail::sort::RadixKernel<false>(int*)",
             "count": 2, "timed_count": 2, "total_s": 2 * t, "mean_s": t}]}
        return s
    r = _compare(tmp_path, with_kernels(1e-5), with_kernels(2e-5))
    assert r.returncode == 0, r.stderr
    names = _name_column(r.stdout)["per kernel (top kernels only), GPU time, sorted by |change|:"]
    assert sorted(names) == ["cub::…::RadixKernel<…> #1", "cub::…::RadixKernel<…> #2"], names
    lines = r.stdout.splitlines()
    # k1 changes most (4 runs): first, #1
    assert f"  #1: {k1}" in lines and f"  #2: {k2}" in lines
    assert next(x for x in lines if "#1 " in x).split()[2:4] == ["4", "4"]
    # --json keeps the recorded names and the shown one
    doc = json.loads(_compare(tmp_path, with_kernels(1e-5), with_kernels(2e-5), "--json").stdout)
    assert {x["name"] for x in doc["rows"] if x["kind"] == "kernel"} == {k1, k2}


def test_a_mark_never_makes_two_names_alike(tmp_path):
    # Two region paths of 61 characters that differ only in their middle read alike once cut
    # to 60 ("PPP…PPP"); the first is marked "PPP…PPP #1". A third path that is that very
    # text must not then read like it: the rows alike again get new marks.
    p_a, p_b = "P" * 30 + "a" + "P" * 30, "P" * 30 + "b" + "P" * 30
    p_c = "P" * 28 + "…" + "P" * 28 + " #1"

    def regions(scale):
        s = _summary([])
        s["regions"]["items"] = [
            {"path": p, "name": p, "count": 1, "wall_s": t * scale}
            for p, t in ((p_a, 3e-3), (p_b, 2e-3), (p_c, 1e-3))]
        return s
    r = _compare(tmp_path, regions(1), regions(2))
    assert r.returncode == 0, r.stderr
    names = _name_column(r.stdout)["per region (path), wall time, sorted by |change|:"]
    assert len(names) == 3 and len(set(names)) == 3, names
    assert all(len(n) <= 60 for n in names), names
    notes = [x for x in r.stdout.splitlines() if x.startswith("  #")]
    assert {x.split(": ", 1)[1] for x in notes} == {p_a, p_b, p_c}, notes


def test_an_op_none_of_whose_runs_was_timed_has_no_mean(tmp_path):
    # A counter replay leaves some kernel runs without timestamps; summary.json's mean_s of an
    # op none of whose runs was timed is null (its total_s 0). compare read it as 0 s / 1 run
    # = "0 s" per run (the H200 XLA counters trace's input_scatter_fusion).
    untimed = {"module": "jit_f", "op": "input_scatter_fusion", "total_s": 0.0, "count": 1,
               "mean_s": None, "bytes": 100, "bound": "unknown"}
    timed = _op("jit_f", "input_scatter_fusion", 1.96e-3, 1, 100)
    r = _compare(tmp_path, _summary([untimed]), _summary([timed]), "--json")
    assert r.returncode == 0, r.stderr
    row = [x for x in json.loads(r.stdout)["rows"] if x["kind"] == "op"][0]
    assert row["mean_before_s"] is None and row["mean_ratio"] is None
    assert row["mean_after_s"] == pytest.approx(1.96e-3)
    # its 0 s is no time: the change is unknown (not +1.96 ms, which would top the table)
    assert row["change_s"] is None
    assert row["unknown"] == "A: none of its 1 runs was timed (a counter replay leaves runs without timestamps)"
    r = _compare(tmp_path, _summary([untimed]), _summary([timed]))
    line = next(x for x in r.stdout.splitlines() if x.startswith("  jit_f:")).split()
    # runs 1 1, GPU 0 s 1.96 ms, change ?, B/A –, mean – 1.96 ms, mean B/A –
    assert line[7:12] == ["?", "–", "–", "1.96", "ms"], line
    assert "(unknown: A: none of its 1 runs was timed" in r.stdout


def test_an_instance_without_timed_runs_does_not_halve_the_mean(tmp_path):
    # jit_add:loop_add_fusion in the H200 XLA counters trace: one compiled instance timed
    # (2.272 µs, 1 run), another not (0 s, 1 run, mean null). The op's mean is 2.272 µs over
    # its one timed run, not 2.272 µs / 2 runs.
    a = _summary([_op("jit_add", "loop_add_fusion", 2.272e-6, 1, 100),
                  {"module": "jit_add", "op": "loop_add_fusion", "total_s": 0.0, "count": 1,
                   "mean_s": None, "bytes": 100, "bound": "unknown"}])
    b = _summary([_op("jit_add", "loop_add_fusion", 1.92e-6, 2, 100)])
    r = _compare(tmp_path, a, b, "--json")
    row = [x for x in json.loads(r.stdout)["rows"] if x["kind"] == "op"][0]
    assert row["count_before"] == 2 and row["time_before_s"] == pytest.approx(2.272e-6)
    assert row["mean_before_s"] == pytest.approx(2.272e-6)
    assert row["mean_ratio"] == pytest.approx(0.96e-6 / 2.272e-6)
    # an instance never timed beside another never timed: no mean
    a2 = _summary([dict(a["ops"]["items"][1]), dict(a["ops"]["items"][1])])
    row = [x for x in json.loads(_compare(tmp_path, a2, b, "--json").stdout)["rows"]
           if x["kind"] == "op"][0]
    assert row["count_before"] == 2 and row["mean_before_s"] is None


def test_instances_merge_by_their_timed_counts_not_time_over_mean(tmp_path):
    # Instance 1 ran twice: one run timed (10 us), the other only partly (one of its kernels,
    # 6 us), so total 16 us, mean 10 us over 1 timed run. Instance 2: one run, 4 us. The op's
    # mean is over its 2 timed runs: (10 + 4) / 2 = 7 us. Time over mean (1.6 -> 2 runs) gave
    # 20 us / 3 = 6.67 us.
    a = _summary([{"module": "jit_f", "op": "fusion", "total_s": 16e-6, "count": 2,
                   "timed_count": 1, "mean_s": 10e-6, "bytes": 100, "bound": "memory"},
                  {**_op("jit_f", "fusion", 4e-6, 1, 100), "timed_count": 1}])
    b = _summary([_op("jit_f", "fusion", 3.5e-6, 1, 100)])
    r = _compare(tmp_path, a, b, "--json")
    assert r.returncode == 0, r.stderr
    row = [x for x in json.loads(r.stdout)["rows"] if x["kind"] == "op"][0]
    assert row["count_before"] == 3 and row["time_before_s"] == pytest.approx(20e-6)
    assert row["mean_before_s"] == pytest.approx(7e-6)
    assert row["mean_ratio"] == pytest.approx(0.5)
    # a timed_count that is not a whole number is refused as malformed
    a["ops"]["items"][0]["timed_count"] = -1
    r = _compare(tmp_path, a, b)
    assert r.returncode == 1 and "ops.items[0].timed_count" in r.stderr, r.stderr


def test_a_ratio_below_a_tenth_is_not_printed_as_zero(tmp_path):
    # a region of 21.216 s (a counter replay) against 22.05 ms: B/A 0.00104, printed "0.00x"
    a = _summary([_op("jit_f", "fusion", 21.216, 1, 100)])
    b = _summary([_op("jit_f", "fusion", 22.05e-3, 1, 100)])
    r = _compare(tmp_path, a, b)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("  jit_f:fusion")).split()
    assert "0.00x" not in line and line.count("0.0010x") == 2, line


def test_only_the_op_table_heads_a_bound_column():
    """Regions, kernels and transfer directions have no bound: their headers end with their
    last column, not with a "bound A→B" over nothing (as it stood after the empty bytes
    columns)."""
    import os

    traces = os.path.join(os.path.dirname(__file__), "..", "data", "traces")
    a, b = (os.path.join(traces, f"mbirjax073_parallel_128_{v}_h200.fpgaprof") for v in ("xla", "pallas"))
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "compare", a, b, "--limit", "1"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    heads = [ln for ln in r.stdout.splitlines() if ln.startswith("  name ")]
    assert len(heads) == 4  # ops, regions, kernels, transfer directions
    assert heads[0].endswith("  bound A→B")
    assert not any("bound" in h for h in heads[1:])
    assert all(h == h.rstrip() for h in heads)


def test_a_line_break_in_a_file_name_prints_no_header_line_of_its_own(tmp_path):
    # A file named "x\nB: fake  whole-program wall time 1.00 ms.json" printed that as a second
    # "B:" header line with a wall time of its choosing
    a = tmp_path / "x\nB: fake  whole-program wall time 1.00 ms.json"
    a.write_text(json.dumps(_summary([_op("jit_a", "fusion", 1e-6, 1, 8)], wall=2.0)))
    b = tmp_path / "b.json"
    b.write_text(json.dumps(_summary([_op("jit_a", "fusion", 1e-6, 1, 8)], wall=3.0)))
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "compare", str(a), str(b)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("A: ") and "\\x0a" in lines[0], lines[:3]
    assert [x for x in lines if x.startswith("B: ")] == [lines[1]]
    assert lines[1].endswith("whole-program wall time 3.000 s"), lines[1]
    # --json keeps the path as data
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "compare", str(a), str(b), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert json.loads(r.stdout)["a"] == str(a)


def test_one_op_name_from_two_source_files_is_no_change_of_one_op(tmp_path):
    # MBIRJAX 0.6.17 at 64^3 and at 128^3 (the saved H100 traces): XLA named two different
    # ops jit_sparse_back_project_fcn:loop_add_fusion.1 (parallel_beam.py:320, 24,960 B per run;
    # projectors.py:267, 8 B per run). Compare read "2.4 us -> 8.1 us, 3.39x, mean 0.56x".
    a = _summary([dict(_op("jit_f", "loop_add_fusion.1", 2.4e-6, 1, 24_960, "latency"),
                       source="/site/mbirjax/parallel_beam.py:320"),
                  dict(_op("jit_f", "fusion", 1e-6, 1, 8), source="/site/mbirjax/a.py:10")])
    b = _summary([dict(_op("jit_f", "loop_add_fusion.1", 8.127e-6, 6, 8, "latency"),
                       source="/site/mbirjax/projectors.py:267"),
                  # the same file at another line and in another install: the same op
                  dict(_op("jit_f", "fusion", 3e-6, 1, 8), source="/home/u/venv/mbirjax/a.py:12")])
    r = _compare(tmp_path, a, b, "--json")
    assert r.returncode == 0, r.stderr
    rows = {x["name"]: x for x in json.loads(r.stdout)["rows"] if x["kind"] == "op"}
    row = rows["loop_add_fusion.1"]
    assert row["change_s"] is None and row["change_ratio"] is None and row["mean_ratio"] is None
    assert "not the same op" in row["unknown"]
    assert "parallel_beam.py" in row["unknown"] and "projectors.py" in row["unknown"]
    assert row["time_before_s"] == 2.4e-6 and row["time_after_s"] == 8.127e-6  # both kept
    same = rows["fusion"]
    assert same["unknown"] is None and same["change_ratio"] == pytest.approx(3.0)
    r = _compare(tmp_path, a, b)
    line = [x for x in r.stdout.splitlines() if "loop_add_fusion.1" in x][0]
    assert " ? " in line and "not the same op" in line and "3.39x" not in line


def test_each_table_says_what_it_adds_up_to_and_what_matched(tmp_path):
    # A: ops jit_a:f 3 us and jit_a:g 1 us of 10 us of kernel time (6 us in kernels no op
    # launched: autotuning's, a library's); B: jit_b:f 2 us of 2 us. Module names changed (as
    # MBIRJAX 0.6 -> 0.7 renamed jit_sparse_back_project_fcn to jit__sparse_back_project), so
    # nothing matches: the table's rows were all "absent" on one side with no line saying so,
    # and A's 6 us were in no row.
    a = _summary([_op("jit_a", "f", 3e-6, 1, 8), _op("jit_a", "g", 1e-6, 1, 8)])
    a["totals"] = {"kernel_time_s": 10e-6}
    b = _summary([_op("jit_b", "f", 2e-6, 1, 8)])
    b["totals"] = {"kernel_time_s": 2e-6}
    r = _compare(tmp_path, a, b, "--json")
    t = json.loads(r.stdout)["totals"]["op"]
    assert t["time_before_s"] == pytest.approx(4e-6) and t["time_after_s"] == pytest.approx(2e-6)
    assert (t["matched"], t["a_only"], t["b_only"]) == (0, 2, 1)
    assert t["a_only_s"] == pytest.approx(4e-6) and t["b_only_s"] == pytest.approx(2e-6)
    assert t["not_in_an_op_before_s"] == pytest.approx(6e-6) and t["not_in_an_op_after_s"] == 0
    text = _compare(tmp_path, a, b, "--limit", "1").stdout
    assert "  all 3 rows: A 4.0 µs, B 2.0 µs; on both sides 0, A only 2 (4.0 µs), B only 1 (2.0 µs)" in text
    assert "kernel time in no HLO op (not in the rows above; see the kernel table): A 6.0 µs, B 0 s" in text


def test_the_totals_count_each_row_once(tmp_path):
    # jit_f:loop_add_fusion.1 is on both sides but from two source files, so its change is
    # unknown ("not the same op"); jit_f:g is on both sides with a known change. Two rows: one
    # matched, one unknown, and the counts add up to the rows (not "on both sides 2 ...
    # unknown 1" of 2 rows).
    a = _summary([dict(_op("jit_f", "loop_add_fusion.1", 2e-6, 1, 8), source="/x/parallel_beam.py:320"),
                  dict(_op("jit_f", "g", 1e-6, 1, 8), source="/x/a.py:1")])
    b = _summary([dict(_op("jit_f", "loop_add_fusion.1", 8e-6, 1, 8), source="/x/projectors.py:267"),
                  dict(_op("jit_f", "g", 1e-6, 1, 8), source="/x/a.py:1")])
    r = _compare(tmp_path, a, b, "--json")
    assert r.returncode == 0, r.stderr
    t = json.loads(r.stdout)["totals"]["op"]
    assert (t["matched"], t["a_only"], t["b_only"], t["unknown"]) == (1, 0, 0, 1)
    text = _compare(tmp_path, a, b).stdout
    assert "  all 2 rows: A 3.0 µs, B 9.0 µs; on both sides 1, A only 0 (0 s), B only 0 (0 s), unknown 1" in text
