#!/usr/bin/env python3
"""Cross-check of fpgaprof's hardware counters and kernel times against Nsight Compute (ncu).

Two workloads with values known by hand:
  matmul  a jitted float32 [M x K] @ [K x N] at Precision.HIGHEST (FP32 FFMA, no tensor cores):
          M*N*K FFMA thread instructions = 2*M*N*K FLOPs (the GEMM epilogue adds O(M*N));
  stream  a jitted y = x + 1 over N float32 (a copy that XLA cannot fold away: ``x * 1`` and a
          plain copy are not kernels): DRAM reads N*4 bytes and writes N*4 bytes; the input
          is 1 GiB so that what stays in the 50-60 MB L2 at the end is under 6 % of it.
Each runs (compiled and warmed up first) under
  1. ncu --clock-control none --profile-from-start off (the measured call is bracketed with
     cuProfilerStart/Stop, so compile-time autotuning kernels are not profiled), one ncu run per
     workload, CSV to a file; fpgaprof is not imported there (two CUPTI profilers conflict);
  2. fpgaprof.trace() (kernel times) and fpgaprof.trace(counters=True) (counters), one process,
     one trace per workload and mode;
and the comparison (per workload: sums over its kernels; per kernel, matched by launch order)
goes to ncu_compare.txt, with PASS/FAIL lines. Both runs use XLA_PYTHON_CLIENT_ALLOCATOR=platform
(one cudaMalloc per buffer, so replay saves only the buffers used, not a preallocated pool) and
no XLA command buffers, so that the same kernels run in both.

Usage (on a GPU machine; run_on_gpu.sh calls the first):
  python tests/gpu/ncu_crosscheck.py all --out DIR [--ncu PATH]
  python tests/gpu/ncu_crosscheck.py parse FILE.csv        # print parsed ncu CSV as JSON
  python tests/gpu/ncu_crosscheck.py compare DIR           # the comparison again, from the files
                                                           # `all` left in DIR (no GPU needed)
  python tests/gpu/ncu_crosscheck.py selftest              # the CSV parser on built-in samples
Exit status of `all`: 0 when every check passed, 1 when one failed or a run gave no data.
"""
from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from typing import Any

M, K, N = 2048, 1024, 4096              # distinct, so that a transposed shape shows
STREAM_FLOATS = 256 * 1024 * 1024       # 1 GiB of float32
OPS = ("matmul", "stream")

METRIC_FFMA = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
METRIC_DRAM_READ = "dram__bytes_read.sum"
METRIC_DRAM_WRITE = "dram__bytes_write.sum"
METRIC_TIME = "gpu__time_duration.sum"
NCU_METRICS = (METRIC_DRAM_READ, METRIC_DRAM_WRITE, METRIC_FFMA, METRIC_TIME)

# Tolerances of the PASS/FAIL lines. Between the two tools: the same hardware counters, so
# instruction counts must agree closely and DRAM bytes nearly (replay and L2 state differ a
# little). Against the hand values: the GEMM epilogue and L2 residue.
TOL_SAME_COUNTER = {"ffma": 0.005, "dram_read": 0.03, "dram_write": 0.03}
TOL_TIME = 0.25                          # ncu gpu__time_duration vs CUPTI activity duration
TOL_FLOPS_EXPECTED = 0.02
TOL_STREAM_BYTES_EXPECTED = 0.07


def expected_values() -> dict[str, dict[str, float]]:
    """Hand-computed values per workload (see the module doc)."""
    stream_bytes = 4.0 * STREAM_FLOATS
    return {
        "matmul": {"ffma": float(M) * N * K, "flops": 2.0 * M * N * K,
                   "dram_min": 4.0 * (M * K + K * N + M * N)},
        "stream": {"dram_read": stream_bytes, "dram_write": stream_bytes,
                   "dram_total": 2.0 * stream_bytes},
    }


# ---------------------------------------------------------------------------------------------
# ncu CSV parsing

_TIME_NS = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6,
            "second": 1e9, "s": 1e9}
_SI = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_FIXED_COLUMNS = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                  "Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name",
                  "Metric Name", "Metric Unit", "Metric Value", "Rule Name", "Rule Type",
                  "Rule Description", "Estimated Speedup Type", "Estimated Speedup",
                  "Kernel Time", "Function Name", "Demangled Name", "Mangled Name"}


