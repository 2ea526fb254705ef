"""Pallas kernels on the Mosaic GPU backend (`jax.experimental.pallas.mosaic_gpu`): the HLO comes
from JAX itself, lowering a Pallas Mosaic GPU kernel for CUDA on this CPU machine
(`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`, as tests/python/test_custom_kernels.py
does for the Triton backend). What JAX 0.10.1 and 0.10.2 emit
(jax/experimental/mosaic/gpu/core.py, _mosaic_gpu_lowering_rule): a typed-FFI custom call `mosaic_gpu_v2` whose backend_config holds
`kernel_hash` and `module`, the kernel's MLIR bytecode; the lowering drops both
pallas_call(cost_estimate=...) (jax/_src/pallas/mosaic_gpu/lowering.py: `del cost_estimate`) and
pallas_call(metadata=...) (pallas_call_registration.py: `del metadata, name`), so the call has no
author's figures and stays a custom call without a cost rule: a labelled lower bound. Its GPU
kernel runs as `<name>_mosaic_gpu_kernel` (the host function `<name>_mosaic_gpu` in the module,
outlined by MLIR's gpu-kernel-outlining), by which it is attributed (docs/cost-model.md,
"Custom kernels")."""
import inspect
import math

import fpgaprof  # noqa: F401  (before jax)
import pytest
from fpgaprof import fpga, roofline
from fpgaprof.base.core import core
from _store_builder import store_from_lists

jax = pytest.importorskip("jax")
jnp = jax.numpy
pl = pytest.importorskip("jax.experimental.pallas")
plgpu = pytest.importorskip("jax.experimental.pallas.mosaic_gpu")

# pallas_call on Mosaic GPU is deprecated in favour of plgpu.kernel; both are tested
pytestmark = pytest.mark.filterwarnings("ignore:Using ``pl.pallas_call`` for Mosaic GPU:DeprecationWarning")

N = 4096
DEVICE = {"name": "test-gpu", "cc_major": 9, "cc_minor": 0, "sm_count": 132, "core_clock_khz": 1_755_000,
          "memory_clock_khz": 2_619_000, "memory_bus_width_bits": 5120, "pcie_generation": 5, "pcie_link_width": 16}


def scaled_add(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...] * 2.0


def _hlo(**kwargs):
    """HLO of x + 2 y as one Pallas Mosaic GPU kernel over 16 blocks of 256 f32."""
    def f(x, y):
        return pl.pallas_call(scaled_add, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(N // 256,),
                              in_specs=[pl.BlockSpec((256,), lambda i: (i,))] * 2,
                              out_specs=pl.BlockSpec((256,), lambda i: (i,)),
                              compiler_params=plgpu.CompilerParams(), **kwargs)(x, y)

    x = jax.ShapeDtypeStruct((N,), jnp.float32)
    try:
        return jax.jit(f).trace(x, x).lower(lowering_platforms=("cuda",)).as_text(dialect="hlo")
    except Exception as e:  # noqa: BLE001 - this JAX cannot lower Mosaic GPU for CUDA here
        pytest.skip(f"this JAX cannot lower a Pallas Mosaic GPU kernel for CUDA on a CPU machine: {e}")


def _hlo_kernel(**kwargs):
    """The same kernel through plgpu.kernel (the API JAX recommends over pallas_call for Mosaic
    GPU): whole arrays as refs, one block; the custom call is named mpmd_map. JAX 0.10.1 passes
    the output buffer as a third operand, an uninitialised AllocateBuffer aliased to the result
    (output_to_operand_aliasing={{}: (2, {})}): nothing read from it."""
    params = inspect.signature(plgpu.kernel).parameters
    if "kernel_name" in kwargs and "kernel_name" not in params:
        pytest.skip("this JAX's plgpu.kernel takes no kernel_name")
    out = "out_type" if "out_type" in params else "out_shape"  # out_shape up to JAX 0.10.1

    def f(x, y):
        return plgpu.kernel(scaled_add, **{out: jax.ShapeDtypeStruct(x.shape, x.dtype)}, **kwargs)(x, y)

    x = jax.ShapeDtypeStruct((256,), jnp.float32)
    try:
        return jax.jit(f).trace(x, x).lower(lowering_platforms=("cuda",)).as_text(dialect="hlo")
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"this JAX cannot lower a plgpu.kernel for CUDA on a CPU machine: {e}")


