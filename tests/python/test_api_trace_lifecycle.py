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
