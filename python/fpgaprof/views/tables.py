"""How a Profile's tables look: printed (``print()``, the REPL) and in Jupyter.

``Table`` holds the rows of an analysis (prof.ops, prof.roofline(), prof.fpga_candidates(),
fpgaprof.fpga.estimate()); ``rows_text`` and ``rows_html`` draw rows as text and HTML tables,
``table_html`` a record table (prof.kernels, ...), ``install_record_views`` gives the C++ record
tables ``to_pandas()`` and ``_repr_html_``. Values are formatted by column name (base.columns),
as in report.html. HTML is small, escaped, without script (notebooks sanitize scripts away).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fpgaprof.analysis import sections
from fpgaprof.base import records
from fpgaprof.base.columns import (
    STATIC_COST_FIELDS,
    TEXT_COLUMNS,
    TEXT_FIRST,
    bound_mark,
    cell,
    column_order,
    display_label,
    range_text,
    ranged_nominal,
)
from fpgaprof.base.core import core
from fpgaprof.base.markup import esc, html_cell
from fpgaprof.base.text import terminal_safe
from fpgaprof.base.units import fmt_speedup

__all__ = [
    "STYLE",
    "MAX_ROWS",
    "Table",
    "rows_text",
    "rows_html",
    "table_html",
    "grid_html",
    "text_cell",
    "bounded_text",
    "with_source",
    "sub_table",
    "op_rows",
    "OP_DISPLAY",
    "OP_LABELS",
    "install_record_views",
    "TIMESTAMP_COLUMNS",
]

STYLE = (
    "<style>.fpgaprof-nb table{border-collapse:collapse;font-size:12px}"
    ".fpgaprof-nb th,.fpgaprof-nb td{padding:2px 8px;border-bottom:1px solid #ddd;"
    "text-align:right}.fpgaprof-nb th{text-align:left}.fpgaprof-nb .na{color:#8a5a00}"
    ".fpgaprof-nb .warn{color:#8a1f11}.fpgaprof-nb .dim{color:#6b6b70}"
    ".fpgaprof-nb h3{font-size:13px;margin:10px 0 2px}"
    # report.html's memory chart (transfer_report/memory_report views): its CSS, scoped
    ".fpgaprof-nb svg .plot{fill:#fcfcfd;stroke:#ccc}"
    ".fpgaprof-nb svg .tick{font-size:10px;fill:#666}"
    ".fpgaprof-nb svg .axis{font-size:12px;fill:#333}"
    ".fpgaprof-nb svg .memline{fill:none;stroke:#2b7bba;stroke-width:1.5}</style>"
)

MAX_ROWS = 20


def grid_html(
    keys: list[str],
    rows: list[dict],
    total: int,
    what: str,
    labels: Mapping[str, str] | None = None,
) -> str:
    out = ["<table><thead><tr>"]
    out += [f"<th>{esc(display_label(k, labels))}</th>" for k in keys]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append(
            "<tr>"
            + "".join(
                # a 0 that stands for an unknown cost reads "–", as in print() and report.html
                "<td>–</td>" if unknown_cost(k, r) else f"<td>{html_cell(k, r.get(k))[0]}</td>"
                for k in keys
            )
            + "</tr>"
        )
    out.append("</tbody></table>")
    if total > len(rows):
        out.append(
            f"<div>… {total - len(rows)} more {esc(what)} (use .to_pandas() or "
            f".columns() for all)</div>"
        )
    return "".join(out)


def table_html(table: Any, title: str = "records", max_rows: int = MAX_ROWS) -> str:
    """A record table (len + columns()): its size and first rows."""
    n = records.table_len(table)
    head = f"<b>{esc(title)}</b>: {n} rows"
    if n == 0:
        return f'<div class="fpgaprof-nb">{STYLE}{head}</div>'
    cols = records.columns(table)
    keys = list(cols)
    if "start_ns" in cols and "end_ns" in cols and "duration_ns" not in cols:
        # a region or API call reads by its length; the stamps alone make one subtract
        cols = dict(cols)
        cols["duration_ns"] = np.maximum(
            np.asarray(cols["end_ns"], dtype=np.int64)
            - np.asarray(cols["start_ns"], dtype=np.int64),
            0,
        )
        keys.insert(keys.index("end_ns") + 1, "duration_ns")
    # Timestamps are CLOCK_REALTIME ns (docs/records.md), not durations: shown as the integers
    # they are, under their own names, instead of as "1795347461.803 s".
    stamps = [k for k in keys if k in TIMESTAMP_COLUMNS]
    # Index columns hold 0xFFFFFFFF for "none" (docs/records.md): shown as "–", not "4.29 G".
    links = [k for k in keys if k.endswith("_index") or k == "parent"]

    def cell(k: str, v: Any) -> Any:
        if k in stamps:
            return str(int(v))
        if k in links and int(v) == 0xFFFFFFFF:
            return "–"
        return records.to_plain(v)

    rows = [{k: cell(k, cols[k][i]) for k in keys} for i in range(min(n, max_rows))]
    labels = {k: k for k in stamps}
    return f'<div class="fpgaprof-nb">{STYLE}{head}{grid_html(keys, rows, n, "rows", labels)}</div>'


TIMESTAMP_COLUMNS = frozenset({"start_ns", "end_ns", "launch_ns", "timestamp_ns"})


def rows_html(
    rows: Any,
    title: str = "rows",
    max_rows: int = 50,
    labels: Mapping[str, str] | None = None,
    empty_note: str = "",
    first: Sequence[str] = (),
    footer: str = "",
) -> str:
    """Analysis results (ops, candidates: list of objects/dicts or a table), every column in
    column_order(keys, first): the columns print() shows (`first`, else TEXT_FIRST) lead, in
    its order. labels: headers for some columns (else display_label); empty_note: why there
    are no rows; footer: the lines print() shows under the rows (the answer, totals, notes),
    under the grid. A `first` column "source" is made from source_file:source_line."""
    recs = records.records_of(rows)
    if "source" in first:
        recs = with_source(recs)
    keys: list[str] = []
    for r in recs:
        keys += [k for k in r if k not in keys]
    keys = column_order(keys, first, labels)
    head = f"<b>{esc(title)}</b>: {len(recs)} rows"
    if not recs and empty_note:
        head += f' <span class="na">({esc(empty_note)})</span>'
    foot = f'<pre class="dim">{esc(footer.strip(chr(10)))}</pre>' if footer.strip() else ""
    return (
        f'<div class="fpgaprof-nb">{STYLE}{head}'
        f"{grid_html(keys, recs[:max_rows], len(recs), 'rows', labels) if recs else ''}"
        f"{foot}</div>"
    )


TEXT_CELL = 40  # characters; longer cells end in "…"


def _ranged_cell(k: str, row: Mapping) -> str:
    """Column k of `row` with its range, a time in its range's unit (columns.ranged_nominal)."""
    nominal = ranged_nominal(k, row)
    return text_cell(k, row.get(k) if nominal is None else nominal, range_text(k, row))


