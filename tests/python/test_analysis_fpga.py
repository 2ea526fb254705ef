"""Analysis layer from Python: presets, roofline/candidates on a constructed trace, HLO export
(re-parsed by fpgaprof's parser and by XLA's), transfers/memory, calibrate without a GPU."""
import json
import math

from fpgaprof.base import units
import fpgaprof  # before jax: fpgaprof sets XLA flags
import pytest
from fpgaprof import calibrate, fpga, roofline
from fpgaprof.base.core import core
from fpgaprof.analysis.ceilings import save_measured
from _store_builder import store_from_lists

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _hlo_text():
    def f(x, w):
        y = jnp.sin(x) * 2.0 + 1.0
        return jnp.dot(y, w).sum(axis=0)

    return jax.jit(f).lower(jnp.ones((64, 64)), jnp.ones((64, 32))).compile().as_text()


# Fictional sm_80 GPU: 100 SMs at 1 GHz -> fp32 12.8e12 FLOP/s; DRAM 2 x 1e9 x 4096/8 = 1.024e12 B/s.
DEVICE = {"name": "test-gpu", "cc_major": 8, "cc_minor": 0, "sm_count": 100, "core_clock_khz": 1_000_000,
          "memory_clock_khz": 1_000_000, "memory_bus_width_bits": 4096, "pcie_generation": 4, "pcie_link_width": 16}


# The alveo-u55c preset at its nominal constants (docs/fpga-model.md, "Constants"; each from
# python/fpgaprof/data/fpga_calibration.json): 32 HBM2 pseudo-channels of 14.375 GB/s, a design
# drives 71.875 % of them at 91.216 % of their peak; 9,024 DSPs at 66.75 % and 222 MHz, 5 DSPs
# per fp32 FMA; PCIe gen3 x16 at 71.7752 %, 13.0099 us per buffer, 40 us per launch.
U55C_STREAM = 32 * 0.71875 * 14.375e9 * 0.91216         # 301.58 GB/s
U55C_FP32 = 9024 * 0.6675 / 5 * 2 * 222e6               # 534.88 GFLOP/s
GEN3X16 = 8e9 * 128 / 130 / 8 * 16                      # 15.754 GB/s line rate
LINK = GEN3X16 * 0.717752                               # 11.307 GB/s (the GPU's gen4 x16 is faster)
LINK_LOW, LINK_HIGH = GEN3X16 * 0.771532, GEN3X16 * 0.253906   # the fast and the slow end
BUFFER_S, BUFFER_LOW_S, BUFFER_HIGH_S = 13.0099e-6, 5.17106e-6, 19e-6
LAUNCH_S, LAUNCH_LOW_S, LAUNCH_HIGH_S = 40e-6, 16e-6, 100e-6


def _store(text):
    # broadcast_add_fusion twice (30 us each), the matmul fusion once (40 us), the final reduce
    # once (10 us): 110 us of kernels; the program took 1 ms.
    ks = [("broadcast_add_fusion", 0, 30_000), ("broadcast_add_fusion", 100_000, 30_000),
          ("ynn_fusion", 200_000, 40_000), ("wrapped_reduce", 300_000, 10_000)]
    return store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": n, "start_ns": s, "end_ns": s + d, "grid": 1000} for n, s, d in ks],
        "hlo_modules": [{"name": "jit_f", "text": text}],
        "memcpys": [{"copy_kind": 1, "src_kind": 1, "dst_kind": 3, "bytes": 4096, "start_ns": 110_000,
                     "end_ns": 111_000}],
        "allocations": [{"timestamp_ns": 10, "address": 4096, "bytes": 1 << 20},
                        {"timestamp_ns": 20, "address": 8192, "bytes": 1 << 10},
                        {"timestamp_ns": 30, "address": 4096, "bytes": 1 << 20, "alloc": False}],
        "start_ns": 0, "end_ns": 1_000_000,
    })


def test_presets_derivation():
    p = {t["name"]: t for t in fpga.presets()}
    assert list(p) == ["alveo-u55c", "alveo-u280", "alveo-u250", "alveo-u200", "versal-v80",
                       "intel-pac-a10", "bittware-520n-s10gx", "intel-pac-d5005", "intel-s10mx-2100"]
    u = p["alveo-u55c"]
    # 9024 DSP x 0.6675 / 5 per FMA x 2 x 222 MHz, and at the ends (0.5005 x 147 MHz, 0.8518 x 297 MHz)
    assert u["card_fp32_flops_per_s"] == pytest.approx(U55C_FP32)
    assert u["card_fp32_flops_per_s_low"] == pytest.approx(9024 * 0.5005 / 5 * 2 * 147e6)
    assert u["card_fp32_flops_per_s_high"] == pytest.approx(9024 * 0.8518 / 5 * 2 * 297e6)
    assert u["fp32_flops_per_s"] == 0  # not given: from the DSPs
    assert (u["memory_type"], u["memory_channels"], u["memory_channel_bytes_per_s"]) == ("hbm2", 32, 14.375e9)
    assert u["memory_bytes_per_s"] == pytest.approx(460e9)
    assert u["stream_bytes_per_s"] == pytest.approx(U55C_STREAM)
    assert (u["clock_hz_low"], u["clock_hz"], u["clock_hz_high"]) == (147e6, 222e6, 297e6)
    # DDR4 cards: 4 banks of 19.25 GB/s driven whole at 78.87 %
    d = p["alveo-u250"]
    assert (d["memory_type"], d["memory_channels"], d["dsp_count"]) == ("ddr4", 4, 12288)
    assert d["stream_bytes_per_s"] == pytest.approx(4 * 19.25e9 * 1.0 * 0.788675)
    assert p["alveo-u200"]["dsp_count"] == 6840 and p["alveo-u200"]["random_granule_bytes"] == 64
    # the V80: 32 HBM2e pseudo-channels of 25.6 GB/s, AMD's ~460 GB/s the nominal
    v = p["versal-v80"]
    assert v["memory_bytes_per_s"] == pytest.approx(819.2e9)
    assert v["stream_efficiency"] == pytest.approx(460 / 819.2, rel=1e-5)
    for t in p.values():  # every calibrated field: low <= nominal <= high
        for f in fpga.CALIBRATED_FIELDS:
            assert t[f + "_low"] <= t[f] <= t[f + "_high"], (t["name"], f)
    with pytest.raises(fpgaprof.InvalidArgumentError, match="alveo-u55c, alveo-u280, alveo-u250, alveo-u200, versal-v80"):
        fpga.target_spec("no-such-card")


def test_roofline_and_candidates_on_constructed_trace():
    text = _hlo_text()
    store = _store(text)
    mod = core.hlo.analyze(text)
    cost = {i.name: i.cost for c in mod.computations for i in c.instructions}
    ops = roofline.roofline(store, by="op", ceilings_override=None)
    by = {r["op"]: r for r in ops}
    assert set(by) == {"broadcast_add_fusion", "ynn_fusion", "wrapped_reduce"}
    add = by["broadcast_add_fusion"]
    c = cost["broadcast_add_fusion"]
    assert add["executions"] == 2 and add["time_ns"] == 60_000
    assert add["flops"] == pytest.approx(2 * c.flops)
    assert add["bytes"] == pytest.approx(2 * (c.bytes_read + c.bytes_written))
    assert add["intensity"] == pytest.approx(c.flops / (c.bytes_read + c.bytes_written))
    # Elementwise f32 far below the fp32 ridge 12.5 FLOP/B, 30 us kernels with 1000 blocks.
    assert add["ridge_flops_per_byte"] == pytest.approx(12.5)
    assert add["bound"] == "memory"

    table = fpga.fpga_candidates(store, target="alveo-u55c")
    assert [r["rank"] for r in table] == list(range(1, len(table) + 1))
    # Ranked by what offloading could change, then GPU time, then score (docs/fpga-model.md,
    # "Ranking"); each row's could_save_ns is its GPU time less the fastest card total at the
    # fast ends of its ranges, 0 when none beats the GPU.
    keys = [(-r["could_save_ns"], -r["gpu_time_ns"], -r["score"]) for r in table]
    assert keys == sorted(keys)
    for r in table:
        fastest = max(r["op_speedup_high"], r["restructured_op_speedup_high"])
        expect_save = r["gpu_time_ns"] * (1 - 1 / fastest) if fastest > 1 else 0.0
        assert r["could_save_ns"] == pytest.approx(expect_save)
    row = next(r for r in table if r["op"] == "broadcast_add_fusion")
    assert row["time_share"] == pytest.approx(60 / 110)
    # Every score input is in the row and the score is their documented product.
    expect = (row["time_share"] * (0.25 + 0.75 * row["memory_boundness"]) * row["pattern_affinity"]
              * row["onchip_factor"] * row["link_factor"])
    assert row["score"] == pytest.approx(expect)
    assert row["memory_boundness"] == pytest.approx(1 - row["intensity"] / 12.5)
    # The on-chip test uses the cost model's largest live intermediate of one execution, not
    # the op's output bytes.
    for r in table:
        assert r["working_set_bytes"] == pytest.approx(cost[r["op"]].working_set_bytes)
    # What-if, by hand on the U55C's nominal constants (an elementwise fusion: every byte
    # streams): card memory = 2 x bytes / 301.58 GB/s, compute = 2 x FLOPs / 534.88 GFLOP/s,
    # card time = the larger + 2 launches of 40 us.
    assert row["random_bytes"] == 0 and row["stream_bytes"] == pytest.approx(add["bytes"])
    assert row["card_memory_s"] == pytest.approx(add["bytes"] / U55C_STREAM)
    assert row["card_compute_s"] == pytest.approx(add["flops"] / U55C_FP32)
    card = max(add["bytes"] / U55C_STREAM, add["flops"] / U55C_FP32) + 2 * LAUNCH_S
    assert row["card_time_s"] == pytest.approx(card)
    # Transfers: the fusion's distinct inputs and its output cross PCIe gen3 x16 (the slower of
    # the card's and the GPU's gen4 x16 link) at 71.78 %, each buffer 13.01 us, per execution.
    ins = next(i for c in mod.computations for i in c.instructions if i.name == "broadcast_add_fusion")
    io = sum(sh.byte_size for sh in ins.operand_shapes) + ins.shape.byte_size
    buffers = len(ins.operand_shapes) + 1
    assert row["transfer_bytes"] == pytest.approx(2 * io)
    assert row["transfer_s"] == pytest.approx(2 * io / LINK + 2 * buffers * BUFFER_S)
    assert row["transfer_low_s"] == pytest.approx(2 * io / LINK_LOW + 2 * buffers * BUFFER_LOW_S)
    assert row["transfer_high_s"] == pytest.approx(2 * io / LINK_HIGH + 2 * buffers * BUFFER_HIGH_S)
    # link_factor: the link's cost against the op's GPU time (60 us), not against the card time.
    assert row["link_factor"] == pytest.approx(60e-6 / (60e-6 + row["transfer_s"]))
    assert row["fpga_total_s"] == pytest.approx(card + row["transfer_s"])
    assert row["op_speedup"] == pytest.approx(60e-6 / row["fpga_total_s"])
    assert row["op_speedup_low"] == pytest.approx(60e-6 / row["fpga_total_high_s"])
    assert row["op_speedup_high"] == pytest.approx(60e-6 / row["fpga_total_low_s"])
    assert row["op_speedup_low"] < row["op_speedup"] < row["op_speedup_high"]
    total = 1e-3
    assert row["workload_speedup"] == pytest.approx(total / (total - 60e-6 + row["fpga_total_s"]))
    # Restructured: the same bytes (it streams already), so the same card time; neither gains.
    assert row["restructured_card_time_s"] == pytest.approx(row["card_time_s"])
    assert row["scenario"] == "neither" and row["card_limit"] == "memory"
    assert table.meta["workload_ns"] == pytest.approx(1e6)
    df = table.to_pandas()
    assert {"score", "time_share", "memory_boundness", "pattern_affinity", "working_set_bytes",
            "host_bytes_per_call", "op_speedup"} <= set(df.columns)
    # twice the memory (hbm_bytes_per_s: the earlier name of memory_bytes_per_s, over the
    # preset's 32 channels): half the memory time
    user = fpga.FpgaTarget(name="mine", base="alveo-u55c", hbm_bytes_per_s=920e9)
    t2 = fpga.fpga_candidates(store, target=user)
    row2 = next(r for r in t2 if r["op"] == "broadcast_add_fusion")
    assert t2.meta["target"]["memory_channel_bytes_per_s"] == pytest.approx(920e9 / 32)
    assert row2["card_memory_s"] == pytest.approx(row["card_memory_s"] / 2)


