"""Measured ceilings of the current GPU (``fpgaprof calibrate``).

``run()`` measures, through JAX on the first GPU:

- DRAM bandwidth: a jitted ``a + 1.0`` over a large float32 array (reads and writes it once:
  2 x bytes per run; ``a * 1.0`` would be folded away by XLA);
- host link bandwidth: a large host -> device copy (``jax.device_put`` of a numpy array) and a
  large device -> host copy (``np.asarray`` of a fresh device array), each direction timed
  from its copy records; ``link_bytes_per_s`` is the faster direction (the ceilings' link is
  one direction);
- peak FLOP/s per precision: a jitted n x n matmul (2 n^3 FLOPs) per precision, fp64 under
  ``jax.enable_x64``.

Timing: each measurement is warmed up once (compile), then run ``repeats`` times inside one
``fpgaprof.trace()``, each repeat in its own ``fpgaprof.region``. A repeat's time is the SUM of
the durations of its kernels (or copies of the measured direction) — an op XLA splits into
several kernels counts whole — and the measurement's time is the MINIMUM over repeats (the
best achieved rate: a ceiling is what the GPU can reach, slower repeats were disturbed).
Records are grouped by region, else by launch order when every repeat launched the same
number. When the trace gives no records (no CUPTI), the shortest wall time around
``block_until_ready`` is used instead; ``timing`` in the result says which, per measurement.

Results are stored atomically in ``$XDG_CACHE_HOME/fpgaprof/ceilings-<key>.json`` (default
``~/.cache``), key = the GPU's UUID when known, else its name; ``load()`` looks up the UUID
first, then the name. Reports merge them over the table ceilings and label them "measured".

A measurement that fails is a FpgaprofWarning naming it and the cause (``timing`` says
"failed: ..."); when none succeeds ``run()`` raises FpgaprofError (the CLI: one line, exit 1).
Without a GPU visible to JAX it raises CuptiUnavailableError.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fpgaprof.analysis.ceilings import cache_path, save_measured
from fpgaprof.analysis.ceilings import load_measured as load
from fpgaprof.analysis.ceilings import merge_measured as merge
from fpgaprof.api.trace import region, trace
from fpgaprof.base.constants import NONE32
from fpgaprof.base.errors import CuptiUnavailableError, FpgaprofError, FpgaprofWarning

__all__ = [
    "run",
    "load",
    "merge",
    "cache_path",
    "repeat_seconds",
    "profiler",
    "enable_x64",
    "array_bytes",
    "MATMULS",
]

MATMULS = (  # (precision name, dtype, jax precision, n)
    ("fp32", "float32", "highest", 8192),
    ("tf32_tensor", "float32", "default", 8192),
    ("fp16_tensor", "bfloat16", "default", 8192),
    ("fp64_tensor", "float64", "highest", 4096),
)
REGION_PREFIX = "fpgaprof.calibrate"


# ---------------------------------------------------------------------------------------------
# timing


def profiler() -> tuple[Any, Any]:
    """(fpgaprof.trace, fpgaprof.region): what the measurements are timed with (a test
    replaces it with a double of its own)."""
    return trace, region


def repeat_seconds(
    start_ns: Sequence, end_ns: Sequence, region_index: Sequence, repeat_regions: Sequence[int]
) -> tuple[float, str] | None:
    """Best repeat's device time from the records of one measurement.

    ``repeat_regions[i]``: the region index of repeat i. Per repeat the durations of its
    records are summed; the minimum over repeats is returned with how records were grouped.
    Grouping: by ``region_index`` when every repeat has records; else, when the records'
    count is a multiple of the repeats, by launch order (start time) in equal groups; else
    None (no trustworthy grouping)."""
    start = np.asarray(start_ns, dtype=np.int64)
    end = np.asarray(end_ns, dtype=np.int64)
    reg = np.asarray(region_index, dtype=np.int64)
    repeats = len(repeat_regions)
    if repeats == 0 or start.size == 0:
        return None
    dur = np.maximum(end - start, 0).astype(np.float64)
    sums = [float(dur[reg == r].sum()) if r != NONE32 else 0.0 for r in repeat_regions]
    counts = [int((reg == r).sum()) if r != NONE32 else 0 for r in repeat_regions]
    if all(c > 0 for c in counts):
        return min(sums) * 1e-9, "per repeat (by region)"
    if start.size % repeats == 0:
        order = np.argsort(start, kind="stable")
        per = dur[order].reshape(repeats, -1).sum(axis=1)
        return float(per.min()) * 1e-9, "per repeat (by launch order)"
    return None


def _table_columns(table: Any, names: Sequence[str]) -> dict | None:
    cols = table.columns() if callable(getattr(table, "columns", None)) else None
    if cols is None or any(n not in cols for n in names):
        return None
    return cols


def _device_seconds(prof: Any, region_names: Sequence[str], what: str) -> tuple[float, str] | None:
    """The best repeat's time from a finished trace: ``what`` is "kernels" or a copy kind
    ("HtoD", "DtoH")."""
    regions = _table_columns(prof.regions, ["name"])
    index_of: dict[str, int] = {}
    if regions is not None:
        for i, n in enumerate(regions["name"]):
            index_of.setdefault(str(n), i)
    repeat_regions = [index_of.get(n, NONE32) for n in region_names]
    if what == "kernels":
        cols = _table_columns(prof.kernels, ["start_ns", "end_ns", "region_index"])
        label = "sum of kernel durations"
        if cols is None:
            return None
        start, end, reg = cols["start_ns"], cols["end_ns"], cols["region_index"]
    else:
        cols = _table_columns(prof.transfers, ["start_ns", "end_ns", "region_index", "copy_kind"])
        label = f"sum of {what} copy durations"
        if cols is None:
            return None
        keep = np.asarray([str(k) == what for k in cols["copy_kind"]], dtype=bool)
        start, end = np.asarray(cols["start_ns"])[keep], np.asarray(cols["end_ns"])[keep]
        reg = np.asarray(cols["region_index"])[keep]
    got = repeat_seconds(start, end, reg, repeat_regions)
    if got is None:
        return None
    return got[0], f"{label} {got[1]}, fastest of {len(region_names)} (fpgaprof trace)"


def _best_seconds(
    label: str,
    fn: Callable[[], Any],
    repeats: int,
    what: str = "kernels",
    ident: dict | None = None,
) -> tuple[float, str]:
    """Seconds of the best of ``repeats`` runs of fn (see the module doc) and how measured.
    ``ident`` receives the traced GPU's name and uuid when the trace knows them."""
    trace, region = profiler()
    fn()  # compile + warm up
    note = ""
    if trace is not None and region is not None:
        names = [f"{REGION_PREFIX}/{label}/{i}" for i in range(repeats)]
        try:
            with warnings.catch_warnings():
                # Without CUPTI the trace says so; the wall-time fallback below is labelled.
                warnings.simplefilter("ignore", FpgaprofWarning)
                with trace() as prof:
                    for n in names:
                        with region(n):
                            fn()
            if ident is not None and not ident.get("uuid"):
                ident.update(_traced_device(prof))
            got = _device_seconds(prof, names, what)
            if got is not None and got[0] > 0:
                return got
            note = "; the trace had no usable records"
        except Exception as e:  # noqa: BLE001 - e.g. another profiler holds CUPTI: time by wall
            note = f"; trace failed: {type(e).__name__}: {' '.join(str(e).split())}"
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best, f"wall time around block_until_ready, fastest of {repeats}{note}"


