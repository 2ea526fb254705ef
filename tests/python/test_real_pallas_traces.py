"""MBIRJAX 0.7.3's Pallas (Triton) projectors on a real GPU: custom-kernel attribution and
costing on the traces in tests/data/traces (NVIDIA H200, one forward and one back projection of a
128^3 volume, with MBIRJAX's Pallas kernels and with MBIRJAX_DISABLE_PALLAS=1, each without and
with counters; the README there has the commands).

The expected values do not come from fpgaprof's own parser or cost model:
- the custom calls, their kernel names, launch grids, warps and operand and result shapes are read
  from the HLO text in the trace with regular expressions (below);
- the Python lines are MBIRJAX 0.7.3's, read by hand in its source (mbirjax/_pallas_kernels.py):
  316 `chunk_out = k(centers, weights, sino_cm)` (the back-projection kernel) and
  506 `out = p2(seg2, wts, pix, vals_pad, p1(seg1, wts, pix, vals_pad))` (both forward kernels);
- launch grids and block sizes are CUPTI's, recorded with each kernel;
- measured FLOPs and DRAM bytes are summed here from the raw counter values of the trace.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

import fpgaprof
from fpgaprof import report

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"
PALLAS = TRACES / "mbirjax073_parallel_128_pallas_h200.fpgaprof"
PALLAS_COUNTERS = TRACES / "mbirjax073_parallel_128_pallas_counters_h200.fpgaprof"
XLA = TRACES / "mbirjax073_parallel_128_xla_h200.fpgaprof"
XLA_COUNTERS = TRACES / "mbirjax073_parallel_128_xla_counters_h200.fpgaprof"
CONE_PALLAS_COUNTERS = TRACES / "mbirjax073_cone_64_pallas_counters_h200.fpgaprof"

TRITON = "__gpu$xla.gpu.triton"
ELEMENT_BYTES = {"f32": 4, "s32": 4, "u32": 4, "f16": 2, "bf16": 2, "s8": 1, "u8": 1, "pred": 1, "f64": 8, "s64": 8}
SHAPE = re.compile(r"\b(f32|s32|u32|f16|bf16|s8|u8|pred|f64|s64)\[([0-9,]*)\]")
# Each source line below, as MBIRJAX 0.7.3 has it (see the module docstring).
LINE_BACK = 316
LINE_FORWARD = 506


def _bytes(shapes: str) -> int:
    return sum(ELEMENT_BYTES[t] * math.prod(int(d) for d in dims.split(",") if d) for t, dims in SHAPE.findall(shapes))


def triton_calls(prof) -> dict[str, dict]:
    """Every Triton custom call of the trace's HLO modules, from the text alone."""
    calls = {}
    for module in prof.hlo_modules:
        for line in module.text.splitlines():
            if f'custom_call_target="{TRITON}"' not in line:
                continue
            m = re.match(r"\s*(?:ROOT )?%(\S+) = (.+?) custom-call\(([^)]*)\)", line)
            assert m, line[:200]
            name, result, operands = m.groups()
            layouts = re.search(r"operand_layout_constraints=\{(.*?)\}, (?:output_to|api_version)", line).group(1)
            cfg = {k: int(v) for k, v in re.findall(r"\b(grid_[xyz]|num_warps) = (\d+) : i32", line)}
            calls[name] = {
                "module": module.name,
                "kernel": re.search(r'name = "([^"]+)"', line).group(1),
                "operands": [o.strip().lstrip("%") for o in operands.split(",")],
                "bytes": _bytes(layouts) + _bytes(result),
                "blocks": cfg["grid_x"] * cfg["grid_y"] * cfg["grid_z"],
                "threads": 32 * cfg["num_warps"],
            }
    return calls


