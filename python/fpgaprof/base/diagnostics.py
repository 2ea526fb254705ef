"""Diagnostics as records (docs/reports.md, "Warnings"): every warning fpgaprof shows is a dict
of ``code``, ``severity``, ``source``, ``count``, ``numbers`` (the figures its message quotes)
and ``message``, as summary.json writes it.

The codes are one table, the C++ core's (cpp/src/core/diagnostics.cpp, read here through
``fpgaprof._core.diagnostic_codes()``): Python's own warnings (capture, reports, ...) use codes
of that table too, so a code is described once. A plain string (a warning of an older trace, or
one handed in by a caller) becomes a record of code ``trace.older_warning``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fpgaprof.base.core import core

__all__ = [
    "CODES",
    "OLDER_TRACE_CODE",
    "Collector",
    "as_diagnostic",
    "diagnostic",
    "message_of",
    "warning_text",
]

OLDER_TRACE_CODE = "trace.older_warning"

# code -> {"code", "severity", "source", "description"}, in the table's order.
CODES: dict[str, dict[str, str]] = {
    c["code"]: {k: str(v) for k, v in c.items()} for c in core.diagnostic_codes()
}


def diagnostic(
    code: str, message: str, numbers: Sequence[float] = (), count: int = 1
) -> dict[str, Any]:
    """The record of `message` under `code` (a code of the table: a KeyError names an unknown
    one, a bug in fpgaprof)."""
    try:
        kind = CODES[code]
    except KeyError:
        raise KeyError(
            f"unknown diagnostic code {code!r}: add it to cpp/src/core/diagnostics.cpp"
        ) from None
    return {
        "code": code,
        "severity": kind["severity"],
        "source": kind["source"],
        "count": int(count),
        "numbers": [float(x) for x in numbers],
        "message": str(message),
    }


def as_diagnostic(w: Any) -> dict[str, Any]:
    """A record from a record (a dict with at least code and message) or from a plain string
    (code ``trace.older_warning``). An unknown code in a dict is kept as one of an older trace."""
    if isinstance(w, Mapping):
        code = str(w.get("code") or OLDER_TRACE_CODE)
        return diagnostic(
            code if code in CODES else OLDER_TRACE_CODE,
            str(w.get("message", "")),
            w.get("numbers") or (),
            int(w.get("count") or 1),
        )
    return diagnostic(OLDER_TRACE_CODE, str(w))


def message_of(w: Any) -> str:
    """The message of a record or a plain string."""
    return str(w.get("message", "")) if isinstance(w, Mapping) else str(w)


def warning_text(w: Any) -> str:
    """A record as the reports show it: its message, and how many times it came when more than
    once (not escaped: the renderer escapes it)."""
    n = int(w.get("count") or 1) if isinstance(w, Mapping) else 1
    return message_of(w) + (f" ({n:,} times)" if n > 1 else "")


class Collector:
    """Records in order of first appearance, one per (code, message): a repeated one adds its
    count. The first `limit` distinct ones are kept; `left_out` counts the rest. Linear time: a
    dict from (code, message) to its record."""

    def __init__(self, limit: int | None = None) -> None:
        self.items: list[dict[str, Any]] = []
        self.left_out = 0
        self._limit = limit
        self._seen: dict[tuple[str, str], dict[str, Any] | None] = {}

    def __len__(self) -> int:
        return len(self._seen)

    def add(self, w: Any) -> None:
        # The key first, the record only for a new one that is listed: most of a long list is
        # repeats or left out.
        t = type(w)
        if t is str:  # exact types first: an ABC isinstance check costs more than the rest
            key, count = (OLDER_TRACE_CODE, w), 1
        elif t is dict or isinstance(w, Mapping):
            code = str(w.get("code") or OLDER_TRACE_CODE)
            key = (code if code in CODES else OLDER_TRACE_CODE, str(w.get("message", "")))
            count = int(w.get("count") or 1)
        else:
            key, count = (OLDER_TRACE_CODE, str(w)), 1
        seen = self._seen
        if key in seen:
            kept = seen[key]
            if kept is not None:
                kept["count"] += count
            return
        if self._limit is None or len(self.items) < self._limit:
            d = as_diagnostic(w)
            self.items.append(d)
            seen[key] = d
        else:
            seen[key] = None
            self.left_out += 1

    def extend(self, ws: Iterable[Any]) -> None:
        for w in ws:
            self.add(w)

    def messages(self) -> Iterable[str]:
        """The message of every distinct record seen (kept or left out)."""
        return (m for _, m in self._seen)
