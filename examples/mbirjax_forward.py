#!/usr/bin/env python3
"""fpgaprof on an MBIRJAX script: one forward and one back projection, traced and ranked.

    python examples/mbirjax_forward.py [--size 64] [--target alveo-u55c] [--out forward.fpgaprof] [--counters]

The everyday use: `with fpgaprof.trace(path)` around the calls, each in an `fpgaprof.region`,
after one warm-up call (so that XLA's compilation is not in the trace). It prints the profile
summary (top kernels, transfers, regions, HLO ops with their Python lines), the regions and
the HLO ops ranked as FPGA offload candidates on the target card, and saves the trace
(re-analyse it anywhere: `fpgaprof report forward.fpgaprof --target versal-v80`).
Without a GPU the calls still run; the summary says what is missing and the tables say why
they are empty. The full sweep over every MBIRJAX operation and size is mbirjax_sweep.py.

It ends with the projector kernels MBIRJAX used: XLA's, or (MBIRJAX 0.7 on an H100, H200 or
A100) its Pallas/Triton kernels, which fpgaprof's cost model has no rule for (docs/mbirjax.md).
Runs on MBIRJAX 0.6.17.1 and 0.7.x; on 0.7 forward_project and back_project return NumPy arrays
by default, so each traced call includes the copy of its result to the host.
"""
from __future__ import annotations

import argparse
import importlib.metadata as md
import os
import sys
import types
import warnings

os.environ.setdefault("MPLBACKEND", "Agg")  # MBIRJAX's viewer picks TkAgg at import
try:
    import easygui  # noqa: F401  (MBIRJAX imports it at import time; it needs Tk)
except Exception:  # ImportError, or TclError without a display
    sys.modules["easygui"] = types.ModuleType("easygui")

import fpgaprof  # noqa: E402  (before jax: NVTX capture and the HLO dump are set up on import)
import jax  # noqa: E402
import numpy as np  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # device-setup and viewer notices of MBIRJAX's import
    import mbirjax as mj  # noqa: E402


def projector_kernels(model) -> str:
    """Which projector kernels the traced calls ran: MBIRJAX 0.7 uses its Pallas (Triton) kernels
    on H100, H200 and A100 GPUs and says so in get_compute_config(); other GPUs, the CPU,
    MBIRJAX_DISABLE_PALLAS=1 and MBIRJAX 0.6 use XLA's."""
    version = md.version("mbirjax")
    get_config = getattr(model, "get_compute_config", None)
    if get_config is None:
        return f"MBIRJAX {version} projector kernels: XLA (get_compute_config() came with 0.7)"
    kernels = get_config(print_results=False).get("kernels", {})
    live = any(kernels.get(k) for k in ("fwd_pallas", "back_pallas", "fwd_pallas_band",
                                        "back_pallas_band"))
    return (f"MBIRJAX {version} projector kernels: {'Pallas (Triton)' if live else 'XLA'} "
            f"(Pallas: {kernels.get('pallas_status')})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=64, help="volume n x n x n and n views (default 64)")
    ap.add_argument("--target", default="alveo-u55c", help="FPGA card preset (fpgaprof.fpga.presets())")
    ap.add_argument("--out", default="forward.fpgaprof", help="trace file to write")
    ap.add_argument("--counters", action="store_true",
                    help="also read hardware counters per kernel (measured FLOPs and DRAM bytes for "
                         "the roofline; each kernel is replayed, so the traced calls run slower)")
    args = ap.parse_args(argv)

    n = args.size
    model = mj.ParallelBeamModel((n, n, n), np.linspace(0.0, np.pi, n, endpoint=False))
    phantom = mj.generate_3d_shepp_logan_low_dynamic_range(model.get_params("recon_shape"))
    # Warm-up: compile both projectors outside the trace.
    jax.block_until_ready(model.back_project(jax.block_until_ready(model.forward_project(phantom))))

    with fpgaprof.trace(args.out, counters=args.counters) as prof:
        # "<operation>/<size>": the answer names the size (fpgaprof.api.answer.SIZE_RE)
        with fpgaprof.region(f"forward_project/{n}"):
            sino = jax.block_until_ready(model.forward_project(phantom))
        with fpgaprof.region(f"back_project/{n}"):
            jax.block_until_ready(model.back_project(sino))

    print(prof.summary())
    print(prof.fpga_candidates(args.target, by="region"))
    print(prof.fpga_candidates(args.target))
    print(projector_kernels(model))
    print(f"trace saved to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