def _region_store(text):
    ks = [("broadcast_add_fusion", 0, 30_000, 0), ("broadcast_add_fusion", 100_000, 30_000, 0),
          ("ynn_fusion", 200_000, 40_000, 2), ("wrapped_reduce", 300_000, 10_000, 2)]
    return store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": n, "start_ns": s, "end_ns": s + d, "grid": 1000, "region": r} for n, s, d, r in ks],
        "regions": [{"name": "step", "start_ns": 0, "end_ns": 149_999, "thread_id": 1},
                    {"name": "step", "start_ns": 150_000, "end_ns": 399_999, "thread_id": 1},
                    {"name": "inner", "start_ns": 190_000, "end_ns": 390_000, "thread_id": 1, "parent": 1}],
        "hlo_modules": [{"name": "jit_f", "text": text}],
        "start_ns": 0, "end_ns": 1_000_000,
    })


def test_regions_ranked_as_fpga_candidates():
    # The four kernels of _store, in regions: "step" [0, 150 us) holds the two broadcast_add
    # kernels, a second "step" [150, 400 us) holds a nested "inner" with the matmul fusion and
    # the reduce. Paths: "step" (2 instances, all 110 us) and "step > inner" (50 us).
    text = _hlo_text()
    store = _region_store(text)
    ops = {r["op"]: r for r in fpga.fpga_candidates(store, target="alveo-u55c")}
    table = fpga.fpga_candidates(store, target="alveo-u55c", by="region")
    rows = {r["region"]: r for r in table}
    assert set(rows) == {"step", "step > inner"}
    assert [r["rank"] for r in table] == [1, 2]
    assert table.meta["workload_ns"] == pytest.approx(1e6)
    step, inner = rows["step"], rows["step > inner"]
    assert (step["instances"], step["depth"], step["kernel_count"], step["op_count"]) == (2, 0, 4, 3)
    assert (inner["instances"], inner["depth"], inner["name"]) == (1, 1, "inner")
    assert step["gpu_time_ns"] == 110_000 and inner["gpu_time_ns"] == 50_000
    assert step["time_share"] == pytest.approx(1.0) and inner["time_share"] == pytest.approx(50 / 110)
    assert step["top_op"] == "broadcast_add_fusion" and inner["top_op"] == "ynn_fusion"
    assert step["estimated_share"] == 1.0 and step["estimate_note"] == ""
    # Bytes one call of jit_f moves, from JAX's own view of the function: x (64x64 f32) and w
    # (64x32 f32) in, the (32,) f32 result out.
    io = 64 * 64 * 4 + 64 * 32 * 4 + 32 * 4
    # No NVTX ranges here: calls = the most executions inside of an op of the entry computation
    # (each call runs each of them once): broadcast_add_fusion, an entry op, ran twice in
    # "step": two calls; in "inner" the matmul fusion and the reduce once: one call.
    assert step["module_calls"] == 2 and step["module_calls_counted"] is False
    assert inner["module_calls"] == 1
    assert step["transfer_bytes"] == pytest.approx(2 * io)
    assert inner["transfer_bytes"] == pytest.approx(io)
    # The card time is the ops' own card times (all their executions are inside "step"; each
    # execution a clock cycle at least, 1 / 222 MHz: the small reduce's bytes take less) plus
    # one launch per module call; the link adds the call bytes and one buffer latency per
    # argument and result (x, w in; the result out: 3 buffers) per call.
    card = sum(max(o["card_compute_s"], o["card_memory_s"], o["executions"] / 222e6) for o in ops.values())
    card += 2 * LAUNCH_S
    assert step["card_time_s"] == pytest.approx(card)
    link = 2 * (io / LINK + 3 * BUFFER_S)
    assert step["transfer_s"] == pytest.approx(link)
    assert step["fpga_total_s"] == pytest.approx(card + step["transfer_s"])
    assert step["region_speedup"] == pytest.approx(110e-6 / step["fpga_total_s"])
    assert step["link_factor"] == pytest.approx(110e-6 / (110e-6 + link))
    assert step["card_time_low_s"] < step["card_time_s"] < step["card_time_high_s"]
    # Restructured: never above as compiled; here the module's calls as one dataflow design
    # read x and w and write the result once per call (io at 301.58 GB/s) or compute (the FLOPs
    # of its ops at 534.88 GFLOP/s), whichever is longer, plus the same launches.
    flops = sum(o["flops"] for o in ops.values())
    dataflow = max(2 * io / U55C_STREAM, flops / U55C_FP32) + 2 * LAUNCH_S
    restructured_ops = sum(o["restructured_card_time_s"] - o["card_latency_s"] for o in ops.values()) + 2 * LAUNCH_S
    assert step["restructured_card_time_s"] == pytest.approx(min(dataflow, restructured_ops))
    assert step["restructured_card_time_s"] <= step["card_time_s"]
    assert step["workload_speedup"] == pytest.approx(1e-3 / (1e-3 - 110e-6 + step["fpga_total_s"]))
    # Score factors: time-weighted boundness and affinity of its ops, largest working set.
    w = {n: ops[n]["gpu_time_ns"] for n in ops}
    assert step["memory_boundness"] == pytest.approx(sum(w[n] * ops[n]["memory_boundness"] for n in w) / 110_000)
    assert step["pattern_affinity"] == pytest.approx(sum(w[n] * ops[n]["pattern_affinity"] for n in w) / 110_000)
    assert step["working_set_bytes"] == max(o["working_set_bytes"] for o in ops.values())
    for r in table:
        expect = (r["time_share"] * r["estimated_share"] * (0.25 + 0.75 * r["memory_boundness"])
                  * r["pattern_affinity"] * r["onchip_factor"] * r["link_factor"])
        assert r["score"] == pytest.approx(expect)
    keys = [(-r["could_save_ns"], -r["gpu_time_ns"], -r["score"]) for r in table]
    assert keys == sorted(keys)  # the ops' ranking rule (docs/fpga-model.md, "Ranking")
    for r in table:
        fastest = max(r["region_speedup_high"], r["restructured_region_speedup_high"])
        assert r["could_save_ns"] == pytest.approx(
            r["gpu_time_ns"] * (1 - 1 / fastest) if fastest > 1 else 0.0
        )
    with pytest.raises(fpgaprof.InvalidArgumentError, match="by='kernel'"):
        fpga.fpga_candidates(store, by="kernel")
    # A trace without regions: an empty table.
    assert len(fpga.fpga_candidates(_store(text), by="region")) == 0


def test_region_candidates_in_summary_json_and_html():
    import pathlib

    from fpgaprof.report import html, model, summary_json

    s = model.collect(_region_store(_hlo_text()))
    data = json.loads(summary_json.dumps(s))
    regions = data["candidates"]["regions"]
    assert regions["available"] is True and regions["count"] == 2 and regions["items_left_out"] == 0
    assert [r["region"] for r in regions["items"]] == [r["region"] for r in
                                                        fpga.fpga_candidates(_region_store(_hlo_text()), by="region")]
    assert "regions" not in data["candidates"]["what_if"]
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((pathlib.Path(__file__).resolve().parents[2] / "docs" / "summary.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    page = html.render(s)
    assert "Regions as offload units" in page and "step &gt; inner" in page
    # Without regions the section says why.
    empty = json.loads(summary_json.dumps(model.collect(_store(_hlo_text()))))["candidates"]["regions"]
    assert empty["available"] is False and "fpgaprof.region()" in empty["reason"]


# XLA's CPU module (jax 0.10.2) for g(x) = jnp.sum(jnp.exp(jnp.outer(x, x)), axis=0), x f32[256],
# kept as text: jax 0.10.1's XLA splits the same g into three fusions (YNNPACK), so compiling it
# here would test the installed XLA's fusion choices rather than the working-set rule.
_OUTER_EXP_SUM_HLO = """\
HloModule jit_g, is_scheduled=true, entry_computation_layout={(f32[256]{0})->f32[256]{0}}, allow_spmd_sharding_propagation_to_parameters={true}, allow_spmd_sharding_propagation_to_output={true}

FileNames
1 "<stdin>"

FunctionNames
1 "<module>"
2 "g"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=4 end_column=38}
2 {file_name_id=1 function_name_id=2 line=2 end_line=2 column=17 end_column=58}
3 {file_name_id=1 function_name_id=2 line=2 end_line=2 column=33 end_column=48}
4 {file_name_id=1 function_name_id=2 line=2 end_line=2 column=25 end_column=49}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=2}
4 {file_location_id=4 parent_frame_id=2}


%region_0.1 (reduce_sum.3: f32[], reduce_sum.4: f32[]) -> f32[] {
  %reduce_sum.3 = f32[] parameter(0), metadata={op_name="reduce_sum"}
  %reduce_sum.4 = f32[] parameter(1), metadata={op_name="reduce_sum"}
  ROOT %reduce_sum.5 = f32[] add(%reduce_sum.3, %reduce_sum.4), metadata={op_name="jit(g)/reduce_sum" stack_frame_id=2}
}

%fused_computation (param_0.5: f32[256]) -> f32[256] {
  %param_0.5 = f32[256]{0} parameter(0)
  %mul.1 = f32[256,256]{1,0} broadcast(%param_0.5), dimensions={0}, metadata={op_name="jit(g)/mul" stack_frame_id=3}
  %mul.2 = f32[256,256]{1,0} broadcast(%param_0.5), dimensions={1}, metadata={op_name="jit(g)/mul" stack_frame_id=3}
  %mul.0 = f32[256,256]{1,0} multiply(%mul.1, %mul.2), metadata={op_name="jit(g)/mul" stack_frame_id=3}
  %exp.0 = f32[256,256]{1,0} exponential(%mul.0), metadata={op_name="jit(g)/exp" stack_frame_id=4}
  %constant.0 = f32[] constant(0)
  ROOT %reduce_sum.0 = f32[256]{0} reduce(%exp.0, %constant.0), dimensions={0}, to_apply=%region_0.1, metadata={op_name="jit(g)/reduce_sum" stack_frame_id=2}
}

ENTRY %main.2 (x.1: f32[256]) -> f32[256] {
  %x.1 = f32[256]{0} parameter(0), metadata={op_name="x"}
  ROOT %ynn_fusion = f32[256]{0} fusion(%x.1), kind=kCustom, calls=%fused_computation, metadata={op_name="jit(g)/reduce_sum" stack_frame_id=2}, backend_config={"fusion_config":{"kind":"__ynn_fusion"},"outer_dimension_partitions":[]}
}
"""


def test_candidate_working_set_is_the_largest_intermediate():
    # sum(exp(outer(x, x)), axis=0) for x of 256 f32: XLA fuses it into one op whose output is
    # 256 x 4 = 1 KiB, but whose largest live intermediate is the 256 x 256 x 4 = 256 KiB outer
    # product. The on-chip test of the FPGA model must see the 256 KiB.
    text = _OUTER_EXP_SUM_HLO
    mod = core.hlo.analyze(text)
    entry = next(c for c in mod.computations if c.is_entry)
    fused = [i for i in entry.instructions if i.opcode == "fusion"]
    assert len(fused) == 1
    op = fused[0]
    assert op.cost.bytes_written == 256 * 4
    assert op.cost.working_set_bytes == 256 * 256 * 4
    store = store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": op.name, "start_ns": 0, "end_ns": 50_000, "grid": 1000}],
        "hlo_modules": [{"name": "jit_g", "text": text}],
        "start_ns": 0, "end_ns": 100_000,
    })
    row = next(r for r in fpga.fpga_candidates(store, target="alveo-u55c") if r["op"] == op.name)
    assert row["working_set_bytes"] == 256 * 256 * 4


