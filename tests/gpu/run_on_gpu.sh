#!/usr/bin/env bash
# On a GPU machine without network: builds fpgaprof into this machine's Python
# (`pip install --no-build-isolation --no-deps .`), runs tests/gpu, and writes the logs under
# $OUT (default ./gpu-logs). Build dependencies must already be installed (scikit-build-core,
# pybind11, nvidia-cuda-cupti; nlohmann-json and nvidia-nvtx unless the CUDA toolkit / Debian
# packages provide the headers): set WHEELS=<dir of .whl files> to install carried wheels first.
# Usage: tests/gpu/run_on_gpu.sh   (env: PYTHON, OUT, WHEELS)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
PY=${PYTHON:-python3}
OUT=${OUT:-$ROOT/gpu-logs}
mkdir -p "$OUT"

{
  date -u
  nvidia-smi 2>&1 || echo "nvidia-smi not available"
  "$PY" -c "import sys, jax; print(sys.version); print('jax', jax.__version__, jax.devices())" 2>&1
} > "$OUT/environment.log"

if [ -n "${WHEELS:-}" ]; then
  "$PY" -m pip install --no-index --find-links "$WHEELS" "$WHEELS"/*.whl > "$OUT/wheels.log" 2>&1 \
    || { echo "installing carried wheels failed: see $OUT/wheels.log"; exit 1; }
fi

echo "building fpgaprof (log: $OUT/build.log)"
if ! "$PY" -m pip install --no-build-isolation --no-deps -v . > "$OUT/build.log" 2>&1; then
  echo "build failed; last lines of $OUT/build.log:"
  tail -n 40 "$OUT/build.log"
  exit 1
fi

# Run from outside the checkout so that the installed package is the one imported.
cd "$OUT"
"$PY" -c "import fpgaprof, fpgaprof._devices as d; print(d.describe())" > "$OUT/devices.log" 2>&1
cat "$OUT/devices.log"
"$PY" -m pytest -v -rA -p no:cacheprovider -c "$ROOT/pyproject.toml" --rootdir "$ROOT" -s "$ROOT/tests/gpu" \
  2>&1 | tee "$OUT/pytest.log"
rc=${PIPESTATUS[0]}
echo "tests/gpu exit code: $rc (logs in $OUT)"
exit "$rc"
