"""fpgaprof: GPU kernel, transfer and roofline profiling for JAX/XLA, ranked for FPGA offload."""
from fpgaprof.capture import process_env

process_env.prepare_process()  # before anything can import jax: NVTX injection, XLA dump flags

from fpgaprof._core import __version__  # noqa: E402
from fpgaprof.base.errors import (  # noqa: E402
    CountersError,
    CuptiUnavailableError,
    FpgaprofError,
    FpgaprofIOError,
    FpgaprofWarning,
    HloParseError,
    InvalidArgumentError,
    ProfilerConflictError,
    TraceFormatError,
)
from fpgaprof._devices import devices  # noqa: E402
from fpgaprof._profile import Profile, load  # noqa: E402
from fpgaprof._trace import region, trace  # noqa: E402
from fpgaprof import hlo  # noqa: E402
from fpgaprof import calibrate, counters, fpga, roofline  # noqa: E402

__all__ = [
    "__version__",
    "trace",
    "load",
    "region",
    "Profile",
    "devices",
    "FpgaprofError",
    "FpgaprofIOError",
    "FpgaprofWarning",
    "InvalidArgumentError",
    "CuptiUnavailableError",
    "ProfilerConflictError",
    "TraceFormatError",
    "HloParseError",
    "CountersError",
    "hlo",
    "roofline",
    "fpga",
    "calibrate",
    "counters",
]
