"""Text from outside on its way in: the C++ core takes UTF-8 bytes only, so file names of any
bytes go as the system's bytes (``os.fsencode``) and names with lone surrogates (which Python
strings may hold and UTF-8 cannot) are escaped or refused; text files a user names are read
only when they are regular files of a bounded size (never a device or a FIFO)."""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from typing import Any, TextIO

from fpgaprof.base.constants import NAME_MAX_CHARS
from fpgaprof.base.errors import FpgaprofIOError

__all__ = [
    "ascii_whole_number",
    "native_path",
    "utf8_safe",
    "first_non_utf8",
    "read_text_file",
    "read_side_json",
    "shown_name",
    "terminal_safe",
    "TerminalSafeStream",
    "unwrapped",
]


def native_path(path: str | bytes | os.PathLike) -> bytes:
    """The path as the system's bytes, for the core's file functions: a file name that is not
    UTF-8 (``os.listdir`` gives it with surrogate escapes) reaches the right file. A str that
    no file name can hold (a lone surrogate outside the escapes) raises FpgaprofIOError."""
    try:
        return os.fsencode(path)
    except UnicodeEncodeError as e:
        raise FpgaprofIOError(
            f"{os.fspath(path)!r}: not a file name this system can use (character "
            f"{e.object[e.start : e.end]!r} at {e.start} is a lone surrogate): fix the path"
        ) from None


def shown_name(text: str, max_chars: int = NAME_MAX_CHARS) -> str:
    """`text` as an output shows a name: whole up to `max_chars` characters, else its first
    `max_chars` followed by "... (N characters)", so a name's cost in a file is bounded."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}... ({len(text):,} characters)"


# What a terminal may act on rather than show: C0 controls (ESC starts the sequences that set
# the window title or clear the screen; BEL, backspace, carriage return), DEL and C1 controls
# (U+009B is a one-character CSI), the bidirectional overrides and isolates (text shown in
# another order than it is; U+061C, the Arabic letter mark, is one of Unicode's bidi controls
# as U+200E and U+200F are), line and paragraph separators, characters that show nothing (zero
# width space, word joiner and invisible operators, BOM: "a\u200b" would read as the row "a"
# and shift the columns after it), and lone surrogates (file names that are not UTF-8), which
# no terminal encoding can write.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u2069\ufeff\ud800-\udfff]"
)


def _escaped(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def terminal_safe(text: str, keep: str = "\n\t") -> str:
    """`text` with every character a terminal would act on (see _UNSAFE) shown escaped as
    Python writes it (``\\x1b``, ``\\u202e``, ``\\udcff``), except those in `keep` (newline and
    tab by default). Idempotent: what it writes is printable. The one sanitiser of text for a
    terminal: the command line's output streams (TerminalSafeStream) and the text tables."""
    if keep:
        return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escaped(m), text)
    return _UNSAFE.sub(_escaped, text)


class TerminalSafeStream:
    """A text stream whose writes pass through terminal_safe (newline and tab kept) before
    `raw`, the stream it wraps: fpgaprof's command line puts its stdout and stderr behind one,
    so no name from an input file reaches a terminal as a control sequence. Other attributes
    are `raw`'s."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def unwrapped(stream: Any) -> Any:
    """The stream behind a TerminalSafeStream (for output that is data, or a progress bar's
    own carriage returns), else `stream`."""
    return stream.raw if isinstance(stream, TerminalSafeStream) else stream


def utf8_safe(text: str) -> str:
    """`text` with each lone surrogate written as its escape (``\\udc80``): for names (regions,
    traces) that only label records, so an odd name never breaks the traced program."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def first_non_utf8(text: str) -> int | None:
    """The index of the first character UTF-8 cannot encode (a lone surrogate), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return e.start
    return None


def read_text_file(path: str | os.PathLike, what: str, max_bytes: int) -> str:
    """The UTF-8 text of the regular file `path` (`what` names it in messages: "a card file").
    A folder, device, FIFO or socket, or a file over `max_bytes`, raises FpgaprofIOError
    before anything is read (a FIFO is opened without waiting for a writer); a file that
    cannot be opened raises FpgaprofIOError; text that is not UTF-8 raises UnicodeDecodeError."""
    p = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(p, flags | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as e:
        if getattr(e, "errno", None) == errno.ENXIO and _is_socket(p):
            raise FpgaprofIOError(f"{p}: is a socket, not a file: give {what}") from None
        raise FpgaprofIOError(
            f"{p}: cannot read {what} ({getattr(e, 'strerror', None) or e}): check the path"
        ) from None
    # The type before Python's file object: open() of a folder's descriptor raises an
    # IsADirectoryError that names the descriptor ("4: Is a directory"), not the path.
    try:
        mode = os.fstat(fd).st_mode
    except OSError as e:
        os.close(fd)
        raise FpgaprofIOError(
            f"{p}: cannot read {what} ({e.strerror or e}): check the path"
        ) from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = (
            "a folder"
            if stat.S_ISDIR(mode)
            else "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a device"
        )
        raise FpgaprofIOError(f"{p}: is {kind}, not a file: give {what}")
    try:
        with open(fd, "rb", closefd=True) as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise FpgaprofIOError(
            f"{p}: cannot read {what} ({e.strerror or e}): check the path"
        ) from None
    if len(data) > max_bytes:
        raise FpgaprofIOError(
            f"{p}: larger than {what} can be ({max_bytes:,} bytes at most): give {what}"
        )
    return data.decode("utf-8")


SIDE_JSON_MAX_BYTES = 16 << 20


def read_side_json(path: str | os.PathLike, what: str, max_bytes: int = SIDE_JSON_MAX_BYTES) -> Any:
    """The JSON value of a file fpgaprof reads beside its inputs or outputs only to learn
    something optional (a run's environment.json, an output folder's summary.json or
    index.json): None when it is missing or is no such file. read_text_file's checks first, so
    a FIFO never blocks, a link to /dev/zero is not read, a huge file is not read whole; JSON
    nested too deeply (RecursionError) is malformed like any other."""
    try:
        return json.loads(read_text_file(path, what, max_bytes))
    except (FpgaprofIOError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def ascii_whole_number(text: str) -> int | None:
    """`text` (surrounding blanks aside) as a whole number written in ASCII digits, else None:
    str.isdigit() also holds for "²" and other digits int() refuses with ValueError."""
    t = text.strip()
    return int(t) if t.isascii() and t.isdigit() else None