def parse_value(text: str, unit: str = "") -> float | None:
    """One ncu value in base units (bytes, nanoseconds, counts); None for n/a or empty.

    ncu prints thousands separators ("53,261,312") and, without ``--print-units base``, scaled
    units ("Mbyte", "usecond", "Kinst"): both are undone here. Byte prefixes are decimal
    (ncu's Kbyte is 1000 bytes)."""
    t = text.strip().replace(",", "").replace("\u202f", "").replace(" ", "")
    if not t or t.lower() in ("n/a", "nan", "-", "(!)"):
        return None
    try:
        v = float(t)
    except ValueError:
        return None
    u = unit.strip()
    if u in _TIME_NS:
        return v * _TIME_NS[u]
    m = re.fullmatch(r"([KMGT]?)(byte|inst|instruction|sector|request|cycle|warp|thread)", u)
    if m:
        return v * _SI[m.group(1)]
    return v


def parse_ncu_csv(text: str) -> list[dict[str, Any]]:
    """Kernels in launch order from ncu's --csv output: [{"id", "name", "metrics": {name: value
    in base units}, "units": {name: unit as printed}}].

    Accepts the details page (one row per kernel and metric: ... "Metric Name","Metric Unit",
    "Metric Value") and ``--page raw`` (one row per kernel, one column per metric, an optional
    units row with an empty ID); lines before the header (the program's output, ==PROF== and
    ==WARNING== lines) are skipped; fields are quoted and may hold commas."""
    lines = text.splitlines()
    start = None
    for i, line in enumerate(lines):
        if line.startswith('"ID"') or line.startswith("ID,"):
            row = next(csv.reader([line]))
            if "ID" in row and ("Kernel Name" in row or "Function Name" in row):
                start = i
                break
    if start is None:
        return []
    body = [ln for ln in lines[start:] if ln.strip() and not ln.startswith("==")]
    rows = list(csv.reader(io.StringIO("\n".join(body))))
    header = [h.strip() for h in rows[0]]
    col = {h: j for j, h in enumerate(header)}
    name_col = col.get("Kernel Name", col.get("Function Name"))
    kernels: dict[str, dict[str, Any]] = {}

    def kernel(row: list[str]) -> dict[str, Any] | None:
        if len(row) < len(header):
            return None
        kid = row[col["ID"]].strip()
        if not kid:
            return None
        k = kernels.get(kid)
        if k is None:
            k = {"id": kid, "name": row[name_col] if name_col is not None else "",
                 "metrics": {}, "units": {}}
            kernels[kid] = k
        return k

    if "Metric Name" in col and "Metric Value" in col:
        unit_col = col.get("Metric Unit")
        for row in rows[1:]:
            k = kernel(row)
            if k is None:
                continue
            name = row[col["Metric Name"]].strip()
            unit = row[unit_col].strip() if unit_col is not None else ""
            if name in k["metrics"]:
                continue  # the same metric in a second section: first wins
            k["metrics"][name] = parse_value(row[col["Metric Value"]], unit)
            k["units"][name] = unit
    else:
        metric_cols = [(j, h) for j, h in enumerate(header) if h not in _FIXED_COLUMNS]
        units: dict[str, str] = {}
        for row in rows[1:]:
            if len(row) >= len(header) and not row[col["ID"]].strip():
                units = {h: row[j].strip() for j, h in metric_cols}  # the units row
                continue
            k = kernel(row)
            if k is None:
                continue
            for j, h in metric_cols:
                k["metrics"][h] = parse_value(row[j], units.get(h, ""))
                k["units"][h] = units.get(h, "")
    return list(kernels.values())


