#!/usr/bin/env python3
"""Regenerates the generated parts of the FPGA docs from the data and the model:
  docs/fpga-validation.md  the validation tables (python/fpgaprof/data/fpga_anchors.json)
  docs/fpga-model.md       what the model concludes on the saved H100 traces (tests/data/traces)
Each part sits between <!-- NAME:start --> and <!-- NAME:end --> markers; the rest of each
document is written by hand. tests/python/test_fpga_docs.py checks that the documents hold
what this script writes. Usage: .venv/bin/python scripts/fpga_docs.py [--check]
"""
from __future__ import annotations

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
TRACES = ["tests/data/traces/mbirjax_parallel_128_h100.fpgaprof", "tests/data/traces/mbirjax_sweep_32_64_run_h100.fpgaprof"]


def blocks() -> dict[tuple[str, str], str]:
    from fpgaprof import fpga_validation as V

    return {("docs/fpga-validation.md", "validation-table"): V.markdown(V.table(), V.leave_one_source_out()),
            ("docs/fpga-model.md", "mbirjax-conclusions"): V.trace_conclusions([str(ROOT / t) for t in TRACES])}


def replace(text: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"no <!-- {name}:start --> ... <!-- {name}:end --> block")
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), text)


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    for (doc, name), body in blocks().items():
        path = ROOT / doc
        old = path.read_text(encoding="utf-8")
        new = replace(old, name, body)
        if new != old:
            stale.append(f"{doc} ({name})")
            if not check:
                path.write_text(new, encoding="utf-8")
    if check and stale:
        print("out of date: " + ", ".join(stale) + " (run scripts/fpga_docs.py)")
        return 1
    print("up to date" if not stale else "rewrote " + ", ".join(stale))
    return 0


if __name__ == "__main__":
    sys.exit(main())
