"""The traced side of `fpgaprof run`: starts fpgaprof.trace() in the profiled process and
saves the trace when the interpreter exits (normal end, sys.exit, uncaught exception).

Started by fpgaprof/_bootstrap/sitecustomize.py, which passes it ``fpgaprof.trace`` (the api
layer's; this layer starts it, it does not import it); settings come from the FPGAPROF_RUN_*
variables that `fpgaprof run` sets. Never breaks the user's program: a failure to start or
save is one line on stderr.

SIGTERM and SIGHUP (a batch scheduler's time limit, a closed terminal) would end the process
without an interpreter exit: where the program left them at their default action, the trace is
saved first and the signal then ends the process as it would have (capture.signals). Not
covered: os._exit(), SIGKILL and crashes.

The script may open ``fpgaprof.trace()`` itself: the trace started here is marked
``owned_by_run``, so such a block becomes a region of this trace (see fpgaprof.trace).

Progress marker for `fpgaprof run`: the bootstrap writes its pid to FPGAPROF_RUN_DIR/
.fpgaprof-claim; ``start_from_environment`` appends a line ``tracing`` once the trace runs
(``not-tracing`` when it could not start), and ``stop`` appends ``saved`` once the trace file
is written. With no trace file after the command, the CLI tells from the marker why:
no claim = Python with the bootstrap never ran; no ``tracing`` = fpgaprof could not start;
``tracing`` without ``saved`` = the process ended without a normal interpreter exit
(os._exit, a signal, a crash). See ``marker_state``.

Further Python processes of the run (multiprocessing workers, subprocesses, forked children)
are not traced; each leaves a marker in FPGAPROF_RUN_DIR/.fpgaprof-untraced/ (written by the
bootstrap's _fpgaprof_untraced.py), which ``untraced_processes`` reads for the run's warning.
"""

from __future__ import annotations

import atexit
import functools
import inspect
import os
import re
import shlex
import shutil
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

from fpgaprof.base.atomic import write_text_atomic
from fpgaprof.base.text import ascii_whole_number, read_side_json, read_text_file
from fpgaprof.capture.run_environment import write_environment
from fpgaprof.capture.signals import SaveOnSignal

__all__ = [
    "CLAIM_NAME",
    "SAVED_AT_NAME",
    "RUN_LOCK_NAME",
    "run_in_progress",
    "saved_trace",
    "UNTRACED_DIR",
    "UNTRACED_PREFIX",
    "marker_state",
    "no_trace_message",
    "EXIT_STATUS_NAME",
    "exit_status",
    "exit_status_text",
    "write_exit_status",
    "start_from_environment",
    "stop",
    "hold_sigint",
    "release_sigint",
    "untraced_processes",
    "untraced_warning",
    "untraced_count",
    "drop_untraced_markers",
]

_state: dict[str, Any] = {}
CLAIM_NAME = ".fpgaprof-claim"
# The trace's path when it was saved elsewhere than FPGAPROF_RUN_TRACE (a rank folder).
SAVED_AT_NAME = ".fpgaprof-trace-path"
# In a job's rank folder whose program left no trace: `run`'s one line saying why (its exit
# status and how far it got), read by the job report once the claim marker is gone.
NO_TRACE_NAME = ".fpgaprof-no-trace"


def _read_mark(out_dir: str, name: str) -> str | None:
    """The text of one of `run`'s small mark files in out_dir, or None when it is missing,
    unreadable, not UTF-8 or no regular file of at most 64 KiB (never blocking on a FIFO)."""
    try:
        return read_text_file(os.path.join(out_dir, name), f"{name} (fpgaprof run's)", 1 << 16)
    except (OSError, UnicodeDecodeError):
        return None


def no_trace_reason(out_dir: str) -> str | None:
    """The line a `fpgaprof run` left in a rank folder whose program wrote no trace."""
    return " ".join((_read_mark(out_dir, NO_TRACE_NAME) or "").split()) or None


# In a job's rank folder whose program saved its trace but exited non-zero: that exit status,
# as `run` got it (one integer; 128 + N for a death by signal N). The trace records none; the
# job report reads it to name the rank as failed. Absent: the program exited 0 (or the trace
# was not written by `run`).
EXIT_STATUS_NAME = ".fpgaprof-exit-status"


def write_exit_status(out_dir: str, code: int) -> None:
    """Writes ``code`` to out_dir's EXIT_STATUS_NAME when non-zero, removes the file when 0 (a
    rerun into the folder must not keep an earlier run's failure). Best effort: the file only
    improves the job report."""
    path = os.path.join(out_dir, EXIT_STATUS_NAME)
    try:
        if code:
            write_text_atomic(path, f"{int(code)}\n")
        elif os.path.lexists(path):
            os.unlink(path)
    except OSError:
        pass