def text_cell(k: str, v: Any, rng: str = "") -> str:
    if rng:
        return f"{text_cell(k, v)} ({rng})"
    if isinstance(v, str):
        t = v
    elif isinstance(v, (list, dict)):
        t = json.dumps(v)
    elif isinstance(v, (int, float)) and k.lower().endswith("speedup"):
        t = fmt_speedup(v)
    elif isinstance(v, float) and "percent" in k.lower() and math.isfinite(v):
        t = f"{v:.3g} %"  # already in percent (percent_of_roof)
    else:
        t = cell(k, v)[0]
    t = terminal_safe(t, keep="")  # a name's escape sequences and line breaks shown escaped
    if len(t) <= TEXT_CELL:
        return t
    # a source location keeps its end (file name and line), anything else its start
    return "…" + t[-(TEXT_CELL - 1) :] if k == "source" else t[: TEXT_CELL - 1] + "…"


# The columns of a roofline row built on its static cost: a 0 there is no measured zero when
# the cost is unknown (cost_known False), so print() shows "–", as report.html does.
COST_COLUMNS = frozenset((*STATIC_COST_FIELDS, "percent_of_roof", "bytes_accessed"))


def unknown_cost(k: str, row: Mapping) -> bool:
    """Whether cell k of `row` is a 0 that only stands for an unknown static cost: a roofline
    or candidate row with cost_known False, or a prof.ops row (OpStats) with has_cost False."""
    known = row.get("cost_known", row.get("has_cost"))
    return k in COST_COLUMNS and known is False and row.get(k) == 0


def bounded_text(k: str, row: Mapping, text: str) -> str:
    """A cell's text with "≤ " / "≥ " before it where the row is only a bound (bound_mark),
    " ⚠" after a percent of roof above 100 % (the row's roof_note says why), and "–" for a 0
    that rests on an unknown static cost (COST_COLUMNS of a row with cost_known False)."""
    if unknown_cost(k, row):
        return "–"
    mark = bound_mark(k, row)
    if k == "percent_of_roof" and row.get("roof_note"):
        text += " ⚠"
    return mark + text if mark and text != "–" else text


