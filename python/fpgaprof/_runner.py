"""The traced side of `fpgaprof run`: starts fpgaprof.trace() in the profiled process and
saves the trace when the interpreter exits (normal end, sys.exit, uncaught exception).

Started by fpgaprof/_bootstrap/sitecustomize.py; settings come from the FPGAPROF_RUN_*
variables that `fpgaprof run` sets. Never breaks the user's program: a failure to start or
save is one line on stderr. Not covered: os._exit() and fatal signals (no interpreter exit).
"""
from __future__ import annotations

import atexit
import inspect
import json
import os
import sys
from typing import Any

_state: dict[str, Any] = {}


def _say(msg: str) -> None:
    sys.stderr.write(f"fpgaprof run: {msg}\n")


def start_from_environment() -> bool:
    """Starts the trace described by FPGAPROF_RUN_TRACE / FPGAPROF_RUN_COUNTERS. Returns
    whether tracing started."""
    trace_path = os.environ.get("FPGAPROF_RUN_TRACE")
    if not trace_path or _state:
        return False
    try:
        import fpgaprof
        kwargs: dict[str, Any] = {}
        want_counters = os.environ.get("FPGAPROF_RUN_COUNTERS") == "1"
        params = inspect.signature(fpgaprof.trace).parameters
        if want_counters:
            if "counters" in params:
                kwargs["counters"] = True
            else:
                _state["note"] = ("--counters was asked for but this fpgaprof build cannot "
                                  "collect hardware counters; timings only")
                _say(_state["note"])
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cm = fpgaprof.trace(trace_path, **kwargs)
            cm.__enter__()
        for w in caught:  # one line each, not Python's two-line warning format
            _say(" ".join(str(w.message).split()))
    except Exception as e:
        _say(f"tracing did not start ({type(e).__name__}: {' '.join(str(e).split())}); the "
             f"program runs untraced")
        return False
    _state["cm"] = cm
    _state["trace_path"] = trace_path
    _install_exit_hooks()
    return True


def _install_exit_hooks() -> None:
    # threading's exit hooks run when the main thread ends, before atexit callbacks: the trace
    # is stopped before JAX tears its backend down. atexit is the fallback (stop() runs once).
    import threading
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        try:
            register(stop)
        except RuntimeError:
            pass
    atexit.register(stop)
    previous = sys.excepthook

    def hook(tp, value, tb):  # the exception is printed first, then saved at exit as usual
        _state.setdefault("exc", (tp, value, tb))
        previous(tp, value, tb)

    sys.excepthook = hook


def stop() -> None:
    """Stops and saves the trace (once), and writes environment.json beside it."""
    cm = _state.pop("cm", None)
    if cm is None:
        return
    exc = _state.get("exc", (None, None, None))
    try:
        cm.__exit__(*exc)
    except BaseException as e:
        if e is exc[1]:
            pass  # trace() re-raised the user's exception: already reported by the interpreter
        else:
            _say(f"saving the trace failed: {type(e).__name__}: {' '.join(str(e).split())}")
            return
    try:
        from fpgaprof.report.summary import ENVIRONMENT_FILE, environment_now, write_atomic
        env = environment_now()
        folder = os.path.dirname(os.path.abspath(_state["trace_path"]))
        write_atomic(os.path.join(folder, ENVIRONMENT_FILE), json.dumps(env, indent=1) + "\n")
    except Exception as e:
        _say(f"environment.json not written: {type(e).__name__}: {e}")
