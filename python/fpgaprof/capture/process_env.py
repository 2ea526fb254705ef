"""Process environment that must be set before jax/XLA start.

``prepare_process()`` runs once, at ``import fpgaprof``:

* ``NVTX_INJECTION64_PATH`` = libfpgaprof.so, so that the process's first NVTX call (XLA's
  thunk and module ranges, fpgaprof's regions) loads fpgaprof as the NVTX tool and CUPTI sees
  the ranges. A value the user set is kept (with one warning if it is not fpgaprof's).
* ``FPGAPROF_WHEEL_LIB_DIRS`` = the ``site-packages/nvidia/*/lib`` folders, where the capture
  layer looks for the pip wheel's libcupti (unless the user set it).
* ``FPGAPROF_JAX_CUDA_MAJOR`` = "12" or "13", the major of JAX's installed CUDA plugin (unless
  the user set it): when the process has mapped two libcupti (JAX's CUDA 12 plugin also loads
  the nvidia-cuda-cupti 13 wheel's when it is installed), the capture layer takes the one of
  JAX's major.
* XLA flags (HLO dumps, command buffers off): ``xla_flags.current()``.
* If JAX's backend already started, NVTX and XLA_FLAGS come too late: one warning.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import warnings

from fpgaprof.base.errors import FpgaprofWarning
from fpgaprof.capture import xla_flags
from fpgaprof.capture.xla_flags import jax_backend_started

__all__ = [
    "prepare_process",
    "process_warnings",
    "fpgaprof_library",
    "wheel_lib_dirs",
    "jax_backend_started",
    "jax_preallocates",
    "COUNTERS_PREALLOCATION_WARNING",
]

_LIB_NAME = "libfpgaprof.so"

# Warnings about this process's setup, copied into every trace's warnings.
process_warnings: list[str] = []
_prepared = False


def fpgaprof_library() -> str:
    """Absolute path of libfpgaprof.so next to this package ("" if it is not there)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # fpgaprof/
    path = os.path.join(package, _LIB_NAME)
    return os.path.realpath(path) if os.path.exists(path) else ""


def jax_cuda_plugin_major() -> str:
    """ "12" or "13" when exactly one of JAX's CUDA plugins (jax[cuda12] / jax[cuda13]) is
    installed, else "" (found without importing it)."""
    found = []
    for major in ("12", "13"):
        try:
            if importlib.util.find_spec(f"jax_cuda{major}_plugin") is not None:
                found.append(major)
        except (ImportError, ValueError):
            pass
    return found[0] if len(found) == 1 else ""


def wheel_lib_dirs(major: str | None = None) -> list[str]:
    """site-packages/nvidia/*/lib folders of the installed NVIDIA wheels that hold a libcupti
    (nvidia-cuda-cupti: nvidia/cu13/lib; nvidia-cuda-cupti-cu12: nvidia/cuda_cupti/lib). The
    folders of the libcupti that JAX's installed CUDA plugin loads come first, so that fpgaprof,
    loading CUPTI before JAX does, takes the same library (docs/capture.md, "CUDA 12 and 13").
    ``major``: that plugin's major when the caller has it (jax_cuda_plugin_major())."""
    dirs: list[str] = []
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    for root in roots:
        for lib in sorted(glob.glob(os.path.join(root, "*", "lib"))):
            if lib not in dirs and glob.glob(os.path.join(lib, "libcupti.so*")):
                dirs.append(lib)
    major = jax_cuda_plugin_major() if major is None else major
    if major:
        dirs.sort(key=lambda d: not glob.glob(os.path.join(d, f"libcupti.so.{major}*")))
    return dirs


def jax_preallocates(env=None) -> bool:
    """Whether JAX would hold a preallocated pool on the GPU under this environment: the
    default (XLA_PYTHON_CLIENT_PREALLOCATE unset or true, 75 % of the GPU's memory) unless the
    platform allocator (XLA_PYTHON_CLIENT_ALLOCATOR=platform) is chosen."""
    env = os.environ if env is None else env
    # As jaxlib's xla_client reads them: the allocator name lower-cased; preallocation off
    # only for exactly "false", "False" or "0" (unset or empty: JAX's default, on).
    if env.get("XLA_PYTHON_CLIENT_ALLOCATOR", "default").lower() == "platform":
        return False
    value = env.get("XLA_PYTHON_CLIENT_PREALLOCATE", "")
    return not value or value not in ("false", "False", "0")


