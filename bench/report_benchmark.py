"""Time and memory of fpgaprof.report on a synthetic trace of N kernels, each with its launch
call: `python bench/report_benchmark.py 1000000` (needs fpgaprof importable)."""
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
import numpy as np
import _reports_fixtures as F
from fpgaprof import report
from fpgaprof.report import perfetto, summary

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
rng = np.random.default_rng(1)
names = np.array([f"loop_fusion_{i}" for i in range(200)], dtype=object)
dur = rng.integers(2_000, 200_000, N)
gap = rng.integers(500, 5_000, N)
start = F.T0 + np.cumsum(dur + gap) - dur
prof = F.SyntheticProfile()
n = N
prof.kernels = F.Table(name=names[rng.integers(0, 200, N)], start_ns=start.astype(np.uint64),
    end_ns=(start + dur).astype(np.uint64), correlation_id=np.arange(1, N + 1, dtype=np.uint32),
    thread_id=np.full(n, 101, np.uint32), device_id=np.zeros(n, np.uint32),
    stream_id=np.full(n, 7, np.uint32), grid_x=np.full(n, 128, np.uint32), grid_y=np.ones(n, np.uint32),
    grid_z=np.ones(n, np.uint32), block_x=np.full(n, 256, np.uint32), block_y=np.ones(n, np.uint32),
    block_z=np.ones(n, np.uint32), registers_per_thread=np.full(n, 32, np.uint32),
    static_shared_bytes=np.zeros(n, np.uint32), dynamic_shared_bytes=np.zeros(n, np.uint32),
    graph_id=np.zeros(n, np.uint32), region_index=np.zeros(n, np.uint32))
prof.api_calls = F.Table(name=np.full(N, "cuLaunchKernel", dtype=object), start_ns=(start - 3000).astype(np.uint64),
    end_ns=(start - 1000).astype(np.uint64), correlation_id=np.arange(1, N + 1, dtype=np.uint32),
    thread_id=np.full(n, 101, np.uint32), callback_id=np.full(n, 307, np.uint32), return_value=np.zeros(n, np.uint32),
    kind=np.ones(n, np.uint8))
prof.regions = F.Table(name=np.array(["all"], dtype=object), start_ns=np.array([F.T0], np.uint64),
    end_ns=np.array([int(start[-1] + dur[-1]) + 1], np.uint64), thread_id=np.array([101], np.uint32),
    depth=np.zeros(1, np.uint16))
prof.meta["end_ns"] = int(start[-1] + dur[-1]) + 10
prof.wall_time_ns = prof.meta["end_ns"] - F.T0
OUT = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'fpgaprof_report_benchmark.json')
t = time.perf_counter(); s = summary.collect(prof); t1 = time.perf_counter() - t
t = time.perf_counter(); c = perfetto.write_timeline(prof, OUT); t2 = time.perf_counter() - t
import resource
print(f"N={N}: collect {t1:.2f} s, timeline {t2:.2f} s ({os.path.getsize(OUT)/1e6:.0f} MB), maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1e3:.0f} MB, counts {c}")