def test_link_percent_per_device():
    """Two GPUs copy HtoD at the same time: device 0 (PCIe gen4 x16, 31.508 GB/s) 30 kB and
    device 1 (gen3 x16, 15.754 GB/s) 15 kB in the same 1 µs. Together 45 GB/s, more than
    either link; against both links' capacity in that µs (31,507.7 + 15,753.8 B) 95.2 %, not
    45 / 31.508 = 142.8 % (device 0's link alone). summary.json gives the same."""
    from fpgaprof.analysis import sections
    gen4, gen3 = 16e9 * 128 / 130 / 8 * 16, 8e9 * 128 / 130 / 8 * 16
    dev = {k: v for k, v in DEVICE.items() if not k.startswith("pcie_")}
    store = store_from_lists({
        "devices": [dict(dev, id=0, pcie_generation=4, pcie_link_width=16),
                    dict(dev, id=1, pcie_generation=3, pcie_link_width=16)],
        "memcpys": [{"copy_kind": 1, "src_kind": 2, "dst_kind": 3, "bytes": 30_000, "start_ns": 0,
                     "end_ns": 1000, "device": 0},
                    {"copy_kind": 1, "src_kind": 2, "dst_kind": 3, "bytes": 15_000, "start_ns": 0,
                     "end_ns": 1000, "device": 1}],
    })
    tr = roofline.transfers(store)
    htod = tr["groups"][0]["directions"]["HtoD"]
    assert htod["achieved_bytes_per_s"] == pytest.approx(45e9)
    assert htod["link_bytes"] == 45_000
    assert htod["link_capacity_bytes"] == pytest.approx(1e-6 * (gen4 + gen3))
    assert htod["link_percent"] == pytest.approx(100 * 45_000 / (1e-6 * (gen4 + gen3)))
    assert htod["link_percent"] < 100
    section = sections.transfers_section(tr, copies=2)
    row = next(r for r in section["by_direction"] if r["direction"] == "HtoD")
    assert row["link_percent"] == pytest.approx(htod["link_percent"])


def test_transfers_memory_ceilings():
    store = _store(_hlo_text())
    tr = roofline.transfers(store)
    trace = tr["groups"][0]
    assert trace["kind"] == "trace"
    htod = trace["directions"]["HtoD"]
    # 4096 B in 1000 ns = 4.096 GB/s of PCIe gen4 x16 (31.51 GB/s) = 13.0 %
    assert htod["achieved_bytes_per_s"] == pytest.approx(4.096e9)
    assert htod["link_percent"] == pytest.approx(100 * 4.096e9 / (16e9 * 128 / 130 / 8 * 16))
    assert htod["kernel_overlap_ns"] == 1000  # [110, 111) us lies inside the kernel at [100, 130) us
    # Without the device's PCIe generation/width the link peak is unknown: no percentage, not 0.
    unknown = store_from_lists({
        "devices": [{k: v for k, v in DEVICE.items() if not k.startswith("pcie_")}],
        "memcpys": [{"copy_kind": 1, "src_kind": 1, "dst_kind": 3, "bytes": 4096, "start_ns": 0, "end_ns": 1000}],
    })
    assert roofline.transfers(unknown)["groups"][0]["directions"]["HtoD"]["link_percent"] is None
    assert any(f["kind"] == "pageable" for f in tr["flags"])
    mem = roofline.memory(store)
    assert mem["peak_in_use_bytes"] == (1 << 20) + (1 << 10)
    assert mem["never_freed_bytes"] == 1 << 10
    ceil = roofline.ceilings(store, use_measured=False)
    assert ceil["peak_flops_per_s"]["fp32"] == pytest.approx(12.8e12)
    assert ceil["flops_source"]["fp32"] == "table"


def test_export_hlo_reparses(tmp_path):
    text = _hlo_text()
    store = _store(text)
    out = tmp_path / "op.hlo"
    exported = fpga.export_hlo(store, "broadcast_add_fusion", out)
    assert out.read_text() == exported
    m = core.hlo.analyze(exported)  # fpgaprof's parser
    entry = m.computations[m.entry_index]
    params = [i for i in entry.instructions if i.opcode == "parameter"]
    assert len(params) == 1 and params[0].shape.dims == [64, 64]
    xla_hlo = _xla()
    xm = xla_hlo.hlo_module_from_text(exported)  # XLA's own parser
    assert "ENTRY" in xm.to_string()
    # A fusion that calls a reduction computation carries it along.
    red = fpga.export_hlo(store, "wrapped_reduce", tmp_path / "r.hlo")
    xla_hlo.hlo_module_from_text(red)
    assert "region_0.1.clone" in red
    # A plain instruction gets parameters for its operands.
    plain = ("HloModule m\n\nENTRY %main (a: f32[4], b: f32[4]) -> f32[4] {\n"
             "  %a = f32[4]{0} parameter(0)\n  %b = f32[4]{0} parameter(1)\n"
             "  ROOT %add.1 = f32[4]{0} add(f32[4]{0} %a, f32[4]{0} %b)\n}\n")
    one = fpga.hlo_module_for_op(plain, "add.1")
    xla_hlo.hlo_module_from_text(one)
    assert core.hlo.analyze(one).computations[0].instructions[-1].opcode == "add"
    with pytest.raises(ValueError):
        fpga.export_hlo(store, "no_such_op", tmp_path / "x.hlo")
    # a near miss is named, and the hint points at the modules, not only at prof.ops
    with pytest.raises(fpgaprof.InvalidArgumentError,
                       match=r"did you mean 'broadcast_add_fusion'\? .*prof.hlo_modules \(jit_f\)"):
        fpga.export_hlo(store, "broadcast_add_fusio", tmp_path / "x.hlo")
    # in a REPL the returned text shows as one line (it is still the whole text)
    exported = fpga.export_hlo(store, "broadcast_add_fusion", tmp_path / "b.hlo")
    assert isinstance(exported, str) and exported == (tmp_path / "b.hlo").read_text()
    assert repr(exported) == (f"<HLO module for op 'broadcast_add_fusion': "
                              f"{exported.count(chr(10)) + 1} lines, {len(exported)} characters, "
                              f"written to {tmp_path / 'b.hlo'}>")


def test_calibrate_without_gpu_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    try:
        has_gpu = bool(jax.devices("gpu"))
    except RuntimeError:
        has_gpu = False
    if not has_gpu:
        with pytest.raises(fpgaprof.CuptiUnavailableError):
            calibrate.run()
    p = calibrate.cache_path("test-gpu")
    assert p.startswith(str(tmp_path))
    save_measured(p, {"peak_flops_per_s": {"fp32": 1e12}, "dram_bytes_per_s": 5e11})
    store = _store(_hlo_text())
    ceil = roofline.ceilings(store)
    assert ceil["peak_flops_per_s"]["fp32"] == 1e12
    assert ceil["flops_source"]["fp32"] == "measured"
    assert ceil["dram_source"] == "measured"
    assert ceil["flops_source"]["fp64"] == "table"
    assert json.load(open(p))["dram_bytes_per_s"] == 5e11
    assert not math.isnan(ceil["dram_bytes_per_s"])


# --- ops without a static cost (a custom call the cost model has no rule for) ---------------

SOLVER_HLO = """HloModule jit_solve

ENTRY %main (a: f32[1024,1024], b: f32[1024]) -> f32[1024,1024] {
  %a = f32[1024,1024]{1,0} parameter(0)
  %b = f32[1024]{0} parameter(1)
  ROOT %solve.1 = f32[1024,1024]{1,0} custom-call(%a, %b), custom_call_target="my_vendor_solver"
}
"""


def _solver_store():
    # The reviewer's case: a 10 ms custom call with no cost rule (its operands and output are
    # 8.39 MB) next to a known fusion of 30 us; the program took 20 ms.
    return store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": "solve_1", "start_ns": 0, "end_ns": 10_000_000, "grid": 1000},
                    {"name": "broadcast_add_fusion", "start_ns": 11_000_000, "end_ns": 11_030_000, "grid": 1000}],
        "hlo_modules": [{"name": "jit_solve", "text": SOLVER_HLO}, {"name": "jit_f", "text": _hlo_text()}],
        "start_ns": 0, "end_ns": 20_000_000,
    })


# Without a cost, nothing is estimated from FLOPs (no score, no intensity) ...
NO_ESTIMATE = ("flops", "bytes", "intensity", "memory_boundness", "working_set_bytes", "onchip_factor", "score")
# ... but its operands and results still bound the card time from below (speedups from above).
BOUNDED = ("card_time_s", "card_time_low_s", "card_time_high_s", "transfer_s", "fpga_total_s", "op_speedup",
           "op_speedup_low", "op_speedup_high", "workload_speedup", "restructured_card_time_s",
           "restructured_op_speedup")
SOLVER_IO = 2 * 1024 * 1024 * 4 + 1024 * 4  # a and the result (4,194,304 B each) + b (4096 B)


