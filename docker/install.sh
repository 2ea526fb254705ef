#!/usr/bin/env bash
# Installs fpgaprof with JAX, MBIRJAX, TensorBoard and XProf from this source tree: the install
# steps of the Docker image (docker/Dockerfile runs this script) and of CI (scripts/test.sh runs
# it into a throwaway venv with CPU jax). One script, so that the image and CI install alike.
#
# Steps, in order:
#   1. (--system-packages only) Debian/Ubuntu packages: a C++ compiler, zlib, and Python
#      (python3.X, -venv, -dev; on Ubuntu from the deadsnakes PPA when X.Y is not the release's
#      own python3, as 3.11 is not Ubuntu 22.04's); `python` then names that Python
#      (update-alternatives).
#   2. (--venv DIR) a virtual environment made with that Python; without --venv everything goes
#      into that Python's own environment.
#   3. pip itself, then fpgaprof's build requirements, read from pyproject.toml's
#      [build-system] requires (the one list of them). Where a CUDA toolkit has CUPTI or NVTX
#      headers (the nvidia/cuda *-devel images: /usr/local/cuda/extras/CUPTI/include,
#      /usr/local/cuda/include/nvtx3), the nvidia-cuda-cupti or nvidia-nvtx wheel is left
#      out: cmake/FpgaprofDeps.cmake finds the toolkit's headers first, and a second CUPTI
#      (13.x) beside the one jax[cuda12] brings (12.x) would only be one more library in the
#      process. Without a toolkit and with jax[cuda12], the CUDA 12 wheels
#      (nvidia-cuda-cupti-cu12, nvidia-nvtx-cu12) give the headers instead, for the same
#      reason. CMake and Ninja (pip) too, which an isolated build would fetch itself.
#   4. fpgaprof built from this tree (`pip install --no-build-isolation SRC[mbirjax]`) in the
#      same resolver run as the JAX package (--jax-package, default jax[cuda12]), TensorBoard
#      and XProf with fpgaprof's xprof extra (the runtime its XProf export needs; all three
#      left out with --no-viewers), so that pip picks one consistent set.
#   5. (--check) imports fpgaprof, jax and mbirjax, prints their versions and `fpgaprof devices`.
# With --resolve-only, step 4 is pip's dry run (`pip install --dry-run`): it shows that the
# package set resolves (e.g. jax[cuda12] with MBIRJAX on a machine without a GPU) and installs
# none of it.
#
# Usage: docker/install.sh [--python PY] [--venv DIR] [--jax-package SPEC] [--system-packages]
#                          [--python-version X.Y] [--no-viewers] [--build-dir DIR] [--check]
#                          [--resolve-only]
#   --python PY         the Python to install with (default: python3.X where X.Y is
#                       --python-version, else python3)
#   --python-version    the Python the system packages bring (default 3.11, as the image has)
#   --venv DIR          make (or reuse) a venv in DIR and install into it
#   --jax-package SPEC  the JAX requirement: 'jax[cuda12]' (default, as the image has),
#                       'jax[cuda13]', or 'jax' (CPU only)
#   --system-packages   install the Debian/Ubuntu packages first (needs root; the image)
#   --no-viewers        leave out tensorboard and xprof
#   --build-dir DIR     scikit-build-core's build folder (default: pyproject.toml's,
#                       build/{wheel_tag} in the source tree)
#   --check             run the import and `fpgaprof devices` checks at the end
#   --resolve-only      resolve step 4's packages without installing them (pip --dry-run)
# Environment: PIP_* as pip reads them (e.g. PIP_NO_CACHE_DIR=1);
# CMAKE_CXX_COMPILER_LAUNCHER=ccache speeds up repeated builds (CMake reads it);
# FPGAPROF_OS_RELEASE (default /etc/os-release): the release file step 1 reads (tests give an
# Ubuntu one on other systems).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=""
PYVER=3.11
VENV=""
JAX_PACKAGE="jax[cuda12]"
SYSTEM=0
VIEWERS=1
BUILD_DIR=""
CHECK=0
RESOLVE_ONLY=0

