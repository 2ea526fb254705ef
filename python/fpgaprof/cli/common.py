"""What the commands of `fpgaprof` share: the program name, usage errors, output, loading a
trace, the card check, the digest and the HLO files."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from fpgaprof.analysis import targets
from fpgaprof.analysis.trace_analysis import store_of
from fpgaprof.api import fpga, job, xspace_import
from fpgaprof.api.profile import Profile, load
from fpgaprof.base.atomic import OutputSet, write_text_atomic
from fpgaprof.base.constants import TRACE_FILE_NAME
from fpgaprof.base.errors import FpgaprofError, InvalidArgumentError
from fpgaprof.base.text import read_side_json
from fpgaprof.capture import runner
from fpgaprof.report.digest import digest

__all__ = [
    "PROG",
    "row_imbalance_option",
    "TRACE_NAME",
    "UsageError",
    "usage_error",
    "failure",
    "one_line",
    "out",
    "load_trace",
    "trace_in",
    "other_runs_note",
    "check_target",
    "timeline_options",
    "untraced_count_of",
    "digest_of",
    "write_hlo_modules",
    "hlo_file_name",
    "Terminated",
    "terminate_by_exception",
]

PROG = "fpgaprof"
TRACE_NAME = TRACE_FILE_NAME


class UsageError(Exception):
    """Bad command line: exit status 2."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP reached a command (not `run`), or the program `run` ran died of
    SIGINT: raised in the main thread so that finally blocks and OutputSet remove what the
    command had begun; main() then ends the process by the same signal. A BaseException, so
    `except Exception` does not stop it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def terminate_by_exception(enabled: bool = True) -> Iterator[None]:
    """Inside the block SIGTERM and SIGHUP raise Terminated where they would end the process
    at once (their default action); a handler set by someone else, or an ignored signal,
    stays. The handlers are put back after the block. Main thread only (elsewhere: nothing)."""
    previous = {}
    if enabled and threading.current_thread() is threading.main_thread():

        def handler(signum: int, frame: Any) -> None:
            raise Terminated(signum)

        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None and signal.getsignal(sig) == signal.SIG_DFL:
                previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def usage_error(prog: str, message: str) -> UsageError:
    """The one-line usage error of every command: "<prog>: error: <message> (see `<prog>
    --help`)", prog being "fpgaprof" or "fpgaprof <command>"."""
    return UsageError(f"{prog}: error: {message} (see `{prog} --help`)")


def row_imbalance_option(prog: str, value: float | None) -> float | None:
    """A command's --row-imbalance, checked before anything runs: None when not given, else the
    ratio (HiSpMV's delta, >= 1; the core's check, one line). 0, which the API takes as "not
    known", is refused here: leaving the option out says that."""
    if value is None:
        return None
    if value == 0:
        raise usage_error(
            prog,
            "--row-imbalance 0: give HiSpMV's delta (>= 1), or leave the option out when "
            "the ratio is not known",
        )
    try:
        return targets.row_imbalance_arg(value)
    except InvalidArgumentError:
        # The core's message names the Python argument and offers 0, which this option
        # refuses: the command line's own words, and the exit status of a bad option (2).
        raise usage_error(
            prog,
            f"--row-imbalance {value:g}: give HiSpMV's delta, a number from 1 (balanced) to "
            "1e9, or leave the option out when the ratio is not known",
        ) from None


