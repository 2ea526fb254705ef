"""Atomic file writes: every file fpgaprof writes appears whole or not at all, and the files
of one report appear together or not at all (OutputSet)."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import IO, Any, Literal

from fpgaprof.base.errors import FpgaprofIOError

__all__ = [
    "open_atomic",
    "open_atomic_binary",
    "write_text_atomic",
    "OutputSet",
    "make_folder",
    "refuse_special",
    "refuse_linked_folder",
]


def _file_mode() -> int:
    """0666 less the umask: what open() would have given (mkstemp makes files 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def open_atomic(path: str | os.PathLike) -> Iterator[IO[str]]:
    """Text file opened for writing at a temp name in the same folder; on a clean exit it is
    fsync'ed and renamed over `path`; on an exception the temp file is removed and `path` is
    left as it was. Creates the folder if needed."""
    with _open_atomic(path, "w") as f:
        yield f


@contextlib.contextmanager
def open_atomic_binary(path: str | os.PathLike) -> Iterator[IO[bytes]]:
    """open_atomic for a binary file (Parquet, protobuf)."""
    with _open_atomic(path, "wb") as f:
        yield f


@contextlib.contextmanager
def _open_atomic(path: str | os.PathLike, mode: str) -> Iterator[IO[Any]]:
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    refuse_special(path)
    try:
        # ".tmp-<name>.<random>.part": a file left by a killed writer (SIGKILL) does not end
        # in the target's suffix, so readers that take every *.json / *.xplane.pb / *.parquet
        # of a folder (HTA reads all *.json, hidden ones too) never take it for an output
        fd, tmp = tempfile.mkstemp(
            prefix=f".tmp-{os.path.basename(path)}.", suffix=".part", dir=folder
        )
    except OSError as e:
        raise _unwritable(path, e) from e
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and not e.filename:
            # A failed write or fsync (ENOSPC, EDQUOT, EIO) names no file: say which one.
            raise OSError(e.errno, e.strerror or str(e), path) from e
        raise


_READ_ONLY = {errno.EACCES, errno.EPERM, errno.EROFS}


def _unwritable(name: str, e: OSError) -> OSError:
    """The error of a temp file or staging folder that could not be made beside `name` (an
    output file or folder): a folder that refuses writes (permissions, a read-only file
    system, such as a dataset's folder a report goes beside by default) names the user's
    path, not fpgaprof's hidden temp name, and the fix; other errors name `name` too."""
    if e.errno in _READ_ONLY:
        return FpgaprofIOError(
            e.errno,
            f"cannot write here ({e.strerror or e}): choose a writable output folder (-o DIR)",
            name,
        )
    return OSError(e.errno, e.strerror or str(e), name)


def _kind(mode: int) -> str | None:
    """What a file of `mode` is when it is not a regular file fpgaprof may replace, else None."""
    if stat.S_ISREG(mode):
        return None
    for test, what in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def refuse_special(path: str | os.PathLike) -> None:
    """FpgaprofIOError when `path` exists and is not a regular file (a symbolic link, device,
    FIFO, socket or folder): an atomic write renames over `path`, which would replace that
    special file itself (/dev/stdout, a link) or write through a link to another place."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError:
        return  # the write itself will name the problem
    what = _kind(mode)
    if what is not None:
        raise FpgaprofIOError(
            f"{os.fsdecode(path)!s}: is {what}, not a regular file: fpgaprof writes its outputs "
            "only as regular files (replacing them whole): give the path of a new or regular file"
        )


def refuse_linked_folder(path: str | os.PathLike) -> None:
    """FpgaprofIOError when `path` exists and is not a real folder (a symbolic link, even to a
    folder, or a file or special file): outputs are never written, nor old ones removed,
    through a link to another place."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return  # absent (made when needed), or the write itself names the problem
    if not stat.S_ISDIR(mode):
        raise FpgaprofIOError(
            f"{os.fsdecode(path)}: is {_kind(mode)}, not a folder: fpgaprof writes into real "
            "folders only (never through a link): remove it or choose another output folder"
        )


def make_folder(folder: str | os.PathLike) -> None:
    """os.makedirs(folder, exist_ok=True), with FpgaprofIOError naming what is there instead
    when `folder` exists and is not a folder (a file, a FIFO, /dev/null) rather than "File
    exists"."""
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:
        try:
            mode = os.stat(folder).st_mode
            what = _kind(mode) or "a file"
        except OSError:
            what = "a symbolic link to nothing"
        raise FpgaprofIOError(
            f"{os.fsdecode(folder)}: is {what}, not a folder: give a folder for the outputs "
            "(a new one is made)"
        ) from None


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Writes `text` to `path` atomically (see open_atomic)."""
    with open_atomic(path) as f:
        f.write(text)


_STAGING_PREFIX = ".fpgaprof-staging-"
_STAGING_RE = re.compile(r"^\.fpgaprof-staging-([0-9]+)-")
_PID_MAX = 2**31 - 1  # pid_t is a signed 32-bit integer on Linux and macOS
_HELD_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class OutputSet:
    """The files of one report, written as a set: each goes into a staging folder inside
    `folder` (same file system), and commit() moves them all into place with SIGINT, SIGTERM
    and SIGHUP held back until it is done; discard() (or leaving the ``with`` block by an
    exception) removes the staging folder. So a failed, interrupted or terminated writer leaves
    `folder` as it was, never new files beside old ones. Staging folders of processes that are
    gone (SIGKILL) are removed by the next OutputSet in the same folder. Not thread-safe."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = os.fspath(folder)
        # the folders this set makes, outermost first: removed again (when empty) by discard()
        self._made: list[str] = []
        missing = os.path.abspath(self.folder)
        while not os.path.lexists(missing) and os.path.dirname(missing) != missing:
            self._made.insert(0, missing)
            missing = os.path.dirname(missing)
        make_folder(self.folder)
        _remove_stale_staging(self.folder)
        try:
            self.staging = tempfile.mkdtemp(
                prefix=f"{_STAGING_PREFIX}{os.getpid()}-", dir=self.folder
            )
        except OSError as e:
            raise _unwritable(self.folder, e) from e
        self._removals: list[str] = []
        # name in `folder` -> where it is staged: STAGING/<n>/<its file name>, one numbered
        # folder per file, so the staging folder holds none of the outputs' layout (a killed
        # XProf export's STAGING/plugins/profile/<run>/ was a run XProf listed)
        self._staged: dict[str, str] = {}
        self._open = True

    def path(self, name: str) -> str:
        """Where to write `name` (relative to `folder`, subfolders allowed) before commit()."""
        rel = os.path.normpath(name)
        staged = self._staged.get(rel)
        if staged is None:
            staged = os.path.join(self.staging, str(len(self._staged)), os.path.basename(rel))
            os.makedirs(os.path.dirname(staged), exist_ok=True)
            self._staged[rel] = staged
        return staged

    def final(self, name: str) -> str:
        """Where `name` will be after commit()."""
        return os.path.join(self.folder, name)

    def remove(self, name: str) -> None:
        """Delete `name` from `folder` at commit() (an older output this set does not replace)."""
        self._removals.append(name)

    def commit(self) -> None:
        """Moves every staged file into `folder` (replacing files of the same name, merging
        subfolders), deletes what remove() named, and removes the staging folder."""
        if not self._open:
            return
        try:
            self._check_targets()
        except BaseException:
            self.discard()  # nothing moved yet: `folder` stays as it was
            raise
        with _signals_held():
            for rel, staged in self._written():
                target = os.path.join(self.folder, rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.replace(staged, target)
            for name in self._removals:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(self.folder, name))
            self._open = False
            shutil.rmtree(self.staging, ignore_errors=True)

    def _check_targets(self) -> None:
        """FpgaprofIOError, before anything moves, when a staged file's place in `folder` (or a
        subfolder on its way) is a symbolic link or a special file: commit() never writes
        through a link to a folder elsewhere nor replaces a device or FIFO."""
        for rel, _staged in self._written():
            parts = rel.split(os.sep)
            for i in range(1, len(parts)):
                refuse_linked_folder(os.path.join(self.folder, *parts[:i]))
            refuse_special(os.path.join(self.folder, rel))

    def _written(self) -> list[tuple[str, str]]:
        """(name in `folder`, staged path) of each file path() gave that was written."""
        return [(rel, p) for rel, p in self._staged.items() if os.path.lexists(p)]

    def discard(self) -> None:
        """Removes the staging folder and everything in it; `folder` stays as it was (and is
        removed again when this set made it and it is still empty)."""
        self._open = False
        shutil.rmtree(self.staging, ignore_errors=True)
        for made in reversed(self._made):
            with contextlib.suppress(OSError):
                os.rmdir(made)  # only an empty folder; one another writer filled stays

    def __enter__(self) -> OutputSet:
        return self

    def public_error(self, e: BaseException) -> BaseException:
        """`e` with a file name inside the staging folder (a full disk while writing
        summary.json) replaced by the name the file would have had in `folder`."""
        name = getattr(e, "filename", None)
        if isinstance(e, OSError) and isinstance(name, str) and name.startswith(self.staging):
            # STAGING/<n>/FILE (or a temporary file beside it) is FILE in the folder of the
            # n-th name path() gave
            number, _, rest = os.path.relpath(name, self.staging).partition(os.sep)
            where = self.folder
            for rel, staged in self._staged.items():
                if os.path.dirname(staged) == os.path.join(self.staging, number):
                    where = os.path.dirname(os.path.join(self.folder, rel))
            final = os.path.join(where, rest) if rest else where
            return OSError(e.errno, e.strerror or str(e), final)
        return e

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]:
        if exc is None:
            self.commit()
            return False
        self.discard()
        public = self.public_error(exc)
        if public is not exc:
            raise public from exc
        return False


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP wait (in the main thread; elsewhere nothing changes) and are
    delivered again, with the handlers they had, after the block."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for sig in _HELD_SIGNALS:
        if signal.getsignal(sig) is None:
            continue  # a handler set from C: it cannot be put back, so it is left in place
        previous[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            os.kill(os.getpid(), sig)


def _remove_stale_staging(folder: str) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        m = _STAGING_RE.match(entry.name)
        if not m:
            continue
        pid = int(m.group(1))
        if pid == os.getpid():
            continue
        if not 0 < pid <= _PID_MAX:
            # No process can have this id (a pid_t is positive and below 2^31; 0 would
            # signal our own process group): a leftover or a forged name, so stale.
            shutil.rmtree(entry.path, ignore_errors=True)
            continue
        try:
            os.kill(pid, 0)
            continue  # its writer still runs
        except ProcessLookupError:
            pass
        except OSError:
            continue  # another user's live process
        shutil.rmtree(entry.path, ignore_errors=True)
