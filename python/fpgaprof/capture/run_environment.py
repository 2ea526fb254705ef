"""What a run's process had: the JAX backend, its devices and the JAX and MBIRJAX versions
(the `environment` of summary.json, as the MBIRJAX timing JSON has it).

`fpgaprof run` writes it beside the trace when the traced process ends (environment.json), so
that `fpgaprof report` on another machine reports the run's environment, not its own.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version as package_version
from typing import Any

from fpgaprof.base.atomic import write_text_atomic

__all__ = ["ENVIRONMENT_FILE", "environment_now", "read_environment", "write_environment"]

ENVIRONMENT_FILE = "environment.json"


def environment_now() -> dict:
    """The MBIRJAX-style environment of this process. Imports nothing: a module the program
    did not load is reported as None."""
    env: dict[str, Any] = {
        "backend": None,
        "devices": [],
        "jax_version": None,
        "mbirjax_version": None,
    }
    jax = sys.modules.get("jax")
    if jax is not None:
        env["jax_version"] = getattr(jax, "__version__", None)
        try:
            env["backend"] = jax.default_backend()
            env["devices"] = [str(d) for d in jax.devices()]
        except Exception as e:  # noqa: BLE001 - a broken backend is reported, not fatal
            env["backend"] = f"unavailable ({type(e).__name__}: {e})"
    mj = sys.modules.get("mbirjax")
    if mj is not None:
        env["mbirjax_version"] = getattr(mj, "__version__", None)
        if env["mbirjax_version"] is None:
            try:
                env["mbirjax_version"] = package_version("mbirjax")
            except Exception:  # noqa: BLE001 - no distribution metadata: unknown
                pass
    return env


def read_environment(trace_path: str | os.PathLike | None) -> dict | None:
    """environment.json saved beside a trace by `fpgaprof run`, or None."""
    if not trace_path:
        return None
    p = os.path.join(os.path.dirname(os.path.abspath(os.fspath(trace_path))), ENVIRONMENT_FILE)
    try:
        with open(p, encoding="utf-8") as f:
            env = json.load(f)
    except (OSError, ValueError):
        return None
    return env if isinstance(env, dict) else None


def write_environment(folder: str | os.PathLike) -> str:
    """Writes this process's environment as folder/environment.json (atomically); returns the
    path."""
    path = os.path.join(os.fspath(folder), ENVIRONMENT_FILE)
    write_text_atomic(path, json.dumps(environment_now(), indent=1) + "\n")
    return path
