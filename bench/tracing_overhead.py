#!/usr/bin/env python3
"""Tracing overhead on a GPU, side by side in one warm process: no profiler, fpgaprof.trace(),
jax.profiler.trace() and fpgaprof.trace(counters=True), alternating, on two workloads; medians,
ratios and the on-disk size of each tool's output for the same work.

Workloads (--workloads, default both):
  dense    a kernel-dense JAX loop: --steps (3000) calls of a small jitted step (tanh, a sum and
           a scaled divide over --dense-elements (4096) float32: a few small kernels per call,
           thousands per sample); one unit = one step.
  forward  MBIRJAX ParallelBeamModel.forward_project of an n^3 Shepp-Logan phantom (--size,
           default 128; n views), --reps (5) calls per sample; one unit = one call.
Every sample ends in jax.block_until_ready. Modes (--modes, default all four):
  none               no profiler (fpgaprof imported: its NVTX tool attached, XLA command buffers
                     off; see `bare` below for a process without fpgaprof)
  fpgaprof           fpgaprof.trace(path)                      (saved at exit: part of total_s)
  jax                jax.profiler.trace(dir)                   (written at exit: part of total_s)
  fpgaprof_no_power  fpgaprof.trace(path, power_sample_ms=0): without the NVML power sampling
                     thread (docs/capture.md, "GPU power and energy"), so that fpgaprof's row
                     against this one is the sampler's own cost (not in the default list)
  fpgaprof_counters  fpgaprof.trace(path, counters=True): every kernel is replayed once per
                     counter pass (about 0.3 s per kernel on an H100), so this mode runs less
                     work per sample (--counter-steps 10, --counter-reps 1); its figures are per
                     unit of work like the others'.
Each sample runs the modes in a rotated order (sample s starts with mode s mod M) so that drift
and warm-up favour none. Per sample and mode: work_s (the workload inside the profiler's
context: the steady-state cost), total_s (with starting and stopping the profiler and writing
its output), the output's size on disk, and the kernels the tool recorded. Overhead =
median(per-unit time of the mode) / median(per-unit time with no profiler) - 1. Target:
fpgaprof's work overhead <= 2 % and below jax.profiler's, on every workload (--check).

`bare` (unless --no-bare): the same workloads in a second process that never imports fpgaprof
(XLA's defaults: command buffers on, no NVTX tool), --samples samples each, after the
alternation: how far `none` itself is from a program without fpgaprof. Different processes, so
compare it with care.

When fpgaprof_counters is requested and XLA_PYTHON_CLIENT_PREALLOCATE is unset, it is set to
false for the whole process (kernel replay saves and restores JAX's preallocated pool around
every kernel otherwise: docs/roofline.md); every mode then runs with it.

--max-seconds S: stop starting new samples when the next would end after S seconds (the JSON
is still written, with a note); the workloads share the time.

Without a GPU it exits with status 77 and says why. --allow-cpu runs the same alternation on CPU
JAX to check the script: fpgaprof then records no kernels (host-only trace), the counters mode
is skipped with a note (it needs a GPU), and the figures are labelled CPU DRY RUN.

--isolate runs every sample in a fresh interpreter (own CUPTI state and warm-up), for when
jax.profiler and fpgaprof cannot take turns in one process.

Usage: python bench/tracing_overhead.py [--workloads dense,forward] [--size 128] [--steps 3000]
       [--reps 5] [--samples 5] [--modes none,fpgaprof,jax,fpgaprof_counters] [--json FILE]
       [--keep DIR] [--max-seconds S] [--no-bare] [--isolate] [--allow-cpu] [--check]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from typing import Any, Callable

EXIT_NO_GPU = 77  # "skipped", as automake and CTest's SKIP_RETURN_CODE use it
MODES = ("none", "fpgaprof", "jax", "fpgaprof_counters", "fpgaprof_no_power")
DEFAULT_MODES = ("none", "fpgaprof", "jax", "fpgaprof_counters")
FPGAPROF_MODES = ("fpgaprof", "fpgaprof_counters", "fpgaprof_no_power")
WORKLOADS = ("dense", "forward")
GPU_ONLY_MODES = {"fpgaprof_counters": "hardware counters need a GPU"}
UNIT = {"dense": "step", "forward": "forward_project call"}
TARGET_PCT = 2.0


# ---------------------------------------------------------------------------------- arguments


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workloads", default=",".join(WORKLOADS), help="comma list of dense,forward")
    p.add_argument("--size", type=int, default=None, help="forward: volume edge n (128; 32 on CPU)")
    p.add_argument("--reps", type=int, default=5, help="forward: calls per sample")
    p.add_argument("--steps", type=int, default=None, help="dense: steps per sample (3000; 200 on CPU)")
    p.add_argument("--dense-elements", type=int, default=4096, help="dense: float32 elements")
    p.add_argument("--counter-reps", type=int, default=1, help="forward: calls per counters sample")
    p.add_argument("--counter-steps", type=int, default=10, help="dense: steps per counters sample")
    p.add_argument("--samples", type=int, default=5, help="samples per mode (alternating)")
    p.add_argument("--modes", default=",".join(DEFAULT_MODES), help="comma list of " + ",".join(MODES))
    p.add_argument("--json", default=None, help="write the results here as JSON")
    p.add_argument("--keep", default=None, help="keep the first output of each tool here")
    p.add_argument("--max-seconds", type=float, default=0.0, help="time limit (0: none)")
    p.add_argument("--no-bare", action="store_true", help="skip the process without fpgaprof")
    p.add_argument(
        "--allow-cpu",
        action="store_true",
        help="dry run on CPU JAX (checks the script; NOT the GPU overhead figure)",
    )
    p.add_argument("--isolate", action="store_true", help="every sample in a fresh interpreter")
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 unless fpgaprof's overhead is <= 2%% and below jax.profiler's (GPU only)",
    )
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)  # MODE:WORKLOAD or bare
    args = p.parse_args(argv)
    args.modes = _split(args.modes)
    args.workloads = _split(args.workloads)
    bad = [m for m in args.modes if m not in MODES]
    if bad or "none" not in args.modes:
        p.error(f"--modes must include 'none' and only {MODES}; got {args.modes}")
    if not args.workloads or any(w not in WORKLOADS for w in args.workloads):
        p.error(f"--workloads must be some of {WORKLOADS}; got {args.workloads}")
    for name in ("samples", "reps", "counter_reps", "counter_steps", "dense_elements"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.steps is not None and args.steps < 1:
        p.error("--steps must be >= 1")
    return args


def _split(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def units_for(workload: str, mode: str, args: argparse.Namespace) -> int:
    """Units of work one sample of `mode` runs (the counters mode runs less: kernel replay)."""
    if workload == "dense":
        return args.counter_steps if mode == "fpgaprof_counters" else args.steps
    return args.counter_reps if mode == "fpgaprof_counters" else args.reps


# ---------------------------------------------------------------------------------- workloads


def import_profilers(with_fpgaprof: bool, counters: bool) -> tuple[Any, Any]:
    """(fpgaprof or None, jax): fpgaprof first, as a user's program must import it (before
    jax: NVTX tool and XLA flags); MBIRJAX's Tk viewer stubbed where Tk is missing."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    if counters:
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import easygui  # noqa: F401  (MBIRJAX's viewer imports it)
    except Exception:
        sys.modules["easygui"] = types.ModuleType("easygui")
    fp = None
    if with_fpgaprof:
        import fpgaprof as fp  # noqa: F811
    import jax

    return fp, jax


