"""`fpgaprof run` and the environment it reads, hostile input: the user's
PYTHONPATH and sitecustomize kept as they work without fpgaprof, GPU work of threads that
outlive the main thread, children subprocess forks only to exec, a save that fails, an exec,
a run inside a run, and odd FPGAPROF_SIGNAL_GRACE_S / FPGAPROF_MAX_TRACE_MEMORY values."""
import glob
import math
import os
import subprocess
import sys
import textwrap

import pytest

from _fake_cupti import need_fake

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

EMIT = "import ctypes, os\nctypes.CDLL(os.environ['FPGAPROF_CUPTI_LIBRARY']).fake_cupti_emit()\n"


def _env(**extra):
    env = dict(os.environ)
    for k in ("FPGAPROF_RUN_DIR", "FPGAPROF_RUN_TRACE"):
        env.pop(k, None)
    env.update(extra)
    return env


def run(tmp_path, code, *cmd_prefix, env=None, cwd=None):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(code))
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "fpgaprof", "run", "-o", str(out), "--", *cmd_prefix,
         sys.executable, str(script)],
        capture_output=True, text=True, timeout=300, env=env or _env(), cwd=cwd)
    return out, r


def _fake_env(**extra):
    lib = need_fake()
    return _env(FPGAPROF_CUPTI_LIBRARY=lib, FAKE_CUPTI_SCENARIO="kernels",
                FAKE_CUPTI_KERNELS="50", **extra)


def _kernels(trace):
    import fpgaprof

    return len(fpgaprof.load(str(trace)).store.kernels)


# --- the user's own Python setup -----------------------------------------------------------


def test_an_empty_pythonpath_entry_stays_the_current_folder(tmp_path):
    # `export PYTHONPATH=$PYTHONPATH:/x` with nothing set before gives ":/x": the empty entry
    # is the current folder, which the program imports from without fpgaprof.
    from fpgaprof.cli import run as cli_run

    for given in (":/x", "/x:", "/x::/y"):
        env = cli_run.child_environment(str(tmp_path), keep_command_buffers=False,
                                        counters=False, target=None,
                                        base={"PYTHONPATH": given})
        assert env["PYTHONPATH"].split(os.pathsep)[1:] == given.split(os.pathsep)
    env = cli_run.child_environment(str(tmp_path), keep_command_buffers=False, counters=False,
                                    target=None, base={"PYTHONPATH": ""})
    assert os.pathsep not in env["PYTHONPATH"]  # no current folder the user did not ask for

    work = tmp_path / "work"
    work.mkdir()
    (work / "helper_mod_r4.py").write_text("VALUE = 42\n")
    pythonpath = os.pathsep + os.environ.get("PYTHONPATH", "")
    out, r = run(tmp_path, "import helper_mod_r4\nprint('got', helper_mod_r4.VALUE)\n",
                 env=_env(PYTHONPATH=pythonpath), cwd=str(work))
    assert r.returncode == 0, r.stderr
    assert "got 42" in r.stdout


