"""CPU time of the Python API on a large trace: load, summary(), roofline(by="op"),
fpga_candidates().

    python bench/api_benchmark.py [--kernels 1000000] [--keep DIR] [--compare] [--profile N]

The synthetic trace (docs/performance.md, "Python API on 10^6 kernels"): N kernels (default
10^6) of 282 names on 4 streams, each with its cuLaunchKernel record; one XLA module "jit_step"
whose 282 loop fusions (a chain, each a multiply of f32[262144] with a source line) are the
kernels' instructions, so every kernel is attributed by name (XLA names a fusion's kernel after
the instruction: loop_fusion.7 -> loop_fusion_7); one XlaModule range per step of 1,000
kernels. Kernel k runs name k * 7919 mod 282 on stream k mod 4 for 2-10 us (by name, plus up to
0.5 us of seeded jitter), launched every 1.5-2 us, so the four streams overlap.

The trace is built through the bindings (TraceStore.append, then correlate() as a capture
does) and saved as trace.fpgaprof; then, in a fresh interpreter, each step is timed (CPU =
user + sys of the process, `time.process_time`; wall): `import fpgaprof`, `fpgaprof.load`,
`prof.summary()` (the first call runs the C++ analysis, cached on the Profile),
`fpgaprof.roofline.roofline(prof, by="op")`, `fpgaprof.fpga.fpga_candidates(prof)`. The total
is the four steps after the import. `--profile N`: the N functions with the most cumulative
time over the four steps (cProfile).

`--compare`: the same events read by two other tools, each in a fresh interpreter, where
installed: XProf's converter (PyPI xprof: `xspace_to_tool_data`, the code behind
`xprof --logdir`) on `fpgaprof export --format xprof`'s XSpace, tools overview_page (the first
one converts the XSpace to XProf's op stats and caches them beside it) and kernel_stats (read
from that cache); and HTA (PyPI HolisticTraceAnalysis: `TraceAnalysis` on the Kineto timeline of
`fpgaprof export --format perfetto --timeline-events 0`) for its kernel breakdown. fpgaprof
must be importable (PYTHONPATH=<build>/pkg).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import subprocess
import sys
import tempfile
import time

T0 = 1_700_000_000_000_000_000
NAMES = 282
STREAMS = 4
STEP_KERNELS = 1_000
LAUNCH_EVERY_NS = 1_500
THREAD = 101


def hlo_text() -> str:
    """One module: a chain of NAMES loop fusions, each with a source line."""
    parts = ["HloModule jit_step\n\n"]
    for o in range(NAMES):
        parts.append(
            f"fused_{o} {{\n  p0 = f32[262144]{{0}} parameter(0)\n"
            f'  ROOT m = f32[262144]{{0}} multiply(p0, p0), metadata={{op_name="jit(step)/mul" '
            f'source_file="/work/step.py" source_line={10 + o}}}\n}}\n\n'
        )
    parts.append("ENTRY main {\n  p = f32[262144]{0} parameter(0)\n")
    prev = "p"
    for o in range(NAMES):
        name = f"loop_fusion.{o}"
        root = "ROOT " if o + 1 == NAMES else ""
        parts.append(
            f"  {root}{name} = f32[262144]{{0}} fusion({prev}), kind=kLoop, calls=fused_{o}\n"
        )
        prev = name
    parts.append("}\n")
    return "".join(parts)


def build_store(n_kernels: int):
    """The trace of the module doc, correlated."""
    from fpgaprof.base.core import core

    s = core.TraceStore()
    dev = core.DeviceInfo()
    for k, v in {
        "id": 0,
        "name": "Synthetic H100",
        "compute_capability_major": 9,
        "compute_capability_minor": 0,
        "sm_count": 132,
        "core_clock_khz": 1_980_000,
        "memory_clock_khz": 2_619_000,
        "memory_bus_width_bits": 5120,
        "global_memory_bytes": 85_000_000_000,
        "pcie_generation": 5,
        "pcie_link_width": 16,
    }.items():
        setattr(dev, k, v)
    s.add_device(dev)
    s.add_hlo_module("jit_step", 1, hlo_text())
    names = [f"loop_fusion_{o}" for o in range(NAMES)]
    dur = [2_000 + (o * 29) % 8_000 for o in range(NAMES)]
    rng = random.Random(34)  # jitter, as in a real trace (a regular one compresses too well)
    app = s.append
    t = T0 + 1_000
    step_start = t
    for k in range(n_kernels):
        o = (k * 7919) % NAMES
        corr = k + 1
        app(
            "api_calls",
            name="cuLaunchKernel",
            start_ns=t,
            end_ns=t + 1_000,
            correlation_id=corr,
            thread_id=THREAD,
            callback_id=307,
            kind="driver",
        )
        d = dur[o] + rng.randrange(500)
        app(
            "kernels",
            name=names[o],
            start_ns=t + 1_200,
            end_ns=t + 1_200 + d,
            correlation_id=corr,
            thread_id=THREAD,
            device_id=0,
            stream_id=7 + k % STREAMS,
            grid_x=128,
            block_x=256,
        )
        t += LAUNCH_EVERY_NS + rng.randrange(500)
        if (k + 1) % STEP_KERNELS == 0 or k + 1 == n_kernels:
            app(
                "markers",
                name="XlaModule:#hlo_module=jit_step,program_id=1#",
                domain="TSL",
                start_ns=step_start,
                end_ns=t,
                thread_id=THREAD,
                id=k // STEP_KERNELS + 1,
            )
            step_start = t
    s.set_meta(start_ns=T0, end_ns=t + 20_000, gpu_available=True, command_buffers_disabled=True)
    s.correlate()
    return s


STEPS = r"""
import cProfile, json, os, pstats, sys, time
trace, profile_n = sys.argv[1], int(sys.argv[2])
steps = {}

