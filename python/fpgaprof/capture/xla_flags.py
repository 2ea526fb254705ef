"""XLA flags that fpgaprof needs, merged into the user's environment before the XLA backend starts.

XLA parses ``XLA_FLAGS`` once, when the first backend starts (``jax.devices()``, the first
array, the first ``jit`` call), not when ``jax`` is imported. ``prepare(env)`` therefore has
to run before that: ``import fpgaprof`` calls it for its own process (through
``process_env.prepare_process``) and ``fpgaprof run`` calls it for the child's environment.

What it adds (never replacing a flag the user set):

* ``--xla_dump_to=DIR --xla_dump_hlo_as_text``: XLA writes the optimized HLO of every module it
  compiles as ``module_NNNN.NAME.<platform>_after_optimizations.txt`` (NNNN is the module's
  unique id, the ``program_id`` of XLA's ``XlaModule`` NVTX ranges). DIR is a per-process temp
  dir ``fpgaprof-hlo-<pid>-*`` removed at exit (also when a trace is saved on SIGTERM/SIGHUP;
  ones left by killed processes are removed by the next ``import fpgaprof``),
  ``$FPGAPROF_HLO_DUMP_DIR`` (kept), or the user's own ``--xla_dump_to`` (kept; text dumping is
  added to it).
* ``--xla_gpu_enable_command_buffer=`` (empty list): XLA otherwise captures thunks into CUDA
  graphs, which hides the per-thunk NVTX ranges that map kernels to HLO ops. Kept when the user
  set the flag, or with ``FPGAPROF_KEEP_COMMAND_BUFFERS=1``
  (``prepare(keep_command_buffers=True)``).
  The flag is harmless (accepted, unused) on CPU.
* ``JAX_ENABLE_COMPILATION_CACHE=false`` unless the user set it (or
  ``FPGAPROF_KEEP_COMPILATION_CACHE=1``): a module loaded from JAX's persistent cache is not
  compiled in the run. Observed on the CPU backend (jax 0.10.1): XLA still dumps its
  optimized HLO text (``module_NNNN.NAME.after_optimizations.txt``, no platform prefix; read
  like the others), but not its buffer assignment or live ranges. The GPU backend was not
  checked.

The user's other flags (``--xla_dump_hlo_as_html``, ...) are left as they are, in their order,
with fpgaprof's additions after them. ``describe(setup)`` says in one line what was added, what
of the user's was kept and what else was set (``fpgaprof run`` prints it; ``fpgaprof devices``
shows it).
"""

from __future__ import annotations

import atexit
import errno
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass, field

from fpgaprof.base.core import core
from fpgaprof.base.errors import FpgaprofWarning
from fpgaprof.base.text import ascii_whole_number

__all__ = [
    "XlaSetup",
    "DumpedModule",
    "prepare",
    "describe",
    "current",
    "split_flags",
    "flag_value",
    "quoted_flag",
    "read_dumped_modules",
    "sanitize_kernel_name",
    "warn_if_backend_started",
    "modules_for_trace",
    "module_range_ids",
    "module_ranges",
    "thunk_ops",
    "prune_dump_dir",
    "is_optimized_hlo_file",
    "prune_stale_dump_dirs",
    "remove_owned_dump_dir",
    "jax_backend_started",
    "MARKER_ENV",
    "OWNER_LOCK_NAME",
]

# Set in an environment that prepare() has already handled: the dump dir fpgaprof chose, so that
# a child (``fpgaprof run``) or a second call recognises the flags as fpgaprof's, not the user's.
MARKER_ENV = "FPGAPROF_XLA_DUMP_DIR"

# XLA leaves the module name out of the file name when the name would make it longer than a
# file name may be (xla/service/dump.cc, FilenameFor): module_NNNN.cpu_after_optimizations.txt.
_AFTER_OPT = r"^module_(\d+)\.(?:(.+?)\.)?(?:[^.]*_)?after_optimizations"
_AFTER_OPT_RE = re.compile(_AFTER_OPT + r"\.txt$")
# What prune_dump_dir keeps besides the HLO text: XLA's buffer assignment and live ranges of
# each optimized module (read into the trace with it: DumpedModule.buffer_assignment).
_KEPT_RE = re.compile(_AFTER_OPT + r"(?:-buffer-assignment|-live-range)?\.txt$")
_BUFFER_ASSIGNMENT_SUFFIX = "-buffer-assignment.txt"


