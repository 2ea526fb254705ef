"""The life of a fpgaprof.trace() block in the ways scripts and notebooks use it: a trace
object entered twice, an interrupt while the trace is being finished, a process forked from a
tracing one, a block opened off the main thread, a region decorator on a function whose body
runs later, and arguments that are wrong. No GPU: host-only traces (regions and wall time)."""
import asyncio
import os
import threading
import time
import warnings

import pytest

import fpgaprof
from fpgaprof import InvalidArgumentError, ProfilerConflictError

H200 = os.path.join(os.path.dirname(__file__), "..", "data", "traces",
                    "mbirjax073_parallel_128_xla_h200.fpgaprof")


def _regions(prof):
    return sorted(set(prof.regions.columns()["name"].tolist()))


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_a_trace_object_entered_twice_gives_two_profiles(tmp_path):
    """A notebook keeps `t = fpgaprof.trace(path)` in one cell and runs `with t as prof:` again:
    the first Profile must keep the first trace (before, it was re-attached to the second)."""
    t = fpgaprof.trace(str(tmp_path / "t.fpgaprof"))
    with t as first:
        with fpgaprof.region("first"):
            pass
    with t as second:
        with fpgaprof.region("second"):
            pass
    assert first is not second
    assert _regions(first) == ["first"]
    assert _regions(second) == ["second"]
    assert _regions(fpgaprof.load(str(tmp_path / "t.fpgaprof"))) == ["second"]


def test_an_interrupt_while_the_trace_finishes_keeps_the_records(tmp_path, monkeypatch):
    """Ctrl-C after the capture stopped but before the save (correlation, HLO, environment,
    saving a large trace): the interrupt propagates, no file is half written, and prof holds
    the records (prof.save writes them), instead of saying that the trace still runs."""
    import fpgaprof.api.trace as trace_module

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(trace_module, "meta_environment", interrupted)
    path = tmp_path / "t.fpgaprof"
    with pytest.raises(KeyboardInterrupt):
        with fpgaprof.trace(str(path)) as prof:
            with fpgaprof.region("work"):
                time.sleep(0.01)
    assert not path.exists()
    assert prof.ready
    assert _regions(prof) == ["work"]
    saved = prof.save(str(tmp_path / "kept.fpgaprof"))
    assert _regions(fpgaprof.load(saved)) == ["work"]
    monkeypatch.undo()
    with fpgaprof.trace() as after:  # the next trace starts normally
        pass
    assert after.ready


def test_a_process_forked_inside_a_trace_is_told_it_cannot_trace():
    """A multiprocessing 'fork' worker (or os.fork) of a tracing process inherits the trace's
    state: its own fpgaprof.trace() must say that it was forked and how to start workers that
    can trace, not that a trace is nested in "this process"."""
    r, w = os.pipe()
    with fpgaprof.trace():
        pid = os.fork()
        if pid == 0:  # the child
            os.close(r)
            try:
                with fpgaprof.trace():
                    pass
                msg = "no error"
            except ProfilerConflictError as e:
                msg = str(e)
            except BaseException as e:  # noqa: BLE001 - reported to the parent
                msg = f"{type(e).__name__}: {e}"
            os.write(w, msg.encode())
            os._exit(0)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            msg = f.read().decode()
        os.waitpid(pid, 0)
    assert "forked from one that is tracing" in msg, msg
    assert "'spawn'" in msg and "multiprocessing" in msg


