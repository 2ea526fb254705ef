"""A progress bar on stderr for long report work (`fpgaprof report`, `fpgaprof run`)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from fpgaprof.base.text import unwrapped

__all__ = ["Progress"]


class Progress:
    """Stages of long work as a bar on stderr, only when stderr is a terminal (not when CI is
    set, not with TERM=dumb, never into a log file). Each stage is drawn when it begins, with
    the seconds since the start, so the bar is there from the first second and says what is
    running: `stage(name)` begins the next stage, `done()` ends the bar."""

    def __init__(self, total: int, label: str = "fpgaprof", stream: Any = None) -> None:
        self.total, self.done_count, self.label = total, 0, label
        # the terminal itself: the bar's carriage returns are its own, not text from a trace
        self.stream = unwrapped(sys.stderr if stream is None else stream)
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = (
            bool(isatty and isatty())
            and not os.environ.get("CI")
            and os.environ.get("TERM") != "dumb"
        )
        self.t0 = time.monotonic()
        self.current: str | None = None

    def _draw(self, text: str, end: str = "") -> None:
        if not self.enabled:
            return
        width = 24
        filled = int(width * self.done_count / max(self.total, 1))
        self.stream.write(
            f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
            f"{self.done_count}/{self.total} {text:<32.32} "
            f"{time.monotonic() - self.t0:6.1f} s{end}"
        )
        self.stream.flush()

    def stage(self, what: str) -> None:
        """The previous stage is done; `what` begins."""
        if self.current is not None:
            self.done_count = min(self.done_count + 1, self.total)
        self.current = what
        self._draw(f"{what}…")

    def step(self, what: str) -> None:
        """`what` is done (counted after the work; stage() shows work as it begins)."""
        self.current = None
        self.done_count = min(self.done_count + 1, self.total)
        self._draw(what, "\n" if self.done_count >= self.total else "")

    def done(self) -> None:
        if self.current is not None:
            self.done_count = min(self.done_count + 1, self.total)
            self.current = None
            self._draw("done", "\n")
