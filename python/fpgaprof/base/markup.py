"""HTML building blocks shared by report.html and the Jupyter views: escaping, cells formatted
by column name, sortable tables and the "not available" line. Every user-provided string
(kernel, op, region names, paths, warnings) goes through ``esc``."""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any

from fpgaprof.base.columns import cell
from fpgaprof.base.text import terminal_safe

__all__ = ["esc", "html_cell", "html_table", "not_available"]


def esc(x: Any) -> str:
    """`x` as HTML text ("" for None), quotes escaped too (safe in attributes); control
    characters other than tab, newline and carriage return (NUL, ESC: invalid in HTML or
    invisible) and lone surrogates are shown escaped (``\\x00``), as base.text.terminal_safe
    does."""
    text = "" if x is None else str(x)
    return html.escape(terminal_safe(text, keep="\t\n\r\u2028\u2029"), quote=True)


def html_cell(k: str, v: Any) -> tuple[str, Any]:
    """(escaped HTML, sort value) of value `v` in column `k` (columns.cell)."""
    text, value = cell(k, v)
    return esc(text), value


def html_table(
    headers: list[tuple[str, str]], rows: Iterable[list[tuple[str, Any]]], cls: str = ""
) -> str:
    """A sortable table (report.html's script sorts it by a click on a header). headers:
    (label, 'num'|'text'); rows: cells (display html, sort value)."""
    out = [f'<table class="sortable {cls}"><thead><tr>']
    for label, kind in headers:
        out.append(f'<th data-kind="{kind}" tabindex="0">{esc(label)}</th>')
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for (disp, val), (_, kind) in zip(row, headers):
            v = "" if val is None else (f"{val:.9g}" if isinstance(val, float) else str(val))
            out.append(f'<td class="{kind}" data-v="{esc(v)}">{disp}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def not_available(section: Mapping) -> str:
    """The line a section shows instead of its content: "not available: <its reason>"."""
    return f'<p class="na">not available: {esc(section.get("reason", "unknown reason"))}</p>'