@pytest.mark.parametrize("cross", [True, False])
def test_unknown_cost_op_gets_a_bound_not_an_estimate(cross):
    store = _solver_store()
    roof = {r["op"]: r for r in roofline.roofline(store)}
    assert roof["solve.1"]["cost_known"] is False
    table = fpga.fpga_candidates(store, target="alveo-u55c", inputs_cross_link=cross)
    rows = {r["op"]: r for r in table}
    solver, known = rows["solve.1"], rows["broadcast_add_fusion"]
    # Its 8.39 MB of operands once made it 14.1x faster on the card (4.43x for the workload) as
    # an estimate; now it has no estimate and no score, only a labelled bound.
    assert solver["cost_known"] is False and solver["estimate_basis"] == "operand bound"
    assert all(math.isnan(solver[k]) for k in NO_ESTIMATE), {k: solver[k] for k in NO_ESTIMATE}
    assert all(math.isfinite(solver[k]) for k in BOUNDED), {k: solver[k] for k in BOUNDED}
    assert solver["fits_on_chip"] is None and solver["measured_coverage"] is None
    assert solver["measured_traffic_ratio"] is None
    assert "my_vendor_solver" in solver["estimate_note"] and "bound only" in solver["estimate_note"]
    assert solver["time_share"] == pytest.approx(10_000 / 10_030)  # GPU time is known
    assert solver["gpu_time_ns"] == 10_000_000
    # By hand: 8,392,704 B streamed at 301.58 GB/s + one 40 us launch is the least the card
    # needs; over PCIe gen3 x16 its 3 arrays cross at 11.31 GB/s + 13.01 us each.
    card = SOLVER_IO / U55C_STREAM + LAUNCH_S
    total = card + ((SOLVER_IO / LINK + 3 * BUFFER_S) if cross else 0.0)
    assert solver["card_time_s"] == pytest.approx(card)
    assert solver["fpga_total_s"] == pytest.approx(total)
    assert solver["op_speedup"] == pytest.approx(10e-3 / total)  # at most
    # No verdict: the bound does not rule it out.
    assert solver["scenario"] == ""
    # Not ruled out, it could change up to its 10 ms less the bound's fast-end card total: it
    # ranks first, carrying its bound (99.7 % of the GPU time).
    fastest = max(solver["op_speedup_high"], solver["restructured_op_speedup_high"])
    assert fastest > 1
    assert solver["could_save_ns"] == pytest.approx(10e6 * (1 - 1 / fastest))
    assert solver["verdict"] == "unknown: bound only"
    assert table[0]["op"] == "solve.1" and table[-1]["op"] == "broadcast_add_fusion"
    assert known["cost_known"] is True and known["estimate_note"] == "" and known["estimate_basis"] == "static"
    assert math.isfinite(known["op_speedup"]) and math.isfinite(known["score"])
    assert known["scenario"] in ("as compiled", "restructured only", "neither")
    # The combined (Amdahl) speedup is the known op's alone: T / (T - gpu + fpga) when it gains.
    program = 20e-3
    gain = 30e-6 - known["fpga_total_s"]
    expect = program / (program - gain) if known["op_speedup"] > 1 else 1.0
    assert table.meta["combined_speedup"] == pytest.approx(expect)
    assert table.meta["combined_count"] == (1 if known["op_speedup"] > 1 else 0)
    assert table.meta["not_estimated_count"] == 1 and table.meta["bounded_count"] == 1
    assert table.meta["not_estimated_gpu_ns"] == 10_000_000
    assert table.meta["ruled_out_count"] == 0
    # The known fusion by hand: card = max(F / 534.88 GFLOP/s, B / 301.58 GB/s) + 40 us launch;
    # over PCIe gen3 x16 add its inputs and output at 11.31 GB/s + 13.01 us per buffer. Slower
    # than its 30 us on the GPU either way: nothing is combined.
    mod = fpgaprof.hlo.analyze(_hlo_text())
    c = mod.instruction("broadcast_add_fusion")
    b = c.bytes_read + c.bytes_written
    fpga_s = max(c.flops / U55C_FP32, b / U55C_STREAM) + LAUNCH_S
    if cross:
        ins = next(i for i in core.hlo.analyze(_hlo_text()).computations[-1].instructions
                   if i.name == "broadcast_add_fusion")
        io = sum(sh.byte_size for sh in ins.operand_shapes) + ins.shape.byte_size
        fpga_s += io / LINK + (len(ins.operand_shapes) + 1) * BUFFER_S
    assert known["fpga_total_s"] == pytest.approx(fpga_s)
    assert known["op_speedup"] == pytest.approx(30e-6 / fpga_s)
    assert known["op_speedup"] < 1 and table.meta["combined_count"] == 0
    df = table.to_pandas()
    assert {"cost_known", "estimate_note", "estimate_basis"} <= set(df.columns)
    assert df.loc[df["op"] == "solve.1", "score"].isna().all()
    # print() marks the bound: "≤" before its speedups, "≥" before its card time.
    text = str(table)
    line = next(ln for ln in text.splitlines() if "solve.1" in ln)
    assert "≤ " in line and "≥ " in line
    assert "≤" not in next(ln for ln in text.splitlines() if "broadcast_add_fusion" in ln)


def test_unknown_cost_op_in_summary_json_and_html():
    from fpgaprof.report import html, model, summary_json

    store = _solver_store()
    s = model.collect(store)
    data = json.loads(summary_json.dumps(s))  # NaN is not JSON: not estimated values become null
    items = {r["op"]: r for r in data["candidates"]["items"]}
    solver = items["solve.1"]
    assert solver["score"] is None and solver["intensity"] is None
    assert solver["cost_known"] is False and solver["estimate_basis"] == "operand bound"
    # over PCIe (the default): at most 10 ms / (card + link)
    total = SOLVER_IO / U55C_STREAM + LAUNCH_S + SOLVER_IO / LINK + 3 * BUFFER_S
    assert solver["op_speedup"] == pytest.approx(10e-3 / total)
    wi = data["candidates"]["what_if"]
    assert wi["not_estimated_count"] == 1 and wi["bounded_count"] == 1 and wi["ruled_out_count"] == 0
    page = html.render(s)
    assert "not estimated" in page and "1 of them bounded" in page
    # the reason with its count: solve.1 has GPU time (10 ms) but no static cost
    assert ("1 op (10.00 ms of GPU time) not estimated: 1 without a static cost (see "
            "estimate_note)") in page
    assert data["candidates"]["no_gpu_time_count"] == 0
    # its speedup appears only as a bound ("≤ 11.78x"), never as an estimate
    shown = units.fmt_speedup(solver["op_speedup"])
    assert f"≤ {shown}" in page and f">{shown}" not in page
    assert "solve.1" in page


# --- user FPGA targets --------------------------------------------------------------------

def _analyze_with(target):
    return fpga.fpga_candidates(_store(_hlo_text()), target=target)


