"""Region estimates that err fast: each test states what a region's design must at least
spend, from its modules' own estimates or the calls the trace ran, and fails while the model
charges less."""

import jax
import jax.numpy as jnp

from fpgaprof import fpga

_DEVICE = {
    "name": "test-gpu",
    "cc_major": 8,
    "cc_minor": 0,
    "sm_count": 100,
    "core_clock_khz": 1_000_000,
    "memory_clock_khz": 1_000_000,
    "memory_bus_width_bits": 4096,
    "pcie_generation": 4,
    "pcie_link_width": 16,
}


def _store(region, modules, kernels):
    from _store_builder import store_from_lists

    t, ks = 1_000, []
    for name, ns in kernels:
        ks.append({"name": name, "start_ns": t, "end_ns": t + ns, "grid": 1000, "region": 0})
        t += ns + 1_000
    return store_from_lists(
        {
            "devices": [_DEVICE],
            "kernels": ks,
            "regions": [{"name": region, "start_ns": 0, "end_ns": t + 1_000, "thread_id": 1}],
            "hlo_modules": [{"name": n, "text": x} for n, x in modules],
            "start_ns": 0,
            "end_ns": t + 2_000,
        }
    )


def test_a_region_of_two_calls_is_not_faster_than_each_call_in_turn():
    # s = sum(a @ b) (compute: 2.15 GFLOP, 4.02 ms at 534.9 GFLOP/s), then x * s (x 512 MiB:
    # 1 GiB streamed, 3.56 ms): two jitted calls, the second needs the first's whole result.
    # Each module's own design takes 4.06 ms and 3.60 ms (launch included): 7.66 ms in turn.
    # The region's one dataflow design overlaps the first's compute with the second's
    # streaming: 4.35 ms, "only restructured" 1.38x where 0.78x is the most it can be.
    n, m = 1024, 1 << 27

    def mm_sum(a, b):
        return jnp.sum(a @ b)

    def scale(x, s):
        return x * s

    a = jax.jit(mm_sum).lower(*(jax.ShapeDtypeStruct((n, n), jnp.float32),) * 2).compile().as_text()
    b = (
        jax.jit(scale)
        .lower(jax.ShapeDtypeStruct((m,), jnp.float32), jax.ShapeDtypeStruct((), jnp.float32))
        .compile()
        .as_text()
    )
    store = _store(
        "step",
        [("jit_mm_sum", a), ("jit_scale", b)],
        [("ynn_fusion", 3_000_000), ("wrapped_reduce", 10_000), ("broadcast_multiply_fusion", 3_000_000)],
    )
    (row,) = [
        r
        for r in fpga.fpga_candidates(store, target="alveo-u55c", by="region", inputs_cross_link=False)
        if r["region"] == "step"
    ]
    in_turn = (
        fpga.estimate_hlo(a, "alveo-u55c").restructured_card_time_s
        + fpga.estimate_hlo(b, "alveo-u55c").restructured_card_time_s
    )
    assert row["restructured_card_time_s"] >= 0.999 * in_turn  # 4.35 ms < 7.66 ms now
    assert row["verdict"] == "no"  # "only restructured" now


def test_a_module_call_whose_branch_did_not_run_is_still_a_call():
    # step(x, flag) = cond(flag, sin(v) * 2, v) of v = 3x + 1, x 64 MiB, called 4 times, its branch
    # taken once, on a trace without XlaModule ranges: 4 calls, each moving x in and the result
    # out (134,217,729 B): 536,870,916 B over the link, 4 launches. The fewest executions of one
    # of its ops (the branch's fusion: 1) counts 1 call: 134,217,729 B, 1 launch.
    mm = 1 << 24

    def step(x, flag):
        y = x * 3.0 + 1.0
        return jax.lax.cond(flag, lambda v: jnp.sin(v) * 2.0, lambda v: v, y)

    text = (
        jax.jit(step)
        .lower(jax.ShapeDtypeStruct((mm,), jnp.float32), jax.ShapeDtypeStruct((), jnp.bool_))
        .compile()
        .as_text()
    )
    assert "conditional(" in text and "%broadcast_multiply_fusion = " in text
    kernels = []
    for call in range(4):
        kernels += [("broadcast_add_fusion", 400_000), ("wrapped_convert", 2_000)]
        if call == 0:
            kernels.append(("broadcast_multiply_fusion", 400_000))
    store = _store("solve", [("jit_step", text)], kernels)
    (row,) = [r for r in fpga.fpga_candidates(store, target="alveo-u55c", by="region") if r["region"] == "solve"]
    assert row["module_calls"] == 4  # 1 now
    assert row["transfer_bytes"] == 4 * (2 * 4 * mm + 1)  # 134,217,729 now


