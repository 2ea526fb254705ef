"""`fpgaprof run` on scripts that trace themselves (`with fpgaprof.trace():`), through the real
CLI with the libcupti test double (tests/fake_cupti), and runs that end without a normal
interpreter exit (os._exit, SIGTERM).

The fake's records for FAKE_CUPTI_KERNELS=8 on one simulated thread (fake_cupti.hpp):
  8 kernels loop_fusion_0..3; HtoD at i = 0, 4: 4096 x (1 + 5) = 24576 bytes; DtoH at i = 0:
  1024 bytes. The script emits them inside its own trace block, so all of them fall in the
  region that block becomes."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import fpgaprof
from _store_builder import store_from_lists

fake = pytest.importorskip("_fake_cupti")

NESTED = textwrap.dedent("""
    import ctypes, os, sys, time
    import fpgaprof
    lib = ctypes.CDLL(os.environ["FPGAPROF_CUPTI_LIBRARY"])
    with fpgaprof.region("before"):
        time.sleep(0.01)
    with fpgaprof.trace(sys.argv[1], name="inner") as prof:
        lib.fake_cupti_emit()
        time.sleep(0.05)
    print("wall_ms", prof.wall_time_ns / 1e6)
    print("summary:", prof.summary().strip())
    print("kernels", len(prof.kernels), "ready", prof.ready)
    print("ops:", str(prof.ops).strip().replace("\\n", " | "))
    print("cands:", str(prof.fpga_candidates("alveo-u55c")).strip().replace("\\n", " | "))
    print("roof:", str(prof.roofline(by="region")).strip().replace("\\n", " | "))
    print("trace_point:", type(prof.roofline(by="trace")).__name__)
    try:
        prof.save("never.fpgaprof")
    except fpgaprof.FpgaprofError as e:
        print("save:", e)
    with fpgaprof.trace() as second:  # unnamed: region "trace"
        time.sleep(0.01)
    print("second", type(second).__name__, second.region_name)
""")


def fp(*args, extra_env=None, timeout=300):
    env = dict(os.environ)
    env.pop("FPGAPROF_RUN_DIR", None)
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-m", "fpgaprof.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def nested_run(tmp_path_factory):
    lib = fake.need_fake()
    d = tmp_path_factory.mktemp("nested")
    script = d / "self_tracing.py"
    script.write_text(NESTED)
    out = d / "out"
    inner = d / "inner.fpgaprof"
    r = fp("run", "-o", str(out), "--", sys.executable, str(script), str(inner),
           extra_env={"FPGAPROF_CUPTI_LIBRARY": lib, "FAKE_CUPTI_SCENARIO": "kernels",
                      "FAKE_CUPTI_KERNELS": "8", "FAKE_CUPTI_THREADS": "1",
                      "PYTHONWARNINGS": "default"})
    return out, inner, r


def test_script_that_traces_itself_runs_and_exits_0(nested_run):
    out, inner, r = nested_run
    assert r.returncode == 0, r.stderr
    assert "ProfilerConflictError" not in r.stderr and "Traceback" not in r.stderr
    # one warning per nested block, naming the region and the run's trace
    warns = [ln for ln in r.stderr.splitlines() if "FpgaprofWarning: fpgaprof.trace() inside" in ln]
    assert len(warns) == 2, r.stderr
    assert "region 'inner'" in warns[0] and str(out / "trace.fpgaprof") in warns[0]
    assert f"{inner} receives a copy of the run's trace" in warns[0]
    assert "region 'trace'" in warns[1]
    # after the block: wall time (slept 50 ms), a summary that says where the records are, and
    # empty tables (the records arrive when the program ends) whose note says where they are,
    # so that a script written for a plain trace() runs on
    wall = float(next(ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("wall_ms")))
    assert 50 <= wall < 5000
    assert "summary: fpgaprof.trace region 'inner' inside `fpgaprof run`" in r.stdout
    assert "kernels 0 ready False" in r.stdout
    where = (f"no rows (inside `fpgaprof run`: this block is region 'inner' of the run's trace, "
             f"written to {out / 'trace.fpgaprof'} when the program ends")
    for table in ("ops:", "cands:", "roof:"):
        line = next(ln for ln in r.stdout.splitlines() if ln.startswith(table))
        assert where in line, line
    assert "trace_point: dict" in r.stdout
    assert (f"save: nothing to save yet: this fpgaprof.trace() ran inside `fpgaprof run`, whose "
            f"trace holds its records (region 'inner') and is written to "
            f"{out / 'trace.fpgaprof'} when the program ends") in r.stdout
    assert str(out / "trace.fpgaprof") in r.stdout
    assert "second NestedProfile trace" in r.stdout


def test_the_block_is_a_region_of_the_run_trace_holding_its_records(nested_run):
    out, inner, r = nested_run
    prof = fpgaprof.load(str(out / "trace.fpgaprof"))
    names = [x.name for x in prof.regions]
    assert names == ["before", "inner", "trace"]
    k = prof.kernels.columns()
    assert len(k["start_ns"]) == 8
    inner_index = names.index("inner")
    assert [int(x) for x in k["region_index"]] == [inner_index] * 8
    t = prof.transfers.columns()
    by_kind = {}
    for kind, b, reg in zip(t["copy_kind"], t["bytes"], t["region_index"]):
        assert int(reg) == inner_index
        by_kind[str(kind)] = by_kind.get(str(kind), 0) + int(b)
    assert by_kind == {"HtoD": 24576, "DtoH": 1024}
    # reports were written as for any run
    assert (out / "report.html").is_file() and (out / "summary.json").is_file()


def test_the_inner_path_gets_a_copy_of_the_run_trace(nested_run):
    out, inner, r = nested_run
    assert inner.is_file()
    assert fpgaprof.load(str(inner)) == fpgaprof.load(str(out / "trace.fpgaprof"))


def test_nested_trace_outside_run_still_conflicts():
    got = fake.run_traced("""
        with fpgaprof.trace() as outer:
            try:
                with fpgaprof.trace(name="x"):
                    pass
                nested = None
            except fpgaprof.ProfilerConflictError as e:
                nested = str(e)
        done({"nested": nested})
    """, kernels=4)
    assert "already running" in got["nested"]


ENDS = textwrap.dedent("""
    import os, signal, sys, time
    import fpgaprof
    with fpgaprof.region("work"):
        time.sleep(0.01)
    sys.stdout.flush()
    if sys.argv[1] == "os_exit":
        os._exit(7)
    os.kill(os.getpid(), signal.SIGKILL)  # (SIGTERM saves the trace: test_cli_run.py)
    time.sleep(30)