def counted(prof, kernel_index: int) -> tuple[float, float]:
    """FLOPs (add + mul + 2 fma, each precision) and DRAM bytes (read + write) of one kernel,
    from the raw counter values."""
    c = prof.counters.columns(["kernel_index", "metric", "value"])
    flops = dram = 0.0
    for k, metric, value in zip(c["kernel_index"], c["metric"], c["value"]):
        if k != kernel_index:
            continue
        m = re.search(r"inst_executed_op_[dhf](add|mul|fma)_pred_on", metric)
        if m:
            flops += float(value) * (2 if m.group(1) == "fma" else 1)
        elif metric.startswith("dram__bytes_"):
            dram += float(value)
    return flops, dram


@pytest.fixture(scope="module")
def pallas():
    return fpgaprof.load(PALLAS)


@pytest.fixture(scope="module")
def pallas_counters():
    return fpgaprof.load(PALLAS_COUNTERS)


@pytest.mark.parametrize("path", [PALLAS, PALLAS_COUNTERS], ids=["times", "counters"])
def test_each_triton_kernel_is_attributed_to_its_custom_call_and_the_line_that_called_it(path):
    prof = fpgaprof.load(path)
    calls = triton_calls(prof)
    # One back-projection kernel (its own jit) and two forward kernels; the second forward call
    # takes the first one's result (p2(..., p1(...)))
    assert {n: (c["module"], c["kernel"]) for n, c in calls.items()} == {
        "pallas_call.1": ("jit_wrapped", "_back_kernel"),
        "pallas_call.2": ("jit_chunk_fn", "_fwd_kernel"),
        "pallas_call.3": ("jit_chunk_fn", "_fwd_kernel")}
    assert "pallas_call.2" in calls["pallas_call.3"]["operands"]

    att = prof.attribution.kernels
    by_op: dict[str, list[int]] = {}
    for i, k in enumerate(prof.kernels):
        if att[i].hlo_op in calls:
            by_op.setdefault(att[i].hlo_op, []).append(i)
    assert sorted(by_op) == sorted(calls) and all(len(v) == 1 for v in by_op.values())
    kernel = {op: prof.kernels[v[0]] for op, v in by_op.items()}
    # CUDA's kernel is the Triton function, uniquified by XLA for the second forward call; the
    # first call's kernel runs first
    assert kernel["pallas_call.1"].name == "_back_kernel"
    assert {kernel["pallas_call.2"].name, kernel["pallas_call.3"].name} == {"_fwd_kernel", "_fwd_kernel__1"}
    assert kernel["pallas_call.2"].launch_ns < kernel["pallas_call.3"].launch_ns
    for op, k in kernel.items():
        # the launch is the custom call's: Triton's grid and warps
        assert k.grid_x * k.grid_y * k.grid_z == calls[op]["blocks"], op
        assert k.block_x * k.block_y * k.block_z == calls[op]["threads"], op
        a = att[by_op[op][0]]
        assert a.category == f"custom-call:{TRITON}"
        assert a.source_file.endswith("mbirjax/_pallas_kernels.py")
        assert a.source_line == (LINE_BACK if op == "pallas_call.1" else LINE_FORWARD)
    # and every kernel of the trace is attributed to some op
    assert prof.attribution.unattributed_count == 0


