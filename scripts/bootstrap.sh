#!/usr/bin/env bash
# Sets up everything fpgaprof needs on a fresh Debian/Ubuntu machine, idempotently:
# Debian packages (C++ test deps, ccache for the test builds, clang for the fuzzers, clang-format for the style check,
# chromium for the report test, graphviz for report.html's dataflow graphs: optional, the
# report lists the graphs' edges as a table without it),
# a project-local .venv with fpgaprof and the Python dependencies of its extras (by default
# test,dev,mbirjax: pytest and friends, the lint/type/import-contract tools, and the current
# MBIRJAX release line, 0.7.x), and a second project-local venv,
# .venv-mbirjax06, with MBIRJAX 0.6.17.1 and jax 0.10.2, the other MBIRJAX line the sweep is
# tested on (docs/mbirjax.md). fpgaprof is built once, as a wheel (build/wheel/), and that wheel
# is installed into both venvs.
# Usage: scripts/bootstrap.sh [--no-apt] [--extras test,dev,mbirjax] [--no-mbirjax06]
set -euo pipefail
cd "$(dirname "$0")/.."

apt_ok=1
extras="test,dev,mbirjax"
line06=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-apt) apt_ok=0 ;;
    --extras) extras="$2"; shift ;;
    --no-mbirjax06) line06=0 ;;
    *) echo "bootstrap: unknown option $1 (use --no-apt, --extras LIST, --no-mbirjax06)" >&2; exit 2 ;;
  esac
  shift
done

