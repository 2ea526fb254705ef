"""``fpgaprof.roofline``: roofline, ceilings, transfers, device memory and per-device rows of a
trace, and the whole analysis as one dict (defined in fpgaprof.api.roofline and
fpgaprof.api.resource_reports; docs/roofline.md)."""

from fpgaprof.api.resource_reports import devices, memory, transfers
from fpgaprof.api.roofline import REGION_BY, TOTAL_LABELS, Table, analyze, ceilings, roofline

__all__ = [
    "Table",
    "ceilings",
    "analyze",
    "roofline",
    "transfers",
    "memory",
    "devices",
    "REGION_BY",
    "TOTAL_LABELS",
]