def make_dense(jax: Any, elements: int) -> Callable[[int], Any]:
    import jax.numpy as jnp

    @jax.jit
    def step(x):
        y = jnp.tanh(x) * 0.5 + 0.25
        s = jnp.sum(y)
        return y / (1.0 + s * 1e-6)

    x0 = jnp.linspace(0.0, 1.0, elements, dtype=jnp.float32)

    def work(units: int) -> Any:
        x = x0
        for _ in range(units):
            x = step(x)
        return jax.block_until_ready(x)

    return work


def make_forward(jax: Any, n: int) -> Callable[[int], Any]:
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        import mbirjax as mj
        import numpy as np

        model = mj.ParallelBeamModel((n, n, n), np.linspace(0.0, np.pi, n, endpoint=False))
        phantom = mj.generate_3d_shepp_logan_low_dynamic_range(model.get_params("recon_shape"))

    def work(units: int) -> Any:
        out = None
        for _ in range(units):
            out = jax.block_until_ready(model.forward_project(phantom))
        return out

    work.model = model  # type: ignore[attr-defined]
    return work


def make_workload(jax: Any, workload: str, args: argparse.Namespace) -> Callable[[int], Any]:
    if workload == "dense":
        return make_dense(jax, args.dense_elements)
    return make_forward(jax, args.size)