def role_of(metric: str) -> str | None:
    """The quantity a metric measures, as both tools name it (GB20x: dram__bytes_op_*). Only the
    ``.sum`` rollup counts: ncu's ``--page raw`` expands each requested ``X.sum`` into X.avg,
    X.max, X.min and X.sum columns (seen on an H100 with ncu 2025.3.1), and the avg is per unit
    (per SM, per memory partition), not the kernel's total."""
    if not metric.endswith(".sum"):
        return None
    if metric.startswith(("dram__bytes_read.", "dram__bytes_op_read.")):
        return "dram_read"
    if metric.startswith(("dram__bytes_write.", "dram__bytes_op_write.")):
        return "dram_write"
    if metric.startswith("sm__sass_thread_inst_executed_op_ffma_pred_on."):
        return "ffma"
    if metric.startswith("gpu__time_duration."):
        return "time_ns"
    return None


def by_role(metrics: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, v in metrics.items():
        r = role_of(name)
        if r is not None and v is not None and r not in out:
            out[r] = float(v)
    return out


# ---------------------------------------------------------------------------------------------
# The workloads (imported lazily: `parse`, `selftest` and `compare` need no JAX)

def _prepare_env() -> None:
    os.environ.setdefault("XLA_PYTHON_CLIENT_ALLOCATOR", "platform")
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_gpu_enable_command_buffer" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " --xla_gpu_enable_command_buffer=").strip()


def _workloads() -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    key = jax.random.key(0) if hasattr(jax.random, "key") else jax.random.PRNGKey(0)
    ka, kb, kx = jax.random.split(key, 3)
    a = jax.random.normal(ka, (M, K), jnp.float32)
    b = jax.random.normal(kb, (K, N), jnp.float32)
    x = jax.random.uniform(kx, (STREAM_FLOATS,), jnp.float32)
    mm = jax.jit(lambda p, q: jnp.matmul(p, q, precision=jax.lax.Precision.HIGHEST))
    st = jax.jit(lambda v: v + 1.0)
    calls = {"matmul": lambda: mm(a, b), "stream": lambda: st(x)}
    for f in calls.values():  # compile (autotuning included) and warm up, outside any window
        f().block_until_ready()
        f().block_until_ready()

    def check() -> dict[str, float]:
        """Relative errors against float64 on a slice (never trust exit code 0)."""
        c = np.asarray(mm(a, b)[:4, :64], np.float64)
        ref = np.asarray(a[:4], np.float64) @ np.asarray(b[:, :64], np.float64)
        y = np.asarray(st(x)[:4096], np.float64)
        yref = np.asarray(x[:4096], np.float64) + 1.0
        return {"matmul_rel_err": float(np.linalg.norm(c - ref) / np.linalg.norm(ref)),
                "stream_rel_err": float(np.linalg.norm(y - yref) / np.linalg.norm(yref))}

    return {"calls": calls, "check": check}


def _cuda_profiler() -> tuple[Any, Any]:
    """cuProfilerStart/Stop on the primary context of device 0 (the one XLA uses), made current
    on this thread first: the calls act on the current context."""
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    for what, rc in (("cuInit", lib.cuInit(0)), ("cuDeviceGet", lib.cuDeviceGet(ctypes.byref(dev), 0)),
                     ("cuDevicePrimaryCtxRetain", lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)),
                     ("cuCtxSetCurrent", lib.cuCtxSetCurrent(ctx))):
        if rc != 0:
            raise RuntimeError(f"{what} failed with CUresult {rc}")

    def call(fn: Any, name: str) -> None:
        rc = fn()
        if rc != 0:
            raise RuntimeError(f"{name} failed with CUresult {rc}")

    return (lambda: call(lib.cuProfilerStart, "cuProfilerStart"),
            lambda: call(lib.cuProfilerStop, "cuProfilerStop"))


def cmd_work(args: argparse.Namespace) -> int:
    """Under ncu: one workload, its measured call inside cuProfilerStart/Stop."""
    _prepare_env()
    w = _workloads()
    start, stop = _cuda_profiler()
    start()
    w["calls"][args.op]().block_until_ready()
    stop()
    print(json.dumps({"op": args.op, "check": w["check"]()}))
    return 0


