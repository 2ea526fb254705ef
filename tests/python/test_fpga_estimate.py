"""The static FPGA what-if: fpgaprof.fpga.estimate(fn, *args), estimate_hlo(text) and
`fpgaprof estimate MODULE.hlo`. Expected numbers are worked out by hand from the documented
model (docs/fpga-model.md) and the preset's nominal constants and their ends."""

import functools
import json
import math
import shlex
import subprocess
import sys

import fpgaprof  # noqa: F401  (before jax)
import pytest
from fpgaprof import fpga

jax = pytest.importorskip("jax")
jnp = jax.numpy

N = 1 << 20
# b + 3 c as one loop fusion: reads b and c (8N B), writes the result (4N B), 2N FLOPs.
TRIAD_HLO = f"""HloModule triad

%fused (p0: f32[{N}], p1: f32[{N}]) -> f32[{N}] {{
  %p0 = f32[{N}]{{0}} parameter(0)
  %p1 = f32[{N}]{{0}} parameter(1)
  %three = f32[] constant(3)
  %bc = f32[{N}]{{0}} broadcast(%three), dimensions={{}}
  %m = f32[{N}]{{0}} multiply(%bc, %p1)
  ROOT %a = f32[{N}]{{0}} add(%p0, %m)
}}

ENTRY %main (b: f32[{N}], c: f32[{N}]) -> f32[{N}] {{
  %b = f32[{N}]{{0}} parameter(0)
  %c = f32[{N}]{{0}} parameter(1)
  ROOT %triad = f32[{N}]{{0}} fusion(%b, %c), kind=kLoop, calls=%fused
}}
"""

# alveo-u280 (docs/fpga-model.md, "Constants"): 32 pseudo-channels x 14.375 GB/s; a design
# drives 71.875 % (50-100 %) of them at 91.216 % (85.25-92.39 %) of their peak; PCIe gen3 x16
# at 71.78 % (25.39-77.15 %) of 15.754 GB/s, 13.01 us (5.17-19 us) per buffer; 40 us (16-100 us)
# per launch.
STREAM = {
    "nominal": 32 * 0.71875 * 14.375e9 * 0.91216,
    "low": 32 * 1.0 * 14.375e9 * 0.923913,
    "high": 32 * 0.5 * 14.375e9 * 0.852522,
}
LINK = {
    "nominal": 15.753846e9 * 0.717752,
    "low": 15.753846e9 * 0.771532,
    "high": 15.753846e9 * 0.253906,
}
BUFFER = {"nominal": 13.0099e-6, "low": 5.17106e-6, "high": 19e-6}
LAUNCH = {"nominal": 40e-6, "low": 16e-6, "high": 100e-6}


def _triad_by_hand(end):
    op = 12 * N / STREAM[end]  # memory-bound: 2N FLOPs take 3.9 us at 534.9 GFLOP/s
    card = op + LAUNCH[end]  # one launch for the whole function
    transfer = 12 * N / LINK[end] + 3 * BUFFER[end]  # b, c in; the result out: 3 buffers
    return op, card, transfer


def test_estimate_hlo_of_a_triad_by_hand():
    est = fpga.estimate_hlo(TRIAD_HLO, target="alveo-u280")
    assert len(est) == 1
    row = est[0]
    assert (row["op"], row["opcode"], row["pattern"], row["precision"]) == (
        "triad",
        "fusion",
        "elementwise",
        "fp32",
    )
    assert (row["flops"], row["bytes"], row["executions"]) == (2 * N, 12 * N, 1)
    assert (
        row["stream_bytes"] == 12 * N
        and row["random_bytes"] == 0
        and row["compulsory_bytes"] == 12 * N
    )
    op, card, transfer = _triad_by_hand("nominal")
    assert row["card_memory_s"] == pytest.approx(op, rel=1e-6)  # 41.72 us
    assert row["card_compute_s"] == pytest.approx(2 * N / (9024 * 0.6675 / 5 * 2 * 222e6), rel=1e-6)
    assert row["card_time_s"] == pytest.approx(op, rel=1e-6)
    assert row["card_latency_s"] == 0  # the launch is the function's, below
    assert row["card_limit"] == "memory"
    assert row["memory_efficiency"] == pytest.approx(0.71875 * 0.91216)
    lo, _, lo_t = _triad_by_hand("low")
    hi, _, hi_t = _triad_by_hand("high")
    assert (row["card_time_low_s"], row["card_time_high_s"]) == (
        pytest.approx(lo, rel=1e-6),
        pytest.approx(hi, rel=1e-6),
    )
    # the whole function: 93.31 us on the card, 1151.9 us over the link, 1245.2 us in all
    assert est.card_time_s == pytest.approx(card, rel=1e-6)
    assert est.card_time_range_s == (
        pytest.approx(lo + 16e-6, rel=1e-6),
        pytest.approx(hi + 100e-6, rel=1e-6),
    )
    assert est.transfer_bytes == 12 * N
    assert est.transfer_s == pytest.approx(transfer, rel=1e-6)
    assert est.transfer_range_s == (pytest.approx(lo_t, rel=1e-6), pytest.approx(hi_t, rel=1e-6))
    assert est.total_s == pytest.approx(card + transfer, rel=1e-6)
    assert est.total_range_s[0] < est.total_s < est.total_range_s[1]
    # It streams already: restructured is the same design.
    assert est.restructured_card_time_s == pytest.approx(est.card_time_s)
    assert row["scenario"] == "as compiled"
    assert est.not_estimated_count == 0 and est.notes == [] and est.module == "triad"
    assert est.target["name"] == "alveo-u280"
    # What print() shows: the op row with its range, and the whole function with its ranges.
    text = str(est)
    assert text.splitlines()[0] == "FPGA estimate of triad on alveo-u280: ops: 1 rows"
    assert "41.7 µs (29-65 µs)" in text
    assert "whole function on alveo-u280: card 81.7 µs (45-170 µs)" in text
    assert "total 1.23 ms (1.0-3.4 ms)" in text


LOOP_HLO = f"""HloModule loops

%body (s: (s32[], f32[{N}])) -> (s32[], f32[{N}]) {{
  %s = (s32[], f32[{N}]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %x = f32[{N}]{{0}} get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  %y = f32[{N}]{{0}} multiply(%x, %x)
  ROOT %t = (s32[], f32[{N}]) tuple(%j, %y)
}}

%cond (s: (s32[], f32[{N}])) -> pred[] {{
  %s = (s32[], f32[{N}]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %ten = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %ten), direction=LT
}}

ENTRY %main (x: f32[{N}]) -> f32[{N}] {{
  %x = f32[{N}]{{0}} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[{N}]) tuple(%zero, %x)
  %known = (s32[], f32[{N}]) while(%init), condition=%cond, body=%body, backend_config={{"known_trip_count":{{"n":"10"}}}}
  %unknown = (s32[], f32[{N}]) while(%known), condition=%cond, body=%body
  ROOT %r = f32[{N}]{{0}} get-tuple-element(%unknown), index=1
}}
"""