def test_ops_kept_on_the_gpu_hand_their_arrays_to_the_card_over_the_link():
    """MBIRJAX 0.7.3's Pallas forward projection at 128³ (H200): jit_chunk_fn keeps XLA's cub
    sort (custom-call.1) and two Pallas calls on the GPU between fusions that go to the card.
    From the module's HLO, per call: the sort takes bitcast.11.0 (loop_clamp_fusion) and
    wrapped_iota and gives back its sorted values (to loop_gather_select_fusion) and keys (the
    while loop's state), 4 x s32[128,37932] = 4 x 19,421,184 B; pallas_call.2 takes
    input_concatenate_fusion (s32[128,128,4], 262,144 B) and both of loop_gather_select_fusion's
    results (2 x 19,421,184 B); pallas_call.3 takes input_concatenate_fusion.1 (s32[128,592,4],
    1,212,416 B; the gathered arrays already crossed) and gives input_transpose_fusion its
    f32[128,129,128] (8,454,144 B). 126,455,808 B, over the link with the data on the card too.
    With the data on the card, both Pallas calls also read the module's argument vals_pad.1
    (f32[12644,128], 6,473,728 B, once a call), which lives on the card: 132,929,536 B."""
    import os

    import fpgaprof

    path = os.path.join(os.path.dirname(__file__), "..", "data", "traces",
                        "mbirjax073_parallel_128_pallas_h200.fpgaprof")
    prof = fpgaprof.load(path)
    want = 4 * 19_421_184 + 262_144 + 2 * 19_421_184 + 1_212_416 + 8_454_144
    assert want == 126_455_808
    resident = want + 12644 * 128 * 4
    for cross, handed, text in ((True, want, "126.5"), (False, resident, "132.9")):
        (row,) = [r for r in prof.fpga_candidates("alveo-u55c", by="region", inputs_cross_link=cross)
                  if r["region"] == "forward_project"]
        assert row["handoff_bytes"] == handed
        assert row["transfer_bytes"] >= handed
        assert row["transfer_s"] >= handed / (15.754e9 * 0.771532)  # the link's fast end at most
        assert f"hand {text} MB to and from the card's ops" in row["estimate_note"]
    # The back projection's jit_wrapped is its Pallas kernel alone: the whole module stays on
    # the GPU, and with its arguments on the GPU (over PCIe) it hands nothing. With the region's
    # data on the card (the region's other modules run there), each of its calls takes its
    # arguments from the card and gives its result back: s32[128,12644] (6,473,728 B),
    # f32[128,3,12644] (19,421,184 B), f32[128,128,128] (8,388,608 B) in, f32[12644,128]
    # (6,473,728 B) out, once in the region: 40,757,248 B.
    for cross, handed in ((True, 0), (False, 6_473_728 + 19_421_184 + 8_388_608 + 6_473_728)):
        (back,) = [r for r in prof.fpga_candidates("alveo-u55c", by="region", inputs_cross_link=cross)
                   if r["region"] == "back_project"]
        assert back["handoff_bytes"] == handed