die() { echo "install.sh: $*" >&2; exit 2; }
say() { echo "install.sh: $*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --python) [ $# -ge 2 ] || die "--python needs a value"; PY=$2; shift ;;
    --python-version) [ $# -ge 2 ] || die "--python-version needs a value"; PYVER=$2; shift ;;
    --venv) [ $# -ge 2 ] || die "--venv needs a value"; VENV=$2; shift ;;
    --jax-package) [ $# -ge 2 ] || die "--jax-package needs a value"; JAX_PACKAGE=$2; shift ;;
    --system-packages) SYSTEM=1 ;;
    --no-viewers) VIEWERS=0 ;;
    --build-dir) [ $# -ge 2 ] || die "--build-dir needs a value"; BUILD_DIR=$2; shift ;;
    --check) CHECK=1 ;;
    --resolve-only) RESOLVE_ONLY=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done
case "$JAX_PACKAGE" in
  jax|jax\[*\]|jax[=\<\>!~]*) ;;
  *) die "--jax-package '$JAX_PACKAGE' is not a jax requirement (use 'jax[cuda12]', 'jax[cuda13]' or 'jax')" ;;
esac
[[ "$PYVER" =~ ^3\.[0-9]+$ ]] || die "--python-version '$PYVER' is not of the form 3.X"

# 1. System packages.
if [ "$SYSTEM" = 1 ]; then
  command -v apt-get >/dev/null || die "--system-packages needs apt-get (Debian/Ubuntu)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  pkgs="build-essential zlib1g-dev ca-certificates"
  # shellcheck disable=SC1090,SC1091  # the release's own file (another one only in tests)
  . "${FPGAPROF_OS_RELEASE:-/etc/os-release}"
  # The release's own python3 (X.Y), from its package version (e.g. 3.10.6-1~22.04 -> 3.10).
  own=$(apt-cache show --no-all-versions python3 2>/dev/null | sed -n 's/^Version: \([0-9]*\.[0-9]*\).*/\1/p' | awk 'NR == 1')
  if [ "${ID:-}" = ubuntu ] && [ "$own" != "$PYVER" ] && ! command -v "python${PYVER}" >/dev/null; then
    say "adding the deadsnakes PPA for python${PYVER} (${PRETTY_NAME:-Ubuntu}'s python3 is ${own:-unknown})"
    $SUDO apt-get install -y -qq --no-install-recommends software-properties-common gpg-agent >/dev/null
    $SUDO add-apt-repository -y ppa:deadsnakes/ppa >/dev/null
    $SUDO apt-get update -qq
  fi
  apt-cache show "python${PYVER}-venv" >/dev/null 2>&1 \
    || die "python${PYVER} is not packaged for ${PRETTY_NAME:-this system} (use --python-version)"
  # python3.X-tk: `import mbirjax` imports easygui, which needs tkinter (Debian and deadsnakes
  # ship it apart from python3.X).
  pkgs="$pkgs python${PYVER} python${PYVER}-venv python${PYVER}-dev python${PYVER}-tk"
  say "installing system packages: $pkgs"
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
  $SUDO update-alternatives --install /usr/bin/python python "/usr/bin/python${PYVER}" 1 >/dev/null
  [ -n "$PY" ] || PY="python${PYVER}"
fi

if [ -z "$PY" ]; then
  if command -v "python${PYVER}" >/dev/null; then PY="python${PYVER}"; else PY=python3; fi
fi
command -v "$PY" >/dev/null || [ -x "$PY" ] || die "no Python '$PY' (use --python, or --system-packages)"

# 2. The environment to install into.
if [ -n "$VENV" ]; then
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating the venv $VENV with $PY"
    "$PY" -m venv "$VENV"
  fi
  PY="$VENV/bin/python"
fi
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
  || die "$("$PY" -V 2>&1) is too old: fpgaprof needs Python 3.10 or newer"
say "installing into $("$PY" -c 'import sys; print(sys.prefix)') ($("$PY" -V 2>&1))"

# 3. pip, then the build requirements from pyproject.toml.
"$PY" -m pip install -q --upgrade pip
# Which headers a CUDA toolkit provides, searched where cmake/FpgaprofDeps.cmake looks first.
toolkit_cupti=0
toolkit_nvtx=0
for inc in ${CUDA_HOME:+"$CUDA_HOME/include" "$CUDA_HOME/extras/CUPTI/include"} \
           /usr/local/cuda/include /usr/local/cuda/extras/CUPTI/include; do
  [ -f "$inc/cupti_activity.h" ] && toolkit_cupti=1
  [ -f "$inc/nvtx3/nvToolsExt.h" ] && toolkit_nvtx=1