def test_estimate_hlo_multiplies_loop_bodies_by_their_trip_count():
    est = fpga.estimate_hlo(LOOP_HLO, target="alveo-u55c")
    by = {}
    for r in est:
        by.setdefault((r["op"], r["executions"]), r)
    # the body's multiply x * x (N FLOPs; XLA counts each operand read, 8N B, and 4N written)
    # runs 10 times in the first loop and once (unknown trip count: a lower bound) in the
    # second; the scalar adds and compares too
    mul10, mul1 = by[("y", 10)], by[("y", 1)]
    assert mul10["bytes"] == 10 * 12 * N and mul10["flops"] == 10 * N
    assert mul1["bytes"] == 12 * N
    assert mul10["card_time_s"] == pytest.approx(10 * mul1["card_time_s"])
    assert mul10["card_time_s"] == pytest.approx(
        10 * 12 * N / (32 * 0.71875 * 14.375e9 * 0.91216), rel=1e-6
    )
    # restructured, x is read once: 4N in, 4N out per execution
    assert mul10["compulsory_bytes"] == 10 * 8 * N
    assert mul10["restructured_card_time_s"] == pytest.approx(
        10 * 8 * N / (32 * 0.71875 * 14.375e9 * 0.91216), rel=1e-6
    )
    assert any("'unknown'" in n and "trip count unknown" in n for n in est.notes)
    assert not any("'known'" in n for n in est.notes)
    assert est.card_time_s == pytest.approx(sum(r["card_time_s"] for r in est) + 40e-6, rel=1e-9)


CUSTOM_HLO = """HloModule custom

ENTRY %main (a: f32[1024,1024], b: f32[1024]) -> f32[1024] {
  %a = f32[1024,1024]{1,0} parameter(0)
  %b = f32[1024]{0} parameter(1)
  %s = f32[1024,1024]{1,0} custom-call(%a, %b), custom_call_target="my_vendor_solver"
  %zero = f32[] constant(0)
  ROOT %r = f32[1024]{0} reduce(%s, %zero), dimensions={0}, to_apply=%add
}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %z = f32[] add(%x, %y)
}
"""


def test_an_op_without_a_cost_is_listed_not_estimated_and_named():
    est = fpga.estimate_hlo(CUSTOM_HLO, target="alveo-u250")
    rows = {r["op"]: r for r in est}
    s, r = rows["s"], rows["r"]
    assert (
        s["estimated"] is False
        and math.isnan(s["card_time_s"])
        and math.isnan(s["card_time_low_s"])
    )
    assert "my_vendor_solver" in s["estimate_note"] and "not estimated" in s["estimate_note"]
    assert r["estimated"] is True and math.isfinite(r["card_time_s"])
    assert est.not_estimated_count == 1
    assert any("lower bound" in n for n in est.notes)
    # the card time holds only what is estimated (the reduce) and the launch
    assert est.card_time_s == pytest.approx(r["card_time_s"] + 40e-6)
    # a lower bound of time gives no energy (as a bound's row in the rankings)
    assert est.card_energy_j is None and est.restructured_card_energy_j is None
    assert est.unsupported_count == 0


FP64_HLO = """HloModule m, entry_computation_layout={(f64[1024]{0})->f64[1024]{0}}

ENTRY %main (p: f64[1024]) -> f64[1024] {
  %p = f64[1024]{0} parameter(0)
  ROOT %a = f64[1024]{0} multiply(f64[1024]{0} %p, f64[1024]{0} %p)
}
"""


def test_an_op_in_a_precision_the_card_lacks_is_not_an_op_without_a_cost(tmp_path):
    # The op has a cost (1,024 FLOP, 3 x 8 kB); the card cannot run fp64 at all: the function
    # cannot run on it as compiled, which the note says, and no energy is given for the time
    # that leaves it out.
    card = tmp_path / "nofp64.json"
    card.write_text('{"base": "alveo-u55c", "name": "nofp64", "dsps_per_fma_fp64": 0}')
    est = fpga.estimate_hlo(FP64_HLO, target=str(card))
    (row,) = list(est)
    assert row["estimated"] is False and row["flops"] == 1024 and row["bytes"] == 3 * 8192
    assert est.unsupported_count == 1 and est.not_estimated_count == 0
    assert any("fp64" in n and "cannot run on this card" in n for n in est.notes)
    assert not any("without a cost" in n for n in est.notes)
    assert est.card_energy_j is None
    assert "lower bound" in str(est)


GATHER_HLO = """HloModule g

ENTRY %main (x: f32[4000000], i: s32[1000000,1]) -> f32[1000000] {
  %x = f32[4000000]{0} parameter(0)
  %i = s32[1000000,1]{1,0} parameter(1)
  ROOT %gather = f32[1000000]{0} gather(%x, %i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
}
"""


def test_a_gather_as_compiled_and_restructured_on_a_ddr4_card():
    """alveo-u250 (4 DDR4 banks of 19.25 GB/s, all driven, at 78.87 %: 60.73 GB/s; 64-byte
    granule; 92.58 M accesses/s per bank): 1e6 4-byte reads into the 16 MB x, each a 64-byte
    access: 1e6 / (4 x 92.58e6) = 2700.4 us; indices and result stream: 8e6 / 60.73e9 = 131.7 us.
    Restructured: x fits half the U250's 54.1 MB on chip; x, i read and the result written once
    (24e6 B: 395.2 us); the 1e6 reads at 160 per cycle x 222 MHz (28.2 us): 395.2 us."""
    est = fpga.estimate_hlo(GATHER_HLO, target="alveo-u250")
    g = est[0]
    stream = 4 * 19.25e9 * 0.788675
    assert g["random_bytes"] == 4e6 and g["stream_bytes"] == 8e6
    assert g["card_time_s"] == pytest.approx(1e6 / (4 * 92.5786e6) + 8e6 / stream, rel=1e-6)
    assert g["card_limit"] == "random access"
    assert g["restructured_onchip"] is True
    assert g["restructured_card_time_s"] == pytest.approx(24e6 / stream, rel=1e-6)
    assert (
        g["scenario"]
        == f"restructured {g['card_time_s'] / g['restructured_card_time_s']:.1f}x faster"
    )
    assert est.restructured_card_time_s == pytest.approx(24e6 / stream + 40e-6, rel=1e-6)