@pytest.mark.parametrize("target, words", [
    ({"typo_field": 3}, ["typo_field", "memory_channel_bytes_per_s", "link_efficiency"]),
    ({"base": "alveo-u55c", "memory_channel_bytes_per_s": -1}, ["memory_channel_bytes_per_s = -1", "alveo-u55c"]),
    ({"memory_type": "hbm2", "memory_channels": 4, "memory_bytes_per_s": -1}, ["memory_channel_bytes_per_s"]),
    ({"hbm_bytes_per_s": 460e9}, ["hbm_bytes_per_s", "needs memory_channels"]),
    (fpga.FpgaTarget(), ["memory_type is missing", "base=one of alveo-u55c, alveo-u280, alveo-u250"]),
    (fpga.FpgaTarget(memory_type="ddr4"), ["memory_channels is missing", "base=one of alveo-u55c, alveo-u280"]),
    ({"base": "alveo-u55c", "clock_hz": 250}, ["clock_hz = 250 is below 1 MHz", "300e6"]),
    ({"base": "alveo-u55c", "memory_channel_bytes_per_s": 14}, ["memory_channel_bytes_per_s = 14", "not GB/s"]),
    ({"base": "alveo-u55c", "call_latency_s": 10}, ["call_latency_s", "not microseconds"]),
    ({"base": "alveo-u55c", "fp32_flops_per_s": -5}, ["fp32_flops_per_s = -5"]),
    ({"memory_type": "ddr4", "memory_channels": 4, "memory_bytes_per_s": 77e9, "memory_capacity_bytes": 6.4e10,
      "link_bytes_per_s": 15e9, "fp32_flops_per_s": 1e12}, ["sram_bytes is missing"]),
    ({"base": "alveo-u55c", "memory_type": "gddr6"}, ["gddr6", "hbm2", "ddr4"]),
    ({"base": "alveo-u55c", "clock_hz_low": 400e6}, ["clock_hz: low 4e+08 <= 2.22e+08", "clock_hz_high"]),
    ({"base": "alveo-u55c", "stream_efficiency_high": 1.2}, ["stream_efficiency_high = 1.2", "(0, 1]"]),
    ({"base": "alveo-u55c", "random_access_efficiency": 0.16}, ["random_access_efficiency", "is gone",
                                                                 "random_reads_per_s"]),
    (fpga.FpgaTarget(base="alveo-u55c", clock_hz=float("nan")), ["clock_hz"]),
    (fpga.FpgaTarget(base="alveo-u55c", link_efficiency=1.5), ["link_efficiency", "(0, 1]"]),
    (fpga.FpgaTarget(base="alveo-u55c", link_bytes_per_s=float("inf")), ["link_bytes_per_s"]),
    (fpga.FpgaTarget(base="alveo-u55c", dsp_count=2.5), ["dsp_count"]),
    ({"base": "alveo-u55c", "sram_bytes": "lots"}, ["sram_bytes", "number"]),
    (fpga.FpgaTarget(base="stratix-10"), ["stratix-10", "alveo-u55c"]),
    ("stratix-10", ["stratix-10", "alveo-u55c"]),
    (42, ["preset name"]),
])
def test_bad_fpga_targets_are_rejected(target, words):
    with pytest.raises(fpgaprof.InvalidArgumentError) as e:
        _analyze_with(target)
    msg = str(e.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, msg


def test_user_target_keeps_the_preset_name():
    t = _analyze_with(fpga.FpgaTarget(base="versal-v80", memory_bytes_per_s=1e12)).meta["target"]
    assert t["name"] == "versal-v80 (modified)"
    assert t["memory_bytes_per_s"] == pytest.approx(1e12)
    assert t["memory_channel_bytes_per_s"] == pytest.approx(1e12 / 32)
    assert t["description"].endswith("(modified: memory_bytes_per_s)")
    assert t["dsp_count"] == 10848  # the rest from the preset
    same = _analyze_with(fpga.FpgaTarget(base="versal-v80")).meta["target"]
    assert same["name"] == "versal-v80"
    named = _analyze_with({"base": "alveo-u280", "name": "my-u280", "clock_hz": 250e6}).meta["target"]
    assert named["name"] == "my-u280"
    # A complete spec without a base is accepted and called "user".
    full = {k: v for k, v in fpga.presets()[0].items()
            if k not in ("name", "description") and not k.startswith("card_")}
    assert _analyze_with(full).meta["target"]["name"] == "user"
    # A calibrated field given alone is exact (its range collapses to it); with its ends, a range.
    clock = _analyze_with({"base": "alveo-u55c", "clock_hz": 250e6}).meta["target"]
    assert (clock["clock_hz_low"], clock["clock_hz"], clock["clock_hz_high"]) == (250e6, 250e6, 250e6)
    ranged = _analyze_with({"base": "alveo-u55c", "clock_hz": 250e6, "clock_hz_low": 200e6,
                            "clock_hz_high": 300e6}).meta["target"]
    assert (ranged["clock_hz_low"], ranged["clock_hz"], ranged["clock_hz_high"]) == (200e6, 250e6, 300e6)
    # A card without a base takes its memory type's calibration.
    ddr = _analyze_with({"name": "my-ddr", "memory_type": "ddr4", "memory_channels": 2,
                         "memory_channel_bytes_per_s": 19.25e9, "memory_capacity_bytes": 3.2e10,
                         "sram_bytes": 40e6, "link_bytes_per_s": 15.754e9, "fp32_flops_per_s": 1e12}).meta["target"]
    assert ddr["stream_efficiency"] == pytest.approx(0.788675) and ddr["random_granule_bytes"] == 64
    # dsps_per_fma = 0 for a precision means the card does not run it: allowed.
    assert _analyze_with({**full, "dsps_per_fma_fp64": 0}).meta["target"]["card_fp64_flops_per_s"] == 0


def test_user_target_in_flops_per_precision():
    # A card known by its FLOP/s (vendor figure, HLS report) needs no DSP fields.
    card = fpga.FpgaTarget(name="flops-card", memory_type="ddr4", memory_channels=4, memory_bytes_per_s=77e9,
                           memory_capacity_bytes=6.4e10, sram_bytes=54e6, link_bytes_per_s=15.75e9,
                           fp32_flops_per_s=2e12, fp16_flops_per_s=4e12)
    t = _analyze_with(card).meta["target"]
    assert (t["card_fp32_flops_per_s"], t["card_fp16_flops_per_s"], t["card_fp64_flops_per_s"]) == (2e12, 4e12, 0)
    assert t["fp32_flops_per_s"] == 2e12  # as given
    assert t["dsp_count"] == 0
    # On a preset, a given rate replaces the DSP estimate of that precision only (exactly: its
    # range collapses): fp64 stays 9024 x 0.6675 / 14 x 2 x 222e6 = 191.04 GFLOP/s.
    u = _analyze_with(fpga.FpgaTarget(base="alveo-u55c", fp32_flops_per_s=1e12)).meta["target"]
    assert u["card_fp32_flops_per_s"] == 1e12 == u["card_fp32_flops_per_s_low"] == u["card_fp32_flops_per_s_high"]
    assert u["card_fp64_flops_per_s"] == pytest.approx(9024 * 0.6675 / 14 * 2 * 222e6)
    # A preset's own table (with its derived rates) is accepted back as a user card, unchanged.
    p = {k: v for k, v in fpga.presets()[0].items() if k not in ("name", "description")}
    back = _analyze_with(p).meta["target"]
    assert back["card_fp32_flops_per_s"] == pytest.approx(fpga.presets()[0]["card_fp32_flops_per_s"])
    # ... and an edited clock and DSP count in that table count (the derived card_* rates in it
    # are outputs): 2x clock x 2x DSPs = 4x the fp32 rate (the clock given alone is exact).
    edited = _analyze_with({**p, "clock_hz": 444e6, "clock_hz_low": 444e6, "clock_hz_high": 444e6,
                            "dsp_count": 2 * 9024}).meta["target"]
    assert edited["card_fp32_flops_per_s"] == pytest.approx(4 * U55C_FP32)


def test_fpga_target_constructor_typo_is_a_typed_error():
    with pytest.raises(fpgaprof.InvalidArgumentError) as e:
        fpga.FpgaTarget(base="alveo-u55c", clock_mhz=250)
    assert "did you mean clock_hz?" in str(e.value) and "fp32_flops_per_s" in str(e.value)
    with pytest.raises(fpgaprof.InvalidArgumentError):
        fpga.FpgaTarget("alveo-u55c")  # positional: keyword arguments only


# --- HLO export against real XLA output ---------------------------------------------------

def _real_module():
    # One jitted program with a matmul, a sort, a fori_loop (while), reductions and a conv,
    # compiled by XLA on CPU: current XLA prints operands without shapes ("add(%a, %b)").
    from jax import lax

    def f(x, w, k):
        y = jnp.dot(x, w)
        s = jnp.sort(y, axis=0)
        z = lax.fori_loop(0, 5, lambda i, c: c * 1.01 + jnp.sum(c), s)
        c = lax.conv_general_dilated(z[None, None], k, (1, 1), "SAME")
        return jnp.sum(c) + jnp.max(z)

    return jax.jit(f).lower(jnp.ones((16, 16)), jnp.ones((16, 16)), jnp.ones((1, 1, 3, 3))).compile().as_text()


def _xla():
    """XLA's HLO parser from jaxlib: jax._src.lib.hlo on jax 0.10.2, jax._src.lib._jax on 0.10.1
    (the version MBIRJAX 0.7.3 runs with)."""
    lib = pytest.importorskip("jax._src.lib")
    return getattr(lib, "hlo", None) or lib._jax


def test_export_non_fusion_instructions_from_real_xla_output(tmp_path):
    text = _real_module()
    assert "sort(%" in text and "sort(f32" not in text  # operands printed without shapes
    mod = core.hlo.analyze(text)
    comp_of = {c.name: c for c in mod.computations}
    by_opcode = {}
    for c in mod.computations:
        for i in c.instructions:
            by_opcode.setdefault(i.opcode, i)
    wanted = ["dot", "while", "sort", "reduce", "convolution", "get-tuple-element", "tuple"]
    assert set(wanted) <= set(by_opcode), sorted(by_opcode)
    xla_hlo = _xla()
    from jax._src.lib import _jax
    client = jax.devices("cpu")[0].client
    store = store_from_lists({"devices": [DEVICE], "hlo_modules": [{"name": "jit_f", "text": text}]})
    for opcode in wanted:
        ins = by_opcode[opcode]
        out = fpga.export_hlo(store, ins.name, tmp_path / f"{opcode}.hlo")
        xm = xla_hlo.hlo_module_from_text(out)  # XLA's own parser accepts it
        m = core.hlo.analyze(out)
        entry = m.computations[m.entry_index]
        root = entry.instructions[-1]
        assert root.name == ins.name and root.opcode == opcode
        # One parameter per operand, each with the shape of the operand in the original.
        params = [i for i in entry.instructions if i.opcode == "parameter"]
        assert [p.shape.dims for p in params] == [s.dims for s in ins.operand_shapes]
        assert [p.shape.dtype for p in params] == [s.dtype for s in ins.operand_shapes]
        # Every computation it calls, transitively (loop body/condition with their fusions,
        # comparators, reducers), comes along.
        need, stack = set(), list(ins.called_computations)
        while stack:
            c = stack.pop()
            if c not in need:
                need.add(c)
                stack += [n for i in comp_of[c].instructions for n in i.called_computations]
        assert need <= {c.name for c in m.computations}
        # The exported module costs what the instruction cost in the original module ...
        t, c = m.total, ins.cost
        assert (t.flops, t.transcendentals, t.bytes_read, t.bytes_written) == \
            (c.flops, c.transcendentals, c.bytes_read, c.bytes_written), opcode
        # ... and XLA's own cost analysis of the exported module agrees.
        if hasattr(_jax, "hlo_module_cost_analysis"):
            xc = _jax.hlo_module_cost_analysis(client, xm)
            assert xc.get("flops", 0.0) == pytest.approx(c.flops), opcode
            assert xc.get("bytes accessed", 0.0) == pytest.approx(c.bytes_read + c.bytes_written), opcode
    # The matmul: 2 x 16 x 16 x 16 FLOPs.
    assert by_opcode["dot"].cost.flops == 2 * 16 ** 3
    # The loop body's stack-frame references resolve: the tables come along.
    assert "StackFrames" in (tmp_path / "while.hlo").read_text()
    # Every instruction of the module but parameters can be exported and re-parsed by XLA.
    for c in mod.computations:
        for i in c.instructions:
            if i.opcode != "parameter":
                xla_hlo.hlo_module_from_text(fpga.hlo_module_for_op(text, i.name))
    with pytest.raises(fpgaprof.InvalidArgumentError, match="parameter"):
        fpga.hlo_module_for_op(text, next(i.name for i in mod.computations[mod.entry_index].instructions
                                          if i.opcode == "parameter"))


def test_export_asks_for_the_module_when_the_name_is_ambiguous(tmp_path):
    def s1(x):
        return jnp.sort(x) * 2

    def s2(x):
        return jnp.sort(x) * 2

    t8 = jax.jit(s1).lower(jnp.ones((8,))).compile().as_text()
    t16 = jax.jit(s2).lower(jnp.ones((16,))).compile().as_text()
    names8 = {i.name for c in core.hlo.analyze(t8).computations for i in c.instructions if i.opcode == "sort"}
    names16 = {i.name for c in core.hlo.analyze(t16).computations for i in c.instructions if i.opcode == "sort"}
    common = sorted(names8 & names16)
    assert common, (names8, names16)
    op = common[0]
    store = store_from_lists({"devices": [DEVICE], "hlo_modules": [
        {"name": "jit_s1", "text": t8}, {"name": "jit_s2", "text": t16}]})
    with pytest.raises(fpgaprof.InvalidArgumentError) as e:
        fpga.export_hlo(store, op, tmp_path / "x.hlo")
    assert "jit_s1" in str(e.value) and "jit_s2" in str(e.value) and "module=" in str(e.value)
    assert not (tmp_path / "x.hlo").exists()
    out = fpga.export_hlo(store, op, tmp_path / "x.hlo", module="jit_s2")
    entry = core.hlo.analyze(out)
    assert entry.computations[entry.entry_index].instructions[0].shape.dims == [16]
    with pytest.raises(fpgaprof.InvalidArgumentError, match="jit_s1"):
        fpga.export_hlo(store, op, tmp_path / "y.hlo", module="jit_nope")
    # The same module captured twice (two program ids, same text) is not ambiguous.
    twice = store_from_lists({"devices": [DEVICE], "hlo_modules": [
        {"name": "jit_s1", "text": t8}, {"name": "jit_s1", "text": t8}]})
    assert "f32[8]" in fpga.export_hlo(twice, op, tmp_path / "z.hlo")


# --- regions: edge cases found in review -----------------------------------------------------

def test_region_covering_overlapping_kernels_gets_a_positive_workload_speedup():
    # Two streams: the four kernels overlap; the program (and the one region around all of it)
    # took 60 us while its kernels add up to 110 us. Amdahl with T = 60 us subtracts the 110 us
    # sum: T - gpu + fpga_total = 60 - 110 + 20.5 < 0, and workload_speedup comes out as 0.0
    # ("moving the whole program to the card stops it"). Moving everything to a card that
    # needs fpga_total_s must give a positive speedup (here at most T / fpga_total_s).
    ks = [("broadcast_add_fusion", 0, 30_000), ("broadcast_add_fusion", 0, 30_000),
          ("ynn_fusion", 10_000, 40_000), ("wrapped_reduce", 20_000, 10_000)]
    store = store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": n, "start_ns": a, "end_ns": a + d, "grid": 1000, "region": 0} for n, a, d in ks],
        "regions": [{"name": "main", "start_ns": 0, "end_ns": 60_000, "thread_id": 1}],
        "hlo_modules": [{"name": "jit_f", "text": _hlo_text()}],
        "start_ns": 0, "end_ns": 60_000,
    })
    row = fpga.fpga_candidates(store, target="alveo-u55c", by="region", inputs_cross_link=False)[0]
    assert row["gpu_time_ns"] == 110_000
    assert 0 < row["workload_speedup"] <= 60e-6 / row["fpga_total_s"] + 1e-9


def _two_kernels_in_regions(second_start_ns, second_region, regions):
    """A 40 ns broadcast_add_fusion at 10 ns in region 0 and a 40 ns ynn_fusion at
    `second_start_ns` in region `second_region`, over `regions`."""
    return store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": "broadcast_add_fusion", "start_ns": 10, "end_ns": 50, "grid": 1000, "region": 0},
                    {"name": "ynn_fusion", "start_ns": second_start_ns, "end_ns": second_start_ns + 40,
                     "grid": 1000, "region": second_region}],
        "regions": regions,
        "hlo_modules": [{"name": "jit_f", "text": _hlo_text()}],
        "start_ns": 0, "end_ns": 1000,
    })


def test_back_to_back_regions_are_siblings_not_nested():
    # Region A [0, 100] and region B [100, 200] on one thread, both outermost (parent unset,
    # as the recorder leaves it for a root). One clock tick between `with region("A")` ending
    # and `with region("B")` starting is enough for equal timestamps on a coarse clock.
    # correlate() pops an interval that ends at the next one's start (end <= start), but
    # RegionLocator (used by rank_fpga_regions and the region roll-ups) only pops end < start,
    # so B was ranked as "A > B" and its kernels were counted inside A.
    s = _two_kernels_in_regions(150, 1, [{"name": "A", "start_ns": 0, "end_ns": 100, "thread_id": 1},
                                         {"name": "B", "start_ns": 100, "end_ns": 200, "thread_id": 1}])
    rows = {r["region"]: r for r in fpga.fpga_candidates(s, by="region")}
    assert set(rows) == {"A", "B"}
    assert rows["A"]["kernel_count"] == 1