done
# Without a toolkit the headers come from wheels: CUDA 12's for jax[cuda12] (the same major as
# the libcupti its plugin loads), else pyproject's CUDA 13 ones.
cuda12=0
case "$JAX_PACKAGE" in *cuda12*) cuda12=1 ;; esac
mapfile -t build_reqs < <("$PY" - "$SRC/pyproject.toml" "$toolkit_cupti" "$toolkit_nvtx" "$cuda12" <<'PYEOF'
import re, sys
try:
    import tomllib
except ImportError:  # Python 3.10: no tomllib; the one list is simple enough to read by hand
    tomllib = None
text = open(sys.argv[1], encoding="utf-8").read()
if tomllib is not None:
    reqs = tomllib.loads(text)["build-system"]["requires"]
else:
    block = re.search(r"^\[build-system\]\s*\nrequires\s*=\s*\[(.*?)\]", text, re.S | re.M)
    reqs = re.findall(r'"([^"]+)"', block.group(1)) if block else []
if not reqs:
    sys.exit("install.sh: no [build-system] requires in pyproject.toml")
from_toolkit = {"nvidia-cuda-cupti": sys.argv[2] == "1", "nvidia-nvtx": sys.argv[3] == "1"}
cu12 = {"nvidia-cuda-cupti": "nvidia-cuda-cupti-cu12>=12.8,<13", "nvidia-nvtx": "nvidia-nvtx-cu12>=12.8,<13"}
for r in reqs:
    name = re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower().replace("_", "-")
    if from_toolkit.get(name):
        continue
    print(cu12[name] if sys.argv[4] == "1" and name in cu12 else r)
PYEOF
)
# scikit-build-core asks for CMake and Ninja only in an isolated build (when none is on PATH):
# with --no-build-isolation they must be here already (the CUDA images have neither).
build_reqs+=("cmake>=3.20" ninja)
[ "$toolkit_cupti" = 1 ] && say "CUPTI headers from the CUDA toolkit (${CUDA_HOME:-/usr/local/cuda}): no nvidia-cuda-cupti wheel"
[ "$toolkit_nvtx" = 1 ] && say "NVTX headers from the CUDA toolkit (${CUDA_HOME:-/usr/local/cuda}): no nvidia-nvtx wheel"
say "installing the build requirements: ${build_reqs[*]}"
"$PY" -m pip install -q "${build_reqs[@]}"

# 4. fpgaprof from this tree, with JAX, MBIRJAX and the viewers in one resolver run.
if [ "$VIEWERS" = 1 ]; then
  pkgs=("${SRC}[mbirjax,xprof]" "$JAX_PACKAGE" tensorboard xprof)
else
  pkgs=("${SRC}[mbirjax]" "$JAX_PACKAGE")
fi
cfg=()
[ -n "$BUILD_DIR" ] && cfg+=(--config-settings "build-dir=$BUILD_DIR")
if [ "$RESOLVE_ONLY" = 1 ]; then
  say "resolving ${pkgs[*]} (pip --dry-run: nothing is installed)"
  plan=$("$PY" -m pip install --dry-run --no-build-isolation ${cfg[@]+"${cfg[@]}"} "${pkgs[@]}")
  would=$(printf '%s\n' "$plan" | sed -n 's/^Would install //p' | tr ' ' '\n' | sed '/^$/d')
  # The JAX, CUDA (nvidia-*), MBIRJAX and fpgaprof packages by name, the rest as a count.
  main=$(printf '%s\n' "$would" | grep -E '^(jax|nvidia|mbirjax|fpgaprof)' | tr '\n' ' ' || true)
  say "would install $(printf '%s\n' "$would" | grep -c . || true) packages: ${main:-}(and their dependencies)"
  say "done (resolve only)"
  exit 0
fi
say "installing ${pkgs[*]}"
"$PY" -m pip install -q --no-build-isolation ${cfg[@]+"${cfg[@]}"} "${pkgs[@]}"

# 5. Checks.
if [ "$CHECK" = 1 ]; then
  "$PY" - <<'PYEOF'
import importlib.metadata as md
import fpgaprof, mbirjax, jax  # noqa: E401  (fpgaprof first, as users import it)
print("install.sh: fpgaprof", fpgaprof.__version__, "· jax", jax.__version__,
      "· mbirjax", md.version("mbirjax"))
PYEOF
  "$PY" -m fpgaprof devices
fi
say "done"