def cmd_fpgaprof(args: argparse.Namespace) -> int:
    """Both workloads under fpgaprof.trace() (times) and fpgaprof.trace(counters=True)."""
    _prepare_env()
    import fpgaprof  # before jax: NVTX injection and XLA flags
    import jax

    out: dict[str, Any] = {"device": None, "errors": [], "warnings": [],
                           "ops": {op: {"timing": [], "counters": []} for op in OPS}}
    w = _workloads()
    out["device"] = str(jax.devices()[0])
    out["check"] = w["check"]()

    # One trace per workload and mode: every kernel of a trace is that workload's, whatever
    # thread XLA launches from (region attribution goes by the launching thread).
    for counters in (False, True):
        for op in OPS:
            try:
                with fpgaprof.trace(require_gpu=True, counters=counters) as prof:
                    w["calls"][op]().block_until_ready()
            except Exception as e:  # noqa: BLE001 - reported in the comparison, not raised
                out["errors"].append(f"{op}, trace(counters={counters}): {type(e).__name__}: {e}")
                continue
            out["warnings"] += [f"{op}, trace(counters={counters}): {m}" for m in prof.warnings]
            kernels = list(prof.kernels)
            if not counters:
                out["ops"][op]["timing"] = [{"name": k.name, "duration_ns": int(k.duration_ns)}
                                            for k in kernels]
                continue
            c = prof.counters.columns(["kernel_index", "metric", "value"])
            per_kernel: dict[int, dict[str, float]] = {}
            for ki, m, v in zip(c["kernel_index"], c["metric"], c["value"]):
                d = per_kernel.setdefault(int(ki), {})  # unpaired ranges share one index: summed
                d[str(m)] = d.get(str(m), 0.0) + float(v)
            out["counter_records"] = out.get("counter_records", 0) + len(prof.counters)
            out["ops"][op]["counters"] = [{"name": k.name, "metrics": per_kernel.get(i, {})}
                                          for i, k in enumerate(kernels)]
            unmatched: dict[str, float] = {}
            for i, metrics in per_kernel.items():
                if not 0 <= i < len(kernels):  # a range fpgaprof could not pair with a kernel
                    for m, v in metrics.items():
                        unmatched[m] = unmatched.get(m, 0.0) + v
            if unmatched:  # kept in the sums; named so that the per-kernel rows show it
                out["ops"][op]["counters"].append({"name": "(counter ranges without a kernel)",
                                                   "metrics": unmatched})
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps({"errors": out["errors"], "check": out["check"]}))
    return 0


# ---------------------------------------------------------------------------------------------
# Comparison

def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.4g}"


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.4f}" if a is not None and b else "-"