def out(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def load_trace(path: str) -> Profile:
    """A Profile from a trace file, or a clear error."""
    if not os.path.exists(path):
        raise FileNotFoundError(
            2, "no such trace file (give the path fpgaprof run/trace wrote)", path
        )
    return load(path)


def trace_in(path: str) -> str:
    """A trace path, also when given the output folder of `fpgaprof run` or an XProf profile
    (a jax.profiler.trace folder, returned as it is: fpgaprof.load reads it)."""
    if os.path.isdir(path):
        job.refuse_trace_beside_rank_folders(path)
        cand = os.path.join(path, TRACE_NAME)
        if os.path.exists(cand):
            return cand
        if xspace_import.is_xspace_path(path):
            return path
        if job.is_job_folder(path):
            ranks = job.find_rank_traces(path)
            first = next((r.path for r in ranks if r.path), None) or os.path.join(
                path, "<host>-rank<k>", TRACE_NAME
            )
            raise failure(
                f"{path} is a job folder of {len(ranks)} rank trace"
                f"{'s' if len(ranks) != 1 else ''}: give one rank's trace (such as {first}), "
                f"or run `{PROG} report {path}` for the job"
            )
        others = other_runs_note(path)
        raise FileNotFoundError(
            2,
            f"folder has no {TRACE_NAME} and no XProf profile (give the trace file itself, "
            "or a jax.profiler.trace folder)" + (f"; {others}" if others else ""),
            path,
        )
    return path


def other_runs_note(folder: str) -> str | None:
    """For a run folder: the traces that runs which found it taken wrote into its
    ``<host>-pid<p>/`` folders (not read by a report of the folder), where they are and how to
    report them; None when there are none."""
    found = job.other_run_traces(folder) if os.path.isdir(folder) else []
    if not found:
        return None
    dirs = [os.path.dirname(t) for t in found]
    shown = ", ".join(dirs[:3]) + (f" and {len(dirs) - 3} more" if len(dirs) > 3 else "")
    if len(found) == 1:
        return (
            f"{folder} also holds the trace of another run that found the folder in use "
            f"({dirs[0]}), not read here: `{PROG} report {dirs[0]}` reports it"
        )
    return (
        f"{folder} also holds the traces of {len(found)} other runs that found the folder in "
        f"use ({shown}), not read here: report each by its folder (`{PROG} report {dirs[0]}`)"
    )


def check_target(target: str | None, prog: str = PROG) -> None:
    """An unknown FPGA card name, or a card file (.json) that cannot be read or describes no
    valid card, is a usage error of command `prog` (a close match suggested, the known ones
    listed) when this build has the FPGA model; without it the candidates section says why it
    is missing."""
    if target is None:
        return
    if not target.strip():
        raise usage_error(
            prog,
            "--target is empty (give a card name such as alveo-u55c, or a card file CARD.json; "
            "leave the option out for the default card)",
        )
    try:
        names = [p["name"] for p in fpga.presets()]
    except Exception:  # noqa: BLE001 - no FPGA model in this build: the section says why
        return
    if not target.lower().endswith(".json"):
        if target.lower() not in {n.lower() for n in names}:  # "Alveo-U55C" is alveo-u55c
            raise usage_error(
                prog,
                f"unknown FPGA target {target!r} ({targets.preset_hint(target, names)}"
                f"use --target with one of {', '.join(names)}, or a card file CARD.json)",
            )
        return
    try:
        fpga.resolve_target(target)
    except FpgaprofError as e:
        raise usage_error(prog, f"--target: {e}") from None


def timeline_options(args: argparse.Namespace) -> dict:
    """write_all's timeline arguments from --no-timeline and --timeline-events (0: all)."""
    n = getattr(args, "timeline_events", None)
    return {
        "timeline": not getattr(args, "no_timeline", False),
        "timeline_max_events": None if not n else int(n),
    }


def untraced_count_of(prof: Any) -> int:
    """Further Python processes of the `fpgaprof run` that wrote `prof` that ran untraced (the
    count its warning names, capture.runner.untraced_count); 0 when none or unknown."""
    try:
        return runner.untraced_count(prof.meta.get("warnings", []))
    except Exception:  # noqa: BLE001 - no meta: nothing to say
        return 0


def digest_of(summary_path: str) -> str:
    """The closing lines of run/report (report/digest.py); one "(no digest: <why>)" line when
    the summary cannot be read (the files were written: the digest is only a convenience)."""
    try:
        with open(summary_path, encoding="utf-8") as f:
            return digest(json.load(f))
    except Exception as e:  # noqa: BLE001
        return f"{PROG}: (no digest: {one_line(e)})\n"


def hlo_file_name(name: str, program_id: int, index: int) -> str:
    """The file name of a stored HLO module in hlo/: XLA's own dump name (module_NNNN.NAME.txt),
    the name's characters outside letters, digits and ._- as _. A name longer than 96 bytes
    (file names end at 255) is cut and a hash of the whole name added, so long names stay
    distinct."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name) or f"m{index}"
    encoded = safe.encode("utf-8", "backslashreplace")
    if len(encoded) > _HLO_NAME_BYTES:
        digest = hashlib.sha256(name.encode("utf-8", "backslashreplace")).hexdigest()[:12]
        safe = encoded[:_HLO_NAME_BYTES].decode("utf-8", "ignore") + "-" + digest
    return f"module_{program_id:04d}.{safe}.txt" if program_id >= 0 else f"{safe}.txt"


_HLO_NAME_BYTES = 96


def _fpgaprof_folder(folder: str) -> bool:
    """Whether folder holds fpgaprof's outputs: a trace, or a summary.json fpgaprof wrote
    (its generated_by). Then the module files in its hlo/ are fpgaprof's too (XLA's dump under
    `fpgaprof run`, or an earlier report), not a dump of the user's own."""
    if os.path.isfile(os.path.join(folder, TRACE_NAME)):
        return True
    summary = read_side_json(os.path.join(folder, "summary.json"), "a summary.json")
    by = summary.get("generated_by") if isinstance(summary, dict) else None
    return isinstance(by, dict) and by.get("tool") == "fpgaprof"


