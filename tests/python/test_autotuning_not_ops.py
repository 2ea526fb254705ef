"""XLA's autotuning runs (a fusion timed alone in an unnumbered module named after it) are not
ops of the program: they must not head the FPGA ranking of the sweep trace."""

from pathlib import Path

import pytest

import fpgaprof

TRACE = Path(__file__).resolve().parents[1] / "data" / "traces" / "mbirjax_sweep_32_64_run_h100.fpgaprof"


@pytest.fixture(scope="module")
def prof():
    return fpgaprof.load(str(TRACE))


def test_autotuning_modules_are_not_ranked(prof):
    rows = list(prof.fpga_candidates("alveo-u55c"))
    # XlaModule ranges without program_id named after their only op: input_reduce_fusion (60
    # kernels), input_reduce_fusion.1 (36), input_concatenate_fusion (6) in this trace.
    assert not [r for r in rows if r["module"] == r["op"]]


def test_hottest_program_op_ranks_first(prof):
    # Worked out from the raw records (marker parents: Thunk, then a numbered XlaModule):
    # jit_sparse_forward_project_fcn (program_id 138466) input_scatter_fusion.1 ran 992,884 ns,
    # the most of any op; every estimated row here is ruled out (could_save 0), so GPU time
    # orders them (docs/fpga-model.md, "Ranking").
    top = list(prof.fpga_candidates("alveo-u55c"))[0]
    assert (top["module"], top["op"], top["gpu_time_ns"]) == (
        "jit_sparse_forward_project_fcn",
        "input_scatter_fusion.1",
        992884,
    )


def test_the_autotuners_own_kernels_are_named_as_such(prof):
    # stream_executor's kernels of the autotuner, outside any thunk (from the raw records:
    # 294 RedzoneAllocatorKernelImpl launches, 7,449,444 ns; 51 DelayKernel, 1,732,674 ns)
    rows = {u.name: u for u in prof.attribution.unattributed}
    redzone = rows["_ZN15stream_executor3gpu26RedzoneAllocatorKernelImplEPhhmPj"]
    assert (redzone.count, redzone.total_ns) == (294, 7449444)
    assert redzone.reason.startswith("XLA autotuning: ")
    delay = [u for n, u in rows.items() if "DelayK" in n]
    assert [(u.count, u.total_ns) for u in delay] == [(51, 1732674)]
    assert delay[0].reason.startswith("XLA autotuning: ")
