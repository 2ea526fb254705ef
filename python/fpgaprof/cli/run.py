"""`fpgaprof run -- CMD`: an unmodified program traced from its first line (the bootstrap on
PYTHONPATH starts fpgaprof.trace() in it: capture.runner), signals passed on to it, its trace
saved at exit, then every report written from the trace."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from fpgaprof import report
from fpgaprof.base.atomic import make_folder, refuse_linked_folder
from fpgaprof.capture import job_process, process_env, runner, xla_flags
from fpgaprof.capture.signals import SAVE_ON
from fpgaprof.cli.common import (
    PROG,
    TRACE_NAME,
    Terminated,
    digest_of,
    failure,
    load_trace,
    one_line,
    row_imbalance_option,
    timeline_options,
    untraced_count_of,
    usage_error,
    write_hlo_modules,
)

__all__ = [
    "cmd_run",
    "check_command",
    "is_run_folder",
    "child_environment",
    "child_environment_and_setup",
    "claim_folder",
    "prune_hlo_dump",
    "pass_on",
    "inherited_fds",
    "SI_KERNEL",
    "RUN_LOCK",
]


def _drop_failed_run_leftovers(out_dir: str) -> None:
    """A run that wrote no trace leaves nothing of its own behind: the claim marker, and XLA's
    dump of the program's modules in hlo/ (this run's own: the folder was cleared of an earlier
    run's and held by this run), then hlo/ itself when nothing else is in it. Without its
    marks the folder would read as someone else's to the next run. A folder that refuses
    (read-only, immutable) keeps them: the command's status is what counts."""
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(out_dir, runner.CLAIM_NAME))
    hlo = os.path.join(out_dir, "hlo")
    with contextlib.suppress(OSError):
        if not os.path.islink(hlo):
            for name in os.listdir(hlo):
                if name.startswith("module_"):
                    _remove_dump_entry(os.path.join(hlo, name))
    with contextlib.suppress(OSError):  # not there, or not empty: kept as it is
        os.rmdir(hlo)


def prune_hlo_dump(folder: str) -> int:
    """Keeps only the optimized HLO text of each module XLA dumped into folder
    (xla_flags.is_optimized_hlo_file); removes XLA's other dump files (pre-
    optimization HLO, buffer assignment, debug options, per-module folders). Returns how many
    modules are kept."""
    if not os.path.isdir(folder):
        return 0
    kept = 0
    for name in os.listdir(folder):
        p = os.path.join(folder, name)
        if not name.startswith("module_"):
            continue
        if xla_flags.is_optimized_hlo_file(name) and not (
            os.path.isdir(p) and not os.path.islink(p)
        ):
            kept += 1
        else:
            _remove_dump_entry(p)
    return kept


