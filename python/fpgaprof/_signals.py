"""Saving a trace when SIGTERM or SIGHUP ends the program.

A batch scheduler's time limit (SIGTERM) or a closed terminal (SIGHUP) ends a process without
an interpreter exit, so a trace that is saved at the end of a ``with`` block or at exit would
be lost. Where the program left such a signal at its default action, ``SaveOnSignal`` installs
a handler that saves the trace and then lets the signal end the process as it would have
(the same signal, so the same exit status; the program's ``finally`` blocks and atexit
callbacks do not run, as with the default action). A handler the program installed itself is
never replaced. Python runs the handler when the main thread next executes Python code: at
once, or after a blocking call (a long GPU wait) returns.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any, Callable

# Signals whose default action ends the process and that schedulers and terminals send.
SAVE_ON = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


class SaveOnSignal:
    """``save(signal_name)`` runs once when one of SAVE_ON arrives, then the signal takes its
    default action. ``install()`` from the main thread (elsewhere it does nothing);
    ``uninstall()`` puts back the default action where this handler is still in place."""

    def __init__(self, save: Callable[[str], None], who: str) -> None:
        self._save = save
        self._who = who
        self._installed: list[int] = []
        self._fired = False

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for num in SAVE_ON:
            try:
                if signal.getsignal(num) == signal.SIG_DFL:
                    signal.signal(num, self._handle)
                    self._installed.append(num)
            except (OSError, ValueError):
                pass

    def uninstall(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for num in self._installed:
            try:
                if signal.getsignal(num) == self._handle:
                    signal.signal(num, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        self._installed = []

    def _handle(self, signum: int, _frame: Any) -> None:
        if self._fired:
            # A second signal while the first one saves (a scheduler signals the whole process
            # group, and `fpgaprof run` passes its copy on): the first one ends the process.
            return
        self._fired = True
        name = signal_name(signum)
        sys.stderr.write(f"{self._who}: {name} received: saving the trace, then ending as {name} would\n")
        try:
            self._save(name)
        except BaseException as e:  # the signal still ends the process below
            sys.stderr.write(f"{self._who}: saving the trace failed: {type(e).__name__}: "
                             f"{' '.join(str(e).split())}\n")
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