def test_estimate_of_a_jax_function_is_estimate_hlo_of_its_compiled_module():
    # 8 GB arrays: only shapes, nothing is allocated.
    def triad(b, c):
        return b + 3.0 * c

    big = jax.ShapeDtypeStruct((1 << 31,), jnp.float32)
    est = fpga.estimate(triad, big, big, target="versal-v80")
    text = jax.jit(triad).lower(big, big).compile().as_text()
    again = fpga.estimate_hlo(text, target="versal-v80")
    assert est.card_time_s == again.card_time_s and [r["op"] for r in est] == [
        r["op"] for r in again
    ]
    # XLA's own byte count of the module (its cost analysis) is what the rows move
    xla = jax.jit(triad).lower(big, big).compile().cost_analysis()
    xla = xla[0] if isinstance(xla, (list, tuple)) else xla
    assert sum(r["bytes"] for r in est) == pytest.approx(xla["bytes accessed"])
    assert est.transfer_bytes == 3 * 4 * (1 << 31)
    # a jitted function goes in as it is; kwargs reach it
    est2 = fpga.estimate(jax.jit(triad), b=big, c=big, target="versal-v80")
    assert est2.card_time_s == pytest.approx(est.card_time_s)
    summary = est.summary()
    assert (
        summary["target"] == "versal-v80" and summary["card_time_range_s"] == est.card_time_range_s
    )


def test_bad_inputs_are_typed_errors():
    with pytest.raises(fpgaprof.HloParseError):
        fpga.estimate_hlo("HloModule m\nENTRY %e { this is not HLO }", target="alveo-u55c")
    with pytest.raises(fpgaprof.InvalidArgumentError, match="HLO text"):
        fpga.estimate_hlo(b"HloModule m", target="alveo-u55c")
    with pytest.raises(fpgaprof.InvalidArgumentError, match="unknown FPGA target"):
        fpga.estimate(lambda x: x, jnp.ones(3), target="no-card")
    with pytest.raises(fpgaprof.InvalidArgumentError, match="a function"):
        fpga.estimate(3, jnp.ones(3))


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "fpgaprof.cli", *args], capture_output=True, text=True
    )