def test_a_child_forked_inside_the_block_leaves_it_without_stopping_or_saving(tmp_path):
    """os.fork() inside the block, and the child runs on out of it: the child must not stop the
    parent's capture (CUPTI, the driver and the collector's locks are the parent's) nor write
    the parent's file; it says so, a trace it starts after is told it was forked from a tracing
    process, and the parent's trace is saved whole. The parent waits in the block until the
    child has left it."""
    path = tmp_path / "t.fpgaprof"
    r, w = os.pipe()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with fpgaprof.trace(str(path)) as prof:
            with fpgaprof.region("before the fork"):
                pass
            pid = os.fork()
            if pid != 0:
                os.close(w)
                with os.fdopen(r, "rb") as f:
                    msg = f.read().decode()  # the child has left the block by now
                os.waitpid(pid, 0)
    if pid == 0:  # the child, out of the block
        try:
            said = [str(x.message) for x in seen if "forked inside the traced block" in str(x.message)]
            msg = f"file={path.exists()} ready={prof.ready} said={len(said)}"
            msg += f" names_parent={str(os.getppid()) in said[0]}" if said else ""
            try:
                with fpgaprof.trace():
                    pass
                msg += " next=traced"
            except ProfilerConflictError as e:
                msg += f" next={'forked from one that is tracing' in str(e)}"
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            msg = f"{type(e).__name__}: {e}"
        os.write(w, msg.encode())
        os._exit(0)
    assert msg == "file=False ready=False said=1 names_parent=True next=True", msg
    assert prof.ready
    assert _regions(fpgaprof.load(str(path))) == ["before the fork"]
    with fpgaprof.trace() as after:  # the parent traces again: its own session has ended
        pass
    assert after.ready


def test_a_trace_opened_off_the_main_thread_says_it_is_not_saved_on_sigterm(tmp_path):
    """Python takes signals on the main thread only: a trace(path) opened in a worker thread
    cannot save itself on SIGTERM/SIGHUP, and must say so (before, it said nothing)."""
    got = {}

    def body():
        with fpgaprof.trace(str(tmp_path / "t.fpgaprof")) as prof:
            pass
        got["prof"] = prof

    th = threading.Thread(target=body)
    th.start()
    th.join()
    said = [w for w in got["prof"].warnings if "SIGTERM/SIGHUP" in w]
    assert len(said) == 1 and "outside the main thread" in said[0], got["prof"].warnings
    with fpgaprof.trace(str(tmp_path / "main.fpgaprof")) as main:
        pass
    assert not [w for w in main.warnings if "SIGTERM/SIGHUP" in w]


def test_region_decorator_refuses_functions_whose_body_runs_later():
    """On an async or generator function the region would close when the call returns, before
    the body runs (a region of ~0 ms): refused, with the fix."""

    async def coro():
        await asyncio.sleep(0)

    def gen():
        yield 1

    async def agen():
        yield 1

    for fn in (coro, gen, agen):
        with pytest.raises(InvalidArgumentError, match="put `with fpgaprof.region"):
            fpgaprof.region("r")(fn)
        with pytest.raises(InvalidArgumentError, match="async or generator"):
            fpgaprof.region(fn)

    @fpgaprof.region("plain")
    def plain(x):
        return x + 1

    assert plain(1) == 2


def test_wrong_arguments_are_typed_errors_with_the_fix(tmp_path):
    for kwargs, text in (({"buffer_size": 10}, "4096 bytes to 1,073,741,824"),
                         ({"buffer_size": "big"}, "4096"),
                         # past 1 GiB: before, it reached CUPTI's buffer request and failed there
                         ({"buffer_size": 1 << 50}, "got 1125899906842624"),
                         ({"power_sample_ms": -1}, "0.1 to 60000")):
        with pytest.raises(InvalidArgumentError, match=text):
            fpgaprof.trace(**kwargs)
    prof = fpgaprof.load(H200)
    with pytest.raises(InvalidArgumentError, match="'op', 'region', 'region_instance'"):
        prof.roofline(by="x")
    with pytest.raises(InvalidArgumentError, match="unknown option foo: the analysis options are target"):
        prof.fpga_candidates("alveo-u55c", foo=1)
    with pytest.raises(InvalidArgumentError, match="unknown options bar, foo"):
        prof.transfer_report(foo=1, bar=2)
    with pytest.raises(InvalidArgumentError, match="top is how many rows"):
        prof.summary(top="a")
    with pytest.raises(InvalidArgumentError, match="the path is empty"):
        prof.save("")


