"""``fpgaprof.fpga_validation``: the FPGA model against published, measured FPGA results
(defined in fpgaprof.api.fpga_validation; docs/fpga-validation.md).

    python -m fpgaprof.fpga_validation            # the tables as Markdown
"""

from fpgaprof.api.fpga_validation import (
    BUILDERS,
    anchors,
    calibration,
    estimate_anchor,
    leave_one_source_out,
    loso_summary,
    markdown,
    measured_seconds,
    refit,
    scope_chain,
    source_overlap,
    sources,
    summary,
    table,
    trace_conclusions,
)

__all__ = [
    "anchors",
    "calibration",
    "table",
    "summary",
    "sources",
    "source_overlap",
    "refit",
    "scope_chain",
    "leave_one_source_out",
    "loso_summary",
    "markdown",
    "BUILDERS",
    "estimate_anchor",
    "measured_seconds",
    "trace_conclusions",
]

if __name__ == "__main__":
    print(markdown(table(), leave_one_source_out()))