def is_optimized_hlo_file(name: str) -> bool:
    """Whether a dump file's name is XLA's optimized HLO text of a module
    (module_NNNN[.NAME].<platform>_after_optimizations.txt)."""
    return _AFTER_OPT_RE.match(name) is not None


_LIVE_RANGE_SUFFIX = "-live-range.txt"
_HLO_MODULE_NAME_RE = re.compile(r"^\s*HloModule\s+([^\s,]+)", re.MULTILINE)


@dataclass
class XlaSetup:
    """What prepare() did to one environment."""

    dump_dir: str = ""  # where XLA writes HLO text ("" if none)
    dump_dir_owned: bool = False  # fpgaprof created it and removes it at exit
    dump_dir_from_user: bool = False  # the user's own --xla_dump_to
    dump_as_text: bool = True  # False: the user turned text dumping off; nothing to read
    command_buffers_disabled: bool = False
    compilation_cache_disabled: bool = False
    compilation_cache_set_by_us: bool = False  # JAX_ENABLE_COMPILATION_CACHE=false came from us
    flags_added: list[str] = field(default_factory=list)
    # The user's own flags that fpgaprof reads and kept as they were (dump dir, text dumping,
    # command buffers); empty when a parent fpgaprof prepared the environment.
    flags_kept: list[str] = field(default_factory=list)
    prepared_before: bool = False  # the environment was prepared already (parent or earlier call)
    # Other environment variables set for fpgaprof, in the order set (name -> value).
    env_set: dict[str, str] = field(default_factory=dict)
    xla_flags: str = ""  # XLA_FLAGS after the merge
    prepared_ns: int = 0  # start of this process, ns (dumps older than this are another run's)
    backend_already_started: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass
class DumpedModule:
    """One optimized HLO module read from the dump dir."""

    name: str
    program_id: int
    text: str
    path: str
    mtime_ns: int
    # XLA's *after_optimizations-buffer-assignment.txt and *-live-range.txt next to it ("" when
    # XLA did not write them).
    buffer_assignment: str = ""
    live_ranges: str = ""


_process_setup: XlaSetup | None = None
_warned_started = False


def split_flags(xla_flags: str) -> list[str]:
    """Splits an XLA_FLAGS value at whitespace outside quotes (quotes kept in the flag), as
    XLA's parser does (parse_flags_from_env.cc): inside double quotes a backslash escapes the
    next character; inside single quotes it is literal."""
    flags: list[str] = []
    cur: list[str] = []
    quote = ""
    escaped = False
    for ch in xla_flags:
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


def _unquote(value: str) -> str:
    """A flag's value as XLA reads it: a value in double quotes without them, each backslash
    escape taken as the character it escapes; one in single quotes without them, as written."""
    if not value or value[0] not in "\"'":
        return value
    quote, out = value[0], []
    i = 1
    while i < len(value) and value[i] != quote:
        if quote == '"' and value[i] == "\\" and i + 1 < len(value):
            i += 1
        out.append(value[i])
        i += 1
    return "".join(out)


def quoted_flag(name: str, value: str) -> str:
    """``--name=value`` as XLA_FLAGS must carry it: in double quotes (a backslash before each
    ``"`` and ``\\``) when the value holds whitespace, a quote or a backslash, which XLA would
    otherwise split the flags at or read as quoting (a run folder under ``~/My Projects``)."""
    if any(c.isspace() or c in "\"'\\" for c in value):
        value = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"--{name}={value}"


def flag_value(flags: Iterable[str], name: str) -> str | None:
    """Value of the last ``--name=value`` (or ``--name`` → "true") among flags; None if absent.
    A quoted value is unquoted as XLA does."""
    value = None
    for f in flags:
        body = f[2:] if f.startswith("--") else f[1:] if f.startswith("-") else None
        if body is None:
            continue
        key, eq, val = body.partition("=")
        if key == name:
            value = _unquote(val) if eq else "true"
        elif key == "no" + name:
            value = "false"
    return value


