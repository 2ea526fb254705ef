"""``fpgaprof.fpga_validation``: the FPGA model against published, measured FPGA results
(defined in fpgaprof.api.fpga_validation; docs/fpga-validation.md).

    python -m fpgaprof.fpga_validation            # the table as Markdown
"""

from fpgaprof.api.fpga_validation import (
    BUILDERS,
    anchors,
    calibration,
    estimate_anchor,
    markdown,
    measured_seconds,
    summary,
    table,
    trace_conclusions,
)

__all__ = [
    "anchors",
    "calibration",
    "table",
    "summary",
    "markdown",
    "BUILDERS",
    "estimate_anchor",
    "measured_seconds",
    "trace_conclusions",
]

if __name__ == "__main__":
    print(markdown(table()))
