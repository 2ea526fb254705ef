"""fpgaprof: GPU kernel, transfer and roofline profiling for JAX/XLA, ranked for FPGA offload."""
from fpgaprof import _env

_env.prepare_process()  # before anything can import jax: NVTX injection, XLA dump flags

from fpgaprof._core import __version__  # noqa: E402
from fpgaprof.errors import (  # noqa: E402
    CountersError,
    CuptiUnavailableError,
    FpgaprofError,
    HloParseError,
    ProfilerConflictError,
    TraceFormatError,
)
from fpgaprof import hlo  # noqa: E402
from fpgaprof import calibrate, fpga, roofline  # noqa: E402

__all__ = [
    "__version__",
    "FpgaprofError",
    "CuptiUnavailableError",
    "ProfilerConflictError",
    "TraceFormatError",
    "HloParseError",
    "CountersError",
    "hlo",
    "roofline",
    "fpga",
    "calibrate",
]
