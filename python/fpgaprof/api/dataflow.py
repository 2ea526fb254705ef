"""Dataflow graphs of the top FPGA candidates (analysis.dataflow) for report.html and
summary.json, and the graph file written next to an exported op's HLO (``export_dataflow``).
docs/reports.md, "Dataflow graphs"."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from fpgaprof.analysis import dataflow
from fpgaprof.analysis import hlo as hlo_analysis
from fpgaprof.analysis.trace_analysis import store_of
from fpgaprof.base.atomic import write_text_atomic
from fpgaprof.base.errors import HloParseError

__all__ = ["dataflow_section", "export_dataflow", "GRAPHS", "STATIC_OPCODES"]

GRAPHS = 3  # candidates drawn
# Without ranked candidates (no GPU kernels): the entry ops that do the work, by static bytes.
STATIC_OPCODES = ("fusion", "dot", "convolution", "custom-call", "reduce", "scatter", "gather")


def _modules_with_buffers(prof: Any) -> dict[str, str]:
    """Module name -> HLO text, for the modules whose buffer assignment the trace kept."""
    out: dict[str, str] = {}
    for m in store_of(prof).hlo_modules:
        if m.buffer_assignment and m.text:
            out.setdefault(m.name, m.text)
    return out


def _static_picks(texts: Mapping[str, str]) -> list[tuple[str, str]]:
    ranked = []
    for name, text in texts.items():
        try:
            mod = hlo_analysis.analyze(text)
        except HloParseError:
            continue
        for ins in mod.instructions:
            if ins.opcode in STATIC_OPCODES:
                ranked.append((-float(ins.bytes_accessed), name, ins.name))
    return [(n, op) for _, n, op in sorted(ranked)[:GRAPHS]]


def dataflow_section(prof: Any, candidates: Mapping | None) -> dict | None:
    """summary.json's ``dataflow``: the graphs (analysis.dataflow.dataflow_graph) of the first
    GRAPHS op candidates, in the ranking's order, whose module has XLA's buffer assignment in
    the trace and whose HLO can be drawn; without ranked
    candidates (no GPU kernels) the modules' entry ops with the most static bytes (``basis``
    says which). None when no module has a buffer assignment."""
    texts = _modules_with_buffers(prof)
    if not texts:
        return None
    items = list((candidates or {}).get("items") or [])
    picks = [
        (str(c.get("module")), str(c.get("op") or c.get("name")))
        for c in items
        if str(c.get("module")) in texts
    ]
    basis = "FPGA candidates in their ranking's order (what offloading could change, then GPU time)"
    if not picks:
        picks = _static_picks(texts)
        basis = "no ranked candidates (no GPU kernels): the entry ops with the most static bytes"
    graphs: list[dict] = []
    for module, op in picks:  # the first GRAPHS that have HLO to draw
        if len(graphs) >= GRAPHS:
            break
        try:
            graphs.append(dataflow.dataflow_graph(texts[module], op))
        except (KeyError, HloParseError):
            continue
    return {
        "available": bool(graphs),
        "basis": basis,
        "graphs": graphs,
        "layout_engine": "graphviz dot" if dataflow.dot_available() else None,
    }


def export_dataflow(exported_text: str, hlo_path: str | os.PathLike) -> list[str]:
    """Writes the dataflow graph of an op's exported HLO (export_hlo's standalone module, whose
    entry computation is the op) next to it, ``hlo_path``: ``<stem>.dataflow.dot`` always,
    ``<stem>.dataflow.svg`` when Graphviz's dot is installed; returns the paths written."""
    stem = os.path.splitext(os.fspath(hlo_path))[0]
    dot_text = dataflow.to_dot(dataflow.dataflow_graph(exported_text))
    paths = [stem + ".dataflow.dot"]
    write_text_atomic(paths[0], dot_text)
    svg = dataflow.layout_svg(dot_text)
    if svg is not None:
        paths.append(stem + ".dataflow.svg")
        write_text_atomic(paths[1], svg)
    return paths