def test_a_region_rereads_an_input_needed_after_its_own_reduction():
    # x / sum(x) on a trace: a region "norm" runs the module's four fusions once. Its dataflow
    # design reads x (1 GiB, beyond the U55C's 22 MB room) for the sum and again for the
    # quotient, and writes the 1 GiB result: 3 GiB at least, as the static estimate.
    n = 256 * 1024 * 1024
    text = jax.jit(lambda x: x / jnp.sum(x)).lower(jax.ShapeDtypeStruct((n,), jnp.float32)).compile().as_text()
    names = ["ynn_fusion", "wrapped_reduce-window", "reduce_divide_fusion", "broadcast_multiply_fusion"]
    assert all(f"%{k} = " in text for k in names)
    store = _store("norm", [("jit__lambda_", text)], [(k, 900_000) for k in names])
    (row,) = [r for r in fpga.fpga_candidates(store, target="alveo-u55c", by="region") if r["region"] == "norm"]
    card = next(p for p in fpga.presets() if p["name"] == "alveo-u55c")
    assert row["restructured_card_time_s"] >= 3 * 4 * n / card["stream_bytes_per_s"]  # 10.68 ms


_MIXED = """HloModule jit_mixed, entry_computation_layout={(f32[1024]{0}, f32[2048]{0})->(f32[1024]{0}, f32[2048]{0})}

%fused_square (param_0: f32[1024]) -> f32[1024] {
  %param_0 = f32[1024]{0} parameter(0)
  ROOT %multiply.1 = f32[1024]{0} multiply(f32[1024]{0} %param_0, f32[1024]{0} %param_0)
}

ENTRY %main (x: f32[1024], y: f32[2048]) -> (f32[1024], f32[2048]) {
  %x = f32[1024]{0} parameter(0)
  %y = f32[2048]{0} parameter(1)
  %loop_square_fusion = f32[1024]{0} fusion(f32[1024]{0} %x), kind=kLoop, calls=%fused_square
  %custom-call.1 = f32[2048]{0} custom-call(f32[2048]{0} %y), custom_call_target="my_gpu_kernel"
  ROOT %tuple.1 = (f32[1024]{0}, f32[2048]{0}) tuple(%loop_square_fusion, %custom-call.1)
}
"""


def test_with_the_data_on_the_card_a_kept_op_takes_its_arguments_and_gives_its_results_over_the_link():
    # jit_mixed, called 3 times: loop_square_fusion goes to the card; custom-call.1 (no cost)
    # stays on the GPU, reads the argument y (8,192 B) and gives the module's second result
    # (8,192 B). Over PCIe the arguments come from the GPU and nothing is handed; with the data
    # on the card both cross the link each call: 3 x 16,384 = 49,152 B.
    kernels = [("loop_square_fusion", 50_000), ("custom_call_1", 50_000)] * 3  # XLA's kernel names
    store = _store("mixed", [("jit_mixed", _MIXED)], kernels)
    for cross, handed in ((True, 0), (False, 3 * (2048 * 4 + 2048 * 4))):
        (row,) = [r for r in fpga.fpga_candidates(store, target="alveo-u55c", by="region", inputs_cross_link=cross)
                  if r["region"] == "mixed"]
        assert row["module_calls"] == 3
        assert row["handoff_bytes"] == handed, cross


def test_with_the_data_on_the_card_a_kept_op_that_is_the_tuple_root_gives_its_results_over_the_link():
    # jit_mixed again, but custom-call.1 takes loop_square_fusion's result and y and computes
    # both of the module's results as one tuple, itself the root (no tuple, no
    # get-tuple-element). Each call it takes loop_square_fusion's 4,096 B from the card (with
    # the data anywhere) and, with the data on the card, the argument y (8,192 B) and gives the
    # whole result (4,096 + 8,192 B): 3 x 24,576 = 73,728 B (12,288 B over PCIe).
    text = _MIXED.replace(
        """  %custom-call.1 = f32[2048]{0} custom-call(f32[2048]{0} %y), custom_call_target="my_gpu_kernel"
  ROOT %tuple.1 = (f32[1024]{0}, f32[2048]{0}) tuple(%loop_square_fusion, %custom-call.1)""",
        """  ROOT %custom-call.1 = (f32[1024]{0}, f32[2048]{0}) custom-call(f32[1024]{0} %loop_square_fusion, """
        """f32[2048]{0} %y), custom_call_target="my_gpu_kernel\"""",
    )
    assert "ROOT %custom-call.1" in text
    kernels = [("loop_square_fusion", 50_000), ("custom_call_1", 50_000)] * 3
    store = _store("mixed", [("jit_mixed", text)], kernels)
    for cross, handed in ((True, 3 * 4096), (False, 3 * (4096 + 8192 + 4096 + 8192))):
        (row,) = [r for r in fpga.fpga_candidates(store, target="alveo-u55c", by="region", inputs_cross_link=cross)
                  if r["region"] == "mixed"]
        assert row["handoff_bytes"] == handed, cross