# ------------------------------------------------------------------------------- measurement


def dir_bytes(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(root, f))
    return total


def keep_output(path: str, dest: str | None) -> None:
    """Moves a sample's output to `dest` (the first one of each kind is kept), else removes it."""
    if not os.path.exists(path):
        return
    if dest and not os.path.exists(dest):
        shutil.move(path, dest)
    elif os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        os.remove(path)


def xplane_gpu_events(log_dir: str) -> dict[str, Any]:
    """Kernels and copies jax.profiler recorded: events on the GPU planes' 'Stream' lines of the
    .xplane.pb it wrote (copies: names starting Memcpy/Memset), with each line's event count."""
    import glob

    import jax

    found = sorted(glob.glob(os.path.join(log_dir, "**", "*.xplane.pb"), recursive=True))
    out: dict[str, Any] = {"kernels": 0, "copies": 0, "lines": {}, "files": len(found)}
    for pb in found:
        data = jax.profiler.ProfileData.from_file(pb)
        for plane in data.planes:
            if "/device:GPU" not in plane.name:
                continue
            for line in plane.lines:
                names = [e.name for e in line.events]
                out["lines"][f"{plane.name}/{line.name}"] = len(names)
                if not line.name.startswith("Stream"):
                    continue
                copies = sum(1 for n in names if n.startswith(("Memcpy", "Memset")))
                out["copies"] += copies
                out["kernels"] += len(names) - copies
    return out


def profiler_context(fp: Any, jax: Any, mode: str, out_path: str) -> contextlib.AbstractContextManager:
    if mode == "none":
        return contextlib.nullcontext()
    if mode == "fpgaprof":
        return fp.trace(out_path)
    if mode == "fpgaprof_counters":
        return fp.trace(out_path, counters=True)
    if mode == "fpgaprof_no_power":
        return fp.trace(out_path, power_sample_ms=0)
    return jax.profiler.trace(out_path)


def run_sample(
    fp: Any, jax: Any, mode: str, work: Callable[[int], Any], units: int, out_path: str
) -> dict[str, Any]:
    """One sample: `units` of the workload under the mode's profiler, which writes to out_path."""
    t0 = time.perf_counter()
    with profiler_context(fp, jax, mode, out_path) as prof:
        w0 = time.perf_counter()
        work(units)
        w1 = time.perf_counter()
    t1 = time.perf_counter()
    out: dict[str, Any] = {"work_s": w1 - w0, "total_s": t1 - t0, "units": units}
    if mode != "none":
        out["output_bytes"] = dir_bytes(out_path) if os.path.exists(out_path) else 0
    if mode in FPGAPROF_MODES and prof is not None:
        out["kernels"] = len(prof.kernels)
        out["copies"] = len(prof.transfers)
        out["power_samples"] = len(prof.power_samples)
        if mode == "fpgaprof_counters":
            out["counter_values"] = len(prof.counters)
        warns = [w for w in prof.warnings if "counter" in w.lower() or "conflict" in w.lower()]
        if warns:
            out["warnings"] = warns[:3]
    elif mode == "jax":
        try:
            ev = xplane_gpu_events(out_path)
            out["kernels"], out["copies"] = ev["kernels"], ev["copies"]
            out["xplane_lines"] = ev["lines"]
        except Exception as exc:  # noqa: BLE001 - the timing stands without the count
            out["kernels_error"] = f"{type(exc).__name__}: {exc}"
    return out