def _store(text, kernel):
    # two launches of the kernel, 20 us each; the program 1 ms; no XLA thunk ranges
    return store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": kernel, "start_ns": t, "end_ns": t + 20_000, "grid": 16} for t in (0, 100_000)],
        "hlo_modules": [{"name": "jit_f", "text": text}],
        "start_ns": 0, "end_ns": 1_000_000,
    })


def test_the_hlo_is_a_mosaic_gpu_custom_call_without_a_cost_rule():
    ins = fpgaprof.hlo.analyze(_hlo()).instruction("pallas_call.1")
    assert ins.opcode == "custom-call" and ins.custom_call_target == "mosaic_gpu_v2"
    assert ins.unknown_cost is True and ins.cost_from_author is False
    assert ins.pattern == "library_call"
    # no rule: operands and result, 3 x 4096 x 4 B, as a lower bound; FLOPs unknown
    assert (ins.bytes_read, ins.bytes_written, ins.flops) == (2 * N * 4, N * 4, 0)


def test_the_authors_figures_do_not_reach_the_hlo():
    """cost_estimate and metadata both given: JAX's Mosaic GPU lowering drops them, so the
    call keeps no author's figures (unlike Triton, whose lowering keeps metadata)."""
    text = _hlo(cost_estimate=pl.CostEstimate(flops=2 * N, transcendentals=0, bytes_accessed=12 * N),
                metadata={"flops": str(2 * N), "bytes_accessed": str(12 * N)})
    ins = fpgaprof.hlo.analyze(text).instruction("pallas_call.1")
    assert ins.unknown_cost is True and ins.cost_from_author is False and ins.flops == 0


@pytest.mark.parametrize("name", [None, "named_call"])
def test_kernels_are_attributed_by_the_kernel_name_and_get_a_labelled_lower_bound(name):
    # the kernel is named after the kernel function, or after pallas_call(name=...)
    text = _hlo() if name is None else _hlo(name=name)
    kernel = f"{name or 'scaled_add'}_mosaic_gpu_kernel"
    op = {r["op"]: r for r in roofline.roofline(_store(text, kernel), by="op")}["pallas_call.1"]
    assert op["kernel_count"] == 2 and op["executions"] == 2
    assert op["category"] == "custom-call:mosaic_gpu_v2"
    assert op["cost_known"] is False and op["cost_basis"] == "lower bound"
    # no FLOPs, no static bytes; its operands and results alone over its 40 us: a lower bound
    assert op["bytes"] == 0 and op["flops"] == 0
    assert op["lower_bound_bytes"] == 2 * 3 * N * 4
    assert op["lower_bound_bytes_per_s"] == pytest.approx(2 * 3 * N * 4 / 40e-6)
    # on an FPGA: a bound, not an estimate; the note names the kernel and why it has no cost
    cand = {r["op"]: r for r in fpga.fpga_candidates(_store(text, kernel), target="alveo-u55c")}["pallas_call.1"]
    assert cand["estimate_basis"] == "operand bound" and math.isnan(cand["score"])
    assert f"Mosaic GPU kernel '{kernel}'" in cand["estimate_note"]
    assert "drops" in cand["estimate_note"]


def test_a_kernel_of_another_name_is_not_attributed_to_it():
    rows = {r["op"]: r for r in roofline.roofline(_store(_hlo(), "scaled_add_kernel"), by="op")}
    assert "pallas_call.1" not in rows


@pytest.mark.parametrize("kernel_name", [None, "my_add"])
def test_plgpu_kernel_is_attributed_by_its_kernel_name(kernel_name):
    text = _hlo_kernel() if kernel_name is None else _hlo_kernel(kernel_name=kernel_name)
    ins = fpgaprof.hlo.analyze(text).instruction("mpmd_map.1")
    assert ins.custom_call_target == "mosaic_gpu_v2" and ins.unknown_cost is True
    assert (ins.bytes_read, ins.bytes_written) == (2 * 256 * 4, 256 * 4)
    kernel = f"{kernel_name or 'scaled_add'}_mosaic_gpu_kernel"
    op = {r["op"]: r for r in roofline.roofline(_store(text, kernel), by="op")}["mpmd_map.1"]
    assert op["kernel_count"] == 2 and op["cost_basis"] == "lower bound"
    assert op["lower_bound_bytes"] == 2 * 3 * 256 * 4


# --- Mosaic GPU as Pallas's default GPU backend --------------------------------------------------
# JAX 0.10.1 lowers a pallas_call without compiler_params through Mosaic GPU: the flag
# jax_pallas_use_mosaic_gpu defaults to True (jax/_src/pallas/pallas_call.py, _PALLAS_USE_MOSAIC_GPU
# and gpu_lowering); Triton is taken for pltriton.CompilerParams (what MBIRJAX 0.7 passes) or with
# the flag off. Both forms are attributed alike: kernel -> custom call -> the Python line.

