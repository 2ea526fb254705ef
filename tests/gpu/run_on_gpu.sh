#!/usr/bin/env bash
# GPU validation of fpgaprof in one command, for a lent GPU machine without network (the device
# tool: docs/gpu-validation.md). Steps, in this order (each logged, each under its own time limit,
# one failing does not stop the others; a summary table of step -> status, rc, seconds at the end):
#   env        machine, driver, GPU, Python, JAX devices, ncu/nvcc/cmake versions, build headers
#   wheels     pip-installs the carried wheels .whl/*.whl into $WHEEL_SITE (scripts/gpu_wheels.sh)
#   build      pip install --no-build-isolation --no-deps --target $FP_SITE . (kept while the
#              machine stays warm: the next call reuses it when the sources are unchanged)
#   devices    fpgaprof devices            counters   fpgaprof counters (the chip's counter plan)
#   pytest     pytest tests/gpu -v         ncu        tests/gpu/ncu_crosscheck.py (ncu vs fpgaprof)
#   calibrate  fpgaprof calibrate          sweep      fpgaprof run -- examples/mbirjax_sweep.py
# Usage: tests/gpu/run_on_gpu.sh [all | STEP...]     (env, wheels and build are added when needed)
# Env: PYTHON (python3), OUT (./gpu-logs), GPUVAL_BUDGET_S (540: the whole run's limit; a step
#   that would not fit is skipped), SWEEP_SIZES ("32 64"), SWEEP_OPS, SWEEP_RUNS (2),
#   GPUVAL_CAP_<step> (a step's own limit, s), GPUVAL_FORCE=1 (run the GPU-only steps without a
#   GPU too), WHEELS (.whl), WHEEL_SITE
#   (/tmp/site), FP_SITE (build/gpu-site), FP_BUILD (build/gpu-build), GPUVAL_WORK (/tmp/gpuval).
# $OUT receives at most 8 files (the device tool returns no more): summary.txt, logs.tgz (every
# log), pytest.log, ncu_compare.txt, trace.fpgaprof and summary.json (the sweep's `fpgaprof run`).
# Exit status: 0 when no step failed (skips are not failures), else 1.
# shellcheck disable=SC2317  # the step_* functions are called as "step_$STEP"
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SELF="$ROOT/tests/gpu/run_on_gpu.sh"
cd "$ROOT" || exit 1
export PY=${PYTHON:-python3}
export OUT=${OUT:-$ROOT/gpu-logs}
export WORK=${GPUVAL_WORK:-/tmp/gpuval}
export WHEELS=${WHEELS:-$ROOT/.whl}
export WHEEL_SITE=${WHEEL_SITE:-/tmp/site}
export FP_SITE=${FP_SITE:-$ROOT/build/gpu-site}
export FP_BUILD=${FP_BUILD:-$ROOT/build/gpu-build}
export SWEEP_SIZES=${SWEEP_SIZES:-32 64}
export SWEEP_OPS=${SWEEP_OPS:-parallel_forward_project parallel_back_project cone_forward_project cone_back_project parallel_recon}
export SWEEP_RUNS=${SWEEP_RUNS:-2}
export GPUVAL_FORCE=${GPUVAL_FORCE:-0}
export PYTHONPATH="$FP_SITE:$WHEEL_SITE${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg
LOGS=$WORK/logs
SKIP=200   # a step's exit status for "skipped"; the reason is in $WORK/status/STEP