class Deadline:
    """Whether another round of samples fits: the round's expected length is the longest seen."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.start = clock()
        self.end = self.start + seconds if seconds > 0 else float("inf")

    def left(self) -> float:
        return self.end - self.clock()

    def fits(self, expected_s: float, share: float = 1.0) -> bool:
        """`expected_s` more seconds fit into `share` of what is left."""
        return expected_s <= self.left() * share


def alternate(
    modes: list[str],
    sampler: Callable[[str, int], dict[str, Any]],
    samples: int,
    fits: Callable[[float], bool] = lambda _s: True,
    log: Callable[[str], None] = print,
) -> tuple[dict[str, list[dict[str, Any]]], list[str], list[str]]:
    """samples x modes, the mode order rotated per sample. A mode that fails (e.g. a CUPTI
    subscriber conflict between jax.profiler and fpgaprof in one process: use --isolate) is
    dropped with its error kept, not retried. Before each round `fits(longest round so far)` is
    asked; when it says no, the rounds end with a note."""
    results: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    errors: list[str] = []
    notes: list[str] = []
    active = list(modes)
    longest = 0.0
    for s in range(samples):
        if "none" not in active:
            notes.append("stopped: the no-profiler mode failed")
            break
        if s > 0 and not fits(longest):
            notes.append(f"stopped after {s} of {samples} samples: the time limit (a round takes ~{longest:.1f} s)")
            break
        r0 = time.monotonic()
        order = active[s % len(active) :] + active[: s % len(active)]
        for mode in order:
            try:
                results[mode].append(sampler(mode, s))
            except Exception as exc:  # noqa: BLE001 - recorded, the other modes go on
                errors.append(f"{mode}: {type(exc).__name__}: {exc}")
                active.remove(mode)
        longest = max(longest, time.monotonic() - r0)
        log(
            f"  sample {s + 1}/{samples}: "
            + "  ".join(
                f"{m} {results[m][-1]['work_s']:.4f}s" for m in order if m in active and results[m]
            )
        )
    return results, errors, notes


def _median(rows: list[dict[str, Any]], key: str, per_unit: bool = False) -> float:
    vals = [r[key] / (r["units"] if per_unit else 1) for r in rows if key in r]
    return statistics.median(vals) if vals else float("nan")


def summarise(results: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Per mode: medians (and min/max) of work_s and total_s, per unit of work, overhead % and
    ratio against `none` (per unit), output size and kernels."""
    base_work = _median(results["none"], "work_s", per_unit=True)
    base_total = _median(results["none"], "total_s", per_unit=True)
    out: dict[str, dict[str, Any]] = {}
    for mode, rs in results.items():
        if not rs:
            continue
        work_u = _median(rs, "work_s", per_unit=True)
        total_u = _median(rs, "total_s", per_unit=True)
        s: dict[str, Any] = {
            "samples": len(rs),
            "units_per_sample": statistics.median(r["units"] for r in rs),
            "median_work_s": _median(rs, "work_s"),
            "min_work_s": min(r["work_s"] for r in rs),
            "max_work_s": max(r["work_s"] for r in rs),
            "median_total_s": _median(rs, "total_s"),
            "median_work_per_unit_s": work_u,
            "median_total_per_unit_s": total_u,
            "work_ratio": work_u / base_work,
            "total_ratio": total_u / base_total,
            "work_overhead_pct": 100.0 * (work_u / base_work - 1.0),
            "total_overhead_pct": 100.0 * (total_u / base_total - 1.0),
        }
        if any("output_bytes" in r for r in rs):
            s["output_bytes"] = _median(rs, "output_bytes")
            s["output_bytes_per_unit"] = _median(rs, "output_bytes", per_unit=True)
        if any("kernels" in r for r in rs):
            s["kernels_per_sample"] = _median(rs, "kernels")
            s["kernels_per_unit"] = _median(rs, "kernels", per_unit=True)
        out[mode] = s
    return out


def verdict(summary: dict[str, dict[str, Any]]) -> bool | None:
    """fpgaprof within TARGET_PCT of no profiler and below jax.profiler (None: not measured)."""
    if "fpgaprof" not in summary:
        return None
    fp = summary["fpgaprof"]["work_overhead_pct"]
    jx = summary.get("jax", {}).get("work_overhead_pct")
    return bool(fp <= TARGET_PCT and (jx is None or fp < jx))