def test_a_region_name_containing_the_path_separator_does_not_swallow_another_path():
    # Groups are keyed by the joined path string, so an outermost region literally named
    # "x > y" and a region "y" nested in "x" became one group (depth 0, 2 instances), and "x"
    # itself - which holds y's kernel - disappeared from the ranking. Key groups by
    # (parent group, name) instead.
    s = _two_kernels_in_regions(250, 2, [{"name": "x > y", "start_ns": 0, "end_ns": 100, "thread_id": 1},
                                         {"name": "x", "start_ns": 200, "end_ns": 400, "thread_id": 1},
                                         {"name": "y", "start_ns": 210, "end_ns": 300, "thread_id": 1,
                                          "parent": 1}])
    rows = list(fpga.fpga_candidates(s, by="region"))
    outer_x = [r for r in rows if r["name"] == "x" and r["depth"] == 0]
    assert len(outer_x) == 1 and outer_x[0]["kernel_count"] == 1
    assert sorted((r["name"], r["depth"], r["instances"]) for r in rows) == [("x", 0, 1), ("x > y", 0, 1), ("y", 1, 1)]


def test_printed_tables_are_readable_text():
    """print(table) shows the main columns, formatted by name, in rank order; every value
    still sits in the rows. Expected cells follow from the rows (checked above by hand) and
    the formatting rules: *_ns as time, *_share as percent, *_speedup as 'x', score 3 digits."""
    store = _store(_hlo_text())
    table = fpga.fpga_candidates(store, target="alveo-u55c")
    text = str(table)
    lines = text.splitlines()
    assert lines[0] == f"FPGA offload candidates on alveo-u55c: HLO ops: {len(table)} rows"
    # headers of auto-scaled time columns carry no unit ("60.0 µs" under gpu_time, not gpu_time_ns)
    # the deciding columns first: the verdict, the speedups, GPU time and what it could save
    # the deciding columns first: the verdict, the speedups, the verdict in time and energy and
    # the energy ratios, GPU time and what it could save
    assert lines[1].split() == ["rank", "op", "verdict", "op_speedup", "restructured_op_speedup",
                                "energy_verdict", "energy_ratio", "restructured_energy_verdict",
                                "restructured_energy_ratio", "gpu_time",
                                "could_save", "workload_speedup", "module", "score", "time_share", "fpga_total",
                                "pattern", "card_limit", "estimate_note"]
    row = next(r for r in table if r["op"] == "broadcast_add_fusion")
    line = next(ln for ln in lines[2:] if "broadcast_add_fusion" in ln)
    assert line.split()[0] == str(row["rank"])
    from fpgaprof.base.units import fmt_speedup_range
    # each speedup with its range beside it: "0.033x (0.0086-0.081x)"
    assert (f"{row['op_speedup']:.2g}x ({fmt_speedup_range(row['op_speedup_low'], row['op_speedup_high'])})"
            in line or f"{row['op_speedup']:.2f}x ({fmt_speedup_range(row['op_speedup_low'], row['op_speedup_high'])})"
            in line)
    assert f"{100 * row['time_share']:.1f} %" in line       # 60 of 110 us: 54.5 %
    assert "54.5 %" in line and "60.0 µs" in line             # gpu_time_ns = 60,000 ns
    assert f"{row['score']:.3g}" in line and row["verdict"] == "no" and line.split()[2] == "no"
    # Only the ops that gain (op_speedup > 1) are combined: none here (every op moves more over
    # PCIe than it takes on the GPU).
    assert table.meta["combined_count"] == sum(1 for r in table if r["op_speedup"] > 1) == 0
    assert lines[-1] == "  no op gains from offloading to alveo-u55c as compiled"
    # Rows are untouched: dicts with every column.
    assert isinstance(table[0], dict) and "memory_boundness" in table[0]

    rl = roofline.roofline(store, by="op")
    assert str(rl).splitlines()[0] == f"roofline by op: {len(rl)} rows"
    add = next(r for r in rl if r["op"] == "broadcast_add_fusion")
    rline = next(ln for ln in str(rl).splitlines() if "broadcast_add_fusion" in ln)
    assert f"{add['percent_of_roof']:.3g} %" in rline        # a percentage already: not x 100

    # Many rows: the first 20 and a count of the rest.
    from fpgaprof.views.tables import rows_text
    many = [{"rank": i + 1, "op": f"op{i}", "score": 1.0 / (i + 1), "estimate_note": "x" * 60}
            for i in range(25)]
    t = rows_text(many, "t").splitlines()
    assert t[0] == "t: 25 rows" and t[1].split() == ["rank", "op", "score", "estimate_note"]
    assert len(t) == 2 + 20 + 1
    assert t[-1] == "  … 5 more rows (every row and column: .to_pandas() or .columns())"
    assert t[2].endswith("x" * 39 + "…")                     # cells are cut at 40 characters


def test_an_empty_table_says_why():
    empty = core.TraceStore()
    t = fpga.fpga_candidates(empty, target="versal-v80", by="region")
    assert str(t) == ("FPGA offload candidates on versal-v80: region paths as whole units: no rows "
                      "(the trace has no GPU kernels: trace on a machine with an NVIDIA GPU)\n")


def test_run_and_report_digest_lists_the_best_candidates():
    """The closing lines of `fpgaprof run`/`report`: built only from summary.json, so the
    terminal shows report.html's numbers. Region rows and the op rows come from the summary's
    candidate tables (checked against prof.fpga_candidates above)."""
    from fpgaprof.report import model, summary_json
    from fpgaprof.report.digest import digest

    s = json.loads(summary_json.dumps(model.collect(_region_store(_hlo_text()))))
    text = digest(s, top=1)
    lines = text.splitlines()
    # The answer first: its head, columns, one row per region (best 1 and every region holding
    # more GPU time), and what it rests on.
    a = s["answer"]
    assert lines[0] == f"FPGA answer per operation (region) and size, best of {len(fpga.presets())} cards:"
    assert len(fpga.presets()) == 9  # the AMD and the Intel presets
    # the answer's GPU time is its kernels' only (a region's table adds copies and memsets)
    assert lines[1].split()[:5] == ["operation", "size", "gpu", "time", "(kernels)"]
    first = a["items"][0]
    assert lines[2].split()[0] == first["operation"] and first["verdict"] in lines[2]
    rests = next(i for i, ln in enumerate(lines) if ln.startswith("  rests on: "))
    lines = lines[rests + 1 :]
    tot = s["totals"]
    assert lines[0].startswith(f"fpgaprof: {tot['kernel_count']} kernels, ")
    # second line: link use, memory peak, warnings count (test_reports_constructed.py)
    n = len(s["warnings"])
    assert lines.pop(1) == f"  {n} warning{'s' if n != 1 else ''} in report.html"  # no copy, no alloc
    regions, ops = s["candidates"]["regions"], s["candidates"]
    assert lines[1].startswith(f"FPGA offload on alveo-u55c, regions as whole units (best 1 of {regions['count']}")
    assert lines[2].split() == ["rank", "region", "verdict", "region_speedup", "restructured_region_speedup",
                                "energy_verdict", "energy_ratio", "gpu_time", "could_save", "estimate_note"]
    best = regions["items"][0]
    assert lines[3].split()[:2] == ["1", best["region"]]
    assert f"{best['region_speedup']:.2f}x" in lines[3] and best["verdict"] in lines[3]
    i = next(k for k, ln in enumerate(lines)
             if ln.startswith(f"FPGA offload on alveo-u55c, HLO ops (best 1 of {ops['count']}"))
    assert lines[i + 2].split()[:2] == ["1", ops["items"][0]["op"]]
    w = ops["what_if"]
    assert w["combined_count"] == 0
    assert lines[-1] == "  no op gains from offloading to alveo-u55c as compiled"
    # Without a GPU: the head line says so, each ranking says why it is empty.
    empty = json.loads(summary_json.dumps(model.collect(core.TraceStore())))
    e = digest(empty).splitlines()
    assert e.pop(0).startswith("FPGA answer: not available (")
    assert e[0].startswith("fpgaprof: ") and "no GPU data" in e[0]
    assert e.pop(1) == f"  {len(empty['warnings'])} warning in report.html"
    assert e[1].startswith("FPGA offload on alveo-u55c, regions as whole units: not available (")
    assert e[2].startswith("FPGA offload on alveo-u55c, HLO ops: not available (")


# --- random access: case D of docs/fpga-model.md ------------------------------------------

# A gather of 1e6 f32 elements with s32 indices (the cost model: 4e6 B gathered + 4e6 B of
# indices read, 4e6 B written) feeding an elementwise add (1e6 FLOP, 8e6 + 4e6 B).
CASE_D_HLO = """HloModule jit_case_d

ENTRY main {
  x = f32[4000000]{0} parameter(0)
  i = s32[1000000,1]{1,0} parameter(1)
  gather = f32[1000000]{0} gather(x, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  ROOT add_fusion = f32[1000000]{0} add(gather, gather)
}
"""


def _case_d_store():
    # gather 100 us, add_fusion 20 us, both in region "recon"; the program took 1 ms.
    return store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": "gather", "start_ns": 1_000, "end_ns": 101_000, "grid": 1000, "region": 0},
                    {"name": "add_fusion", "start_ns": 200_000, "end_ns": 220_000, "grid": 1000, "region": 0}],
        "regions": [{"name": "recon", "start_ns": 0, "end_ns": 999_999, "thread_id": 1}],
        "hlo_modules": [{"name": "jit_case_d", "text": CASE_D_HLO}],
        "start_ns": 0, "end_ns": 1_000_000,
    })