skip() { echo "$1" > "$WORK/status/$STEP"; echo "SKIPPED: $1"; exit "$SKIP"; }
note() { echo "$1" >> "$WORK/notes/$STEP"; echo "$1"; }
has_gpu() { [ "$(cat "$WORK/has_gpu" 2>/dev/null)" = 1 ]; }
need_gpu() { has_gpu || [ "$GPUVAL_FORCE" = 1 ] || skip "no GPU"; }
find_ncu() {
  command -v ncu 2>/dev/null && return
  local c
  for c in /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu; do
    [ -x "$c" ] && { echo "$c"; return; }
  done
  return 1
}
fp() { (cd "$WORK" && "$PY" -m fpgaprof "$@"); }   # outside the checkout: the installed package
fp_installed() { (cd "$WORK" && "$PY" -c "import fpgaprof._core" 2>/dev/null); }
need_fp() { fp_installed || skip "fpgaprof is not installed (the build step failed or did not run)"; }
# Copies $1 to $OUT/$2 unless it is over the device tool's 16 MiB per file.
to_out() {
  local size
  size=$(stat -c %s "$1" 2>/dev/null) || { note "$1 was not written"; return 1; }
  if [ "$size" -gt $((15 * 1024 * 1024)) ]; then
    note "$2 not returned: $size bytes (over 15 MiB); left in $1"
    return 1
  fi
  cp "$1" "$OUT/$2" && note "$2: $size bytes"
}

# --------------------------------------------------------------------------------------- steps

step_env() {
  date -u; uname -a; echo "cores: $(nproc)"; free -g | head -2; df -h /tmp . | tail -n +1
  echo "--- nvidia-smi"
  if command -v nvidia-smi >/dev/null; then
    timeout 60 nvidia-smi
    timeout 30 nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.sm,clocks.max.sm,compute_cap --format=csv
    timeout 30 nvidia-smi --query-gpu=pci.bus_id,pcie.link.gen.max,pcie.link.width.max,pcie.link.gen.gpumax,pcie.link.width.current,pcie.link.gen.current --format=csv
  else
    echo "nvidia-smi: not found"
  fi
  grep -i RestrictProfiling /proc/driver/nvidia/params 2>/dev/null || echo "(no /proc/driver/nvidia/params)"
  echo "--- python"
  command -v "$PY"; "$PY" -c "import sys; print(sys.version, sys.executable)"
  "$PY" -m pip list 2>/dev/null | grep -iE '^(jax|jaxlib|jax-cuda13-pjrt|jax-cuda13-plugin|numpy|pybind11|scikit-build-core|nvidia-cuda-cupti|nvidia-nvtx|pytest|pytest-timeout|cmake|ninja|mbirjax|nlohmann-json) '
  echo "--- jax devices"
  timeout 120 "$PY" -c "import jax; print('jax', jax.__version__, jax.default_backend(), jax.devices())"
  local gpu
  gpu=$(timeout 120 "$PY" -c "import jax; print(int(jax.default_backend() == 'gpu'))" 2>/dev/null | tail -n 1)
  [ "$gpu" = 1 ] || gpu=0
  echo "$gpu" > "$WORK/has_gpu"
  echo "GPU visible to JAX: $gpu"
  echo "--- tools"
  local ncu
  if ncu=$(find_ncu); then echo "ncu: $ncu"; timeout 60 "$ncu" --version; else echo "ncu: not found"; fi
  command -v nvcc >/dev/null && nvcc --version | tail -n 2 || echo "nvcc: not on PATH"
  cmake --version 2>/dev/null | head -n 1 || "$PY" -m cmake --version 2>/dev/null | head -n 1 || echo "cmake: not found"
  ninja --version 2>/dev/null || echo "ninja: not on PATH"
  c++ --version 2>/dev/null | head -n 1 || echo "c++: not found"
  echo "--- build headers and CUPTI (what the build step needs)"
  "$PY" -c "import sysconfig, os; p = os.path.join(sysconfig.get_paths()['include'], 'Python.h'); print('Python.h:', p if os.path.exists(p) else 'MISSING (' + p + ')')"
  local h
  for h in /usr/include/zlib.h /usr/local/include/zlib.h; do [ -f "$h" ] && echo "zlib.h: $h"; done
  ls /usr/include/nlohmann/json.hpp 2>/dev/null || echo "nlohmann/json.hpp: not in /usr/include (the nlohmann-json wheel's headers are used)"
  ls -d /usr/local/cuda*/include/cupti.h /usr/local/cuda*/extras/CUPTI/include/cupti.h /usr/local/cuda*/include/nvtx3 2>/dev/null
  ldconfig -p 2>/dev/null | grep -E 'libcupti|libcuda\.so|libz\.so' || true
  find / -xdev -name 'libcupti.so*' -not -path '*/proc/*' 2>/dev/null | head -n 8
  [ "$gpu" = 1 ] || [ "$GPUVAL_FORCE" = 1 ] || echo "NOTE: no GPU: the GPU-only steps (counters, ncu, calibrate, sweep) will be skipped"
}