def size_comparison(summary: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """fpgaprof's trace file against jax.profiler's folder for the same work."""
    fp = summary.get("fpgaprof", {}).get("output_bytes")
    jx = summary.get("jax", {}).get("output_bytes")
    if fp is None or jx is None:
        return None
    return {"fpgaprof_bytes": fp, "jax_profiler_bytes": jx, "jax_over_fpgaprof": jx / fp if fp else None}


def table(summary: dict[str, dict[str, Any]], unit: str) -> str:
    head = (
        f"{'mode':18s}{'samples':>8s}{'units':>7s}{'work/unit':>13s}{'overhead':>10s}"
        f"{'total/unit':>13s}{'overhead':>10s}{'output':>12s}{'kernels':>9s}"
    )
    lines = [f"  (unit: one {unit})", "  " + head]
    for mode, s in summary.items():
        size = f"{s['output_bytes'] / 1e6:.2f} MB" if "output_bytes" in s else "-"
        kern = f"{s['kernels_per_sample']:.0f}" if "kernels_per_sample" in s else "-"
        lines.append(
            f"  {mode:18s}{s['samples']:8d}{s['units_per_sample']:7.0f}"
            f"{s['median_work_per_unit_s'] * 1e3:11.4f}ms{s['work_overhead_pct']:9.2f}%"
            f"{s['median_total_per_unit_s'] * 1e3:11.4f}ms{s['total_overhead_pct']:9.2f}%"
            f"{size:>12s}{kern:>9s}"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------------ child processes


def isolated_sampler(args: argparse.Namespace, workload: str) -> Callable[[str, int], dict[str, Any]]:
    """One fresh interpreter per sample (own CUPTI state, own warm-up)."""

    def sample(mode: str, _s: int) -> dict[str, Any]:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", f"{mode}:{workload}"]
        cmd += _child_args(args)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"child exited {proc.returncode}: {tail[0]}")
        return json.loads(proc.stdout.strip().splitlines()[-1])

    return sample


def _child_args(args: argparse.Namespace) -> list[str]:
    out = ["--size", str(args.size), "--reps", str(args.reps), "--steps", str(args.steps),
           "--dense-elements", str(args.dense_elements), "--counter-reps", str(args.counter_reps),
           "--counter-steps", str(args.counter_steps), "--samples", str(args.samples),
           "--workloads", ",".join(args.workloads)]
    return out + (["--allow-cpu"] if args.allow_cpu else [])


def child(args: argparse.Namespace) -> int:
    """--child MODE:WORKLOAD: warm up, one sample, JSON on the last line (--isolate).
    --child bare: every workload, --samples samples with no profiler, in a process that never
    imported fpgaprof; JSON {workload: [samples]} on the last line."""
    if args.child == "bare":
        _fp, jax = import_profilers(False, False)
        res: dict[str, Any] = {"backend": jax.default_backend()}
        for w in args.workloads:
            work = make_workload(jax, w, args)
            work(1)
            res[w] = []
            for _ in range(args.samples):
                w0 = time.perf_counter()
                work(units_for(w, "none", args))
                res[w].append({"work_s": time.perf_counter() - w0, "units": units_for(w, "none", args)})
        print(json.dumps(res))
        return 0
    mode, workload = args.child.split(":")
    fp, jax = import_profilers(True, mode == "fpgaprof_counters")
    work = make_workload(jax, workload, args)
    work(1)
    with tempfile.TemporaryDirectory(prefix="fpgaprof_overhead_") as tmp:
        out = os.path.join(tmp, "out.fpgaprof" if mode.startswith("fpgaprof") else "jax")
        print(json.dumps(run_sample(fp, jax, mode, work, units_for(workload, mode, args), out)))
    return 0


def run_bare(args: argparse.Namespace, timeout_s: float) -> dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "bare"] + _child_args(args)
    env = {k: v for k, v in os.environ.items() if k != "NVTX_INJECTION64_PATH"}
    env["XLA_FLAGS"] = os.environ.get("FPGAPROF_OVERHEAD_USER_XLA_FLAGS", "")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=max(timeout_s, 1.0), env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"the process without fpgaprof did not finish in {timeout_s:.0f} s"}
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"error": f"exited {proc.returncode}: " + " | ".join(tail)}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------------- driver