def exit_status(out_dir: str) -> int | None:
    """The non-zero exit status `run` recorded in a rank folder (EXIT_STATUS_NAME), else None."""
    return ascii_whole_number(_read_mark(out_dir, EXIT_STATUS_NAME) or "") or None


def exit_status_text(code: int) -> str:
    """The words for an exit status: "exit status 3", "exit status 137, signal 9" (128 + N: a
    death by signal N, as a shell reports it)."""
    return f"exit status {code}" + (f", signal {code - 128}" if 128 < code <= 128 + 64 else "")


def saved_trace(out_dir: str) -> str | None:
    """Where the traced process saved its trace when not at FPGAPROF_RUN_TRACE (a process of a
    jax.distributed job: its rank folder), else None."""
    path = (_read_mark(out_dir, SAVED_AT_NAME) or "").strip()
    return path if path and os.path.isfile(path) else None


def _mark(word: str) -> None:
    """Appends one progress word to the run folder's claim file (see the module doc)."""
    out_dir = os.environ.get("FPGAPROF_RUN_DIR")
    if not out_dir:
        return
    try:
        with open(os.path.join(out_dir, CLAIM_NAME), "a", encoding="utf-8") as f:
            f.write("\n" + word + "\n")  # the bootstrap's pid may lack a newline
    except OSError:
        pass  # the marker only improves the CLI's message


# The lock a `fpgaprof run` holds (an exclusive flock) on its folder while it runs.
RUN_LOCK_NAME = ".fpgaprof-run.lock"


def run_in_progress(out_dir: str) -> bool:
    """Whether a live `fpgaprof run` holds out_dir (its flock on RUN_LOCK_NAME): the folder's
    trace is not written yet because its program still runs, not because it crashed. Asks
    with a shared lock taken and let go at once, never waiting."""
    try:
        fd = os.open(
            os.path.join(out_dir, RUN_LOCK_NAME),
            # O_NONBLOCK: a FIFO in its place does not wait for a writer
            os.O_RDONLY
            | getattr(os, "O_CLOEXEC", 0)
            | getattr(os, "O_NOFOLLOW", 0)
            | getattr(os, "O_NONBLOCK", 0),
        )
    except OSError:
        return False  # no lock file: no run holds the folder
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except (OSError, ImportError):
        return False
    finally:
        os.close(fd)  # closing lets a lock taken here go
    return False


def marker_state(out_dir: str) -> str:
    """What the traced process of a `fpgaprof run` got to, from its claim file: "none" (no
    Python process ran the bootstrap), "claimed" (the bootstrap ran; fpgaprof was not
    importable), "not-tracing" (the trace could not start), "tracing" (traced, never saved:
    no normal interpreter exit), "save-failed" (the save at exit failed: a full disk, an
    unwritable folder), or "saved"."""
    try:
        with open(os.path.join(out_dir, CLAIM_NAME), encoding="utf-8") as f:
            words = f.read().split()[1:]  # the first word is the pid
    except OSError:
        return "none"
    for w in ("saved", "save-failed", "tracing", "not-tracing"):
        if w in words:
            return w
    return "claimed"


def no_trace_message(out_dir: str, code: int) -> str:
    """One line for `fpgaprof run` when the command left no trace (exit status ``code``)."""
    state = marker_state(out_dir)
    if state == "none":
        return (
            f"no trace was written (the command exited with {code} without starting a "
            f"Python that runs fpgaprof's bootstrap; run a Python script with the Python "
            f"fpgaprof is installed in, without -S or -I)"
        )
    if state == "claimed":
        return (
            f"no trace was written (the command exited with {code}; its Python could not "
            f"import fpgaprof, see the message above: run it with the Python that has "
            f"fpgaprof installed)"
        )
    if state == "not-tracing":
        return (
            f"no trace was written (the command exited with {code}; tracing did not "
            f"start, see the message above)"
        )
    how = exit_status_text(code)
    if state == "save-failed":
        return (
            f"no trace was written: the traced process ended ({how}) but saving its trace "
            f"failed (the message above says why: for a full disk or an unwritable folder, "
            f"free space or give -o another folder, and run again)"
        )
    return (
        f"no trace was written: the traced process ended without a normal interpreter "
        f"exit ({how}; e.g. os._exit(), SIGKILL or a crash), so the trace could not be "
        f"saved; let the program end by returning, sys.exit() or an exception"
    )


