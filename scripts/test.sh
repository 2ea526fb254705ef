#!/usr/bin/env bash
# Runs every fpgaprof test on this machine, doing its own setup first (scripts/bootstrap.sh):
#   1. C++ unit tests (Catch2) through ctest
#   2. the same C++ tests rebuilt under AddressSanitizer + UndefinedBehaviorSanitizer
#   3. the libFuzzer targets, briefly, on their seed corpora (clang)
#   4. the main job (examples/mbirjax_sweep.py) at 32^3 with 1 run
#   5. the Python tests against the installed package (pytest tests/python), and tests/gpu
#      (which skip themselves where no GPU exists)
# Usage: scripts/test.sh [--quick]   (--quick skips the sanitizer and fuzzer stages)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
quick=0
[ "${1:-}" = "--quick" ] && quick=1
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}

stage() { printf '\n=== %s ===\n' "$*"; }

stage "setup"
bash scripts/bootstrap.sh
VPY=$ROOT/.venv/bin/python
export PATH="$ROOT/.venv/bin:$PATH"   # cmake/ninja from the venv where Debian's are missing

stage "C++ tests"
cmake -S . -B build/test -G Ninja -DCMAKE_BUILD_TYPE=Release -DFPGAPROF_TESTS=ON -DFPGAPROF_PYTHON=OFF \
      -DPython_EXECUTABLE="$VPY" >/dev/null
cmake --build build/test -j "$JOBS"
(cd build/test && ctest --output-on-failure -j "$JOBS")

if [ "$quick" = 0 ]; then
  stage "C++ tests under ASan + UBSan"
  cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFPGAPROF_TESTS=ON -DFPGAPROF_PYTHON=OFF \
        -DFPGAPROF_SANITIZE=ON -DPython_EXECUTABLE="$VPY" >/dev/null
  cmake --build build/asan -j "$JOBS"
  (cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure -j "$JOBS")

  if command -v clang++-14 >/dev/null; then
    stage "fuzzers (${FUZZ_SECONDS}s each)"
    cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFPGAPROF_TESTS=ON -DFPGAPROF_PYTHON=OFF \
          -DFPGAPROF_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
          -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" -DPython_EXECUTABLE="$VPY" >/dev/null
    fuzzers=$(cd tests/fuzz && ls *_fuzzer.cpp 2>/dev/null | sed 's/\.cpp$//')
    for f in $fuzzers; do
      cmake --build build/fuzz -j "$JOBS" --target "$f"
      work=$(mktemp -d)
      [ -d "tests/fuzz/corpus/$f" ] && cp -r "tests/fuzz/corpus/$f/." "$work/"
      echo "fuzzing $f for ${FUZZ_SECONDS}s"
      "build/fuzz/tests/$f" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 "$work" 2>&1 | tail -n 4
      rm -rf "$work"
    done
  else
    echo "fuzzers skipped: clang++-14 not installed (apt-get install clang-14 libclang-rt-14-dev)"
  fi
fi

stage "the main job: MBIRJAX sweep at 32^3, 1 run (CPU JAX here: kernel data absent and marked so)"
rm -rf build/sweep-ci
MPLBACKEND=Agg "$VPY" examples/mbirjax_sweep.py --sizes 32 --runs 1 --output build/sweep-ci >build/sweep-ci.log 2>&1 \
  || { tail -n 40 build/sweep-ci.log; echo "MBIRJAX sweep failed (log: build/sweep-ci.log)"; exit 1; }
tail -n 3 build/sweep-ci.log
for f in summary.json report.html scaling.txt; do
  [ -s "build/sweep-ci/$f" ] || { echo "MBIRJAX sweep wrote no $f"; exit 1; }
done

stage "Python tests"
export FPGAPROF_FAKE_CUPTI="$ROOT/build/test/tests/libfake_cupti.so"
export FPGAPROF_ARTIFACTS_DIR="$ROOT/build/artifacts"   # report screenshots from the HTML test
"$VPY" -m pytest -q tests/python tests/gpu
