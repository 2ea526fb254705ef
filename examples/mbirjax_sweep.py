#!/usr/bin/env python3
"""Profile MBIRJAX operations over volume sizes with fpgaprof.

For every operation and volume size n (an n x n x n volume, n views): one warm-up call, then --runs timed
calls, each synchronised with jax.block_until_ready and wrapped in fpgaprof.region(operation) inside one
fpgaprof.trace per (operation, size). Reported per (operation, size):
  * wall time per run (median, min, max);
  * the warm-up call's compile breakdown (trace / lower / compile seconds from jax.monitoring), and an
    explicit AOT breakdown (jitted.trace / .lower / .compile / execute, JAX's public AOT API) of every
    jitted function the operation dispatches, found by recording its calls; where there is none, or a
    step fails, the outputs say why and the sweep carries on;
  * MBIRJAX's compute configuration (0.7: get_compute_config(), whether the Pallas kernels are live);
  * compilations during the timed runs (0 expected; anything else is flagged);
  * from the fpgaprof trace: kernels, transfers per direction, peak device memory, roofline, FPGA score
    (on CPU JAX no kernel data exists and the result says so explicitly).
Runs on MBIRJAX 0.6.17.1 and 0.7.x.
Outputs (--output DIR): summary.json, scaling.csv, scaling.txt, report.html (when fpgaprof.report exists).
--max-seconds S bounds the sweep: no (operation, size) starts once S seconds have passed, or when
what is left is less than the longest one at that size took; those are listed as not run and the
sweep ends normally, writing its outputs.
Usage: python examples/mbirjax_sweep.py --sizes 32 64 --runs 3 --operations parallel_forward_project
See docs/mbirjax.md.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import importlib
import inspect
import io
import json
import math
import os
import platform
import re
import statistics
import sys
import threading
import time
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

# Headless: MBIRJAX's viewer selects TkAgg and imports easygui at import time.
os.environ.setdefault("MPLBACKEND", "Agg")


def _stub_missing_gui_modules() -> list[str]:
    """Installs empty modules for GUI packages that cannot be imported here (no Tk, no display)."""
    stubbed = []
    for name in ("easygui",):
        try:
            __import__(name)
        except Exception:  # ImportError, or TclError from a Tk without display
            sys.modules[name] = types.ModuleType(name)
            stubbed.append(name)
    return stubbed


_STUBBED_GUI = _stub_missing_gui_modules()

import fpgaprof  # noqa: E402  (before jax: NVTX injection and XLA dump flags are set at import)
import jax  # noqa: E402
import numpy as np  # noqa: E402

# ---------------------------------------------------------------------------------------------------------
# AOT breakdown of the jitted functions an operation reaches, through JAX's public AOT API
# (jitted.trace(*args).lower().compile(), then the compiled executable on the same arguments).
#
# The jitted functions are found by what the operation calls, not by name: while the sweep runs,
# jax.jit hands out a thin wrapper around the real jitted function (JitCallRecorder.patched(),
# active while MBIRJAX is imported, while its models are built and while each operation runs),
# and during an operation's warm-up each wrapper records its top-level calls: calls made outside
# any other jitted call and with no tracer among the arguments, i.e. the compiled programs the
# operation dispatches itself. Nested calls are part of their caller's program and are not
# recorded. This finds module-level jitted functions (MBIRJAX 0.7's projector drivers), jitted
# functions a model builds for itself (0.6's per-model projectors) and closures jitted inside a
# call (median_filter3d, the denoiser) alike, on any MBIRJAX version, without reaching into
# MBIRJAX's internals. A step that fails (trace, lower, compile or execute) is recorded with its
# reason for that function, and the sweep carries on.

# jax.core.Tracer, or where it is defined (since JAX 0.4) for a JAX that stops exporting it: a
# missing class would record the calls made while tracing as programs the operation dispatched.
_TRACER: type = getattr(jax.core, "Tracer", None) or importlib.import_module("jax._src.core").Tracer


def _arg_signature(x: Any) -> Any:
    """A hashable key of an argument: shape and dtype for arrays, the value's repr otherwise."""
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ("array", tuple(x.shape), str(x.dtype))
    if isinstance(x, (tuple, list)):
        return (type(x).__name__,) + tuple(_arg_signature(v) for v in x)
    if isinstance(x, dict):
        return ("dict",) + tuple(sorted((str(k), _arg_signature(v)) for k, v in x.items()))
    try:
        return repr(x)
    except Exception:
        return f"<{type(x).__name__} at {id(x):#x}>"


def _as_set(x: Any) -> set:
    if x is None:
        return set()
    if isinstance(x, (int, str)):
        return {x}
    return set(x)