def test_case_d_gather_at_the_measured_random_rates():
    """docs/fpga-model.md, case D, on the U55C's nominal constants, data resident on the card.
    gather: 1e6 data-dependent 4-byte reads into the 16 MB table x, each one 32-byte access
    (the HBM granule), at 92.58 M accesses/s per pseudo-channel on 71.875 % of the 32 (23):
    1e6 / (23 x 92.5786e6 = 2.12931e9/s) = 469.64 us; its indices read and result written
    stream (8e6 B / 301.58 GB/s = 26.53 us): 496.16 us, + 40 us launch = 536.16 us.
    Effective: the 12e6 B it moves / (496.16 us x 460 GB/s) = 0.0526 of the card's peak."""
    ins = fpgaprof.hlo.analyze(CASE_D_HLO).instruction("gather")
    assert ins.pattern == "gather_scatter" and ins.bytes_read + ins.bytes_written == 12e6
    store = _case_d_store()
    table = fpga.fpga_candidates(store, target="alveo-u55c", inputs_cross_link=False)
    rows = {r["op"]: r for r in table}
    g, a = rows["gather"], rows["add_fusion"]
    assert (g["stream_bytes"], g["random_bytes"]) == (8e6, 4e6)
    assert g["card_memory_s"] == pytest.approx(496.163e-6, rel=1e-5)
    assert g["card_time_s"] == pytest.approx(536.163e-6, rel=1e-5)
    assert g["memory_efficiency"] == pytest.approx(0.0525774, rel=1e-4)
    assert g["card_limit"] == "random access"
    assert g["op_speedup"] == pytest.approx(100 / 536.163, rel=1e-5)             # 0.187
    assert g["workload_speedup"] == pytest.approx(1000 / (1000 - 100 + 536.163), rel=1e-5)
    # its range: every constant at its fast end (147.3 M accesses/s, all 32 channels, 16 us
    # launch) 246.92 us; at its slow end (74.28 M/s, half the channels, 100 us) 982.23 us
    assert g["card_time_low_s"] == pytest.approx(246.921e-6, rel=1e-5)
    assert g["card_time_high_s"] == pytest.approx(982.233e-6, rel=1e-5)
    # Restructured: the 16 MB table fits the U55C's on-chip room (half of 44.68 MB): it is read
    # once with the indices and the result written once (24e6 B / 301.58 GB/s = 79.58 us),
    # the 1e6 reads served on chip at 129.60 per cycle x 222 MHz (34.76 us, under the 79.58 us
    # stream): 79.58 + 40 = 119.58 us.
    assert g["restructured_onchip"] is True
    assert g["restructured_bytes"] == 24e6
    # that figure rests on the SpMV designs' parallelism and is labelled so; the streaming
    # add_fusion's is not
    assert g["restructured_basis"].startswith("a designer's target") and "onchip_lanes" in g["restructured_basis"]
    assert a["restructured_basis"] == ""
    assert g["restructured_card_time_s"] == pytest.approx(119.580e-6, rel=1e-5)
    assert g["restructured_op_speedup"] == pytest.approx(100 / 119.580, rel=1e-5)
    assert g["scenario"] == "neither"                                             # 0.19x / 0.84x
    # add_fusion streams: 12e6 B / 301.58 GB/s = 39.79 us (+ 40 us); restructured it reads its
    # one distinct input once: 8e6 B, 26.53 us (+ 40 us).
    assert a["memory_efficiency"] == pytest.approx(0.71875 * 0.91216)
    assert a["card_memory_s"] == pytest.approx(39.7901e-6, rel=1e-5)
    assert a["restructured_card_time_s"] == pytest.approx(66.5267e-6, rel=1e-5)
    assert table.meta["combined_count"] == 0 and table.meta["combined_speedup"] == 1.0
    # The printed table shows what limits the card next to the pattern.
    line = next(ln for ln in str(table).splitlines() if ln.split()[1:2] == ["gather"])
    assert "gather_scatter" in line and "random access" in line
    # Region "recon" (one call): the ops one after another, 496.16 + 39.79 us + one launch =
    # 575.95 us; restructured as one dataflow design: x and i read and the result written once
    # (24e6 B: 79.58 us; the table on chip), + 40 us = 119.58 us.
    reg = fpga.fpga_candidates(store, target="alveo-u55c", by="region", inputs_cross_link=False)[0]
    assert reg["region"] == "recon"
    assert reg["random_access_bytes"] == 4e6
    assert reg["restructured_basis"] == fpga.RESTRUCTURED_ONCHIP_BASIS
    assert reg["card_time_s"] == pytest.approx(575.953e-6, rel=1e-5)
    assert reg["memory_efficiency"] == pytest.approx(0.0973479, rel=1e-4)
    assert reg["region_speedup"] == pytest.approx(120 / 575.953, rel=1e-5)
    assert reg["restructured_card_time_s"] == pytest.approx(119.580e-6, rel=1e-5)
    assert reg["restructured_region_speedup"] == pytest.approx(120 / 119.580, rel=1e-5)


def test_case_d_a_card_with_faster_random_reads_is_one_setting_away():
    # random_reads_per_s at 10x the measured rate: a pseudo-channel then runs out of bytes
    # first: 32-byte accesses at 14.375 GB/s x 0.91216 = 409.76 M/s, so the random part drops
    # from 469.64 to 1e6 / (23 x 409.76e6) = 106.11 us: 106.11 + 26.53 + 40 = 172.63 us.
    fast = fpga.FpgaTarget(base="alveo-u55c", random_reads_per_s=925.786e6)
    table = fpga.fpga_candidates(_case_d_store(), target=fast, inputs_cross_link=False)
    g = {r["op"]: r for r in table}["gather"]
    assert table.meta["target"]["name"] == "alveo-u55c (modified)"
    per_channel = min(925.786e6, 14.375e9 * 0.91216 / 32)
    assert g["card_time_s"] == pytest.approx((1e6 / (23 * per_channel) + 8e6 / U55C_STREAM + 40e-6), rel=1e-6)
    # given alone, the rate is exact: no range from it (the other constants still spread)
    assert table.meta["target"]["random_reads_per_s_low"] == 925.786e6


def test_case_d_over_pcie_scores_by_hand():
    # Over PCIe gen3 x16 (11.307 GB/s, 13.01 us per buffer): the gather moves its inputs x
    # (16e6 B) and i (4e6 B) in and its result (4e6 B) out: 24e6 / 11.307e9 + 3 x 13.01 us =
    # 2161.54 us; link_factor = 100 / (100 + 2161.54) = 0.044218;
    #   score 100/120 x (0.25 + 0.75 x 1) x 0.4 x 1 x 0.044218 = 0.014739
    # add_fusion: 4e6 in (its one distinct input), 4e6 out, 2 buffers: 733.52 us;
    #   20 / 753.52 = 0.026542; score 20/120 x (0.25 + 0.75 x 0.993333) x 1 x 1 x 0.026542 = 0.0044015
    # region recon: one call of jit_case_d (x, i in; the result out: 24e6 B, 3 buffers):
    #   2161.54 us; 120 / 2281.54 = 0.052596; score (0.25 + 0.75 x 0.998889) x 0.5 x 0.052596 = 0.026276
    rows = {r["op"]: r for r in fpga.fpga_candidates(_case_d_store(), target="alveo-u55c")}
    g, a = rows["gather"], rows["add_fusion"]
    assert g["transfer_bytes"] == 24e6 and a["transfer_bytes"] == 8e6
    assert g["transfer_s"] == pytest.approx(2161.54e-6, rel=1e-5)
    assert g["link_factor"] == pytest.approx(0.0442176, rel=1e-4)
    assert g["score"] == pytest.approx(0.0147392, rel=1e-4)
    assert a["transfer_s"] == pytest.approx(733.524e-6, rel=1e-5)
    assert a["link_factor"] == pytest.approx(0.0265420, rel=1e-4)
    assert a["score"] == pytest.approx(0.00440154, rel=1e-4)
    reg = fpga.fpga_candidates(_case_d_store(), target="alveo-u55c", by="region")[0]
    assert reg["transfer_s"] == pytest.approx(2161.54e-6, rel=1e-5)
    assert reg["link_factor"] == pytest.approx(0.0525960, rel=1e-4)
    assert reg["score"] == pytest.approx(0.0262761, rel=1e-4)


@pytest.mark.parametrize("slow, fast", [
    (fpga.FpgaTarget(base="alveo-u55c"), fpga.FpgaTarget(base="alveo-u55c", random_reads_per_s=925.786e6,
                                                        random_reads_per_s_low=925.786e6,
                                                        random_reads_per_s_high=925.786e6)),
    (fpga.FpgaTarget(base="alveo-u55c", memory_channel_bytes_per_s=7.1875e9), fpga.FpgaTarget(base="alveo-u55c")),
    (fpga.FpgaTarget(base="alveo-u55c", channel_share=0.5, channel_share_low=0.5, channel_share_high=0.5),
     fpga.FpgaTarget(base="alveo-u55c", channel_share=1.0, channel_share_low=1.0, channel_share_high=1.0)),
], ids=["random-reads-1x-vs-10x", "hbm-230-vs-460", "half-vs-all-channels"])
@pytest.mark.parametrize("by", ["op", "region"])
def test_a_slower_card_never_scores_higher(slow, fast, by):
    # Over PCIe an earlier link_factor, card / (card + transfer), scored a gather higher on the
    # slower card. The score must not rise when only the card's memory gets slower.
    key = "op" if by == "op" else "region"
    s = {r[key]: r for r in fpga.fpga_candidates(_case_d_store(), target=slow, by=by)}
    f = {r[key]: r for r in fpga.fpga_candidates(_case_d_store(), target=fast, by=by)}
    assert set(s) == set(f)
    slower = [k for k in s if s[k]["card_time_s"] > f[k]["card_time_s"]]
    assert slower, "premise: the slow card is slower on something"
    for k in s:
        assert s[k]["card_time_s"] >= f[k]["card_time_s"]
        assert s[k]["score"] <= f[k]["score"], (k, s[k]["score"], f[k]["score"])


@pytest.mark.parametrize("field, bad", [("random_reads_per_s", 0), ("random_reads_per_s", -5),
                                        ("stream_efficiency", 1.01), ("channel_share", float("nan")),
                                        ("onchip_share", 0)])
def test_calibrated_fields_are_validated(field, bad):
    with pytest.raises(fpgaprof.InvalidArgumentError, match=field):
        fpga.fpga_candidates(_case_d_store(), target=fpga.FpgaTarget(base="alveo-u55c", **{field: bad}))


def test_memory_efficiency_and_ranges_in_summary_json_and_html():
    from fpgaprof.report import html, model, summary_json

    s = model.collect(_case_d_store())
    data = json.loads(summary_json.dumps(s))
    items = {r["op"]: r for r in data["candidates"]["items"]}
    assert items["gather"]["memory_efficiency"] == pytest.approx(0.0525774, rel=1e-4)  # case D by hand, above
    assert items["add_fusion"]["memory_efficiency"] == pytest.approx(0.71875 * 0.91216)
    for r in items.values():
        assert r["op_speedup_low"] <= r["op_speedup"] <= r["op_speedup_high"]
        assert r["scenario"] in ("as compiled", "restructured only", "neither")
    region = data["candidates"]["regions"]["items"][0]
    assert region["random_access_bytes"] == 4e6
    assert region["region_speedup_low"] <= region["region_speedup"] <= region["region_speedup_high"]
    what_if = data["candidates"]["what_if"]
    assert what_if["target"]["random_reads_per_s"] == pytest.approx(92.5786e6)
    assert what_if["combined_speedup_low"] <= what_if["combined_speedup"] <= what_if["combined_speedup_high"]
    page = html.render(s)
    assert "memory_efficiency" in page and "restructured_op_speedup" in page
    from fpgaprof.base.units import fmt_speedup_range
    g = items["gather"]
    assert fmt_speedup_range(g["op_speedup_low"], g["op_speedup_high"]) in page


def _spmv_text():
    # An SpMV in coordinate form of 1e6 x 1e6 with 3e6 nonzeros (density 3e-6), XLA's CPU HLO.
    from fpgaprof.fpga_validation import BUILDERS

    fn, args = BUILDERS["spmv"](1_000_000, 1_000_000, 3_000_000, "float32")
    return jax.jit(fn).lower(*args).compile().as_text()


def _big_gather_text():
    # A gather of 2^20 elements from a 256 MB f32 table: too large for any card's chip, so a
    # region holding it keeps its ops off chip together. XLA's CPU HLO.
    return jax.jit(lambda t, i: t[i]).lower(jax.ShapeDtypeStruct((1 << 26,), jnp.float32),
                                            jax.ShapeDtypeStruct((1 << 20,), jnp.int32)).compile().as_text()


