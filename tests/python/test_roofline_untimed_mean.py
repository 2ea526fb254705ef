"""The latency rule reads the mean duration of the kernels that have one: kernels a counter replay
left without timestamps (start = end = 0) are no 0 ns kernels."""

from pathlib import Path

import fpgaprof

TRACE = Path(__file__).resolve().parents[1] / "data" / "traces" / "mbirjax073_parallel_128_pallas_counters_h200.fpgaprof"


def test_trace_row_bound_ignores_untimed_kernels():
    prof = fpgaprof.load(str(TRACE))
    row = prof.roofline(by="trace")
    # Worked out from prof.kernels.columns(): 95 kernels, 79 with end == start (the forward
    # projection's unpaired counter window), 16 timed, summing 268,672 ns -> 16,792 ns each on
    # average (>= 5 us: not latency by the mean); their mean grid 1,770 blocks >= 132 SMs / 2;
    # intensity 211,896,229 / 529,197,300 = 0.400 FLOP/B < ridge 13.9 on the H200 -> memory.
    assert row["kernel_count"] == 95
    assert row["mean_kernel_ns"] == 268672 / 16
    assert row["bound"] == "memory"