class RecordedJit:
    """What jax.jit returns while a JitCallRecorder is patched in: the real jitted function, called
    straight through. Attributes (lower, trace, eval_shape, ...) are the real one's; as a class
    attribute it binds like a method, as the jitted function does."""

    def __init__(self, recorder: "JitCallRecorder", jitted: Any, fun: Callable, jit_kwargs: dict):
        functools.update_wrapper(self, fun)  # first: fun's __dict__ may hold these names too
        self._recorder = recorder
        self._jitted = jitted
        self._fun = fun
        self._jit_kwargs = jit_kwargs

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        rec = self._recorder
        if not rec.active:
            return self._jitted(*args, **kwargs)
        local = rec._local
        depth = getattr(local, "depth", 0)
        if depth == 0:
            rec._record(self, args, kwargs)
        local.depth = depth + 1
        try:
            return self._jitted(*args, **kwargs)
        finally:
            local.depth = depth

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)

    def __copy__(self) -> "RecordedJit":  # a model copied with copy.deepcopy shares its jitted
        return self                        # functions, as it would share the real ones

    def __deepcopy__(self, memo: dict) -> "RecordedJit":
        return self

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_recorder", "_jitted", "_fun", "_jit_kwargs"):
            raise AttributeError(name)
        return getattr(self._jitted, name)

    @property
    def label(self) -> str:
        fun = self._fun
        name = getattr(fun, "__qualname__", None) or getattr(fun, "__name__", None)
        if name is None and isinstance(fun, functools.partial):
            name = getattr(fun.func, "__qualname__", None)
        return f"{getattr(fun, '__module__', None) or '?'}.{name or type(fun).__name__}"

    def dynamic_args(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """args and kwargs without the static ones: what the compiled executable takes."""
        nums = {int(i) for i in _as_set(self._jit_kwargs.get("static_argnums"))}
        names = {str(n) for n in _as_set(self._jit_kwargs.get("static_argnames"))}
        try:
            params = list(inspect.signature(self._fun).parameters.values())
        except (TypeError, ValueError):
            params = []
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        nums = {i + len(args) if i < 0 else i for i in nums}
        for i, name in enumerate(positional):
            if name in names:
                nums.add(i)
            if i in nums:
                names.add(name)
        return (tuple(a for i, a in enumerate(args) if i not in nums),
                {k: v for k, v in kwargs.items() if k not in names})


class JitCallRecorder:
    """Records the top-level calls of functions jitted while it is patched into jax.jit."""

    def __init__(self) -> None:
        self.active = False
        self.calls: dict[tuple, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._local = threading.local()  # nesting depth per thread (MBIRJAX 0.7: a thread per device)
        self._real_jit: Callable | None = None

    @contextlib.contextmanager
    def patched(self):
        """jax.jit returns RecordedJit wrappers inside this block (nestable)."""
        if self._real_jit is not None:
            yield self
            return
        real = jax.jit
        self._real_jit = real

        def jit(fun: Any = None, /, *args: Any, **kwargs: Any) -> Any:
            if fun is None or args:  # decorator factory form, or an unexpected signature
                if fun is None:
                    return lambda f: jit(f, **kwargs)
                return real(fun, *args, **kwargs)
            return RecordedJit(self, real(fun, **kwargs), fun, kwargs)

        jit.__doc__ = real.__doc__
        jax.jit = jit
        try:
            yield self
        finally:
            jax.jit = real
            self._real_jit = None

    @contextlib.contextmanager
    def recording(self):
        """Records the top-level calls made inside this block (replacing earlier records)."""
        self.calls = {}
        self.active = True
        try:
            yield self
        finally:
            self.active = False

    def _record(self, wrapper: RecordedJit, args: tuple, kwargs: dict) -> None:
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        if any(isinstance(v, _TRACER) for v in leaves):
            return  # inside a transformation (vmap, grad, another trace): not a dispatch
        key = (wrapper, _arg_signature(args), _arg_signature(kwargs))
        with self._lock:
            entry = self.calls.get(key)
            if entry is None:
                entry = self.calls[key] = {"wrapper": wrapper, "args": args, "kwargs": kwargs,
                                           "calls": 0}
            entry["calls"] += 1

    def entries(self) -> list[tuple[str, tuple, dict[str, Any]]]:
        """(name, key, entry) per distinct (function, argument signature), in first-call order.
        The name is the function's __name__, with "#2", "#3", ... for repeats."""
        out, seen = [], {}
        for key, entry in self.calls.items():
            w = entry["wrapper"]
            base = getattr(w, "__name__", None) or w.label.rsplit(".", 1)[-1]
            seen[base] = seen.get(base, 0) + 1
            out.append((base if seen[base] == 1 else f"{base}#{seen[base]}", key, entry))
        return out


JIT_CALLS = JitCallRecorder()


def aot_breakdown_one(wrapper: RecordedJit, args: tuple, kwargs: dict) -> dict[str, Any]:
    """jitted.trace / .lower / .compile / execute seconds and XLA's cost analysis for one recorded
    call; a step that fails ends the breakdown of this function with `error` saying where and why.
    Call after jax.clear_caches(), so that the trace is not a cache hit."""
    out: dict[str, Any] = {"function": wrapper.label}
    jitted = wrapper._jitted
    stage = "trace"
    try:
        t0 = time.perf_counter()
        traced = jitted.trace(*args, **kwargs)
        t1 = time.perf_counter()
        stage = "lower"
        lowered = traced.lower()
        t2 = time.perf_counter()
        stage = "compile"
        compiled = lowered.compile()
        t3 = time.perf_counter()
    except Exception as exc:
        out["error"] = f"{stage} failed: {_exc_text(exc)}"
        return out
    out.update(trace_s=t1 - t0, lower_s=t2 - t1, compile_s=t3 - t2, execute_s=None)
    out["cost_analysis"] = _cost_summary(compiled)
    dyn_args, dyn_kwargs = wrapper.dynamic_args(args, kwargs)
    gone = [x for x in jax.tree_util.tree_leaves((dyn_args, dyn_kwargs))
            if callable(getattr(x, "is_deleted", None)) and x.is_deleted()]
    if gone:
        out["execute_note"] = ("not executed: an argument was donated to the recorded call "
                               "(donate_argnums) and no longer exists")
        return out
    try:
        t4 = time.perf_counter()
        jax.block_until_ready(compiled(*dyn_args, **dyn_kwargs))
        out["execute_s"] = time.perf_counter() - t4
    except Exception as exc:
        out["execute_note"] = f"not executed: {_exc_text(exc)}"
    return out


def _exc_text(exc: BaseException, limit: int = 300) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first if len(first) <= limit else first[: limit - 3] + "..."


# MBIRJAX jits most of its functions at import: import it with the recorder patched in. The viewer
# warns that TkAgg is unavailable, and 0.7 that it was imported after JAX (so on CPU JAX keeps
# its one device; see docs/mbirjax.md).
with JIT_CALLS.patched(), contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import mbirjax as mj  # noqa: E402

# ---------------------------------------------------------------------------------------------------------
# Compilation accounting through jax.monitoring (jax >= 0.4.30; checked on 0.10.2):
# pjit records JAXPR_TRACE_EVENT per traced function, pxla JAXPR_TO_MLIR_MODULE_EVENT per lowering and
# BACKEND_COMPILE_EVENT once per XLA compilation that misses the in-memory executable cache (persistent
# cache hits included). Eager jnp ops compile through the same path, so they are counted too.
TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
LOWER_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class CompileMonitor:
    """Counts traces, lowerings and backend compilations (and their seconds) since the last reset()."""

    _installed: "CompileMonitor | None" = None

    def __init__(self) -> None:
        self.reset()

    @classmethod
    def install(cls) -> "CompileMonitor":
        if cls._installed is None:
            mon = cls()
            jax.monitoring.register_event_duration_secs_listener(mon._on_duration)
            cls._installed = mon
        return cls._installed

    def reset(self) -> None:
        self.counts = {"trace": 0, "lower": 0, "compile": 0}
        self.seconds = {"trace": 0.0, "lower": 0.0, "compile": 0.0}
        self.compiled_names: list[str] = []

    def _on_duration(self, event: str, duration: float, **kwargs: Any) -> None:
        kind = {TRACE_EVENT: "trace", LOWER_EVENT: "lower", COMPILE_EVENT: "compile"}.get(event)
        if kind is None:
            return
        self.counts[kind] += 1
        self.seconds[kind] += float(duration)
        if kind == "compile":
            self.compiled_names.append(str(kwargs.get("fun_name", "?")))

    def snapshot(self) -> dict[str, Any]:
        return {
            "traces": self.counts["trace"],
            "lowerings": self.counts["lower"],
            "compilations": self.counts["compile"],
            "trace_s": self.seconds["trace"],
            "lower_s": self.seconds["lower"],
            "compile_s": self.seconds["compile"],
            "compiled_functions": sorted(set(self.compiled_names)),
        }


def _cost_summary(compiled: Any) -> dict[str, float] | None:
    try:
        cost = compiled.cost_analysis()
    except Exception:
        return None
    if isinstance(cost, (list, tuple)):
        cost = cost[0] if cost else None
    if not isinstance(cost, dict):
        return None
    keys = ("flops", "transcendentals", "bytes accessed")
    return {k: float(cost[k]) for k in keys if k in cost}


# ---------------------------------------------------------------------------------------------------------
# MBIRJAX's compute configuration (0.7: TomographyModel.get_compute_config(), which says which
# projector kernels a model uses: the Pallas/Triton ones on H100/H200/A100 GPUs, else XLA's).
# One per model the sweep builds, "<geometry>/<n>" -> (config made JSON-safe, or None; reason).

COMPUTE_CONFIGS: dict[str, tuple[Any, str | None]] = {}
PALLAS_FLAGS = ("fwd_pallas", "back_pallas", "fwd_pallas_band", "back_pallas_band")


def json_safe(x: Any, depth: int = 0) -> Any:
    """x as JSON values: dicts (string keys), lists, numbers, strings, booleans, None; NumPy
    scalars and arrays as numbers and lists; namedtuples and dataclasses as dicts; anything else
    as its str()."""
    if depth > 20:
        return str(x)
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, float)):
        return x if not isinstance(x, float) or math.isfinite(x) else str(x)
    if isinstance(x, np.generic):
        return json_safe(x.item(), depth + 1)
    if isinstance(x, np.ndarray):
        return json_safe(x.tolist(), depth + 1)
    if isinstance(x, dict):
        return {str(k): json_safe(v, depth + 1) for k, v in x.items()}
    if hasattr(x, "_asdict"):
        return json_safe(x._asdict(), depth + 1)
    if isinstance(x, (list, tuple, set, frozenset)):
        return [json_safe(v, depth + 1) for v in x]
    import dataclasses

    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return json_safe(dataclasses.asdict(x), depth + 1)
    return str(x)


def compute_config_of(model: Any) -> tuple[Any, str | None]:
    """(model.get_compute_config() made JSON-safe, None), or (None, why there is none)."""
    get = getattr(model, "get_compute_config", None)
    if get is None:
        return None, (f"XLA projectors: mbirjax {_dist_version('mbirjax')} has no Pallas projectors "
                      "and no get_compute_config() (both came with MBIRJAX 0.7)")
    try:
        with _quiet():
            try:
                cfg = get(print_results=False)
            except TypeError:
                cfg = get()
    except Exception as exc:
        return None, f"get_compute_config() failed: {_exc_text(exc)}"
    return json_safe(cfg), None


def pallas_live(config: Any) -> bool | None:
    """Whether a compute config says a Pallas projector kernel is live (kernels.*_pallas*), or None
    when it does not say."""
    kernels = config.get("kernels") if isinstance(config, dict) else None
    if not isinstance(kernels, dict):
        return None
    flags = [kernels[k] for k in PALLAS_FLAGS if k in kernels]
    return any(bool(f) for f in flags) if flags else None


# MBIRJAX 0.7.3's pallas_status when the GPU is not one it measured its kernels on
# (_pallas_kernels.availability(): 'device kind {!r} not in the measured allowlist {}', the
# allowlist a tuple such as ('H100', 'H200', 'A100')).
_NOT_ALLOWLISTED = re.compile(
    r"device kind (?P<kind>'[^']*'|\"[^\"]*\") not in the measured allowlist (?P<allow>\(.*\))\s*$"
)


def projector_path(config: Any, reason: str | None = None) -> str:
    """Which projectors a model runs and why, in words, from MBIRJAX's own compute config
    (get_compute_config(): kernels.*_pallas*, pallas_status, devices.device_kind):
    'Pallas projectors on <device> (<paths>)', or 'XLA projectors: <why>'. A GPU whose device
    kind is not in MBIRJAX's Pallas allowlist is named with the allowlist as MBIRJAX states it,
    e.g. "XLA projectors: NVIDIA GeForce RTX 5080 is not in MBIRJAX's Pallas allowlist (H100,
    H200, A100)". Without a config: the reason compute_config_of gave (on 0.6 it names XLA's
    projectors, the only ones 0.6 has), else 'projectors unknown: <reason>'."""
    if not isinstance(config, dict):
        if reason and reason.startswith("XLA projectors: "):
            return reason
        return f"projectors unknown: {reason}" if reason else "projectors unknown"
    kernels = config.get("kernels") if isinstance(config.get("kernels"), dict) else {}
    devices = config.get("devices") if isinstance(config.get("devices"), dict) else {}
    kind = str(devices.get("device_kind") or "").strip()
    status = str(kernels.get("pallas_status") or "").strip()
    live = pallas_live(config)
    if live:
        paths = ", ".join(k for k in PALLAS_FLAGS if kernels.get(k))
        return f"Pallas projectors on {kind or 'the GPU'} ({paths})"
    if live is None:
        return "projectors unknown: the compute config names no Pallas path" + (
            f" ({status})" if status else "")
    m = _NOT_ALLOWLISTED.match(status)
    if m:
        try:
            who = str(ast.literal_eval(m.group("kind")))
            allow = ast.literal_eval(m.group("allow"))
            names = ", ".join(str(a) for a in allow) if isinstance(allow, (tuple, list)) else str(allow)
        except (ValueError, SyntaxError):
            return f"XLA projectors: {status}"
        return f"XLA projectors: {who or 'this GPU'} is not in MBIRJAX's Pallas allowlist ({names})"
    if kernels.get("pallas_available"):
        return ("XLA projectors: Pallas is available"
                + (f" ({status})" if status else "")
                + " but this model's tile policy uses no Pallas path")
    return "XLA projectors" + (f": {status}" if status else "")


def compute_config_line(label: str, config: Any, reason: str | None) -> str:
    """One console line per model: which projectors run and why (projector_path), and the
    Pallas path flags."""
    if config is None:
        return f"compute config {label}: not available: {reason}"
    kernels = config.get("kernels") if isinstance(config, dict) else {}
    kernels = kernels if isinstance(kernels, dict) else {}
    flags = ", ".join(f"{k}={kernels[k]}" for k in PALLAS_FLAGS if k in kernels)
    return f"compute config {label}: {projector_path(config)}" + (f"; {flags}" if flags else "")


# ---------------------------------------------------------------------------------------------------------
# Operations. Each entry builds a zero-argument callable for a volume size from a lazily filled context;
# the callable's result is what block_until_ready waits on.


