"""Sizes and times of the reports for traces with many fpgaprof.region() instances.

    python bench/report_scale.py CASE [--scale F] [--keep DIR]

CASE (docs/performance.md, "Reports at scale"):
  iterations   10^5 instances of one region "iteration", 10 kernels each (10^6 kernels)
  nested       10^4 instances of "iteration > forward > project" (3 levels), 10 kernels in each
               innermost region (10^5 kernels)
  names        10^3 distinct region names "op<k>/64", 10 instances each, 10 kernels per instance
               (10^4 instances, 10^5 kernels)
Every instance also has, as a reconstruction loop does: an XlaModule NVTX range around its
kernels, one launch call per kernel, one 8-byte DtoH copy (a convergence check) and a 1 MB
device buffer allocated and freed. --scale multiplies the instance count (0.01 for a quick run).

The trace is built through the bindings (TraceStore.append, then correlate() as a capture
does), saved as trace.fpgaprof, and then, each in a fresh interpreter: load + collect (the
summary dict), summary.json, report.html, timeline.json (CPU = user + sys, peak RSS of that
interpreter after each step, file sizes) and the whole `fpgaprof report` command. fpgaprof
must be importable (PYTHONPATH=<build>/pkg).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

T0 = 1_700_000_000_000_000_000
KERNELS_PER_INSTANCE = 10
KERNEL_NS = 20_000
LAUNCH_GAP_NS = 2_000
THREAD = 101
CASES = {
    # name: (instances of the outermost level, names of the nested levels, distinct names)
    "iterations": (100_000, ("iteration",), 1),
    "nested": (10_000, ("iteration", "forward", "project"), 1),
    "names": (10_000, ("op{k}/64",), 1_000),
}


def build_store(case: str, scale: float):
    """A TraceStore with the records of `case` (see the module doc), correlated."""
    from fpgaprof import _core
    n_outer, levels, distinct = CASES[case]
    n_outer = max(int(n_outer * scale), 1)
    s = _core.TraceStore()
    dev = _core.DeviceInfo()
    for k, v in {"id": 0, "name": "Synthetic H100", "compute_capability_major": 9,
                 "compute_capability_minor": 0, "sm_count": 132, "memory_clock_khz": 2_619_000,
                 "memory_bus_width_bits": 5120, "global_memory_bytes": 85_000_000_000}.items():
        setattr(dev, k, v)
    s.add_device(dev)
    app = s.append
    t = T0 + 1_000
    corr = 1
    addr = 0x7F00_0000_0000
    depth_n = len(levels)
    for i in range(n_outer):
        # the open regions of this instance, outermost first
        starts = []
        for d, lvl in enumerate(levels):
            starts.append(t)
            t += 500
        mod_start = t
        t += 1_000
        app("allocations", timestamp_ns=t, address=addr, bytes=1 << 20, thread_id=THREAD,
            device_id=0, is_alloc=True, memory_kind="device")
        for _ in range(KERNELS_PER_INSTANCE):
            app("api_calls", name="cuLaunchKernel", start_ns=t, end_ns=t + 1_000,
                correlation_id=corr, thread_id=THREAD, callback_id=307, kind="driver")
            app("kernels", name=f"loop_fusion_{corr % 7}", start_ns=t + LAUNCH_GAP_NS,
                end_ns=t + LAUNCH_GAP_NS + KERNEL_NS, correlation_id=corr, thread_id=THREAD,
                device_id=0, stream_id=7, grid_x=128, block_x=256)
            corr += 1
            t += KERNEL_NS + LAUNCH_GAP_NS
        app("api_calls", name="cuMemcpyDtoHAsync_v2", start_ns=t, end_ns=t + 1_500,
            correlation_id=corr, thread_id=THREAD, callback_id=282, kind="driver")
        app("memcpys", start_ns=t + LAUNCH_GAP_NS, end_ns=t + LAUNCH_GAP_NS + 1_000, bytes=8,
            correlation_id=corr, thread_id=THREAD, device_id=0, stream_id=7, copy_kind="DtoH",
            src_kind="device", dst_kind="pinned", is_async=True)
        corr += 1
        t += LAUNCH_GAP_NS + 2_000
        app("allocations", timestamp_ns=t, address=addr, bytes=1 << 20, thread_id=THREAD,
            device_id=0, is_alloc=False, memory_kind="device")
        app("markers", name="XlaModule:#hlo_module=jit_step,program_id=1#", domain="TSL",
            start_ns=mod_start, end_ns=t, thread_id=THREAD, id=i + 1)
        t += 1_000
        parent = 0xFFFFFFFF
        for d, lvl in enumerate(levels):
            name = lvl.format(k=i % distinct)
            # region indices: the outermost record of instance i is i * depth_n
            app("regions", name=name, start_ns=starts[d], end_ns=t + (depth_n - d) * 500,
                thread_id=THREAD, parent=parent, depth=d)
            parent = i * depth_n + d
        t += depth_n * 500 + 3_000
    s.set_meta(start_ns=T0, end_ns=t + 1_000, gpu_available=True, command_buffers_disabled=True)
    s.correlate()
    return s


STEPS = r"""
import json, os, resource, sys, time
def mark():
    u = os.times()
    return time.perf_counter(), u.user + u.system