def test_without_counters_a_triton_call_is_a_labelled_operand_bound(pallas):
    calls = triton_calls(pallas)
    rows = {r["op"]: r for r in pallas.roofline(by="op")}
    cands = {r["op"]: r for r in pallas.fpga_candidates("alveo-u55c")}
    for op, call in calls.items():
        r = rows[op]
        assert (r["cost_known"], r["cost_basis"], r["flops"], r["bytes"]) == (False, "lower bound", 0.0, 0.0)
        assert r["lower_bound_bytes"] == call["bytes"]          # one execution each
        assert r["lower_bound_bytes_per_s"] == pytest.approx(call["bytes"] / (r["time_ns"] * 1e-9))
        c = cands[op]
        assert c["estimate_basis"] == "operand bound" and math.isnan(c["score"])
        assert f"Triton kernel '{call['kernel']}' ({TRITON}) has no cost" in c["estimate_note"]
        assert "lower bounds" in c["estimate_note"] and "upper bounds" in c["estimate_note"]
        assert c["restructured_bytes"] == call["bytes"]
        assert c["op_speedup_low"] <= c["op_speedup"] <= c["op_speedup_high"]
    # by hand, pallas_call.1: s32[128,12644] + f32[128,3,12644] + f32[128,128,128] in,
    # f32[12644,128] out = (1 + 3 + 1) * 4 * 128 * 12644 + 4 * 128^3 = 40,757,248 B
    assert calls["pallas_call.1"]["bytes"] == 5 * 4 * 128 * 12644 + 4 * 128 ** 3 == 40_757_248


def _check_measured(prof, op, call, row, cand):
    att = prof.attribution.kernels
    (i,) = [i for i in range(len(prof.kernels)) if att[i].hlo_op == op]
    flops, dram = counted(prof, i)
    assert flops > 0 and dram > 0, op
    assert row["cost_basis"] == "measured" and row["measured_coverage"] == 1.0
    assert row["measured_flops"] == pytest.approx(flops) and row["measured_bytes"] == pytest.approx(dram)
    assert row["measured_intensity"] == pytest.approx(flops / dram)
    assert row["measured_bound"] in ("memory", "compute")
    assert cand["estimate_basis"] == "measured bound" and cand["measured_coverage"] == 1.0
    assert cand["flops"] == pytest.approx(flops) and cand["bytes"] == pytest.approx(dram)
    assert cand["measured_traffic_ratio"] == pytest.approx(dram / call["bytes"])
    assert "FLOPs and DRAM bytes measured by counters over 100% of its time" in cand["estimate_note"]
    # streamed at the U55C's best (32 HBM channels x 14.375 GB/s x 0.71875 x 0.91216, docs/
    # fpga-model.md) plus one 40 us launch: the card cannot be faster than that
    assert cand["card_time_s"] >= dram / (32 * 0.71875 * 14.375e9 * 0.91216) + 40e-6
    assert cand["fpga_total_s"] >= cand["card_time_s"]


def test_with_counters_a_triton_call_gets_its_measured_roofline_point_and_bound(pallas_counters):
    """The back projection's counter window paired; the forward projection's did not (136 counter
    ranges for 79 kernels and 56 same-device copies: docs/gpu-validation.md, "Results: NVIDIA
    H200"), so its two kernels have neither counter values nor times (kernel replay), and get no
    estimate, as the warning says, rather than values guessed from a shifted pairing."""
    prof = pallas_counters
    calls = triton_calls(prof)
    rows = {r["op"]: r for r in prof.roofline(by="op")}
    cands = {r["op"]: r for r in prof.fpga_candidates("alveo-u55c")}
    _check_measured(prof, "pallas_call.1", calls["pallas_call.1"], rows["pallas_call.1"], cands["pallas_call.1"])
    # the back-projection kernel, by hand from its counters: 1.24 GFLOP over 54.7 MB of DRAM in
    # 218.6 us, 1.34 x the bytes of its operands and result
    back = rows["pallas_call.1"]
    assert back["measured_flops"] == 1_244_574_208 and back["measured_bytes"] == 54_709_248
    assert back["time_ns"] == 218_592
    assert cands["pallas_call.1"]["measured_traffic_ratio"] == pytest.approx(54_709_248 / 40_757_248)
    assert "136 counter ranges and 79 kernels in 1 window(s) were not paired" in " ".join(prof.warnings)
    att = prof.attribution.kernels
    for op in ("pallas_call.2", "pallas_call.3"):
        (i,) = [i for i in range(len(prof.kernels)) if att[i].hlo_op == op]
        assert counted(prof, i) == (0.0, 0.0)
        assert rows[op]["cost_basis"] == "lower bound" and not rows[op]["has_measured"]
        # replayed without a pairing: no GPU time either, so no speedup at all (not "0x")
        assert rows[op]["time_ns"] == 0
        assert "1 kernel(s) have no GPU time" in cands[op]["estimate_note"]
        assert math.isnan(cands[op]["op_speedup"]) and math.isnan(cands[op]["op_speedup_high"])


