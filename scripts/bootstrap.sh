#!/usr/bin/env bash
# Sets up everything fpgaprof needs on a fresh Debian/Ubuntu machine, idempotently:
# Debian packages (C++ test deps, clang for the fuzzers, chromium for the report test),
# a project-local .venv with the Python dependencies, and fpgaprof itself (`pip install .`).
# Usage: scripts/bootstrap.sh [--no-apt] [--extras test,mbirjax]
set -euo pipefail
cd "$(dirname "$0")/.."

apt_ok=1
extras="test,mbirjax"
while [ $# -gt 0 ]; do
  case "$1" in
    --no-apt) apt_ok=0 ;;
    --extras) extras="$2"; shift ;;
    *) echo "bootstrap: unknown option $1 (use --no-apt, --extras LIST)" >&2; exit 2 ;;
  esac
  shift
done

APT_PKGS="build-essential cmake ninja-build zlib1g-dev catch2 nlohmann-json3-dev clang-14 libclang-rt-14-dev chromium python3-venv"
if [ "$apt_ok" = 1 ] && command -v apt-get >/dev/null; then
  missing=""
  for p in $APT_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  if [ -n "$missing" ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    echo "bootstrap: installing Debian packages:$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv"
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python
stamp=.venv/.fpgaprof-deps-$(echo "$extras" | tr ',' '_')
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "bootstrap: installing Python dependencies into .venv"
  $VPY -m pip install -q --upgrade pip
  # Build dependencies too, so that `pip install --no-build-isolation .` below needs no network.
  $VPY -m pip install -q "scikit-build-core>=0.10" "pybind11>=2.10" "nlohmann-json>=3.11" \
      "nvidia-cuda-cupti>=13,<14" "nvidia-nvtx>=13,<14" cmake ninja
  $VPY -m pip install -q "numpy>=1.24" "jax>=0.4.30" "pytest>=7" "pandas>=2" "perfetto>=0.9" "jsonschema>=4"
  case ",$extras," in *,mbirjax,*) $VPY -m pip install -q "mbirjax==0.6.17.1" ;; esac
  touch "$stamp"
fi

echo "bootstrap: building and installing fpgaprof into .venv"
$VPY -m pip install -q --no-build-isolation --no-deps .