def _sum(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return float(sum(vals)) if vals else None


def compare(ncu: dict[str, list[dict[str, Any]]], fp: dict[str, Any] | None,
            notes: list[str]) -> tuple[str, bool]:
    """The comparison text and whether every check passed. ``ncu``: op -> parse_ncu_csv()."""
    exp = expected_values()
    lines: list[str] = []
    checks: list[tuple[str, bool | None, str]] = []

    def check(label: str, got: float | None, ref: float | None, tol: float) -> None:
        if got is None or ref is None:
            checks.append((label, None, "no value"))
            return
        if ref == 0:
            checks.append((label, got == 0, f"{_fmt(got)} vs 0 (must be 0)"))
            return
        err = abs(got - ref) / abs(ref)
        checks.append((label, err <= tol, f"{_fmt(got)} vs {_fmt(ref)}: {err * 100:.2f} % "
                       f"(limit {tol * 100:.1f} %)"))

    lines.append(f"Workloads: matmul f32 [{M} x {K}] @ [{K} x {N}] at Precision.HIGHEST: "
                 f"FFMA = M*N*K = {_fmt(exp['matmul']['ffma'])}, FLOPs = 2*M*N*K = "
                 f"{_fmt(exp['matmul']['flops'])}, DRAM >= (MK+KN+MN)*4 = "
                 f"{_fmt(exp['matmul']['dram_min'])} B;")
    lines.append(f"           stream y = x + 1 over {STREAM_FLOATS:,} float32: DRAM read = write "
                 f"= {_fmt(exp['stream']['dram_read'])} B (2N = {_fmt(exp['stream']['dram_total'])} B).")
    if fp is not None:
        lines.append(f"fpgaprof: device {fp.get('device')}; counter records "
                     f"{fp.get('counter_records', 0)}; correctness {fp.get('check')}")
        for e in fp.get("errors", []):
            lines.append(f"fpgaprof ERROR: {e}")
        for wmsg in fp.get("warnings", []):
            lines.append(f"fpgaprof warning: {wmsg}")
    lines.append("")
    head = (f"{'op':7s} {'quantity':22s} {'ncu':>18s} {'fpgaprof':>18s} {'expected':>18s} "
            f"{'fp/ncu':>8s} {'ncu/exp':>8s} {'fp/exp':>8s}")
    lines.append("Per operation (sums over its kernels):")
    lines.append(head)
    per_kernel_lines: list[str] = []
    for op in OPS:
        nk = ncu.get(op, [])
        fop = (fp or {}).get("ops", {}).get(op, {"timing": [], "counters": []})
        n_roles = [by_role(k["metrics"]) for k in nk]
        f_roles = [by_role(k["metrics"]) for k in fop["counters"]]
        f_time = [float(k["duration_ns"]) for k in fop["timing"]]
        rows: list[tuple[str, float | None, float | None, float | None]] = []
        rows.append(("kernels", float(len(nk)) if nk else None,
                     float(len(fop["counters"]) or len(fop["timing"])) or None, None))
        for role in ("ffma", "dram_read", "dram_write"):
            e = exp[op].get(role)
            rows.append((role, _sum([r.get(role) for r in n_roles]),
                         _sum([r.get(role) for r in f_roles]), e))
        n_ffma = _sum([r.get("ffma") for r in n_roles])
        f_ffma = _sum([r.get("ffma") for r in f_roles])
        rows.append(("flops (2*ffma)", 2 * n_ffma if n_ffma is not None else None,
                     2 * f_ffma if f_ffma is not None else None, exp[op].get("flops")))
        n_dram = [_sum([r.get("dram_read") for r in n_roles]), _sum([r.get("dram_write") for r in n_roles])]
        f_dram = [_sum([r.get("dram_read") for r in f_roles]), _sum([r.get("dram_write") for r in f_roles])]
        rows.append(("dram total", _sum(n_dram), _sum(f_dram),
                     exp[op].get("dram_total")))
        rows.append(("time ns (counters)", _sum([r.get("time_ns") for r in n_roles]),
                     _sum([r.get("time_ns") for r in f_roles]), None))
        rows.append(("time ns (trace)", _sum([r.get("time_ns") for r in n_roles]),
                     _sum(f_time), None))
        for q, a, b, e in rows:
            lines.append(f"{op:7s} {q:22s} {_fmt(a):>18s} {_fmt(b):>18s} {_fmt(e):>18s} "
                         f"{_ratio(b, a):>8s} {_ratio(a, e):>8s} {_ratio(b, e):>8s}")
            # ncu flushes the caches before each pass (--cache-control all, set explicitly);
            # whether CUPTI's kernel replay does is not documented, so the DRAM bytes of the
            # matmul (~56 MB of operands against H100's 50 MB L2) are shown, not checked: the
            # 1 GiB stream, which no cache holds, is the DRAM check.
            if q in TOL_SAME_COUNTER and not (op == "matmul" and q.startswith("dram")):
                check(f"{op} {q}: fpgaprof vs ncu", b, a, TOL_SAME_COUNTER[q])
            if q == "time ns (trace)":
                check(f"{op} kernel time: fpgaprof trace vs ncu", b, a, TOL_TIME)
        if op == "matmul":
            check("matmul flops: ncu vs 2*M*N*K", 2 * n_ffma if n_ffma is not None else None,
                  exp[op]["flops"], TOL_FLOPS_EXPECTED)
            check("matmul flops: fpgaprof vs 2*M*N*K", 2 * f_ffma if f_ffma is not None else None,
                  exp[op]["flops"], TOL_FLOPS_EXPECTED)
        else:
            check("stream dram total: ncu vs 2N", _sum(n_dram), exp[op]["dram_total"],
                  TOL_STREAM_BYTES_EXPECTED)
            check("stream dram total: fpgaprof vs 2N", _sum(f_dram), exp[op]["dram_total"],
                  TOL_STREAM_BYTES_EXPECTED)
        if len(nk) != len(fop["counters"]):
            notes.append(f"{op}: ncu profiled {len(nk)} kernel(s), fpgaprof counted "
                         f"{len(fop['counters'])}: per-kernel rows pair them by launch order")
        for i in range(max(len(nk), len(fop["counters"]), len(fop["timing"]))):
            n_name = nk[i]["name"] if i < len(nk) else "-"
            f_name = fop["counters"][i]["name"] if i < len(fop["counters"]) else (
                fop["timing"][i]["name"] if i < len(fop["timing"]) else "-")
            nr = n_roles[i] if i < len(n_roles) else {}
            fr = f_roles[i] if i < len(f_roles) else {}
            ft = f_time[i] if i < len(f_time) else None
            per_kernel_lines.append(f"{op} #{i}: ncu '{n_name[:90]}' | fpgaprof '{f_name[:90]}'")
            for role in ("ffma", "dram_read", "dram_write", "time_ns"):
                fv = ft if role == "time_ns" and ft is not None else fr.get(role)
                src = " (trace)" if role == "time_ns" and ft is not None else ""
                per_kernel_lines.append(f"    {role:10s} ncu {_fmt(nr.get(role)):>18s}   fpgaprof"
                                        f"{src} {_fmt(fv):>18s}   ratio {_ratio(fv, nr.get(role))}")
    lines.append("")
    lines.append("Per kernel (paired by launch order within each operation):")
    lines += per_kernel_lines
    lines.append("")
    lines.append("Checks:")
    ok = True
    for label, passed, detail in checks:
        status = "PASS" if passed else ("FAIL" if passed is False else "N/A ")
        ok = ok and passed is True
        lines.append(f"  {status} {label}: {detail}")
    for n in notes:
        lines.append(f"note: {n}")
    lines.append(f"RESULT: {'all checks passed' if ok else 'NOT all checks passed'}")
    return "\n".join(lines) + "\n", ok


def find_ncu(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    found = shutil.which("ncu")
    if found:
        return found
    cands = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu") +
                   glob.glob("/usr/local/cuda*/bin/ncu") +
                   glob.glob("/usr/local/cuda*/nsight-compute*/ncu"))
    return cands[-1] if cands else None


def _run(cmd: list[str], log: str, timeout: float) -> int:
    t0 = time.time()
    with open(log, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        # Own session: on timeout the whole group goes (ncu and the program it started).
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = 124
        f.write(f"\n[exit {rc} after {time.time() - t0:.1f} s]\n")
    return rc


def parse_ncu_files(directory: str, op: str) -> list[dict[str, Any]]:
    """The kernels of ncu's run of `op` in `directory`: ncu_<op>.csv (--log-file should hold the
    CSV), else ncu_<op>.log (stdout did); [] when neither has any."""
    for name in (f"ncu_{op}.csv", f"ncu_{op}.log"):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            with open(path, errors="replace") as fh:
                kernels = parse_ncu_csv(fh.read())
            if kernels:
                return kernels
    return []


def cmd_all(args: argparse.Namespace) -> int:
    os.makedirs(args.out, exist_ok=True)
    notes: list[str] = []
    header = [f"fpgaprof vs Nsight Compute cross-check, {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}"]
    ncu = find_ncu(args.ncu)
    parsed: dict[str, list[dict[str, Any]]] = {}
    me = os.path.abspath(__file__)
    if ncu is None:
        notes.append("ncu not found (PATH, /opt/nvidia/nsight-compute/*/ncu, /usr/local/cuda*/bin/ncu)")
    else:
        v = subprocess.run([ncu, "--version"], capture_output=True, text=True)
        header.append(f"ncu: {ncu}: {' '.join(v.stdout.split()[-6:])}")
        for op in OPS:
            csv_path = os.path.join(args.out, f"ncu_{op}.csv")
            cmd = [ncu, "--clock-control", "none", "--cache-control", "all", "--profile-from-start", "off",
                   "--print-units", "base", "--csv", "--page", "raw",
                   "--metrics", ",".join(NCU_METRICS), "--log-file", csv_path,
                   sys.executable, me, "work", "--op", op]
            rc = _run(cmd, os.path.join(args.out, f"ncu_{op}.log"), args.timeout)
            parsed[op] = parse_ncu_files(args.out, op)
            if rc != 0 or not parsed[op]:
                notes.append(f"ncu run for {op}: exit {rc}, {len(parsed[op])} kernel(s) parsed "
                             f"(see ncu_{op}.log and ncu_{op}.csv)")
    fp_json = os.path.join(args.out, "fpgaprof_counters.json")
    rc = _run([sys.executable, me, "fpgaprof", "--json", fp_json],
              os.path.join(args.out, "fpgaprof_run.log"), args.timeout)
    fp = None
    if os.path.exists(fp_json):
        with open(fp_json) as f:
            fp = json.load(f)
    if rc != 0 or fp is None:
        notes.append(f"fpgaprof run: exit {rc} (see fpgaprof_run.log)")
    with open(os.path.join(args.out, "ncu_parsed.json"), "w") as f:
        json.dump(parsed, f, indent=1)
    text, ok = compare(parsed, fp, notes)
    text = "\n".join(header) + "\n" + text
    with open(os.path.join(args.out, "ncu_compare.txt"), "w") as f:
        f.write(text)
    print(text)
    return 0 if ok else 1


def compare_saved(directory: str) -> tuple[str, bool]:
    """compare() on the files a run of `all` left in ``directory``: ncu's output for each
    workload (parse_ncu_files) and fpgaprof_counters.json."""
    parsed: dict[str, list[dict[str, Any]]] = {}
    notes: list[str] = []
    for op in OPS:
        parsed[op] = parse_ncu_files(directory, op)
        if not parsed[op]:
            notes.append(f"ncu_{op}.csv / ncu_{op}.log in {directory}: no kernel parsed")
    with open(os.path.join(directory, "fpgaprof_counters.json")) as f:
        fp = json.load(f)
    return compare(parsed, fp, notes)


# ---------------------------------------------------------------------------------------------
# Self-test of the parser on hand-written samples in ncu's two CSV layouts

SAMPLE_DETAILS = '''{"op": "matmul"}
==PROF== Connected to process 4242 (/opt/torch/.venv/bin/python3.12)
==PROF== Profiling "gemm_fusion_dot_1": 0%....50%....100% - 2 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","python3.12","127.0.0.1","void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(Params)","1","13","(256, 1, 1)","(32, 16, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","Mbyte","46.14"
"0","4242","python3.12","127.0.0.1","void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(Params)","1","13","(256, 1, 1)","(32, 16, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","33,619,968"
"0","4242","python3.12","127.0.0.1","void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(Params)","1","13","(256, 1, 1)","(32, 16, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","412.58"
"0","4242","python3.12","127.0.0.1","void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(Params)","1","13","(256, 1, 1)","(32, 16, 1)","0","9.0","Command line profiler metrics","sm__sass_thread_inst_executed_op_ffma_pred_on.sum","inst","8,589,934,592"
"1","4242","python3.12","127.0.0.1","loop_add_fusion","1","13","(128, 1, 1)","(2097152, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","Gbyte","1.07"
"1","4242","python3.12","127.0.0.1","loop_add_fusion","1","13","(128, 1, 1)","(2097152, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","n/a"
"1","4242","python3.12","127.0.0.1","loop_add_fusion","1","13","(128, 1, 1)","(2097152, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","msecond","0.72"
"1","4242","python3.12","127.0.0.1","loop_add_fusion","1","13","(128, 1, 1)","(2097152, 1, 1)","0","9.0","Command line profiler metrics","sm__sass_thread_inst_executed_op_ffma_pred_on.sum","inst","0"
==PROF== Disconnected from process 4242
'''

SAMPLE_RAW = '''==PROF== Connected to process 77 (/usr/bin/python3)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Device","CC","dram__bytes_read.avg","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum","sm__sass_thread_inst_executed_op_ffma_pred_on.avg","sm__sass_thread_inst_executed_op_ffma_pred_on.max","sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
"","","","","","","","","","byte","byte","byte","nsecond","inst","inst","inst"
"0","77","python3","h","void gemm<float, 128, 128>(float const*, float const*, float*, int, int, int)","1","7","0","9.0","1,258,291.20","50,331,648","33,554,432","412,576","65,075,262.06","67,108,864","8,589,934,592"
"1","77","python3","h","loop_add_fusion","1","7","0","9.0","26,843,545.60","1,073,741,824","1,073,000,000","720,000","0","0","0"
'''


def selftest() -> int:
    d = parse_ncu_csv(SAMPLE_DETAILS)
    assert [k["id"] for k in d] == ["0", "1"], d
    assert d[0]["name"].startswith("void cutlass::Kernel2<"), d[0]["name"]
    r0, r1 = by_role(d[0]["metrics"]), by_role(d[1]["metrics"])
    assert r0["dram_read"] == 46.14e6 and r0["dram_write"] == 33619968.0, r0
    assert abs(r0["time_ns"] - 412580.0) < 1e-6 and r0["ffma"] == 8589934592.0, r0
    assert abs(r1["dram_read"] - 1.07e9) < 1 and "dram_write" not in r1, r1   # n/a is no value
    assert d[1]["metrics"]["dram__bytes_write.sum"] is None
    assert r1["time_ns"] == 720000.0 and r1["ffma"] == 0.0, r1
    w = parse_ncu_csv(SAMPLE_RAW)
    assert [k["name"] for k in w] == ["void gemm<float, 128, 128>(float const*, float const*, float*, int, int, int)",
                                      "loop_add_fusion"], w
    rw0, rw1 = by_role(w[0]["metrics"]), by_role(w[1]["metrics"])
    assert rw0 == {"dram_read": 50331648.0, "dram_write": 33554432.0, "time_ns": 412576.0,
                   "ffma": 8589934592.0}, rw0
    assert rw1["dram_read"] == 1073741824.0 and rw1["time_ns"] == 720000.0, rw1
    assert parse_ncu_csv("no csv here\n==PROF== nothing\n") == []
    assert parse_value("1,234.5", "Kbyte") == 1234500.0 and parse_value("3", "second") == 3e9
    assert parse_value("", "byte") is None and parse_value("n/a") is None
    # compare(): a synthetic fpgaprof result equal to ncu passes the between-tool checks
    fp = {"device": "test", "ops": {op: {"counters": [{"name": k["name"], "metrics": k["metrics"]}
                                                     for k in w[i:i + 1]],
                                          "timing": [{"name": k["name"], "duration_ns": k["metrics"]["gpu__time_duration.sum"]}
                                                     for k in w[i:i + 1]]}
                                    for i, op in enumerate(OPS)}}
    text, _ = compare({"matmul": w[:1], "stream": w[1:]}, fp, [])
    assert "PASS matmul ffma: fpgaprof vs ncu" in text, text
    assert "RESULT: all checks passed" in text, text
    print("ncu_crosscheck selftest: OK (details and raw layouts, units, n/a, noise lines, compare)")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("all", help="ncu runs + fpgaprof run + comparison (GPU)")
    a.add_argument("--out", required=True)
    a.add_argument("--ncu", default=None, help="path of ncu (default: PATH, then usual places)")
    a.add_argument("--timeout", type=float, default=240.0, help="seconds per run")
    w = sub.add_parser("work", help="one workload under ncu (internal)")
    w.add_argument("--op", choices=OPS, required=True)
    f = sub.add_parser("fpgaprof", help="both workloads under fpgaprof (internal)")
    f.add_argument("--json", required=True)
    c = sub.add_parser("compare", help="the comparison again from the ncu_*.csv and "
                       "fpgaprof_counters.json that `all` left in DIR (no GPU)")
    c.add_argument("dir")
    pr = sub.add_parser("parse", help="print an ncu CSV file as parsed JSON")
    pr.add_argument("file")
    sub.add_parser("selftest", help="the CSV parser on built-in samples (no GPU)")
    args = p.parse_args(argv)
    if args.cmd == "all":
        return cmd_all(args)
    if args.cmd == "work":
        return cmd_work(args)
    if args.cmd == "fpgaprof":
        return cmd_fpgaprof(args)
    if args.cmd == "compare":
        text, ok = compare_saved(args.dir)
        print(text)
        return 0 if ok else 1
    if args.cmd == "parse":
        with open(args.file, errors="replace") as fh:
            print(json.dumps(parse_ncu_csv(fh.read()), indent=1))
        return 0
    return selftest()


if __name__ == "__main__":
    sys.exit(main())