def test_cone_beam_triton_kernels_are_measured():
    """Cone beam at 64^3 (MBIRJAX's _cone_fwd_kernel and _cone_back_kernel), with counters: every
    window paired. Their lines in MBIRJAX 0.7.3: 715 `chunk = kern(c0, wc, m0, wpr, g0_arr,
    sino_cm)` and 845 `out = p2(seg2, wts, pix, m0, wpr, vals, p1(seg1, wts, pix, m0, wpr, vals))`."""
    prof = fpgaprof.load(CONE_PALLAS_COUNTERS)
    assert not any("were not paired" in w for w in prof.warnings)
    calls = triton_calls(prof)
    assert {n: c["kernel"] for n, c in calls.items()} == {
        "pallas_call.1": "_cone_back_kernel", "pallas_call.2": "_cone_fwd_kernel", "pallas_call.3": "_cone_fwd_kernel"}
    rows = {r["op"]: r for r in prof.roofline(by="op")}
    cands = {r["op"]: r for r in prof.fpga_candidates("alveo-u55c")}
    att = prof.attribution.kernels
    for op, call in calls.items():
        _check_measured(prof, op, call, rows[op], cands[op])
        (i,) = [i for i in range(len(prof.kernels)) if att[i].hlo_op == op]
        k = prof.kernels[i]
        assert k.grid_x * k.grid_y * k.grid_z == call["blocks"]
        assert att[i].source_line == (715 if op == "pallas_call.1" else 845)


def test_every_output_carries_the_triton_calls_with_their_basis(pallas, pallas_counters, tmp_path):
    for prof, basis, est in ((pallas, "lower bound", "operand bound"),
                             (pallas_counters, "measured", "measured bound")):
        out = tmp_path / basis.replace(" ", "_")
        report.write_all(prof, str(out))
        summary = json.loads((out / "summary.json").read_text())
        points = {p["op"]: p for p in summary["roofline"]["points"]}
        items = {c["op"]: c for c in summary["candidates"]["items"]}
        html = (out / "report.html").read_text()
        for op in ("pallas_call.1", "pallas_call.2", "pallas_call.3"):
            assert op in html
            if basis == "measured" and op == "pallas_call.1":
                assert items[op]["estimate_basis"] == est
                assert points[op]["has_measured"] and points[op]["measured_flops"] > 0
            elif basis == "measured":  # the forward window did not pair: no time, no values
                assert "have no GPU time" in items[op]["estimate_note"]
                assert not points[op]["has_measured"]
            else:
                assert items[op]["estimate_basis"] == "operand bound"
                assert points[op]["bound"] == "unknown" and not points[op]["has_measured"]


@pytest.mark.parametrize("path", [XLA, XLA_COUNTERS], ids=["times", "counters"])
def test_with_pallas_disabled_the_projectors_are_xla_ops_with_static_costs(path):
    prof = fpgaprof.load(path)
    assert triton_calls(prof) == {}
    assert prof.attribution.unattributed_count == 0
    rows = prof.roofline(by="op")
    assert not any(r["category"].endswith(TRITON) for r in rows)
    # all of the GPU time is in ops whose cost XLA's HLO gives, except custom calls (cub sort)
    unknown = sum(r["time_ns"] for r in rows if not r["cost_known"])
    assert all(r["category"].startswith("custom-call:") for r in rows if not r["cost_known"])
    assert unknown < sum(r["time_ns"] for r in rows)


# --- what report.html says about the ops it could not estimate ------------------------------


