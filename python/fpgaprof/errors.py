"""``fpgaprof.errors``: the exception classes (defined in fpgaprof.base.errors). The C++ core
raises them by this module's name."""

from fpgaprof.base.errors import (
    CountersError,
    CuptiUnavailableError,
    FpgaprofError,
    FpgaprofIOError,
    FpgaprofWarning,
    HloParseError,
    InvalidArgumentError,
    ProfilerConflictError,
    TraceFormatError,
    closest_name,
    did_you_mean,
)

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
