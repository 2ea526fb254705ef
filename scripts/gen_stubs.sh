#!/usr/bin/env bash
# Type stubs of the compiled module fpgaprof._core, generated from the built module by
# pybind11-stubgen, so that they say exactly what cpp/bindings/ binds: python/fpgaprof/_core/
# __init__.pyi (the module) and hlo.pyi, attribution.pyi, analysis.pyi (its submodules). They
# sit inside the package, so the wheel installs them beside _core*.so.
# Usage: scripts/gen_stubs.sh [--check]
#   --check  generate into a temporary folder and fail, with a diff, when the committed stubs
#            differ (tests/python/test_core_stubs.py runs this)
#   PYTHON   a python that imports the built fpgaprof and has pybind11-stubgen (default
#            .venv/bin/python, where scripts/bootstrap.sh installs both); for a development
#            build: PYTHONPATH=build/dev/pkg PYTHON=.venv/bin/python scripts/gen_stubs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "gen_stubs: unknown option $1 (use --check)" >&2; exit 2 ;;
esac
DEST=python/fpgaprof/_core

"$PY" -c "import pybind11_stubgen" 2>/dev/null || {
  echo "gen_stubs: $PY has no pybind11-stubgen: pip install pybind11-stubgen==3.0.0 (pyproject.toml's test extra; scripts/bootstrap.sh installs it)" >&2
  exit 1
}
"$PY" -c "import fpgaprof._core" 2>/dev/null || {
  echo "gen_stubs: $PY cannot import the built fpgaprof._core: build it (scripts/bootstrap.sh, or cmake with" \
       "-DFPGAPROF_PYTHON=ON and PYTHONPATH=<build>/pkg)" >&2
  exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# --exit-code: an unresolved name or an invalid expression (a C++ type without a binding in a
# signature) fails instead of being written as-is.
"$PY" -m pybind11_stubgen --exit-code -o "$tmp" fpgaprof._core >"$tmp/log" 2>&1 || {
  cat "$tmp/log" >&2
  echo "gen_stubs: pybind11-stubgen failed (above)" >&2
  exit 1
}
if [ "$check" = 1 ]; then
  if ! diff -ru "$DEST" "$tmp/fpgaprof/_core" -x '__pycache__' >"$tmp/diff"; then
    head -n 80 "$tmp/diff"
    echo "gen_stubs: the type stubs in $DEST are not those of the built fpgaprof._core (diff above):" \
         "regenerate them with scripts/gen_stubs.sh (PYTHON=... as its header says) and commit them" >&2
    exit 1
  fi
  echo "gen_stubs: $DEST matches the built fpgaprof._core"
  exit 0
fi
mkdir -p "$DEST"
rm -f "$DEST"/*.pyi
cp "$tmp"/fpgaprof/_core/*.pyi "$DEST"/
echo "gen_stubs: wrote $(ls "$DEST" | tr '\n' ' ')into $DEST"
