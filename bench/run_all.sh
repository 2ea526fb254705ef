#!/usr/bin/env bash
# Every fpgaprof benchmark in one command: builds bench/*_benchmark.cpp with -DFPGAPROF_BENCH=ON
# (Release) into build/bench, runs each one that exists, then the report-size cases
# (bench/report_scale.py: iterations, nested, names; need an importable fpgaprof, e.g. the
# .venv's), the jobs benchmark (bench/job_merge.py), the Python API on 10^6 kernels
# (bench/api_benchmark.py), the GPU tracing-overhead benchmark (bench/tracing_overhead.py; it
# reports "skipped" without a GPU), and prints a table.
# Full outputs go to build/bench/results/<name>.txt.
#   BENCH_BUILD_DIR  build directory (default build/bench)
#   BENCH_ARGS_<name> extra arguments for one benchmark, e.g. BENCH_ARGS_convert_benchmark=5
#   OVERHEAD_ARGS    arguments for tracing_overhead.py (default none)
#   SCALE_ARGS       arguments for report_scale.py (default none; e.g. "--scale 0.1")
#   JOB_ARGS         arguments for job_merge.py (default: 64 ranks of 10^5 kernels; "--scale 1"
#                    for 10^6 kernels per rank)
#   API_ARGS         arguments for api_benchmark.py (default: 10^6 kernels; "--compare" also
#                    times XProf's converter and HTA on the same events)
#   JOBS             parallel build jobs (default nproc)
# Usage: bench/run_all.sh [--no-build] [--cpu-dry-run]
#   --cpu-dry-run   without a GPU, run tracing_overhead.py --allow-cpu (labelled, not a GPU figure)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BENCH_BUILD_DIR:-build/bench}
JOBS=${JOBS:-$(nproc)}
build=1
cpu_dry=0
for a in "$@"; do
  case "$a" in
    --no-build) build=0 ;;
    --cpu-dry-run) cpu_dry=1 ;;
    *) echo "run_all: unknown option $a (use --no-build, --cpu-dry-run)" >&2; exit 2 ;;
  esac
done
VPY=$ROOT/.venv/bin/python
[ -x "$VPY" ] || VPY=$(command -v python3)
export PATH="$ROOT/.venv/bin:$PATH"   # cmake/ninja from the venv where Debian's are missing

benches=$(cd bench && ls *_benchmark.cpp 2>/dev/null | sed 's/\.cpp$//')
if [ "$build" = 1 ] && [ -n "$benches" ]; then
  echo "=== building benchmarks in $BUILD ==="
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFPGAPROF_BENCH=ON -DFPGAPROF_PYTHON=OFF \
        -DFPGAPROF_TESTS=OFF -DPython_EXECUTABLE="$VPY" >/dev/null || { echo "run_all: cmake configure failed" >&2; exit 1; }
  # shellcheck disable=SC2086
  cmake --build "$BUILD" -j "$JOBS" --target $benches || { echo "run_all: build failed" >&2; exit 1; }
fi

RES=$BUILD/results
mkdir -p "$RES"
rows=()
failed=0

# key lines: those a benchmark prints with a rate, a size or a time in them (its own summary).
key_lines() { grep -E '[0-9.]+ *(M? ?records/s|MB/s|GB/s|s\b|ms\b|MiB|GiB|MB\b|bytes)' "$1" | tail -n 3 | sed 's/^ *//'; }

run_one() {  # name, command...
  local name=$1; shift
  local out=$RES/$name.txt
  echo
  echo "=== $name ==="
  local t0 t1 rc
  t0=$(date +%s.%N)
  "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  t1=$(date +%s.%N)
  local secs status
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  case $rc in
    0) status=ok ;;
    77) status=skipped ;;
    *) status="FAILED($rc)"; failed=1 ;;
  esac
  local key
  if [ "$status" = ok ]; then key=$(key_lines "$out"); else key=$(tail -n 2 "$out"); fi
  rows+=("$(printf '%-26s %-11s %7ss' "$name" "$status" "$secs")")
  while IFS= read -r line; do
    [ -n "$line" ] && rows+=("    ${line:0:150}")
  done <<< "$key"
}

for b in $benches; do
  exe=$BUILD/bench/$b
  if [ ! -x "$exe" ]; then
    rows+=("$(printf '%-26s %-11s %7s   %s' "$b" "not built" "-" "build it: cmake --build $BUILD --target $b")")
    failed=1
    continue
  fi
  var="BENCH_ARGS_$b"
  # shellcheck disable=SC2086
  run_one "$b" "$exe" ${!var:-}
done

if "$VPY" -c "import fpgaprof" >/dev/null 2>&1; then
  for c in iterations nested names; do
    # shellcheck disable=SC2086
    run_one "report_scale[$c]" "$VPY" bench/report_scale.py "$c" ${SCALE_ARGS:-}
  done
  # shellcheck disable=SC2086
  run_one "job_merge" "$VPY" bench/job_merge.py ${JOB_ARGS:-}
  # shellcheck disable=SC2086
  run_one "api_benchmark" "$VPY" bench/api_benchmark.py ${API_ARGS:-}
else
  rows+=("$(printf '%-26s %-11s %7s   %s' "report_scale" "not run" "-" "fpgaprof is not importable by $VPY (bash scripts/bootstrap.sh)")")
fi

overhead_args=${OVERHEAD_ARGS:-}
overhead_name=tracing_overhead
gpu=$("$VPY" -c "import jax; print(int(jax.default_backend() == 'gpu'))" 2>/dev/null || echo 0)
if [ "$gpu" != 1 ] && [ "$cpu_dry" = 1 ]; then
  overhead_args="--allow-cpu $overhead_args"
  overhead_name="tracing_overhead[CPU-DRY]"   # not the GPU figure
fi
# shellcheck disable=SC2086
run_one "$overhead_name" "$VPY" bench/tracing_overhead.py --json "$RES/tracing_overhead.json" $overhead_args

echo
echo "=== summary (full outputs in $RES/) ==="
printf '%-26s %-11s %8s\n' "benchmark" "status" "wall"
for r in "${rows[@]}"; do echo "$r"; done
[ -z "$benches" ] && echo "(no bench/*_benchmark.cpp found)"
if [ "$gpu" != 1 ]; then
  echo "No GPU here: tracing_overhead is skipped (or a labelled CPU dry run); its GPU figure was not measured."
fi
exit $failed