def timed(name, fn):
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    steps[name] = {"cpu_s": time.process_time() - c, "wall_s": time.perf_counter() - w}
    return out

timed("import fpgaprof", lambda: __import__("fpgaprof"))
import fpgaprof
from fpgaprof.api import fpga, roofline

prof_run = cProfile.Profile() if profile_n else None
if prof_run:
    prof_run.enable()
p = timed("load", lambda: fpgaprof.load(trace))
text = timed("summary()", lambda: p.summary())
ops = timed('roofline(by="op")', lambda: roofline.roofline(p, by="op"))
cand = timed("fpga_candidates()", lambda: fpga.fpga_candidates(p))
if prof_run:
    prof_run.disable()
    pstats.Stats(prof_run, stream=sys.stderr).sort_stats("cumulative").print_stats(profile_n)
a = p.attribution
print(json.dumps({"steps": steps, "kernels": len(p.kernels), "ops": len(ops),
                  "candidates": len(cand), "attributed_count": a.attributed_count,
                  "unattributed_count": a.unattributed_count,
                  "summary_lines": len(text.splitlines())}))
"""

XPROF = r"""
import json, os, sys, time
from xprof.convert import raw_to_tool_data
path = sys.argv[1]
# the converter caches what it derived (op stats) beside the XSpace: start without it, so the
# first tool pays the conversion (the later one reads the cache, as in XProf's UI)
run_dir = os.path.dirname(path)
for f in os.listdir(run_dir):
    if not f.endswith(".xplane.pb"):
        os.remove(os.path.join(run_dir, f))
out = {}
for tool in ("overview_page", "kernel_stats"):
    c, w = time.process_time(), time.perf_counter()
    raw_to_tool_data.xspace_to_tool_data([path], tool, {})
    out[tool] = {"cpu_s": time.process_time() - c, "wall_s": time.perf_counter() - w}
