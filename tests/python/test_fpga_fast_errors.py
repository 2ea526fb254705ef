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
    est = fpga.estimate(
        lambda x: x / jnp.sum(x), jax.ShapeDtypeStruct((n,), jnp.float32), target="alveo-u55c"
    )
    card = _card("alveo-u55c")
    floor = 3 * 4 * n / card["stream_bytes_per_s"]  # 10.68 ms at nominal
    assert est.restructured_card_time_s >= floor  # 2 GiB alone: 7.16 ms


def test_a_function_larger_than_the_card_memory_says_so():
    # 12 GiB in and 12 GiB out on a U280 (8 GB of HBM): the data cannot be resident.
    n = 3 * 1024 * 1024 * 1024
    est = fpga.estimate(
        lambda x: x * 2.0, jax.ShapeDtypeStruct((n,), jnp.float32), target="alveo-u280"
    )
    assert any("card memory" in note for note in est.notes), est.notes


def test_a_loop_trip_costs_at_least_a_clock_cycle_and_a_data_dependent_read():
    # 2^20 trips of acc += x[idx[i]] (x 256 MB): a pipelined design issues at most one trip per
    # cycle (II = 1), and each trip reads x at a data-dependent offset.
    trips, n = 1 << 20, 64 * 1024 * 1024

    def f(x, idx):
        return jax.lax.fori_loop(
            0,
            trips,
            lambda i, acc: acc + jax.lax.dynamic_slice(x, (idx[i],), (1,))[0],
            jnp.float32(0),
        )

    est = fpga.estimate(
        f,
        jax.ShapeDtypeStruct((n,), jnp.float32),
        jax.ShapeDtypeStruct((trips,), jnp.int32),
        target="alveo-u55c",
    )
    card = _card("alveo-u55c")
    assert est.card_time_s >= trips / card["clock_hz"]  # 4.72 ms
    body = est.to_pandas()
    assert body["random_bytes"].sum() >= trips * 4  # x[idx[i]], one float a trip
    # at the memory's rates alone (docs/fpga-model.md): the 2^20 reads at 23 channels x 92.5786 M
    # accesses/s (492.4 us) and the body's streamed bytes at 23 x 14.375 GB/s x 0.91216 (the
    # 16.8 MB of the CPU program's fusion: 55.6 us), far under the 4.72 ms of cycles
    (row,) = body[body["random_bytes"] > 0].itertuples()
    channels = 32 * 0.71875
    assert row.card_memory_s == pytest.approx(
        trips / (channels * 92.5786e6) + row.stream_bytes / (channels * 14.375e9 * 0.91216), rel=1e-4
    )


@pytest.mark.parametrize("data", [True, False], ids=["offset_from_data", "offset_from_counter"])
def test_a_loop_writing_at_a_data_dependent_offset_writes_at_random(data):
    # 2^16 trips of acc = acc.at[idx[i]].set(v[i]) into a 64 MB acc: each trip writes one float
    # where idx says, a data-dependent write of 4 B (2^16 x 4 = 262,144 B at random); at the loop
    # counter (acc.at[i].set(v[i])) the loop walks acc in order and streams.
    trips, n = 1 << 16, 16 * 1024 * 1024

    def f(x, idx, v):
        return jax.lax.fori_loop(
            0,
            trips,
            lambda i, acc: jax.lax.dynamic_update_slice(acc, v[i][None], (idx[i] if data else i,)),
            x,
        )

    est = fpga.estimate(
        f,
        jax.ShapeDtypeStruct((n,), jnp.float32),
        jax.ShapeDtypeStruct((trips,), jnp.int32),
        jax.ShapeDtypeStruct((trips,), jnp.float32),
        target="alveo-u55c",
    )
    assert est.to_pandas()["random_bytes"].sum() == (trips * 4 if data else 0)


def _hlo(index):
    return (
        """HloModule hashed_gather

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
"""
        % index
    )


def test_a_hashed_iota_index_through_a_broadcast_is_random():
    # cols * 40503 & (2^24 - 1): computed from iotas and constants, but a scatter of columns over
    # the 64 MB table, not a walk in order: 524,288 reads of 4 B, as a gather from the table
    # itself with the same index is charged.
    op = fpga.estimate_hlo(_hlo("cols"), target="alveo-u55c").to_pandas().iloc[0]
    assert op["random_bytes"] == 128 * 4096 * 4  # one float per index
    # an iota walked in order (stride 1, shifted by a constant) stays streamed
    ordered = (
        _hlo("cols")
        .replace(
            "h = s32[128,4096,1]{2,1,0} multiply(cols, kb)",
            "h = s32[128,4096,1]{2,1,0} add(cols, kb)",
        )
        .replace("concatenate(rows, hm)", "concatenate(rows, h)")
    )
    assert "add(cols, kb)" in ordered and "concatenate(rows, h)" in ordered
    assert fpga.estimate_hlo(ordered, target="alveo-u55c").to_pandas().iloc[0]["random_bytes"] == 0