# Measured on an H100 (docs/roofline.md, "Timing under counters"; tests/gpu/replay_cost.py).
COUNTERS_PREALLOCATION_WARNING = (
    "fpgaprof.trace(counters=True) with JAX preallocating GPU memory "
    "(XLA_PYTHON_CLIENT_PREALLOCATE "
    "is not 'false'): kernel replay saves and restores that pool around every kernel, so each "
    "kernel "
    "takes seconds (on an H100 with JAX's default 75 % pool, a script counting one kernel did "
    "not finish "
    "in 45 s, JAX's start included; with XLA_PYTHON_CLIENT_PREALLOCATE=false, 0.3 s per "
    "kernel). Set XLA_PYTHON_CLIENT_PREALLOCATE=false "
    "(or XLA_PYTHON_CLIENT_ALLOCATOR=platform) before JAX starts, in the shell or at the top of "
    "the "
    "script; `fpgaprof run --counters` sets it to false only where it is not set at all (a "
    "value set on purpose, as the MBIRJAX profiling image sets true, is kept)"
)


def _warn(message: str) -> None:
    if message not in process_warnings:
        process_warnings.append(message)
        warnings.warn(message, FpgaprofWarning, stacklevel=4)


def _set_nvtx_injection(env) -> None:
    lib = fpgaprof_library()
    if not lib:
        return  # not built next to the package (source checkout): nothing to inject
    current = env.get("NVTX_INJECTION64_PATH")
    if not current:
        env["NVTX_INJECTION64_PATH"] = lib
    elif os.path.realpath(current) != lib:
        _warn(
            f"NVTX_INJECTION64_PATH is set to {current}, not fpgaprof's {lib}: XLA's NVTX ranges "
            "go to that tool, so fpgaprof cannot attribute kernels to HLO ops by range. Fix: "
            "unset NVTX_INJECTION64_PATH (or set it to fpgaprof's library) before starting Python."
        )


def _set_cupti_search(env) -> None:
    """FPGAPROF_JAX_CUDA_MAJOR and FPGAPROF_WHEEL_LIB_DIRS, each unless the user set it, from
    one look at the installed JAX plugins."""
    if env.get("FPGAPROF_JAX_CUDA_MAJOR") and env.get("FPGAPROF_WHEEL_LIB_DIRS"):
        return
    major = jax_cuda_plugin_major()
    if major and not env.get("FPGAPROF_JAX_CUDA_MAJOR"):
        env["FPGAPROF_JAX_CUDA_MAJOR"] = major
    if env.get("FPGAPROF_WHEEL_LIB_DIRS"):
        return
    dirs = wheel_lib_dirs(major)
    if dirs:
        env["FPGAPROF_WHEEL_LIB_DIRS"] = os.pathsep.join(dirs)


def prepare_process() -> None:
    """Sets this process's environment for fpgaprof (idempotent)."""
    global _prepared
    if _prepared:
        return
    _prepared = True
    env = os.environ
    _set_cupti_search(env)
    _set_nvtx_injection(env)

    # XLA reads XLA_FLAGS once, when its first backend starts: add the HLO dump and command
    # buffer flags now (it warns once itself if a JAX backend is already running).
    setup = xla_flags.current()
    if jax_backend_started():
        message = (
            "fpgaprof was imported after JAX started its backend: XLA's NVTX ranges (the link "
            "from kernels to HLO ops and source lines) and fpgaprof's XLA flags only take effect "
            "in a fresh process. Fix: `import fpgaprof` before the first JAX computation (in "
            "Jupyter or IPython: restart the kernel, then import fpgaprof before jax runs "
            "anything), or run the script with `fpgaprof run script.py`."
        )
        # xla_flags has already warned (its message covers NVTX too): one warning, not two.
        if not getattr(setup, "backend_already_started", False):
            _warn(message)