def _holds_text(path: str, text: bytes) -> bool:
    """Whether the file at path holds text (a trailing newline aside)."""
    try:
        if abs(os.path.getsize(path) - len(text)) > 1:
            return False
        with open(path, "rb") as f:
            return f.read().rstrip(b"\n") == text.rstrip(b"\n")
    except OSError:
        return False


def write_hlo_modules(prof: Any, folder: str, *, staging: OutputSet | None = None) -> int:
    """The optimized HLO modules stored in the trace, one text file each, in `folder` (with
    `staging`: written into the set, to appear in `folder` when it is committed). A module
    whose file is already there with the same text (XLA's own dump under `fpgaprof run`, or an
    earlier report) is not written again. In the hlo/ folder of fpgaprof's outputs
    (_fpgaprof_folder), with `staging`, the files of another trace's modules are replaced:
    one under the same name with other text, and every module file this trace does not hold
    (the set removes them). Elsewhere a module file of another text is someone else's and is
    left as it is. Returns how many of the trace's modules the folder holds (0 when the
    profile does not expose them)."""
    mods = None
    for owner in (prof, store_of(prof)):
        if owner is None:
            continue
        try:
            mods = owner.hlo_modules
        except Exception:  # noqa: BLE001 - a running or odd profile: no modules to write
            mods = None
        if mods is not None:
            break
    if mods is None:
        return 0
    existing = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    ours = staging is not None and _fpgaprof_folder(os.path.dirname(os.path.abspath(folder)))
    kept: set[str] = set()
    n = 0
    for i, m in enumerate(mods):
        name = m.get("name") if isinstance(m, dict) else getattr(m, "name", "")
        text = m.get("text") if isinstance(m, dict) else getattr(m, "text", "")
        pid = m.get("program_id", -1) if isinstance(m, dict) else getattr(m, "program_id", -1)
        if not text:
            continue
        fname = hlo_file_name(str(name), int(pid), i)
        named = [e for e in existing if e.startswith(fname[:-3])]
        encoded = str(text).encode("utf-8", "surrogateescape")
        same = [e for e in named if _holds_text(os.path.join(folder, e), encoded)]
        if same:
            kept.update(same)
            n += 1  # already there: XLA's own dump (`fpgaprof run`) or an earlier report
            continue
        if named and not ours:
            continue  # a file of that name with another text, not fpgaprof's: left alone
        path = os.path.join(folder, fname)
        if staging is not None:
            path = staging.path(os.path.relpath(path, staging.folder))
        write_text_atomic(path, str(text))
        kept.add(fname)
        n += 1
    if ours and staging is not None:
        for e in existing:
            p = os.path.join(folder, e)
            if e.startswith("module_") and e not in kept and os.path.isfile(p):
                staging.remove(os.path.relpath(p, staging.folder))  # another trace's module
    return n


def failure(msg: str) -> FpgaprofError:
    """A command's failure (exit status 1, one line)."""
    return FpgaprofError(msg)


def one_line(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename:
        return f"{e.filename}: {e.strerror or e}"
    return " ".join(str(e).split()) or type(e).__name__