def with_source(recs: list[dict]) -> list[dict]:
    """Rows with a display column "source" ("file:line") made from source_file/source_line
    where they have those and no "source" of their own (copies; the rows are unchanged)."""
    out = []
    for r in recs:
        if "source" not in r and "source_file" in r:
            r = dict(r)
            r["source"] = records.source_location(r) or ""
        out.append(r)
    return out


def rows_text(
    rows: Any,
    title: str = "rows",
    columns: Sequence[str] | None = None,
    max_rows: int = MAX_ROWS,
    empty_note: str = "",
    footer: str = "",
    more: str = ".to_pandas() or .columns()",
    labels: Mapping[str, str] | None = None,
) -> str:
    """Analysis rows as a plain-text table (what print() shows): the title and row count, the
    chosen columns (else the TEXT_FIRST ones the rows have, else their first keys), the first
    max_rows rows, and how many more there are (`more`: where to find them). Values are
    formatted by column name as in report.html (seconds, bytes, shares, "1.91x" speedups);
    headers are display_label(column, labels) (no time unit suffix on auto-scaled columns);
    the rows themselves are unchanged. A requested column "source" is made from
    source_file:source_line when the rows have those."""
    # Rows that are dicts are converted (row_dict) only where shown: the others give only their
    # keys and count (a copy of every row of an estimate of 10^6 ops was ~0.8 GB for 20 shown).
    dict_rows = isinstance(rows, list) and all(isinstance(r, dict) for r in rows)
    recs = rows if dict_rows else records.records_of(rows)
    if not recs:
        return f"{title}: no rows" + (f" ({empty_note})" if empty_note else "") + "\n"
    sourced = bool(columns and "source" in columns)
    keys: list[str] = []
    seen: set[str] = set()
    for r in recs:
        for k in r:
            if k not in seen:
                seen.add(k)
                keys.append(k)
        # with_source's column, after the row's own keys
        if sourced and "source" not in seen and "source_file" in r:
            seen.add("source")
            keys.append("source")
    cols = [c for c in (columns or ()) if c in keys]
    if not cols:
        cols = [k for k in TEXT_FIRST if k in keys][:TEXT_COLUMNS]
    if len(cols) < 3:
        cols = (cols + [k for k in keys if k not in cols])[:TEXT_COLUMNS]
    shown = records.records_of(recs[:max_rows]) if dict_rows else recs[:max_rows]
    if sourced:
        shown = with_source(shown)
    cells = [[bounded_text(c, r, _ranged_cell(c, r)) for c in cols] for r in shown]
    heads = [display_label(c, labels) for c in cols]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(heads)]
    text_col = [all(isinstance(r.get(c), str) or r.get(c) is None for r in shown) for c in cols]

    def line(values: list[str]) -> str:
        return (
            "  "
            + "  ".join(
                v.ljust(w) if left else v.rjust(w) for v, w, left in zip(values, widths, text_col)
            ).rstrip()
        )

    out = [f"{title}: {len(recs)} rows", line(heads)]
    out += [line(row) for row in cells]
    more_rows, more_cols = len(recs) - len(shown), len(keys) - len(cols)
    if more_rows:
        out.append(
            f"  … {more_rows} more row{'s' if more_rows != 1 else ''} (every row and "
            f"column: {more})"
        )
    elif more_cols:
        out.append(f"  ({more_cols} more column{'s' if more_cols != 1 else ''}: {more})")
    if footer:
        out.append(footer)
    return terminal_safe("\n".join(out) + "\n", keep="\n")  # titles and notes may hold names


