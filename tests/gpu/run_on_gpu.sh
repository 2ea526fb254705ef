#!/usr/bin/env bash
# GPU validation of fpgaprof on a CUDA machine without network (docs/gpu-validation.md): every
# check that needs a real GPU, as steps run in this order (each logged, each under its own time
# limit, one failing does not stop the others; a summary table of step -> status, rc, seconds at
# the end):
#   env          machine, driver, GPU, Python, JAX devices, ncu/nvcc/cmake versions, build headers
#   wheels       pip-installs the wheels in .whl/ into $WHEEL_SITE (scripts/gpu_wheels.sh made
#                them; MBIRJAX 0.6.17.1 goes to $WHEEL_SITE06, used when MBIRJAX_LINE=0.6)
#   build        pip install --no-build-isolation --no-deps --target $FP_SITE . (reused while
#                the sources are unchanged; also from a carried .whl/fpgaprof-site-HASH.tgz,
#                which a fresh build writes to $OUT)
#   devices      fpgaprof devices              counters     fpgaprof counters (the chip's plan)
#   cupti12      MBIRJAX projections (examples/mbirjax_forward.py, 64^3) traced through CUDA
#                12.8's libcupti (.whl/cupti12/: the nvidia-cuda-cupti-cu12 wheel, as
#                jax[cuda12] brings it) and through CUDA 13's; tests/gpu/compare_cupti_runs.py
#                checks the same kernels, copies and attribution; both traces in cupti12.tgz
#   pallas128    examples/mbirjax_forward.py at 128^3: Pallas projectors on and off, each without
#                and with counters; four traces in pallas128.tgz
#   pytest       pytest tests/gpu -v           ncu          tests/gpu/ncu_crosscheck.py all
#   conecounters tests/gpu/cone_counters.py: counters on MBIRJAX cone-beam projection, 64^3
#   calibrate    fpgaprof calibrate (in no group: name it, or run all)
#   energy       pytest tests/gpu/test_gpu_energy.py: a 4 s matmul loop's NVML energy and power
#                against nvidia-smi's power readings taken during it
#   overhead     bench/tracing_overhead.py: no profiler / fpgaprof / fpgaprof without the NVML
#                power sampler / jax.profiler / counters, alternating; kernel-dense loop and
#                MBIRJAX forward_project 128^3
#   sweep64      fpgaprof run -- examples/mbirjax_sweep.py at 64^3, the 28 operations with
#                MBIRJAX's Pallas projectors (its default on H100/H200/A100), then the
#                projector operations with MBIRJAX_DISABLE_PALLAS=1
#   sweep128     the same at 128^3
#   sweep256     the projectors and recon at 256^3, Pallas on and off
#   sweepfirst   the 28 operations at 64^3 (3 runs; 60 % of the step), then at 256^3 (1 run) as far as time
#                allows, both with MBIRJAX's default projectors, the operations in the order of
#                the user's CPU ranking at 256^3 (RANKED_OPS)
#   sweep        one sweep as SWEEP_SIZES, SWEEP_OPS, SWEEP_RUNS, SWEEP_PALLAS (on/off) say
# Groups, each sized to end within GPUVAL_BUDGET_S (450 s):
#   first    = env wheels build devices cupti12 sweepfirst (the first run on a fresh machine:
#              the user's libcupti, every operation, 256^3)
#   perf     = env wheels build overhead energy (the tracing overhead; GPU energy against nvidia-smi)
#   sizes    = env wheels build sweep128 sweep256
#   validate = env wheels build devices counters pytest ncu conecounters
#   fixtures = env wheels build devices pallas128 pytest conecounters
# Usage: tests/gpu/run_on_gpu.sh [all | GROUP | STEP...]   (env, wheels, build added when needed)
# Each step runs with GPUVAL_STEP_TAG set in its environment; when it ends (or its limit ends it),
# every process still carrying that tag (a traced program that caught SIGTERM, a tool in a
# session of its own) gets SIGTERM, 15 s, then SIGKILL, so no step leaves the GPU held.
# Env: PYTHON (python3), OUT (./gpu-logs), GPUVAL_BUDGET_S (450: the whole run's limit; a step
#   that would not fit is skipped), GPUVAL_CAP_<step> (a step's own limit, s), GPUVAL_FORCE=1
#   (run the GPU-only steps without a GPU too), SWEEP_RUNS (3), SWEEP_SIZES ("64"), SWEEP_OPS,
#   SWEEP_PALLAS (on), OVERHEAD_ARGS (extra arguments), MBIRJAX_LINE (0.7; 0.6 for 0.6.17.1),
#   WHEELS (.whl), WHEEL_SITE (/tmp/site), WHEEL_SITE06 (/tmp/site06), FP_SITE (build/gpu-site),
#   FP_BUILD (build/gpu-build), GPUVAL_WORK (/tmp/gpuval).
# $OUT receives at most 8 files and 60 MiB: summary.txt, logs.tgz (every log and small result
# under 2 MiB), and per step
# its results (pytest.log, ncu_compare.txt, overhead.json, cone_counters_64.fpgaprof,
# sweep<N>_pallas.fpgaprof, sweep<N>_xla.fpgaprof, pallas128.tgz, cupti12.tgz,
# fpgaprof-site-HASH.tgz). A file over 15 MiB
# comes back in 15 MiB parts NAME.partNN (cat NAME.part* > NAME) while fewer than 8 files are out.
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
export WHEEL_SITE06=${WHEEL_SITE06:-/tmp/site06}
export MBIRJAX_LINE=${MBIRJAX_LINE:-0.7}
# examples/mbirjax_sweep.py --list-operations: all 28, and those that run a projector (the ones
# MBIRJAX 0.7's Pallas kernels change; the rest run the same code either way).
ALL_OPS="parallel_forward_project parallel_back_project parallel_sparse_forward_project
  parallel_sparse_back_project parallel_compute_hessian_diagonal parallel_direct_filter
  parallel_fbp_filter parallel_fbp_recon parallel_direct_recon parallel_recon parallel_prox_map
  cone_forward_project cone_back_project cone_sparse_forward_project cone_sparse_back_project
  cone_compute_hessian_diagonal cone_direct_filter cone_fdk_filter cone_fdk_recon cone_direct_recon
  cone_recon cone_prox_map gen_weights gen_weights_mar qggmrf_denoise median_filter3d
  gen_pixel_partition shepp_logan_phantom"
