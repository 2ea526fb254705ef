"""Atomic file writes: every file fpgaprof writes appears whole or not at all."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import IO, Any

__all__ = ["open_atomic", "open_atomic_binary", "write_text_atomic"]


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
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=folder)
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Writes `text` to `path` atomically (see open_atomic)."""
    with open_atomic(path) as f:
        f.write(text)
