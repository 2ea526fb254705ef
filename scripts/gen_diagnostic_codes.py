"""Writes the table of diagnostic codes into docs/reports.md ("Warnings"), between its two
markers, from the one table (cpp/src/core/diagnostics.cpp, read through the built
fpgaprof._core). tests/python/test_diagnostics.py checks that the document matches.

Usage: PYTHONPATH=build/dev/pkg python scripts/gen_diagnostic_codes.py [--check]
"""

from __future__ import annotations

import pathlib
import sys

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "reports.md"
BEGIN = "<!-- diagnostic codes: written by scripts/gen_diagnostic_codes.py -->"
END = "<!-- end of diagnostic codes -->"


def table(codes: list[dict]) -> str:
    rows = ["| code | severity | source | meaning and fix |", "|---|---|---|---|"]
    for c in codes:
        text = c["description"].replace("|", "\\|")
        rows.append(f"| `{c['code']}` | {c['severity']} | {c['source']} | {text} |")
    return "\n".join(rows)


def with_table(doc: str, codes: list[dict]) -> str:
    head, sep, rest = doc.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{DOC}: the markers {BEGIN!r} ... {END!r} are missing")
    return head + BEGIN + "\n" + table(codes) + "\n" + END + tail


def main() -> int:
    from fpgaprof import _core

    doc = DOC.read_text(encoding="utf-8")
    new = with_table(doc, list(_core.diagnostic_codes()))
    if "--check" in sys.argv[1:]:
        return 0 if new == doc else 1
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