def test_cli_estimate(tmp_path):
    path = tmp_path / "triad.hlo"
    path.write_text(TRIAD_HLO)
    r = _cli("estimate", str(path), "--target", "alveo-u280")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "FPGA estimate of triad on alveo-u280: ops: 1 rows"
    assert "whole function on alveo-u280: card 81.7 µs (45-170 µs)" in r.stdout
    r = _cli("estimate", str(path), "--target", "alveo-u280", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    op, card, transfer = _triad_by_hand("nominal")
    assert data["summary"]["card_time_s"] == pytest.approx(card, rel=1e-6)
    assert data["summary"]["total_s"] == pytest.approx(card + transfer, rel=1e-6)
    assert data["ops"][0]["op"] == "triad" and data["target"]["name"] == "alveo-u280"
    card_file = tmp_path / "card.json"
    card_file.write_text(json.dumps({"base": "alveo-u280", "clock_hz": 300e6}))
    r = _cli("estimate", str(path), "--target", str(card_file))
    assert r.returncode == 0 and "alveo-u280 (modified)" in r.stdout
    # bad input: a usage error (exit 2) or a one-line error (exit 1), never a traceback
    r = _cli("estimate", str(tmp_path / "none.hlo"))
    assert r.returncode == 2 and "cannot read" in r.stderr
    bad = tmp_path / "bad.hlo"
    bad.write_text("not HLO at all")
    r = _cli("estimate", str(bad))
    assert r.returncode == 1 and "not HLO text fpgaprof can read" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = _cli("estimate", str(path), "--limit", "0")
    assert r.returncode == 2 and "--limit" in r.stderr
    r = _cli("estimate", str(path), "--target", "alveo-u55")
    assert r.returncode == 2 and "did you mean alveo-u55c" in r.stderr


def test_a_restructured_gather_on_chip_is_labelled_a_designers_target():
    # A gather of 2^20 f32 from a 4 MB table (it fits on chip): its restructured figure rests on
    # the SpMV designs' on-chip parallelism and says so; the triad (streaming only) does not.
    import jax
    import jax.numpy as jnp

    def gather(x, i):
        return x[i] * 2.0

    est = fpga.estimate(
        gather,
        jax.ShapeDtypeStruct((1 << 20,), jnp.float32),
        jax.ShapeDtypeStruct((1 << 20,), jnp.int32),
        target="alveo-u55c",
    )
    (row,) = [r for r in est if r["random_bytes"] > 0]
    assert row["restructured_onchip"] is True
    assert row["restructured_basis"] == fpga.RESTRUCTURED_ONCHIP_BASIS
    assert "designer's target" in row["restructured_basis"]
    assert "the best published design's at the fast end" in row["restructured_basis"]
    triad = fpga.estimate_hlo(TRIAD_HLO, target="alveo-u280")
    assert [r["restructured_basis"] for r in triad] == [""]
    # the printed estimate says it in its footer, once, for the one labelled row
    assert "  note: 1 row's restructured figures are a designer's target: " in str(est)
    assert "designer's target" not in str(triad)


def test_a_sparse_gather_scatter_says_the_matrix_structure_decides():
    # An SpMV in coordinate form (gather x[col], product, segment_sum into y) of 1e6 x 1e6 with
    # 3e6 nonzeros: density 3e6 / (1e6 x 1e6) = 3e-6, at most 1e-4 (HiSpMV Sec. 2.3), so the
    # estimate says that row imbalance and column spread, which the shapes do not show, decide
    # it. 1e5 x 1e5 with 5e6 nonzeros: density 5e-4, y 400 kB in one 4 MiB output tile: no note.
    from fpgaprof.fpga_validation import BUILDERS

    def notes(n, nnz):
        fn, args = BUILDERS["spmv"](n, n, nnz, "float32")
        est = fpga.estimate(fn, *args, target="alveo-u280")
        for r in est:
            assert r["restructured_structure_dependent"] in (True, False, None)
        return [x for x in est.notes if "row imbalance and column spread" in x]

    assert len(notes(1_000_000, 3_000_000)) == 1
    assert notes(100_000, 5_000_000) == []


def test_when_the_structure_decides_the_slow_end_is_as_compiled():
    # docs/fpga-model.md, "When the structure decides, the slow end is as compiled": the marked
    # SpMV above (density 3e-6) keeps its restructured fast end and nominal, and its slow end is
    # the function's as-compiled slow end (both with the same one launch); the unmarked one
    # (density 5e-4, one output tile) keeps its design's slow end, well under as compiled (its
    # updates alone, 5e6 read-modify-writes to HBM, take milliseconds as compiled).
    from fpgaprof.fpga_validation import BUILDERS

    def est(n, nnz):
        fn, args = BUILDERS["spmv"](n, n, nnz, "float32")
        return fpga.estimate(fn, *args, target="alveo-u280")

    marked, unmarked = est(1_000_000, 3_000_000), est(100_000, 5_000_000)
    m_lo, m_hi = marked.restructured_card_time_range_s
    assert m_hi == pytest.approx(marked.card_time_range_s[1], rel=1e-12)
    assert m_lo < marked.restructured_card_time_s < marked.card_time_s
    assert m_hi > 20 * marked.restructured_card_time_s
    u_lo, u_hi = unmarked.restructured_card_time_range_s
    assert u_hi < unmarked.card_time_range_s[1] / 10
    # the card energy follows the time: its high end is the as-compiled one's too
    assert marked.restructured_card_energy_range_j[1] == pytest.approx(
        marked.card_energy_range_j[1], rel=1e-12
    )


# The U280's board power (docs/fpga-model.md, "Card power"): the HBM2 cards' 61.84 W (45-65.38 W).
U280_W = {"nominal": 61.84, "low": 45.0, "high": 65.38}


def test_estimate_hlo_carries_card_energy_with_its_range():
    est = fpga.estimate_hlo(TRIAD_HLO, target="alveo-u280")
    row = est[0]
    # energy = card time x loaded power, low x low and high x high
    op = {end: _triad_by_hand(end)[0] for end in ("nominal", "low", "high")}
    assert row["card_energy_j"] == pytest.approx(
        op["nominal"] * 61.84, rel=1e-6
    )  # 41.72 us -> 2.58 mJ
    assert row["card_energy_low_j"] == pytest.approx(op["low"] * 45.0, rel=1e-6)
    assert row["card_energy_high_j"] == pytest.approx(op["high"] * 65.38, rel=1e-6)
    assert row["restructured_card_energy_j"] == pytest.approx(
        row["card_energy_j"]
    )  # it streams already
    # the whole function: its card time (one launch included) at the same power; the link is not card time
    card = {"nominal": op["nominal"] + 40e-6, "low": op["low"] + 16e-6, "high": op["high"] + 100e-6}
    assert est.card_energy_j == pytest.approx(
        card["nominal"] * U280_W["nominal"], rel=1e-6
    )  # 5.05 mJ
    assert est.card_energy_range_j == (
        pytest.approx(card["low"] * U280_W["low"], rel=1e-6),
        pytest.approx(card["high"] * U280_W["high"], rel=1e-6),
    )
    assert est.summary()["card_energy_j"] == est.card_energy_j
    assert "card energy at 61.8 W (45-65.4 W): card 5.05 mJ (2.05 mJ-10.7 mJ)" in str(est)
    # the op's row: 41.72 us x 61.84 W, 29.6 us x 45 W, 64.17 us x 65.38 W
    assert "2.58 mJ (1.33 mJ-4.2 mJ)" in str(est)
    # a card's own loaded_w is honoured: 100 W exact
    own = fpga.estimate_hlo(TRIAD_HLO, target={"base": "alveo-u280", "loaded_w": 100})
    assert own.card_energy_j == pytest.approx(card["nominal"] * 100, rel=1e-6)
    assert own.card_energy_range_j == (
        pytest.approx(card["low"] * 100, rel=1e-6),
        pytest.approx(card["high"] * 100, rel=1e-6),
    )
    # a card without a power: unknown (None), never 0
    bare = {
        k: v
        for k, v in fpga.presets()[1].items()
        if not k.startswith(("card_", "loaded_w", "memory_bytes", "stream_bytes"))
    }
    bare["name"] = "no-power"
    none = fpga.estimate_hlo(TRIAD_HLO, target=bare)
    assert none.card_energy_j is None and none.card_energy_range_j == (None, None)
    assert none[0]["card_energy_j"] is None and none[0]["restructured_card_energy_high_j"] is None
    assert "card energy: unknown (no-power has no loaded_w" in str(none)
    # a bad one: a typed error naming the field
    for bad, words in (
        ({"loaded_w": -1}, "loaded_w = -1 must be > 0"),
        ({"loaded_w": float("nan")}, "loaded_w"),
        ({"loaded_w": 60, "loaded_w_low": 70}, "loaded_w: low 70 <= 60"),
    ):
        with pytest.raises(fpgaprof.InvalidArgumentError, match=words):
            fpga.estimate_hlo(TRIAD_HLO, target={"base": "alveo-u280", **bad})


def test_row_imbalance_is_hispmvs_delta_by_hand():
    # HiSpMV Eq. 2: rows dealt cyclically to P PEs, the most loaded PE's nonzeros over NNZ / P.
    # Rows of 10, 1, 1, 1 nonzeros on 2 PEs: PE 0 gets rows 0 and 2 (11), PE 1 rows 1 and 3 (2);
    # NNZ / P = 13 / 2 = 6.5 -> 11 / 6.5.
    assert fpga.row_imbalance([10, 1, 1, 1], pes=2) == pytest.approx(11 / 6.5)
    assert fpga.row_imbalance([10, 1, 1, 1], pes=1) == pytest.approx(1.0)  # one PE: balanced
    assert fpga.row_imbalance([3] * 256) == pytest.approx(1.0)
    # Every nonzero in one row: delta reaches its bound P (Eq. 5: delta <= min(P, 1 / density)).
    assert fpga.row_imbalance([500] + [0] * 1000) == pytest.approx(128.0)
    # 5 rows on 4 PEs (the last PE row-less): loads 2+1, 1, 1, 1 of 6 -> 3 / 1.5 = 2.
    assert fpga.row_imbalance([2, 1, 1, 1, 1], pes=4) == pytest.approx(2.0)
    import numpy as np

    assert fpga.row_imbalance(np.diff(np.array([0, 4, 4, 5]))) == pytest.approx(4 / (5 / 128))
    for bad, match in (
        ([], "one or more"),
        ([1, -1], "finite counts"),
        ([0, 0], "no nonzeros"),
        (["a"], "nonzeros of each row"),
        ([1.0, float("nan")], "finite counts"),
    ):
        with pytest.raises(fpgaprof.InvalidArgumentError, match=match):
            fpga.row_imbalance(bad)
    for pes in (0, -3, 2.5, True, 2**45):
        with pytest.raises(fpgaprof.InvalidArgumentError, match="pes"):
            fpga.row_imbalance([1, 2], pes=pes)
    # Text is not row lengths (it converted to one row of 123); a sum beyond a float is no ratio.
    with pytest.raises(fpgaprof.InvalidArgumentError, match="not text"):
        fpga.row_imbalance("123")
    with pytest.raises(fpgaprof.InvalidArgumentError, match="beyond a float"):
        fpga.row_imbalance([1e308, 1e308])
    assert fpga.row_imbalance([10, 1, 1, 1], pes=np.int64(2)) == pytest.approx(11 / 6.5)


def test_a_given_row_imbalance_moves_the_sparse_scatter_and_says_so():
    # The SpMV of the test above (1e6 x 1e6, 3e6 nonzeros). The core's hand-worked cases are in
    # tests/cpp/test_fpga_card_model.cpp; here what a user sees: with delta = 4.88 the nominal
    # restructured time grows (the PE work 4x, the vectors not), the fast end (a hybrid row
    # distribution) not at all; delta <= 1.22 changes nothing. At this density (3e-6) the slow
    # end is as compiled with or without delta (the column spread is still not known).
    from fpgaprof.fpga_validation import BUILDERS

    fn, args = BUILDERS["spmv"](1_000_000, 1_000_000, 3_000_000, "float32")
    base = fpga.estimate(fn, *args, target="alveo-u280")
    imb = fpga.estimate(fn, *args, target="alveo-u280", row_imbalance=4.88)
    same = fpga.estimate(fn, *args, target="alveo-u280", row_imbalance=1.1)
    b_lo, b_hi = base.restructured_card_time_range_s
    i_lo, i_hi = imb.restructured_card_time_range_s
    assert i_lo == pytest.approx(b_lo, rel=1e-12)
    assert 1.5 * base.restructured_card_time_s < imb.restructured_card_time_s
    assert imb.restructured_card_time_s < 4 * base.restructured_card_time_s
    assert i_hi == pytest.approx(b_hi, rel=1e-12)
    assert b_hi == pytest.approx(base.card_time_range_s[1], rel=1e-12)
    assert same.restructured_card_time_s == pytest.approx(base.restructured_card_time_s, rel=1e-12)
    assert base.row_imbalance is None and imb.row_imbalance == 4.88
    assert imb.summary()["row_imbalance"] == 4.88 and base.summary()["row_imbalance"] is None
    assert [n for n in imb.notes if "at the row imbalance applied" in n]
    assert not [n for n in imb.notes if "row imbalance and column spread, not visible" in n]
    assert "row imbalance given: 4.88 (HiSpMV's delta)" in str(imb)
    assert "row imbalance given" not in str(base)
    # as compiled is the XLA design: no PEs to balance
    assert imb.card_time_s == pytest.approx(base.card_time_s, rel=1e-12)
    # NumPy's numbers are numbers (a ratio computed with NumPy), a NumPy bool is not.
    import numpy as np

    as_np = fpga.estimate(fn, *args, target="alveo-u280", row_imbalance=np.float32(4.88))
    assert as_np.row_imbalance == pytest.approx(4.88)
    assert as_np.restructured_card_time_s == pytest.approx(imb.restructured_card_time_s, rel=1e-6)
    assert (
        fpga.estimate(fn, *args, target="alveo-u280", row_imbalance=np.int64(1)).row_imbalance == 1
    )
    with pytest.raises(fpgaprof.InvalidArgumentError, match="must be a number"):
        fpga.estimate(fn, *args, target="alveo-u280", row_imbalance=np.bool_(True))
    for bad in (0.5, float("nan"), float("inf"), -2.0):
        with pytest.raises(fpgaprof.InvalidArgumentError, match="row_imbalance"):
            fpga.estimate_hlo(TRIAD_HLO, target="alveo-u280", row_imbalance=bad)
    with pytest.raises(fpgaprof.InvalidArgumentError, match="row_imbalance must be a number"):
        fpga.estimate_hlo(TRIAD_HLO, target="alveo-u280", row_imbalance="4")


def test_cli_estimate_row_imbalance(tmp_path):
    path = tmp_path / "triad.hlo"
    path.write_text(TRIAD_HLO)
    r = _cli("estimate", str(path), "--target", "alveo-u280", "--row-imbalance", "3")
    assert r.returncode == 0, r.stderr
    assert "row imbalance given: 3 (HiSpMV's delta)" in r.stdout
    r = _cli("estimate", str(path), "--row-imbalance", "3", "--json")
    assert json.loads(r.stdout)["summary"]["row_imbalance"] == 3.0
    r = _cli("estimate", str(path), "--row-imbalance", "0.5")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert (
        "fpgaprof estimate: error: --row-imbalance 0.5: give HiSpMV's delta, a number from 1 "
        "(balanced) to 1e9"
    ) in r.stderr


# A 256-row SpMV in coordinate form: row 0 holds 65 nonzeros, rows 1-255 one each (320 in all).
# Dealt to 128 PEs cyclically, PE 0 gets rows 0 and 128 (66 nonzeros); NNZ / P = 320 / 128 = 2.5,
# so HiSpMV's delta is 66 / 2.5 = 26.4 (worked by hand from Eq. 2).
DATA_ROWS = 256
DATA_DELTA = 66 / 2.5


def _data_spmv():
    import numpy as np

    rows = np.concatenate([np.zeros(65, np.int32), np.arange(1, DATA_ROWS, dtype=np.int32)])
    cols = (np.arange(rows.size, dtype=np.int32) * 7) % DATA_ROWS

    def spmv(vals, row, col, x):
        return jax.ops.segment_sum(vals * x[col], row, num_segments=DATA_ROWS)

    args = (
        jnp.ones(rows.size, jnp.float32),
        jnp.asarray(rows),
        jnp.asarray(cols),
        jnp.ones(DATA_ROWS, jnp.float32),
    )
    return spmv, args


def test_estimate_takes_the_row_imbalance_from_the_arguments():
    spmv, args = _data_spmv()
    est = fpga.estimate(spmv, *args, target="alveo-u280")
    assert est.row_imbalance == pytest.approx(DATA_DELTA)
    assert est.row_imbalance_source == "arguments"
    assert est.summary()["row_imbalance"] == pytest.approx(DATA_DELTA)
    assert est.summary()["row_imbalance_source"] == "arguments"
    assert "row imbalance from the arguments: 26.4 (HiSpMV's delta)" in str(est)
    (note,) = [n for n in est.notes if "computed from the arguments" in n]
    assert "the rows of scatter-add (test_fpga_estimate.py:" in note
    assert "320 updates" in note
    # The figures are those of the same ratio given by hand; a delta of 26.4 >= 2 moves the
    # nominal and the slow end, not the fast end (docs/fpga-model.md, "Row imbalance").
    given = fpga.estimate(spmv, *args, target="alveo-u280", row_imbalance=DATA_DELTA)
    assert given.row_imbalance_source == "given"
    assert "row imbalance given: 26.4" in str(given)
    assert est.restructured_card_time_s == pytest.approx(given.restructured_card_time_s, rel=1e-12)
    assert est.restructured_card_time_range_s == pytest.approx(given.restructured_card_time_range_s)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    blind = fpga.estimate(spmv, *shapes, target="alveo-u280")
    assert blind.row_imbalance is None and blind.row_imbalance_source is None
    assert not [n for n in blind.notes if "row imbalance" in n]
    assert est.restructured_card_time_range_s[0] == pytest.approx(
        blind.restructured_card_time_range_s[0]
    )
    assert est.restructured_card_time_s > blind.restructured_card_time_s
    # A ratio the user gives wins over the data's.
    mine = fpga.estimate(spmv, *args, target="alveo-u280", row_imbalance=1.0)
    assert mine.row_imbalance == 1.0 and mine.row_imbalance_source == "given"
    assert mine.restructured_card_time_s == pytest.approx(blind.restructured_card_time_s, rel=1e-12)


def test_row_imbalance_from_the_arguments_drops_what_the_scatter_drops():
    # segment_sum drops ids outside [0, rows): 100 updates to id 256 land nowhere, and the
    # ratio is the 320 nonzeros' (26.4) still. A jitted function with a static argument is
    # matched to its array arguments.
    import functools

    import numpy as np

    _, (vals, rows, cols, x) = _data_spmv()

    @functools.partial(jax.jit, static_argnums=4)
    def spmv(vals, row, col, x, n):
        return jax.ops.segment_sum(vals * x[col], row, num_segments=n)

    extra = jnp.concatenate([rows, jnp.full(100, DATA_ROWS, jnp.int32)])
    more = (
        jnp.ones(extra.size, jnp.float32),
        extra,
        jnp.concatenate([cols, jnp.zeros(100, jnp.int32)]),
        x,
    )
    est = fpga.estimate(spmv, *more, DATA_ROWS, target="alveo-u280")
    assert est.row_imbalance == pytest.approx(DATA_DELTA)
    assert [n for n in est.notes if "320 updates" in n]

    # Rows through a computation the estimate runs (ids reversed: row 255 holds the 65; it is
    # on PE 127 with row 127: 66 again).
    def flipped(vals, row, col, x):
        return jax.ops.segment_sum(vals * x[col], DATA_ROWS - 1 - row, num_segments=DATA_ROWS)

    assert fpga.estimate(flipped, vals, rows, cols, x).row_imbalance == pytest.approx(DATA_DELTA)
    assert np.asarray(rows).max() == DATA_ROWS - 1


def test_row_imbalance_through_static_and_python_scalar_arguments():
    # A jitted function with a static argument (the row count, by position and by name) and a
    # Python float (traced, weakly typed): JAX's own record of the traced arguments tells which
    # arguments the jaxpr takes, so the rows are found (26.4, as above).
    import functools

    _, (vals, rows, cols, x) = _data_spmv()

    @functools.partial(jax.jit, static_argnums=4, static_argnames=("sorted_ids",))
    def scaled(vals, row, col, x, n, alpha, sorted_ids=False):
        return jax.ops.segment_sum(
            alpha * vals * x[col], row, num_segments=n, indices_are_sorted=sorted_ids
        )

    got = fpga.row_imbalance_from_args(
        scaled, vals, rows, cols, x, DATA_ROWS, 0.5, sorted_ids=False
    )
    assert got.delta == pytest.approx(DATA_DELTA)
    est = fpga.estimate(scaled, vals, rows, cols, x, DATA_ROWS, 0.5, target="alveo-u280")
    assert (
        est.row_imbalance == pytest.approx(DATA_DELTA) and est.row_imbalance_source == "arguments"
    )

    # Two static integers and one traced integer of the same shape and kind: which one the trace
    # took cannot be told from the arguments, so no ratio, and the note says what to do.
    @functools.partial(jax.jit, static_argnums=(4, 6))
    def shifted(vals, row, col, x, n, k, m):
        return jax.ops.segment_sum(vals * x[col], (row + k) % n, num_segments=n) * m

    got = fpga.row_imbalance_from_args(shifted, vals, rows, cols, x, DATA_ROWS, 0, 2)
    assert got.delta is None
    assert "do not match" in got.note and "give row_imbalance=" in got.note


def test_row_imbalance_with_arguments_it_cannot_compare():
    # Static arguments JAX never makes arrays (a string, a function, an int beyond int32) and a
    # PRNG key beside a static argument: the match goes on without them, never raises.
    _, (vals, rows, cols, x) = _data_spmv()

    @functools.partial(jax.jit, static_argnums=(4, 5))
    def moded(vals, row, col, x, mode, f):
        y = jax.ops.segment_sum(vals * x[col], row, num_segments=DATA_ROWS)
        return f(y) if mode == "f" else y

    got = fpga.row_imbalance_from_args(moded, vals, rows, cols, x, "f", jnp.sin)
    assert got.delta == pytest.approx(DATA_DELTA)
    got = fpga.row_imbalance_from_args(moded, vals, rows, cols, x, 2**70, jnp.sin)
    assert got.delta == pytest.approx(DATA_DELTA)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in (vals, rows, cols, x)]
    # Shapes only beside static arguments: nothing is said (and nothing raised).
    est = fpga.estimate(moded, *shapes, "f", jnp.sin, target="alveo-u280")
    assert est.row_imbalance is None and not [n for n in est.notes if "row imbalance" in n]

    @functools.partial(jax.jit, static_argnums=0)
    def keyed(n, key, v):
        return jnp.zeros(n).at[jax.random.randint(key, (5000,), 0, n)].add(v)

    got = fpga.row_imbalance_from_args(keyed, 1000, jax.random.key(0), jnp.ones(5000))
    assert got.delta is not None and got.delta >= 1


