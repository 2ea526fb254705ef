"""Saving a trace when SIGTERM or SIGHUP ends the program.

A batch scheduler's time limit (SIGTERM) or a closed terminal (SIGHUP) ends a process without
an interpreter exit, so a trace that is saved at the end of a ``with`` block or at exit would
be lost. ``SaveOnSignal`` installs a handler that saves the trace and then lets the signal end
the process as it would have (the same signal, so the same exit status; the program's
``finally`` blocks and atexit callbacks do not run, as with the default action). Rules:

- Installed only where the signal is at its default action: not over a handler the program set
  in Python, nor over one set outside Python (JAX's preemption notifier after
  ``jax.distributed.initialize()``: read from the kernel's table, /proc/self/status SigCgt).
- Only the process that installed it saves: a forked child (os.fork, multiprocessing) takes the
  default action. The signals are blocked across the fork and the child's handler and wakeup fd
  removed before they are unblocked, so a SIGTERM sent right after the fork ends the child and
  never reaches the parent's watchdog.
- A handler the program installs later that calls the previous one (ours) keeps its own
  decision: called that way, ours does nothing.
- While the trace is being finished (stopped, joined, saved: seconds for a large trace) a signal
  waits for the save and then ends the process.
- Python runs the handler only when the main thread executes Python code. A watchdog thread
  (woken through ``signal.set_wakeup_fd``, which Python's C-level handler writes at once) takes
  the default action without saving when the handler has not started within
  FPGAPROF_SIGNAL_GRACE_S seconds (default 10; 0 turns the watchdog off) and the main thread
  has not moved meanwhile, so a program stuck in native code that released the GIL still ends
  on SIGTERM. Limits: native code that holds the GIL blocks the watchdog too (the process ends
  when it returns); the watchdog is off where the program uses the wakeup fd itself (asyncio's
  signal handlers take it over; Trio warns that it found one set).
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

from fpgaprof.capture import xla_flags

__all__ = [
    "SaveOnSignal",
    "SAVE_ON",
    "GRACE_ENV",
    "DEFAULT_GRACE_S",
    "signal_name",
    "native_handler_installed",
    "grace_s",
]

# Signals whose default action ends the process and that schedulers and terminals send.
SAVE_ON = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))
GRACE_ENV = "FPGAPROF_SIGNAL_GRACE_S"
DEFAULT_GRACE_S = 10.0

_instances: weakref.WeakSet[SaveOnSignal] = weakref.WeakSet()
_fork_hook_registered = False


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def native_handler_installed(signum: int) -> bool:
    """True when the kernel says the process catches ``signum`` although Python's table says
    SIG_DFL: a handler installed from C (Linux: SigCgt in /proc/self/status). False when that
    cannot be read."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool((int(line.split()[1], 16) >> (signum - 1)) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False


# os._exit as it was at import: runner wraps os._exit (a thread ending the process after the
# main thread saves the trace first); these exits come after a save, or instead of one.
_hard_exit = os._exit


def grace_s() -> float:
    """FPGAPROF_SIGNAL_GRACE_S in seconds: 0 (the watchdog off) for 0, a negative number or
    one too large to wait for (inf); the default, with one line saying so, for a value that
    is no number (NaN, text): Event.wait takes NaN as no wait at all, and refuses inf."""
    text = os.environ.get(GRACE_ENV, "").strip()
    if not text:
        return DEFAULT_GRACE_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isnan(value):
        sys.stderr.write(
            f"fpgaprof: {GRACE_ENV}={text!r} is not a number of seconds: the default "
            f"{DEFAULT_GRACE_S:g} s is used (0 turns the watchdog off)\n"
        )
        return DEFAULT_GRACE_S
    return value if 0 < value <= threading.TIMEOUT_MAX else 0.0


def _main_thread_position() -> tuple | None:
    """Where the main thread is in Python (frame and instruction), None if unknown."""
    frame = sys._current_frames().get(threading.main_thread().ident or -1)
    if frame is None:
        return None
    return (id(frame), frame.f_lasti, frame.f_lineno)


