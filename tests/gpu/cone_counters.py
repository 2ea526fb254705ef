#!/usr/bin/env python3
"""Hardware counters on MBIRJAX cone-beam projection (GPU only): one cone-beam forward and one
back projection of an n^3 Shepp-Logan phantom under fpgaprof.trace(counters=True), each in a
region, after a warm-up; the trace is saved.

Checks (exit 1 when one fails, 77 without a GPU or mbirjax, 2 when the driver forbids counters):
  * every kernel has counter values (paired by its Range Profiler range), and so does every
    device-to-device copy that has a range; no pairing warning;
  * the counted FP32 FLOPs and DRAM bytes of each region are > 0, the measured roofline covers
    every kernel of both regions (measured_coverage = 1);
  * the kernels' times come from the counters' gpu__time_duration (replayed launches have no
    timestamps of their own) and add up to a positive GPU time per region.
Prints one JSON line at the end with the figures: per region the kernels, counted FLOPs, DRAM
bytes read and written, static (HLO) bytes and their ratio to DRAM bytes, measured intensity and
bound; and the projector path (XLA or MBIRJAX 0.7's Pallas kernels).

Usage: python tests/gpu/cone_counters.py [--size 64] [--out cone_counters.fpgaprof]
XLA_PYTHON_CLIENT_PREALLOCATE=false is set unless the allocator is chosen already (kernel replay
saves and restores JAX's preallocated pool around every kernel otherwise: docs/roofline.md).
"""
from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import sys
import types
import warnings

NONE32 = 0xFFFFFFFF


def evaluate(prof, region_names) -> tuple[dict, list[str]]:
    """The checks on a counters trace: figures per region, and the failures (empty: passed)."""
    c = prof.counters.columns(["kernel_index", "memcpy_index", "metric", "value"])
    paired_kernels = {int(k) for k in c["kernel_index"] if int(k) != NONE32}
    paired_copies = {int(k) for k in c["memcpy_index"] if int(k) != NONE32}
    unpaired = sum(1 for k, m in zip(c["kernel_index"], c["memcpy_index"]) if int(k) == NONE32 and int(m) == NONE32)
    names = [k.name for k in prof.kernels]
    regions = {r["region"]: r for r in prof.roofline(by="region")}
    region_of = [prof.regions[k.region_index].name if k.region_index != NONE32 else None for k in prof.kernels]
    sums: dict[str, dict[str, float]] = {}
    for ki, met, v in zip(c["kernel_index"], c["metric"], c["value"]):
        if int(ki) == NONE32:
            continue
        d = sums.setdefault(region_of[int(ki)] or "(none)", {})
        d[met] = d.get(met, 0.0) + float(v)

    def g(d: dict, op: str) -> float:
        return d.get("sm__sass_thread_inst_executed_op_" + op + "_pred_on.sum", 0.0)

    out = {
        "kernels": len(names),
        "kernels_with_counters": len(paired_kernels),
        "dtod_copies_with_counters": len(paired_copies),
        "unpaired_counter_values": unpaired,
        "counter_values": len(prof.counters),
        "warnings": list(prof.warnings),
        "regions": {},
    }
    failures = []
    if not names:
        failures.append("no kernels recorded")
    if len(paired_kernels) != len(names):
        missing = sorted(set(range(len(names))) - paired_kernels)[:5]
        failures.append(f"{len(names) - len(paired_kernels)} of {len(names)} kernels have no counters "
                        f"(e.g. {[names[i] for i in missing]})")
    if any("not paired" in w or "have no counters" in w for w in prof.warnings):
        failures.append("pairing warnings: " + "; ".join(w for w in prof.warnings if "pair" in w or "counters" in w))
    for name in region_names:
        r = regions.get(name)
        d = sums.get(name, {})
        dram_r = sum(v for k, v in d.items() if k.startswith("dram__bytes") and "read" in k)
        dram_w = sum(v for k, v in d.items() if k.startswith("dram__bytes") and "write" in k)
        flops = g(d, "fadd") + g(d, "fmul") + 2 * g(d, "ffma")
        out["regions"][name] = {
            "kernels": r["kernel_count"] if r else 0,
            "gpu_time_ns": r["time_ns"] if r else 0,
            "counted_fp32_flops": flops,
            "dram_read_bytes": dram_r,
            "dram_write_bytes": dram_w,
            "static_bytes": r["bytes"] if r else None,
            "static_over_dram": (r["bytes"] / (dram_r + dram_w)) if r and dram_r + dram_w else None,
            "measured_coverage": r.get("measured_coverage") if r else None,
            "measured_intensity": r.get("measured_intensity") if r else None,
            "measured_bound": r.get("measured_bound") if r else None,
            "static_bound": r.get("bound") if r else None,
        }
        if r is None:
            failures.append(f"no roofline row for region {name}")
            continue
        if not (flops > 0 and dram_r + dram_w > 0):
            failures.append(f"{name}: counted FLOPs {flops} or DRAM bytes {dram_r + dram_w} not > 0")
        if not r.get("has_measured") or (r.get("measured_coverage") or 0) < 0.999:
            failures.append(f"{name}: measured roofline covers {r.get('measured_coverage')} of its kernels")
        if not r["time_ns"] > 0:
            failures.append(f"{name}: no GPU time")
    out["failures"] = failures
    return out, failures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--out", default="cone_counters.fpgaprof")
    args = ap.parse_args(argv)
    if not any(k in os.environ for k in ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_ALLOCATOR",
                                         "XLA_PYTHON_CLIENT_MEM_FRACTION")):
        os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        import easygui  # noqa: F401
    except Exception:
        sys.modules["easygui"] = types.ModuleType("easygui")
    import fpgaprof
    import jax
    import numpy as np

    if jax.default_backend() != "gpu":
        print("cone_counters: needs a GPU (JAX backend is " + jax.default_backend() + ")", file=sys.stderr)
        return 77
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import mbirjax as mj
    except ImportError as e:
        print(f"cone_counters: mbirjax is not installed ({e})", file=sys.stderr)
        return 77

    n = args.size
    angles = np.linspace(-np.pi, np.pi, n, endpoint=False)
    model = mj.ConeBeamModel((n, n, n), angles, source_detector_dist=4.0 * n, source_iso_dist=2.0 * n)
    phantom = mj.generate_3d_shepp_logan_low_dynamic_range(model.get_params("recon_shape"))
    jax.block_until_ready(model.back_project(jax.block_until_ready(model.forward_project(phantom))))
    with fpgaprof.trace(args.out, counters=True) as prof:
        with fpgaprof.region("cone_forward_project"):
            sino = jax.block_until_ready(model.forward_project(phantom))
        with fpgaprof.region("cone_back_project"):
            jax.block_until_ready(model.back_project(sino))

    text = " ".join(prof.warnings)
    if len(prof.counters) == 0 and ("INSUFFICIENT_PRIVILEGES" in text or "RestrictProfiling" in text):
        print("cone_counters: the driver restricts counters to admin users: " + text[:400], file=sys.stderr)
        return 2
    get_config = getattr(model, "get_compute_config", None)
    kernels_cfg = get_config(print_results=False).get("kernels", {}) if get_config else {}
    out, failures = evaluate(prof, ("cone_forward_project", "cone_back_project"))
    out.update(size=n, mbirjax=md.version("mbirjax"),
               pallas={k: kernels_cfg.get(k) for k in ("fwd_pallas", "back_pallas", "pallas_status")})
    print(prof.summary())
    print(f"trace saved to {args.out}")
    print(json.dumps(out))
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