def write_json(path: str, record: dict[str, Any]) -> None:
    """Writes the results atomically (a temporary file renamed over PATH): called after each
    workload as well as at the end, so that a run stopped by its time limit keeps what it measured."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # What XLA_FLAGS the user had, before fpgaprof's import adds its own (for the bare process).
    os.environ.setdefault("FPGAPROF_OVERHEAD_USER_XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))
    if args.child:
        args.size = args.size or 128
        args.steps = args.steps or 3000
        return child(args)
    fp, jax = import_profilers(True, "fpgaprof_counters" in args.modes)
    backend = jax.default_backend()
    dry = backend != "gpu"
    if dry and not args.allow_cpu:
        print(
            f"tracing_overhead: needs an NVIDIA GPU (JAX backend is '{backend}'); the overhead of "
            "kernel tracing cannot be measured without one. Run it on a GPU machine, or pass "
            "--allow-cpu for a dry run that only checks the script.",
            file=sys.stderr,
        )
        return EXIT_NO_GPU
    args.size = args.size or (32 if dry else 128)
    args.steps = args.steps or (200 if dry else 3000)
    deadline = Deadline(args.max_seconds)
    notes: list[str] = []
    modes = list(args.modes)
    if dry:
        import warnings

        warnings.filterwarnings("ignore", category=fp.FpgaprofWarning)  # "no GPU": noted below
        for m, why in GPU_ONLY_MODES.items():
            if m in modes:
                modes.remove(m)
                notes.append(f"{m} skipped: {why} (this is a CPU dry run)")
        notes.append("CPU DRY RUN: fpgaprof records no kernels without a GPU (host-only trace); "
                     "these figures only show that the alternation works, not the GPU overhead")
    label = "CPU DRY RUN (not the GPU overhead figure)" if dry else "GPU"
    env = {k: os.environ.get(k) for k in ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_FLAGS",
                                          "MBIRJAX_DISABLE_PALLAS", "XLA_PYTHON_CLIENT_ALLOCATOR")}
    mbirjax_version = None
    if "forward" in args.workloads:
        with contextlib.suppress(Exception):
            import importlib.metadata as md

            mbirjax_version = md.version("mbirjax")
    print(
        f"tracing_overhead [{label}]: workloads {','.join(args.workloads)}; modes {','.join(modes)}; "
        f"{args.samples} samples; dense {args.steps} steps ({args.counter_steps} with counters), "
        f"forward {args.size}^3 x {args.reps} ({args.counter_reps} with counters); jax "
        f"{jax.__version__} on {jax.devices()[0]}; mbirjax {mbirjax_version}",
        flush=True,
    )
    for n in notes:
        print(f"note: {n}")

    per_workload: dict[str, Any] = {}

    def record(bare: dict[str, Any] | None, complete: bool) -> dict[str, Any]:
        met = [r["target_met"] for r in per_workload.values() if r["target_met"] is not None]
        return {
            "label": label,
            "complete": complete,  # False: written after a workload, before the run ended
            "backend": backend,
            "device": str(jax.devices()[0]),
            "device_kind": getattr(jax.devices()[0], "device_kind", None),
            "jax_version": jax.__version__,
            "mbirjax_version": mbirjax_version,
            "fpgaprof_version": getattr(fp, "__version__", None),
            "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "env": env,
            "args": {k: v for k, v in vars(args).items() if k not in ("child",)},
            "modes": modes,
            "workloads": per_workload,
            "bare": {k: v for k, v in (bare or {}).items() if k not in args.workloads} or None,
            "notes": notes,
            "errors": [f"{w}: {e}" for w, r in per_workload.items() for e in r["errors"]],
            "target_met": (all(met) if met else None) if not dry else None,
        }

    keep = os.path.abspath(args.keep) if args.keep else None
    if keep:
        os.makedirs(keep, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fpgaprof_overhead_") as tmp:
        # Kept for the process without fpgaprof (JAX's start and the warm-ups again).
        reserve = 0.0 if args.no_bare or args.max_seconds <= 0 else min(60.0, 0.2 * args.max_seconds)
        for i, w in enumerate(args.workloads):
            share = 1.0 / (len(args.workloads) - i)  # this workload's share of the time left
            w_deadline = (Deadline(max((deadline.left() - reserve) * share, 1.0)) if args.max_seconds > 0
                          else Deadline(0))
            print(f"\n== {w} ({UNIT[w]} per unit)", flush=True)
            t0 = time.monotonic()
            compile_s = None
            model_config = None
            if args.isolate:
                sampler = isolated_sampler(args, w)
            else:
                work = make_workload(jax, w, args)
                c0 = time.perf_counter()
                work(1)  # compile and warm up outside every measurement
                compile_s = time.perf_counter() - c0
                model = getattr(work, "model", None)
                if model is not None and hasattr(model, "get_compute_config"):
                    with contextlib.suppress(Exception):
                        kernels = model.get_compute_config(print_results=False).get("kernels", {})
                        model_config = {k: kernels.get(k) for k in (
                            "fwd_pallas", "back_pallas", "fwd_pallas_band", "back_pallas_band", "pallas_status")}

                def sampler(mode: str, s: int, work=work, w=w) -> dict[str, Any]:
                    suffix = ".fpgaprof" if mode.startswith("fpgaprof") else ""
                    path = os.path.join(tmp, f"{w}_{mode}_{s}{suffix}")
                    try:
                        return run_sample(fp, jax, mode, work, units_for(w, mode, args), path)
                    finally:
                        keep_output(path, os.path.join(keep, f"{w}_{mode}{suffix}") if keep else None)

            results, errors, w_notes = alternate(modes, sampler, args.samples, fits=w_deadline.fits)
            summary = summarise(results)
            ok = None if dry else verdict(summary)
            print(table(summary, UNIT[w]))
            for e in errors:
                print(f"  error: {e}")
            for n in w_notes:
                print(f"  note: {n}")
            if ok is not None:
                print(f"  target (fpgaprof <= {TARGET_PCT:g}% and below jax.profiler): {'MET' if ok else 'NOT MET'}")
            sizes = size_comparison(summary)
            if sizes and sizes["jax_over_fpgaprof"]:
                print(f"  on disk for the same work: fpgaprof {sizes['fpgaprof_bytes'] / 1e6:.2f} MB, "
                      f"jax.profiler {sizes['jax_profiler_bytes'] / 1e6:.2f} MB "
                      f"({sizes['jax_over_fpgaprof']:.1f}x)")
            per_workload[w] = {
                "unit": UNIT[w],
                "units": {m: units_for(w, m, args) for m in modes},
                "warmup_s": compile_s,
                "mbirjax_compute_config": model_config,
                "seconds": time.monotonic() - t0,
                "summary": summary,
                "samples_raw": results,
                "errors": errors,
                "notes": w_notes,
                "output_sizes": sizes,
                "target_met": ok,
            }
            if args.json:
                write_json(args.json, record(None, complete=False))

    bare: dict[str, Any] | None = None
    if not args.no_bare:
        need = 30.0 + sum(per_workload[w].get("warmup_s") or 0.0 for w in per_workload) * 2
        if args.max_seconds > 0 and not deadline.fits(need):
            notes.append(f"bare (process without fpgaprof) skipped: {deadline.left():.0f} s left, ~{need:.0f} s needed")
        else:
            print("\n== bare: the same workloads in a process that never imports fpgaprof", flush=True)
            bare = run_bare(args, deadline.left() if args.max_seconds > 0 else 1800.0)
            for w in args.workloads:
                rows = bare.get(w) if isinstance(bare, dict) else None
                if rows and "none" in per_workload[w]["summary"]:
                    b = statistics.median(r["work_s"] / r["units"] for r in rows)
                    none = per_workload[w]["summary"]["none"]["median_work_per_unit_s"]
                    per_workload[w]["bare"] = {
                        "samples": len(rows), "median_work_per_unit_s": b,
                        "none_over_bare": none / b, "samples_raw": rows}
                    print(f"  {w}: bare {b * 1e3:.4f} ms per {UNIT[w]}; `none` (fpgaprof imported) is "
                          f"{100 * (none / b - 1):+.2f}% of it")
            if "error" in bare:
                notes.append(f"bare: {bare['error']}")
                print(f"  bare: {bare['error']}")

    for n in notes:
        print(f"note: {n}")
    final = record(bare, complete=True)
    if args.json:
        write_json(args.json, final)
    if final["errors"]:
        return 1
    return 1 if (args.check and final["target_met"] is False) else 0


if __name__ == "__main__":
    sys.exit(main())