PROJECTOR_OPS="parallel_forward_project parallel_back_project parallel_sparse_forward_project
  parallel_sparse_back_project parallel_compute_hessian_diagonal parallel_fbp_recon
  parallel_direct_recon parallel_recon parallel_prox_map cone_forward_project cone_back_project
  cone_sparse_forward_project cone_sparse_back_project cone_compute_hessian_diagonal cone_fdk_recon
  cone_direct_recon cone_recon cone_prox_map gen_weights_mar"
BIG_OPS="parallel_forward_project parallel_back_project cone_forward_project cone_back_project
  parallel_recon cone_recon"
# ALL_OPS in the order of the user's own ranking at 256^3 (CPU backend; docs/mbirjax-findings.md):
# its ten first, the rest after them as ALL_OPS lists them.
RANKED_TOP=(cone_recon median_filter3d cone_compute_hessian_diagonal cone_back_project cone_fdk_recon
  cone_forward_project parallel_recon parallel_forward_project parallel_back_project parallel_fbp_recon)
RANKED_OPS="${RANKED_TOP[*]}"
for o in $ALL_OPS; do
  case " ${RANKED_TOP[*]} " in *" $o "*) ;; *) RANKED_OPS+=" $o" ;; esac
done
export SWEEP_SIZES=${SWEEP_SIZES:-64}
export SWEEP_OPS=${SWEEP_OPS:-$ALL_OPS}
export SWEEP_RUNS=${SWEEP_RUNS:-3}
export SWEEP_PALLAS=${SWEEP_PALLAS:-on}
export GPUVAL_FORCE=${GPUVAL_FORCE:-0}
if [ "$MBIRJAX_LINE" = 0.6 ]; then
  export PYTHONPATH="$FP_SITE:$WHEEL_SITE06:$WHEEL_SITE${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$FP_SITE:$WHEEL_SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
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
# Copies $1 to $OUT/$2. Over 15 MiB it goes in 15 MiB parts $2.partNN. $OUT keeps at most 8
# files (summary.txt and logs.tgz, written last, counted) and 60 MiB (4 MiB of it kept for
# those two); a file that would pass either limit stays where it is, with a note.
to_out() {
  local size parts=1 have used
  size=$(stat -c %s "$1" 2>/dev/null) || { note "$1 was not written"; return 1; }
  [ "$size" -gt $((15 * 1024 * 1024)) ] && parts=$(( (size + 15 * 1024 * 1024 - 1) / (15 * 1024 * 1024) ))
  have=$(find "$OUT" -maxdepth 1 -type f ! -name summary.txt ! -name logs.tgz | wc -l)
  used=$(find "$OUT" -maxdepth 1 -type f ! -name summary.txt ! -name logs.tgz -printf '%s\n' | awk '{s += $1} END {print s + 0}')
  if [ $((have + parts + 2)) -gt 8 ] || [ $((used + size)) -gt $((56 * 1024 * 1024)) ]; then
    note "$2 not returned: $size bytes in $parts file(s), and $OUT already has $have files, $used bytes; left in $1"
    return 1
  fi
  if [ "$parts" = 1 ]; then
    cp "$1" "$OUT/$2" && note "$2: $size bytes"
    return
  fi
  split -b 15M -d "$1" "$OUT/$2.part" && note "$2: $size bytes in $parts parts (cat $2.part* > $2)"
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
  [ "$gpu" = 1 ] || [ "$GPUVAL_FORCE" = 1 ] || echo "NOTE: no GPU: the GPU-only steps (counters, ncu, conecounters, calibrate, overhead, sweep*) will be skipped"
}