def test_notebook_tables_show_their_footer():
    """Jupyter renders a table through _repr_html_: the lines print() shows under the rows (the
    answer, the designer's-target caveat, totals) must be there too, escaped."""
    prof = fpgaprof.load(H200)
    t = prof.fpga_candidates("alveo-u55c", row_imbalance=4.0)
    assert t.footer.strip()
    html = t._repr_html_()
    for line in t.footer.strip().splitlines():
        frag = line.strip()[:40].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        frag = frag.replace('"', "&quot;").replace("'", "&#x27;")
        assert frag in html, line


@pytest.mark.parametrize("path", ["", "not_made_yet/"])
def test_a_path_that_cannot_name_a_trace_file_is_refused_before_the_body_runs(path, tmp_path,
                                                                               monkeypatch):
    """trace("") (an unset $OUT) and trace("out/") (a folder not made yet) passed the entry
    check (abspath() makes "" the working folder and drops the "/") and failed only at the save,
    after the body had run: the docstring promises the check "when the block is entered"."""
    monkeypatch.chdir(tmp_path)
    ran = []
    with pytest.raises(InvalidArgumentError, match="empty|names a folder"):
        with fpgaprof.trace(path):
            ran.append(1)
    assert ran == []
    assert not fpgaprof.api.trace.active()


def test_printed_roofline_rows_say_which_kernel_or_region_instance_they_are():
    """print(prof.roofline(by="kernel")) showed time, FLOPs, bytes ... but not the kernel's
    name (no "kernel" in TEXT_FIRST): 37 rows nobody could tell apart. by="region_instance"
    showed only the region's name, so a loop's instances (or one name under two parents) read
    as the same row."""
    prof = fpgaprof.load(H200)
    t = prof.roofline(by="kernel")
    text = str(t)
    head = text.splitlines()[1]
    assert head.split()[0] == "kernel", head
    assert t[0]["kernel"][:30] in text
    html_head = t._repr_html_().split("<thead><tr>")[1]
    assert html_head.startswith("<th>kernel</th>"), html_head[:80]
    import sys
    sys.path.insert(0, os.path.dirname(__file__))
    import _constructed_trace
    ri = _constructed_trace.profile().roofline(by="region_instance")
    lines = str(ri).splitlines()
    assert lines[1].split()[:3] == ["region", "index", "path"], lines[1]
    assert "step > load" in str(ri)


def test_an_empty_analysis_table_gives_a_dataframe_with_its_columns(tmp_path):
    """A trace without kernels (no GPU, a failed run) gave prof.ops/roofline()/fpga_candidates()
    .to_pandas() with no columns at all, so a script's df.sort_values("score") or
    df["total_ns"] raised KeyError there only; record tables (prof.kernels) keep theirs."""
    pytest.importorskip("pandas")
    with fpgaprof.trace() as empty:
        with fpgaprof.region("r"):
            pass
    full = fpgaprof.load(H200)
    for get in (lambda p: p.ops, lambda p: p.roofline(), lambda p: p.roofline(by="kernel"),
                lambda p: p.roofline(by="region"), lambda p: p.roofline(by="region_instance"),
                lambda p: p.fpga_candidates(), lambda p: p.fpga_candidates(by="region")):
        t = get(empty)
        assert len(t) == 0
        df = t.to_pandas()
        assert len(df) == 0
        want = set(get(full).to_pandas().columns)
        assert want <= set(df.columns), sorted(want - set(df.columns))
        assert set(t.columns()) == set(df.columns)
    assert list(empty.fpga_candidates().to_pandas().sort_values("score")["op"]) == []


