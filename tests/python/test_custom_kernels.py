"""Pallas (Triton) custom kernels, as today's MBIRJAX runs its projectors on H100/H200/A100: the
HLO comes from JAX itself, lowering a Pallas Triton kernel for CUDA on this CPU machine
(`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`). Their kernels are attributed by
the kernel's own name, their cost is the author's (pallas_call metadata) or a labelled lower
bound, and, with counters, the measured FLOPs and bytes (docs/cost-model.md, "Custom kernels")."""
import math

import fpgaprof  # noqa: F401  (before jax)
import pytest
from fpgaprof import _core, fpga, roofline

jax = pytest.importorskip("jax")
jnp = jax.numpy
pl = pytest.importorskip("jax.experimental.pallas")
plt = pytest.importorskip("jax.experimental.pallas.triton")

N = 4096
DEVICE = {"name": "test-gpu", "cc_major": 9, "cc_minor": 0, "sm_count": 132, "core_clock_khz": 1_755_000,
          "memory_clock_khz": 2_619_000, "memory_bus_width_bits": 5120, "pcie_generation": 5, "pcie_link_width": 16}


def _scaled_add(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...] * 2.0


def _hlo(metadata=None):
    """HLO of x + 2 y as one Pallas Triton kernel over 16 blocks of 256 f32."""
    def f(x, y):
        return pl.pallas_call(_scaled_add, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(N // 256,),
                              in_specs=[pl.BlockSpec((256,), lambda i: (i,))] * 2,
                              out_specs=pl.BlockSpec((256,), lambda i: (i,)),
                              compiler_params=plt.CompilerParams(num_warps=4), metadata=metadata)(x, y)

    x = jax.ShapeDtypeStruct((N,), jnp.float32)
    try:
        return jax.jit(f).trace(x, x).lower(lowering_platforms=("cuda",)).as_text(dialect="hlo")
    except Exception as e:  # noqa: BLE001 - this JAX cannot lower Pallas for CUDA here
        pytest.skip(f"this JAX cannot lower a Pallas Triton kernel for CUDA on a CPU machine: {e}")


def _store(text, counters=()):
    # two launches of the kernel (named after the kernel function), 20 us each; the program 1 ms
    s = _core.analysis._store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": "_scaled_add", "start_ns": t, "end_ns": t + 20_000, "grid": 16} for t in (0, 100_000)],
        "hlo_modules": [{"name": "jit_f", "text": text}],
        "start_ns": 0, "end_ns": 1_000_000,
    })
    for k, metric, value in counters:
        s.append("counters", kernel_index=k, metric=metric, value=value)
    return s


def test_the_hlo_is_a_triton_custom_call_named_after_the_kernel():
    text = _hlo()
    ins = fpgaprof.hlo.analyze(text).instruction("pallas_call.1")
    assert ins.opcode == "custom-call" and ins.custom_call_target in ("__gpu$xla.gpu.triton", "triton_kernel_call_ffi")
    assert ins.unknown_cost is True and ins.cost_from_author is False
    # no rule: operands and result, 3 x 4096 x 4 B, as a lower bound; FLOPs unknown
    assert (ins.bytes_read, ins.bytes_written, ins.flops) == (2 * N * 4, N * 4, 0)


def test_kernels_are_attributed_by_the_kernel_name_and_get_a_labelled_lower_bound():
    store = _store(_hlo())
    rows = {r["op"]: r for r in roofline.roofline(store, by="op")}
    op = rows["pallas_call.1"]
    assert op["kernel_count"] == 2 and op["executions"] == 2
    assert op["category"].startswith("custom-call:")
    assert op["cost_known"] is False and op["cost_basis"] == "lower bound"
    # no FLOPs, no static bytes; its operands and results alone over its 40 us: a lower bound
    assert op["bytes"] == 0 and op["flops"] == 0
    assert op["lower_bound_bytes"] == 2 * 3 * N * 4
    assert op["lower_bound_bytes_per_s"] == pytest.approx(2 * 3 * N * 4 / 40e-6)
    cand = {r["op"]: r for r in fpga.fpga_candidates(store, target="alveo-u55c")}["pallas_call.1"]
    assert cand["cost_known"] is False and "not estimated" in cand["estimate_note"]


def test_the_authors_figures_make_it_estimated():
    """pallas_call(metadata={"flops": ..., "bytes_accessed": ...}): Pallas's Triton lowering
    drops cost_estimate, but keeps metadata in the custom call. 2 FLOPs per element, 12 B."""
    text = _hlo(metadata={"flops": str(2 * N), "bytes_accessed": str(3 * 4 * N)})
    ins = fpgaprof.hlo.analyze(text).instruction("pallas_call.1")
    assert ins.unknown_cost is False and ins.cost_from_author is True
    assert ins.flops == 2 * N and ins.bytes_read + ins.bytes_written == 3 * 4 * N
    store = _store(text)
    op = {r["op"]: r for r in roofline.roofline(store, by="op")}["pallas_call.1"]
    assert op["cost_known"] is True and op["cost_basis"] == "author"
    assert op["flops"] == 2 * 2 * N and op["intensity"] == pytest.approx(2 / 12)
    cand = {r["op"]: r for r in fpga.fpga_candidates(store, target="alveo-u55c")}["pallas_call.1"]
    assert cand["cost_known"] is True and math.isfinite(cand["op_speedup"])
    # by hand: 2 executions x 12 x 4096 B streamed at 236.02 GB/s, + 2 launches of 40 us
    assert cand["card_time_s"] == pytest.approx(2 * 12 * N / (32 * 0.5625 * 14.375e9 * 0.91216) + 2 * 40e-6)
    # metadata that is not a cost (no "flops") leaves it unknown
    other = fpgaprof.hlo.analyze(_hlo(metadata={"note": "x"})).instruction("pallas_call.1")
    assert other.unknown_cost is True
