"""``prof.memory_report(by="module")``: what each traced HLO module holds in memory over its
schedule, from XLA's buffer assignment and live ranges kept in the trace (computed by the C++
analysis, module_memory.hpp): the peak, what is live at it (buffer, size, producer op, source
line) and the bytes by kind. docs/fpga-model.md, "On-chip sizes from XLA"."""

from __future__ import annotations

from typing import Any

from fpgaprof.analysis import sections
from fpgaprof.analysis.trace_analysis import store_of
from fpgaprof.api.roofline import analyze
from fpgaprof.views.tables import Table

__all__ = ["ModuleMemoryReport", "module_memory_report", "MODULE_DISPLAY", "BUFFER_DISPLAY"]

MODULE_DISPLAY = (
    "module",
    "peak_bytes",
    "peak_instruction",
    "peak_source",
    "parameter_bytes",
    "output_bytes",
    "temporary_bytes",
    "constant_bytes",
    "allocation_count",
)
BUFFER_DISPLAY = ("producer", "size_bytes", "kind", "shape", "start", "end", "source")


class ModuleMemoryReport(dict):
    """``modules``: one row per HLO module with a buffer assignment (Table, largest peak
    first); ``live_at_peak``: per module name, the buffers live at its peak (Table, largest
    first); ``buffers``: per module name, every buffer counted (Table); ``timeline``: per module
    name, ``{"sequence": [...], "live_bytes": [...]}`` over its schedule. Prints as tables."""

    def __str__(self) -> str:
        parts = [str(self["modules"])]
        parts += [str(table) for table in self["live_at_peak"].values()]
        return "\n\n".join(parts)

    __repr__ = __str__


def _module_memories(prof: Any, **kwargs: Any) -> list[dict]:
    """The analysis' ``module_memory`` dicts, largest peak first (ties by module name)."""
    mems: list[dict] = list(analyze(prof, **kwargs)["module_memory"])
    return sorted(mems, key=lambda m: (-m["peak_bytes"], m["module"]))


def module_memory_report(prof: Any, top: int = 10, **kwargs: Any) -> ModuleMemoryReport:
    """The modules' memory as the analysis computed it (its ``module_memory`` list); ``top``
    buffers live at each peak are kept in ``live_at_peak`` (all of them in ``buffers``)."""
    mems = _module_memories(prof, **kwargs)
    modules = Table(
        {
            k: v
            for k, v in m.items()
            if k not in ("live_at_peak", "buffers", "sequence", "live_bytes")
        }
        for m in mems
    )
    modules.title = "HLO modules: memory at the peak (XLA buffer assignment)"
    modules.display = MODULE_DISPLAY
    modules.empty_note = (
        "no module of this trace has XLA's buffer assignment (a trace recorded before fpgaprof "
        "kept it, or XLA did not dump it)"
    )
    live: dict[str, Table] = {}
    buffers: dict[str, Table] = {}
    timeline: dict[str, dict] = {}
    for m in mems:
        t = Table(m["live_at_peak"][:top])
        t.title = f"{m['module']}: live at the peak ({m['peak_bytes']} bytes)"
        t.display = BUFFER_DISPLAY
        live[m["module"]] = t
        b = Table(m["buffers"])
        b.title = f"{m['module']}: buffers"
        b.display = BUFFER_DISPLAY
        buffers[m["module"]] = b
        timeline[m["module"]] = {"sequence": m["sequence"], "live_bytes": m["live_bytes"]}
    return ModuleMemoryReport(
        modules=modules, live_at_peak=live, buffers=buffers, timeline=timeline
    )


# -- report.html / summary.json sections ------------------------------------------------------

SUMMARY_BUFFERS = 12  # buffers named per module in the report (largest first)
SUMMARY_MODULES = 8  # modules shown (largest peak first)
TIMELINE_POINTS = 600  # positions drawn per module; longer schedules keep each bucket's maximum
DATAFLOW_GRAPHS = 3  # candidates drawn as dataflow graphs

_BUFFER_KEYS = ("producer", "size_bytes", "kind", "shape", "start", "end", "op_name", "source")


def _timeline(live_bytes: list) -> list[list[int]]:
    """[position, bytes] points; a schedule longer than TIMELINE_POINTS is cut into buckets,
    each drawn at its first position with its largest value (the peak stays visible)."""
    n = len(live_bytes)
    if n <= TIMELINE_POINTS:
        return [[i, int(b)] for i, b in enumerate(live_bytes)]
    step = -(-n // TIMELINE_POINTS)
    return [[i, int(max(live_bytes[i : i + step]))] for i in range(0, n, step)]


def module_memory_section(prof: Any, **kwargs: Any) -> dict | None:
    """summary.json's ``module_memory``: per HLO module with XLA's buffer assignment (largest
    peak first, SUMMARY_MODULES of them) the peak, the bytes by kind, the live bytes over the
    schedule and the largest buffers with their live spans; None when no module has a buffer
    assignment (then the summary has no such key)."""
    if not any(m.buffer_assignment for m in store_of(prof).hlo_modules):
        return None
    # The overview runs the same (cached) analysis and reports its failure; here a failure
    # only leaves the section out.
    mems, _why = sections.run_analysis(lambda: _module_memories(prof, **kwargs), "module memory")
    if not mems:
        return None
    modules = []
    for m in mems[:SUMMARY_MODULES]:
        row = {
            k: m[k]
            for k in (
                "module",
                "program_id",
                "peak_source",
                "peak_bytes",
                "peak_position",
                "peak_instruction",
                "xla_peak_bytes",
                "parameter_bytes",
                "output_bytes",
                "temporary_bytes",
                "constant_bytes",
                "thread_local_bytes",
                "tuple_table_bytes",
                "allocation_bytes",
                "allocation_count",
                "unplaced_values",
            )
        }
        row["schedule_length"] = len(m["sequence"])
        row["timeline"] = _timeline(m["live_bytes"])
        row["live_at_peak"] = [
            {k: b[k] for k in _BUFFER_KEYS} for b in m["live_at_peak"][:SUMMARY_BUFFERS]
        ]
        row["largest"] = [{k: b[k] for k in _BUFFER_KEYS} for b in m["buffers"][:SUMMARY_BUFFERS]]
        modules.append(row)
    return {
        "available": True,
        "modules": modules,
        "modules_left_out": max(len(mems) - SUMMARY_MODULES, 0),
    }