def test_summary_rows_stay_one_line_each_with_a_line_break_in_a_name():
    """prof.summary() kept newlines in names (terminal_safe(..., keep="\\n") over the whole
    text), so a region named "load\\nstep" or a kernel name with a newline broke its row in two;
    print(prof.roofline(...)) already shows them escaped (tables.text_cell)."""
    with fpgaprof.trace() as prof:
        with fpgaprof.region("zzload\nzzstep 2\x1b[31m"):
            pass
    text = prof.summary()
    rows = [ln for ln in text.splitlines() if "zz" in ln]
    assert len(rows) == 1 and "zzload\\x0azzstep 2\\x1b[31m" in rows[0], rows


def test_export_hlo_says_to_pass_the_program_id_when_module_names_repeat(tmp_path):
    """A sweep compiles one jitted function several times: modules of one name, several program
    ids. export_hlo(op, path, module=<that name>) said "pass module=<name or program id>", and
    passing the name (as prof.ops gives it) failed again the same way."""
    sweep = os.path.join(os.path.dirname(H200), "mbirjax_sweep_32_64_run_h100.fpgaprof")
    prof = fpgaprof.load(sweep)
    op = next(o for o in prof.ops if o.hlo_op == "wrapped_sqrt")
    with pytest.raises(InvalidArgumentError, match=r"module=<program id>.*'jit_sqrt'"):
        prof.export_hlo(op.hlo_op, str(tmp_path / "a.hlo"), module=op.module_name)
    text = prof.export_hlo(op.hlo_op, str(tmp_path / "a.hlo"), module=op.program_id)
    assert "ENTRY" in text
    with pytest.raises(InvalidArgumentError, match="the path is empty"):
        prof.export_hlo(op.hlo_op, "", module=op.program_id)


def test_regions_interleaved_by_asyncio_tasks_are_not_silently_wrong(tmp_path):
    """README: put `with fpgaprof.region(...)` inside an async function. Two tasks doing so
    interleave on one thread: "first" (100 ms) ends while "second" (opened after it) is open,
    and the core's per-thread stack ends "second" instead — recorded: first ~350 ms, second
    ~50 ms nested in first, no warning. At least a warning must say the times are wrong."""
    import asyncio

    async def work(name, before, inside):
        await asyncio.sleep(before)
        with fpgaprof.region(name):
            await asyncio.sleep(inside)

    async def main():
        await asyncio.gather(work("first", 0, 0.05), work("second", 0.02, 0.15))

    path = str(tmp_path / "t.fpgaprof")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with fpgaprof.trace(path):
            asyncio.run(main())
    said = [str(w.message) for w in caught if "nesting and GPU work are wrong" in str(w.message)]
    assert len(said) == 1, [str(w.message) for w in caught]
    # and saved with the trace, so the report of the file says it too
    codes = [d["code"] for d in fpgaprof.load(path).diagnostics]
    assert codes.count("capture.regions_out_of_order") == 1, codes
    # properly nested regions (and sequential tasks) say nothing
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with fpgaprof.trace():
            with fpgaprof.region("a"):
                with fpgaprof.region("b"):
                    pass
            asyncio.run(work("c", 0, 0.001))
    assert not [w for w in caught if "GPU work are wrong" in str(w.message)]


def test_export_hlo_inside_fpgaprof_run_says_where_the_modules_will_be():
    """Inside `fpgaprof run`, trace() gives a NestedProfile whose tables say the records are in
    the run's trace; export_hlo said "this trace holds no HLO modules: trace a jitted JAX
    function" although the function was jitted and its modules are in the run's trace."""
    from fpgaprof.api.trace import NestedProfile

    prof = NestedProfile("blk", "/runs/out/trace.fpgaprof", None, [])
    with pytest.raises(fpgaprof.FpgaprofError, match=r"/runs/out/trace.fpgaprof") as e:
        prof.export_hlo("fusion.3", "f.hlo")
    assert "trace a jitted" not in str(e.value)