def test_row_imbalance_memory_follows_the_updates_not_the_rows():
    # 100,000 updates into 2^28 rows given as a shape: the PEs' loads come from the updates
    # (bincount of row mod 128), never an array of 2^28 row lengths. Rows 0..99,999 dealt to 128
    # PEs: 782 rows on PEs 0-31 (31 x 782 + ...): by hand, 100,000 = 781 x 128 + 32, so PEs 0-31
    # take 782 rows and the rest 781; NNZ / P = 781.25 -> delta 782 / 781.25.
    import tracemalloc

    def scatter(x, rows, v):
        return x.at[rows].add(v)

    args = (
        jax.ShapeDtypeStruct((2**28,), jnp.float32),
        jnp.arange(100_000, dtype=jnp.int32),
        jnp.ones(100_000),
    )
    tracemalloc.start()  # NumPy's arrays are traced (the rows' lengths would be 2 GiB of int64)
    try:
        got = fpga.row_imbalance_from_args(scatter, *args)
        peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert got.delta == pytest.approx(782 / 781.25)
    assert got.scatters[0]["rows"] == 2**28 and got.scatters[0]["updates"] == 100_000
    assert peak_mb < 100


def test_row_imbalance_lists_few_scatters():
    # Twelve scatters whose ratios differ: the note names eight and counts the rest.
    _, (vals, rows, cols, x) = _data_spmv()

    def many(vals, row, col, x):
        out = [
            jax.ops.segment_sum(
                vals * x[col], (row + k) % DATA_ROWS if k % 2 else col, num_segments=DATA_ROWS
            )
            for k in range(12)
        ]
        return sum(out)

    got = fpga.row_imbalance_from_args(many, vals, rows, cols, x)
    assert got.delta is None and "ratios differ" in got.note and ", and 4 more)" in got.note
    assert len(got.scatters) == 12 and got.note.count("scatter-add at ") == 8