""")


@pytest.mark.parametrize("how,code", [("os_exit", 7), ("sigkill", 128 + signal.SIGKILL)])
def test_abrupt_end_is_explained(tmp_path, how, code):
    script = tmp_path / "ends.py"
    script.write_text(ENDS)
    out = tmp_path / "out"
    r = fp("run", "-o", str(out), "--", sys.executable, str(script), how)
    assert r.returncode == code, r.stderr
    assert not (out / "trace.fpgaprof").exists()
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("fpgaprof run: no trace")]
    assert len(lines) == 1, r.stderr
    assert "ended without a normal interpreter exit" in lines[0]
    assert f"exit status {code}" in lines[0]
    assert "fpgaprof importable" not in lines[0]


def test_no_python_is_explained(tmp_path):
    out = tmp_path / "out"
    r = fp("run", "-o", str(out), "--", "sh", "-c", "exit 4")
    assert r.returncode == 4
    assert "without starting a Python that runs fpgaprof's bootstrap" in r.stderr


def test_marker_states(tmp_path):
    from fpgaprof.capture import runner

    assert runner.marker_state(str(tmp_path)) == "none"
    claim = tmp_path / runner.CLAIM_NAME
    claim.write_text("123")
    assert runner.marker_state(str(tmp_path)) == "claimed"
    claim.write_text("123\ntracing\n")
    assert runner.marker_state(str(tmp_path)) == "tracing"
    claim.write_text("123\ntracing\nsaved\n")
    assert runner.marker_state(str(tmp_path)) == "saved"
    claim.write_text("123\nnot-tracing\n")
    assert runner.marker_state(str(tmp_path)) == "not-tracing"


def test_results_asked_for_before_the_run_ends_are_recomputed_after_it():
    # A NestedProfile answers from an empty placeholder until the run's trace is attached;
    # what it answered then must not stick (the analysis cache belongs to the placeholder).
    from fpgaprof.base.core import core
    from fpgaprof.api.trace import NestedProfile

    prof = NestedProfile("blk", "/tmp/run/trace.fpgaprof", None, ["note"])
    assert len(prof.roofline(by="kernel")) == 0
    store = store_from_lists({
        "kernels": [{"name": "k", "start_ns": 100, "end_ns": 600},
                    {"name": "k", "start_ns": 700, "end_ns": 900}],
        "start_ns": 0, "end_ns": 1000})
    prof.attach(store, None)
    rows = list(prof.roofline(by="kernel"))
    assert [(r["kernel"], r["time_ns"]) for r in rows] == [("k", 700)]  # 500 + 200 ns