step_wheels() {
  compgen -G "$WHEELS/*.whl" >/dev/null || skip "no wheels in $WHEELS (make them with scripts/gpu_wheels.sh where PyPI is reachable)"
  "$PY" -c "import sys; sys.exit(sys.version_info[:2] != (3, 12))" \
    || skip "the wheels are for CPython 3.12; $PY is $("$PY" -c 'import sys; print(sys.version.split()[0])')"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$WHEEL_SITE" "$WHEELS"/*.whl || return 1
  ls "$WHEEL_SITE"
  if compgen -G "$WHEELS/mbirjax06/*.whl" >/dev/null; then
    # The 0.6 line's own mbirjax only; its other needs are the 0.7 line's, in $WHEEL_SITE.
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target "$WHEEL_SITE06" "$WHEELS"/mbirjax06/*.whl || return 1
  fi
  # As examples/mbirjax_sweep.py does: easygui (a Tk GUI) replaced by an empty module if it
  # cannot be imported (no Tk, no display).
  local check="
import sys, types, importlib.metadata as md
try:
    import easygui
except Exception:
    sys.modules['easygui'] = types.ModuleType('easygui')
import nlohmann_json, mbirjax
print('mbirjax', md.version('mbirjax'), 'imports (with nlohmann_json), from', mbirjax.__file__)"
  (cd "$WORK" && PYTHONPATH="$WHEEL_SITE" "$PY" -c "$check") || return 1
  if [ -d "$WHEEL_SITE06" ]; then
    (cd "$WORK" && PYTHONPATH="$WHEEL_SITE06:$WHEEL_SITE" "$PY" -c "$check") || return 1
  fi
  echo "MBIRJAX_LINE=$MBIRJAX_LINE: the steps use $("$PY" -c 'import importlib.metadata as md; print("mbirjax", md.version("mbirjax"))' 2>/dev/null)"
}

source_hash() {
  (cd "$ROOT" && find cpp cmake python CMakeLists.txt pyproject.toml -type f ! -name '*.pyc' \
     ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}

step_build() {
  local hash args="" tgz
  hash=$(source_hash)
  if [ "$(cat "$FP_SITE/.gpuval-stamp" 2>/dev/null)" = "$hash" ] && fp_installed; then
    echo "fpgaprof already built from these sources ($hash) in $FP_SITE: reused"
    return 0
  fi
  tgz="$WHEELS/fpgaprof-site-$hash.tgz"
  if [ -f "$tgz" ]; then
    rm -rf "$FP_SITE" && mkdir -p "$FP_SITE" && tar xzf "$tgz" -C "$FP_SITE" \
      && echo "$hash" > "$FP_SITE/.gpuval-stamp"
    if fp_installed; then
      note "fpgaprof from the carried $(basename "$tgz") (built earlier from these sources): no build"
      (cd "$WORK" && "$PY" -c "import fpgaprof; print('fpgaprof', fpgaprof.__version__, fpgaprof.__file__)")
      return 0
    fi
    note "the carried $(basename "$tgz") does not import here: building"
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
  # The built package, for a later run on a fresh machine (put it into .whl/: no build then).
  tar czf "$WORK/fpgaprof-site-$hash.tgz" -C "$FP_SITE" . && to_out "$WORK/fpgaprof-site-$hash.tgz" "fpgaprof-site-$hash.tgz"
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

need_mbirjax() {
  "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('mbirjax') is None)" \
    || skip "mbirjax is not installed (its wheels: scripts/gpu_wheels.sh)"
}

step_conecounters() {
  need_fp
  need_gpu
  need_mbirjax
  local n=${CONE_SIZE:-64} rc t0=$SECONDS
  # Each run under a limit of its own (what is left of the step, less 15 s), so that the step
  # still returns the trace the program saves when that limit stops it.
  (cd "$WORK" && timeout -k 10 $((STEP_LIMIT - 15)) "$PY" "$ROOT/tests/gpu/cone_counters.py" --size "$n" \
     --out "$WORK/cone_counters_$n.fpgaprof") | tee "$LOGS/cone_counters_$n.out"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 77 ] && skip "cone_counters.py: no GPU or no mbirjax"
  [ "$rc" = 2 ] && skip "the driver restricts hardware counters to admin users"
  to_out "$WORK/cone_counters_$n.fpgaprof" "cone_counters_$n.fpgaprof"
  # The XLA projectors too, when MBIRJAX's Pallas kernels ran above and there is time.
  if grep -q '"fwd_pallas": true\|"back_pallas": true' "$LOGS/cone_counters_$n.out" \
     && [ $((STEP_LIMIT - (SECONDS - t0))) -gt 120 ]; then
    echo "--- the same with MBIRJAX_DISABLE_PALLAS=1 (XLA's projector kernels)"
    (cd "$WORK" && MBIRJAX_DISABLE_PALLAS=1 timeout -k 10 $((STEP_LIMIT - (SECONDS - t0) - 15)) \
       "$PY" "$ROOT/tests/gpu/cone_counters.py" --size "$n" \
       --out "$WORK/cone_counters_${n}_xla.fpgaprof") | tee "$LOGS/cone_counters_${n}_xla.out"
    local rc2=${PIPESTATUS[0]}
    to_out "$WORK/cone_counters_${n}_xla.fpgaprof" "cone_counters_${n}_xla.fpgaprof"
    [ "$rc" = 0 ] && rc=$rc2
  fi
  return "$rc"
}

# MBIRJAX forward and back projection (examples/mbirjax_forward.py, parallel beam, PALLAS_SIZE^3,
# 128 by default) with MBIRJAX's Pallas projectors on and off (MBIRJAX_DISABLE_PALLAS=1), each
# traced without and with counters (XLA_PYTHON_CLIENT_PREALLOCATE=false for those: kernel replay
# with JAX's preallocated pool is very slow). The four traces come back in one pallas<N>.tgz as
# mbirjax073_parallel_<N>_{pallas,xla}[_counters].fpgaprof. The XLA runs are skipped when the
# first run did not use the Pallas kernels (they would repeat it).
step_pallas128() {
  need_fp
  need_gpu
  need_mbirjax
  local n=${PALLAS_SIZE:-128} t0=$SECONDS rc=0 names=() pallas counters name limit left
  local tag
  tag=$("$PY" -c 'import importlib.metadata as md; print(md.version("mbirjax").replace(".", "")[:3])')
  for counters in no yes; do
    for pallas in on off; do
      name="mbirjax${tag}_parallel_${n}_$([ "$pallas" = on ] && echo pallas || echo xla)"
      [ "$counters" = yes ] && name="${name}_counters"
      if [ "$pallas" = off ] && ! grep -q "projector kernels: Pallas" "$LOGS/mbirjax${tag}_parallel_${n}_pallas.out" 2>/dev/null; then
        note "$name skipped: the Pallas kernels were not live in the first run (it ran XLA's)"
        continue
      fi
      left=$((STEP_LIMIT - (SECONDS - t0) - 15))
      # The counted runs are the slow ones (0.3 s per kernel replayed): the uncounted ones get
      # at most 110 s each, the first counted one at most 60 % of what is left.
      limit=$left
      [ "$counters" = no ] && [ "$limit" -gt 110 ] && limit=110
      [ "$counters" = yes ] && [ "$pallas" = on ] && limit=$((left * 60 / 100))
      if [ "$limit" -lt 40 ]; then note "$name skipped: ${limit} s left"; rc=3; continue; fi
      local envs=() args=()
      [ "$pallas" = off ] && envs+=(MBIRJAX_DISABLE_PALLAS=1)
      [ "$counters" = yes ] && { envs+=(XLA_PYTHON_CLIENT_PREALLOCATE=false); args+=(--counters); }
      echo "--- $name (limit ${limit} s): ${envs[*]} examples/mbirjax_forward.py --size $n ${args[*]}"
      local t1=$SECONDS r
      (cd "$WORK" && env ${envs[@]+"${envs[@]}"} timeout -k 10 "$limit" "$PY" "$ROOT/examples/mbirjax_forward.py" \
         --size "$n" --out "$WORK/$name.fpgaprof" ${args[@]+"${args[@]}"}) > "$LOGS/$name.out" 2>&1
      r=$?
      tail -n 40 "$LOGS/$name.out"
      note "$name: $((SECONDS - t1)) s, exit $r, $(stat -c %s "$WORK/$name.fpgaprof" 2>/dev/null || echo no) trace bytes"
      [ "$r" = 0 ] || rc=1
      [ -f "$WORK/$name.fpgaprof" ] && names+=("$name.fpgaprof")
    done
  done
  if [ "${#names[@]}" -gt 0 ]; then
    tar czf "$WORK/pallas$n.tgz" -C "$WORK" "${names[@]}" && to_out "$WORK/pallas$n.tgz" "pallas$n.tgz"
  fi
  return "$rc"
}

step_energy() {
  need_fp
  need_gpu
  local opts=()
  "$PY" -c "import pytest_timeout" 2>/dev/null && opts+=(--timeout=$((STEP_LIMIT - 10)))
  (cd "$WORK" && timeout -k 10 $((STEP_LIMIT - 5)) "$PY" -m pytest -v -rA -p no:cacheprovider \
     -c "$ROOT/pyproject.toml" --rootdir "$ROOT" -s --junitxml="$LOGS/energy.xml" ${opts[@]+"${opts[@]}"} \
     "$ROOT/tests/gpu/test_gpu_energy.py")
}

step_calibrate() {
  need_fp
  need_gpu
  fp calibrate
}

step_overhead() {
  need_fp
  need_gpu
  # fpgaprof_no_power too: fpgaprof's row against it is the NVML power sampler's own cost
  local rc args=(--modes none,fpgaprof,fpgaprof_no_power,jax,fpgaprof_counters)
  "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('mbirjax') is None)" \
    || { args+=(--workloads dense); note "mbirjax is not installed: the kernel-dense loop only"; }
  # shellcheck disable=SC2086  # OVERHEAD_ARGS is a word list
  # --max-seconds stops it between rounds; the timeout, 15 s later, stops whatever round runs
  # then (the JSON is rewritten after each workload, so what was measured comes back).
  (cd "$WORK" && timeout -k 10 $((STEP_LIMIT - 15)) "$PY" "$ROOT/bench/tracing_overhead.py" \
     --json "$WORK/overhead.json" --keep "$WORK/overhead_outputs" --max-seconds $((STEP_LIMIT - 30)) \
     ${args[@]+"${args[@]}"} ${OVERHEAD_ARGS:-})
  rc=$?
  [ "$rc" = 124 ] && note "tracing_overhead.py ran out of its $((STEP_LIMIT - 15)) s and was stopped"
  [ "$rc" = 77 ] && skip "tracing_overhead.py: no GPU"
  to_out "$WORK/overhead.json" overhead.json
  ls -la "$WORK/overhead_outputs" 2>/dev/null
  return "$rc"
}

# One `fpgaprof run` of the sweep: $1 name (its trace comes back as $1.fpgaprof), $2 on|off
# (MBIRJAX's Pallas projectors; off: MBIRJAX_DISABLE_PALLAS=1), $3 sizes, $4 operations, $5 its
# time limit in seconds. The sweep itself starts no operation past the limit less a fifth (at
# least 25 s, for `fpgaprof run`'s reports), or when the longest one at its size would not fit,
# and ends normally listing those as not run. Should one operation run past the limit, the
# program gets SIGTERM: it saves its trace once its main thread is back in Python (within 20 s,
# FPGAPROF_SIGNAL_GRACE_S; else it ends unsaved), `fpgaprof run` still writes summary.json, and
# the step copies what there is (exit 3). Exit 4: not started, under 60 s left.
run_sweep() {
  local name=$1 pallas=$2 sizes=$3 ops=$4 limit=$5 dir="$WORK/$1" rc
  rm -rf "$dir"   # nothing of an earlier invocation's sweep is read as this one's
  if [ "$limit" -lt 60 ]; then
    note "$name not run: ${limit} s left of the step (it needs 60)"
    return 4
  fi
  local pal=()
  [ "$pallas" = off ] && pal=(MBIRJAX_DISABLE_PALLAS=1)
  echo "--- $name: sizes $sizes, Pallas $pallas, $SWEEP_RUNS runs, $(echo "$ops" | wc -w) operations, limit ${limit} s"
  local t0=$SECONDS stop=$((limit - (limit / 5 > 25 ? limit / 5 : 25)))
  # shellcheck disable=SC2086  # the sizes and operations are word lists
  env ${pal[@]+"${pal[@]}"} FPGAPROF_SIGNAL_GRACE_S=20 timeout -k 30 "$limit" "$PY" -m fpgaprof run \
    --no-timeline -o "$dir" -- "$PY" "$ROOT/examples/mbirjax_sweep.py" --sizes $sizes \
    --runs "$SWEEP_RUNS" --operations $ops --no-aot --no-section-reports --max-seconds "$stop" \
    --output "$dir/mbirjax"
  rc=$?
  if [ "$rc" = 124 ]; then
    note "$name ran out of its ${limit} s and was stopped (SIGTERM)"
    rc=3
  fi
  note "$name: $((SECONDS - t0)) s, exit $rc; $(sweep_counts "$dir/mbirjax/summary.json")"
  ls -la "$dir" "$dir/mbirjax" 2>/dev/null
  to_out "$dir/trace.fpgaprof" "$name.fpgaprof"
  if [ -f "$dir/trace.fpgaprof" ]; then  # what committing it would do to tests/data/traces (20 MB in all)
    note "$name.fpgaprof $(du -k "$dir/trace.fpgaprof" | cut -f1) KiB; tests/data/traces holds $(du -ck "$ROOT"/tests/data/traces/*.fpgaprof | tail -n 1 | cut -f1) KiB"
  fi
  [ -f "$dir/summary.json" ] && cp "$dir/summary.json" "$LOGS/${name}_summary.json"
  local f
  for f in scaling.txt scaling.csv summary.json; do
    [ -f "$dir/mbirjax/$f" ] && cp "$dir/mbirjax/$f" "$LOGS/${name}_mbirjax_$f"
  done
  return "$rc"
}

# What the sweep whose summary.json is $1 measured and left out for time, in words.
sweep_counts() {
  "$PY" - "$1" <<'PYEOF'
import json, sys
try:
    s = json.load(open(sys.argv[1]))["sweep"]
    print(f"{len(s['operations'])} (operation, size) pairs measured, {len(s.get('not_run', []))} not run for time")
except (OSError, ValueError, KeyError) as e:
    print(f"no sweep summary ({type(e).__name__})")
PYEOF
}

# Whether the sweep $1 ran MBIRJAX's Pallas kernels (any "pallas_live": true in its summary).
pallas_was_live() {
  "$PY" - "$WORK/$1/mbirjax/summary.json" <<'PYEOF'
import json, sys
def walk(x):
    if isinstance(x, dict):
        return any(v is True for k, v in x.items() if k == "pallas_live") or any(walk(v) for v in x.values())
    return isinstance(x, list) and any(walk(v) for v in x)
try:
    sys.exit(0 if walk(json.load(open(sys.argv[1]))) else 1)
except OSError:
    sys.exit(0)  # no summary (stopped early): assume live, run the XLA sweep too
PYEOF
}

# $1 size, $2 operations with Pallas, $3 operations without: the Pallas sweep gets 60 % of the
# step's time, the XLA sweep the rest (skipped when Pallas was not live: it would repeat it).
sweep_pair() {
  local n=$1 t0=$SECONDS rc rc2
  local budget=$((STEP_LIMIT - 40))
  run_sweep "sweep${n}_pallas" on "$n" "$2" $((budget * 60 / 100))
  rc=$?
  if ! pallas_was_live "sweep${n}_pallas"; then
    note "sweep${n}_xla skipped: MBIRJAX's Pallas kernels were not live in sweep${n}_pallas (it ran XLA's projectors already)"
    return "$rc"
  fi
  run_sweep "sweep${n}_xla" off "$n" "$3" $((budget - (SECONDS - t0)))
  rc2=$?
  [ "$rc2" = 4 ] && rc2=0   # no time left for the XLA half: noted, not a failure of the step
  [ "$rc" = 0 ] && rc=$rc2
  return "$rc"
}

step_sweep64() { need_fp; need_gpu; need_mbirjax; sweep_pair 64 "$ALL_OPS" "$PROJECTOR_OPS"; }
step_sweep128() { need_fp; need_gpu; need_mbirjax; sweep_pair 128 "$ALL_OPS" "$PROJECTOR_OPS"; }
step_sweep256() { need_fp; need_gpu; need_mbirjax; sweep_pair 256 "$BIG_OPS" "$BIG_OPS"; }

# The first sweep on a fresh machine: every operation at 64^3 (SWEEP_RUNS runs; 60 % of the
# step: compiling dominates there, some 6-8 s an operation on an H100), then at 256^3 with one
# run after the warm-up, in the order of the user's ranking, as far as the rest of the step goes
# (a sweep stopped at its limit keeps what it traced). MBIRJAX's default projectors (Pallas on an
# H100/H200/A100).
step_sweepfirst() {
  need_fp
  need_gpu
  need_mbirjax
  local budget=$((STEP_LIMIT - 40)) t0=$SECONDS rc rc2
  run_sweep sweep64_pallas on 64 "$RANKED_OPS" $((budget * 60 / 100))
  rc=$?
  SWEEP_RUNS=1 run_sweep sweep256_pallas on 256 "$RANKED_OPS" $((budget - (SECONDS - t0)))
  rc2=$?
  [ "$rc" = 4 ] && [ "$rc2" = 4 ] && skip "under 60 s left for either sweep"
  [ "$rc" = 4 ] && rc=0   # one half not run for time: noted, not a failure
  [ "$rc2" = 4 ] && rc2=0
  [ "$rc" = 0 ] && rc=$rc2
  return "$rc"
}

step_cupti12() {
  need_fp
  need_gpu
  need_mbirjax
  compgen -G "$WHEELS/cupti12/*.whl" >/dev/null || skip "no CUDA 12 CUPTI wheel in $WHEELS/cupti12 (scripts/gpu_wheels.sh)"
  local site=$WORK/cupti12-site lib n=${CUPTI12_SIZE:-64} rc=0 name limit
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
    "$WHEELS"/cupti12/*.whl || return 1
  lib=$(ls "$site"/nvidia/cuda_cupti/lib/libcupti.so.12* 2>/dev/null | head -n 1)
  [ -n "$lib" ] || { echo "no libcupti.so.12 in $site"; return 1; }
  limit=$(((STEP_LIMIT - 30) / 2))
  # XLA's autotuning off in both runs: it times candidate kernels and may pick others in the
  # second process, which the comparison would count as a CUPTI difference.
  for name in cupti13 cupti12; do
    local envs=(XLA_PYTHON_CLIENT_PREALLOCATE=false "XLA_FLAGS=${XLA_FLAGS:+$XLA_FLAGS }--xla_gpu_autotune_level=0")
    [ "$name" = cupti12 ] && envs+=("FPGAPROF_CUPTI_LIBRARY=$lib")
    echo "--- $name (limit ${limit} s): ${envs[*]} examples/mbirjax_forward.py --size $n"
    # fpgaprof takes its libcupti at its first CUPTI use and keeps it; JAX's CUDA 13 plugin
    # loads libcupti.so.13 when it starts, and a libcupti already loaded wins over a
    # FPGAPROF_CUPTI_LIBRARY file that is not (docs/capture.md, "Loading libcupti"): so
    # fpgaprof probes CUPTI (fpgaprof.devices()) before JAX starts, loading the 12.8 file.
    (cd "$WORK" && env "${envs[@]}" timeout -k 10 "$limit" "$PY" -c \
       'import runpy, sys, fpgaprof; fpgaprof.devices(); sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")' \
       "$ROOT/examples/mbirjax_forward.py" --size "$n" --out "$WORK/$name.fpgaprof") > "$LOGS/$name.out" 2>&1 || rc=1
    tail -n 15 "$LOGS/$name.out"
  done
  (cd "$WORK" && "$PY" "$ROOT/tests/gpu/compare_cupti_runs.py" cupti13.fpgaprof cupti12.fpgaprof) \
    > "$LOGS/cupti12_compare.txt" 2>&1 || rc=1
  cat "$LOGS/cupti12_compare.txt"
  note "$(grep -E '^(A|B|RESULT):' "$LOGS/cupti12_compare.txt" | tr '\n' ' ')"
  (cd "$WORK" && tar czf cupti12.tgz cupti13.fpgaprof cupti12.fpgaprof 2>/dev/null) && to_out "$WORK/cupti12.tgz" cupti12.tgz
  return "$rc"
}

step_sweep() {
  need_fp
  need_gpu
  need_mbirjax
  run_sweep sweep "$SWEEP_PALLAS" "$SWEEP_SIZES" "$SWEEP_OPS" $((STEP_LIMIT - 40))
  local rc=$?
  [ "$rc" = 4 ] && skip "under 60 s left for the sweep"
  return "$rc"
}

# ------------------------------------------------------------------------------------- driver

if [ "${1:-}" = "__step" ]; then   # one step, run by the driver below under `timeout`
  STEP=$2
  "step_$STEP"
  exit $?
fi

ORDER=(env wheels build devices counters cupti12 pallas128 pytest conecounters ncu calibrate overhead
       energy sweepfirst sweep64 sweep128 sweep256 sweep)
declare -A CAP=([env]=150 [wheels]=60 [build]=360 [devices]=60 [counters]=60 [cupti12]=130 [pallas128]=400
                [pytest]=240 [conecounters]=150 [ncu]=300 [calibrate]=180 [overhead]=240 [energy]=90
                [sweepfirst]=400 [sweep64]=300 [sweep128]=330 [sweep256]=240 [sweep]=420)
declare -A GROUP=([first]="devices cupti12 sweepfirst" [perf]="overhead energy"
                  [sizes]="sweep128 sweep256" [validate]="devices counters pytest conecounters ncu"
                  [fixtures]="devices pallas128 pytest conecounters")
declare -A WANT=()
if [ $# -eq 0 ] || [ "$1" = all ]; then
  for s in "${ORDER[@]}"; do WANT[$s]=1; done
else
  for s in "$@"; do
    if [ -n "${GROUP[$s]:-}" ]; then
      for g in ${GROUP[$s]}; do WANT[$g]=1; done
      continue
    fi
    [ -n "${CAP[$s]:-}" ] || { echo "run_on_gpu.sh: unknown step '$s' (groups: all ${!GROUP[*]}; steps: ${ORDER[*]})" >&2; exit 2; }
    WANT[$s]=1
  done
  WANT[env]=1
  for s in "${ORDER[@]}"; do
    case $s in env|wheels|build) continue ;; esac
    [ -n "${WANT[$s]:-}" ] && { WANT[wheels]=1; WANT[build]=1; }
  done
fi

BUDGET=${GPUVAL_BUDGET_S:-450}
RESERVE=20   # seconds kept for ending a step's leftover processes and packing the logs
T0=$SECONDS
mkdir -p "$OUT" "$LOGS"
rm -rf "$WORK/status" "$WORK/notes" "${LOGS:?}"/*
(cd "$OUT" && rm -f -- summary.txt logs.tgz pytest.log ncu_compare.txt overhead.json summary.json \
   ./*.fpgaprof ./*.fpgaprof.part?? ./fpgaprof-site-*.tgz ./pallas*.tgz ./cupti12.tgz ./*.part??)
mkdir -p "$WORK/status" "$WORK/notes"
ROWS=()
FAILED=0
FAILED_STEPS=()

# The processes whose environment holds GPUVAL_STEP_TAG=$1.
tagged_pids() {
  local f p
  for f in /proc/[0-9]*/environ; do
    p=${f#/proc/}; p=${p%/environ}
    [ "$p" = "$$" ] && continue
    grep -qzx "GPUVAL_STEP_TAG=$1" "$f" 2>/dev/null && echo "$p"
  done
}

# Ends what a step left running (its `timeout` signals only its own process group, and is done
# as soon as the step's shell has gone: a traced program that caught SIGTERM to save its trace,
# an inner `timeout` or an ncu run in a session of its own would hold the GPU for the next step).
# SIGTERM, GPUVAL_REAP_GRACE_S (15) s to exit, then SIGKILL; each one named in the log and
# notes of step $2.
reap() {
  local pids p grace=${GPUVAL_REAP_GRACE_S:-15}
  pids=$(tagged_pids "$1")
  [ -n "$pids" ] || return 0
  local listed=""
  for p in $pids; do listed+="$p ($(tr -d '\n' < "/proc/$p/comm" 2>/dev/null)) "; done
  echo "$(date -u +%T) left running by the step, sent SIGTERM: $listed" | tee -a "$WORK/notes/$2"
  # shellcheck disable=SC2086  # a list of pids
  kill -TERM $pids 2>/dev/null
  for _ in $(seq "$grace"); do
    sleep 1
    pids=$(tagged_pids "$1")
    [ -n "$pids" ] || return 0
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null
  echo "$(date -u +%T) still running after $grace s, sent SIGKILL: $pids" | tee -a "$WORK/notes/$2"
}

pack() {
  {
    echo "fpgaprof GPU validation: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(hostname), $((SECONDS - T0)) s"
    echo "GPU: $(timeout 20 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || echo none)"
    printf '%-12s %-60s %5s %6s  %s\n' step status rc secs log
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
  # Small files only (under 2 MiB; find's -size -2M would mean "at most 1 MiB"): the hlo dumps
  # and traces of the sweep stay out.
  (cd "$WORK" && find logs summary.txt -type f -size -2097152c -print0 | tar czf "$OUT/logs.tgz" --null -T -) 2>/dev/null
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
    ROWS+=("$(printf '%-12s %-60s %5s %6s  %s' "$s" "skipped: out of time (GPUVAL_BUDGET_S=$BUDGET)" - 0 -)")
    continue
  fi
  echo "=== $s (limit ${limit} s; log $WORK/$log)"
  t0=$SECONDS
  tag="gpuval-$s-$$-$RANDOM"
  GPUVAL_STEP_TAG=$tag STEP_LIMIT=$limit timeout -k 10 "$limit" bash "$SELF" __step "$s" > "$WORK/$log" 2>&1
  rc=$?
  reap "$tag" "$s" >> "$WORK/$log" 2>&1
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
  ROWS+=("$(printf '%-12s %-60s %5s %6s  %s' "$s" "$status" "$rc" "$secs" "$log")")
  pack
done
pack
echo
cat "$WORK/summary.txt"
echo "outputs in $OUT: $(cd "$OUT" && find . -maxdepth 1 -type f -printf '%f (%s bytes) ' | sort)"
exit "$FAILED"
