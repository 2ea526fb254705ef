"""``prof.transfer_report()``, ``prof.memory_report()``, ``prof.device_report()`` (also
``fpgaprof.roofline.transfers``, ``.memory``, ``.devices``): copies, device memory and GPUs of a
trace, from the Profile's cached analysis, as dicts that print and show in Jupyter as tables
(views.sections). docs/roofline.md, "Transfers", "Device memory", "Several GPUs"."""

from __future__ import annotations

from typing import Any

from fpgaprof.api.module_memory import module_memory_report
from fpgaprof.api.roofline import analyze
from fpgaprof.views.sections import device_report, memory_report, transfer_report

__all__ = ["transfers", "memory", "devices"]


def transfers(prof: Any, by: str = "region", **kwargs: Any) -> dict:
    """Copies per direction for the trace, each region path (``by="region"``; groups of kind
    "region_path" with ``region`` = the path and ``instances``) or each region record
    (``by="region_instance"``; kind "region"), and each HLO op, with flags."""
    an = analyze(prof, by=by, **kwargs)
    # a dict that prints (and shows in Jupyter) as tables; its items are the analysis' own
    return transfer_report(prof, an["transfers"], [r.get("module") for r in an["roofline"]["ops"]])


def memory(prof: Any, by: str = "region", **kwargs: Any) -> dict:
    """Device-memory timeline, peaks (trace, device) and the largest buffers; ``regions``: one
    row per region path (``by="region"``: peak = the highest instance's, allocations summed) or
    per region record (``by="region_instance"``). ``by="module"``: each HLO module's memory
    over its schedule from XLA's buffer assignment (api.module_memory)."""
    if by == "module":
        return module_memory_report(prof, **kwargs)
    return memory_report(prof, analyze(prof, by=by, **kwargs)["memory"])


def devices(prof: Any, **kwargs: Any) -> dict:
    """One row per GPU (kernels, busy and idle time, copies per direction against that
    device's own host link, memory peak, ceilings, launching threads) and the load balance
    between them (``balance``): the analysis' ``devices`` dict, printing as tables."""
    return device_report(prof, analyze(prof, **kwargs)["devices"])
