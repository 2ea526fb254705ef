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
from fpgaprof.base.text import read_side_json

__all__ = [
    "ENVIRONMENT_FILE",
    "environment_now",
    "meta_environment",
    "environment_with_meta",
    "read_environment",
    "write_environment",
]

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


# The keys of the trace META's "environment" (strings; docs/trace-format.md).
META_KEYS = ("backend", "jax_version", "jaxlib_version", "mbirjax_version", "python_version")


def meta_environment() -> dict[str, str]:
    """What the trace records of this process in META's "environment" when it stops: the keys
    of environment_now() that are known, and the Python and jaxlib versions, as strings.
    Never raises (a profiler failure must not reach the user's program)."""
    try:
        env = environment_now()
        out = {k: str(env[k]) for k in ("backend", "jax_version", "mbirjax_version") if env.get(k)}
        out["python_version"] = sys.version.split()[0]
        jaxlib = sys.modules.get("jaxlib")
        v = getattr(jaxlib, "__version__", None) if jaxlib is not None else None
        if v is None and jaxlib is not None:
            v = getattr(getattr(jaxlib, "version", None), "__version__", None)
        if v:
            out["jaxlib_version"] = str(v)
        return out
    except Exception:  # noqa: BLE001 - the environment is a courtesy, never a failure
        return {}


def _version_text(v: Any) -> str | None:
    """The CUDA driver's integer version as text: 13000 -> "13.0", 12080 -> "12.8"; None for 0."""
    return None if not v else f"{int(v) // 1000}.{(int(v) % 1000) // 10}"


def environment_with_meta(env: dict, meta: dict | None, device_names: list[str]) -> dict:
    """`env` (the run's environment, possibly empty) with what the trace's own META knows
    filled in where `env` has nothing: the JAX, jaxlib, MBIRJAX and Python versions and the
    backend recorded at capture (META "environment", traces written since it exists), the
    devices by name, the CUDA driver and CUPTI versions and the CUPTI library. `source` says
    where the values came from ("run", "trace META" or "run and trace META")."""
    out = dict(env)
    from_run = any(out.get(k) for k in ("backend", "jax_version", "mbirjax_version")) or bool(
        out.get("devices")
    )
    filled = False
    meta = meta or {}
    recorded = meta.get("environment") or {}
    for k in META_KEYS:
        if out.get(k) is None and recorded.get(k):
            out[k] = recorded[k]
            filled = True
    if not out.get("devices") and device_names:
        out["devices"] = list(device_names)
        filled = True
    extra = {
        "driver_version": _version_text(meta.get("driver_version")),
        "cupti_version": int(meta["cupti_version"]) if meta.get("cupti_version") else None,
        "cupti_path": str(meta.get("cupti_path") or "") or None,
    }
    for k, v in extra.items():
        if out.get(k) is None and v is not None:
            out[k] = v
            filled = True
    for k in ("backend", "jax_version", "mbirjax_version"):
        out.setdefault(k, None)
    out.setdefault("devices", [])
    out["source"] = (
        "run and trace META" if from_run and filled else "trace META" if filled else "run"
    )
    return out


def read_environment(trace_path: str | os.PathLike | None) -> dict | None:
    """environment.json saved beside a trace by `fpgaprof run`, or None."""
    if not trace_path:
        return None
    p = os.path.join(os.path.dirname(os.path.abspath(os.fspath(trace_path))), ENVIRONMENT_FILE)
    env = read_side_json(p, "an environment.json")
    return env if isinstance(env, dict) else None


def write_environment(folder: str | os.PathLike) -> str:
    """Writes this process's environment as folder/environment.json (atomically); returns the
    path."""
    path = os.path.join(os.fspath(folder), ENVIRONMENT_FILE)
    write_text_atomic(path, json.dumps(environment_now(), indent=1) + "\n")
    return path