APT_PKGS="build-essential ccache cmake ninja-build zlib1g-dev catch2 nlohmann-json3-dev clang-14 libclang-rt-14-dev clang-format chromium graphviz python3-venv"
# Whether apt can install package $1 (a "Candidate:" that is not "(none)"). The policy is read
# whole before it is matched: `apt-cache policy | grep -q` under pipefail fails whenever grep
# exits at the match while apt-cache is still writing (SIGPIPE, status 141), and every missing
# package then read as absent on a fresh machine.
has_candidate() {
  local policy
  policy=$(LC_ALL=C apt-cache policy "$1" 2>/dev/null) || return 1
  [[ "$policy" =~ Candidate:\ [^\(] ]]
}
if [ "$apt_ok" = 1 ] && command -v apt-get >/dev/null; then
  missing=""
  for p in $APT_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  if [ -n "$missing" ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    # A package this release does not have (Ubuntu has no chromium deb, only a snap; older
    # releases name clang's runtime differently) is left out and said, not a failed setup:
    # what needs it (the report's browser test, the fuzzers) says so or is skipped.
    have="" absent=""
    for p in $missing; do
      if has_candidate "$p"; then have="$have $p"; else absent="$absent $p"; fi
    done
    [ -z "$absent" ] || echo "bootstrap: not in this system's package lists, left out:$absent"
    if [ -n "$have" ]; then
      echo "bootstrap: installing Debian packages:$have"
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $have >/dev/null
    fi
  fi
fi

# Python 3.11 or newer (JAX 0.10 and MBIRJAX 0.7 need it): $PYTHON, else the newest python3.1x
# on the PATH, else python3 when it is new enough.
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for cand in python3.13 python3.12 python3.11 python3; do
    if command -v "$cand" >/dev/null && "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      PY=$cand
      break
    fi
  done
fi
# None (Ubuntu 22.04's python3 is 3.10): python3.11 from the release's own lists where they have
# it, else from the deadsnakes PPA on Ubuntu (as docker/install.sh does for the image).
if [ -z "$PY" ] && [ "$apt_ok" = 1 ] && command -v apt-get >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  has_py311() { has_candidate python3.11-venv; }
  if ! has_py311 && [ -r /etc/os-release ] && (. /etc/os-release && [ "${ID:-}" = ubuntu ]); then
    echo "bootstrap: adding the deadsnakes PPA for python3.11 (this Ubuntu's python3 is older)"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        software-properties-common gpg-agent >/dev/null
    $SUDO add-apt-repository -y ppa:deadsnakes/ppa >/dev/null
    $SUDO apt-get update -qq
  fi
  if has_py311; then
    echo "bootstrap: installing python3.11 (JAX 0.10 and MBIRJAX 0.7 need Python 3.11 or newer)"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        python3.11 python3.11-venv python3.11-dev python3.11-tk >/dev/null
    command -v python3.11 >/dev/null && PY=python3.11
  fi
fi
if [ -z "$PY" ]; then
  echo "bootstrap: Python 3.11 or newer is needed (JAX 0.10 and MBIRJAX 0.7 require it) and none was" \
       "found or could be installed: install one (Ubuntu 22.04: python3.11 and python3.11-venv from" \
       "the deadsnakes PPA) or give it as PYTHON=/path/to/python3.11" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv"
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python
if [ ! -f .venv/.fpgaprof-build-deps ] || [ pyproject.toml -nt .venv/.fpgaprof-build-deps ]; then
  echo "bootstrap: installing build dependencies into .venv"
  $VPY -m pip install -q --upgrade pip
  # So that the wheel below builds with --no-build-isolation (no network needed for it).
  $VPY -m pip install -q "scikit-build-core>=0.10" "pybind11>=2.10" "nlohmann-json>=3.11" \
      "grpcio-tools==1.85.1" "nvidia-cuda-cupti>=13,<14" "nvidia-nvtx>=13,<14" cmake ninja
  touch .venv/.fpgaprof-build-deps
fi

# One build (incremental, in build/<wheel tag>/), one wheel for both venvs; through ccache where
# it is installed, so that later builds of the same sources (scripts/test.sh's) reuse it. The
# wheel is rebuilt only when its sources changed (a hash of every file it is built from), and
# installed only into a venv that does not have this one.
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$PWD"
fi
src_hash=$(find CMakeLists.txt pyproject.toml cmake cpp proto python -type f \
             ! -path '*/__pycache__/*' ! -name '*.pyc' -print0 \
           | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
whl=$(ls build/wheel/fpgaprof-*.whl 2>/dev/null | head -n 1 || true)
if [ -n "$whl" ] && [ "$(cat build/wheel/.source-hash 2>/dev/null)" = "$src_hash" ]; then
  echo "bootstrap: the fpgaprof wheel is current (sources unchanged): not rebuilt"
else
  echo "bootstrap: building the fpgaprof wheel"
  rm -rf build/wheel
  $VPY -m pip wheel -q --no-build-isolation --no-deps -w build/wheel .
  whl=$(ls build/wheel/fpgaprof-*.whl)
  echo "$src_hash" > build/wheel/.source-hash
fi
install_wheel() {  # install_wheel PYTHON VENV: the wheel, unless that venv has this one already
  if [ "$(cat "$2/.fpgaprof-wheel-hash" 2>/dev/null)" != "$src_hash" ]; then
    "$1" -m pip install -q --force-reinstall --no-deps "$whl"
    echo "$src_hash" > "$2/.fpgaprof-wheel-hash"
  fi
}

# .venv: fpgaprof with the dependencies of its extras, resolved by pip from pyproject.toml.
stamp=.venv/.fpgaprof-deps-$(echo "$extras" | tr ',' '_')
install_wheel "$VPY" .venv
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "bootstrap: installing Python dependencies ($extras) into .venv"
  $VPY -m pip install -q "$whl${extras:+[$extras]}"
  touch "$stamp"
fi

# .venv-mbirjax06: the 0.6 line. MBIRJAX 0.6.17.1 works with jax 0.10.2, which 0.7.x excludes.
if [ "$line06" = 1 ]; then
  if [ ! -x .venv-mbirjax06/bin/python ]; then
    echo "bootstrap: creating .venv-mbirjax06"
    "$PY" -m venv .venv-mbirjax06
  fi
  V06=.venv-mbirjax06/bin/python
  install_wheel "$V06" .venv-mbirjax06
  stamp06=.venv-mbirjax06/.fpgaprof-deps
  if [ ! -f "$stamp06" ] || [ pyproject.toml -nt "$stamp06" ]; then
    echo "bootstrap: installing MBIRJAX 0.6.17.1, jax 0.10.2 and the test dependencies into .venv-mbirjax06"
    $V06 -m pip install -q --upgrade pip
    $V06 -m pip install -q "$whl[test]" "mbirjax==0.6.17.1" "jax==0.10.2" "jaxlib==0.10.2"
    touch "$stamp06"
  fi
fi