def _gather_then_stream(table):
    """s = sin(x + sum(t[idx])): t is x (1 GiB) or a 16 KB v; four ops, so that the whole
    function as one design beats the ops one by one."""
    n = 268435456
    tn = n if table == "x" else 4096
    return f"""HloModule gather_then_stream

fg {{
  p0 = f32[{tn}]{{0}} parameter(0)
  p1 = s32[4096,1]{{1,0}} parameter(1)
  ROOT g = f32[4096]{{0}} gather(p0, p1), offset_dims={{}}, collapsed_slice_dims={{0}}, start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1}}
}}

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

fr {{
  p0 = f32[4096]{{0}} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p0, z), dimensions={{0}}, to_apply=add
}}

fa {{
  p0 = f32[{n}]{{0}} parameter(0)
  p1 = f32[] parameter(1)
  b = f32[{n}]{{0}} broadcast(p1), dimensions={{}}
  ROOT a = f32[{n}]{{0}} add(p0, b)
}}

fs {{
  p0 = f32[{n}]{{0}} parameter(0)
  ROOT s = f32[{n}]{{0}} sine(p0)
}}

ENTRY main {{
  x = f32[{n}]{{0}} parameter(0)
  idx = s32[4096,1]{{1,0}} parameter(1)
  v = f32[4096]{{0}} parameter(2)
  g = f32[4096]{{0}} fusion({table}, idx), kind=kLoop, calls=fg
  r = f32[] fusion(g), kind=kLoop, calls=fr
  a = f32[{n}]{{0}} fusion(x, r), kind=kLoop, calls=fa
  ROOT s = f32[{n}]{{0}} fusion(a), kind=kLoop, calls=fs
}}
"""


def test_a_gather_of_an_argument_is_no_summary_of_it():
    # sin(x + sum(x[idx])), x 1 GiB, 4096 indices: the gather reads 16 KB of x, not all of it,
    # so a design gathers first and then streams x once: x in and s out, 2 GiB, 7.12 ms at the
    # U55C's nominal stream rate, + one launch (40 us): as with the 16 KB v in place of x. A
    # re-read of x after the gather would be 3 GiB, 10.68 ms.
    card = _card("alveo-u55c")
    floor = 2 * 4 * 268435456 / card["stream_bytes_per_s"] + card["call_latency_s"]
    from_v = fpga.estimate_hlo(_gather_then_stream("v"), target="alveo-u55c")
    from_x = fpga.estimate_hlo(_gather_then_stream("x"), target="alveo-u55c")
    assert from_v.restructured_card_time_s == pytest.approx(floor, rel=1e-3)
    assert from_x.restructured_card_time_s == pytest.approx(floor, rel=1e-3)


@pytest.mark.parametrize(
    "offset",
    [
        lambda i: i * 16,
        lambda i: i + 7,
        lambda i: 4095 - i,
        lambda i: jnp.clip(i, 0, 4000) * 16,
        lambda i: jax.lax.clamp(0, i, 4000) * 16,
    ],
    ids=["block_i_times_16", "i_plus_7", "n_minus_1_minus_i", "clipped_block", "clamped_block"],
)
def test_a_loop_offset_from_the_counter_and_constants_walks_in_order(offset):
    # x[i * 16 : i * 16 + 16], x[i + 7], x[4095 - i], the block at i clipped or clamped to
    # [0, 4000] over 4096 trips: each trip's offset follows from the loop counter alone, so the loop walks x in order, as x[i] does (no random bytes);
    # only an offset read from data (x[idx[i]], above) lands anywhere.
    trips = 4096

    def f(x):
        return jax.lax.fori_loop(
            0,
            trips,
            lambda i, acc: acc + jax.lax.dynamic_slice(x, (offset(i),), (16,)).sum(),
            jnp.float32(0),
        )

    est = fpga.estimate(
        f, jax.ShapeDtypeStruct((trips * 16 + 16,), jnp.float32), target="alveo-u55c"
    )
    assert est.to_pandas()["random_bytes"].sum() == 0