class SizeContext:
    """Models, phantom, sinograms and weights for one volume size n, built on first use (untimed)."""

    def __init__(self, n: int, log_dir: str) -> None:
        self.n = n
        self.log_dir = log_dir
        self._cache: dict[str, Any] = {}

    def _get(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._cache:
            with _quiet():
                self._cache[key] = jax.block_until_ready(build())
        return self._cache[key]

    def log(self, name: str) -> str:
        return os.path.join(self.log_dir, f"{name}_{self.n}.log")

    def model(self, geometry: str) -> Any:
        n = self.n
        built = geometry in self._cache
        if geometry == "parallel":
            angles = np.linspace(0.0, np.pi, n, endpoint=False)
            model = self._get("parallel", lambda: mj.ParallelBeamModel((n, n, n), angles))
        else:
            # Cone geometry as in mbirjax.generate_demo_data: source-detector 4 n, magnification 2.
            angles = np.linspace(-np.pi, np.pi, n, endpoint=False)
            model = self._get(
                "cone",
                lambda: mj.ConeBeamModel(
                    (n, n, n), angles, source_detector_dist=4.0 * n, source_iso_dist=2.0 * n
                ),
            )
        if not built:
            COMPUTE_CONFIGS[f"{geometry}/{n}"] = compute_config_of(model)
        return model

    def phantom(self, geometry: str) -> Any:
        shape = self.model(geometry).get_params("recon_shape")
        return self._get(
            f"phantom_{geometry}", lambda: mj.generate_3d_shepp_logan_low_dynamic_range(shape)
        )

    def sinogram(self, geometry: str) -> Any:
        return self._get(
            f"sino_{geometry}", lambda: self.model(geometry).forward_project(self.phantom(geometry))
        )

    def full_indices(self, geometry: str) -> Any:
        shape = self.model(geometry).get_params("recon_shape")
        return self._get(
            f"indices_{geometry}", lambda: mj.gen_full_indices(shape, use_ror_mask=True)
        )

    def voxel_values(self, geometry: str) -> Any:
        model = self.model(geometry)
        return self._get(
            f"voxels_{geometry}",
            lambda: model.get_voxels_at_indices(
                self.phantom(geometry), self.full_indices(geometry)
            ),
        )

    def noisy_volume(self) -> Any:
        def build() -> Any:
            phantom = self.phantom("parallel")
            noise = jax.random.normal(jax.random.PRNGKey(0), phantom.shape, dtype=phantom.dtype)
            return phantom + 0.05 * noise

        return self._get("noisy", build)


@dataclass
class Operation:
    name: str
    description: str
    geometry: str | None  # "parallel", "cone" or None; models with jitted projector entry points
    build: Callable[[SizeContext], Callable[[], Any]]


def _first(result: Any) -> Any:
    """recon / prox_map / denoise return (volume, dict): only the volume is device data to wait on."""
    return result[0] if isinstance(result, tuple) else result


def _projection_ops(geometry: str) -> list[Operation]:
    g = geometry
    filt = "fbp" if g == "parallel" else "fdk"

    def forward(c: SizeContext) -> Callable[[], Any]:
        m, x = c.model(g), c.phantom(g)
        return lambda: m.forward_project(x)

    def back(c: SizeContext) -> Callable[[], Any]:
        m, y = c.model(g), c.sinogram(g)
        return lambda: m.back_project(y)

    def sparse_forward(c: SizeContext) -> Callable[[], Any]:
        m, v, idx = c.model(g), c.voxel_values(g), c.full_indices(g)
        return lambda: m.sparse_forward_project(v, idx)

    def sparse_back(c: SizeContext) -> Callable[[], Any]:
        m, y, idx = c.model(g), c.sinogram(g), c.full_indices(g)
        return lambda: m.sparse_back_project(y, idx)

    def hessian(c: SizeContext) -> Callable[[], Any]:
        m = c.model(g)
        return lambda: m.compute_hessian_diagonal()

    def direct_filter(c: SizeContext) -> Callable[[], Any]:
        m, y = c.model(g), c.sinogram(g)
        return lambda: m.direct_filter(y)

    def filt_filter(c: SizeContext) -> Callable[[], Any]:
        m, y = c.model(g), c.sinogram(g)
        return lambda: getattr(m, f"{filt}_filter")(y)

    def filt_recon(c: SizeContext) -> Callable[[], Any]:
        m, y = c.model(g), c.sinogram(g)
        return lambda: getattr(m, f"{filt}_recon")(y)

    def direct_recon(c: SizeContext) -> Callable[[], Any]:
        m, y = c.model(g), c.sinogram(g)
        return lambda: m.direct_recon(y)

    def recon(c: SizeContext) -> Callable[[], Any]:
        m, y, log = c.model(g), c.sinogram(g), c.log(f"{g}_recon")
        return lambda: _first(
            m.recon(
                y,
                max_iterations=1,
                stop_threshold_change_pct=0.0,
                logfile_path=log,
                print_logs=False,
            )
        )

    def prox_map(c: SizeContext) -> Callable[[], Any]:
        m, y, x, log = c.model(g), c.sinogram(g), c.phantom(g), c.log(f"{g}_prox_map")
        return lambda: _first(
            m.prox_map(
                x,
                y,
                max_iterations=1,
                stop_threshold_change_pct=0.0,
                logfile_path=log,
                print_logs=False,
            )
        )

    return [
        Operation(f"{g}_forward_project", f"{g} beam forward_project(phantom)", g, forward),
        Operation(f"{g}_back_project", f"{g} beam back_project(sinogram)", g, back),
        Operation(
            f"{g}_sparse_forward_project",
            f"{g} sparse_forward_project at gen_full_indices",
            g,
            sparse_forward,
        ),
        Operation(
            f"{g}_sparse_back_project",
            f"{g} sparse_back_project at gen_full_indices",
            g,
            sparse_back,
        ),
        Operation(
            f"{g}_compute_hessian_diagonal",
            f"{g} compute_hessian_diagonal() (unit weights)",
            g,
            hessian,
        ),
        Operation(f"{g}_direct_filter", f"{g} direct_filter(sinogram) (ramp)", g, direct_filter),
        Operation(f"{g}_{filt}_filter", f"{g} {filt}_filter(sinogram) (ramp)", g, filt_filter),
        Operation(f"{g}_{filt}_recon", f"{g} {filt}_recon(sinogram) (ramp)", g, filt_recon),
        Operation(f"{g}_direct_recon", f"{g} direct_recon(sinogram)", g, direct_recon),
        Operation(
            f"{g}_recon",
            f"{g} recon(sinogram, max_iterations=1) incl. its direct_recon init",
            g,
            recon,
        ),
        Operation(
            f"{g}_prox_map", f"{g} prox_map(phantom, sinogram, max_iterations=1)", g, prox_map
        ),
    ]


def _other_ops() -> list[Operation]:
    def weights(c: SizeContext) -> Callable[[], Any]:
        y = c.sinogram("parallel")
        return lambda: mj.gen_weights(y, weight_type="transmission_root")

    def weights_mar(c: SizeContext) -> Callable[[], Any]:
        m, y, x = c.model("parallel"), c.sinogram("parallel"), c.phantom("parallel")
        return lambda: mj.gen_weights_mar(m, y, init_recon=x)

    def denoise(c: SizeContext) -> Callable[[], Any]:
        image = c.noisy_volume()
        denoiser = mj.QGGMRFDenoiser(image.shape)
        log = c.log("qggmrf_denoise")
        return lambda: _first(
            denoiser.denoise(
                image,
                max_iterations=1,
                stop_threshold_change_pct=0.0,
                logfile_path=log,
                print_logs=False,
            )
        )

    def median(c: SizeContext) -> Callable[[], Any]:
        image = c.noisy_volume()
        return lambda: mj.median_filter3d(image)

    def partition(c: SizeContext) -> Callable[[], Any]:
        shape = c.model("parallel").get_params("recon_shape")
        return lambda: mj.gen_pixel_partition(shape, num_subsets=8)

    def phantom(c: SizeContext) -> Callable[[], Any]:
        shape = c.model("parallel").get_params("recon_shape")
        return lambda: mj.generate_3d_shepp_logan_low_dynamic_range(shape)

    return [
        Operation("gen_weights", "mj.gen_weights(sinogram, 'transmission_root')", None, weights),
        Operation(
            "gen_weights_mar",
            "mj.gen_weights_mar(parallel model, sinogram, init_recon=phantom)",
            "parallel",
            weights_mar,
        ),
        Operation(
            "qggmrf_denoise",
            "QGGMRFDenoiser(shape).denoise(noisy, max_iterations=1)",
            None,
            denoise,
        ),
        Operation("median_filter3d", "mj.median_filter3d(noisy volume)", None, median),
        Operation(
            "gen_pixel_partition",
            "mj.gen_pixel_partition(recon_shape, num_subsets=8)",
            None,
            partition,
        ),
        Operation(
            "shepp_logan_phantom",
            "mj.generate_3d_shepp_logan_low_dynamic_range(recon_shape)",
            None,
            phantom,
        ),
    ]


OPERATIONS: dict[str, Operation] = {
    op.name: op for op in _projection_ops("parallel") + _projection_ops("cone") + _other_ops()
}


@contextlib.contextmanager
def _quiet():
    """MBIRJAX prints progress (Otsu thresholds, 'Creating phantom', ...); keep the sweep's output readable."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


# ---------------------------------------------------------------------------------------------------------
# fpgaprof integration: one fpgaprof.trace per (operation, size) around the timed runs, each run in
# fpgaprof.region("<operation>/<size>"). The trace is analysed by fpgaprof.report.collect (kernels,
# transfers, device memory, roofline, FPGA candidates); every section the build or the machine
# cannot fill says why ({"available": false, "reason": ...}) and is passed on as such.

NO_GPU_REASON = (
    "no GPU: kernel tracing needs an NVIDIA GPU with CUPTI (JAX backend is {backend}); "
    "wall times, compilations and XLA cost analysis are still measured"
)


def _region(name: str):
    region = getattr(fpgaprof, "region", None)
    return region(name) if region is not None else contextlib.nullcontext()


def _collect(
    prof: Any, env: dict[str, Any], measurements: list[dict[str, Any]], trace_path: str | None
) -> dict[str, Any] | None:
    """fpgaprof.report.collect's summary of one (operation, size) trace, or None without the module."""
    try:
        from fpgaprof import report
    except ImportError:
        return None
    return report.collect(prof, trace_path=trace_path, environment=env, measurements=measurements)


# What the sweep keeps of the region what-if of one (operation, size) (docs/fpga-model.md, "Regions").
OPERATION_OFFLOAD_FIELDS = (
    "region", "estimated", "estimated_share", "estimate_note", "gpu_time_ns", "score", "top_op",
    "module_calls", "module_calls_counted", "card_time_s", "transfer_bytes", "transfer_s",
    "fpga_total_s", "region_speedup", "workload_speedup", "verdict", "could_save_ns",
)


def _section_facts(summary: dict[str, Any]) -> dict[str, Any]:
    """The per-(operation, size) facts the sweep shows, taken from a report summary as they are."""

    def sec(name: str) -> dict[str, Any]:
        value = summary.get(name)
        return (
            value
            if isinstance(value, dict)
            else {"available": False, "reason": f"no '{name}' section"}
        )

    kernels, transfers, memory = sec("kernels"), sec("transfers"), sec("memory")
    roofline, candidates = sec("roofline"), sec("candidates")
    facts: dict[str, Any] = {
        "kernels": {
            k: kernels.get(k)
            for k in ("available", "reason", "count", "distinct", "total_s")
            if k in kernels
        },
        "transfers": {
            k: transfers.get(k)
            for k in ("available", "reason", "count", "bytes", "by_direction")
            if k in transfers
        },
        "peak_device_memory": {
            k: memory.get(k) for k in ("available", "reason", "peak_bytes") if k in memory
        },
        "roofline": {k: roofline.get(k) for k in roofline if k not in ("items", "rows", "points")},
        "fpga": {k: candidates.get(k) for k in candidates if k not in ("items", "rows", "regions")},
        "warnings": summary.get("warnings", []),
        # the report's answer for this operation and size (verdict, best card, speedup, why)
        "answer": summary.get("answer") or {"available": False, "reason": "no answer in the report"},
    }
    points = roofline.get("items") or roofline.get("points") or []
    # Where the operation sits on the roofline: its ops by time, and how its op time splits by bound.
    points = sorted(points, key=lambda p: -(p.get("time_s") or 0.0))
    facts["roofline"]["top"] = points[:5]
    if points:
        by_bound: dict[str, float] = {}
        for p in points:
            bound = str(p.get("bound") or "unknown")
            by_bound[bound] = by_bound.get(bound, 0.0) + (p.get("time_s") or 0.0)
        facts["roofline"]["time_s_by_bound"] = by_bound
    facts["fpga"]["top"] = (candidates.get("items") or [])[:5]
    # The whole operation as one offload unit: the outermost region of this trace (the sweep
    # wraps every timed run in fpgaprof.region("<operation>/<size>")).
    regions = candidates.get("regions") or {}
    outer = [r for r in regions.get("items") or [] if r.get("depth") == 0]
    if outer:
        row = max(outer, key=lambda r: r.get("gpu_time_ns") or 0)
        facts["fpga"]["operation"] = {k: row.get(k) for k in OPERATION_OFFLOAD_FIELDS}
    elif regions:
        facts["fpga"]["operation"] = {"available": False,
                                      "reason": regions.get("reason") or "no region rows"}
    if kernels.get("top"):
        facts["kernels"]["top"] = [
            {"name": k.get("name"), "count": k.get("count"), "total_s": k.get("total_s")}
            for k in kernels["top"][:5]
        ]
    return facts


def _run_trace_active() -> bool:
    """Whether a trace already runs in this process (`fpgaprof run`'s)."""
    try:
        from fpgaprof.api.trace import active
    except ImportError:
        return False
    return bool(active())


def under_run_reason(operation: str, size: int) -> str:
    """Where an operation's profile is when `fpgaprof run` traces the sweep."""
    run_dir = os.environ.get("FPGAPROF_RUN_DIR")
    where = os.path.join(run_dir, "summary.json") if run_dir else "the run's summary.json"
    return f"under `fpgaprof run`: region '{operation}/{size}' of the run's trace; its answer is in {where}"


def profile_section(
    prof: Any, env: dict[str, Any], res: "Result", section_dir: str | None, trace_path: str | None
) -> dict[str, Any]:
    """Trace facts for one (operation, size), and its full fpgaprof report under section_dir."""
    out: dict[str, Any] = {}
    if prof is None:
        return {"available": False, "reason": "this fpgaprof build has no fpgaprof.trace"}
    if getattr(prof, "pending_note", ""):
        # A trace() inside another trace of this process (the program's own): its records
        # arrive when the outer trace ends; the outer trace's report has this operation.
        return {"available": False, "reason": under_run_reason(res.operation, res.volume_size)}
    backend = jax.default_backend()
    if backend != "gpu":
        out.update(available=False, reason=NO_GPU_REASON.format(backend=backend))
    else:
        out["available"] = True
    measurements = [
        {"operation": res.operation, "volume_size": res.volume_size, "run": i, "time": t}
        for i, t in enumerate(res.times_s)
    ]
    try:
        summary = _collect(prof, env, measurements, trace_path)
    except Exception as exc:  # a report bug must not lose the timings
        out["report_error"] = f"{type(exc).__name__}: {exc}"
        return out
    if summary is None:
        out["report_error"] = "fpgaprof.report is not available in this build"
        return out
    out.update(_section_facts(summary))
    if section_dir:
        from fpgaprof import report

        os.makedirs(section_dir, exist_ok=True)
        report.write_summary(os.path.join(section_dir, "summary.json"), summary)
        report.write_html(
            os.path.join(section_dir, "report.html"),
            summary,
            title=f"fpgaprof: {res.operation} at n={res.volume_size}",
            extra_tables=[("Sweep timing", [sweep_row(res)])],
        )
        out["report_dir"] = section_dir
    return out


def sweep_row(res: "Result") -> dict[str, Any]:
    """One flat row per (operation, size) for tables."""
    s = res.stats()
    row: dict[str, Any] = {
        "operation": res.operation,
        "volume_size": res.volume_size,
        "runs": len(res.times_s),
        "median_s": s["median_s"],
        "min_s": s["min_s"],
        "max_s": s["max_s"],
        "warmup_s": res.warmup_s,
        "warmup_compilations": res.warmup_compile.get("compilations"),
        "warmup_compile_s": res.warmup_compile.get("compile_s"),
        "timed_compilations": res.timed_compile.get("compilations"),
    }
    ok = [a for a in res.aot.values() if not a.get("error")]
    row["aot_functions"] = len(res.aot)
    row["aot_broken_down"] = len(ok)
    for key in ("trace_s", "lower_s", "compile_s"):
        row[f"aot_{key}"] = sum(a[key] for a in ok) if ok else None
    if res.aot_note:
        row["aot_note"] = res.aot_note
    row["pallas_live"] = res.pallas_live
    p = res.profile
    row["kernels"] = (p.get("kernels") or {}).get("count")
    row["peak_device_bytes"] = (p.get("peak_device_memory") or {}).get("peak_bytes")
    if res.error:
        row["error"] = res.error
    return row


# ---------------------------------------------------------------------------------------------------------
# Measurement


@dataclass
class Result:
    operation: str
    volume_size: int
    times_s: list[float] = field(default_factory=list)
    warmup_s: float = 0.0
    warmup_compile: dict[str, Any] = field(default_factory=dict)
    timed_compile: dict[str, Any] = field(default_factory=dict)
    aot: dict[str, Any] = field(default_factory=dict)
    aot_note: str | None = None
    pallas_live: bool | None = None
    profile: dict[str, Any] = field(default_factory=dict)
    shapes: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def stats(self) -> dict[str, float | None]:
        if not self.times_s:
            return {"median_s": None, "min_s": None, "max_s": None}
        return {
            "median_s": statistics.median(self.times_s),
            "min_s": min(self.times_s),
            "max_s": max(self.times_s),
        }

    def to_json(self) -> dict[str, Any]:
        flagged = self.timed_compile.get("compilations", 0) > 0
        return {
            "operation": self.operation,
            "volume_size": self.volume_size,
            "times_s": self.times_s,
            **self.stats(),
            "warmup_s": self.warmup_s,
            "warmup_compile": self.warmup_compile,
            "timed_runs_compile": self.timed_compile,
            "recompiled_during_timed_runs": flagged,
            "aot": self.aot,
            "aot_note": self.aot_note,
            "pallas_live": self.pallas_live,
            "profile": self.profile,
            "shapes": self.shapes,
            "error": self.error,
        }


def run_aot(
    res: "Result", fn: Callable[[], Any], recorder: JitCallRecorder, aot_cache: dict[tuple, Any]
) -> None:
    """The AOT breakdown of every jitted function the warm-up dispatched (res.aot), or why there is
    none (res.aot_note). Cold figures: every trace and executable cache is dropped first (the
    warm-up filled them), then the operation is warmed up again for the timed runs. A function
    called with the same argument signature by an earlier operation of this size reuses that
    operation's figures (`measured_in`): forward_project, recon and prox_map reach the same
    projector."""
    entries = recorder.entries()
    if not entries:
        res.aot_note = ("nothing to break down: no jitted function was called at top level (the "
                        "operation runs NumPy or eager JAX such as jax.numpy and lax.map, whose "
                        "compilations the warm-up counts)")
        return
    todo = [(name, key, e) for name, key, e in entries if key not in aot_cache]
    if todo:
        jax.clear_caches()
        with _quiet():
            for name, key, e in todo:
                aot_cache[key] = {**aot_breakdown_one(e["wrapper"], e["args"], e["kwargs"]),
                                  "measured_in": res.operation}
            jax.block_until_ready(fn())
    for name, key, e in entries:
        res.aot[name] = {**aot_cache[key], "calls_per_operation": e["calls"]}
    failed = [n for n, a in res.aot.items() if a.get("error")]
    if failed:
        res.aot_note = (
            f"{len(failed)} of {len(res.aot)} jitted function(s) could not be broken down: "
            + "; ".join(f"{n}: {res.aot[n]['error']}" for n in failed[:3])
            + ("; ..." if len(failed) > 3 else "")
        )


def measure(
    op: Operation,
    ctx: SizeContext,
    runs: int,
    monitor: CompileMonitor,
    aot_cache: dict[tuple, dict[str, Any]] | None,
    env: dict[str, Any],
    trace_dir: str | None,
    sections_dir: str | None,
) -> Result:
    """Warm-up, AOT breakdown, then `runs` timed calls under one fpgaprof.trace; never raises."""
    res = Result(op.name, ctx.n)
    try:
        fn = op.build(ctx)
        if op.geometry:
            model = ctx.model(op.geometry)
            res.shapes = {
                "sinogram": list(model.get_params("sinogram_shape")),
                "recon": list(model.get_params("recon_shape")),
            }
            config, _ = COMPUTE_CONFIGS.get(f"{op.geometry}/{ctx.n}", (None, None))
            res.pallas_live = pallas_live(config)
        monitor.reset()
        with JIT_CALLS.recording(), _quiet():
            t0 = time.perf_counter()
            jax.block_until_ready(fn())
            res.warmup_s = time.perf_counter() - t0
        res.warmup_compile = monitor.snapshot()
        if aot_cache is not None:  # None: --no-aot
            try:
                run_aot(res, fn, JIT_CALLS, aot_cache)
            except Exception as exc:  # the breakdown is optional: the timed runs still happen
                res.aot_note = f"AOT breakdown failed: {_exc_text(exc)}"
        JIT_CALLS.calls = {}  # drop the recorded arguments

        path = os.path.join(trace_dir, f"{op.name}_{ctx.n}.fpgaprof") if trace_dir else None
        trace_error = None
        monitor.reset()
        # Under `fpgaprof run` the run's trace holds this operation as region "<op>/<n>": a
        # nested trace() would add a region "trace" around every operation, which the run's
        # answer would have to leave out again.
        under_run = _run_trace_active()
        with contextlib.ExitStack() as stack:
            prof = None
            trace = getattr(fpgaprof, "trace", None)
            if trace is not None and not under_run:
                try:
                    prof = stack.enter_context(trace(path))
                except Exception as exc:  # e.g. ProfilerConflictError: time the runs untraced
                    trace_error = f"fpgaprof.trace failed: {type(exc).__name__}: {exc}"
            for _ in range(runs):
                # the region inside _quiet(): its wall time is the timed run's, not stdout capture's
                with _quiet(), _region(f"{op.name}/{ctx.n}"):
                    t0 = time.perf_counter()
                    jax.block_until_ready(fn())
                    res.times_s.append(time.perf_counter() - t0)
        res.timed_compile = monitor.snapshot()
        if under_run:
            res.profile = {"available": False, "reason": under_run_reason(res.operation, res.volume_size)}
        elif trace_error:
            res.profile = {"available": False, "reason": trace_error}
        else:
            section = os.path.join(sections_dir, f"{op.name}_{ctx.n}") if sections_dir else None
            res.profile = profile_section(prof, env, res, section, path)
    except Exception as exc:  # one failing operation must not lose the others' results
        res.error = f"{type(exc).__name__}: {exc}"
    return res


# ---------------------------------------------------------------------------------------------------------
# Scaling: t = a * n^k fitted by least squares on (log n, log t).


def fit_exponent(sizes: list[float], times: list[float]) -> float | None:
    """Slope k of the least-squares line log t = log a + k log n; None with fewer than 2 distinct sizes."""
    pts = [
        (math.log(n), math.log(t))
        for n, t in zip(sizes, times)
        if n > 0 and t is not None and t > 0
    ]
    if len({x for x, _ in pts}) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    return sxy / sxx


def scaling_table(results: list[Result], sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    for name in dict.fromkeys(r.operation for r in results):
        mine = [r for r in results if r.operation == name]
        by_size = {r.volume_size: r.stats()["median_s"] for r in mine}
        pairs = [(n, by_size.get(n)) for n in sizes if by_size.get(n)]
        rows.append(
            {
                "operation": name,
                "median_s_by_size": {str(n): by_size.get(n) for n in sizes},
                "exponent": fit_exponent([p[0] for p in pairs], [p[1] for p in pairs]),
                # sizes whose timed runs compiled (their median is mostly XLA compile time) and
                # sizes whose operation failed (no median, or one of the runs before it failed)
                "recompiled_sizes": [r.volume_size for r in mine
                                     if (r.timed_compile or {}).get("compilations", 0) > 0],
                "failed_sizes": [r.volume_size for r in mine if r.error],
            }
        )
    return rows


def format_scaling(rows: list[dict[str, Any]], sizes: list[int]) -> str:
    head = (
        f"{'operation':34s}"
        + "".join(f"{'n=' + str(n):>12s}" for n in sizes)
        + f"{'exponent':>10s}"
    )
    lines = [head, "-" * len(head)]
    marks = set()
    for row in rows:
        def cell(n: int) -> str:
            if n in row.get("failed_sizes", ()):
                marks.add("!")
                return "failed!"
            mark = "*" if n in row.get("recompiled_sizes", ()) else ""
            marks.update(mark)
            return _fmt_s(row["median_s_by_size"][str(n)]) + mark
        cells = "".join(f"{cell(n):>12s}" for n in sizes)
        k = row["exponent"]
        lines.append(f"{row['operation']:34s}{cells}{('%.2f' % k) if k is not None else '-':>10s}")
    lines.append(
        "median wall seconds per call; exponent k of t ~ n^k (least squares on log t vs log n; "
        "'-' needs two sizes with a time)"
    )
    if "*" in marks:
        lines.append("* XLA compiled during the timed runs: the median is mostly compile time, and so the exponent")
    if "!" in marks:
        lines.append("! the operation failed at that size (summary.json: its error); the fit leaves it out")
    return "\n".join(lines)


def format_not_run(not_run: list[dict[str, Any]]) -> str:
    """The (operation, size) pairs --max-seconds left out, per size ("" when none)."""
    if not not_run:
        return ""
    by_size: dict[int, list[str]] = {}
    for x in not_run:
        by_size.setdefault(int(x["volume_size"]), []).append(str(x["operation"]))
    lines = [f"not run, the sweep's time limit (--max-seconds): {len(not_run)} (operation, size) pair(s)"]
    lines += [f"  n={n}: {', '.join(ops)}" for n, ops in by_size.items()]
    return "\n" + "\n".join(lines)


def format_trace_facts(results: list[Result]) -> str:
    """Per (operation, size): kernels, GPU kernel time, transfers, peak device memory, top FPGA candidate;
    or, where the traces hold no GPU data, one line saying why."""
    reasons = {
        r.profile.get("reason")
        for r in results
        if r.profile and r.profile.get("available") is False
    }
    if results and all(r.profile.get("available") is False for r in results if r.profile):
        if reasons and all(str(x).startswith("under `fpgaprof run`") for x in reasons):
            # one reason per operation, alike but for its region: said once
            return ("trace facts: not available: under `fpgaprof run` every operation is region "
                    "'<operation>/<size>' of the run's trace: see the run's report")
        return "trace facts: not available: " + "; ".join(sorted(str(x) for x in reasons if x))
    head = (
        f"{'operation':34s}{'n':>5s}{'kernels':>9s}{'GPU s':>10s}{'copies':>8s}{'copy MB':>9s}"
        f"{'peak MB':>9s}{'card x':>8s}  top FPGA candidate"
    )
    lines = ["trace facts (per operation and size, all timed runs)", head, "-" * len(head)]
    for r in results:
        p = r.profile or {}
        if p.get("available") is False or r.error:
            lines.append(
                f"{r.operation:34s}{r.volume_size:5d}  not available: {p.get('reason') or r.error}"
            )
            continue
        k, t, m = (
            p.get("kernels") or {},
            p.get("transfers") or {},
            p.get("peak_device_memory") or {},
        )
        top = ((p.get("fpga") or {}).get("top") or [{}])[0]
        name = top.get("op") or top.get("name") or top.get("hlo_op") or "-"
        whole = (p.get("fpga") or {}).get("operation") or {}
        lines.append(
            f"{r.operation:34s}{r.volume_size:5d}{_n(k.get('count')):>9s}{_n(k.get('total_s'), '.4f'):>10s}"
            f"{_n(t.get('count')):>8s}{_n((t.get('bytes') or 0) / 1e6, '.1f'):>9s}"
            f"{_n((m.get('peak_bytes') or 0) / 1e6 if m.get('peak_bytes') is not None else None, '.1f'):>9s}"
            f"{_n(_finite(whole.get('region_speedup')), '.2f'):>8s}"
            f"  {name}"
        )
    lines.append("card x: the whole operation on the FPGA card (all its HLO ops, data crossing PCIe at "
                 "its jitted calls): GPU time / card time")
    return "\n".join(lines)


def _finite(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def aot_status(res: Result) -> str:
    """'complete' (every jitted function the operation dispatched broken down), 'partial', 'failed'
    (none could be), 'none' (it dispatched no jitted function), 'error' (the operation failed)."""
    if res.error:
        return "error"
    if not res.aot:
        return "failed" if res.aot_note and res.aot_note.startswith("AOT breakdown failed") else "none"
    ok = sum(1 for a in res.aot.values() if not a.get("error"))
    return "complete" if ok == len(res.aot) else "partial" if ok else "failed"


def aot_counts(results: list[Result]) -> dict[str, int]:
    counts = {"complete": 0, "partial": 0, "failed": 0, "none": 0, "error": 0}
    for r in results:
        counts[aot_status(r)] += 1
    return counts


def format_aot(results: list[Result]) -> str:
    """Per (operation, size): the jitted functions its warm-up dispatched, how many the AOT
    breakdown covered, their summed trace/lower/compile seconds, and why where it could not."""
    head = (f"{'operation':34s}{'n':>5s}{'jitted':>8s}{'done':>6s}{'trace s':>9s}{'lower s':>9s}"
            f"{'compile s':>10s}  note")
    lines = ["AOT breakdown (jitted.trace / .lower / .compile of each jitted function the operation "
             "dispatched)", head, "-" * len(head)]
    for r in results:
        if r.error:
            lines.append(f"{r.operation:34s}{r.volume_size:5d}  operation failed: {r.error}")
            continue
        ok = [a for a in r.aot.values() if not a.get("error")]

        def total(key: str) -> str:
            vals = [a[key] for a in ok if isinstance(a.get(key), (int, float))]
            return f"{sum(vals):.3f}" if vals else "-"

        lines.append(
            f"{r.operation:34s}{r.volume_size:5d}{len(r.aot):8d}{len(ok):6d}{total('trace_s'):>9s}"
            f"{total('lower_s'):>9s}{total('compile_s'):>10s}  {r.aot_note or ''}".rstrip()
        )
    c = aot_counts(results)
    lines.append(
        f"broken down completely: {c['complete']}, partly: {c['partial']}, not at all: {c['failed']}, "
        f"nothing jitted to break down: {c['none']}, operation failed: {c['error']} "
        f"(of {len(results)} operation x size)"
    )
    return "\n".join(lines)


def environment_compute_config() -> dict[str, Any]:
    """MBIRJAX's compute configuration per model the sweep built (get_compute_config(), MBIRJAX
    0.7) and whether a Pallas projector kernel was live in any; null with the reason otherwise."""
    configs = {k: c for k, (c, _) in COMPUTE_CONFIGS.items() if c is not None}
    reasons = sorted({r for _, (c, r) in COMPUTE_CONFIGS.items() if c is None and r})
    if not COMPUTE_CONFIGS:
        reasons = ["no operation built an MBIRJAX model (get_compute_config() is a model method)"]
    live = [pallas_live(c) for c in configs.values()]
    return {
        "compute_config": configs or None,
        "compute_config_reason": "; ".join(reasons) or None,
        "pallas_live": (any(live) if any(v is not None for v in live) else None),
        # Per model, which projectors ran and why, in words (projector_path).
        "projectors": {k: projector_path(c, r) for k, (c, r) in COMPUTE_CONFIGS.items()} or None,
    }


def format_offload_ranking(results: list[Result]) -> str:
    """MBIRJAX operations ranked as FPGA offload units: per (operation, size) the region what-if
    of the whole operation (prof.fpga_candidates(by="region")), by what offloading could
    change, then GPU time. Empty when no trace has the what-if."""
    rows = []
    for r in results:
        op = ((r.profile or {}).get("fpga") or {}).get("operation")
        if isinstance(op, dict) and "region_speedup" in op:
            rows.append((r, op))
    if not rows:
        return ""
    target = next((((r.profile or {}).get("fpga") or {}).get("target") for r, _ in rows), None)

    def key(item: tuple) -> tuple:
        # fpgaprof's order: what offloading could change, then GPU time (docs/fpga-model.md, "Ranking")
        return (-(_finite(item[1].get("could_save_ns")) or 0.0), -(_finite(item[1].get("gpu_time_ns")) or 0.0))

    head = (f"{'rank':>4s}  {'operation':34s}{'n':>5s}{'score':>9s}{'card x':>8s}{'workload x':>11s}"
            f"{'modelled':>9s}{'PCIe MB':>9s}  note")
    lines = [f"FPGA offload, whole operations (target {target or '?'}; docs/fpga-model.md, \"Regions\")",
             head, "-" * len(head)]
    for i, (r, op) in enumerate(sorted(rows, key=key), 1):
        share = _finite(op.get("estimated_share"))
        tb = _finite(op.get("transfer_bytes"))
        lines.append(
            f"{i:4d}  {r.operation:34s}{r.volume_size:5d}{_n(_finite(op.get('score')), '.4f'):>9s}"
            f"{_n(_finite(op.get('region_speedup')), '.2f'):>8s}{_n(_finite(op.get('workload_speedup')), '.3f'):>11s}"
            f"{_n(None if share is None else 100 * share, '.0f') + ('%' if share is not None else ''):>9s}"
            f"{_n(None if tb is None else tb / 1e6, '.1f'):>9s}"
            f"  {op.get('estimate_note') or ''}"
        )
    return "\n".join(lines)


def _n(x: Any, fmt: str = "d") -> str:
    if x is None:
        return "-"
    try:
        return format(x, fmt)
    except (TypeError, ValueError):
        return str(x)


def _fmt_s(t: float | None) -> str:
    # four significant digits: a 40 us call is 4e-05s, not 0.0000s
    return "-" if t is None else f"{t:.4g}s"


# ---------------------------------------------------------------------------------------------------------
# Outputs


def environment() -> dict[str, Any]:
    devices = jax.devices()
    return {
        "backend": jax.default_backend(),
        "devices": [str(d) for d in devices],
        "jax_version": jax.__version__,
        "jaxlib_version": _dist_version("jaxlib"),
        "mbirjax_version": getattr(mj, "__version__", None) or _dist_version("mbirjax"),
        "fpgaprof_version": getattr(fpgaprof, "__version__", None),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "gui_modules_stubbed": _STUBBED_GUI,
        "persistent_compilation_cache": jax.config.jax_enable_compilation_cache
        and jax.config.jax_compilation_cache_dir,
    }


def _dist_version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return None


def write_outputs(
    out_dir: str,
    env: dict[str, Any],
    results: list[Result],
    sizes: list[int],
    runs: int,
    scaling_text: str,
    scaling_rows: list[dict[str, Any]],
    answer_from: dict[str, Any] | None = None,
    not_run: list[dict[str, Any]] | None = None,
) -> dict[str, str]:
    """summary.json (the answer first, then the timing schema and the sweep), scaling.csv/.txt
    and report.html in out_dir. not_run: the (operation, size) pairs --max-seconds left out."""
    os.makedirs(out_dir, exist_ok=True)
    measurements = [
        {"operation": r.operation, "volume_size": r.volume_size, "run": i, "time": t}
        for r in results
        for i, t in enumerate(r.times_s)
    ]
    own = sweep_answer(results)
    summary = {
        "answer": own if own.get("available") or answer_from is None else answer_from,
        "environment": env,
        "measurements": measurements,
        "sweep": {
            "schema": "fpgaprof-mbirjax-sweep/1",
            "sizes": sizes,
            "runs": runs,
            "operations": [r.to_json() for r in results],
            "aot_counts": aot_counts(results),
            "scaling": scaling_rows,
            "not_run": not_run or [],
        },
    }
    paths = {
        "summary": os.path.join(out_dir, "summary.json"),
        "scaling_csv": os.path.join(out_dir, "scaling.csv"),
        "scaling_txt": os.path.join(out_dir, "scaling.txt"),
        "html": os.path.join(out_dir, "report.html"),
    }
    _write_atomic(paths["summary"], json.dumps(summary, indent=1, default=str))
    _write_atomic(paths["scaling_txt"], scaling_text + "\n")
    lines = ["operation," + ",".join(f"median_s_n{n}" for n in sizes) + ",exponent,recompiled_sizes,failed_sizes"]
    for row in scaling_rows:
        cells = [row["median_s_by_size"][str(n)] for n in sizes] + [row["exponent"]]
        flags = [" ".join(str(n) for n in row.get(k, ())) for k in ("recompiled_sizes", "failed_sizes")]
        lines.append(row["operation"] + "," + ",".join("" if c is None else repr(c) for c in cells)
                     + "," + ",".join(flags))
    _write_atomic(paths["scaling_csv"], "\n".join(lines) + "\n")
    _write_atomic(paths["html"], render_html(env, results, sizes, runs, scaling_rows, out_dir, answer_from,
                                             not_run))
    return paths


def _write_atomic(path: str, text: str) -> None:
    from fpgaprof.base.atomic import write_text_atomic

    write_text_atomic(path, text)


def sweep_answer(results: list[Result]) -> dict[str, Any]:
    """The answer over the sweep (the reports' `answer`, fpgaprof.report): per operation and
    size the whole operation's row of its own trace (the region "<operation>/<n>"), most GPU
    time first."""
    items: list[dict[str, Any]] = []
    cards: list[str] = []
    rests: list[str] = []
    reasons: list[str] = []
    missing: list[dict[str, Any]] = []  # (operation, size) without a row, and why
    for r in results:
        profile = r.profile or {}
        a = profile.get("answer") or {}
        why = ""
        if r.error:
            why = f"the operation failed: {r.error}"
        elif not a.get("available"):
            why = str(a.get("reason") or profile.get("reason") or "no FPGA answer in its trace")
        else:
            own = [i for i in a.get("items") or [] if i.get("operation") == r.operation]
            if own:
                cards = cards or list(a.get("cards") or [])
                text = (a.get("rests_on") or {}).get("text")
                if text and text not in rests:
                    rests.append(text)
                items.append(dict(max(own, key=lambda i: i.get("gpu_time_s") or 0.0), size=r.volume_size))
                continue
            why = f"no region '{r.operation}/{r.volume_size}' with GPU kernels in its trace"
        reasons.append(why)
        missing.append({"operation": r.operation, "size": r.volume_size, "reason": why})
    if not items:
        return {"available": False, "reason": reasons[0] if reasons else "no trace has an FPGA answer",
                "missing": missing}
    items.sort(key=lambda i: -(i.get("gpu_time_s") or 0.0))
    return {
        "available": True,
        "unit": "region",
        "cards": cards,
        "count": len(items),
        "items": items,
        "items_left_out": 0,
        "missing": missing,
        "rests_on": {"text": " | ".join(rests)},
    }


def load_answer(path: str | None) -> dict[str, Any] | None:
    """The `answer` of another report's summary.json (--answer-from: the bundled GPU trace's),
    with where it came from; None without a path."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
    except (OSError, ValueError) as exc:
        return {"available": False, "reason": f"cannot read {path}: {exc}"}
    a = summary.get("answer") if isinstance(summary, dict) else None
    if not isinstance(a, dict):
        return {"available": False, "reason": f"{path} has no answer (an older fpgaprof wrote it)"}
    a = dict(a)
    a["source_path"] = path
    a["trace"] = ((summary.get("trace") or {}).get("path")) or path
    return _size_from_trace_name(a)


# A bundled trace's name says its geometry and size (tests/data/traces/README.md, "Adding one":
# mbirjax073_parallel_128_pallas_h200.fpgaprof); examples/mbirjax_forward.py's regions before
# they carried "/<size>" ("forward_project", "back_project") name neither.
_TRACE_NAME_RE = re.compile(r"_(?P<geometry>parallel|cone)_(?P<size>\d+)_")


def _size_from_trace_name(a: dict[str, Any]) -> dict[str, Any]:
    """The answer with each row's size (and geometry) from its trace's file name where the rows
    name none, said so in what it rests on; unchanged otherwise."""
    m = _TRACE_NAME_RE.search(os.path.basename(str(a.get("trace") or "")))
    items = [dict(i) for i in a.get("items") or []]
    if not m or not items or any(i.get("size") for i in items):
        return a
    geometry, size = m.group("geometry"), int(m.group("size"))
    for i in items:
        op = str(i.get("operation") or "")
        i["operation"] = op if op.startswith(geometry + "_") else f"{geometry}_{op}"
        i["size"] = size
    rests = dict(a.get("rests_on") or {})
    said = f"size {size}³, {geometry} beam (from the trace's file name)"
    rests["text"] = "; ".join(t for t in (str(rests.get("text") or ""), said) if t)
    return dict(a, items=items, rests_on=rests)


def answer_block_html(results: list[Result], answer_from: dict[str, Any] | None, out_dir: str) -> str:
    """The answer first: this sweep's own (from its GPU traces) or, without a GPU, the bundled
    GPU trace's, linked, with one sentence on what the rest of the page is."""
    import html as h

    try:
        from fpgaprof.report.html import answer_html
    except ImportError:
        return ""
    own = sweep_answer(results)
    if own.get("available") or answer_from is None:
        gone = "".join(f"<li>{h.escape(line.strip())}</li>" for line in missing_lines(own)[1:])
        return (
            "<h2>The answer: FPGA offload per operation and size</h2>"
            + answer_html({"answer": own})
            + (f"<p>No answer for:</p><ul>{gone}</ul>" if gone else "")
        )
    a = dict(answer_from)
    src = str(a.get("source_path") or "")
    rel = os.path.relpath(os.path.join(os.path.dirname(src), "report.html"), out_dir)
    a["lead"] = (
        "No GPU here, so this run cannot answer for this machine. The answer below is from a real GPU "
        f"trace bundled with fpgaprof ({os.path.basename(str(a.get('trace')))}), every report regenerated "
        "from it by this demo."
    )
    a["see"] = {"href": rel, "text": "the bundled GPU trace's full report",
                "note": "kernels, roofline, FPGA candidates, dataflow graphs"}
    return (
        "<h2>The answer: FPGA offload per operation and size (bundled GPU trace)</h2>"
        + answer_html({"answer": a})
        + "<p><b>The rest of this page is the CPU part</b>: what this machine measured of MBIRJAX on its "
        "CPU (wall times, compilations, the AOT breakdown, XLA's cost analysis); kernel-level results "
        "need an NVIDIA GPU.</p>"
    )


def missing_lines(answer: dict[str, Any]) -> list[str]:
    """The (operation, size) pairs the sweep's answer has no row for, each with why."""
    gone = answer.get("missing") or []
    if not gone:
        return []
    return [f"  no answer for {len(gone)} operation(s) and size(s):"] + [
        f"    {m['operation']} {m['size']}³: {m['reason']}" for m in gone
    ]


def answer_text(results: list[Result], answer_from: dict[str, Any] | None) -> str:
    """The answer as the terminal shows it last (fpgaprof.report.digest.answer_lines)."""
    try:
        from fpgaprof.report.digest import answer_lines
    except ImportError:
        return ""
    own = sweep_answer(results)
    if own.get("available"):
        return "\n".join(answer_lines({"answer": own}, top=10) + missing_lines(own))
    if answer_from is None:
        return ""
    head = (f"From the bundled GPU trace {os.path.basename(str(answer_from.get('trace')))} "
            "(not this machine: no GPU here):")
    return "\n".join([head] + answer_lines({"answer": answer_from}, top=10))


def render_html(
    env: dict[str, Any],
    results: list[Result],
    sizes: list[int],
    runs: int,
    scaling_rows: list[dict[str, Any]],
    out_dir: str,
    answer_from: dict[str, Any] | None = None,
    not_run: list[dict[str, Any]] | None = None,
) -> str:
    """The sweep's own page: environment, scaling table, then one section per (operation, size) with its
    timings, compilations, AOT breakdown and trace facts, linking to that section's full fpgaprof report."""
    import html as h

    def e(x: Any) -> str:
        return h.escape("" if x is None else str(x), quote=True)

    def num(x: Any, fmt: str = "{:.4g}") -> str:
        return "–" if x is None else (fmt.format(x) if isinstance(x, (int, float)) else e(x))

    def table(headers: list[str], rows: list[list[str]]) -> str:
        return (
            "<table><tr>"
            + "".join(f"<th>{e(x)}</th>" for x in headers)
            + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
            + "</table>"
        )

    def facts(sec: Any) -> str:
        if not isinstance(sec, dict):
            return "–"
        if sec.get("available") is False:
            return f'<span class="na">not available: {e(sec.get("reason"))}</span>'
        shown = {k: v for k, v in sec.items() if k not in ("available", "top")}
        return e(json.dumps(shown, default=str)[:400])

    parts = [
        f"<h1>MBIRJAX sweep: {len({r.operation for r in results})} operations × {len(sizes)} size(s)</h1>",
        answer_block_html(results, answer_from, out_dir),
        f'<p class="dim">backend {e(env.get("backend"))} · devices {e(", ".join(env.get("devices", [])))}'
        f' · jax {e(env.get("jax_version"))} · mbirjax {e(env.get("mbirjax_version"))} · fpgaprof '
        f'{e(env.get("fpgaprof_version"))} · sizes {e(sizes)} · {runs} timed run(s) after a warm-up</p>',
    ]
    live = env.get("pallas_live")
    configs = env.get("compute_config") or {}
    projectors = env.get("projectors") or {}
    if configs:
        # One sentence per distinct answer, with the models it covers.
        by_text: dict[str, list[str]] = {}
        for k, text in projectors.items():
            by_text.setdefault(str(text), []).append(str(k))
        parts.append(
            "<p>MBIRJAX projector kernels: "
            + ("<b>Pallas live</b>" if live else "XLA (Pallas not live)" if live is False else "?")
            + " · "
            + e("; ".join(f"{text} ({', '.join(keys)})" for text, keys in by_text.items()))
            + "</p>"
        )
    elif env.get("compute_config_reason"):
        parts.append(f'<p class="dim">MBIRJAX compute config: not available: '
                     f'{e(env.get("compute_config_reason"))}</p>')
    if not_run:
        parts.append('<p class="na">' + e(format_not_run(not_run).strip()).replace("\n", "<br>") + "</p>")
    page_reason = NO_GPU_REASON.format(backend=env.get("backend"))
    if env.get("backend") != "gpu":
        parts.append('<p class="na">' + e(page_reason) + " (said once here, for every operation below)</p>")
    parts.append(
        "<h2 id='scaling'>Scaling (median seconds; t ~ n<sup>k</sup>, least squares on log t vs log n)"
        "</h2>"
    )
    parts.append(
        table(
            ["operation"] + [f"n={n}" for n in sizes] + ["k"],
            [
                [f'<a href="#{e(r["operation"])}">{e(r["operation"])}</a>']
                + [num(r["median_s_by_size"][str(n)]) for n in sizes]
                + [num(r["exponent"], "{:.2f}")]
                for r in scaling_rows
            ],
        )
    )
    parts.append("<h2>Per operation and size</h2>")
    seen_ops: set[str] = set()
    for r in results:
        anchor = "" if r.operation in seen_ops else f' id="{e(r.operation)}"'
        seen_ops.add(r.operation)
        s = r.stats()
        parts.append(f"<section{anchor}><h3>{e(r.operation)} · n={r.volume_size}</h3>")
        if r.error:
            parts.append(f'<p class="err">error: {e(r.error)}</p></section>')
            continue
        flag = r.timed_compile.get("compilations", 0)
        parts.append(
            f"<p>median {num(s['median_s'])} s · min {num(s['min_s'])} s · max {num(s['max_s'])} s · "
            f"runs {len(r.times_s)} · warm-up {num(r.warmup_s)} s with "
            f"{r.warmup_compile.get('compilations', 0)} compilations "
            f"({num(r.warmup_compile.get('compile_s'))} s compiling) · "
            + (
                f'<span class="err">{flag} compilation(s) during the timed runs: '
                f'{e(", ".join(r.timed_compile.get("compiled_functions", [])))}</span>'
                if flag
                else '<span class="ok">no compilation during the timed runs</span>'
            )
            + "</p>"
        )
        if r.aot:
            parts.append(
                table(
                    [
                        "jitted function",
                        "trace s",
                        "lower s",
                        "compile s",
                        "execute s",
                        "calls per op",
                        "XLA flops",
                        "XLA bytes accessed",
                        "note",
                    ],
                    [
                        [
                            f'<span title="{e(a.get("function"))}">{e(n)}</span>',
                            num(a.get("trace_s")),
                            num(a.get("lower_s")),
                            num(a.get("compile_s")),
                            num(a.get("execute_s")),
                            num(a.get("calls_per_operation")),
                            num((a.get("cost_analysis") or {}).get("flops")),
                            num((a.get("cost_analysis") or {}).get("bytes accessed")),
                            f'<span class="err">{e(a["error"])}</span>' if a.get("error")
                            else e(a.get("execute_note") or (
                                f"measured in {a['measured_in']}"
                                if a.get("measured_in") not in (None, r.operation) else "")),
                        ]
                        for n, a in r.aot.items()
                    ],
                )
            )
        if r.aot_note:
            cls = "dim" if aot_status(r) == "none" else "na"
            parts.append(f'<p class="{cls}">AOT breakdown: {e(r.aot_note)}</p>')
        p = r.profile or {}
        keys = ("kernels", "transfers", "peak_device_memory", "roofline", "fpga")
        secs = [p.get(k) for k in keys]
        if p.get("available") is False:
            # No trace data for this operation: why, said once (each section would repeat it in
            # its own words), and not at all when it is the page's own no-GPU note.
            if str(p.get("reason")) != page_reason:
                parts.append(f'<p class="na">from the trace: not available: {e(p.get("reason"))}</p>')
        else:
            parts.append(table(["from the trace", ""], [[e(k), facts(x)] for k, x in zip(keys, secs)]))
        if p.get("report_dir"):
            rel = os.path.relpath(os.path.join(p["report_dir"], "report.html"), out_dir)
            parts.append(f'<p><a href="{e(rel)}">full fpgaprof report for this section</a></p>')
        parts.append("</section>")
    css = (
        "body{font:14px/1.45 system-ui,sans-serif;max-width:1100px;margin:0 auto;padding:16px 24px}"
        "table{border-collapse:collapse;margin:6px 0}th,td{border-bottom:1px solid #e3e3e8;padding:3px 8px;"
        "text-align:left;font-size:13px;vertical-align:top}.dim{color:#6b6b70}.na{color:#8a5a00}"
        ".err{color:#b00020}.ok{color:#1a7f37}h3{margin:18px 0 4px}"
        # the answer block's (fpgaprof.report.html.answer_html) verdict colours and lead line
        ".v-gain{color:#1a7f37;font-weight:600}.v-restr{color:#9a6700;font-weight:600}"
        ".v-no{color:#8a1f11;font-weight:600}.v-unk{color:#6b6b70;font-weight:600}"
        ".lead{font-size:16px;font-weight:600}.see{font-size:15px}td.num{text-align:right}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>MBIRJAX sweep</title>'
        f"<style>{css}</style></head><body>" + "\n".join(parts) + "</body></html>\n"
    )


# ---------------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="operations: " + ", ".join(OPERATIONS),
    )
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[32, 64, 128, 256],
        help="volume edge sizes n (n x n x n volume, n views, n x n detector)",
    )
    p.add_argument(
        "--runs", type=int, default=3, help="timed runs per operation and size, after a warm-up"
    )
    p.add_argument(
        "--operations",
        nargs="+",
        default=list(OPERATIONS),
        metavar="OP",
        help="subset of operations (default: all)",
    )
    p.add_argument("--output", default="mbirjax_sweep_out", help="output directory")
    p.add_argument(
        "--save-traces", action="store_true", help="also write one .fpgaprof trace per op and size"
    )
    p.add_argument(
        "--persistent-cache",
        action="store_true",
        help="keep MBIRJAX's persistent compilation cache (0.6: /tmp/jax_cache, 0.7: "
        "~/.mbirjax/jax_cache); off by default so that warm-up compile times are real compiles",
    )
    p.add_argument(
        "--no-aot",
        action="store_true",
        help="skip the AOT breakdown (it clears JAX's caches and compiles each jitted function an "
        "operation dispatches once more per argument signature)",
    )
    p.add_argument(
        "--no-section-reports",
        action="store_true",
        help="skip the full fpgaprof report (summary.json, report.html) per operation and size",
    )
    p.add_argument(
        "--answer-from",
        metavar="SUMMARY_JSON",
        help="without a GPU: show this report's answer (the summary.json of `fpgaprof report` of a GPU "
        "trace) first, linked, in place of this sweep's own",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        default=0.0,
        help="time limit of the sweep: no (operation, size) starts after it, or when the time left "
        "is less than the longest one at that size took; those are listed as not run (summary.json "
        "sweep.not_run) and the outputs are written as usual (0: no limit)",
    )
    p.add_argument("--list-operations", action="store_true", help="print the operations and exit")
    args = p.parse_args(argv)
    unknown = [o for o in args.operations if o not in OPERATIONS]
    if unknown:
        p.error(f"unknown operation(s) {unknown}; use --list-operations")
    if args.runs < 1 or any(n < 8 for n in args.sizes):
        p.error("--runs must be >= 1 and sizes >= 8")
    if not math.isfinite(args.max_seconds) or args.max_seconds < 0:
        p.error("--max-seconds must be a finite number >= 0 (0: no limit)")
    return args


def time_limit_reason(max_seconds: float, elapsed: float, longest_at_size: float | None, n: int) -> str | None:
    """Why the next (operation, size) is not started under --max-seconds, or None to start it. The
    first one at each size always starts while time is left: nothing says yet how long it takes."""
    if max_seconds <= 0:
        return None
    left = max_seconds - elapsed
    if left <= 0:
        return f"the --max-seconds {max_seconds:g} s limit had passed"
    if longest_at_size is not None and left < longest_at_size:
        return (f"the --max-seconds {max_seconds:g} s limit: {left:.0f} s left, less than the longest "
                f"operation at n={n} so far ({longest_at_size:.0f} s)")
    return None


def print_result_line(res: Result, aot: bool) -> None:
    n, name = res.volume_size, res.operation
    if res.error:
        print(f"  n={n:<4d} {name:34s} ERROR {res.error}", flush=True)
        return
    s = res.stats()
    flag = (
        f"  RECOMPILED {res.timed_compile['compilations']}x during timed runs"
        if res.timed_compile.get("compilations")
        else ""
    )
    done = sum(1 for a in res.aot.values() if not a.get("error"))
    aot_part = f"  AOT {done}/{len(res.aot)}" if aot else ""
    print(
        f"  n={n:<4d} {name:34s} median {s['median_s']:.4f}s  min {s['min_s']:.4f}s  "
        f"max {s['max_s']:.4f}s  warm-up {res.warmup_s:.2f}s "
        f"({res.warmup_compile.get('compilations', 0)} compiles){aot_part}{flag}",
        flush=True,
    )
    if aot and res.aot_note and res.aot:  # a failed breakdown says why, on its own line
        print(f"         AOT: {res.aot_note}", flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list_operations:
        for op in OPERATIONS.values():
            print(f"{op.name:34s} {op.description}")
        return 0
    if not args.persistent_cache:
        jax.config.update("jax_enable_compilation_cache", False)
    backend = jax.default_backend()
    print(
        f"fpgaprof {getattr(fpgaprof, '__version__', '?')}, jax {jax.__version__} ({backend}: "
        f"{', '.join(str(d) for d in jax.devices())}), mbirjax {_dist_version('mbirjax')}"
    )
    if backend != "gpu":
        print(
            "NOTE: no GPU: wall times, compile counts and XLA cost analysis are measured; kernel tracing "
            "(kernels, transfers, device memory, roofline, FPGA ranking) needs an NVIDIA GPU with CUPTI."
        )
        # The same fact, once per trace otherwise; each section's "warnings" keeps fpgaprof's wording.
        warnings.filterwarnings("ignore", message="fpgaprof.trace: no GPU activity")
    os.makedirs(args.output, exist_ok=True)
    log_dir = os.path.join(args.output, "logs")
    os.makedirs(log_dir, exist_ok=True)
    trace_dir = os.path.join(args.output, "traces") if args.save_traces else None
    if trace_dir:
        os.makedirs(trace_dir, exist_ok=True)
    sections_dir = None if args.no_section_reports else os.path.join(args.output, "sections")
    monitor = CompileMonitor.install()
    env = environment()

    results: list[Result] = []
    not_run: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    with JIT_CALLS.patched():  # jax.jit hands out recording wrappers (models, per-call closures)
        for n in args.sizes:
            ctx = SizeContext(n, log_dir)
            aot_cache: dict[tuple, dict[str, Any]] | None = None if args.no_aot else {}
            longest: float | None = None
            for name in args.operations:
                why = time_limit_reason(args.max_seconds, time.perf_counter() - t_start, longest, n)
                if why:
                    not_run.append({"operation": name, "volume_size": n, "reason": why})
                    print(f"  n={n:<4d} {name}: not run ({why})", flush=True)
                    continue
                t_op = time.perf_counter()
                res = measure(
                    OPERATIONS[name], ctx, args.runs, monitor, aot_cache, env, trace_dir,
                    sections_dir,
                )
                longest = max(longest or 0.0, time.perf_counter() - t_op)
                results.append(res)
                print_result_line(res, aot=not args.no_aot)
            for label, (config, reason) in COMPUTE_CONFIGS.items():
                if label.endswith(f"/{n}"):
                    print(f"  n={n:<4d} {compute_config_line(label, config, reason)}")
            del ctx, aot_cache

    print("\n" + format_trace_facts(results))
    rows = scaling_table(results, args.sizes)
    text = format_scaling(rows, args.sizes) + format_not_run(not_run)
    print("\n" + text)
    aot_text = format_aot(results) if not args.no_aot else "AOT breakdown: skipped (--no-aot)"
    print("\n" + aot_text)
    text += "\n\n" + aot_text
    ranking = format_offload_ranking(results)
    if ranking:
        print("\n" + ranking)
        text += "\n\n" + ranking
    env.update(environment_compute_config())
    answer_from = load_answer(args.answer_from)
    paths = write_outputs(args.output, env, results, args.sizes, args.runs, text, rows, answer_from,
                          not_run)
    print(f"\nwrote {', '.join(paths.values())} in {time.perf_counter() - t_start:.1f}s")
    answer = answer_text(results, answer_from)
    if answer:
        print("\n" + answer)
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
