"""Started by `fpgaprof run` through PYTHONPATH: begins tracing before the user's script.

Only the first Python process of the run traces (it claims FPGAPROF_RUN_DIR/.fpgaprof-claim);
Python processes it starts run untraced and leave a marker saying so (_fpgaprof_untraced.py).
Then the user's own sitecustomize, if any, runs.
"""

import os
import sys


def _fpgaprof_start() -> None:
    out_dir = os.environ.get("FPGAPROF_RUN_DIR")
    if not out_dir:
        return
    try:
        import _fpgaprof_untraced as untraced  # beside this file; standard library only
    except ImportError:
        untraced = None
    try:
        fd = os.open(os.path.join(out_dir, ".fpgaprof-claim"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        if untraced is not None:  # another process of the run traces: say this one does not
            untraced.note(out_dir, "started")
            untraced.watch_forks(out_dir)
        return
    except OSError as e:
        sys.stderr.write(
            f"fpgaprof run: cannot claim {out_dir} ({e}); this process is not traced\n"
        )
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    if untraced is not None:
        untraced.watch_forks(out_dir)  # os.fork / multiprocessing "fork" children run untraced
    try:
        import fpgaprof
        from fpgaprof.capture import runner
    except Exception as e:  # noqa: BLE001 - never break the user's program
        sys.stderr.write(
            f"fpgaprof run: this Python cannot import fpgaprof ({type(e).__name__}: "
            f"{e}); run the command with the Python fpgaprof is installed in\n"
        )
        return
    runner.start_from_environment(fpgaprof.trace)


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
    # Theirs is `sitecustomize` from now on, as without fpgaprof: `import sitecustomize`
    # in it (or later in the program) gets their module, not this one.
    ours = sys.modules.get("sitecustomize")
    sys.modules["sitecustomize"] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001 - their sitecustomize: said, not fatal
        if ours is not None:
            sys.modules["sitecustomize"] = ours
        sys.stderr.write(
            f"fpgaprof run: the user's sitecustomize failed: {type(e).__name__}: {e}\n"
        )


_fpgaprof_start()
_chain_user_sitecustomize()