def _pallas_add(**extra):
    """x + 2 y through pallas_call, a new function each time (no trace is reused across flags)."""
    def call(x, y):
        return pl.pallas_call(scaled_add, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(N // 256,), in_specs=[pl.BlockSpec((256,), lambda i: (i,))] * 2, out_specs=pl.BlockSpec((256,), lambda i: (i,)), **extra)(x, y)  # noqa: E501 - one line: the HLO's source line
    return call


def _call_line() -> int:
    """The line of the pallas_call above, found in this file's text (not from fpgaprof)."""
    with open(__file__, encoding="utf-8") as f:
        return next(i for i, ln in enumerate(f, 1) if ln.rstrip().endswith("one line: the HLO's source line"))


def _default_hlo(use_mosaic_gpu: bool | None, triton_params: bool = False) -> str:
    """HLO (with its source locations) of the pallas_call above under the flag's value (None: as
    JAX has it), with pltriton.CompilerParams when `triton_params`."""
    pltriton = pytest.importorskip("jax.experimental.pallas.triton")
    x = jax.ShapeDtypeStruct((N,), jnp.float32)
    extra = {"compiler_params": pltriton.CompilerParams(num_warps=4)} if triton_params else {}
    old = getattr(jax.config, "jax_pallas_use_mosaic_gpu", None)
    if old is None and use_mosaic_gpu is not None:
        pytest.skip("this JAX has no jax_pallas_use_mosaic_gpu flag")
    try:
        if use_mosaic_gpu is not None:
            jax.config.update("jax_pallas_use_mosaic_gpu", use_mosaic_gpu)
        return jax.jit(_pallas_add(**extra)).trace(x, x).lower(lowering_platforms=("cuda",)).as_text(
            dialect="hlo", debug_info=True)
    except Exception as e:  # noqa: BLE001 - this JAX cannot lower Pallas for CUDA here
        pytest.skip(f"this JAX cannot lower a Pallas kernel for CUDA on a CPU machine: {e}")
    finally:
        if old is not None:
            jax.config.update("jax_pallas_use_mosaic_gpu", old)


def test_without_compiler_params_the_flag_picks_the_backend():
    if not hasattr(jax.config, "jax_pallas_use_mosaic_gpu"):
        pytest.skip("this JAX has no jax_pallas_use_mosaic_gpu flag")
    on = fpgaprof.hlo.analyze(_default_hlo(True)).instruction("pallas_call.1")
    off = fpgaprof.hlo.analyze(_default_hlo(False)).instruction("pallas_call.1")
    assert on.custom_call_target == "mosaic_gpu_v2"
    assert off.custom_call_target in ("__gpu$xla.gpu.triton", "triton_kernel_call_ffi")
    # Triton's compiler params win over the flag (MBIRJAX's projectors stay on Triton)
    pinned = fpgaprof.hlo.analyze(_default_hlo(True, triton_params=True)).instruction("pallas_call.1")
    assert pinned.custom_call_target == off.custom_call_target


@pytest.mark.parametrize("backend", ["mosaic_gpu", "triton"])
def test_either_backend_attributes_the_kernel_to_the_call_and_its_python_line(backend):
    from fpgaprof.analysis import attribution

    text = _default_hlo(backend == "mosaic_gpu", triton_params=backend == "triton")
    # the kernel the GPU runs: Mosaic GPU's outlined `<name>_mosaic_gpu_kernel`; Triton's is the
    # kernel function's name (docs/cost-model.md, "Custom kernels")
    kernel = "scaled_add_mosaic_gpu_kernel" if backend == "mosaic_gpu" else "scaled_add"
    r = attribution.attribute(_store(text, kernel))
    k = r.kernels[0]
    assert (k.method, k.hlo_op) == ("kernel_name", "pallas_call.1")
    assert k.source_file == __file__ and k.source_line == _call_line()
    assert r.kernels[1].hlo_op == "pallas_call.1" and r.unattributed_count == 0
    # the same labelled lower bound for either: 3 x 4096 x 4 B per execution, FLOPs unknown
    op = {o["op"]: o for o in roofline.roofline(_store(text, kernel), by="op")}["pallas_call.1"]
    assert op["cost_basis"] == "lower bound" and op["lower_bound_bytes"] == 2 * 3 * N * 4