def test_row_imbalance_not_taken_from_the_arguments_says_why():
    _, (vals, rows, cols, x) = _data_spmv()

    def two(vals, row, col, x):  # two matrices: rows 26.4, columns 320 / 256 spread -> other
        y = jax.ops.segment_sum(vals * x[col], row, num_segments=DATA_ROWS)
        return jax.ops.segment_sum(vals * y[row], col, num_segments=DATA_ROWS)

    est = fpga.estimate(two, vals, rows, cols, x, target="alveo-u280")
    assert est.row_imbalance is None
    (note,) = [n for n in est.notes if "row imbalance not taken" in n]
    assert "ratios differ" in note and "26.4" in note and "give row_imbalance=" in note

    def looped(vals, row, col, x):
        def body(i, acc):
            return acc + jax.ops.segment_sum(vals * x[col], row, num_segments=DATA_ROWS)

        return jax.lax.fori_loop(0, 3, body, jnp.zeros(DATA_ROWS))

    est = fpga.estimate(looped, vals, rows, cols, x, target="alveo-u280")
    assert est.row_imbalance is None
    assert [n for n in est.notes if "not taken" in n and "inside a loop" in n]

    # The rows given as a shape only, the rest as arrays.
    shape = jax.ShapeDtypeStruct(rows.shape, rows.dtype)
    est = fpga.estimate(_data_spmv()[0], vals, shape, cols, x, target="alveo-u280")
    assert est.row_imbalance is None
    assert [n for n in est.notes if "not taken" in n and "given as a shape" in n]

    def dense(a, b):  # no scatter: nothing to say
        return a @ b

    est = fpga.estimate(dense, jnp.ones((8, 8)), jnp.ones((8, 8)))
    assert est.row_imbalance is None and not [n for n in est.notes if "row imbalance" in n]


