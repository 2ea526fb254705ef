"""fpgaprof: GPU kernel, transfer and roofline profiling for JAX/XLA, ranked for FPGA offload.

The package is laid in layers, each importing only the ones below it (docs/architecture.md,
CONTRIBUTING.md): base -> capture -> analysis -> api -> report -> cli. ``import fpgaprof`` loads
the api (and what it needs), never the report renderers.
"""

from fpgaprof.capture import process_env

process_env.prepare_process()  # before anything can import jax: NVTX injection, XLA dump flags

from fpgaprof import calibrate, counters, fpga, hlo, roofline  # noqa: E402
from fpgaprof._core import __version__  # noqa: E402
from fpgaprof.api.devices import devices  # noqa: E402
from fpgaprof.api.job import Job, load  # noqa: E402
from fpgaprof.api.profile import Profile  # noqa: E402
from fpgaprof.api.trace import region, trace  # noqa: E402
from fpgaprof.errors import (  # noqa: E402
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

__all__ = [
    "__version__",
    "trace",
    "load",
    "region",
    "Profile",
    "Job",
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
