"""Analysis layer from Python: presets, roofline/candidates on a constructed trace, HLO export
(re-parsed by fpgaprof's parser and by XLA's), transfers/memory, calibrate without a GPU."""
import json
import math

import fpgaprof  # before jax: fpgaprof sets XLA flags
import pytest
from fpgaprof import _core, calibrate, fpga, roofline

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


def _store(text):
    # broadcast_add_fusion twice (30 us each), the matmul fusion once (40 us), the final reduce
    # once (10 us): 110 us of kernels; the program took 1 ms.
    ks = [("broadcast_add_fusion", 0, 30_000), ("broadcast_add_fusion", 100_000, 30_000),
          ("ynn_fusion", 200_000, 40_000), ("wrapped_reduce", 300_000, 10_000)]
    return _core.analysis._store_from_lists({
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
    assert set(p) >= {"alveo-u55c", "alveo-u280", "versal-v80"}
    # 9024 DSP x 0.7 / 5 per FMA x 2 x 300 MHz
    assert p["alveo-u55c"]["fp32_flops_per_s"] == pytest.approx(9024 * 0.7 / 5 * 2 * 300e6)
    assert p["alveo-u55c"]["hbm_bytes_per_s"] == 460e9
    with pytest.raises(ValueError):
        fpga.target_spec("no-such-card")


def test_roofline_and_candidates_on_constructed_trace():
    text = _hlo_text()
    store = _store(text)
    mod = _core.hlo.analyze(text)
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
    assert [r["score"] for r in table] == sorted((r["score"] for r in table), reverse=True)
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
    # What-if: card memory time = 2 x bytes / (460e9 x 0.85); transfers over PCIe gen3 x16 x 0.8
    # (the slower of the card's and the GPU's gen4 x16 link).
    assert row["card_memory_s"] == pytest.approx(add["bytes"] / (460e9 * 0.85))
    link = 8e9 * 128 / 130 / 8 * 16 * 0.8
    assert row["transfer_s"] == pytest.approx(add["bytes"] / link + 2 * 2 * 5e-6)
    total = 1e-3
    assert row["workload_speedup"] == pytest.approx(total / (total - 60e-6 + row["fpga_total_s"]))
    assert table.meta["workload_ns"] == pytest.approx(1e6)
    df = table.to_pandas()
    assert {"score", "time_share", "memory_boundness", "pattern_affinity", "working_set_bytes",
            "host_bytes_per_call", "op_speedup"} <= set(df.columns)
    user = fpga.FpgaTarget(name="mine", base="alveo-u55c", hbm_bytes_per_s=920e9)
    t2 = fpga.fpga_candidates(store, target=user)
    row2 = next(r for r in t2 if r["op"] == "broadcast_add_fusion")
    assert row2["card_memory_s"] == pytest.approx(row["card_memory_s"] / 2)


def test_candidate_working_set_is_the_largest_intermediate():
    # sum(exp(outer(x, x)), axis=0) for x of 256 f32: XLA fuses it into one op whose output is
    # 256 x 4 = 1 KiB, but whose largest live intermediate is the 256 x 256 x 4 = 256 KiB outer
    # product. The on-chip test of the FPGA model must see the 256 KiB.
    def g(x):
        return jnp.sum(jnp.exp(jnp.outer(x, x)), axis=0)

    text = jax.jit(g).lower(jnp.ones((256,))).compile().as_text()
    mod = _core.hlo.analyze(text)
    entry = next(c for c in mod.computations if c.is_entry)
    fused = [i for i in entry.instructions if i.opcode == "fusion"]
    assert len(fused) == 1
    op = fused[0]
    assert op.cost.bytes_written == 256 * 4
    assert op.cost.working_set_bytes == 256 * 256 * 4
    store = _core.analysis._store_from_lists({
        "devices": [DEVICE],
        "kernels": [{"name": op.name, "start_ns": 0, "end_ns": 50_000, "grid": 1000}],
        "hlo_modules": [{"name": "jit_g", "text": text}],
        "start_ns": 0, "end_ns": 100_000,
    })
    row = next(r for r in fpga.fpga_candidates(store, target="alveo-u55c") if r["op"] == op.name)
    assert row["working_set_bytes"] == 256 * 256 * 4


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
    m = _core.hlo.analyze(exported)  # fpgaprof's parser
    entry = m.computations[m.entry_index]
    params = [i for i in entry.instructions if i.opcode == "parameter"]
    assert len(params) == 1 and params[0].shape.dims == [64, 64]
    xla_hlo = pytest.importorskip("jax._src.lib").hlo
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
    assert _core.hlo.analyze(one).computations[0].instructions[-1].opcode == "add"
    with pytest.raises(ValueError):
        fpga.export_hlo(store, "no_such_op", tmp_path / "x.hlo")


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
    calibrate._write_atomic(p, {"peak_flops_per_s": {"fp32": 1e12}, "dram_bytes_per_s": 5e11})
    store = _store(_hlo_text())
    ceil = roofline.ceilings(store)
    assert ceil["peak_flops_per_s"]["fp32"] == 1e12
    assert ceil["flops_source"]["fp32"] == "measured"
    assert ceil["dram_source"] == "measured"
    assert ceil["flops_source"]["fp64"] == "table"
    assert json.load(open(p))["dram_bytes_per_s"] == 5e11
    assert not math.isnan(ceil["dram_bytes_per_s"])
