#!/usr/bin/env bash
# The main job at a small size: set everything up (scripts/bootstrap.sh), profile the MBIRJAX
# operations with fpgaprof (examples/mbirjax_sweep.py) and print the summary.
#   DEMO_SIZES   volume edge sizes (default "32"; the full sweep is "32 64 128 256")
#   DEMO_RUNS    timed runs per operation and size after a warm-up (default 3)
#   DEMO_OUT     output directory (default demo_out)
#   DEMO_OPS     subset of operations (default: all 28; see --list-operations)
# Usage: scripts/demo.sh [--no-bootstrap] [extra arguments for examples/mbirjax_sweep.py]
set -euo pipefail
cd "$(dirname "$0")/.."

bootstrap=1
if [ "${1:-}" = "--no-bootstrap" ]; then bootstrap=0; shift; fi
if [ "$bootstrap" = 1 ]; then
  bash scripts/bootstrap.sh --no-mbirjax06   # the demo runs the current MBIRJAX line (.venv)
fi
VPY=.venv/bin/python
if ! "$VPY" -c "import fpgaprof, mbirjax" 2>/dev/null; then
  echo "demo: fpgaprof or mbirjax is not importable from .venv; run scripts/bootstrap.sh (extras test,mbirjax)" >&2
  exit 1
fi

SIZES=${DEMO_SIZES:-32}
RUNS=${DEMO_RUNS:-3}
OUT=${DEMO_OUT:-demo_out}
ops_args=()
[ -n "${DEMO_OPS:-}" ] && ops_args=(--operations $DEMO_OPS)

gpu=$("$VPY" -c "import jax; print(int(jax.default_backend() == 'gpu'))" 2>/dev/null || echo 0)
if [ "$gpu" != 1 ]; then
  echo "demo: no GPU visible to JAX. Kernel tracing (kernels, transfers, device memory, roofline and"
  echo "      FPGA ranking) needs an NVIDIA GPU with CUPTI; this run measures what CPU JAX allows:"
  echo "      wall times, compilations, the AOT breakdown and XLA's cost analysis."
fi

export MPLBACKEND=Agg
# shellcheck disable=SC2086
"$VPY" examples/mbirjax_sweep.py --sizes $SIZES --runs "$RUNS" --output "$OUT" ${ops_args[@]+"${ops_args[@]}"} "$@"

echo
echo "demo: outputs in $OUT/: summary.json (timings + profile per operation and size), scaling.txt,"
echo "      scaling.csv$( [ -f "$OUT/report.html" ] && echo ", report.html (open in a browser)")"
if [ "$gpu" != 1 ]; then
  echo "demo: kernel-level results were NOT measured here (no GPU); run this on a machine with an NVIDIA GPU."
  # A real GPU trace bundled with the repository (tests/data/traces/README.md), when there is one,
  # shows the kernel-level outputs without a GPU: every report regenerated from it.
  # Today's MBIRJAX (0.7.3, its Pallas projectors, timed without counters) when it is there.
  real=tests/data/traces/mbirjax073_parallel_128_pallas_h200.fpgaprof
  [ -f "$real" ] || real=$(ls tests/data/traces/*.fpgaprof 2>/dev/null | head -n 1 || true)
  if [ -n "$real" ]; then
    echo
    echo "demo: the kernel-level outputs from a bundled GPU trace ($real, made on the GPU its README names):"
    "$VPY" -m fpgaprof report "$real" -o "$OUT/bundled_gpu_trace"
  else
    echo "demo: (no GPU trace is bundled yet under tests/data/traces/, so none is shown)"
  fi
fi