_GATHER_SCATTER_ONE_ARRAY = """HloModule gather_scatter_one_array

add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused_gs {
  param_0 = f32[65536]{0} parameter(0)
  param_1 = s32[1048576,1]{1,0} parameter(1)
  param_2 = s32[1048576,1]{1,0} parameter(2)
  g = f32[1048576]{0} gather(param_0, param_2), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  ROOT s = f32[65536]{0} scatter(param_0, param_1, g), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f
}

ENTRY main {
  u = f32[65536]{0} parameter(0)
  r = s32[1048576,1]{1,0} parameter(1)
  c = s32[1048576,1]{1,0} parameter(2)
  ROOT f = f32[65536]{0} fusion(u, r, c), kind=kLoop, calls=fused_gs
}
"""


def test_a_scatter_into_the_array_its_fusion_gathers_from_still_runs_at_its_busiest_pe():
    # u.at[r].add(u[c]) as one fusion: the gather and the scatter land in one array (one
    # source_id, counted once on chip), but the scatter is still a scatter: a row imbalance of 8
    # (docs/fpga-model.md: a scatter runs at the pace of its most loaded PE) must slow the
    # restructured design, as it does when the gather reads another array.
    even = fpga.estimate_hlo(_GATHER_SCATTER_ONE_ARRAY, target="alveo-u55c")
    skewed = fpga.estimate_hlo(_GATHER_SCATTER_ONE_ARRAY, target="alveo-u55c", row_imbalance=8.0)
    assert skewed.restructured_card_time_s > even.restructured_card_time_s
    assert skewed.restructured_card_time_range_s[1] > even.restructured_card_time_range_s[1]


def test_a_reread_and_a_gathered_table_share_the_on_chip_room():
    # x / sum(x) + t[idx] on a U55C, x and t 25,165,824 B each, idx 6,291,456 s32: x is read again
    # after its sum unless it stays on chip, and t's gathers are served on chip when t fits. At
    # the fast end the room is 0.75 x 44,679,168 = 33,509,376 B: each fits alone, not both.
    # Whatever the design keeps, at least 25,165,824 - (33,509,376 - 25,165,824) = 16,822,272 B
    # more go through card memory than the io (x, t, idx in, the result out: 4 x 25,165,824 B),
    # at the fast end's 32 x 14.375e9 x 0.923913 B/s, + a launch (16 us): 0.2924 ms at least
    # (the model read 0.2529 ms, keeping both; at the nominal room it charged x again, 0.312 ms).
    card = fpga.resolve_target("alveo-u55c")
    b, room = 25_165_824, card["onchip_share_high"] * card["sram_bytes"]
    n = b // 4
    est = fpga.estimate(lambda x, t, idx: x / jnp.sum(x) + t[idx], jax.ShapeDtypeStruct((n,), jnp.float32),
                        jax.ShapeDtypeStruct((n,), jnp.float32), jax.ShapeDtypeStruct((n,), jnp.int32),
                        target="alveo-u55c")
    fast_stream = card["memory_channels"] * card["channel_share_high"] * card["memory_channel_bytes_per_s"] \
        * card["stream_efficiency_high"]
    least = (4 * b + (b - (room - b))) / fast_stream + card["call_latency_s_low"]
    assert est.restructured_card_time_range_s[0] >= least * (1 - 1e-9)


_OFFSET_FROM = """HloModule offset_from

fused_pick {
  p0 = s32[1048576]{0} parameter(0)
  p1 = s32[] parameter(1)
  ds = s32[1]{0} dynamic-slice(p0, p1), dynamic_slice_sizes={1}
  ROOT b = s32[] bitcast(ds)
}

fused_slice {
  x = f32[16777216]{0} parameter(0)
  o = s32[] parameter(1)
  ds = f32[16]{0} dynamic-slice(x, o), dynamic_slice_sizes={16}
  ROOT n = f32[16]{0} negate(ds)
}

ENTRY main {
  x = f32[16777216]{0} parameter(0)
  idx = s32[1048576]{0} parameter(1)
  seven = s32[] constant(7)
  picked = s32[] fusion(idx, seven), kind=kLoop, calls=fused_pick
  ROOT f = f32[16]{0} fusion(x, %s), kind=kLoop, calls=fused_slice
}
"""


@pytest.mark.parametrize("offset,random", [("picked", 64), ("seven", 0)], ids=["read_from_data", "constant"])
def test_a_scalar_offset_handed_to_a_fusion_is_in_order_only_as_a_counter_or_constant(offset, random):
    # fused_slice reads x[o : o + 16] with o its scalar parameter. Handed idx[7] (another
    # fusion's dynamic-slice of data), o lands anywhere: 16 floats read at random (64 B). Handed
    # the constant 7 it is in order. (A loop's counter is too: the fori_loop tests above.)
    op = fpga.estimate_hlo(_OFFSET_FROM.replace("%s", offset), target="alveo-u55c").to_pandas()
    assert op.loc[op["op"] == "f", "random_bytes"].item() == random