print(json.dumps(out))
"""

HTA = r"""
import json, os, sys, time
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
from hta.trace_analysis import TraceAnalysis
folder = sys.argv[1]
out = {}
c, w = time.process_time(), time.perf_counter()
ta = TraceAnalysis(trace_dir=folder)
out["load"] = {"cpu_s": time.process_time() - c, "wall_s": time.perf_counter() - w}
c, w = time.process_time(), time.perf_counter()
ta.get_gpu_kernel_breakdown(visualize=False)
out["kernel breakdown"] = {"cpu_s": time.process_time() - c, "wall_s": time.perf_counter() - w}
print(json.dumps(out))
"""


def child(code: str, *args: str, what: str = "fpgaprof") -> dict:
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if r.returncode != 0:
        if what != "fpgaprof":  # another tool's failure is reported, not fatal
            last = (r.stderr.strip().splitlines() or ["no message"])[-1]
            print(f"  {what}: failed ({last[:200]})")
            return {}
        raise SystemExit(f"api_benchmark: a step failed:\n{r.stderr[-4000:]}")
    if r.stderr.strip() and "cumulative" in r.stderr:
        print(r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])


def compare(trace: str, work: str, tools: set[str]) -> None:
    """XProf's converter and HTA on the same events, where installed."""
    import importlib.util

    if "xprof" not in tools:
        pass
    elif importlib.util.find_spec("xprof") is not None:
        folder = os.path.join(work, "xprof")
        if not glob.glob(os.path.join(folder, "plugins", "profile", "*", "*.xplane.pb")):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "fpgaprof",
                    "export",
                    trace,
                    "--format",
                    "xprof",
                    "-o",
                    folder,
                ],
                check=True,
                capture_output=True,
            )
        (xs,) = glob.glob(os.path.join(folder, "plugins", "profile", "*", "*.xplane.pb"))
        for tool, t in child(XPROF, xs, what="XProf converter").items():
            print(
                f"  XProf converter, {tool:<24s} {t['cpu_s']:8.2f} s CPU {t['wall_s']:8.2f} s wall"
            )
    else:
        print("  XProf converter: not installed (pip install xprof)")
    if "hta" not in tools:
        pass
    elif importlib.util.find_spec("hta") is not None:
        folder = os.path.join(work, "hta")
        os.makedirs(folder, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "fpgaprof",
                "export",
                trace,
                "--format",
                "perfetto",
                "--timeline-events",
                "0",
                "-o",
                os.path.join(folder, "trace.json"),
            ],
            check=True,
            capture_output=True,
        )
        for step, t in child(HTA, folder, what="HTA").items():
            print(f"  HTA, {step:<35s} {t['cpu_s']:8.2f} s CPU {t['wall_s']:8.2f} s wall")
    else:
        print("  HTA: not installed (pip install HolisticTraceAnalysis)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=int, default=1_000_000)
    ap.add_argument("--keep", help="write the trace (and --compare's files) here and keep them")
    ap.add_argument(
        "--compare",
        nargs="?",
        const="xprof,hta",
        default="",
        help="also time XProf's converter and HTA on the same events (--compare xprof: one)",
    )
    ap.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="print the N functions with the most cumulative time (cProfile)",
    )
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="fpgaprof-api-bench-")
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, "trace.fpgaprof")
    if not os.path.exists(trace):
        t = time.perf_counter()
        build_store(args.kernels).save(trace)
        print(f"built {args.kernels} kernels in {time.perf_counter() - t:.1f} s: {trace}")
    r = child(STEPS, trace, str(args.profile))
    print(
        f"{r['kernels']} kernels ({r['attributed_count']} attributed, "
        f"{r['unattributed_count']} not), {r['ops']} op rows, {r['candidates']} candidates"
    )
    total = 0.0
    for name, t in r["steps"].items():
        print(f"  {name:<24s} {t['cpu_s']:8.3f} s CPU {t['wall_s']:8.3f} s wall")
        if name != "import fpgaprof":
            total += t["cpu_s"]
    print(f"  {'total (after import)':<24s} {total:8.3f} s CPU   (target <= 1.0 s)")
    if args.compare:
        compare(trace, work, set(args.compare.split(",")))
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
