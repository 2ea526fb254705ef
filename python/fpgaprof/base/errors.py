"""Typed errors. Every message says the cause and the fix."""

from __future__ import annotations

import difflib

__all__ = [
    "FpgaprofError",
    "FpgaprofIOError",
    "FpgaprofWarning",
    "InvalidArgumentError",
    "CuptiUnavailableError",
    "ProfilerConflictError",
    "TraceFormatError",
    "HloParseError",
    "CountersError",
    "closest_name",
    "did_you_mean",
]


class FpgaprofError(Exception):
    """Base class of every fpgaprof error."""


class CuptiUnavailableError(FpgaprofError):
    """No usable CUPTI library, CUDA driver or GPU (raised with require_gpu=True)."""


class ProfilerConflictError(FpgaprofError):
    """Another CUPTI subscriber (Nsight, jax.profiler.trace, ...) holds the GPU, or trace() was
    nested."""


class TraceFormatError(FpgaprofError):
    """A trace file is truncated, corrupted, empty or from a future version."""


class HloParseError(FpgaprofError):
    """HLO text that fpgaprof cannot parse; the message gives line, column and the text."""

    line: int = 0  # 1-based, where the parser stopped
    column: int = 0  # 1-based, in bytes
    text: str = ""  # the text found there


class CountersError(FpgaprofError):
    """Hardware counters could not be collected (privileges, unsupported chip, ...)."""


class InvalidArgumentError(FpgaprofError, ValueError):
    """A bad argument passed to fpgaprof (unknown field, value out of range, ...)."""


class FpgaprofIOError(FpgaprofError, OSError):
    """A trace file could not be written or read (missing directory, permissions, disk full)."""


class FpgaprofWarning(RuntimeWarning):
    """Something the user should know about a trace: no GPU, dropped records, late import, ..."""


def closest_name(given: str, names: list[str] | tuple[str, ...]) -> str | None:
    """The closest of `names` to `given`, or None when none is close."""
    close = difflib.get_close_matches(given, list(names), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(given: str, names: list[str] | tuple[str, ...]) -> str:
    """ "did you mean X? " for the closest of `names` to `given`, or "" when none is close
    (for one-line error messages that list the valid names after it)."""
    close = closest_name(given, names)
    return f"did you mean {close}? " if close else ""
