"""Started by `fpgaprof run` through PYTHONPATH: begins tracing before the user's script.

Only the first Python process of the run traces (it claims FPGAPROF_RUN_DIR/.fpgaprof-claim);
Python processes it starts run untraced. Then the user's own sitecustomize, if any, runs.
"""
import os
import sys


def _fpgaprof_start() -> None:
    out_dir = os.environ.get("FPGAPROF_RUN_DIR")
    if not out_dir:
        return
    try:
        fd = os.open(os.path.join(out_dir, ".fpgaprof-claim"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    except OSError as e:
        sys.stderr.write(f"fpgaprof run: cannot claim {out_dir} ({e}); this process is not "
                         "traced\n")
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    try:
        from fpgaprof import _runner
    except Exception as e:  # never break the user's program
        sys.stderr.write(f"fpgaprof run: this Python cannot import fpgaprof ({type(e).__name__}: "
                         f"{e}); run the command with the Python fpgaprof is installed in\n")
        return
    _runner.start_from_environment()


def _chain_user_sitecustomize() -> None:
    """Runs the sitecustomize this file shadows (the next one on sys.path), if any."""
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.machinery
    import importlib.util
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:
        sys.stderr.write(f"fpgaprof run: the user's sitecustomize failed: "
                         f"{type(e).__name__}: {e}\n")


_fpgaprof_start()
_chain_user_sitecustomize()
