"""HTML of the summary's ``module_memory`` (a memory view in the spirit of XProf's Memory
Viewer: bytes live over the schedule of a chosen module, the peak marked, the largest buffers
as bars over their live spans, what is live at the peak) and ``dataflow`` (each graph laid out
by Graphviz's dot as inline SVG, or its edges as a table where dot is missing) sections of
report.html. Every string from the trace is escaped; styles are inline (no stylesheet change)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fpgaprof.analysis import dataflow
from fpgaprof.base.markup import esc, html_cell, html_table
from fpgaprof.base.units import fmt_bytes

__all__ = ["module_memory_html", "dataflow_html", "MAX_LAYOUT_NODES"]

MAX_LAYOUT_NODES = 250  # larger graphs are listed as edges (a fusion of hundreds of ops)

_KIND_COLOURS = {
    "parameter": "#2b7bba",
    "output": "#d7301f",
    "temporary": "#7a9a01",
    "constant": "#9e6ebd",
}
_W, _X0, _X1 = 860, 80, 840
_CHART_TOP, _CHART_H = 10, 150
_ROW_H = 16


def _x(pos: float, last: int) -> float:
    return _X0 + (_X1 - _X0) * (pos / last if last > 0 else 0.0)


def _chart(m: Mapping) -> str:
    points = m.get("timeline") or []
    if not points:
        return '<p class="dim">no live ranges: the peak is every buffer at once</p>'
    last = max(int(points[-1][0]), 1)
    peak = max(int(m.get("peak_bytes") or 0), 1)

    def y(b: float) -> float:
        return _CHART_TOP + _CHART_H * (1 - b / peak)

    path = [f"M{_x(points[0][0], last):.1f},{y(points[0][1]):.1f}"]
    for pos, b in points[1:]:
        path.append(f"H{_x(pos, last):.1f}V{y(b):.1f}")
    path.append(f"H{_X1:.1f}")
    largest = m.get("largest") or []
    height = _CHART_TOP + _CHART_H + 34 + _ROW_H * len(largest)
    px = _x(int(m.get("peak_position") or 0), last)
    where = m.get("peak_instruction") or "the end of the schedule"
    out = [
        f'<svg width="{_W}" height="{height}" role="img" '
        f'aria-label="bytes live over the schedule of {esc(m.get("module"))}">',
        f'<rect x="{_X0}" y="{_CHART_TOP}" width="{_X1 - _X0}" height="{_CHART_H}" '
        'fill="#fcfcfd" stroke="#ccc"/>',
        f'<text x="{_X0 - 6}" y="{_CHART_TOP + 10}" text-anchor="end" font-size="10" '
        f'fill="#666">{esc(fmt_bytes(peak))}</text>',
        f'<text x="{_X0 - 6}" y="{_CHART_TOP + _CHART_H}" text-anchor="end" font-size="10" '
        'fill="#666">0</text>',
        f'<path d="{"".join(path)}" fill="none" stroke="#2b7bba" stroke-width="1.5"/>',
        f'<line x1="{px:.1f}" y1="{_CHART_TOP}" x2="{px:.1f}" y2="{_CHART_TOP + _CHART_H}" '
        'stroke="#d7301f" stroke-dasharray="4 3"/>',
        f'<circle cx="{px:.1f}" cy="{y(peak):.1f}" r="4" fill="#d7301f">'
        f"<title>peak {esc(fmt_bytes(peak))} at {esc(where)} "
        f"(position {esc(m.get('peak_position'))})</title></circle>",
        f'<text x="{min(px + 6, _X1 - 150):.1f}" y="{_CHART_TOP + 22}" font-size="11" '
        f'fill="#d7301f">peak {esc(fmt_bytes(peak))} at {esc(where)}</text>',
        f'<text x="{(_X0 + _X1) / 2}" y="{_CHART_TOP + _CHART_H + 14}" text-anchor="middle" '
        f'font-size="11" fill="#333">program order (schedule position 0–{last})</text>',
    ]
    top = _CHART_TOP + _CHART_H + 28
    for i, b in enumerate(largest):
        yy = top + i * _ROW_H
        start, end = int(b.get("start", -1)), int(b.get("end", -1))
        colour = _KIND_COLOURS.get(str(b.get("kind")), "#7a7a7a")
        label = f"{b.get('producer')} · {fmt_bytes(b.get('size_bytes'))}"
        tip = (
            f"{b.get('producer')}: {b.get('shape')}, {b.get('size_bytes')} bytes, {b.get('kind')}"
            + (f", {b.get('source')}" if b.get("source") else "")
            + (f", live {start}–{end}" if start >= 0 else ", not placed")
        )
        out.append(
            f'<text x="{_X0 - 6}" y="{yy + 11}" text-anchor="end" font-size="10" '
            f'fill="#333">{esc(fmt_bytes(b.get("size_bytes")))}</text>'
        )
        if start >= 0:
            x0 = _x(start, last)
            w = max(_x(end, last) - x0, 3.0)
            out.append(
                f'<rect x="{x0:.1f}" y="{yy + 2}" width="{w:.1f}" height="{_ROW_H - 4}" '
                f'fill="{colour}" fill-opacity="0.75"><title>{esc(tip)}</title></rect>'
            )
            out.append(
                f'<text x="{min(x0 + 3, _X1 - 120):.1f}" y="{yy + 11}" font-size="10" '
                f'fill="#111">{esc(label)}</text>'
            )
    out.append("</svg>")
    return "".join(out)


_BUFFER_HEADERS = [
    ("buffer (producer)", "text"),
    ("size", "num"),
    ("kind", "text"),
    ("shape", "text"),
    ("live", "text"),
    ("JAX op", "text"),
    ("source", "text"),
]


TAIL_CHARS = 30  # a long JAX op path or source location shows its end, the whole in its title


def _tail_cell(text: Any) -> tuple[str, Any]:
    """One line: a long path's end ("…/vmap()/broadcast_in_dim", "…/parallel_beam.py:450"),
    the whole of it as the title; "–" for none."""
    if not text:
        return "–", ""
    t = str(text)
    if len(t) <= TAIL_CHARS:
        return f'<span class="src">{esc(t)}</span>', t
    return f'<span class="src" title="{esc(t)}">…{esc(t[-(TAIL_CHARS - 1) :])}</span>', t


def _buffer_rows(buffers: list) -> list[list[tuple[str, Any]]]:
    rows = []
    for b in buffers:
        start, end = b.get("start", -1), b.get("end", -1)
        rows.append(
            [
                (f'<code class="src">{esc(b.get("producer"))}</code>', str(b.get("producer"))),
                (esc(fmt_bytes(b.get("size_bytes"))), b.get("size_bytes")),
                html_cell("kind", b.get("kind")),
                (f'<code class="src">{esc(b.get("shape"))}</code>', str(b.get("shape"))),
                (
                    f'<span class="src">{esc(f"{start}–{end}")}</span>'
                    if start is not None and start >= 0
                    else "–",
                    start,
                ),
                _tail_cell(b.get("op_name")),
                _tail_cell(b.get("source")),
            ]
        )
    return rows


def module_memory_html(section: Mapping | None) -> str:
    """The memory view: per module (largest peak first; the first open) its chart and the
    buffers live at its peak."""
    if not section or not section.get("modules"):
        return (
            '<p class="na">not available: no module of this trace has XLA\'s buffer assignment</p>'
        )
    out = [
        '<p class="dim">each module\'s buffers as XLA assigned them, live over its schedule '
        "(XLA's live ranges; a buffer shared by values in place counts once; tuple index "
        "tables and thread-local scratch left out): what an FPGA design of the module must "
        "hold at once at the peak. Bars: the largest buffers over their live spans "
        '(<span style="color:#2b7bba">parameter</span>, '
        '<span style="color:#d7301f">output</span>, '
        '<span style="color:#7a9a01">temporary</span>, '
        '<span style="color:#9e6ebd">constant</span>). docs/fpga-model.md</p>'
    ]
    for i, m in enumerate(section["modules"]):
        kinds = " · ".join(
            f"{k} {fmt_bytes(m.get(k + '_bytes'))}"
            for k in ("parameter", "output", "temporary", "constant")
        )
        xla = (
            f" · XLA's own peak {fmt_bytes(m['xla_peak_bytes'])}" if m.get("xla_peak_bytes") else ""
        )
        at = m.get("peak_instruction") or "the end of the schedule"
        out.append(
            f"<details{' open' if i == 0 else ''}><summary><b>{esc(m.get('module'))}</b>: peak "
            f"{esc(fmt_bytes(m.get('peak_bytes')))} at <code>{esc(at)}</code> "
            f"({esc(m.get('peak_source'))})</summary>"
            f'<p class="dim">{esc(kinds)}{esc(xla)} · {esc(m.get("allocation_count"))} '
            f"allocations, {esc(fmt_bytes(m.get('allocation_bytes')))} in all (thread-local "
            f"{esc(fmt_bytes(m.get('thread_local_bytes')))}, tuple tables "
            f"{esc(fmt_bytes(m.get('tuple_table_bytes')))})</p>"
            + _chart(m)
            + "<h3>live at the peak</h3>"
            + html_table(_BUFFER_HEADERS, _buffer_rows(m.get("live_at_peak") or []), "wide")
            + "</details>"
        )
    left = section.get("modules_left_out")
    if left:
        out.append(
            f'<p class="dim">{esc(left)} more modules not shown '
            '(prof.memory_report(by="module") has all)</p>'
        )
    return "".join(out)


_SVG_DROP = re.compile(r"<!--.*?-->|\s(?:xmlns(?::xlink)?)=\"[^\"]*\"", re.S)

_EDGE_HEADERS = [
    ("from", "text"),
    ("to", "text"),
    ("shape", "text"),
    ("bytes", "num"),
    ("crosses the boundary", "text"),
]


def _edges_table(graph: Mapping) -> str:
    names = {n["id"]: (n.get("outer") or n["id"]) for n in graph["nodes"]}
    rows = [
        [
            (f"<code>{esc(names.get(e['source'], e['source']))}</code>", str(e["source"])),
            (f"<code>{esc(names.get(e['target'], e['target']))}</code>", str(e["target"])),
            (f"<code>{esc(e['shape'])}</code>", str(e["shape"])),
            (esc(fmt_bytes(e["bytes"])), e["bytes"]),
            ("<b>yes</b>" if e["boundary"] else "no", 1 if e["boundary"] else 0),
        ]
        for e in graph["edges"]
    ]
    return html_table(_EDGE_HEADERS, rows)


def dataflow_html(section: Mapping | None, svg_of: Any = None) -> str:
    """Each graph as SVG laid out by Graphviz's dot (``svg_of(dot_text)``, default
    analysis.dataflow.layout_svg), its comments and namespace attributes dropped; where dot is
    missing (``svg_of`` gives None) the page says so and lists the edges as a table."""
    if not section or not section.get("graphs"):
        return '<p class="na">not available: no op with a buffer assignment to draw</p>'
    layout = svg_of or dataflow.layout_svg
    out = [
        f'<p class="dim">{esc(section.get("basis"))}. Each op\'s HLO as the graph an FPGA pipeline '
        "implements: a fusion's instructions (called computations further in collapsed), each "
        "edge with the shape and bytes it carries; "
        '<b style="color:#c0392b">red edges</b> cross the op\'s boundary (what travels to and '
        "from the card). Hover a node for its source line.</p>"
    ]
    for g in section["graphs"]:
        head = (
            f"<h3><code>{esc(g['op'])}</code> ({esc(g['opcode'])}, module "
            f"<code>{esc(g['module'])}</code>)"
            + (f" · {esc(g['source'])}" if g.get("source") else "")
            + f" · {esc(fmt_bytes(g['boundary_bytes']))} cross the boundary</h3>"
        )
        too_big = len(g["nodes"]) > MAX_LAYOUT_NODES
        svg = None if too_big else layout(dataflow.to_dot(g))
        if too_big:
            body = (
                f'<p class="na">{len(g["nodes"])} nodes: more than {MAX_LAYOUT_NODES} are not laid '
                "out in the page (prof.export_hlo writes the whole graph as DOT): its edges as a "
                "table</p>" + _edges_table(g)
            )
        elif svg is not None:
            body = (
                '<div style="overflow-x:auto;max-width:100%">' + _SVG_DROP.sub("", svg) + "</div>"
            )
        else:
            body = (
                '<p class="na">Graphviz\'s dot is not installed (apt-get install graphviz, or '
                "conda/pip graphviz with its binaries): the graph's edges as a table</p>"
                + _edges_table(g)
            )
        out.append(head + body)
    return "".join(out)