def _process_start_ns() -> int:
    """When this process started (wall clock, ns): a module XLA dumped before fpgaprof was
    imported (JAX started first, the user's own --xla_dump_to) still belongs to this run.
    Falls back to now where /proc is not readable."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        start_ticks = int(fields[19])  # field 22 of proc(5), counted after the ")" of comm
        with open("/proc/stat", encoding="ascii") as f:
            btime = next(int(ln.split()[1]) for ln in f if ln.startswith("btime "))
        start_ns = (btime * 10**9) + start_ticks * 10**9 // os.sysconf("SC_CLK_TCK")
        now = time.time_ns()
        return start_ns if 0 < start_ns <= now else now
    except (OSError, ValueError, IndexError, StopIteration):
        return time.time_ns()


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("1", "true", "yes", "on")


def prepare(
    env: MutableMapping[str, str],
    *,
    keep_command_buffers: bool | None = None,
    keep_compilation_cache: bool | None = None,
    dump_dir: str | None = None,
) -> XlaSetup:
    """Merges fpgaprof's XLA flags into ``env["XLA_FLAGS"]`` and returns what it did.

    Idempotent: a second call on an environment already prepared (also by a parent process)
    adds nothing and reports the same dump dir. ``dump_dir`` (or ``$FPGAPROF_HLO_DUMP_DIR``)
    names the dump dir; otherwise a fresh temp dir is created and registered for removal at
    interpreter exit. Options left at None read ``FPGAPROF_KEEP_COMMAND_BUFFERS`` and
    ``FPGAPROF_KEEP_COMPILATION_CACHE``. Never raises for odd user flags.
    """
    if keep_command_buffers is None:
        keep_command_buffers = _truthy(env.get("FPGAPROF_KEEP_COMMAND_BUFFERS"))
    if keep_compilation_cache is None:
        keep_compilation_cache = _truthy(env.get("FPGAPROF_KEEP_COMPILATION_CACHE"))

    setup = XlaSetup(prepared_ns=_process_start_ns())
    flags = split_flags(env.get("XLA_FLAGS", ""))
    added: list[str] = []

    kept: list[str] = []
    user_dump = flag_value(flags, "xla_dump_to")
    ours = env.get(MARKER_ENV)
    if user_dump and ours and os.path.normpath(user_dump) == os.path.normpath(ours):
        # Prepared before (this process or a parent): the dir belongs to whoever created it.
        setup.dump_dir = user_dump
        setup.prepared_before = True
    elif user_dump:
        setup.dump_dir = user_dump
        setup.dump_dir_from_user = True
        if not os.path.isabs(user_dump) and user_dump not in ("-", "sponge"):
            # XLA opens a relative dump dir against the working directory at each write, and
            # fpgaprof reads it at trace end: a chdir in between loses the modules. The same
            # folder, named absolutely (XLA has not read the flags yet).
            setup.dump_dir = os.path.abspath(user_dump)
            theirs = _last_flag(flags, "xla_dump_to")
            last = max(i for i, f in enumerate(flags) if f == theirs)
            flags[last] = quoted_flag("xla_dump_to", setup.dump_dir)
            env["XLA_FLAGS"] = " ".join(flags)
        kept.append(_last_flag(flags, "xla_dump_to"))
    else:
        chosen = dump_dir or env.get("FPGAPROF_HLO_DUMP_DIR")
        if chosen:
            try:
                os.makedirs(chosen, exist_ok=True)
                if not os.path.isdir(chosen):
                    raise NotADirectoryError(errno.ENOTDIR, "not a folder")
                _probe_writable(chosen)
            except OSError as e:
                # A file, a device or an unwritable path: trace without HLO rather than fail
                # `import fpgaprof` (and with it the user's program and every command).
                name = "dump_dir" if dump_dir else "FPGAPROF_HLO_DUMP_DIR"
                msg = (
                    f"{name}={chosen!r} cannot hold XLA's HLO dump ({e.strerror or e}): "
                    "kernels get HLO op names from XLA's NVTX ranges only, without costs or "
                    f"source lines. Fix: set {name} to a writable folder (or unset it)"
                )
                setup.warnings.append(msg)
                warnings.warn(msg, FpgaprofWarning, stacklevel=2)
            else:
                setup.dump_dir = os.path.abspath(chosen)
        else:
            try:
                prune_stale_dump_dirs()
                # The pid in the name lets a later process tell a folder whose owner is dead.
                setup.dump_dir = tempfile.mkdtemp(prefix=f"{_OWNED_PREFIX}{os.getpid()}-")
            except OSError as e:
                # No writable temp dir (TMPDIR, /tmp, /var/tmp, the cwd): trace without HLO
                # rather than fail `import fpgaprof`.
                msg = (
                    f"no writable temporary folder for XLA's HLO dump ({e.strerror or e}): "
                    "kernels get HLO op names from XLA's NVTX ranges only, without costs or "
                    "source lines. Fix: set TMPDIR (or FPGAPROF_HLO_DUMP_DIR) to a writable "
                    "folder before importing fpgaprof"
                )
                setup.warnings.append(msg)
                warnings.warn(msg, FpgaprofWarning, stacklevel=2)
            else:
                setup.dump_dir_owned = True
                _hold_owner_lock(setup.dump_dir)
                atexit.register(_remove_dump_dir, setup.dump_dir, os.getpid())
        if setup.dump_dir:
            added.append(quoted_flag("xla_dump_to", setup.dump_dir))
            env[MARKER_ENV] = setup.dump_dir

    as_text = flag_value(flags, "xla_dump_hlo_as_text")
    if as_text is None:
        added.append("--xla_dump_hlo_as_text")
    else:
        kept.append(_last_flag(flags, "xla_dump_hlo_as_text"))
    if as_text is not None and not _truthy(as_text):
        setup.dump_as_text = False
        setup.warnings.append(
            "XLA_FLAGS sets --xla_dump_hlo_as_text=false, so fpgaprof cannot read the HLO of "
            "the traced modules and matches kernels by name only; remove that flag to get "
            "HLO ops, costs and source lines."
        )

    user_cb = flag_value(flags, "xla_gpu_enable_command_buffer")
    if user_cb is not None:
        setup.command_buffers_disabled = user_cb.strip() == ""
        kept.append(_last_flag(flags, "xla_gpu_enable_command_buffer"))
    elif not keep_command_buffers:
        added.append("--xla_gpu_enable_command_buffer=")
        setup.command_buffers_disabled = True

    if "JAX_ENABLE_COMPILATION_CACHE" not in env and not keep_compilation_cache:
        env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
        setup.env_set["JAX_ENABLE_COMPILATION_CACHE"] = "false"
        setup.compilation_cache_disabled = True
        setup.compilation_cache_set_by_us = True
    else:
        setup.compilation_cache_disabled = not _truthy(
            env.get("JAX_ENABLE_COMPILATION_CACHE", "true")
        )

    if added:
        env["XLA_FLAGS"] = " ".join(flags + added)
    setup.flags_added = added
    # In an environment prepared before, the flags are fpgaprof's (a parent's), not the user's.
    setup.flags_kept = [] if setup.prepared_before else kept
    setup.xla_flags = env.get("XLA_FLAGS", "")
    return setup


def _probe_writable(folder: str) -> None:
    """Raises OSError unless a file can be created in `folder` (a read-only folder, or one
    like /proc/self that even root cannot write into, would leave XLA's dump silently empty).
    Leaves nothing behind: an unnamed file (O_TMPFILE) where the file system has them, else a
    named one removed at once; a folder whose files cannot be removed (an append-only one,
    chattr +a) still takes XLA's dump, so a failed removal does not refuse it."""
    tmpfile = getattr(os, "O_TMPFILE", 0)
    if tmpfile:
        try:
            os.close(os.open(folder, tmpfile | os.O_WRONLY, 0o600))
            return
        except OSError as e:
            # file systems without unnamed files (/proc, /sys, some network ones) say so: the
            # named probe below decides there
            if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise OSError(e.errno, f"cannot create a file in it: {e.strerror or e}") from e
    try:
        fd, probe = tempfile.mkstemp(prefix=".fpgaprof-probe-", dir=folder)
    except OSError as e:
        raise OSError(e.errno, f"cannot create a file in it: {e.strerror or e}") from e
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass  # created, so XLA can write there too: an empty hidden file is left


def _last_flag(flags: list[str], name: str) -> str:
    """The flag, as written, that gives ``name`` its value (the last one, as XLA reads them)."""
    found = ""
    for f in flags:
        key = f.lstrip("-").partition("=")[0]
        if key in (name, "no" + name):
            found = f
    return found


def describe(setup: XlaSetup) -> str:
    """One line: what fpgaprof added to XLA_FLAGS, which of the user's flags it kept and reads
    (with what that means), and the other environment variables it set. For example, with
    ``XLA_FLAGS="--xla_dump_to=/output/hlo_dumps_xla --xla_dump_hlo_as_text"``: ``XLA flags:
    added --xla_gpu_enable_command_buffer=; kept yours: --xla_dump_to=/output/hlo_dumps_xla
    (HLO is read from there and left in place), --xla_dump_hlo_as_text; set
    JAX_ENABLE_COMPILATION_CACHE=false (every module compiled, and dumped whole, in the run)``."""
    if setup.prepared_before and not setup.flags_added:
        parts = [f"as prepared by fpgaprof for this run (HLO dump in {setup.dump_dir})"]
    else:
        added = [
            f"{f} (a temporary folder, removed at exit)"
            if setup.dump_dir_owned and f == quoted_flag("xla_dump_to", setup.dump_dir)
            else f
            for f in setup.flags_added
        ]
        parts = ["added " + (" ".join(added) if added else "none")]
        if setup.flags_kept:
            parts.append("kept yours: " + ", ".join(_kept_text(setup, f) for f in setup.flags_kept))
    if setup.env_set:
        parts.append(
            "set " + ", ".join(f"{k}={v}{_ENV_WHY.get(k, '')}" for k, v in setup.env_set.items())
        )
    return "XLA flags: " + "; ".join(parts)


_ENV_WHY = {
    # a cache hit is not compiled: on CPU its HLO text is dumped, its buffer assignment not
    "JAX_ENABLE_COMPILATION_CACHE": " (every module compiled, and dumped whole, in the run)",
    "XLA_PYTHON_CLIENT_PREALLOCATE": " (kernel replay with a preallocated pool is slow)",
}


def _kept_text(setup: XlaSetup, flag: str) -> str:
    key = flag.lstrip("-").partition("=")[0]
    if key == "xla_dump_to":
        if not setup.dump_as_text:
            return f"{flag} (no HLO text is dumped there)"
        return f"{flag} (HLO is read from there and left in place)"
    if key == "xla_gpu_enable_command_buffer" and not setup.command_buffers_disabled:
        return f"{flag} (command buffers stay on: their kernels get no HLO op ranges)"
    if key in ("xla_dump_hlo_as_text", "noxla_dump_hlo_as_text") and not setup.dump_as_text:
        return f"{flag} (no HLO is read: kernels are matched by name only)"
    return flag


_OWNED_PREFIX = "fpgaprof-hlo-"
_OWNED_RE = re.compile(r"^fpgaprof-hlo-(\d+)-[^/]+$")


def _remove_dump_dir(path: str, owner_pid: int) -> None:
    # atexit callbacks are inherited by fork(): a child ending normally must not remove the
    # folder its parent still dumps into.
    if os.getpid() == owner_pid:
        shutil.rmtree(path, ignore_errors=True)


def remove_owned_dump_dir() -> None:
    """Removes this process's temp dump dir now (the exit paths that skip atexit: a trace saved
    on SIGTERM/SIGHUP, fpgaprof.capture.signals). Never a dir fpgaprof did not create."""
    setup = _process_setup
    if setup is not None and setup.dump_dir_owned and setup.dump_dir:
        m = _OWNED_RE.match(os.path.basename(setup.dump_dir))
        if m:  # only a process that made it (a forked child keeps its parent's)
            _remove_dump_dir(setup.dump_dir, int(m.group(1)))


# An flock held for the owner's lifetime inside its dump dir: the kernel drops it when the
# owner dies, which a process in another pid namespace sharing /tmp (a container) can see
# where kill(pid, 0) cannot.
OWNER_LOCK_NAME = ".fpgaprof-owner.lock"
_held_locks: list[int] = []


def _hold_owner_lock(folder: str) -> None:
    try:
        import fcntl

        fd = os.open(os.path.join(folder, OWNER_LOCK_NAME), os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _held_locks.append(fd)
    except (ImportError, OSError):
        pass  # no flock here: pruning falls back to the pid check alone


def _owner_lock_held(folder: str) -> bool:
    """True when the folder's owner lock is held by a live process (in any pid namespace);
    False when it is free or absent (an older fpgaprof made no lock)."""
    try:
        import fcntl

        fd = os.open(os.path.join(folder, OWNER_LOCK_NAME), os.O_RDWR)
    except (ImportError, OSError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process (EPERM): alive
    return True


def prune_stale_dump_dirs(tmp_dir: str | None = None) -> int:
    """Removes the temp dump dirs (``fpgaprof-hlo-<pid>-*`` in ``tmp_dir``, default the
    system temp dir) that fpgaprof made for processes that are gone: a process ended by a
    signal or os._exit() skips the atexit removal. Only this user's folders with that name, a
    pid that no longer runs here and an owner lock no process holds (a live owner in another
    pid namespace sharing /tmp keeps its folder); folders without a pid in the name (older
    fpgaprof) are left.
    Returns how many were removed."""
    folder = tmp_dir or tempfile.gettempdir()
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        m = _OWNED_RE.match(entry.name)
        if not m:
            continue
        pid = int(m.group(1))
        try:
            if not entry.is_dir(follow_symlinks=False) or pid == os.getpid():
                continue
            if uid is not None and entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        if _pid_alive(pid) or _owner_lock_held(entry.path):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += not os.path.exists(entry.path)
    return removed


def jax_backend_started() -> bool:
    """True when JAX has already initialized a backend in this process (XLA has read
    XLA_FLAGS then: flags set now come too late for it)."""
    if "jax" not in sys.modules:
        return False
    bridge = sys.modules.get("jax._src.xla_bridge")
    if bridge is None:
        return False
    started = getattr(bridge, "backends_are_initialized", None)
    if callable(started):
        try:
            return bool(started())
        except Exception:  # noqa: BLE001 - a private API that may change; assume not started
            return False
    return bool(getattr(bridge, "_backends", None))


# XLA's dump formats (xla/service/dump.cc): with none of them set, XLA dumps text.
_DUMP_FORMAT_FLAGS = (
    "xla_dump_hlo_as_text",
    "xla_dump_hlo_as_long_text",
    "xla_dump_hlo_as_proto",
    "xla_dump_hlo_as_dot",
    "xla_dump_hlo_as_html",
    "xla_dump_hlo_as_url",
    "xla_dump_fusion_visualization",
    "xla_dump_hlo_snapshots",
)


def _users_flags_dump_text(setup: XlaSetup) -> bool:
    """True when the user's own XLA_FLAGS (without fpgaprof's additions, which come too late
    once the backend started) make XLA dump HLO text into the user's dump dir: their own
    --xla_dump_hlo_as_text, or no dump format at all (XLA's default is text)."""
    if not (setup.dump_dir_from_user and setup.dump_as_text):
        return False
    if "--xla_dump_hlo_as_text" not in setup.flags_added:
        return True  # the user's own text flag
    theirs = [f for f in split_flags(setup.xla_flags) if f not in setup.flags_added]
    others = [n for n in _DUMP_FORMAT_FLAGS if n != "xla_dump_hlo_as_text"]
    return not any(_truthy(flag_value(theirs, name)) for name in others)


def warn_if_backend_started(setup: XlaSetup) -> bool:
    """Warns once per process when a JAX backend started before fpgaprof set XLA_FLAGS."""
    global _warned_started
    if not jax_backend_started():
        return False
    setup.backend_already_started = True
    lost = (
        "the HLO is still read from your own --xla_dump_to dir"
        if _users_flags_dump_text(setup)
        else "no HLO is dumped (kernels are matched by kernel name only, without HLO costs or "
        "source lines)"
    )
    msg = (
        "fpgaprof was imported after JAX had started its backend, so XLA never saw fpgaprof's "
        f"XLA_FLAGS or its NVTX tool: {lost}, XLA's NVTX ranges (the kernel -> HLO op links) "
        "may be missing, and XLA command buffers stay on (kernels inside them cannot be "
        "attributed to HLO ops by range). Fix: `import fpgaprof` before the first JAX "
        "computation (in Jupyter or IPython: restart the kernel, then import fpgaprof before "
        "jax runs anything), or run the script with `fpgaprof run`."
    )
    if msg not in setup.warnings:
        setup.warnings.append(msg)
    if not _warned_started:
        _warned_started = True
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
    return True


def current() -> XlaSetup:
    """The setup of this process, preparing ``os.environ`` on first use."""
    global _process_setup
    if _process_setup is None:
        _process_setup = prepare(os.environ)
        _disable_cache_in_imported_jax(_process_setup)
        warn_if_backend_started(_process_setup)
    return _process_setup


def _disable_cache_in_imported_jax(setup: XlaSetup) -> None:
    # jax reads JAX_ENABLE_COMPILATION_CACHE when it is imported: if that already happened,
    # the variable alone comes too late for this process.
    jax = sys.modules.get("jax")
    if jax is None or not setup.compilation_cache_set_by_us:
        return
    try:
        jax.config.update("jax_enable_compilation_cache", False)
    except Exception:  # noqa: BLE001 - an old jax without the option: nothing to turn off
        pass


def sanitize_kernel_name(hlo_name: str) -> str:
    """The CUDA kernel name XLA gives a fusion: every char outside [A-Za-z0-9_$] becomes '_'
    (the core's rule, core.attribution.sanitize_kernel_name, the attribution's own)."""
    return str(core.attribution.sanitize_kernel_name(hlo_name))


def _read_optional(path: str) -> str:
    """A dump file's text, "" when it is missing or unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def read_dumped_modules(
    setup: XlaSetup | None = None,
    *,
    since_ns: int | None = None,
    program_ids: Iterable[int] | None = None,
    names: Iterable[str] | None = None,
    kernel_names: Iterable[str] | None = None,
) -> list[DumpedModule]:
    """Reads the optimized HLO modules XLA dumped into the setup's dump dir.

    Only ``*after_optimizations.txt`` files count as modules (not per-pass dumps); each brings
    the ``-buffer-assignment.txt`` and ``-live-range.txt`` XLA wrote next to it. Files older
    than ``since_ns`` (default: when this process started) are skipped, so a
    user's long-lived dump dir does not leak old runs. Filters, when given and non-empty: keep a
    module whose program id is in ``program_ids`` or whose name is in ``names`` (the modules the
    trace's XlaModule ranges name); else, with ``kernel_names``, keep a module holding an
    instruction whose sanitized name is one of them. Sorted by program id. Unreadable files are
    skipped (a dump being written at the same time is read whole next time).
    """
    setup = setup or current()
    if not setup.dump_dir or not os.path.isdir(setup.dump_dir):
        return []
    since = setup.prepared_ns if since_ns is None else since_ns
    pid_set = set(program_ids or ())
    name_set = set(names or ())
    kernel_set = set(kernel_names or ())
    found: list[DumpedModule] = []
    for entry in os.scandir(setup.dump_dir):
        m = _AFTER_OPT_RE.match(entry.name)
        if not m or not entry.is_file():
            continue
        try:
            st = entry.stat()
            # Second resolution on some file systems: allow the whole second of prepare().
            if st.st_mtime_ns < since - 1_000_000_000:
                continue
            with open(entry.path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        header = _HLO_MODULE_NAME_RE.search(text)
        name = header.group(1) if header else (m.group(2) or f"module_{m.group(1)}")
        stem = entry.path[: -len(".txt")]
        found.append(
            DumpedModule(
                name,
                int(m.group(1)),
                text,
                entry.path,
                st.st_mtime_ns,
                _read_optional(stem + _BUFFER_ASSIGNMENT_SUFFIX),
                _read_optional(stem + _LIVE_RANGE_SUFFIX),
            )
        )
    found.sort(key=lambda d: (d.program_id, d.path))
    if pid_set or name_set:
        return [d for d in found if d.program_id in pid_set or d.name in name_set]
    if kernel_set:
        return [d for d in found if _holds_kernel(d.text, kernel_set)]
    return found


_INSTR_NAME_RE = re.compile(r"^\s*(?:ROOT\s+)?%?([A-Za-z0-9_.\-$]+)\s*=", re.MULTILINE)


def _holds_kernel(text: str, kernel_names: set[str]) -> bool:
    for m in _INSTR_NAME_RE.finditer(text):
        if sanitize_kernel_name(m.group(1)) in kernel_names:
            return True
    return False


_MODULE_RANGE_RE = re.compile(r"^XlaModule:#(.*)#")
_THUNK_RANGE_RE = re.compile(r"^Thunk:#(.*)#")


def _range_fields(pattern: re.Pattern, text: str | None) -> dict[str, str] | None:
    """The key=value fields of an XLA NVTX range named like `pattern` ("XlaModule:#k=v,...#"),
    None for another range."""
    m = pattern.match(text or "")
    if not m:
        return None
    return dict(kv.split("=", 1) for kv in m.group(1).split(",") if "=" in kv)


def thunk_ops(marker_names: Iterable[str]) -> set[str]:
    """The HLO ops the ``Thunk:#hlo_op=O,...#`` NVTX ranges among ``marker_names`` name."""
    ops = (_range_fields(_THUNK_RANGE_RE, t) for t in marker_names)
    return {f["hlo_op"] for f in ops if f and f.get("hlo_op")}


_CLASH_SUFFIX_RE = re.compile(r"__\d+$")


def module_ranges(marker_names: Iterable[str]) -> list[tuple[str, int | None]]:
    """The modules the ``XlaModule:#hlo_module=M,program_id=P#`` NVTX ranges among
    ``marker_names`` name, once each: (M, P), P None where the range gives no program id (M ""
    where it gives no name). Sorted by program id, then name."""
    seen: set[tuple[str, int | None]] = set()
    for text in marker_names:
        fields = _range_fields(_MODULE_RANGE_RE, text)
        if fields is None:
            continue
        pid = ascii_whole_number(fields.get("program_id", ""))
        name = fields.get("hlo_module", "")
        if pid is not None:
            seen.add((name, pid))
        elif name:
            seen.add((name, None))
    return sorted(seen, key=lambda k: (k[1] is None, k[1] or 0, k[0]))


def module_range_ids(marker_names: Iterable[str]) -> tuple[set[int], set[str]]:
    """The modules the ``XlaModule:#hlo_module=M,program_id=P#`` NVTX ranges among
    ``marker_names`` name: their program ids, and the names of those without one."""
    named = module_ranges(marker_names)
    return {p for _, p in named if p is not None}, {n for n, p in named if p is None}


def modules_for_trace(
    marker_names: Iterable[str],
    kernel_names: Iterable[str],
    setup: XlaSetup | None = None,
) -> list[DumpedModule]:
    """The dumped modules a trace needs, read at trace end.

    ``marker_names`` are the trace's NVTX range names: modules named by an
    ``XlaModule:#hlo_module=M,program_id=P#`` range are kept, plus the modules holding an
    instruction named like one of ``kernel_names`` (kernels launched outside module ranges).
    With neither ranges nor kernels (no GPU), every module dumped since the process started.
    """
    setup = setup or current()
    pids, names = module_range_ids(marker_names)
    kernels = set()
    for k in kernel_names:
        if k:
            kernels.add(k)
            kernels.add(_CLASH_SUFFIX_RE.sub("", k))
    if not pids and not names and not kernels:
        return read_dumped_modules(setup)
    every = read_dumped_modules(setup)
    return [
        d
        for d in every
        if d.program_id in pids or d.name in names or (kernels and _holds_kernel(d.text, kernels))
    ]


def prune_dump_dir(setup: XlaSetup | None = None) -> int:
    """Deletes what XLA dumps besides the optimized HLO text and its buffer assignment and live
    ranges (IR, object files, unoptimized HLO, memory-usage reports) from the temp dump dir
    fpgaprof created; returns the bytes freed. A user's own --xla_dump_to dir is never touched
    (``fpgaprof run`` prunes its own folder with ``cli.run.prune_hlo_dump``)."""
    setup = setup or current()
    if setup.dump_dir_from_user or not setup.dump_dir or not os.path.isdir(setup.dump_dir):
        return 0
    if not setup.dump_dir_owned:
        return 0
    freed = 0
    for entry in os.scandir(setup.dump_dir):
        try:
            if entry.is_dir(follow_symlinks=False):
                # PJRT's per-module folders (compile options, MLIR).
                freed += sum(
                    os.path.getsize(os.path.join(root, f))
                    for root, _, files in os.walk(entry.path)
                    for f in files
                )
                shutil.rmtree(entry.path, ignore_errors=True)
            elif not _KEPT_RE.match(entry.name):
                size = entry.stat(follow_symlinks=False).st_size
                os.unlink(entry.path)
                freed += size
        except OSError:
            pass
    return freed
