"""Process environment that must be set before jax/XLA start (filled in by the capture layer)."""


def _nvidia_wheel_lib_dirs() -> list:
    """lib folders of the installed nvidia-* wheels that hold a libcupti (nvidia/cu13/lib, ...)."""
    import glob
    import os

    try:
        import nvidia  # namespace package of the nvidia-* wheels; importing it loads nothing
    except ImportError:
        return []
    dirs = []
    for root in list(getattr(nvidia, "__path__", [])):
        for lib in sorted(glob.glob(os.path.join(root, "*", "lib"))):
            if glob.glob(os.path.join(lib, "libcupti.so*")) and lib not in dirs:
                dirs.append(lib)
    return dirs


def _prepare_cupti() -> None:
    """Tell the C++ capture layer where libcupti is, and route NVTX to it.

    FPGAPROF_WHEEL_LIB_DIRS: step 3 of the libcupti search order (docs/capture.md).
    NVTX_INJECTION64_PATH: libfpgaprof.so, whose InitializeInjectionNvtx2 hands NVTX (XLA's
    per-thunk ranges, fpgaprof.region) to libcupti. NVTX reads it at the process's first NVTX
    call, so it must be set before jax starts. A value set by the user or by another tool
    (Nsight) is left alone.
    """
    import os

    if "FPGAPROF_WHEEL_LIB_DIRS" not in os.environ:
        dirs = _nvidia_wheel_lib_dirs()
        if dirs:
            os.environ["FPGAPROF_WHEEL_LIB_DIRS"] = os.pathsep.join(dirs)
    lib = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libfpgaprof.so")
    if os.path.exists(lib) and not os.environ.get("NVTX_INJECTION64_PATH"):
        os.environ["NVTX_INJECTION64_PATH"] = os.path.realpath(lib)


def prepare_process() -> None:
    _prepare_cupti()
    # XLA reads XLA_FLAGS once, when its first backend starts: add the HLO dump and command
    # buffer flags now (and warn once if a JAX backend is already running).
    from fpgaprof import _xla_flags

    _xla_flags.current()
    return None