step_wheels() {
  compgen -G "$WHEELS/*.whl" >/dev/null || skip "no wheels in $WHEELS (run scripts/gpu_wheels.sh here and carry .whl)"
  "$PY" -c "import sys; sys.exit(sys.version_info[:2] != (3, 12))" \
    || skip "the wheels are for CPython 3.12; $PY is $("$PY" -c 'import sys; print(sys.version.split()[0])')"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$WHEEL_SITE" "$WHEELS"/*.whl || return 1
  ls "$WHEEL_SITE"
  # As examples/mbirjax_sweep.py does: easygui (a Tk GUI) replaced by an empty module if it
  # cannot be imported (no Tk, no display).
  (cd "$WORK" && "$PY" -c "
import sys, types, importlib.metadata as md
try:
    import easygui
except Exception:
    sys.modules['easygui'] = types.ModuleType('easygui')
    print('easygui stubbed (as the sweep does)')
import nlohmann_json, mbirjax
print('mbirjax', md.version('mbirjax'), 'and nlohmann_json import')")
}

source_hash() {
  (cd "$ROOT" && find cpp cmake python CMakeLists.txt pyproject.toml -type f ! -name '*.pyc' \
     ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}

step_build() {
  local hash args=""
  hash=$(source_hash)
  if [ "$(cat "$FP_SITE/.gpuval-stamp" 2>/dev/null)" = "$hash" ] && fp_installed; then
    echo "fpgaprof already built from these sources ($hash) in $FP_SITE: reused"
    return 0
  fi
  if [ ! -f /usr/include/zlib.h ] && [ ! -f /usr/local/include/zlib.h ]; then
    local deb libz
    deb=$(compgen -G "$WHEELS/deb/zlib1g-dev_*_amd64.deb" | head -n 1)
    libz=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
    if [ -n "$deb" ] && [ -n "$libz" ]; then
      rm -rf /tmp/zlibdev && dpkg -x "$deb" /tmp/zlibdev
      args="-DZLIB_INCLUDE_DIR=/tmp/zlibdev/usr/include -DZLIB_LIBRARY=$libz"
      note "no zlib.h on this machine: using the carried zlib1g-dev headers with $libz"
    else
      note "no zlib.h and no carried zlib1g-dev (.whl/deb) or libz.so.1: the build will fail"
    fi
  fi
  export CMAKE_ARGS="${CMAKE_ARGS:-} $args"
  export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
  # A failed build must not leave an older fpgaprof for the later steps to test.
  rm -rf "$FP_SITE.new" "$FP_SITE"
  local t0=$SECONDS
  "$PY" -m pip install -v --no-build-isolation --no-deps --no-index --no-cache-dir \
    --target "$FP_SITE.new" -C build-dir="$FP_BUILD" "$ROOT" || return 1
  mv "$FP_SITE.new" "$FP_SITE" && echo "$hash" > "$FP_SITE/.gpuval-stamp"
  note "built in $((SECONDS - t0)) s with CMAKE_BUILD_PARALLEL_LEVEL=$CMAKE_BUILD_PARALLEL_LEVEL"
  (cd "$WORK" && "$PY" -c "import fpgaprof; print('fpgaprof', getattr(fpgaprof, '__version__', '?'), fpgaprof.__file__)")
}

step_devices() {
  need_fp
  fp devices
}

step_counters() {
  need_fp
  need_gpu
  local rc
  fp counters > "$WORK/counters.out" 2>&1
  rc=$?
  cat "$WORK/counters.out"
  if [ "$rc" = 2 ] && grep -q "invalid choice" "$WORK/counters.out"; then
    skip "this fpgaprof has no 'counters' command"
  fi
  return "$rc"
}

step_pytest() {
  need_fp
  local opts=()
  "$PY" -c "import pytest_timeout" 2>/dev/null && opts+=(--timeout=240)
  (cd "$WORK" && "$PY" -m pytest -v -rA -p no:cacheprovider -c "$ROOT/pyproject.toml" \
     --rootdir "$ROOT" -s --junitxml="$LOGS/pytest.xml" ${opts[@]+"${opts[@]}"} "$ROOT/tests/gpu")
}

step_ncu() {
  need_fp
  need_gpu
  local per=$(( (STEP_LIMIT - 20) / 3 ))
  [ "$per" -gt 200 ] && per=200
  "$PY" "$ROOT/tests/gpu/ncu_crosscheck.py" all --out "$LOGS/ncu" --timeout "$per"
  local rc=$?
  to_out "$LOGS/ncu/ncu_compare.txt" ncu_compare.txt
  return "$rc"
}

step_calibrate() {
  need_fp
  need_gpu
  fp calibrate
}

step_sweep() {
  need_fp
  need_gpu
  "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('mbirjax') is None)" \
    || skip "mbirjax is not installed (carry .whl: scripts/gpu_wheels.sh)"
  local dir="$WORK/sweep" rc inner=$((STEP_LIMIT - 45))
  # Its limit plus the 30 s kill grace must end inside the step's, or nothing is copied back.
  [ "$STEP_LIMIT" -lt 90 ] && skip "out of time: the sweep needs 90 s, ${STEP_LIMIT} s left"
  rm -rf "$dir"
  # Its own limit, inside the step's: on SIGTERM the traced program saves its trace and
  # `fpgaprof run` still writes the reports, with time left here to copy them.
  # shellcheck disable=SC2086  # the sizes and operations are word lists
  timeout -k 30 "$inner" "$PY" -m fpgaprof run -o "$dir" -- "$PY" "$ROOT/examples/mbirjax_sweep.py" \
    --sizes $SWEEP_SIZES --runs "$SWEEP_RUNS" --operations $SWEEP_OPS --no-aot --output "$dir/mbirjax"
  rc=$?
  if [ "$rc" = 124 ]; then
    note "the sweep ran out of its ${inner} s and was stopped (SIGTERM; exit 3 here); its trace is kept"
    rc=3
  fi
  ls -la "$dir" "$dir/mbirjax" 2>/dev/null
  to_out "$dir/trace.fpgaprof" trace.fpgaprof
  to_out "$dir/summary.json" summary.json
  local f
  for f in scaling.txt scaling.csv summary.json; do
    [ -f "$dir/mbirjax/$f" ] && cp "$dir/mbirjax/$f" "$LOGS/sweep_mbirjax_$f"
  done
  return "$rc"
}

# ------------------------------------------------------------------------------------- driver

if [ "${1:-}" = "__step" ]; then   # one step, run by the driver below under `timeout`
  STEP=$2
  "step_$STEP"
  exit $?
fi

ORDER=(env wheels build devices counters pytest ncu calibrate sweep)
declare -A CAP=([env]=150 [wheels]=60 [build]=360 [devices]=60 [counters]=60 [pytest]=300
                [ncu]=300 [calibrate]=180 [sweep]=300)
declare -A WANT=()
if [ $# -eq 0 ] || [ "$1" = all ]; then
  for s in "${ORDER[@]}"; do WANT[$s]=1; done
else
  for s in "$@"; do
    [ -n "${CAP[$s]:-}" ] || { echo "run_on_gpu.sh: unknown step '$s' (steps: all ${ORDER[*]})" >&2; exit 2; }
    WANT[$s]=1
  done
  WANT[env]=1
  for s in devices counters pytest ncu calibrate sweep; do
    [ -n "${WANT[$s]:-}" ] && { WANT[wheels]=1; WANT[build]=1; }
  done
fi

BUDGET=${GPUVAL_BUDGET_S:-540}
RESERVE=15   # seconds kept for packing the logs at the end
T0=$SECONDS
mkdir -p "$OUT" "$LOGS"
rm -rf "$WORK/status" "$WORK/notes" "${LOGS:?}"/*
for f in summary.txt logs.tgz pytest.log ncu_compare.txt trace.fpgaprof summary.json; do
  rm -f "${OUT:?}/$f"
done
mkdir -p "$WORK/status" "$WORK/notes"
ROWS=()
FAILED=0
FAILED_STEPS=()

pack() {
  {
    echo "fpgaprof GPU validation: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(hostname), $((SECONDS - T0)) s"
    echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || echo none)"
    printf '%-10s %-60s %5s %6s  %s\n' step status rc secs log
    printf '%s\n' "${ROWS[@]}"
    for s in "${ORDER[@]}"; do
      [ -s "$WORK/notes/$s" ] && sed "s/^/  $s: /" "$WORK/notes/$s"
    done
    [ -f "$LOGS/pytest.log" ] && echo "pytest: $(grep -E '^=+ .*(passed|failed|skipped|error).* =+$' "$LOGS/pytest.log" | tail -n 1)"
    [ -f "$LOGS/ncu/ncu_compare.txt" ] && grep -E '^  (PASS|FAIL|N/A)|^RESULT' "$LOGS/ncu/ncu_compare.txt"
    for s in "${FAILED_STEPS[@]}"; do
      echo "--- last lines of logs/$s.log (FAILED)"
      tail -n 15 "$LOGS/$s.log"
    done
  } > "$WORK/summary.txt"
  cp "$WORK/summary.txt" "$OUT/summary.txt"
  # Small files only: the hlo dumps and traces of the sweep stay out.
  (cd "$WORK" && find logs summary.txt -type f -size -2M -print0 | tar czf "$OUT/logs.tgz" --null -T -) 2>/dev/null
}

for s in "${ORDER[@]}"; do
  [ -n "${WANT[$s]:-}" ] || continue
  left=$((BUDGET - (SECONDS - T0) - RESERVE))
  limit=${CAP[$s]}
  cap_var=GPUVAL_CAP_$s
  [ -n "${!cap_var:-}" ] && limit=${!cap_var}
  [ "$limit" -gt "$left" ] && limit=$left
  log="logs/$s.log"
  if [ "$left" -lt 20 ]; then
    ROWS+=("$(printf '%-10s %-60s %5s %6s  %s' "$s" "skipped: out of time (GPUVAL_BUDGET_S=$BUDGET)" - 0 -)")
    continue
  fi
  echo "=== $s (limit ${limit} s; log $WORK/$log)"
  t0=$SECONDS
  STEP_LIMIT=$limit timeout -k 10 "$limit" bash "$SELF" __step "$s" > "$WORK/$log" 2>&1
  rc=$?
  secs=$((SECONDS - t0))
  if [ "$rc" = "$SKIP" ]; then
    status="skipped: $(head -c 60 "$WORK/status/$s" 2>/dev/null)"
  elif [ "$rc" = 0 ]; then
    status=ok
  elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    status="FAILED: timed out after ${limit} s"; FAILED=1; FAILED_STEPS+=("$s")
  else
    status=FAILED; FAILED=1; FAILED_STEPS+=("$s")
  fi
  [ "$s" = pytest ] && cp "$WORK/$log" "$OUT/pytest.log" 2>/dev/null
  case "$status" in FAILED*) lines=25 ;; *) lines=5 ;; esac
  tail -n "$lines" "$WORK/$log" | sed 's/^/    /'
  ROWS+=("$(printf '%-10s %-60s %5s %6s  %s' "$s" "$status" "$rc" "$secs" "$log")")
  pack
done
pack
echo
cat "$WORK/summary.txt"
echo "outputs in $OUT: $(cd "$OUT" && find . -maxdepth 1 -type f -printf '%f (%s bytes) ' | sort)"
exit "$FAILED"