def _remove_dump_entry(path: str) -> None:
    """Removes one entry of an XLA dump folder: a folder (not a link to one) with what is in it,
    else the file or link."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        os.unlink(path)


def child_environment(
    out_dir: str,
    *,
    keep_command_buffers: bool,
    counters: bool,
    target: str | None,
    base: dict | None = None,
    job_root: str | None = None,
    buffer_size: int | None = None,
    device_buffer_size: int | None = None,
) -> dict:
    """The environment the profiled command starts with: the bootstrap on PYTHONPATH (it
    starts fpgaprof.trace() before the script), fpgaprof's XLA flags with the HLO dump in
    out_dir/hlo (or the user's own --xla_dump_to, kept), and the FPGAPROF_RUN_* settings the
    bootstrap reads."""
    return child_environment_and_setup(
        out_dir,
        keep_command_buffers=keep_command_buffers,
        counters=counters,
        target=target,
        base=base,
        job_root=job_root,
        buffer_size=buffer_size,
        device_buffer_size=device_buffer_size,
    )[0]


def child_environment_and_setup(
    out_dir: str,
    *,
    keep_command_buffers: bool,
    counters: bool,
    target: str | None,
    base: dict | None = None,
    job_root: str | None = None,
    buffer_size: int | None = None,
    device_buffer_size: int | None = None,
) -> tuple[dict, xla_flags.XlaSetup]:
    """child_environment() and what it did to the XLA flags and allocator settings
    (``xla_flags.describe`` of it is the line `fpgaprof run` prints)."""
    env = dict(os.environ if base is None else base)
    # This process may have prepared its own environment on import (a temp dump dir that it
    # removes at exit): the child gets a clean preparation of its own instead.
    marker = env.pop(xla_flags.MARKER_ENV, None)
    if marker:
        flags = xla_flags.split_flags(env.get("XLA_FLAGS", ""))
        setup = xla_flags.current() if base is None else None
        # The marker may come from an ancestor process too (then this process added nothing):
        # its dump dir is always dropped, and its command-buffer flag when the user asks to
        # keep command buffers.
        drop = set(setup.flags_added) if setup is not None else set()
        if keep_command_buffers:
            drop.add("--xla_gpu_enable_command_buffer=")
        kept = [
            f for f in flags if f not in drop and xla_flags.flag_value([f], "xla_dump_to") != marker
        ]
        if kept:
            env["XLA_FLAGS"] = " ".join(kept)
        else:
            env.pop("XLA_FLAGS", None)
    if base is None and xla_flags.current().compilation_cache_set_by_us:
        # Set by this process's own `import fpgaprof`, not by the user: the child's preparation
        # sets it again and says so.
        env.pop("JAX_ENABLE_COMPILATION_CACHE", None)
    setup = xla_flags.prepare(
        env, keep_command_buffers=keep_command_buffers, dump_dir=os.path.join(out_dir, "hlo")
    )
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # fpgaprof/
    boot = os.path.join(package, "_bootstrap")
    # The user's PYTHONPATH is kept as given: an empty entry (":/x", "/x:", the usual
    # `PYTHONPATH=$PYTHONPATH:/x` with nothing set before) is the current folder to Python.
    user_path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = boot + (os.pathsep + user_path if user_path else "")
    env["FPGAPROF_RUN_DIR"] = os.path.abspath(out_dir)
    env["FPGAPROF_RUN_TRACE"] = os.path.join(os.path.abspath(out_dir), TRACE_NAME)
    env["FPGAPROF_RUN_COUNTERS"] = "1" if counters else "0"
    for var, size in (
        ("FPGAPROF_RUN_BUFFER_SIZE", buffer_size),
        ("FPGAPROF_RUN_DEVICE_BUFFER_SIZE", device_buffer_size),
    ):
        if size:
            env[var] = str(size)
        else:
            env.pop(var, None)
    if (
        counters
        and "XLA_PYTHON_CLIENT_PREALLOCATE" not in env
        and "XLA_PYTHON_CLIENT_ALLOCATOR" not in env
    ):
        # Kernel replay saves and restores JAX's preallocated pool around every kernel (seconds
        # per kernel on an H100): the pool grows on demand instead. A value the user set is kept.
        env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
        setup.env_set["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    if keep_command_buffers:
        env["FPGAPROF_KEEP_COMMAND_BUFFERS"] = "1"
    if job_root:
        env["FPGAPROF_RUN_JOB_ROOT"] = os.path.abspath(job_root)
    else:
        env.pop("FPGAPROF_RUN_JOB_ROOT", None)
    return env, setup


SI_KERNEL = 0x80  # siginfo si_code of a signal the kernel sent (a terminal's Ctrl-C, a hangup)


def pass_on(si_code: int, same_group: bool) -> bool:
    """Whether `run` sends a signal it received on to the command: not one the kernel sent
    (si_code SI_KERNEL: a terminal's Ctrl-C or hangup goes to the whole foreground process
    group, so a command in run's group has it already); one a process sent (SI_USER, SI_QUEUE,
    SI_TKILL) was meant for run alone, or for both (`kill -INT -<pgid>`: then the command gets
    two, see docs/reports.md)."""
    return not (si_code == SI_KERNEL and same_group)


def _child_setup(watched: list[int], mask: Any, parent_pid: int) -> Any:
    """The preexec function of the profiled command: signal dispositions and mask as this
    process had them before run blocked them, and SIGTERM when this process dies (Linux
    PR_SET_PDEATHSIG: a SIGKILLed `fpgaprof run` must not leave the program running; the
    traced Python saves its trace on SIGTERM)."""
    prctl = None
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            prctl = None

    def setup() -> None:
        for num in watched:
            signal.signal(num, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if prctl is not None:
            prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
            if os.getppid() != parent_pid:  # died before the prctl: too late for it
                os.kill(os.getpid(), signal.SIGTERM)

    return setup


def inherited_fds() -> list[int]:
    """The descriptors above 2 this process was given to pass down: those open and inheritable
    now. Python opens its own descriptors non-inheritable (PEP 446; run's lock is O_CLOEXEC),
    so these are what the shell or launcher handed over: an MPI process manager's PMI_FD, a
    `3>log` redirection, make's jobserver, LISTEN_FDS. The program gets them as a direct start
    would."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        fds = []
        for name in names:
            try:
                fd = int(name)
                if fd > 2 and os.get_inheritable(fd):
                    fds.append(fd)
            except (ValueError, OSError):  # the listing's own descriptor, closed by now
                continue
        return sorted(fds)
    return []


def _still_open(fds: list[int]) -> tuple[int, ...]:
    """fds less any closed since they were listed (Popen fails on a closed one)."""
    kept = []
    for fd in fds:
        try:
            os.fstat(fd)
        except OSError:
            continue
        kept.append(fd)
    return tuple(kept)


def _run_forwarding_signals(command: list[str], env: dict, pass_fds: Sequence[int] = ()) -> int:
    """Runs the command and returns its wait status (negative: the signal that ended it).

    SIGINT, SIGTERM and SIGHUP sent to this process alone (`kill <pid>`, a scheduler) are
    passed on to the command: a traced Python saves its trace and ends as the signal would end
    it, and the reports are still written here. Signals the kernel sent to the whole
    foreground process group (Ctrl-C, a terminal hangup) reached the command already and are
    not sent twice. Signals this process ignores (nohup, a background job) stay ignored by the
    command. The command gets SIGTERM when this process dies, even by SIGKILL (Linux)."""
    watched = [
        num for num in (signal.SIGINT, *SAVE_ON) if signal.getsignal(num) is not signal.SIG_IGN
    ]
    if not hasattr(signal, "sigtimedwait"):
        return _run_forwarding_by_handlers(command, env, watched, pass_fds)
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, watched + [signal.SIGCHLD])
    try:
        proc = subprocess.Popen(
            command,
            env=env,
            pass_fds=_still_open(list(pass_fds)),
            preexec_fn=_child_setup(watched, old_mask, os.getpid()),
        )
        try:
            same_group = os.getpgid(proc.pid) == os.getpgrp()
        except OSError:
            same_group = True
        while proc.poll() is None:
            info = signal.sigtimedwait(watched + [signal.SIGCHLD], 1.0)
            if info is None or info.si_signo == signal.SIGCHLD:
                continue
            if not pass_on(info.si_code, same_group):
                continue
            try:
                proc.send_signal(info.si_signo)
            except OSError:
                pass
        # What came after the command ended is not passed on (nothing to pass it to).
        while signal.sigtimedwait(watched + [signal.SIGCHLD], 0) is not None:
            pass
        return proc.wait()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


def _run_forwarding_by_handlers(
    command: list[str], env: dict, watched: list[int], pass_fds: Sequence[int] = ()
) -> int:
    """_run_forwarding_signals where sigtimedwait is missing (macOS): SIGTERM and SIGHUP are
    passed on; SIGINT is left to the terminal (no way to tell who sent it)."""
    child: list = []  # the program, once started
    early: list[int] = []  # signals that came before it started

    def _pass_on(signum: int, _frame: object) -> None:
        if not child:
            early.append(signum)
            return
        try:
            child[0].send_signal(signum)
        except OSError:
            pass

    # A Python-level no-op, not SIG_IGN: an ignored SIGINT would be inherited through exec and
    # the program would never see KeyboardInterrupt; a caught one is reset to the default.
    old_handlers: dict = {}
    try:
        for num in watched:
            try:
                old_handlers[num] = signal.signal(
                    num, (lambda *_: None) if num == signal.SIGINT else _pass_on
                )
            except (OSError, ValueError):
                pass
        proc = subprocess.Popen(command, env=env, pass_fds=_still_open(list(pass_fds)))
        child.append(proc)
        for num in early:
            proc.send_signal(num)
        return proc.wait()
    finally:
        for num, old in old_handlers.items():
            signal.signal(num, old)


RUN_LOCK = runner.RUN_LOCK_NAME


def claim_folder(out_dir: str) -> tuple[str, int]:
    """The folder this run writes to and the descriptor of its lock (release_folder() lets it go
    and removes the file as the run ends; the kernel drops it if the process dies). A run holds
    an exclusive flock on FOLDER/.fpgaprof-run.lock while it runs; when
    another live `fpgaprof run` holds out_dir's, this run takes a folder of its own inside it,
    out_dir/<host>-pid<pid>, and says so, so that no run replaces or removes another's
    trace. A lock whose run is gone (crash, SIGKILL) is free again: the kernel drops it."""
    make_folder(out_dir)
    fd = _lock(out_dir)
    if fd is not None:
        return out_dir, fd
    own = os.path.join(out_dir, job_process.pid_folder_name(job_process.host_name(), os.getpid()))
    os.makedirs(own, exist_ok=True)
    fd = _lock(own)
    if fd is None:  # only this process names a folder with its pid
        raise OSError(f"{own}: is in use by another fpgaprof run: choose another -o")
    sys.stderr.write(
        f"{PROG} run: {out_dir} is in use by another fpgaprof run: this run writes to {own}\n"
    )
    return own, fd


def _lock(folder: str) -> int | None:
    """A descriptor holding FOLDER/.fpgaprof-run.lock exclusively, or None when another
    process holds it. A run that ends removes its lock file while it holds it
    (release_folder): a lock taken on a file that is no longer the one at that path (opened
    just before it was removed) is let go and taken again on the path's new file."""
    path = os.path.join(folder, RUN_LOCK)
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    while True:
        fd = os.open(path, flags, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = os.fstat(fd)
            try:
                now = os.stat(path, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                return fd
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # its run removed it as we opened it: take the path's new file


def release_folder(folder: str, fd: int) -> None:
    """Ends a claim_folder() claim: removes FOLDER/.fpgaprof-run.lock while still holding it
    (so no file is left behind; a run that opened it meanwhile sees it gone, _lock) and lets
    the lock go."""
    try:
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(folder, RUN_LOCK))
    finally:
        os.close(fd)


def cmd_run(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise usage_error(
            f"{PROG} run", f"no command given (usage: {PROG} run [-o DIR] -- python script.py ARGS)"
        )
    # a bad ratio fails before the command runs
    args.row_imbalance = row_imbalance_option(f"{PROG} run", args.row_imbalance)
    # the ratio is not stored in the trace: the hints to report again repeat it
    again = f" --row-imbalance {args.row_imbalance:g}" if args.row_imbalance else ""
    # A command that cannot start fails before the run folder is claimed or anything in it
    # touched: a typo after -- costs nothing of an earlier run.
    try:
        check_command(command[0])
    except (FileNotFoundError, PermissionError) as e:
        # The shell's statuses (and env's, timeout's, nohup's): 127 not found, 126 not
        # executable, so a wrapper tells them from the program's own failure.
        sys.stderr.write(f"{PROG}: error: {one_line(e)}\n")
        return 127 if isinstance(e, FileNotFoundError) else 126
    # What the caller handed down for the program, listed before run opens anything itself.
    args.pass_fds = inherited_fds()
    out_dir = os.path.abspath(args.output)
    proc = job_process.from_environment()
    if proc is not None:
        # One process of a job started by a launcher (srun, mpirun, torchrun): every process
        # gets its own run folder, out/<host>-rank<k>; `fpgaprof report out` reads them as one.
        out_dir = os.path.join(out_dir, proc.folder_name())
    args.job_rank = proc is not None
    nested = runner.nested_run(out_dir)
    if nested:
        sys.stderr.write(f"{PROG} run: warning: {nested}\n")
    # Claimed before anything in it is touched: another live run's files are never removed.
    try:
        out_dir, held = claim_folder(out_dir)
    except OSError as e:
        if e.errno is None or e.strerror is None:
            raise  # already says what to do
        raise OSError(
            e.errno, f"{e.strerror} (give -o a folder this user can create and write)", e.filename
        ) from None
    try:
        return _run_in(args, command, out_dir, proc, again)
    finally:
        release_folder(out_dir, held)


# What `run` writes into its folder, and the markers its traced process leaves there.
_RUN_OUTPUTS = (
    TRACE_NAME,
    runner.CLAIM_NAME,
    runner.SAVED_AT_NAME,
    runner.NO_TRACE_NAME,
    runner.EXIT_STATUS_NAME,
    "report.html",
    "summary.json",
    "timeline.json",
    "environment.json",
)
# Any of these makes a folder an earlier run's (fpgaprof's own names: no user file has them).
_RUN_MARKS = (
    TRACE_NAME,
    runner.CLAIM_NAME,
    runner.SAVED_AT_NAME,
    runner.NO_TRACE_NAME,
    runner.EXIT_STATUS_NAME,
    runner.UNTRACED_DIR,
)


def check_command(name: str) -> str:
    """The program `run` would start for `name` (the first word after --), found as the shell
    finds it: a name with a / is that file, another is looked up on PATH (the program's PATH
    is this process's). A missing or non-executable command raises FileNotFoundError or
    PermissionError naming it."""
    if os.sep in name or (os.altsep and os.altsep in name):
        if not os.path.exists(name):
            raise FileNotFoundError(2, "no such file (check the path after --)", name)
        if os.path.isdir(name) or not os.access(name, os.X_OK):
            raise PermissionError(
                13,
                "is not an executable file (check the path after --, or chmod +x it)",
                name,
            )
        return name
    exe = shutil.which(name)
    if exe is None:
        raise FileNotFoundError(2, "command not found (check the name after --)", name)
    return exe


def is_run_folder(out_dir: str) -> bool:
    """Whether out_dir holds an earlier `fpgaprof run`'s folder: its trace, the markers its
    traced process leaves, or the rank folders of a job run into it."""
    if any(os.path.lexists(os.path.join(out_dir, n)) for n in _RUN_MARKS):
        return True
    try:
        names = os.listdir(out_dir)
    except OSError:
        return False
    return any(
        job_process.RANK_FOLDER_RE.match(n) and os.path.isdir(os.path.join(out_dir, n))
        for n in names
    )


def _clear_earlier_run(out_dir: str, hlo_dir: str) -> None:
    """Removes an earlier run's outputs from out_dir, and XLA's dump of its modules from
    hlo_dir. Only a folder fpgaprof recognises as a run folder (is_run_folder) is cleared: in
    any other folder a file of those names is the user's, and the run is refused before the
    command starts, with nothing removed."""
    hlo_modules = (
        [n for n in os.listdir(hlo_dir) if n.startswith("module_")]
        if os.path.isdir(hlo_dir)
        else []
    )
    if not is_run_folder(out_dir):
        theirs = [n for n in _RUN_OUTPUTS if os.path.lexists(os.path.join(out_dir, n))]
        theirs += [os.path.join("hlo", n) for n in sorted(hlo_modules)]
        if theirs:
            shown = ", ".join(theirs[:4]) + (
                f" and {len(theirs) - 4} more" if len(theirs) > 4 else ""
            )
            raise failure(
                f"{out_dir} holds files fpgaprof did not write ({shown}), which the run's "
                "outputs would replace: give -o a new folder, or the folder of an earlier "
                f"{PROG} run"
            )
        return
    for stale in _RUN_OUTPUTS:
        if os.path.lexists(os.path.join(out_dir, stale)):
            os.unlink(os.path.join(out_dir, stale))
    runner.drop_untraced_markers(out_dir)
    for name in hlo_modules:
        p = os.path.join(hlo_dir, name)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            os.unlink(p)


def _run_in(
    args: argparse.Namespace,
    command: list[str],
    out_dir: str,
    proc: job_process.JobProcess | None,
    again: str,
) -> int:
    """cmd_run once out_dir is claimed: the folder cleared of an earlier run's outputs, the
    command run, and what follows it."""
    hlo_dir = os.path.join(out_dir, "hlo")
    refuse_linked_folder(hlo_dir)  # its old modules are removed below, never through a link
    # Outputs of an earlier run in the same folder would pass for this run's.
    _clear_earlier_run(out_dir, hlo_dir)
    env, setup = child_environment_and_setup(
        out_dir,
        keep_command_buffers=args.keep_command_buffers,
        counters=args.counters,
        target=args.target,
        # No launcher named the rank: a jax.distributed job started by hand saves each
        # process' trace in args.output/<host>-rank<k> once JAX knows the rank (runner).
        job_root=args.output if proc is None else None,
        buffer_size=args.buffer_size,
        device_buffer_size=args.device_buffer_size,
    )
    if args.counters:
        if process_env.jax_preallocates(env):  # the user's own allocator setting keeps JAX's pool
            sys.stderr.write(
                f"{PROG} run: warning: --counters with JAX's preallocated pool (kept by your "
                f"XLA_PYTHON_CLIENT_PREALLOCATE={env.get('XLA_PYTHON_CLIENT_PREALLOCATE', '')!r} / "
                "XLA_PYTHON_CLIENT_ALLOCATOR="
                f"{env.get('XLA_PYTHON_CLIENT_ALLOCATOR', '')!r}): kernel "
                "replay saves and restores the pool around every kernel, seconds per kernel on an "
                "H100; unset them or set XLA_PYTHON_CLIENT_PREALLOCATE=false\n"
            )
    # What was merged into the user's XLA_FLAGS and environment, and what of theirs was kept.
    sys.stderr.write(f"{PROG} run: {xla_flags.describe(setup)}\n")
    status = _run_forwarding_signals(command, env, getattr(args, "pass_fds", []))
    code = status if status >= 0 else 128 - status
    try:
        result = _after_the_command(args, out_dir, code, again)
    except KeyboardInterrupt:
        # Ctrl-C while the reports are written (minutes for a large trace): the trace the
        # program saved is whole; only the reports are not written.
        trace = runner.saved_trace(out_dir) or os.path.join(out_dir, TRACE_NAME)
        if os.path.isfile(trace):
            sys.stderr.write(
                f"{PROG} run: reports interrupted; the trace {trace} is kept "
                f"(`{PROG} report {os.path.dirname(trace)}{again}` writes them)\n"
            )
        raise Terminated(signal.SIGINT) from None
    except Exception as e:  # noqa: BLE001 - the command's status wins over a failure after it
        sys.stderr.write(
            f"{PROG} run: after the command ended: {one_line(e)}; its exit status {code} is "
            f"kept (look for {os.path.join(out_dir, TRACE_NAME)} and run `{PROG} report` on it)\n"
        )
        result = code if code else 1
    if status == -signal.SIGINT:
        # The program died of Ctrl-C: run ends by SIGINT too (the reports are written), so
        # that a calling shell script stops as it would without fpgaprof (cli._end_by_signal).
        raise Terminated(signal.SIGINT)
    return result


def _after_the_command(args: argparse.Namespace, out_dir: str, code: int, again: str) -> int:
    """Everything `run` does once the command has ended: the trace found (or why there is none),
    the run folder tidied, the reports written. Returns the command's status (1 when it
    succeeded but no trace was written or the reports failed)."""
    trace = os.path.join(out_dir, TRACE_NAME)
    untraced = runner.untraced_warning(runner.untraced_processes(out_dir))
    runner.drop_untraced_markers(out_dir)
    run_dir, moved = out_dir, runner.saved_trace(out_dir)
    if moved is not None:
        trace, out_dir = moved, os.path.dirname(moved)
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(run_dir, runner.SAVED_AT_NAME))
        sys.stderr.write(
            f"{PROG} run: the program is one process of a jax.distributed job: its trace and "
            f"reports are in {out_dir} (`{PROG} report {os.path.dirname(out_dir)}{again}` reads "
            "the job)\n"
        )
    if not os.path.exists(trace):
        # why: from the marker the traced process left
        message = runner.no_trace_message(out_dir, code)
        _drop_failed_run_leftovers(out_dir)
        if getattr(args, "job_rank", False):
            # The job report names this rank as missing: with the reason run knows, not a
            # guess from the (removed) claim marker.
            with contextlib.suppress(OSError):
                with open(os.path.join(out_dir, runner.NO_TRACE_NAME), "w", encoding="utf-8") as f:
                    f.write(f"{message}\n")
        sys.stderr.write(f"{PROG} run: {message}\n")
        if untraced:
            sys.stderr.write(f"{PROG} run: warning: {untraced}\n")
        return code if code else 1
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(run_dir, ".fpgaprof-claim"))
    if getattr(args, "job_rank", False) or moved is not None:
        # A rank that saved its trace but failed: the trace does not say so, the job report
        # reads the status here (written before the reports, which may fail).
        runner.write_exit_status(out_dir, code)
    try:
        kept = prune_hlo_dump(os.path.join(run_dir, "hlo"))
    except OSError:  # XLA's extra dump files stay; the reports take the modules from the trace
        kept = 0
    if run_dir != out_dir:
        kept = 0  # XLA's dump stayed in the run folder: the rank folder gets the trace's
    try:
        bar = report.Progress(1 + len(report.WRITE_STAGES), f"{PROG} run")
        bar.stage("loading trace")
        prof = load_trace(trace)
        if untraced:
            # Kept in the trace file, so that `fpgaprof report` says it too; the program's own
            # trace is intact if this fails (a full disk), and the reports are still written.
            prof.store.add_warning(untraced, "capture.untraced_processes")
            try:
                prof.save(trace)
            except Exception as e:  # noqa: BLE001 - only the extra warning line is lost
                print(
                    f"{PROG}: warning: could not add the untraced-process warning to {trace} "
                    f"({e}); the reports below carry it",
                    file=sys.stderr,
                )
        paths = report.write_all(
            prof,
            out_dir,
            target=args.target,
            row_imbalance=args.row_imbalance,
            trace_path=trace,
            progress=bar,
            untraced_processes=untraced_count_of(prof),
            **timeline_options(args),
        )
        if kept == 0:
            write_hlo_modules(prof, os.path.join(out_dir, "hlo"))
        sys.stderr.write(digest_of(paths["summary"]))
        if untraced:
            sys.stderr.write(f"{PROG} run: warning: {untraced}\n")
        if paths.get("timeline_note"):
            sys.stderr.write(f"{PROG} run: {paths['timeline_note']}\n")
        sys.stderr.write(
            f"{PROG} run: report {paths['html']} · summary {paths['summary']}"
            + (f" · timeline {paths['timeline']}" if paths["timeline"] else "")
            + "\n"
        )
    except Exception as e:  # noqa: BLE001 - the command's status wins; the failure is said
        # The command's status still wins; the report failure is stated once.
        sys.stderr.write(
            f"{PROG} run: the trace {trace} was written but the reports failed: "
            f"{one_line(e)} (retry with `{PROG} report {trace}{again}`)\n"
        )
        return code if code else 1
    return code
