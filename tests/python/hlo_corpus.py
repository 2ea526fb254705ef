"""Corpus of real JAX programs for validating fpgaprof.hlo against XLA's own cost analysis.

Each entry is a CorpusProgram: a jitted function plus example arguments. `build_corpus()`
compiles every program on the current backend (CPU in CI) and returns, per program, the
post-optimization HLO text and `compiled.cost_analysis()`. Used by tests/python/test_hlo_corpus.py
and tests/python/make_hlo_table.py (which writes docs/hlo-validation.md).

The operations below are written one per line on purpose: the attribution check requires that
each instruction's source line points into this file, inside the program's function.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import warnings
from typing import Any, Callable

import numpy as np

# Keep XLA's CPU client to one device: multi-device sharding is not what this corpus checks.
os.environ.setdefault("MBIRJAX_NUM_CPU_DEVICES", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402


@dataclasses.dataclass
class CorpusProgram:
    name: str
    fn: Callable[..., Any]  # a jax.jit-able function (or an already jitted one)
    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    source: str = "corpus"  # "corpus": ops written in this file; "mbirjax": ops in mbirjax
    line_range: tuple[int, int] | None = None  # lines of the defining function in this file


@dataclasses.dataclass
class CompiledProgram:
    program: CorpusProgram
    hlo_text: str
    xla_cost: dict


def _f32(*shape, seed=0):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32))


# ---- plain JAX programs ------------------------------------------------------------------------

def elementwise_chain(x, y):
    a = x * y
    b = a + 3.0
    c = b / (y + 1.5)
    return jnp.maximum(c, 0.0) - jnp.abs(x)


def transcendental_chain(x):
    a = jnp.exp(x)
    b = jnp.log1p(jnp.abs(a))
    c = jnp.tanh(b)
    return jax.nn.sigmoid(c) + jnp.sqrt(jnp.abs(x))


def sum_reduction(x):
    return jnp.sum(x, axis=1)


def max_reduction(x):
    return jnp.max(x, axis=(0, 2))


def mean_var(x):
    m = jnp.mean(x, axis=0)
    v = jnp.var(x, axis=0)
    return m, v


def matmul(a, b):
    return a @ b


def batched_einsum(a, b):
    return jnp.einsum("bij,bjk->bik", a, b)


def matvec_bias(w, x, b):
    y = w @ x
    return jnp.tanh(y + b)


def conv2d(img, ker):
    return lax.conv_general_dilated(img, ker, window_strides=(1, 1), padding="SAME",
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


def conv1d_strided(x, k):
    return lax.conv_general_dilated(x, k, window_strides=(2,), padding=((1, 1),),
                                    dimension_numbers=("NCH", "OIH", "NCH"))


def depthwise_conv(x, k):
    return lax.conv_general_dilated(x, k, window_strides=(1, 1), padding="VALID",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    feature_group_count=8)


def fft_c2c(x):
    z = jnp.fft.fft(x.astype(jnp.complex64))
    return jnp.abs(z)


def fft_rfft2(x):
    f = jnp.fft.rfft2(x)
    g = f * 0.5
    return jnp.fft.irfft2(g, s=x.shape)


def scatter_add(x, idx, upd):
    return x.at[idx].add(upd)


def gather_take(x, idx):
    return jnp.take(x, idx, axis=0)


def sort_values(x):
    return jnp.sort(x, axis=-1)


def argsort_values(x):
    return jnp.argsort(x)


def cumsum(x):
    return jnp.cumsum(x, axis=0)


def fori_loop(x):
    return lax.fori_loop(0, 8, lambda i, v: v * 0.5 + jnp.sin(v), x)


def while_loop(x):
    def cond(c):
        return c[0] < 100.0

    def body(c):
        return (c[0] * 2.0 + 1.0, c[1] + 1)

    return lax.while_loop(cond, body, (jnp.sum(x), 0))


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def dynamic_slices(x, i):
    s = lax.dynamic_slice(x, (i, 0), (4, x.shape[1]))
    t = s * 2.0
    return lax.dynamic_update_slice(x, t, (i + 1, 0))


def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")


def transpose_reshape(x):
    y = jnp.transpose(x, (2, 0, 1))
    z = y.reshape(y.shape[0], -1)
    return z * 2.0


def concat_pad(x, y):
    c = jnp.concatenate([x, y], axis=0)
    return jnp.pad(c, ((1, 2), (3, 0))) + 1.0


def cond_branches(x, p):
    return lax.cond(p > 0, lambda v: jnp.exp(v), lambda v: v * 3.0, x)


def where_clip(x, y):
    m = x > y
    s = jnp.where(m, x, y)
    return jnp.clip(s, -0.5, 0.5)


def integer_ops(a, b):
    c = a * b + 7
    d = jnp.right_shift(c, 2)
    return jnp.bitwise_xor(d, a) % 13


def top_k(x):
    return lax.top_k(x, 5)


def scan_cumprod(x):
    def step(carry, v):
        carry = carry * v + 1.0
        return carry, carry

    return lax.scan(step, jnp.zeros(x.shape[1:]), x)


def logsumexp_grad(x):
    return jax.grad(lambda v: jax.nn.logsumexp(v * v))(x)


def mixed_precision(x, w):
    y = x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)
    return y.astype(jnp.float32) * 0.25


def _line_range(fn):
    lines, start = inspect.getsourcelines(fn)
    return start, start + len(lines) - 1


def plain_programs() -> list[CorpusProgram]:
    def i32(*s):
        return jnp.asarray(np.random.default_rng(1).integers(0, 100, s), dtype=jnp.int32)

    progs = [
        ("elementwise_chain", elementwise_chain, (_f32(256, 128), _f32(256, 128, seed=1))),
        ("transcendental_chain", transcendental_chain, (_f32(512, 64),)),
        ("sum_reduction", sum_reduction, (_f32(128, 256),)),
        ("max_reduction", max_reduction, (_f32(16, 32, 64),)),
        ("mean_var", mean_var, (_f32(200, 50),)),
        ("matmul", matmul, (_f32(128, 64), _f32(64, 96))),
        ("batched_einsum", batched_einsum, (_f32(4, 32, 16), _f32(4, 16, 24))),
        ("matvec_bias", matvec_bias, (_f32(256, 128), _f32(128), _f32(256))),
        ("conv2d", conv2d, (_f32(2, 3, 32, 32), _f32(8, 3, 3, 3))),
        ("conv1d_strided", conv1d_strided, (_f32(4, 2, 64), _f32(6, 2, 5))),
        ("depthwise_conv", depthwise_conv, (_f32(1, 16, 16, 8), _f32(3, 3, 1, 8))),
        ("fft_c2c", fft_c2c, (_f32(16, 256),)),
        ("fft_rfft2", fft_rfft2, (_f32(64, 64),)),
        ("scatter_add", scatter_add, (_f32(100, 8), jnp.asarray([3, 7, 7, 50, 99]), _f32(5, 8))),
        ("gather_take", gather_take, (_f32(300, 16), jnp.asarray(np.arange(0, 300, 7)))),
        ("sort", sort_values, (_f32(64, 128),)),
        ("argsort", argsort_values, (_f32(1000),)),
        ("cumsum", cumsum, (_f32(512, 16),)),
        ("fori_loop", fori_loop, (_f32(1024),)),
        ("while_loop", while_loop, (_f32(64),)),
        ("softmax", softmax, (_f32(64, 100),)),
        ("dynamic_slices", dynamic_slices, (_f32(32, 16), jnp.int32(3))),
        ("max_pool", max_pool, (_f32(2, 16, 16, 4),)),
        ("transpose_reshape", transpose_reshape, (_f32(8, 16, 32),)),
        ("concat_pad", concat_pad, (_f32(10, 20), _f32(5, 20))),
        ("cond_branches", cond_branches, (_f32(128), jnp.float32(1.0))),
        ("where_clip", where_clip, (_f32(300, 3), _f32(300, 3, seed=2))),
        ("integer_ops", integer_ops, (i32(64, 64), i32(64, 64))),
        ("top_k", top_k, (_f32(8, 100),)),
        ("scan_cumprod", scan_cumprod, (_f32(16, 32),)),
        ("logsumexp_grad", logsumexp_grad, (_f32(4, 50),)),
        ("mixed_precision", mixed_precision, (_f32(32, 64), _f32(64, 16))),
    ]
    return [CorpusProgram(n, f, a, line_range=_line_range(f)) for n, f, a in progs]


# ---- MBIRJAX ------------------------------------------------------------------------------------

from _jit_recorder import JitRecorder as _JitRecorder  # noqa: E402


_RECORDER: _JitRecorder | None = None


def _import_mbirjax():
    """Imports mbirjax headless (its viewer wants Tk/easygui) with the jit recorder installed."""
    global _RECORDER
    import sys
    if "mbirjax" in sys.modules and _RECORDER is not None:
        return sys.modules["mbirjax"], _RECORDER
    # The functions mbirjax jits when its modules load are recorded only if this import runs
    # them: an mbirjax that another test (in this process) imported first is imported anew.
    # Whoever holds the earlier modules keeps them.
    for name in [m for m in sys.modules if m == "mbirjax" or m.startswith("mbirjax.")]:
        del sys.modules[name]
    os.environ.setdefault("MPLBACKEND", "Agg")
    recorder = _JitRecorder()
    real_jit = jax.jit
    jax.jit = recorder.wrap_jit(real_jit)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import mbirjax as mj
    finally:
        jax.jit = real_jit
    # mbirjax turns on JAX's persistent compilation cache; a cached executable keeps the
    # metadata of the run that compiled it, so the attribution check would see stale lines.
    jax.config.update("jax_enable_compilation_cache", False)
    recorder.real_jit = real_jit
    _RECORDER = recorder
    return mj, recorder


def _mbirjax_capture(mj, recorder, label, run, limit=2):
    """Runs `run()` (a public mbirjax call) and returns programs for the first `limit` distinct
    jitted functions it called."""
    start = len(recorder.calls)
    # mbirjax also jits functions at model construction and inside calls: record those too.
    jax.jit = recorder.wrap_jit(recorder.real_jit)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run()
    finally:
        jax.jit = recorder.real_jit
    out, seen_fns = [], set()
    for jitted, args, kwargs in recorder.calls[start:]:
        if id(jitted) in seen_fns:
            continue
        seen_fns.add(id(jitted))
        name = f"mbirjax_{label}_{getattr(jitted, '__name__', 'fn')}"
        out.append(CorpusProgram(name, jitted, args, kwargs, source="mbirjax"))
        if len(out) >= limit:
            break
    return out


def mbirjax_programs() -> list[CorpusProgram]:
    mj, rec = _import_mbirjax()
    progs: list[CorpusProgram] = []
    views, rows, channels = 8, 4, 16
    angles = np.linspace(0, np.pi, views, endpoint=False)
    jax.jit = rec.wrap_jit(rec.real_jit)
    try:
        pm = mj.ParallelBeamModel((views, rows, channels), angles)
        cone_angles = np.linspace(0, 2 * np.pi, views, endpoint=False)
        cm = mj.ConeBeamModel((views, rows, channels), cone_angles,
                              source_detector_dist=64.0, source_iso_dist=32.0)
        denoiser = mj.QGGMRFDenoiser((8, 8, 4))
    finally:
        jax.jit = rec.real_jit
    phantom = _f32(*pm.get_params("recon_shape"), seed=3)
    sino = {}
    progs += _mbirjax_capture(mj, rec, "parallel_forward",
                              lambda: sino.setdefault("p", pm.forward_project(phantom)))
    progs += _mbirjax_capture(mj, rec, "parallel_back", lambda: pm.back_project(sino["p"]))
    progs += _mbirjax_capture(mj, rec, "parallel_fbp_filter", lambda: pm.fbp_filter(sino["p"]))

    cphantom = _f32(*cm.get_params("recon_shape"), seed=4)
    progs += _mbirjax_capture(mj, rec, "cone_forward",
                              lambda: sino.setdefault("c", cm.forward_project(cphantom)))
    progs += _mbirjax_capture(mj, rec, "cone_back", lambda: cm.back_project(sino["c"]))
    progs += _mbirjax_capture(mj, rec, "cone_fdk_filter", lambda: cm.fdk_filter(sino["c"]))
    # median_filter3d is not jitted itself (a lax.map over blocks): lower the public call. On
    # MBIRJAX 0.7 it cannot be jitted as a whole (it reads x.addressable_shards, which a tracer
    # refuses): it runs eagerly, lax.map compiling its block filter, and is left out here.
    volume = _f32(8, 8, 8, seed=5)
    try:
        jax.jit(mj.median_filter3d).trace(volume)
    except jax.errors.ConcretizationTypeError:
        pass
    else:
        progs.append(CorpusProgram("mbirjax_median_filter3d",
                                   functools.partial(mj.median_filter3d), (volume,),
                                   source="mbirjax"))
    progs += _mbirjax_capture(
        mj, rec, "qggmrf_denoise",
        lambda: denoiser.denoise(_f32(8, 8, 4, seed=6), sigma_noise=0.1, max_iterations=2,
                                 print_logs=False, logfile_path=os.devnull))
    return progs


def all_programs(include_mbirjax: bool = True) -> list[CorpusProgram]:
    progs = plain_programs()
    if include_mbirjax:
        progs += mbirjax_programs()
    return progs


def compile_program(p: CorpusProgram) -> CompiledProgram:
    fn = p.fn if hasattr(p.fn, "lower") else jax.jit(p.fn)
    compiled = fn.lower(*p.args, **p.kwargs).compile()
    cost = compiled.cost_analysis()
    if isinstance(cost, (list, tuple)):
        cost = cost[0] if cost else {}
    return CompiledProgram(p, compiled.as_text(), dict(cost or {}))


def build_corpus(include_mbirjax: bool = True) -> list[CompiledProgram]:
    return [compile_program(p) for p in all_programs(include_mbirjax)]


CORPUS_FILE = os.path.abspath(__file__)
