"""Marks the Python processes of a `fpgaprof run` that are not traced.

Only the first Python process of a run traces (it claims FPGAPROF_RUN_DIR/.fpgaprof-claim).
Every other Python process that starts with the bootstrap (multiprocessing spawn and forkserver
workers, the forkserver itself, ``subprocess.run([sys.executable, ...])``) and every child
forked by a bootstrapped process (``os.fork``, multiprocessing "fork") leaves one marker file,
FPGAPROF_RUN_DIR/.fpgaprof-untraced/<pid>.json, so that `fpgaprof run` can say how many Python
processes ran untraced and what they were (fpgaprof.capture.runner.untraced_processes reads them).

Where such a process has not started its XLA backend yet, its HLO dump goes to its own folder
.fpgaprof-untraced/<pid>.hlo instead of the run's hlo/ (it is not the traced program's HLO); the
count of optimized modules found there tells whether it compiled XLA modules.

Loaded by the bootstrap without importing fpgaprof (an untraced process must stay as light as
without fpgaprof): standard library only. Never raises: a read-only or vanished run folder
means no marker.
"""

import json
import os
import sys
import types

UNTRACED_DIR = ".fpgaprof-untraced"


def _argv() -> list:
    argv = getattr(sys, "orig_argv", None) or getattr(sys, "argv", None) or []
    return [str(a) for a in argv]


def _backend_started() -> bool:
    bridge = sys.modules.get("jax._src.xla_bridge")
    if bridge is None:
        return False
    started = getattr(bridge, "backends_are_initialized", None)
    try:
        return bool(started()) if started is not None else bool(getattr(bridge, "_backends", None))
    except Exception:  # noqa: BLE001 - a private API: assume started (its flags are fixed)
        return True


def _flags(value: str) -> list:
    """XLA_FLAGS split as XLA splits it (whitespace outside quotes; a backslash escapes inside
    double quotes): the standard-library twin of fpgaprof.capture.xla_flags.split_flags."""
    flags, cur, quote, escaped = [], [], "", False
    for ch in value:
        if quote:
            cur.append(ch)
            if escaped:
                escaped = False
            elif quote == '"' and ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            cur.append(ch)
            quote = ch
        elif ch.isspace():
            if cur:
                flags.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        flags.append("".join(cur))
    return flags


def _dump_to(flag: str):
    """The folder a --xla_dump_to flag names (unquoted as XLA reads it), else None."""
    if not flag.startswith("--xla_dump_to="):
        return None
    value = flag[len("--xla_dump_to=") :]
    if not value or value[0] not in "\"'":
        return value
    out, i = [], 1
    while i < len(value) and value[i] != value[0]:
        if value[0] == '"' and value[i] == "\\" and i + 1 < len(value):
            i += 1
        out.append(value[i])
        i += 1
    return "".join(out)


def _dump_flag(folder: str) -> str:
    """--xla_dump_to=folder, quoted as fpgaprof.capture.xla_flags.quoted_flag quotes it."""
    if any(c.isspace() or c in "\"'\\" for c in folder):
        folder = '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "--xla_dump_to=" + folder


def _repoint_dump(out_dir: str, own_dir: str) -> bool:
    """Moves this process's XLA dump from the run's hlo/ to own_dir (XLA reads XLA_FLAGS when
    its backend starts, so only before that). Returns whether it did."""
    # The run's hlo/ or, in a child of an untraced process, that process's own folder.
    ours = (os.path.join(out_dir, "hlo"), os.path.join(out_dir, UNTRACED_DIR) + os.sep)
    flags = _flags(os.environ.get("XLA_FLAGS", ""))
    dirs = [_dump_to(f) for f in flags]
    old = next(
        (
            f
            for f, d in zip(flags, dirs)
            if d is not None and (d == ours[0] or d.startswith(ours[1]))
        ),
        None,
    )
    if old is None or _backend_started():
        return False
    try:
        os.makedirs(own_dir, exist_ok=True)
    except OSError:
        return False
    os.environ["XLA_FLAGS"] = " ".join(_dump_flag(own_dir) if f == old else f for f in flags)
    if os.environ.get("FPGAPROF_XLA_DUMP_DIR") == _dump_to(old):
        os.environ["FPGAPROF_XLA_DUMP_DIR"] = own_dir  # an `import fpgaprof` here keeps it
    return True


def note(out_dir: str, how: str) -> None:
    """Writes this process's marker (atomically: a temp file renamed into place). how:
    "started" (a Python that ran the bootstrap but did not claim the run) or "forked"."""
    try:
        folder = os.path.join(out_dir, UNTRACED_DIR)
        try:
            os.mkdir(folder)  # not makedirs: a run folder that is gone stays gone
        except FileExistsError:
            pass
        pid = os.getpid()
        own_dump = os.path.join(folder, f"{pid}.hlo")
        info = {
            "pid": pid,
            "ppid": os.getppid(),
            "argv": _argv(),
            "how": how,
            "hlo_dir": own_dump if _repoint_dump(out_dir, own_dump) else None,
        }
        tmp = os.path.join(folder, f".{pid}.json.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(info, f)
        os.replace(tmp, os.path.join(folder, f"{pid}.json"))
    except Exception:  # noqa: BLE001 - the marker only improves the run's report
        pass


def _about_to_exec() -> bool:
    """Whether this freshly forked child is subprocess's, forked to run a ``preexec_fn`` and
    then exec another program (Python runs the fork hooks there too): not an untraced Python
    process; a Python it execs leaves its own "started" marker."""
    frame: types.FrameType | None
    try:
        frame = sys._getframe(1)
    except (AttributeError, ValueError):
        return False
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_execute_child" and os.path.basename(code.co_filename) == (
            "subprocess.py"
        ):
            return True
        frame = frame.f_back
    return False


def _forked(out_dir: str) -> None:
    if not _about_to_exec():
        note(out_dir, "forked")


def watch_forks(out_dir: str) -> None:
    """Every child this process forks from now on leaves a "forked" marker (not the children
    subprocess forks only to exec a program: see _about_to_exec)."""
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=lambda: _forked(out_dir))
