"""The dataflow graph of one HLO op: the graph an FPGA pipeline for it must implement.

``dataflow_graph(module_text, op)`` reads the op from the optimized HLO (analysis.hlo). A
fusion (or call, while, conditional) is expanded one level: the instructions of the computation
it calls are the nodes, its parameters are the values arriving from outside and its root the
value leaving; computations called further in (a reducer, a loop body inside) stay collapsed,
named on their caller's node. Any other op is one node with its operands. Every edge carries
the shape and the bytes of the value it moves; an edge crossing the op's boundary (``boundary``:
from outside in, or the result out) is what travels to and from the card. Nodes carry their
source line ("file:line") and JAX op name where the HLO has metadata.

``to_dot(graph)`` writes it in Graphviz's DOT language; ``layout_svg(dot)`` lays it out with
Graphviz's ``dot`` program (the Debian/PyPI package graphviz) and returns the SVG, or None when
``dot`` is not installed (``dot_available()``). docs/reports.md, "Dataflow graphs".
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from fpgaprof.analysis import hlo
from fpgaprof.base.units import fmt_bytes

__all__ = ["dataflow_graph", "to_dot", "layout_svg", "dot_available", "DOT_TIMEOUT_S"]

DOT_TIMEOUT_S = 20
_EXPANDED = ("fusion", "call", "while", "conditional", "async-start")


def _shape_text(shape: Any) -> str:
    """An HLO shape as XLA prints it without layout, e.g. f32[256,256] or (f32[2], s32[])."""
    if shape.dtype == "tuple":
        return "(" + ", ".join(_shape_text(t) for t in shape.tuple) + ")"
    return f"{shape.dtype}[{','.join(str(d) for d in shape.dims)}]"


def _source(ins: Any) -> str:
    return f"{ins.source_file}:{ins.source_line}" if ins.source_line >= 0 else ""


def _node(ins: Any, kind: str) -> dict:
    called = ins.called_computations
    return {
        "id": ins.name,
        "opcode": ins.opcode,
        "kind": kind,  # "op" | "input" | "output"
        "shape": _shape_text(ins.shape),
        "bytes": int(ins.shape.byte_size),
        "source": _source(ins),
        "op_name": ins.op_name,
        "calls": list(called),
    }


def _edge(src: dict, target: str, boundary: bool) -> dict:
    return {
        "source": src["id"],
        "target": target,
        "shape": src["shape"],
        "bytes": src["bytes"],
        "boundary": boundary,
    }


def _expand(comp: Any, outer_operands: list[str], result: dict) -> tuple[dict, list]:
    """Nodes and edges of computation ``comp``: its parameters are the inputs (named after the
    outer operand N for parameter(N) when there is one), its root feeds ``result``."""
    nodes: dict[str, dict] = {}
    edges: list[dict] = []
    inner = comp.instructions
    for i in inner:
        if i.opcode == "parameter":
            n = i.parameter_number
            node = _node(i, "input")
            node["outer"] = outer_operands[n] if 0 <= n < len(outer_operands) else i.name
            nodes[i.name] = node
        else:
            nodes[i.name] = _node(i, "op")
    for i in inner:
        if i.opcode == "parameter":
            continue
        for src in dict.fromkeys(i.operands):
            if src in nodes:
                edges.append(_edge(nodes[src], i.name, nodes[src]["kind"] == "input"))
    root = next((i for i in inner if i.is_root), inner[-1] if inner else None)
    if root is not None:
        nodes[result["id"]] = result
        edges.append(_edge(nodes[root.name], result["id"], True))
    return nodes, edges


def dataflow_graph(module_text: str, op: str | None = None) -> dict:
    """The graph of instruction ``op`` of the HLO module ``module_text`` (None: the module's
    entry computation as the op, e.g. a module export_hlo wrote): ``nodes`` (id, opcode, kind
    "op"/"input"/"output", shape, bytes, source, op_name, calls; inputs also ``outer``: the
    value's name outside), ``edges`` (source, target, shape, bytes, boundary),
    ``boundary_bytes`` (the bytes on boundary edges: each input once, plus the result),
    ``expanded`` (the computation shown, "" when the op is one node). Raises KeyError when the
    module has no instruction ``op``; HloParseError on bad text."""
    mod = hlo.analyze(module_text)
    expanded = ""
    if op is None:
        entry = mod.entry
        root = next((i for i in entry.instructions if i.is_root), entry.instructions[-1])
        expanded = entry.name
        result = {**_node(root, "output"), "id": f"{mod.name} (result)"}
        nodes, edges = _expand(entry, [], result)
        name, opcode, source = mod.name, "module", ""
    else:
        ins = mod.instruction(op)
        name, opcode, source = ins.name, ins.opcode, _source(ins)
        result = {**_node(ins, "output"), "id": f"{ins.name} (result)"}
        called = ins.called_computations
        if ins.opcode in _EXPANDED and called:
            expanded = called[-1] if ins.opcode == "while" else called[0]
            nodes, edges = _expand(mod.computation(expanded), ins.operands, result)
        else:
            nodes = {ins.name: _node(ins, "op")}
            edges = []
            for src in dict.fromkeys(ins.operands):
                try:
                    o = mod.instruction(src)
                except KeyError:
                    continue
                nodes[src] = {**_node(o, "input"), "outer": src}
                edges.append(_edge(nodes[src], ins.name, True))
            nodes[result["id"]] = result
            edges.append(_edge(nodes[ins.name], result["id"], True))
    inputs = {e["source"]: e["bytes"] for e in edges if nodes[e["source"]]["kind"] == "input"}
    outputs = sum(e["bytes"] for e in edges if nodes[e["target"]]["kind"] == "output")
    return {
        "op": name,
        "module": mod.name,
        "opcode": opcode,
        "source": source,
        "expanded": expanded,
        "nodes": list(nodes.values()),
        "edges": edges,
        "boundary_bytes": sum(inputs.values()) + outputs,
    }


def _dot_str(s: str) -> str:
    """A DOT double-quoted string's content: backslashes and quotes escaped, no newlines."""
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def to_dot(graph: dict) -> str:
    """The graph in Graphviz DOT: boundary edges drawn bold red, inputs and the result as
    boxes, tooltips (SVG <title>) with the source line and op name."""
    lines = [
        f'digraph "{_dot_str(graph["op"])}" {{',
        '  graph [rankdir=TB, fontname="Helvetica", fontsize=10];',
        '  node [fontname="Helvetica", fontsize=10, shape=ellipse];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    ids = {n["id"]: f"n{i}" for i, n in enumerate(graph["nodes"])}
    for n in graph["nodes"]:
        if n["kind"] == "input":
            label = f"{n.get('outer') or n['id']}\\n{n['shape']}"
            style = 'shape=box, style="filled", fillcolor="#e8f1fa"'
        elif n["kind"] == "output":
            label = f"result\\n{n['shape']}"
            style = 'shape=box, style="filled", fillcolor="#fdecea"'
        else:
            calls = f"\\ncalls {', '.join(n['calls'])}" if n["calls"] else ""
            label = f"{n['id']}\\n{n['opcode']}{calls}"
            style = 'style="filled", fillcolor="#f5f5f5"'
        tip = " | ".join(x for x in (n["id"], n["op_name"], n["source"]) if x)
        label_esc = "\\n".join(_dot_str(p) for p in label.split("\\n"))
        lines.append(f'  {ids[n["id"]]} [label="{label_esc}", tooltip="{_dot_str(tip)}", {style}];')
    for e in graph["edges"]:
        label = f"{e['shape']}\\n{fmt_bytes(e['bytes'])}"
        label_esc = "\\n".join(_dot_str(p) for p in label.split("\\n"))
        extra = ', color="#c0392b", penwidth=2.2, fontcolor="#c0392b"' if e["boundary"] else ""
        tip = f"{e['source']} -> {e['target']}: {e['shape']}, {e['bytes']} bytes"
        lines.append(
            f'  {ids[e["source"]]} -> {ids[e["target"]]} [label="{label_esc}", '
            f'tooltip="{_dot_str(tip)}"{extra}];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def dot_available() -> bool:
    """Whether Graphviz's ``dot`` program is on the PATH."""
    return shutil.which("dot") is not None


def layout_svg(dot_text: str) -> str | None:
    """The graph laid out by Graphviz's ``dot`` as SVG text (its XML prologue and DOCTYPE
    dropped, ready to inline), or None when ``dot`` is not installed or fails."""
    exe = shutil.which("dot")
    if exe is None:
        return None
    try:
        r = subprocess.run(
            [exe, "-Tsvg"],
            input=dot_text,
            capture_output=True,
            text=True,
            timeout=DOT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0 or "<svg" not in r.stdout:
        return None
    return r.stdout[r.stdout.index("<svg") :]