def test_row_imbalance_from_args_is_what_estimate_applies():
    spmv, args = _data_spmv()
    got = fpga.row_imbalance_from_args(spmv, *args)
    assert isinstance(got, fpga.DataImbalance)
    assert got.delta == pytest.approx(DATA_DELTA)
    (s,) = got.scatters
    assert s["primitive"] == "scatter-add" and s["rows"] == DATA_ROWS and s["updates"] == 320
    assert s["where"].startswith("test_fpga_estimate.py:")
    assert "computed from the arguments" in got.note
    # 64 PEs: PE 0 holds rows 0, 64, 128, 192 (65 + 3); NNZ / P = 5 -> 68 / 5.
    assert fpga.row_imbalance_from_args(spmv, *args, pes=64).delta == pytest.approx(68 / 5)
    with pytest.raises(fpgaprof.InvalidArgumentError, match="pes"):
        fpga.row_imbalance_from_args(spmv, *args, pes=0)
    with pytest.raises(fpgaprof.InvalidArgumentError, match="takes a function"):
        fpga.row_imbalance_from_args("spmv", *args)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    blind = fpga.row_imbalance_from_args(spmv, *shapes)
    assert blind.delta is None and blind.note == "" and blind.scatters == []


def test_row_imbalance_tells_apart_two_calls_of_one_jitted_function():
    # One jitted SpMV called with two matrices shares one jaxpr between the calls: each call's
    # scatter is evaluated with its own rows, so the ratios differ and none is applied. The
    # second matrix's rows are the columns, 7 i mod 256 for i < 320: every row once, and the 64
    # rows 7 j mod 256 (j < 64) twice; those fall on 64 different PEs (7 is invertible mod 128),
    # so the most loaded PE holds 1 + 1 + 1 = 3 of NNZ / P = 2.5: delta 1.2 by hand.
    spmv, (vals, rows, cols, x) = _data_spmv()
    one = jax.jit(spmv)

    def twice(vals, rows_a, rows_b, col, x):
        return one(vals, rows_a, col, x) + one(vals, rows_b, col, x)

    got = fpga.row_imbalance_from_args(twice, vals, rows, cols, cols, x)
    assert [s["delta"] for s in got.scatters] == pytest.approx([DATA_DELTA, 1.2])
    assert got.delta is None and "ratios differ" in got.note
    same = fpga.row_imbalance_from_args(twice, vals, rows, rows, cols, x)
    assert same.delta == pytest.approx(DATA_DELTA) and len(same.scatters) == 2


