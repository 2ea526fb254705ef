"""XLA's XSpace protobuf messages (the profile format of jax.profiler.trace, XProf and
TensorBoard's profile plugin), and the names XLA's profiler gives planes and stats.

The one module that imports the bindings fpgaprof.xplane_pb2, generated at build time from
proto/xplane.proto (XLA's schema) by grpcio-tools' protoc; a build without grpcio-tools has
none, and ``messages()`` says so. The names below are the ones XProf looks for (XLA's
xla/tsl/profiler/utils/xplane_schema.h): planes by name prefix, stats by name.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from fpgaprof.base.errors import FpgaprofError

__all__ = [
    "messages",
    "GPU_PLANE_PREFIX",
    "HOST_THREADS_PLANE",
    "CUPTI_PLANE",
    "METADATA_PLANE",
    "XLINE_STREAM_PREFIX",
    "HLO_PROTO_STAT",
    "TASK_ENV_PLANE",
    "FPGAPROF_STAT_PREFIX",
    "COUNTER_STAT_PREFIX",
]

GPU_PLANE_PREFIX = "/device:GPU:"
HOST_THREADS_PLANE = "/host:CPU"  # host threads: TraceMe events (here: NVTX ranges, regions)
CUPTI_PLANE = "/host:CUPTI"  # CUDA API calls seen by CUPTI, one line per thread
METADATA_PLANE = "/host:metadata"
XLINE_STREAM_PREFIX = "Stream #"
HLO_PROTO_STAT = "Hlo Proto"  # on the metadata plane's event metadata: a serialized HloProto
TASK_ENV_PLANE = "Task Environment"  # stats profile_start_time, profile_stop_time
# stats XLA has no name for carry this prefix (fpgaprof's export; its import reads them back)
FPGAPROF_STAT_PREFIX = "fpgaprof_"
# A hardware counter value of a kernel or copy: COUNTER_STAT_PREFIX + the metric name.
COUNTER_STAT_PREFIX = FPGAPROF_STAT_PREFIX + "counter:"


def messages() -> ModuleType:
    """The generated module (XSpace, XPlane, XLine, XEvent, XStat, ...). Raises FpgaprofError
    when this build has none or the protobuf runtime cannot load it."""
    try:
        # generated at build time, so not a module the type checker or the layer check sees
        xplane_pb2 = importlib.import_module("fpgaprof.xplane_pb2")
    except ImportError as e:
        raise FpgaprofError(
            f"XProf's XSpace format is not available in this fpgaprof build ({e}): it needs "
            "the protobuf package (pip install 'fpgaprof[xprof]') and bindings generated at "
            "build time (install grpcio-tools, then rebuild fpgaprof)"
        )
    except Exception as e:  # noqa: BLE001 - protobuf's version check raises its own type
        raise FpgaprofError(
            f"the protobuf runtime cannot load fpgaprof's XSpace bindings ({type(e).__name__}: "
            f"{e}) (pip install 'fpgaprof[xprof]' installs a protobuf that can)"
        )
    return xplane_pb2
