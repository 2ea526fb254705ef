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
# An NVIDIA GPU that JAX does not use: .venv has pip's CPU jax. The command that gives JAX this
# GPU: jax[cuda13] for a driver of r580 or newer, else jax[cuda12] (docs/install.md).
cuda_hint=""
if [ "$gpu" != 1 ] && command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  drv=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | awk -F. 'NR == 1 {print $1}')
  jaxver=$("$VPY" -c "import jax; print(jax.__version__)" 2>/dev/null || echo "")
  flavour=cuda12
  [ -n "$drv" ] && [ "$drv" -ge 580 ] 2>/dev/null && flavour=cuda13
  cuda_hint=".venv/bin/pip install 'jax[$flavour]${jaxver:+==$jaxver}' && bash scripts/demo.sh --no-bootstrap"
  echo "demo: this machine has an NVIDIA GPU (driver ${drv:-unknown}) but .venv's JAX runs on the CPU;"
  echo "      to profile on the GPU: $cuda_hint"
fi
answer_args=()
real=""
if [ "$gpu" = 1 ]; then
  echo "demo: this run answers which MBIRJAX operations would gain on an FPGA card: it profiles them"
  echo "      on this GPU (sizes $SIZES) and ends with the answer per operation and size; the full"
  echo "      report is $OUT/report.html."
else
  # A real GPU trace bundled with the repository (tests/data/traces/README.md) gives the answer
  # without a GPU: every report regenerated from it. Today's MBIRJAX (0.7.3, its Pallas
  # projectors, timed without counters) when it is there.
  real=tests/data/traces/mbirjax073_parallel_128_pallas_h200.fpgaprof
  [ -f "$real" ] || real=$(ls tests/data/traces/*.fpgaprof 2>/dev/null | head -n 1 || true)
  echo "demo: no GPU visible to JAX, so this machine cannot say which MBIRJAX operations gain on an"
  echo "      FPGA card. This demo shows:"
  echo "      1. the CPU part: MBIRJAX's operations timed on this CPU (wall times, compilations, the"
  echo "         AOT breakdown, XLA's cost analysis; sizes $SIZES);"
  if [ -n "$real" ]; then
    echo "      2. at the end, the answer from a real GPU trace bundled with fpgaprof ($real),"
    echo "         with every report regenerated from it in $OUT/bundled_gpu_trace/."
    mkdir -p "$OUT"
    "$VPY" -m fpgaprof report "$real" -o "$OUT/bundled_gpu_trace" > "$OUT/bundled_gpu_trace.txt" 2>&1 \
      || { cat "$OUT/bundled_gpu_trace.txt" >&2; exit 1; }
    answer_args=(--answer-from "$OUT/bundled_gpu_trace/summary.json")
  else
    echo "      (no GPU trace is bundled under tests/data/traces/, so there is no answer to show)"
  fi
fi

export MPLBACKEND=Agg
# shellcheck disable=SC2086
"$VPY" examples/mbirjax_sweep.py --sizes $SIZES --runs "$RUNS" --output "$OUT" ${ops_args[@]+"${ops_args[@]}"} \
  ${answer_args[@]+"${answer_args[@]}"} "$@"

echo
echo "demo: outputs in $OUT/: report.html (the answer first; open in a browser), summary.json,"
echo "      scaling.txt, scaling.csv"
if [ "$gpu" != 1 ] && [ -n "$real" ]; then
  echo "demo: the bundled GPU trace's reports: $OUT/bundled_gpu_trace/ (report.html, summary.json;"
  echo "      what \`fpgaprof report\` printed: $OUT/bundled_gpu_trace.txt). Kernel-level results were"
  if [ -n "$cuda_hint" ]; then
    echo "      NOT measured here (JAX ran on the CPU): for this machine's GPU, $cuda_hint"
  else
    echo "      NOT measured here (no GPU): on a machine with an NVIDIA GPU and a CUDA JAX"
    echo "      (docs/install.md) this demo answers for it."
  fi
fi