def test_a_region_running_a_structure_dependent_module_gets_the_as_compiled_slow_end():
    # docs/fpga-model.md, "When the structure decides, the slow end is as compiled". The SpMV
    # of 1e6 x 1e6 with 3e6 nonzeros (density 3e-6), compiled by XLA into a gather fusion, a
    # broadcast and a scatter: no op alone is marked, the function is (its gather and scatter as
    # one design), as estimate_hlo says. In a trace, the region that runs it ("outer > spmv"),
    # and the region around it ("outer"), which also runs a gather from a 256 MB table (so that
    # its ops together do not fit on chip, and its own dataflow design is not marked: the mark
    # comes from the module it runs), take the as-compiled slow end as their restructured slow
    # end (same launches on both sides: the equality is exact); a region running the dense
    # jit_f alone ("dense") keeps its design's slow end.
    spmv = _spmv_text()
    static = fpga.estimate_hlo(spmv, target="alveo-u280")
    assert [r["restructured_structure_dependent"] for r in static] == [False, False, False]
    assert [n for n in static.notes if "row imbalance and column spread" in n]
    assert static.restructured_card_time_range_s[1] == pytest.approx(static.card_time_range_s[1], rel=1e-12)
    sparse_ops = [r["op"] for r in static]
    big = _big_gather_text()
    big_static = fpga.estimate_hlo(big, target="alveo-u280")
    assert not [n for n in big_static.notes if "row imbalance and column spread" in n]
    big_ops = [r["op"] for r in big_static if r["random_bytes"] > 0]
    assert big_ops and not any(r["restructured_onchip"] for r in big_static)  # 256 MB stays in HBM
    ks = [(op, 10_000 * i, 5_000, 1) for i, op in enumerate(sparse_ops)]
    ks += [(op, 60_000 + 10_000 * i, 5_000, 0) for i, op in enumerate(big_ops)]
    ks += [("broadcast_add_fusion", 100_000, 30_000, 0), ("ynn_fusion", 200_000, 40_000, 2),
           ("wrapped_reduce", 300_000, 10_000, 2)]
    store = store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": n, "start_ns": s, "end_ns": s + d, "grid": 1000, "region": r} for n, s, d, r in ks],
        "regions": [{"name": "outer", "start_ns": 0, "end_ns": 149_999, "thread_id": 1},
                    {"name": "spmv", "start_ns": 0, "end_ns": 49_999, "thread_id": 1, "parent": 0},
                    {"name": "dense", "start_ns": 150_000, "end_ns": 399_999, "thread_id": 1}],
        "hlo_modules": [{"name": "jit_matvec", "text": spmv}, {"name": "jit_f", "text": _hlo_text()},
                        {"name": "jit__lambda", "text": big}],
        "start_ns": 0, "end_ns": 1_000_000,
    })
    rows = {r["region"]: r for r in fpga.fpga_candidates(store, target="alveo-u280", by="region")}
    assert set(rows) == {"outer", "outer > spmv", "dense"}
    for name in ("outer", "outer > spmv"):
        r = rows[name]
        assert r["restructured_card_time_high_s"] == pytest.approx(r["card_time_high_s"], rel=1e-12)
        assert r["restructured_card_time_s"] < r["card_time_s"] / 10
        assert r["restructured_card_energy_high_j"] == pytest.approx(r["card_energy_high_j"], rel=1e-12)
        assert r["restructured_structure_dependent"] is True
        assert "restructured slow end as compiled" in r["estimate_note"]
    dense = rows["dense"]
    assert dense["restructured_card_time_high_s"] < dense["card_time_high_s"]
    assert dense["restructured_structure_dependent"] is False and dense["estimate_note"] == ""


def _spmv_trace():
    """The SpMV module's HLO and a trace of it: each op one kernel of 5 us inside region "spmv"."""
    spmv = _spmv_text()
    store = store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": r["op"], "start_ns": 10_000 * i, "end_ns": 10_000 * i + 5_000, "grid": 1000,
                     "region": 0} for i, r in enumerate(fpga.estimate_hlo(spmv, target="alveo-u280"))],
        "regions": [{"name": "spmv", "start_ns": 0, "end_ns": 49_999, "thread_id": 1}],
        "hlo_modules": [{"name": "jit_matvec", "text": spmv}],
        "start_ns": 0, "end_ns": 1_000_000,
    })
    return spmv, store


def test_the_trace_ranking_takes_the_users_row_imbalance():
    # fpga_candidates(..., row_imbalance=delta) applies delta as estimate_hlo does: each op's
    # restructured card time in the ranking is the static estimate's of the same op with the same
    # delta (the ranking adds one launch per execution: card_latency_s). The SpMV's scatter at
    # delta 4.88: its PE work 4x (4.88 / 1.22), its vectors not, so between 1.5x and 4x of the
    # balanced figure (docs/fpga-model.md, "Row imbalance"); the gather fusion and the broadcast
    # are no scatters and do not move. The region of the module grows with it; its slow end is
    # as compiled either way (the structure decides, above).
    spmv, store = _spmv_trace()
    by_delta = {}
    for delta in (None, 4.88):
        static = {r["op"]: r for r in fpga.estimate_hlo(spmv, target="alveo-u280", row_imbalance=delta)}
        ops = fpga.fpga_candidates(store, target="alveo-u280", row_imbalance=delta)
        assert {r["op"] for r in ops} == set(static)
        for r in ops:
            assert r["restructured_card_time_s"] - r["card_latency_s"] == pytest.approx(
                static[r["op"]]["restructured_card_time_s"], rel=1e-12)
        regions = fpga.fpga_candidates(store, target="alveo-u280", by="region", row_imbalance=delta)
        assert ops.meta["row_imbalance"] == delta and regions.meta["row_imbalance"] == delta
        given = "row imbalance given: 4.88 (HiSpMV's delta)"
        assert (given in str(ops)) == (delta is not None) and (given in str(regions)) == (delta is not None)
        by_delta[delta] = ({r["op"]: r for r in ops}, regions[0])
    (ops0, region0), (ops1, region1) = by_delta[None], by_delta[4.88]
    scatter = [op for op in ops0 if "scatter" in op]
    assert len(scatter) == 1
    ratio = ops1[scatter[0]]["restructured_card_time_s"] / ops0[scatter[0]]["restructured_card_time_s"]
    assert 1.5 < ratio < 4
    for op in set(ops0) - set(scatter):
        assert ops1[op]["restructured_card_time_s"] == ops0[op]["restructured_card_time_s"]
    assert region1["restructured_card_time_s"] > region0["restructured_card_time_s"]
    assert region1["restructured_card_time_high_s"] == pytest.approx(region1["card_time_high_s"], rel=1e-12)
    for bad in (0.5, float("nan"), -2.0):
        with pytest.raises(fpgaprof.InvalidArgumentError, match="row_imbalance"):
            fpga.fpga_candidates(store, target="alveo-u280", row_imbalance=bad)
    with pytest.raises(fpgaprof.InvalidArgumentError, match="row_imbalance must be a number"):
        fpga.fpga_candidates(store, target="alveo-u280", by="region", row_imbalance="4")


def test_the_report_takes_the_users_row_imbalance(tmp_path):
    # `fpgaprof report TRACE --row-imbalance DELTA` (report.write_all(row_imbalance=)): the
    # report's rankings are fpga_candidates' with the same delta, its answer says which delta it
    # took, in summary.json, the printed digest and report.html; a bad ratio fails before the
    # trace is read and writes nothing. The trace of the test above (_spmv_trace), saved.
    import subprocess
    import sys

    spmv, store = _spmv_trace()
    trace = tmp_path / "spmv.fpgaprof"
    store.save(str(trace))

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "fpgaprof.cli", "report", str(trace), *args],
                              capture_output=True, text=True)

    for delta in (None, 4.88):
        out = tmp_path / f"out-{delta}"
        r = cli("--target", "alveo-u280", "-o", str(out), "--no-timeline",
                *(["--row-imbalance", str(delta)] if delta else []))
        assert r.returncode == 0, r.stderr
        summary = json.loads((out / "summary.json").read_text())
        assert summary["answer"]["row_imbalance"] == delta
        ranked = {row["op"]: row for row in fpga.fpga_candidates(store, target="alveo-u280",
                                                                  row_imbalance=delta)}
        items = summary["candidates"]["items"]
        assert items
        for i in items:
            assert i["restructured_card_time_s"] == pytest.approx(
                ranked[i["op"]]["restructured_card_time_s"], rel=1e-12)
        given = "row imbalance given: 4.88 (HiSpMV's delta), applied to every restructured scatter"
        assert (given in r.stdout) == (delta is not None)
        from fpgaprof.base.markup import esc

        assert (esc(given) in (out / "report.html").read_text()) == (delta is not None)
    r = cli("-o", str(tmp_path / "bad"), "--row-imbalance", "0.5")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "--row-imbalance 0.5: give HiSpMV's delta, a number from 1 (balanced) to 1e9" in r.stderr
    r = cli("-o", str(tmp_path / "bad"), "--row-imbalance", "0")  # "not known": leave it out
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1
    assert "--row-imbalance 0: give HiSpMV's delta (>= 1), or leave the option out" in r.stderr
    assert not (tmp_path / "bad").exists()
    # `export --format json` (the summary) takes it too.
    r = subprocess.run([sys.executable, "-m", "fpgaprof.cli", "export", str(trace), "--format", "json",
                        "--target", "alveo-u280", "--row-imbalance", "4.88"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["answer"]["row_imbalance"] == 4.88


def test_a_modules_mark_is_taken_for_one_call():
    # An SpMV of 300,000 x 300,000 with 9.5e6 nonzeros (density 1.06e-4, above 1e-4; y 1.2 MB in
    # one 4 MiB tile): estimate_hlo does not mark it. Called four times inside "outer", with a
    # gather from a 256 MB table that keeps the region's ops off chip together, the region is
    # not marked either: the module is judged for one call (four calls' outputs, 4.8 MB, would
    # have been a tiled output no single call has).
    from fpgaprof.fpga_validation import BUILDERS

    fn, args = BUILDERS["spmv"](300_000, 300_000, 9_500_000, "float32")
    spmv = jax.jit(fn).lower(*args).compile().as_text()
    static = fpga.estimate_hlo(spmv, target="alveo-u280")
    assert not [n for n in static.notes if "row imbalance and column spread" in n]
    big = _big_gather_text()
    ops = [r["op"] for r in static]
    ks = [(op, 100_000 * call + 10_000 * i, 5_000) for call in range(4) for i, op in enumerate(ops)]
    ks += [(r["op"], 500_000, 5_000) for r in fpga.estimate_hlo(big, target="alveo-u280") if r["random_bytes"] > 0]
    store = store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": n, "start_ns": s, "end_ns": s + d, "grid": 1000, "region": 0} for n, s, d in ks],
        "regions": [{"name": "outer", "start_ns": 0, "end_ns": 599_999, "thread_id": 1}],
        "hlo_modules": [{"name": "jit_matvec", "text": spmv}, {"name": "jit__lambda", "text": big}],
        "start_ns": 0, "end_ns": 1_000_000,
    })
    (outer,) = fpga.fpga_candidates(store, target="alveo-u280", by="region")
    assert outer["module_calls"] >= 4
    assert outer["restructured_structure_dependent"] is False
    assert outer["restructured_card_time_high_s"] < outer["card_time_high_s"]


def test_a_card_that_cannot_run_the_op_says_so_not_the_link():
    """A card with no fp32 DSP mapping (dsps_per_fma_fp32 0) cannot run the f32 ops: no card
    time in either design, so the reason is the estimate's note (not "host link alone ... vs
    the GPU", which would read as "keep the data on the card and it gains"), and the answer has
    no speedup to show (not "0.00x (0-0x)")."""
    from fpgaprof.api.fpga import deciding_reason, row_speedups

    rows = list(_analyze_with({"base": "alveo-u55c", "dsps_per_fma_fp32": 0}))
    cannot = [r for r in rows if "no DSP mapping for fp32" in str(r.get("estimate_note"))]
    assert cannot, rows
    for r in cannot:
        assert r["verdict"] == "no" and r["op_speedup"] == 0
        assert deciding_reason(r) == r["estimate_note"]
        assert row_speedups(r) is None