def _traced_device(prof: Any) -> dict:
    try:
        devs = list(prof.devices)
    except Exception:  # noqa: BLE001 - no device info: identify by JAX's name
        return {}
    if not devs:
        return {}
    d = devs[0]
    return {"name": str(getattr(d, "name", "") or ""), "uuid": str(getattr(d, "uuid", "") or "")}


def enable_x64() -> Any:
    """Context manager enabling float64 in JAX: ``jax.enable_x64(True)`` (jax >= 0.4.3x;
    jax 0.10/0.11), else the older ``jax.experimental.enable_x64()``."""
    import jax

    state = getattr(jax, "enable_x64", None)
    if state is not None and callable(state):
        return state(True)
    from jax.experimental import enable_x64  # type: ignore[attr-defined]  # older JAX

    return enable_x64()


def _free_device_bytes(dev: Any) -> int | None:
    try:
        stats = dev.memory_stats() or {}
        limit = int(stats.get("bytes_limit", 0))
        used = int(stats.get("bytes_in_use", 0))
        return limit - used if limit > 0 else None
    except Exception:  # noqa: BLE001 - no stats on this backend
        return None


def array_bytes(requested: int, free: int | None, copies: int) -> int:
    """Bytes per array so that ``copies`` arrays use at most half the free device memory
    (at least 1 MiB, a multiple of 4 bytes)."""
    size = requested if free is None else min(requested, free // (2 * copies))
    return max(1 << 20, size // 4 * 4)


# ---------------------------------------------------------------------------------------------


def run(
    repeats: int = 5, copy_bytes: int = 1 << 30, link_bytes: int = 256 << 20, save: bool = True
) -> dict:
    """Measures and stores this GPU's achieved ceilings; returns them (with ``path`` when
    saved). Raises CuptiUnavailableError when JAX sees no GPU, FpgaprofError when no ceiling
    could be measured; warns (FpgaprofWarning) once per measurement that failed."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        raise CuptiUnavailableError(
            f"calibrate needs JAX with a GPU backend ({e}): pip install 'jax[cuda13]'"
        )
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        raise CuptiUnavailableError(
            "no GPU visible to JAX: run fpgaprof calibrate on a machine "
            "with an NVIDIA GPU and jax[cuda13] installed"
        )
    dev = gpus[0]
    ident: dict = {}
    result: dict[str, Any] = {
        "device_name": str(getattr(dev, "device_kind", "gpu")),
        "device_uuid": "",
        "peak_flops_per_s": {},
        "timing": {},
        "repeats": repeats,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    failures: list[str] = []

    def failed(what: str, e: BaseException) -> None:
        msg = f"{type(e).__name__}: {' '.join(str(e).split())}"
        result["timing"][what] = f"failed: {msg}"
        failures.append(f"{what} ({msg})")
        warnings.warn(
            f"fpgaprof calibrate: {what} not measured ({msg}); reports keep the table value for it",
            FpgaprofWarning,
            stacklevel=3,
        )

    free = _free_device_bytes(dev)
    try:
        n_bytes = array_bytes(copy_bytes, free, 2)
        x = jax.device_put(jnp.ones((n_bytes // 4,), jnp.float32), dev)
        copy = jax.jit(lambda a: a + 1.0)  # reads and writes every float once: 2 x n_bytes
        s, how = _best_seconds("dram", lambda: copy(x).block_until_ready(), repeats, ident=ident)
        x = None  # frees the device array before the next measurement
        result["dram_bytes_per_s"] = 2.0 * n_bytes / s
        result["dram_bytes"] = n_bytes
        result["timing"]["dram"] = how
    except Exception as e:  # noqa: BLE001 - one failed measurement is a warning
        failed("dram", e)

    link: dict[str, float] = {}
    try:
        # warm-up + traced repeats + wall-time repeats (fallback) each need a fresh array
        l_bytes = array_bytes(link_bytes, free, 2 * repeats + 3)
        host = np.ones((l_bytes // 4,), np.float32)
        s, how = _best_seconds(
            "htod",
            lambda: jax.device_put(host, dev).block_until_ready(),
            repeats,
            what="HtoD",
            ident=ident,
        )
        link["HtoD"] = l_bytes / s
        result["timing"]["link_htod"] = how
        # A device array caches its host copy after the first transfer: one fresh array per run.
        fresh = jax.jit(lambda a: a * 2.0)
        src = jax.device_put(host, dev)
        pending = [fresh(src) for _ in range(2 * repeats + 1)]
        for a in pending:
            a.block_until_ready()
        s, how = _best_seconds(
            "dtoh", lambda: np.asarray(pending.pop()), repeats, what="DtoH", ident=ident
        )
        src = None  # the device arrays go before the next measurement
        pending.clear()
        link["DtoH"] = l_bytes / s
        result["timing"]["link_dtoh"] = how
        result["link_bytes"] = l_bytes
    except Exception as e:  # noqa: BLE001
        failed("link HtoD" if "HtoD" not in link else "link DtoH", e)
    if link:
        result["link_htod_bytes_per_s"] = link.get("HtoD")
        result["link_dtoh_bytes_per_s"] = link.get("DtoH")
        result["link_bytes_per_s"] = max(link.values())

    for prec, dtype, jprec, size in MATMULS:
        try:
            ctx = enable_x64() if dtype == "float64" else contextlib.nullcontext()
            with ctx:
                a = jax.device_put(jnp.ones((size, size), dtype), dev)
                if str(a.dtype) != dtype:  # JAX silently narrows float64 without x64
                    raise FpgaprofError(f"JAX made a {a.dtype} array for {dtype}")
                mm = jax.jit(lambda p, q, _pr=jprec: jnp.matmul(p, q, precision=_pr))
                # the lambda is called inside this iteration only (B023 does not apply)
                s, how = _best_seconds(
                    prec,
                    lambda: mm(a, a).block_until_ready(),  # noqa: B023
                    repeats,
                    ident=ident,
                )
                a = None
            result["peak_flops_per_s"][prec] = 2.0 * size**3 / s
            result["timing"][prec] = how
        except Exception as e:  # noqa: BLE001 - a precision the GPU or JAX build lacks
            failed(prec, e)

    if ident.get("name"):
        result["device_name"] = ident["name"]
    result["device_uuid"] = ident.get("uuid", "")
    if not result["peak_flops_per_s"] and "dram_bytes_per_s" not in result and not link:
        raise FpgaprofError(
            "fpgaprof calibrate measured no ceiling: "
            + "; ".join(failures)
            + " (check that JAX runs on this GPU: python -c 'import jax; "
            "print(jax.devices())')"
        )
    if save:
        path = cache_path(result["device_name"], result["device_uuid"])
        save_measured(path, result)
        result["path"] = path
    return result
