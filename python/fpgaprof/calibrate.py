"""Measured ceilings of the current GPU (``fpgaprof calibrate``).

``run()`` times a large device-to-device copy and a large matmul per precision through JAX,
using the profiler's kernel durations when ``fpgaprof.trace`` is available (else wall time
around ``block_until_ready``, marked as such), and stores the result atomically in
``~/.cache/fpgaprof/ceilings-<device uuid or name>.json``. Reports use measured ceilings where
present and label them "measured". Without a GPU it raises CuptiUnavailableError.
"""
from __future__ import annotations

import json
import os
import re
import time
from typing import Any, Mapping

from fpgaprof._atomic import write_text_atomic
from fpgaprof.errors import CuptiUnavailableError

__all__ = ["run", "load", "merge", "cache_path"]

_MATMULS = (  # (precision name, dtype, jax precision, n)
    ("fp32", "float32", "highest", 8192),
    ("tf32_tensor", "float32", "default", 8192),
    ("fp16_tensor", "bfloat16", "default", 8192),
    ("fp64_tensor", "float64", "highest", 4096),
)


def cache_path(device_name: str, uuid: str = "") -> str:
    key = re.sub(r"[^A-Za-z0-9_.-]+", "_", uuid or device_name or "unknown")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fpgaprof", f"ceilings-{key}.json")


def load(device_name: str, uuid: str = "") -> dict | None:
    """Measured ceilings stored for this device (by uuid, else name), or None."""
    for p in {cache_path(device_name, uuid), cache_path(device_name)}:
        try:
            with open(p) as f:
                return json.load(f)
        except (OSError, ValueError):
            continue
    return None


def merge(table: Mapping, measured: Mapping) -> dict:
    """Table ceilings with measured values replacing them (sources set to "measured")."""
    out = json.loads(json.dumps(dict(table)))
    for prec, v in (measured.get("peak_flops_per_s") or {}).items():
        if v and prec in out["peak_flops_per_s"]:
            out["peak_flops_per_s"][prec] = float(v)
            out["flops_source"][prec] = "measured"
    if measured.get("dram_bytes_per_s"):
        out["dram_bytes_per_s"] = float(measured["dram_bytes_per_s"])
        out["dram_source"] = "measured"
    if measured.get("link_bytes_per_s"):
        out["link_bytes_per_s"] = float(measured["link_bytes_per_s"])
        out["link_source"] = "measured"
    return out


def _write_atomic(path: str, data: Mapping) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True))


def _best_seconds(fn, repeats: int) -> tuple[float, str]:
    """Shortest run of fn: the longest kernel inside a fpgaprof trace when available."""
    try:
        import fpgaprof

        trace = getattr(fpgaprof, "trace")
    except AttributeError:
        trace = None
    fn()  # compile + warm up
    if trace is not None:
        try:
            with trace() as prof:
                for _ in range(repeats):
                    fn()
            ks = getattr(prof, "kernels")
            cols = ks.columns() if callable(getattr(ks, "columns", None)) else None
            if cols is not None and len(cols.get("start_ns", [])):
                d = (cols["end_ns"] - cols["start_ns"]).astype("float64")
                return float(d.max()) * 1e-9, "kernel duration (fpgaprof trace)"
        except Exception:
            pass
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best, "wall time around block_until_ready"


def run(repeats: int = 5, copy_bytes: int = 1 << 30, save: bool = True) -> dict:
    """Measures and stores this GPU's achieved ceilings; returns them. Raises
    CuptiUnavailableError when JAX sees no GPU."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        raise CuptiUnavailableError(f"calibrate needs JAX with a GPU backend ({e}): pip install 'jax[cuda13]'")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        raise CuptiUnavailableError("no GPU visible to JAX: run fpgaprof calibrate on a machine with an "
                                    "NVIDIA GPU and jax[cuda13] installed")
    dev = gpus[0]
    name = str(getattr(dev, "device_kind", "gpu"))
    result: dict[str, Any] = {"device_name": name, "peak_flops_per_s": {}, "timing": {},
                              "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    n = copy_bytes // 4
    x = jax.device_put(jnp.ones((n,), jnp.float32), dev)
    copy = jax.jit(lambda a: a + 1.0)  # reads and writes n floats: 2 x copy_bytes (x * 1.0 would fold away)
    s, how = _best_seconds(lambda: copy(x).block_until_ready(), repeats)
    result["dram_bytes_per_s"] = 2.0 * copy_bytes / s
    result["timing"]["dram"] = how
    del x
    for prec, dtype, jprec, size in _MATMULS:
        try:
            from jax.experimental import enable_x64

            ctx = enable_x64() if dtype == "float64" else _null()
            with ctx:
                a = jax.device_put(jnp.ones((size, size), dtype), dev)
                mm = jax.jit(lambda p, q, _pr=jprec: jnp.matmul(p, q, precision=_pr))
                s, how = _best_seconds(lambda: mm(a, a).block_until_ready(), repeats)
            result["peak_flops_per_s"][prec] = 2.0 * size ** 3 / s
            result["timing"][prec] = how
        except Exception as e:  # a precision the GPU or JAX build lacks: say so, keep the rest
            result["timing"][prec] = f"failed: {type(e).__name__}: {e}"
    if save:
        _write_atomic(cache_path(name), result)
        result["path"] = cache_path(name)
    return result


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False