def since(m):
    w, c = mark()
    return {"wall_s": round(w - m[0], 3), "cpu_s": round(c - m[1], 3),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6)}  # KiB on Linux
import fpgaprof
from fpgaprof.report import collect, html, summary_json, write_timeline
trace, out = sys.argv[1], sys.argv[2]
res = {}
m = mark(); prof = fpgaprof.load(trace); res["load"] = since(m)
m = mark(); s = collect(prof, trace_path=trace); res["collect"] = since(m)
p = os.path.join(out, "summary.json")
m = mark(); summary_json.write_summary(p, s); res["summary.json"] = since(m)
res["summary.json"]["bytes"] = os.path.getsize(p)
p = os.path.join(out, "report.html")
m = mark(); html.write_html(p, s); res["report.html"] = since(m)
res["report.html"]["bytes"] = os.path.getsize(p)
p = os.path.join(out, "timeline.json")
m = mark(); write_timeline(prof, p); res["timeline.json"] = since(m)
res["timeline.json"]["bytes"] = os.path.getsize(p)
res["sections"] = {k: len(json.dumps(v)) for k, v in s.items()}
print(json.dumps(res))
"""


def measure(trace: str, out_dir: str) -> dict:
    """The whole `fpgaprof report` command first (its peak RSS is then the children's maximum
    so far), then the steps, each timed in one fresh interpreter."""
    env = dict(os.environ)
    # The synthetic traces are far more regular than a real one (identical kernels at a fixed
    # stride), so they compress past the reader's zlib-bomb bound (docs/trace-format.md,
    # "Limits"): allow their memory, as the refusal says a genuine trace may.
    env.setdefault("FPGAPROF_MAX_TRACE_MEMORY", str(16 << 30))
    res = {}
    cli_dir = os.path.join(out_dir, "cli")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "fpgaprof", "report", trace, "-o", cli_dir],
                          env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"fpgaprof report failed:\n{proc.stderr}")
    cli = {"wall_s": round(wall, 3),
           "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 3),
           "peak_rss_mb": round(after.ru_maxrss * 1024 / 1e6)}  # KiB on Linux
    proc = subprocess.run([sys.executable, "-c", STEPS, trace, out_dir], env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"steps failed:\n{proc.stderr}")
    res = json.loads(proc.stdout.splitlines()[-1])
    res["fpgaprof report"] = cli
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--keep", help="keep the trace and the reports in this folder")
    a = ap.parse_args()
    d = a.keep or tempfile.mkdtemp(prefix=f"fpgaprof_scale_{a.case}_")
    os.makedirs(d, exist_ok=True)
    trace = os.path.join(d, "trace.fpgaprof")
    t = time.perf_counter()
    s = build_store(a.case, a.scale)
    s.save(trace)
    print(f"{a.case} x{a.scale}: {len(s.regions)} region records, {len(s.kernels)} kernels, "
          f"{len(s.memcpys)} copies, {len(s.allocations)} allocation events; trace "
          f"{os.path.getsize(trace) / 1e6:.2f} MB built in {time.perf_counter() - t:.1f} s "
          "(not timed below)")
    del s
    res = measure(trace, d)
    sections = res.pop("sections")
    for step, r in res.items():
        size = f", {r['bytes'] / 1e6:.2f} MB" if "bytes" in r else ""
        print(f"  {step:16s} {r['wall_s']:7.2f} s wall, {r['cpu_s']:7.2f} s CPU, peak RSS "
              f"{r['peak_rss_mb']} MB{size}")
    big = sorted(sections.items(), key=lambda kv: -kv[1])[:5]
    print("  largest summary sections (bytes of compact JSON): "
          + ", ".join(f"{k} {v}" for k, v in big))
    if not a.keep:
        import shutil
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
