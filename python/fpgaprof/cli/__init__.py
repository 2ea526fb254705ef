"""The `fpgaprof` command (also `python -m fpgaprof`).

    fpgaprof run | report | export | compare | estimate | calibrate | devices | counters

(every command's options: its --help, and docs/reports.md, "The command").

Exit status: 0 success, 1 failure, 2 bad usage; `run` passes the command's own status through.
Ctrl-C, SIGTERM and SIGHUP end the command by that signal once what it had begun is removed (a
shell sees 130, 143, 129; a shell script stops on Ctrl-C as it would without fpgaprof).
Errors are one line on stderr saying the cause and the fix, never a traceback. Everything the
command writes to the terminal passes through base.text.terminal_safe (names from input files
may hold escape sequences).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator, Sequence

from fpgaprof.base.errors import FpgaprofError
from fpgaprof.base.text import TerminalSafeStream
from fpgaprof.cli.common import (
    PROG,
    Terminated,
    UsageError,
    check_target,
    one_line,
    terminate_by_exception,
)
from fpgaprof.cli.parser import build_parser, parse_args

__all__ = ["main"]


@contextlib.contextmanager
def _terminal_safe_streams() -> Iterator[None]:
    """sys.stdout and sys.stderr behind TerminalSafeStream while a command runs (put back after,
    so that main() can be called more than once in a process)."""
    saved = sys.stdout, sys.stderr
    sys.stdout = TerminalSafeStream(saved[0])
    sys.stderr = TerminalSafeStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _end_by_signal(signum: int) -> int:
    """Ends this process by signal signum, its default action, once the command's cleanup ran.
    For SIGINT this is what lets a calling shell script stop on Ctrl-C: bash ends a script on
    SIGINT only when its foreground child died of it (an exit status of 130 reads as a command
    that handled Ctrl-C itself, and the script goes on). Returns 128 + signum should the
    process outlive the signal (it is blocked)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    return 128 + signum


def main(argv: Sequence[str] | None = None) -> int:
    with _terminal_safe_streams():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parse_args(parser, argv)
        check_target(getattr(args, "target", None), f"{PROG} {args.command_name}")
        # run passes SIGTERM and SIGHUP on to its program instead
        with terminate_by_exception(args.command_name != "run"):
            return int(args.func(args) or 0)
    except UsageError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return _end_by_signal(signal.SIGINT)
    except Terminated as e:
        # What the command had begun is removed (finally blocks ran): now end as the signal
        # would have, so the caller sees the usual status (143 for SIGTERM).
        return _end_by_signal(e.signum)
    except BrokenPipeError:
        return 1
    except OSError as e:
        sys.stderr.write(f"{PROG}: error: {one_line(e)}\n")
        return 1
    except Exception as e:
        if isinstance(e, FpgaprofError):
            sys.stderr.write(f"{PROG}: error: {one_line(e)}\n")
            return 1
        if os.environ.get("FPGAPROF_DEBUG"):
            raise
        # A bug of fpgaprof: still one line (the promise), with the way to the traceback.
        sys.stderr.write(
            f"{PROG}: internal error: {type(e).__name__}: {one_line(e)} (rerun "
            f"with FPGAPROF_DEBUG=1 for the traceback and report it)\n"
        )
        return 1