@pytest.mark.parametrize("exc", [KeyboardInterrupt, ValueError])
def test_a_block_cut_short_by_an_exception_says_so_in_the_saved_trace(exc, tmp_path):
    """A Ctrl-C or an error in the body: the trace is saved (good) but read back it looked
    like a complete run — no warning, so summary(), report.html and a comparison took a half
    run for the whole workload. capture.interrupted's own description names "an exception";
    a SIGTERM already gets "the program was ended by SIGTERM: the trace covers it up to then"."""
    path = str(tmp_path / "t.fpgaprof")
    with pytest.raises(exc):
        with fpgaprof.trace(path):
            raise exc("stopped at step 3")
    prof = fpgaprof.load(path)
    codes = [d["code"] for d in prof.diagnostics]
    assert "capture.interrupted" in codes, codes
    assert exc.__name__ in prof.summary()
    with fpgaprof.trace(path):
        pass
    assert "capture.interrupted" not in [d["code"] for d in fpgaprof.load(path).diagnostics]


def test_numpy_numbers_are_taken_as_the_numbers_they_are():
    """buffer_size=np.int64(8 << 20) and power_sample_ms=np.float32(2.0) were refused with
    "must be an int of 4096 bytes to 1,073,741,824 (1 GiB), got np.int64(8388608)": a message
    whose value is in range, so it names no cause. numpy scalars are ints and floats."""
    np = pytest.importorskip("numpy")
    t = fpgaprof.trace(buffer_size=np.int64(8 << 20), power_sample_ms=np.float32(2.0))
    assert t.buffer_size == 8 << 20 and type(t.buffer_size) is int
    assert t.power_sample_ns == 2_000_000
    with pytest.raises(InvalidArgumentError):
        fpgaprof.trace(buffer_size=np.bool_(True))
    with pytest.raises(InvalidArgumentError):
        fpgaprof.trace(power_sample_ms=np.float64("nan"))


def test_a_relative_path_is_saved_where_it_was_checked(tmp_path, monkeypatch):
    """trace("rel.fpgaprof") probed the working folder at entry but saved relative to the
    working folder at exit: a body that changes folder (os.chdir in a data loader) put the
    file elsewhere, and prof.path ("rel.fpgaprof") no longer led to it."""
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    with fpgaprof.trace("rel.fpgaprof") as prof:
        os.chdir("sub")
    os.chdir(tmp_path)
    assert (tmp_path / "rel.fpgaprof").is_file()
    assert not (tmp_path / "sub" / "rel.fpgaprof").exists()
    assert fpgaprof.load(prof.path) == prof


def test_an_unknown_static_cost_reads_as_a_dash_in_print_and_in_jupyter():
    """An op whose static cost is unknown (no HLO for its module: has_cost False) printed
    "0" FLOPs/exec and "0 B" bytes/exec in print(prof.ops), and its roofline row's Jupyter HTML
    showed 0 FLOPs, 0 B, intensity 0 and 0 % of roof, while print(prof.roofline()) showed "–"
    ("a 0 there is no measured zero when the cost is unknown", views/tables.py)."""
    import re

    import _constructed_trace  # its ops' modules have no HLO text: no static cost

    prof = _constructed_trace.profile()
    op = next(o for o in prof.ops if not o.has_cost and o.flops == 0)

    def html_row(table):
        return next(r for r in table._repr_html_().split("<tr>") if f">{op.hlo_op}<" in r)

    printed = next(ln for ln in str(prof.ops).splitlines() if ln.strip().startswith(op.hlo_op))
    assert " 0 B" not in printed and "–" in printed, printed
    cells = re.findall(r"<td>(.*?)</td>", html_row(prof.roofline()))
    assert cells[2:6] == ["–"] * 4, cells[:8]  # FLOPs, bytes, intensity, percent of roof
    cells = re.findall(r"<td>(.*?)</td>", html_row(prof.ops))
    assert cells[5:7] == ["–", "–"], cells[:8]  # FLOPs/exec, bytes/exec