def test_row_imbalance_from_a_sparse_matrix_of_jax_experimental_sparse():
    # The same matrix as a BCOO and a BCSR matrix (jax.experimental.sparse's products lower to
    # gathers and scatters): A @ x deals A's rows (26.4), x @ A its columns (1.2, by hand in
    # the test above), A @ X (several right-hand sides) the rows again.
    import numpy as np
    from jax.experimental import sparse

    _, (vals, rows, cols, x) = _data_spmv()
    a = sparse.BCOO((vals, jnp.stack([rows, cols], axis=1)), shape=(DATA_ROWS, DATA_ROWS))
    b = sparse.BCSR.from_bcoo(a.sort_indices())
    assert np.diff(np.asarray(b.indptr)).max() == 65  # row 0's nonzeros, through the pointer

    def matvec(m, v):
        return m @ v

    def vecmat(m, v):
        return v @ m

    cases = [
        (matvec, a, x, DATA_DELTA, "bcoo_dot_general"),
        (matvec, b, x, DATA_DELTA, "bcsr_dot_general"),
        (vecmat, a, x, 1.2, "bcoo_dot_general"),
        (matvec, a, jnp.ones((DATA_ROWS, 3), jnp.float32), DATA_DELTA, "bcoo_dot_general"),
    ]
    for fn, m, v, delta, prim in cases:
        got = fpga.row_imbalance_from_args(fn, m, v)
        assert got.delta == pytest.approx(delta), (prim, got.note)
        assert got.scatters[0]["primitive"] == prim and got.scatters[0]["updates"] == 320
    est = fpga.estimate(matvec, a, x, target="alveo-u280")
    assert (
        est.row_imbalance == pytest.approx(DATA_DELTA) and est.row_imbalance_source == "arguments"
    )


def test_row_imbalance_runs_only_the_slice_behind_the_rows():
    # A jitted helper returns the rows untouched and something else from a host callback: the
    # rows are taken, the callback never runs. Rows that come out of a callback are not taken
    # (it is never run), and say so. A scatter whose result is unused does not count; a single
    # dynamic update (one update, fewer than the 128 PEs) is no matrix product: no ratio.
    from jax.experimental import io_callback

    spmv, (vals, rows, cols, x) = _data_spmv()
    ran = []

    def host(v):
        ran.append(1)
        return v

    @jax.jit
    def helper(r, v):
        return r, io_callback(host, jax.ShapeDtypeStruct(v.shape, v.dtype), v)

    def through_helper(vals, row, col, x):
        r, y = helper(row, x)
        return spmv(vals, r, col, x) + y

    got = fpga.row_imbalance_from_args(through_helper, vals, rows, cols, x)
    assert got.delta == pytest.approx(DATA_DELTA) and ran == []

    def from_callback(vals, row, col, x):
        r = io_callback(host, jax.ShapeDtypeStruct(row.shape, row.dtype), row)
        return spmv(vals, r, col, x)

    got = fpga.row_imbalance_from_args(from_callback, vals, rows, cols, x)
    assert got.delta is None and ran == [] and "side effects" in got.note

    def from_pure(vals, row, col, x):  # a callback JAX calls pure is not run either
        r = jax.pure_callback(host, jax.ShapeDtypeStruct(row.shape, row.dtype), row)
        return spmv(vals, r, col, x)

    got = fpga.row_imbalance_from_args(from_pure, vals, rows, cols, x)
    assert got.delta is None and ran == [] and "host callback" in got.note

    def with_dead(vals, row, col, x):
        spmv(vals, col, row, x)  # computed, never used: XLA drops it
        return spmv(vals, row, col, x)

    got = fpga.row_imbalance_from_args(with_dead, vals, rows, cols, x)
    assert got.delta == pytest.approx(DATA_DELTA) and len(got.scatters) == 1

    def one_update(x, i):
        return x.at[i].set(1.0)

    got = fpga.row_imbalance_from_args(one_update, x, jnp.int32(3))
    assert got.delta is None and "1 update: fewer than the 128 PEs" in got.note


def test_estimate_of_a_function_jax_cannot_jit_is_a_typed_error():
    # Python control flow on an array's value (as MBIRJAX 0.7's projector wrappers, which refuse
    # to run under jit): one typed error naming the function, the cause and the way out, with
    # JAX's own error chained.
    def branchy(x):
        return x if float(x.sum()) > 0 else -x

    with pytest.raises(
        fpgaprof.InvalidArgumentError, match="could not jit branchy as a whole"
    ) as e:
        fpga.estimate(branchy, jnp.ones(4))
    assert "ConcretizationTypeError" in str(e.value) and "fpgaprof run" in str(e.value)
    assert "static_argnums" in str(e.value) and e.value.__cause__ is not None
    # The user's own errors pass through as they are: a wrong argument count, a bug.
    with pytest.raises(TypeError):
        fpga.estimate(branchy, jnp.ones(4), jnp.ones(4))

    def buggy(x):
        raise ValueError("the user's own")

    with pytest.raises(ValueError, match="the user's own"):
        fpga.estimate(buggy, jnp.ones(4))


def test_cli_estimate_footer_command_repeats_the_card_and_quotes_the_path(tmp_path):
    # the footer names the command that prints the other columns: it must be the same estimate
    # (the card given, not the default one) and must survive a shell (a path with a space)
    folder = tmp_path / "my dumps"
    folder.mkdir()
    path = folder / "triad.hlo"
    path.write_text(TRIAD_HLO)
    r = _cli("estimate", str(path), "--target", "alveo-u280", "--row-imbalance", "2.5")
    assert r.returncode == 0, r.stderr
    more = [ln for ln in r.stdout.splitlines() if "more columns" in ln]
    assert more, r.stdout
    cmd = more[0].split("more columns: ", 1)[1].rstrip(")")
    argv = shlex.split(cmd)
    assert argv[1:] == ["estimate", str(path), "--target", "alveo-u280", "--row-imbalance",
                        "2.5", "--json"], cmd


def test_gathers_from_one_array_count_it_once_for_the_on_chip_fit():
    # x[a] + x[b] + x[c], x 31,457,280 B (under the V80's nominal room, 0.5 x 70,909,952 B =
    # 35.45 MB), three gathers of 2^20 floats: the array fits on chip once, whatever number of
    # gathers read it (it was counted three times, 94 MB, and left in card memory). Restructured:
    # the io (x, a, b, c in, the result out: 31,457,280 + 4 x 4,194,304 = 48,234,496 B) at the
    # V80's nominal stream rate, over the on-chip accesses (3 x 2^20 / (129.602 lanes x 222 MHz)
    # = 0.109 ms), + one launch (40 us) = 0.1859 ms.
    card = next(p for p in fpga.presets() if p["name"] == "versal-v80")
    x = jax.ShapeDtypeStruct((31_457_280 // 4,), jax.numpy.float32)
    i = jax.ShapeDtypeStruct((1 << 20,), jax.numpy.int32)
    est = fpga.estimate(lambda x, a, b, c: x[a] + x[b] + x[c], x, i, i, i, target="versal-v80")
    io = 31_457_280 + 4 * 4 * (1 << 20)
    onchip = 3 * (1 << 20) / (card["onchip_lanes"] * card["clock_hz"])
    want = max(io / card["stream_bytes_per_s"], onchip) + card["call_latency_s"]
    assert est.restructured_card_time_s == pytest.approx(want, rel=1e-6)
