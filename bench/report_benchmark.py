"""Time and memory of fpgaprof.report on a synthetic trace of N kernels, each with its launch
call, on one stream: `python bench/report_benchmark.py [N]` (default 100000; fpgaprof must be
importable). Prints the summary (collect) and timeline.json times (wall and CPU = user + sys of
this process), the file size, peak RSS.
"""
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "python"))
import _reports_fixtures as F  # noqa: E402
from fpgaprof import report  # noqa: E402


def synthetic_profile(n: int) -> F.SyntheticProfile:
    rng = np.random.default_rng(1)
    names = np.array([f"loop_fusion_{i}" for i in range(200)], dtype=object)
    dur = rng.integers(2_000, 200_000, n)
    gap = rng.integers(500, 5_000, n)
    start = F.T0 + np.cumsum(dur + gap) - dur
    u32 = np.uint32
    prof = F.SyntheticProfile()
    prof.kernels = F.Table(
        name=names[rng.integers(0, 200, n)], start_ns=start.astype(np.uint64),
        end_ns=(start + dur).astype(np.uint64), correlation_id=np.arange(1, n + 1, dtype=u32),
        thread_id=np.full(n, 101, u32), device_id=np.zeros(n, u32), stream_id=np.full(n, 7, u32),
        grid_x=np.full(n, 128, u32), grid_y=np.ones(n, u32), grid_z=np.ones(n, u32),
        block_x=np.full(n, 256, u32), block_y=np.ones(n, u32), block_z=np.ones(n, u32),
        registers_per_thread=np.full(n, 32, u32), static_shared_bytes=np.zeros(n, u32),
        dynamic_shared_bytes=np.zeros(n, u32), graph_id=np.zeros(n, u32),
        region_index=np.zeros(n, u32))
    prof.api_calls = F.Table(
        name=np.full(n, "cuLaunchKernel", dtype=object), start_ns=(start - 3000).astype(np.uint64),
        end_ns=(start - 1000).astype(np.uint64), correlation_id=np.arange(1, n + 1, dtype=u32),
        thread_id=np.full(n, 101, u32), callback_id=np.full(n, 307, u32),
        return_value=np.zeros(n, u32), kind=np.ones(n, np.uint8))
    end = int(start[-1] + dur[-1]) + 10
    prof.regions = F.Table(
        name=np.array(["all"], dtype=object), start_ns=np.array([F.T0], np.uint64),
        end_ns=np.array([end], np.uint64), thread_id=np.array([101], u32),
        depth=np.zeros(1, np.uint16))
    prof.meta["end_ns"] = end
    prof.wall_time_ns = end - F.T0
    return prof


def _cpu(before: os.times_result) -> str:
    """CPU seconds of this process since `before`: user + sys (sys: mostly writing the file)."""
    now = os.times()
    user, sys_ = now.user - before.user, now.system - before.system
    return f"{user + sys_:.2f} s CPU ({user:.2f} user + {sys_:.2f} sys)"


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    prof = synthetic_profile(n)
    # The test profile mirrors its tables into a real TraceStore (row by row, in Python) the
    # first time the reports ask; a real Profile already has one, so build it before timing.
    t = time.perf_counter()
    prof.store  # noqa: B018
    print(f"{n} kernels: TraceStore mirror built in {time.perf_counter() - t:.2f} s (not timed below)")
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "fpgaprof_report_benchmark.json")
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # KiB on Linux
    print(f"{n} kernels: synthetic trace built, peak RSS so far {rss_mb:.0f} MB")
    t, c = time.perf_counter(), os.times()
    report.collect(prof)
    t_summary, c_summary = time.perf_counter() - t, _cpu(c)
    t, c = time.perf_counter(), os.times()
    counts = report.write_timeline(prof, out)
    t_timeline, c_timeline = time.perf_counter() - t, _cpu(c)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # KiB on Linux
    print(f"{n} kernels: summary {t_summary:.2f} s wall / {c_summary}, timeline.json "
          f"{t_timeline:.2f} s wall / {c_timeline} "
          f"({os.path.getsize(out) / 1e6:.0f} MB), peak RSS {rss_mb:.0f} MB; slices {counts}")
    os.unlink(out)


if __name__ == "__main__":
    main()