def test_the_users_sitecustomize_is_the_module_named_sitecustomize(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("MARK = 'theirs'\n")
    pythonpath = os.pathsep.join([os.environ.get("PYTHONPATH", ""), str(site)]).strip(os.pathsep)
    out, r = run(tmp_path, "import sitecustomize\nprint('mark', getattr(sitecustomize, 'MARK', None))\n",
                 env=_env(PYTHONPATH=pythonpath))
    assert r.returncode == 0, r.stderr
    assert "mark theirs" in r.stdout


# --- what the trace holds --------------------------------------------------------------------


def test_gpu_work_of_a_thread_that_outlives_the_main_thread_is_traced(tmp_path):
    out, r = run(tmp_path, """
        import ctypes, os, threading, time
        def worker():
            time.sleep(0.3)  # the main thread has ended by now
            ctypes.CDLL(os.environ["FPGAPROF_CUPTI_LIBRARY"]).fake_cupti_emit()
        threading.Thread(target=worker).start()
    """,
                 env=_fake_env())
    assert r.returncode == 0, r.stderr
    assert _kernels(out / "trace.fpgaprof") == 50


def test_an_exec_saves_the_trace_first(tmp_path):
    out, r = run(tmp_path, EMIT + "import sys\n"
                 "os.execv(sys.executable, [sys.executable, '-c', 'print(\"after exec\")'])\n",
                 env=_fake_env())
    assert r.returncode == 0, r.stderr
    assert "after exec" in r.stdout
    assert _kernels(out / "trace.fpgaprof") == 50


def test_a_subprocess_forked_to_exec_a_program_is_not_an_untraced_python(tmp_path):
    out, r = run(tmp_path, """
        import subprocess
        for _ in range(3):
            subprocess.run(["true"], preexec_fn=lambda: None)
    """)
    assert r.returncode == 0, r.stderr
    assert "ran untraced" not in r.stderr


def test_a_forked_child_is_still_an_untraced_python(tmp_path):
    out, r = run(tmp_path, """
        import os
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    """)
    assert r.returncode == 0, r.stderr
    assert "1 further Python process ran untraced" in r.stderr


def test_a_save_that_fails_is_said_as_such(tmp_path):
    # A file-size limit makes the save at exit fail (EFBIG) as a full disk would (ENOSPC).
    out, r = run(tmp_path, EMIT + """
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1024, resource.RLIM_INFINITY))
""", env=_fake_env())
    assert r.returncode == 1
    assert "saving the trace failed" in r.stderr
    assert "prof (the `as` target)" not in r.stderr  # there is no `as` target under run
    line = [ln for ln in r.stderr.splitlines() if "no trace was written" in ln]
    assert len(line) == 1, r.stderr
    assert "saving its trace failed" in line[0]
    assert "os._exit" not in line[0]


def test_a_run_inside_a_run_says_where_the_programs_trace_is(tmp_path):
    inner = tmp_path / "inner"
    out, r = run(tmp_path, EMIT, sys.executable, "-m", "fpgaprof", "run", "-o", str(inner),
                 "--", env=_fake_env())
    assert r.returncode == 0, r.stderr
    assert _kernels(inner / "trace.fpgaprof") == 50
    assert "inside another `fpgaprof run`" in r.stderr
    assert "ran untraced" not in r.stderr.split("inside another")[0]
    import fpgaprof

    assert any("inside another `fpgaprof run`" in w
               for w in fpgaprof.load(str(out / "trace.fpgaprof")).warnings)


# --- environment variables -------------------------------------------------------------------


@pytest.mark.parametrize("value,expected", [
    ("nan", 10.0), ("abc", 10.0), ("inf", 0.0), ("1e400", 0.0), ("-1", 0.0), ("0", 0.0),
    ("2.5", 2.5), ("", 10.0),
])
def test_signal_grace_values(monkeypatch, value, expected):
    from fpgaprof.capture import signals

    monkeypatch.setenv(signals.GRACE_ENV, value)
    got = signals.grace_s()
    assert not math.isnan(got)
    assert got == expected if expected else got <= 0  # <= 0: the watchdog off


def test_a_memory_bound_over_64_bits_bounds_nothing(monkeypatch):
    import fpgaprof

    trace = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "traces", "*.fpgaprof")))[0]
    fpgaprof.load(trace, max_memory_bytes=2**64)
    monkeypatch.setenv("FPGAPROF_MAX_TRACE_MEMORY", str(2**70))
    fpgaprof.load(trace)


def test_an_exec_that_fails_leaves_the_program_traced(tmp_path):
    # os.execvp tries each PATH folder; a program that is not installed fails them all and the
    # program goes on: its GPU work after the attempt is in the trace.
    out, r = run(tmp_path, """
        import ctypes, os
        try:
            os.execvp("no-such-program-fpgaprof", ["no-such-program-fpgaprof"])
        except FileNotFoundError:
            print("not installed, going on")
        try:
            os.execv("/bin/true", [])  # ValueError: argv must not be empty
        except ValueError:
            pass
        ctypes.CDLL(os.environ["FPGAPROF_CUPTI_LIBRARY"]).fake_cupti_emit()
    """, env=_fake_env())
    assert r.returncode == 0, r.stderr
    assert "not installed, going on" in r.stdout
    assert _kernels(out / "trace.fpgaprof") == 50


def test_a_thread_that_outlives_the_main_thread_and_calls_os_exit_keeps_the_trace(tmp_path):
    # Before stop() was deferred to atexit, the main thread's end saved the trace; a thread
    # that then ends the process with os._exit() must not lose it.
    out, r = run(tmp_path, EMIT + """
import threading, time
def worker():
    time.sleep(0.3)  # the main thread has ended by now
    os._exit(0)
threading.Thread(target=worker).start()
""", env=_fake_env())
    assert r.returncode == 0, r.stderr
    assert _kernels(out / "trace.fpgaprof") == 50