def _say(msg: str) -> None:
    sys.stderr.write(f"fpgaprof run: {msg}\n")


def start_from_environment(trace: Callable[..., Any]) -> bool:
    """Starts the trace described by FPGAPROF_RUN_TRACE / FPGAPROF_RUN_COUNTERS with `trace`
    (``fpgaprof.trace``: the context manager is entered here and exited by ``stop()``).
    Returns whether tracing started."""
    trace_path = os.environ.get("FPGAPROF_RUN_TRACE")
    if not trace_path or _state:
        return False
    try:
        kwargs: dict[str, Any] = {}
        want_counters = os.environ.get("FPGAPROF_RUN_COUNTERS") == "1"
        params = inspect.signature(trace).parameters
        # `run --buffer-size`, `run --device-buffer-size`
        for var, param in (
            ("FPGAPROF_RUN_BUFFER_SIZE", "buffer_size"),
            ("FPGAPROF_RUN_DEVICE_BUFFER_SIZE", "device_buffer_size"),
        ):
            size = ascii_whole_number(os.environ.get(var, ""))
            if size is not None and param in params:
                kwargs[param] = size
        if want_counters:
            if "counters" in params:
                kwargs["counters"] = True
            else:
                _state["note"] = (
                    "--counters was asked for but this fpgaprof build cannot "
                    "collect hardware counters; timings only"
                )
                _say(_state["note"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cm = trace(trace_path, **kwargs)
            cm.owned_by_run = True  # the script's own fpgaprof.trace() blocks nest in it
            job_root = os.environ.get("FPGAPROF_RUN_JOB_ROOT")
            if job_root and hasattr(cm, "job_root"):
                cm.job_root = job_root  # a rank that JAX names by the save: its rank folder
            cm.__enter__()
        for w in caught:  # one line each, not Python's two-line warning format
            _say(" ".join(str(w.message).split()))
    except Exception as e:  # noqa: BLE001 - the program runs untraced, with one line why
        _say(
            f"tracing did not start ({type(e).__name__}: {' '.join(str(e).split())}); the "
            f"program runs untraced"
        )
        _mark("not-tracing")
        return False
    _mark("tracing")
    _state["cm"] = cm
    _state["pid"] = os.getpid()
    _state["trace_path"] = trace_path
    _install_exit_hooks()
    _install_signal_handlers()
    _save_before_exec()
    return True


def nested_run(inner_dir: str) -> str | None:
    """When this process is the traced program of an outer `fpgaprof run` and is itself
    `fpgaprof run` (a wrapper script that calls it, run under it): the line saying that the
    outer trace holds this fpgaprof process only, also kept as a warning in that trace. None
    otherwise."""
    cm = _state.get("cm")
    if cm is None or _state.get("pid") != os.getpid():
        return None
    outer = os.environ.get("FPGAPROF_RUN_DIR") or os.path.dirname(_state["trace_path"])
    msg = (
        f"`fpgaprof run` was started inside another `fpgaprof run` (folder {outer}): the "
        f"outer one traces this fpgaprof process, not the program; the program's trace and "
        f"reports are in {inner_dir}. Run the program under one `fpgaprof run` only"
    )
    cm._note_warning("capture.nested_run", msg)
    return msg


def _saving_first(real: Callable[..., Any], ends: Callable[[tuple], bool], say: str) -> Any:
    """`real` (a function that ends this process without an interpreter exit: an exec,
    os._exit) made to save the trace first when `ends(args)` says the call will end it; when
    the call fails after all, the program goes on untraced and a line says so."""

    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not ("cm" in _state and _state.get("pid") == os.getpid() and ends(args)):
            return real(*args, **kwargs)
        if say:
            _say(say)
        stop()
        try:
            return real(*args, **kwargs)
        except BaseException as e:
            _say(
                f"{real.__name__} failed ({type(e).__name__}: {e}) after the trace was saved: "
                f"what the program does from now on is not traced"
            )
            raise

    wrapper._fpgaprof_saves = True  # type: ignore[attr-defined]
    return wrapper


def _save_before_exec() -> None:
    """os.execv and os.execve (every os.exec* function ends in one of them) save the trace
    first when the exec can start: an exec replaces the process without an interpreter exit,
    and the trace would be lost. The program it starts runs untraced (a Python one says so, as
    any further Python process of the run does)."""
    for name in ("execv", "execve"):
        real = getattr(os, name, None)
        if real is not None and not getattr(real, "_fpgaprof_saves", False):
            setattr(
                os,
                name,
                _saving_first(
                    real,
                    _exec_can_start,
                    "the program execs another program: the trace is saved first",
                ),
            )


def _exec_can_start(args: tuple) -> bool:
    """Whether os.execv/os.execve(*args) can replace the process: an executable file and a
    non-empty argv. An exec that fails at once (os.execvp trying each PATH folder, a program
    that is not installed, bad arguments) leaves the program running, and traced."""
    try:
        path, argv = args[0], args[1]
        if isinstance(path, int):
            return True  # execve(fd, ...): fexecve
        return bool(argv) and os.path.isfile(path) and os.access(path, os.X_OK)
    except Exception:  # noqa: BLE001 - bad arguments: the exec itself raises
        return False


def _install_signal_handlers() -> None:
    """Saves the trace on SIGTERM/SIGHUP where the program has not chosen its own handling."""

    def save(name: str) -> None:
        cm = _state.get("cm")
        if cm is not None:
            cm._note_ended_by(name)
        stop()

    try:
        _state["signals"] = SaveOnSignal(save, "fpgaprof run")
        _state["signals"].install()
    except Exception as e:  # noqa: BLE001 - the run goes on; only this safety net is missing
        _say(f"the trace will not be saved on SIGTERM/SIGHUP ({type(e).__name__}: {e})")


def _stop_once_threads_ended() -> None:
    """threading's exit hook (the main thread has ended; the program's other non-daemon threads
    are joined next, and may still launch GPU work): stop() is put first in line for the
    atexit callbacks, which run once those threads have ended, before the callbacks registered
    so far (JAX's, which tear its backend down, when JAX was imported while the main thread
    ran). Until then a thread that ends the process with os._exit() saves the trace first."""
    atexit.register(stop)
    if not getattr(os._exit, "_fpgaprof_saves", False):
        os._exit = _saving_first(os._exit, lambda args: True, "")


def _install_exit_hooks() -> None:
    # threading's exit hooks run when the main thread ends, before the interpreter joins the
    # other non-daemon threads and before atexit callbacks: the hook defers stop() to the
    # first atexit callback, so that the trace holds what those threads did and is stopped
    # before JAX tears its backend down. The plain atexit callback is the fallback (stop()
    # runs once).
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        try:
            register(_stop_once_threads_ended)
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
    if _state.get("pid", os.getpid()) != os.getpid():
        return  # a forked child exiting: the trace is its parent's to save
    cm = _state.pop("cm", None)
    if cm is None:
        return
    signals = _state.pop("signals", None)
    if signals is not None:
        signals.finishing()  # a SIGTERM now waits for the save, then ends the process
    held = hold_sigint()
    try:
        _stop_and_save(cm)
    finally:
        if held is not None:
            release_sigint(held)
        if signals is not None:
            signals.uninstall()


def hold_sigint() -> Any:
    """A SIGINT while the trace is saved would break the save with a KeyboardInterrupt (e.g.
    the second copy when `kill -INT` went to both `fpgaprof run` and the program): it is
    ignored until the save is done (stop() runs when the program ends anyway). Returns what
    release_sigint needs (None: nothing held)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    got: list[int] = []
    try:
        old = signal.signal(signal.SIGINT, lambda num, _f: got.append(num))
    except (OSError, ValueError):
        return None
    return old, got


def release_sigint(held: Any) -> None:
    """Puts back the SIGINT handling hold_sigint() replaced."""
    old, _got = held
    try:
        signal.signal(signal.SIGINT, old)
    except (OSError, ValueError):
        pass


def _stop_and_save(cm: Any) -> None:
    exc = _state.get("exc", (None, None, None))
    try:
        cm.__exit__(*exc)
    except BaseException as e:  # noqa: BLE001 - the user's exception, or our failure said
        if e is exc[1]:
            pass  # trace() re-raised the user's exception: already reported by the interpreter
        else:
            _say(f"saving the trace failed: {type(e).__name__}: {' '.join(str(e).split())}")
            _mark("save-failed")
            return
    _mark("saved")
    saved = getattr(cm, "path", None)
    if isinstance(saved, str) and saved != _state["trace_path"]:
        # one process of a job JAX named (trace.job_root): the trace is in its rank folder
        _state["trace_path"] = saved
        out_dir = os.environ.get("FPGAPROF_RUN_DIR")
        try:
            if out_dir:
                with open(os.path.join(out_dir, SAVED_AT_NAME), "w", encoding="utf-8") as f:
                    f.write(saved)
        except OSError as e:
            _say(f"the trace is at {saved}, but this could not be noted for the report: {e}")
    try:
        write_environment(os.path.dirname(os.path.abspath(_state["trace_path"])))
    except Exception as e:  # noqa: BLE001 - only environment.json is missing then
        _say(f"environment.json not written: {type(e).__name__}: {e}")


# --- Python processes of the run that were not traced ----------------------------------------

UNTRACED_DIR = ".fpgaprof-untraced"  # written by _bootstrap/_fpgaprof_untraced.py
UNTRACED_PREFIX = "further Python process"  # in the warning; see untraced_warning


def _after_optimizations(folder: str | None) -> int | None:
    if not folder:
        return None
    try:
        return sum(
            1
            for n in os.listdir(folder)
            if n.startswith("module_") and n.endswith("after_optimizations.txt")
        )
    except OSError:
        return 0  # XLA creates the folder on its first dump: none means nothing compiled


def untraced_processes(out_dir: str) -> list[dict]:
    """The markers the run's untraced Python processes left (see _fpgaprof_untraced.py), in
    pid order, each with "label" (what the process was, one line) and "xla_modules" (optimized
    HLO modules it compiled; None when unknown: a child forked after XLA had started). Python
    processes that run no user code (multiprocessing's resource tracker) are left out."""
    folder = os.path.join(out_dir, UNTRACED_DIR)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    out = []
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            info = read_side_json(os.path.join(folder, name), "a process file")
            pid = int(info["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        argv = [str(a) for a in info.get("argv") or []]
        code = " ".join(argv)
        if "multiprocessing.resource_tracker" in code:
            continue
        if "--multiprocessing-fork" in argv and "spawn_main" in code:
            label = "multiprocessing spawn worker"
        elif "multiprocessing.forkserver" in code:
            label = "multiprocessing forkserver"
        else:
            label = _short_command(argv)
        if info.get("how") == "forked":
            label = f"forked child of `{label}`"
        out.append(
            {
                "pid": pid,
                "ppid": info.get("ppid"),
                "argv": argv,
                "how": info.get("how"),
                "label": label,
                "xla_modules": _after_optimizations(info.get("hlo_dir")),
            }
        )
    out.sort(key=lambda r: r["pid"])
    return out


def _short_command(argv: list[str], width: int = 60) -> str:
    if argv:
        argv = [os.path.basename(argv[0])] + argv[1:]
    text = shlex.join(argv) if argv else "python"
    return text if len(text) <= width else text[: width - 1] + "…"


def untraced_warning(procs: list[dict], show: int = 6) -> str:
    """One line: how many further Python processes ran untraced, what they were (alike ones
    counted together, the first `show` kinds listed) and whether they compiled XLA modules.
    "" when there were none."""
    if not procs:
        return ""
    groups: dict[str, list[dict]] = {}
    for p in procs:
        groups.setdefault(p["label"], []).append(p)
    items = []
    for label, ps in groups.items():
        known = [p["xla_modules"] for p in ps if p["xla_modules"] is not None]
        if len(known) < len(ps):
            xla = (
                "XLA compiles unknown" if not any(known) else f"{sum(known)}+ XLA modules compiled"
            )
        else:
            xla = f"{sum(known)} XLA module{'s' if sum(known) != 1 else ''} compiled"
        items.append(f"{len(ps)} × {label} ({xla})" if len(ps) > 1 else f"{label} ({xla})")
    more = f"; and {len(items) - show} more kinds" if len(items) > show else ""
    n = len(procs)
    return (
        f"{n} {UNTRACED_PREFIX}{'es' if n != 1 else ''} ran untraced (`fpgaprof run` "
        f"traces the first Python process only; GPU work of these is not in this trace: "
        f"trace such a process itself with fpgaprof.trace(path), started by multiprocessing's "
        f"'spawn' or 'forkserver': a forked child cannot trace): " + "; ".join(items[:show]) + more
    )


_UNTRACED_COUNT = re.compile(rf"^(\d+) {UNTRACED_PREFIX}(?:es)? ran untraced")


def untraced_count(warnings_list: list[str]) -> int:
    """How many further Python processes ran untraced, read back from a trace's warnings (the
    line untraced_warning() wrote into it); 0 when there is none."""
    n = 0
    for w in warnings_list:
        m = _UNTRACED_COUNT.match(str(w))
        if m:
            n = int(m.group(1))
    return n


def drop_untraced_markers(out_dir: str) -> None:
    """Removes the markers and the untraced processes' HLO dumps (read by then)."""
    shutil.rmtree(os.path.join(out_dir, UNTRACED_DIR), ignore_errors=True)
