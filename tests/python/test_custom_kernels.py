"""Pallas (Triton) custom kernels, as today's MBIRJAX runs its projectors on H100/H200/A100: the
HLO comes from JAX itself, lowering a Pallas Triton kernel for CUDA on this CPU machine
(`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`). Their kernels are attributed by
the kernel's own name, their cost is the author's (pallas_call metadata) or a labelled lower
bound, and, with counters, the measured FLOPs and bytes (docs/cost-model.md, "Custom kernels")."""
import math

import fpgaprof  # noqa: F401  (before jax)
import pytest
from fpgaprof import fpga, roofline
from fpgaprof.base.core import core
from _store_builder import store_from_lists

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
    s = store_from_lists({
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
    assert cand["cost_known"] is False and cand["estimate_basis"] == "operand bound"
    assert math.isnan(cand["score"]) and "bound only" in cand["estimate_note"]
    # the note names the kernel and how to give its cost
    assert "Triton kernel '_scaled_add'" in cand["estimate_note"] and "metadata=" in cand["estimate_note"]
    # by hand: 2 executions x 12 x 4096 B streamed at 301.58 GB/s + 2 launches of 40 us, at least
    assert cand["card_time_s"] == pytest.approx(2 * 12 * N / (32 * 0.71875 * 14.375e9 * 0.91216) + 2 * 40e-6)


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
    # by hand: 2 executions x 12 x 4096 B streamed at 301.58 GB/s, + 2 launches of 40 us
    assert cand["card_time_s"] == pytest.approx(2 * 12 * N / (32 * 0.71875 * 14.375e9 * 0.91216) + 2 * 40e-6)
    # metadata that is not a cost (no "flops") leaves it unknown
    other = fpgaprof.hlo.analyze(_hlo(metadata={"note": "x"})).instruction("pallas_call.1")
    assert other.unknown_cost is True


def test_counters_give_a_measured_bound():
    """Counters on the first of its two launches (half its time): 65,536 B read (x and y each
    twice: no cache reuse), 16,384 B written, 4096 FMAs. Scaled to both launches: 16,384 FLOPs
    and 163,840 B; still only a bound (the access pattern is unknown: streamed at the card's
    best), not an estimate."""
    ffma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
    store = _store(_hlo(), counters=[(0, "dram__bytes_read.sum", 65536.0), (0, "dram__bytes_write.sum", 16384.0),
                                     (0, ffma, 4096.0)])
    op = {r["op"]: r for r in roofline.roofline(store, by="op")}["pallas_call.1"]
    assert op["cost_basis"] == "measured" and op["measured_coverage"] == pytest.approx(0.5)
    # its measured roofline point: 8192 FLOPs over 81,920 B in the first 20 us launch
    assert op["measured_flops"] == 8192 and op["measured_bytes"] == 81920
    assert op["measured_intensity"] == pytest.approx(0.1)
    cand = {r["op"]: r for r in fpga.fpga_candidates(store, target="alveo-u55c")}["pallas_call.1"]
    assert cand["estimate_basis"] == "measured bound" and cand["measured_coverage"] == pytest.approx(0.5)
    assert cand["cost_known"] is False and math.isnan(cand["score"])
    assert "counters over 50% of its time" in cand["estimate_note"]
    assert cand["flops"] == pytest.approx(2 * 2 * 4096) and cand["bytes"] == pytest.approx(2 * 81920)
    # it moved 81,920 B of DRAM traffic per launch for 49,152 B of operands and result: 5/3
    assert cand["measured_traffic_ratio"] == pytest.approx(81920 / 49152)
    stream = 32 * 0.71875 * 14.375e9 * 0.91216  # U55C, nominal (docs/fpga-model.md)
    # as compiled: the measured 81,920 B per launch streamed (8192 FLOPs take 15 ns), + 40 us each
    assert cand["card_time_s"] == pytest.approx(2 * 81920 / stream + 2 * 40e-6)
    # restructured: its operands and result once, 49,152 B per launch
    assert cand["restructured_card_time_s"] == pytest.approx(2 * 49152 / stream + 2 * 40e-6)
    # 40 us on the GPU against at least 80 us of launches alone: ruled out, even at the fast end
    assert cand["op_speedup_high"] < 1 and cand["restructured_op_speedup_high"] < 1
    assert cand["scenario"] == "neither"
    table = fpga.fpga_candidates(store, target="alveo-u55c")
    assert table.meta["ruled_out_count"] == 1 and table.meta["ruled_out_gpu_ns"] == 40_000