_LOOP_MIXED = """HloModule jit_loop_mixed, entry_computation_layout={(f32[1024]{0})->f32[1024]{0}}

%fused_square (param_0: f32[1024]) -> f32[1024] {
  %param_0 = f32[1024]{0} parameter(0)
  ROOT %multiply.1 = f32[1024]{0} multiply(f32[1024]{0} %param_0, f32[1024]{0} %param_0)
}

%fused_add (param_0.1: f32[1024]) -> f32[1024] {
  %param_0.1 = f32[1024]{0} parameter(0)
  ROOT %add.1 = f32[1024]{0} add(f32[1024]{0} %param_0.1, f32[1024]{0} %param_0.1)
}

%body (p: (s32[], f32[1024])) -> (s32[], f32[1024]) {
  %p = (s32[], f32[1024]{0}) parameter(0)
  %i = s32[] get-tuple-element((s32[], f32[1024]{0}) %p), index=0
  %v = f32[1024]{0} get-tuple-element((s32[], f32[1024]{0}) %p), index=1
  %loop_square_fusion = f32[1024]{0} fusion(f32[1024]{0} %v), kind=kLoop, calls=%fused_square
  %custom-call.1 = f32[1024]{0} custom-call(f32[1024]{0} %loop_square_fusion), custom_call_target="my_gpu_kernel"
  %loop_add_fusion = f32[1024]{0} fusion(f32[1024]{0} %custom-call.1), kind=kLoop, calls=%fused_add
  %one = s32[] constant(1)
  %j = s32[] add(s32[] %i, s32[] %one)
  ROOT %r = (s32[], f32[1024]{0}) tuple(s32[] %j, f32[1024]{0} %loop_add_fusion)
}

%cond (q: (s32[], f32[1024])) -> pred[] {
  %q = (s32[], f32[1024]{0}) parameter(0)
  %qi = s32[] get-tuple-element((s32[], f32[1024]{0}) %q), index=0
  %n = s32[] constant(3)
  ROOT %c = pred[] compare(s32[] %qi, s32[] %n), direction=LT
}

ENTRY %main (x: f32[1024]) -> f32[1024] {
  %x = f32[1024]{0} parameter(0)
  %z = s32[] constant(0)
  %s = (s32[], f32[1024]{0}) tuple(s32[] %z, f32[1024]{0} %x)
  %w = (s32[], f32[1024]{0}) while((s32[], f32[1024]{0}) %s), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"3"}}
  ROOT %y = f32[1024]{0} get-tuple-element((s32[], f32[1024]{0}) %w), index=1
}
"""


def test_a_kept_op_inside_a_loop_body_hands_its_arrays_over_the_link():
    # A while body of 3 trips: loop_square_fusion (card), custom-call.1 (no cost: the GPU) on its
    # result, loop_add_fusion (card) on the custom call's. Each trip the custom call takes
    # 4,096 B from the card and gives 4,096 B back, with the data anywhere: 3 x 8,192 = 24,576 B,
    # as the same three ops in the entry computation called 3 times.
    kernels = [("loop_square_fusion", 50_000), ("custom_call_1", 50_000), ("loop_add_fusion", 50_000)] * 3
    store = _store("mixed", [("jit_loop_mixed", _LOOP_MIXED)], kernels)
    for cross in (True, False):
        (row,) = [r for r in fpga.fpga_candidates(store, target="alveo-u55c", by="region", inputs_cross_link=cross)
                  if r["region"] == "mixed"]
        assert row["handoff_bytes"] == 3 * 8192, cross
