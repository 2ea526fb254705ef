"""Estimates that err fast: each test states what a
card must at least spend, from the shapes and the card's own constants, and fails while the
model charges less."""

import jax
import jax.numpy as jnp
import pytest

from fpgaprof import fpga


def _card(name):
    return fpga.resolve_target(name)


def test_an_input_read_before_and_after_its_own_reduction_is_read_twice():
    # x / sum(x), x 1 GiB: the sum needs all of x before the first quotient, and x (1 GiB) does
    # not fit on chip (U55C room 22 MB), so any design reads x twice: 3 GiB moved at least.
    n = 256 * 1024 * 1024
    est = fpga.estimate(lambda x: x / jnp.sum(x), jax.ShapeDtypeStruct((n,), jnp.float32),
                        target="alveo-u55c")
    card = _card("alveo-u55c")
    floor = 3 * 4 * n / card["stream_bytes_per_s"]          # 10.68 ms at nominal
    assert est.restructured_card_time_s >= floor           # was 7.16 ms (2 GiB)


def test_a_function_larger_than_the_card_memory_says_so():
    # 12 GiB in and 12 GiB out on a U280 (8 GB of HBM): the data cannot be resident.
    n = 3 * 1024 * 1024 * 1024
    est = fpga.estimate(lambda x: x * 2.0, jax.ShapeDtypeStruct((n,), jnp.float32), target="alveo-u280")
    assert any("card memory" in note for note in est.notes), est.notes


def test_a_loop_trip_costs_at_least_a_clock_cycle_and_a_data_dependent_read():
    # 2^20 trips of acc += x[idx[i]] (x 256 MB): a pipelined design issues at most one trip per
    # cycle (II = 1), and each trip reads x at a data-dependent offset.
    trips, n = 1 << 20, 64 * 1024 * 1024

    def f(x, idx):
        return jax.lax.fori_loop(
            0, trips, lambda i, acc: acc + jax.lax.dynamic_slice(x, (idx[i],), (1,))[0], jnp.float32(0))

    est = fpga.estimate(f, jax.ShapeDtypeStruct((n,), jnp.float32),
                        jax.ShapeDtypeStruct((trips,), jnp.int32), target="alveo-u55c")
    card = _card("alveo-u55c")
    assert est.card_time_s >= trips / card["clock_hz"]      # 4.72 ms; was 210 us
    body = est.to_pandas()
    assert body["random_bytes"].sum() >= trips * 4          # x[idx[i]]: was 0


def _hlo(index):
    return """HloModule hashed_gather

fused_gather {
  param_0 = f32[16777216]{0} parameter(0)
  b = f32[128,16777216]{1,0} broadcast(param_0), dimensions={1}
  rows = s32[128,4096,1]{2,1,0} iota(), iota_dimension=0
  cols = s32[128,4096,1]{2,1,0} iota(), iota_dimension=1
  k = s32[] constant(40503)
  kb = s32[128,4096,1]{2,1,0} broadcast(k), dimensions={}
  h = s32[128,4096,1]{2,1,0} multiply(%s, kb)
  m = s32[] constant(16777215)
  mb = s32[128,4096,1]{2,1,0} broadcast(m), dimensions={}
  hm = s32[128,4096,1]{2,1,0} and(h, mb)
  idx = s32[128,4096,2]{2,1,0} concatenate(rows, hm), dimensions={2}
  ROOT g = f32[128,4096]{1,0} gather(b, idx), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=2, slice_sizes={1,1}
}

ENTRY main {
  p = f32[16777216]{0} parameter(0)
  ROOT f = f32[128,4096]{1,0} fusion(p), kind=kLoop, calls=fused_gather
}
""" % index


def test_a_hashed_iota_index_through_a_broadcast_is_random():
    # cols * 40503 & (2^24 - 1): computed from iotas and constants, but a scatter of columns over
    # the 64 MB table, not a walk in order: 524,288 reads of 4 B, as a gather from the table
    # itself with the same index is charged.
    op = fpga.estimate_hlo(_hlo("cols"), target="alveo-u55c").to_pandas().iloc[0]
    assert op["random_bytes"] == 128 * 4096 * 4            # was 0
    # an iota walked in order (stride 1, shifted by a constant) stays streamed
    ordered = (_hlo("cols")
               .replace("h = s32[128,4096,1]{2,1,0} multiply(cols, kb)", "h = s32[128,4096,1]{2,1,0} add(cols, kb)")
               .replace("concatenate(rows, hm)", "concatenate(rows, h)"))
    assert "add(cols, kb)" in ordered and "concatenate(rows, h)" in ordered
    assert fpga.estimate_hlo(ordered, target="alveo-u55c").to_pandas().iloc[0]["random_bytes"] == 0
