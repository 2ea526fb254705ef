#!/usr/bin/env bash
# Formats the tracked C++ files of cpp/, tests/ and bench/ with clang-format (.clang-format).
# Usage: scripts/format.sh [--check]
#   --check  change nothing; fail, naming the files and lines, when one is not formatted
#            (scripts/test.sh runs this)
#   CLANG_FORMAT  the binary (default clang-format-14, else clang-format: Debian's, which
#                 scripts/bootstrap.sh installs; another major version may format differently)
set -euo pipefail
cd "$(dirname "$0")/.."
CF=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
[ -n "$CF" ] || { echo "format: no clang-format: apt-get install clang-format (scripts/bootstrap.sh does)" >&2; exit 1; }
mapfile -t files < <(git ls-files 'cpp/*.cpp' 'cpp/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'bench/*.cpp' 'bench/*.hpp')
[ "${#files[@]}" -gt 0 ] || { echo "format: no C++ files found (not a git checkout?)" >&2; exit 1; }
if [ "${1:-}" = "--check" ]; then
  out=$(mktemp)
  trap 'rm -f "$out"' EXIT
  if ! "$CF" --dry-run -Werror "${files[@]}" >"$out" 2>&1; then
    head -n 60 "$out"
    echo "format: $(grep -c 'error: code should be clang-formatted' "$out") places in" \
         "$(grep 'error: code should be clang-formatted' "$out" | cut -d: -f1 | sort -u | wc -l) files are not" \
         "formatted as .clang-format says (first ones above): run scripts/format.sh ($("$CF" --version | head -n 1))" >&2
    exit 1
  fi
  echo "format: ${#files[@]} C++ files formatted ($("$CF" --version | head -n 1))"
elif [ -z "${1:-}" ]; then
  "$CF" -i "${files[@]}"
  echo "format: formatted ${#files[@]} C++ files"
else
  echo "format: unknown option $1 (use --check)" >&2
  exit 2
fi