class Table(list):
    """Rows of an analysis result (dicts, or records such as prof.ops' OpStats), best first.
    ``print(table)`` and the REPL show a text table of its main columns, Jupyter an HTML table of
    every column, ``to_pandas()`` gives a DataFrame and ``columns()`` NumPy columns. ``title``;
    ``display``: the columns shown first (else TEXT_FIRST); ``labels``: headers of some
    columns; ``empty_note``: why there are no rows; ``footer``: a closing line; ``more``: where
    the rows and columns left out of print() are."""

    title = "rows"
    display: tuple = ()
    labels: Mapping[str, str] = {}
    empty_note = ""
    footer = ""
    # where the rows and columns print() leaves out are (the command line names its --json)
    more = ".to_pandas() or .columns()"
    meta: dict[str, Any]  # facts of the whole result where a table has them (fpga_candidates)
    # the keys a row has, for to_pandas()/columns() of a table without rows (a trace without
    # kernels): a DataFrame with those columns and no rows, not one without columns
    schema: tuple = ()

    def _records(self) -> list:
        return [r if isinstance(r, Mapping) else records.row_dict(r) for r in self]

    def __str__(self) -> str:
        return rows_text(
            self,
            self.title,
            self.display,
            empty_note=self.empty_note,
            footer=self.footer,
            more=self.more,
            labels=self.labels,
        )

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame (every column)."""
        import pandas as pd  # optional dependency: only this method needs it

        recs = self._records()
        if not recs and self.schema:
            return pd.DataFrame(columns=list(self.schema))
        return pd.DataFrame(recs)

    def _repr_html_(self) -> str:
        """Jupyter: every column, first rows."""
        return rows_html(
            self,
            self.title,
            labels=self.labels,
            empty_note=self.empty_note,
            first=self.display,
            footer=self.footer,
        )

    # The REPL and IPython's terminal show the table print() shows, not a list of dicts.
    def __repr__(self) -> str:
        return self.__str__()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.__str__() if not cycle else f"{self.title}: …")

    def columns(self) -> dict:
        """Every column as a NumPy object array (None where a row lacks the key)."""
        rows = self._records()
        if not rows:
            return {k: np.array([], dtype=object) for k in self.schema}
        keys: list[str] = []
        for r in rows:
            for k in r:
                if k not in keys:
                    keys.append(k)
        return {k: np.array([r.get(k) for r in rows], dtype=object) for k in keys}


# print(prof.ops): what the op is, where it runs and comes from, its time and its static cost
# (per execution, as the cost model gives it: "FLOPs/exec").
OP_DISPLAY = (
    "hlo_op",
    "module_name",
    "executions",
    "total_ns",
    "mean_ns",
    "flops",
    "bytes_accessed",
    "pattern",
    "source",
)
# Headers of per-execution and whole-trace FLOPs/bytes (prof.ops and the roofline tables use
# the same keys with different meanings: the header says which).
OP_LABELS = {"flops": "FLOPs/exec", "bytes_accessed": "bytes/exec", "bytes": "bytes/exec"}
SUMMARY_OP_LABELS = {
    "flops": "FLOPs/exec",
    "bytes": "bytes/exec",
    "total_s": "total",
    "count": "runs",
}


# The attributes of an OpStats row (the keys records.row_dict gives it, in its order).
OP_COLUMNS = tuple(
    k
    for k in dir(core.attribution.OpStats)
    if not k.startswith("_") and isinstance(getattr(core.attribution.OpStats, k), property)
)


def op_rows(prof: Any, ops: Any) -> Table:
    """prof.ops as Rows: the OP_DISPLAY columns, and why there are none (no GPU kernels at all,
    or kernels none of which could be attributed)."""
    rows = Table(ops)
    rows.title = "HLO ops"
    rows.display = OP_DISPLAY
    rows.labels = OP_LABELS
    rows.schema = OP_COLUMNS
    if not rows:
        try:
            n = len(prof.kernels)
        except Exception:  # noqa: BLE001 - only the note is at stake
            n = None
        gpu = bool(records.attr_or(prof, "gpu_available", False))
        rows.empty_note = sections.empty_reason(n, sections.unattributed_note(n), gpu)
    return rows


def _table_to_pandas(self):
    """The table as a pandas DataFrame (one column per record field, strings resolved)."""
    import pandas as pd

    return pd.DataFrame(self.columns())


def _table_repr_html(self) -> str:
    return table_html(self, type(self).__name__.replace("Table", " records").strip())


def install_record_views(core: Any) -> int:
    """Adds to_pandas() and _repr_html_ to the record table classes of fpgaprof._core (the
    C++ tables have len() and columns(); these two are plain Python on top). Returns how many
    classes got them; classes that already define them keep their own."""
    n = 0
    for name in dir(core):
        cls = getattr(core, name)
        if not (isinstance(cls, type) and name.endswith("Table") and hasattr(cls, "columns")):
            continue
        if not hasattr(cls, "to_pandas"):
            cls.to_pandas = _table_to_pandas  # type: ignore[attr-defined]  # added to a C++ class
        if not hasattr(cls, "_repr_html_"):
            cls._repr_html_ = _table_repr_html  # type: ignore[attr-defined]  # added to a C++ class
        n += 1
    return n


def sub_table(text: str) -> list[str]:
    """A rows_text table as lines inside a report: its title indented by 2, the rest by 4."""
    lines = text.rstrip("\n").splitlines()
    return ["  " + lines[0]] + ["  " + x for x in lines[1:]]