def _remove_temp_files() -> None:
    """What atexit would remove: the temp HLO dump dir fpgaprof made for this process."""
    try:
        xla_flags.remove_owned_dump_dir()
    except Exception:  # noqa: BLE001 - the next import fpgaprof prunes it (dead pid)
        pass


def _default_action_from_any_thread(signum: int) -> None:
    """SIG_DFL for ``signum`` and raise it, from a thread that signal.signal() refuses."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.signal.restype = ctypes.c_void_p
        libc.signal(ctypes.c_int(signum), ctypes.c_void_p(0))  # SIG_DFL
        os.kill(os.getpid(), signum)
    except Exception:  # noqa: BLE001 - no libc through ctypes: end the way a shell would report it
        pass
    _hard_exit(128 + signum)


def _before_fork() -> None:
    # The child must not catch SAVE_ON before _after_fork_in_child has removed our handler and
    # the watchdog's wakeup fd: a signal caught there would be written into the parent's
    # watchdog pipe (and the parent ended) and lost in the child. Blocked, it stays pending
    # until the default action is back.
    if _instances:
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, SAVE_ON)
            _fork_blocked.flag = True
        except (OSError, ValueError, AttributeError):
            pass


def _unblock_after_fork() -> None:
    if getattr(_fork_blocked, "flag", False):
        _fork_blocked.flag = False
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, SAVE_ON)
        except (OSError, ValueError, AttributeError):
            pass


def _after_fork_in_child() -> None:
    for inst in list(_instances):
        inst._forget_in_child()
    _instances.clear()
    _unblock_after_fork()  # a SIGTERM that came meanwhile now takes the default action


_fork_blocked = threading.local()


class SaveOnSignal:
    """``save(signal_name)`` runs once when one of SAVE_ON arrives, then the signal takes its
    default action. ``install()`` from the main thread (elsewhere it does nothing);
    ``finishing()`` before the owner's own save at the end, ``uninstall()`` after it (which
    then ends the process if a signal arrived in between)."""

    def __init__(self, save: Callable[[str], None], who: str) -> None:
        self._save = save
        self._who = who
        self._installed: list[int] = []
        self._pid = 0
        self._fired = False
        self._finishing = False
        self._pending: int | None = None
        self._done = False  # uninstall() ran (perhaps off the main thread, leaving the handler)
        self._started = threading.Event()
        self._wakeup: tuple[int, int] | None = None

    # --- life cycle -------------------------------------------------------------------------

    def install(self) -> bool:
        """Takes SIGTERM and SIGHUP where their action is still the default. False when called
        off the main thread, where Python cannot set a signal handler: nothing is installed
        (the caller says so)."""
        global _fork_hook_registered
        if threading.current_thread() is not threading.main_thread():
            return False
        self._pid = os.getpid()
        for num in SAVE_ON:
            try:
                if signal.getsignal(num) == signal.SIG_DFL and not native_handler_installed(num):
                    signal.signal(num, self._handle)
                    self._installed.append(num)
            except (OSError, ValueError):
                pass
        if not self._installed:
            return True
        _instances.add(self)
        if not _fork_hook_registered and hasattr(os, "register_at_fork"):
            os.register_at_fork(
                before=_before_fork,
                after_in_parent=_unblock_after_fork,
                after_in_child=_after_fork_in_child,
            )
            _fork_hook_registered = True
        self._start_watchdog()
        return True

    def finishing(self) -> None:
        """The owner's save begins: a signal from now on waits for it (see uninstall)."""
        self._finishing = True

    def uninstall(self) -> None:
        """Default actions back where this handler is still installed, the watchdog stopped;
        then a signal that arrived while finishing ends the process."""
        self._done = True
        if threading.current_thread() is threading.main_thread() and os.getpid() == self._pid:
            self._restore_defaults()
            self._stop_watchdog()
            _instances.discard(self)
        pending, self._pending = self._pending, None
        if pending is not None and not self._fired:
            self._end_by(pending)

    # --- the handler ------------------------------------------------------------------------

    def _handle(self, signum: int, _frame: Any) -> None:
        if os.getpid() != self._pid:
            self._end_by(signum)  # a forked child: not ours to save
        self._started.set()
        if signal.getsignal(signum) != self._handle:
            return  # called by the program's own handler: its decision, not ours
        if self._fired:
            return  # a second copy while the first one saves: that one ends the process
        if self._done:
            self._end_by(signum)  # left installed after the trace ended: the default action
        if self._finishing:
            self._pending = signum  # the owner is saving: uninstall() ends the process after
            return
        self._fired = True
        name = signal_name(signum)
        sys.stderr.write(
            f"{self._who}: {name} received: saving the trace, then ending as {name} would\n"
        )
        try:
            self._save(name)
        except BaseException as e:  # noqa: BLE001 - the signal still ends the process below
            sys.stderr.write(
                f"{self._who}: saving the trace failed: {type(e).__name__}: "
                f"{' '.join(str(e).split())}\n"
            )
        _remove_temp_files()  # the default action skips atexit, which would remove them
        self._end_by(signum)

    @staticmethod
    def _end_by(signum: int) -> None:
        try:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        except (OSError, ValueError):
            pass
        _hard_exit(128 + signum)  # the signal is blocked or ignored elsewhere: end anyway

    # --- the watchdog -----------------------------------------------------------------------

    def _start_watchdog(self) -> None:
        grace = grace_s()
        if grace <= 0:
            return
        r, w = os.pipe()
        try:
            os.set_blocking(w, False)
            old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except (OSError, ValueError):
            os.close(r)
            os.close(w)
            return
        if old != -1:  # the program uses it (asyncio): leave it theirs, no watchdog
            signal.set_wakeup_fd(old)
            os.close(r)
            os.close(w)
            return
        self._wakeup = (r, w)
        threading.Thread(
            target=self._watch, args=(r, grace), daemon=True, name="fpgaprof-signal-watchdog"
        ).start()

    def _restore_defaults(self) -> None:
        """SIG_DFL back for each signal this handler still holds (main thread only)."""
        for num in self._installed:
            try:
                if signal.getsignal(num) == self._handle:
                    signal.signal(num, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        self._installed = []

    def _release_wakeup_fd(self) -> tuple[int, int] | None:
        """Stops Python writing signals to our pipe (a wakeup fd set by someone else since stays
        theirs); returns the pipe's (read, write) fds, or None."""
        if self._wakeup is None:
            return None
        fds, self._wakeup = self._wakeup, None
        try:
            current = signal.set_wakeup_fd(-1)
            if current not in (-1, fds[1]):
                signal.set_wakeup_fd(current)
        except (OSError, ValueError):
            pass
        return fds

    def _stop_watchdog(self) -> None:
        fds = self._release_wakeup_fd()
        if fds is not None:
            os.close(fds[1])  # the watchdog reads end-of-file and closes the read end

    def _watch(self, r: int, grace: float) -> None:
        try:
            while True:
                try:
                    data = os.read(r, 64)
                except InterruptedError:
                    continue
                if not data:
                    return
                for signum in data:
                    if signum not in SAVE_ON or os.getpid() != self._pid:
                        continue
                    if signal.getsignal(signum) != self._handle:
                        continue  # the program's own handler decides
                    before = _main_thread_position()
                    if self._started.wait(grace):
                        continue
                    if before is None or _main_thread_position() != before:
                        # The main thread ran Python meanwhile, so a signal of ours would have
                        # been handled: the byte came from elsewhere (a child forked in C that
                        # inherited the wakeup fd).
                        continue
                    name = signal_name(signum)
                    sys.stderr.write(
                        f"{self._who}: {name} received, but the program did not return "
                        f"to Python within {grace:g} s (stuck in native code?): ending "
                        f"it as {name} would, without saving the trace ({GRACE_ENV} sets "
                        "the wait)\n"
                    )
                    _default_action_from_any_thread(signum)
        except OSError:
            return
        finally:
            try:
                os.close(r)
            except OSError:
                pass

    def _forget_in_child(self) -> None:
        """After fork, in the child: nothing of ours stays (the parent owns the trace)."""
        self._restore_defaults()
        for fd in self._release_wakeup_fd() or ():
            try:
                os.close(fd)  # no watchdog thread here: both ends are ours to close
            except OSError:
                pass