@pytest.mark.parametrize("path, no_cost, no_time, gpu", [
    # forward_project's window did not pair: its ops' kernels have no timestamps, 22 ops (20
    # with one kernel, the two cub sorts with six), all of 0 s; back_project's ops all have
    # XLA's static cost
    (XLA_COUNTERS, 0, 22, "0 s"),
    # the back projection's _back_kernel (pallas_call.1) has its 218.6 µs and counters but no
    # static cost (a measured bound); the forward window did not pair: 29 ops without time
    (PALLAS_COUNTERS, 1, 29, "218.6 µs"),
], ids=["xla", "pallas"])
def test_the_not_estimated_ops_are_counted_by_their_reason(path, no_cost, no_time, gpu, tmp_path):
    prof = fpgaprof.load(path)
    report.write_all(prof, str(tmp_path))
    summary = json.loads((tmp_path / "summary.json").read_text())
    c = summary["candidates"]
    assert c["what_if"]["not_estimated_count"] == no_cost + no_time
    assert c["no_gpu_time_count"] == no_time
    # each row's own fields say which: no GPU time (0 ns) and no estimate basis, or GPU time
    untimed = [r for r in c["items"] if "have no GPU time" in (r["estimate_note"] or "")]
    assert len(untimed) == no_time
    assert all(r["gpu_time_ns"] == 0 and r["cost_known"] is False for r in untimed)
    html = (tmp_path / "report.html").read_text()
    reasons = ", ".join(
        x for x in ((f"{no_cost} without a static cost" if no_cost else ""),
                    f"{no_time} without GPU time (no timestamps)") if x)
    assert (f"{no_cost + no_time} ops ({gpu} of GPU time) not estimated: {reasons} "
            "(see estimate_note)") in html
    assert "not estimated: no static cost" not in html


def test_a_point_without_a_static_cost_has_no_values_but_its_time(pallas, tmp_path):
    # The custom calls (three Pallas kernels, the cub sort) have no static cost: their points
    # keep their time, and null FLOPs, bytes, rates and roof fraction, not measured zeros.
    report.write_all(pallas, str(tmp_path))
    summary = json.loads((tmp_path / "summary.json").read_text())
    points = {p["op"]: p for p in summary["roofline"]["points"]}
    ops = {o["op"]: o for o in summary["ops"]["items"]}
    for op in ("pallas_call.1", "pallas_call.2", "pallas_call.3", "custom-call.1"):
        p = points[op]
        assert p["time_s"] > 0 and p["bound"] == "unknown"
        for k in ("flops", "bytes", "intensity", "achieved_flops_per_s", "achieved_bytes_per_s",
                  "roof_fraction"):
            assert p[k] is None, (op, k)
        assert ops[op]["flops"] is None and ops[op]["bytes"] is None  # as the ops table
    # an op with a static cost keeps its values (wrapped_iota: 0 FLOPs, counted ones)
    assert points["wrapped_iota"]["flops"] == 0.0 and points["wrapped_iota"]["bytes"] > 0
    # report.html's points table: time, then "–" in the six cells
    html = (tmp_path / "report.html").read_text()
    i = html.index('<tr><td class="text" data-v="pallas_call.1">pallas_call.1</td><td class="num"')
    row = html[i:html.index("</tr>", i)]
    assert row.count(">–</td>") == 6 and ">215.3 µs</td>" in row and ">0 B<" not in row
    # print(prof.roofline()): "–" too; the rows themselves keep 0 beside cost_known False
    line = next(ln for ln in str(pallas.roofline()).splitlines() if ln.split()[:1] == ["pallas_call.1"])
    assert line.split()[:7] == ["pallas_call.1", "215.3", "µs", "–", "–", "–", "–"]
    row = next(r for r in pallas.roofline(by="op") if r["op"] == "pallas_call.1")
    assert row["flops"] == 0.0 and row["cost_known"] is False
