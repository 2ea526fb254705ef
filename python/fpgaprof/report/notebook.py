"""HTML for Jupyter: `_repr_html_` of Profile, its record tables, ops and FPGA candidates.

Small, escaped, no script (notebooks sanitize scripts away): a profile shows its overview and
warnings; a table shows its size and first rows; analysis rows show every column.
"""
from __future__ import annotations

import html as _html
import json
import math
from typing import Any, Mapping, Sequence

from fpgaprof.report import _data as D
from fpgaprof.report.html import (_generic_cell, display_label, esc, fmt_bytes, fmt_num, fmt_pct,
                                  fmt_s, fmt_speedup)

STYLE = ("<style>.fpgaprof-nb table{border-collapse:collapse;font-size:12px}"
         ".fpgaprof-nb th,.fpgaprof-nb td{padding:2px 8px;border-bottom:1px solid #ddd;"
         "text-align:right}.fpgaprof-nb th{text-align:left}.fpgaprof-nb .na{color:#8a5a00}"
         ".fpgaprof-nb .warn{color:#8a1f11}</style>")

MAX_ROWS = 20


def _grid(keys: list[str], rows: list[dict], total: int, what: str,
          labels: Mapping[str, str] | None = None) -> str:
    out = ["<table><thead><tr>"]
    out += [f"<th>{esc(display_label(k, labels))}</th>" for k in keys]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{_generic_cell(k, r.get(k))[0]}</td>" for k in keys)
                   + "</tr>")
    out.append("</tbody></table>")
    if total > len(rows):
        out.append(f"<div>… {total - len(rows)} more {esc(what)} (use .to_pandas() or "
                   f".columns() for all)</div>")
    return "".join(out)


def table_html(table: Any, title: str = "records", max_rows: int = MAX_ROWS) -> str:
    """A record table (len + columns()): its size and first rows."""
    n = D.table_len(table)
    head = f"<b>{esc(title)}</b>: {n} rows"
    if n == 0:
        return f'<div class="fpgaprof-nb">{STYLE}{head}</div>'
    cols = D.columns(table)
    keys = list(cols)
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
        return D._py(v)

    rows = [{k: cell(k, cols[k][i]) for k in keys} for i in range(min(n, max_rows))]
    labels = {k: k for k in stamps}
    return f'<div class="fpgaprof-nb">{STYLE}{head}{_grid(keys, rows, n, "rows", labels)}</div>'


TIMESTAMP_COLUMNS = frozenset({"start_ns", "end_ns", "launch_ns", "timestamp_ns"})


def rows_html(rows: Any, title: str = "rows", max_rows: int = 50,
              labels: Mapping[str, str] | None = None, empty_note: str = "") -> str:
    """Analysis results (ops, candidates: list of objects/dicts or a table). labels: headers
    for some columns (else display_label); empty_note: why there are no rows."""
    recs = D.records_of(rows)
    keys: list[str] = []
    for r in recs:
        keys += [k for k in r if k not in keys]
    head = f"<b>{esc(title)}</b>: {len(recs)} rows"
    if not recs and empty_note:
        head += f' <span class="na">({esc(empty_note)})</span>'
    return (f'<div class="fpgaprof-nb">{STYLE}{head}'
            f'{_grid(keys, recs[:max_rows], len(recs), "rows", labels) if recs else ""}</div>')


# Columns a printed table shows first (those a row has, at most TEXT_COLUMNS of them): what it is,
# its rank and score, what offloading would give, then time, cost and the roofline.
TEXT_FIRST = ("rank", "op", "region", "name", "score", "workload_speedup", "op_speedup",
              "region_speedup", "time_share", "gpu_time_ns", "time_ns", "total_ns", "fpga_total_s",
              "card_time_s", "transfer_s", "flops", "bytes", "intensity", "percent_of_roof", "bound",
              "pattern", "instances", "executions", "estimate_note")
TEXT_COLUMNS = 10
TEXT_CELL = 40  # characters; longer cells end in "…"


def _text_cell(k: str, v: Any) -> str:
    if isinstance(v, str):
        t = v
    elif isinstance(v, (list, dict)):
        t = json.dumps(v)
    elif isinstance(v, (int, float)) and k.lower().endswith("speedup"):
        t = fmt_speedup(v)
    elif isinstance(v, float) and "percent" in k.lower() and math.isfinite(v):
        t = f"{v:.3g} %"  # already in percent (percent_of_roof)
    else:
        t = _html.unescape(_generic_cell(k, v)[0])
    if len(t) <= TEXT_CELL:
        return t
    # a source location keeps its end (file name and line), anything else its start
    return "…" + t[-(TEXT_CELL - 1):] if k == "source" else t[:TEXT_CELL - 1] + "…"


def _with_source(recs: list[dict]) -> list[dict]:
    """Rows with a display column "source" ("file:line") made from source_file/source_line
    where they have those and no "source" of their own (copies; the rows are unchanged)."""
    out = []
    for r in recs:
        if "source" not in r and "source_file" in r:
            r = dict(r)
            r["source"] = D.source_location(r) or ""
        out.append(r)
    return out


def rows_text(rows: Any, title: str = "rows", columns: Sequence[str] | None = None,
              max_rows: int = MAX_ROWS, empty_note: str = "", footer: str = "",
              more: str = ".to_pandas() or .columns()",
              labels: Mapping[str, str] | None = None) -> str:
    """Analysis rows as a plain-text table (what print() shows): the title and row count, the
    chosen columns (else the TEXT_FIRST ones the rows have, else their first keys), the first
    max_rows rows, and how many more there are (`more`: where to find them). Values are
    formatted by column name as in report.html (seconds, bytes, shares, "1.91x" speedups);
    headers are display_label(column, labels) (no time unit suffix on auto-scaled columns);
    the rows themselves are unchanged. A requested column "source" is made from
    source_file:source_line when the rows have those."""
    recs = D.records_of(rows)
    if not recs:
        return f"{title}: no rows" + (f" ({empty_note})" if empty_note else "") + "\n"
    if columns and "source" in columns:
        recs = _with_source(recs)
    keys: list[str] = []
    for r in recs:
        keys += [k for k in r if k not in keys]
    cols = [c for c in (columns or ()) if c in keys]
    if not cols:
        cols = [k for k in TEXT_FIRST if k in keys][:TEXT_COLUMNS]
    if len(cols) < 3:
        cols = (cols + [k for k in keys if k not in cols])[:TEXT_COLUMNS]
    shown = recs[:max_rows]
    cells = [[_text_cell(c, r.get(c)) for c in cols] for r in shown]
    heads = [display_label(c, labels) for c in cols]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(heads)]
    text_col = [all(isinstance(r.get(c), str) or r.get(c) is None for r in shown) for c in cols]

    def line(values: list[str]) -> str:
        return "  " + "  ".join(v.ljust(w) if left else v.rjust(w)
                                for v, w, left in zip(values, widths, text_col)).rstrip()

    out = [f"{title}: {len(recs)} rows", line(heads)]
    out += [line(row) for row in cells]
    more_rows, more_cols = len(recs) - len(shown), len(keys) - len(cols)
    if more_rows:
        out.append(f"  … {more_rows} more row{'s' if more_rows != 1 else ''} (every row and "
                   f"column: {more})")
    elif more_cols:
        out.append(f"  ({more_cols} more column{'s' if more_cols != 1 else ''}: {more})")
    if footer:
        out.append(footer)
    return "\n".join(out) + "\n"


def profile_html(prof: Any) -> str:
    """Overview of a Profile: device, wall time, GPU busy, kernels, transfers, top kernels,
    warnings. Built from the same summary as report.html (without the FPGA what-if, which
    needs a target: see prof.fpga_candidates)."""
    from fpgaprof.report.summary import collect
    s = collect(prof, environment={})
    t, tot, dev = s["trace"], s["totals"], s.get("device") or {}
    items = [
        ("device", esc(dev.get("name")) if dev else
         f'<span class="na">no GPU: {esc(t["unavailable_reason"])}</span>'),
        ("wall time", fmt_s(t["wall_time_s"])),
        ("GPU busy", f'{fmt_s(tot["gpu_busy_s"])} ({fmt_pct(tot["gpu_busy_fraction"])})'
         if tot["gpu_busy_s"] is not None else "n/a (no GPU)"),
        ("kernels", f'{fmt_num(tot["kernel_count"])} · {fmt_s(tot["kernel_time_s"])} summed'),
        ("transfers", f'{fmt_num(tot["transfer_count"])} · {fmt_bytes(tot["transfer_bytes"])} · '
                      f'{fmt_pct(tot["transfer_share_of_wall"])} of wall'),
        ("device memory peak", fmt_bytes(s["memory"]["peak_bytes"])
         if s["memory"].get("available") else "–"),
        ("regions", fmt_num(tot["region_count"])),
        ("dropped records", fmt_num(t["dropped_records"])),
        ("warnings", fmt_num(len(s["warnings"]))),
    ]
    out = [f'<div class="fpgaprof-nb">{STYLE}<b>fpgaprof Profile</b><table>']
    out += [f"<tr><th>{esc(k)}</th><td style='text-align:left'>{v}</td></tr>" for k, v in items]
    out.append("</table>")
    if s["kernels"].get("available"):
        keys = ["name", "count", "total_s", "mean_s", "share"]
        out.append("<b>top kernels</b>")
        out.append(_grid(keys, s["kernels"]["top"][:10], len(s["kernels"]["top"]), "kernels"))
    if s["ops"].get("available"):
        keys = ["op", "category", "count", "total_s", "flops", "bytes", "source"]
        out.append("<b>top HLO ops</b>")
        out.append(_grid(keys, s["ops"]["items"][:10], s["ops"]["count"], "ops",
                         SUMMARY_OP_LABELS))
    if s["warnings"]:
        out.append("<ul>" + "".join(f'<li class="warn">{esc(w)}</li>' for w in s["warnings"])
                   + "</ul>")
    out.append("</div>")
    return "".join(out)


class Rows(list):
    """Analysis rows (objects or dicts) that show as a table in Jupyter and convert with
    to_pandas(). print() shows `display` columns first (else TEXT_FIRST), headed by `labels`;
    `empty_note` says why there are no rows."""

    title = "rows"
    display: tuple = ()
    labels: Mapping[str, str] = {}
    empty_note = ""

    def to_pandas(self):
        import pandas as pd
        return pd.DataFrame(D.records_of(self))

    def _repr_html_(self) -> str:
        return rows_html(self, self.title, labels=self.labels, empty_note=self.empty_note)

    def __str__(self) -> str:
        return rows_text(self, self.title, self.display, empty_note=self.empty_note,
                         labels=self.labels)


# print(prof.ops): what the op is, where it runs and comes from, its time and its static cost
# (per execution, as the cost model gives it: "FLOPs/exec").
OP_DISPLAY = ("hlo_op", "module_name", "executions", "total_ns", "mean_ns", "flops",
              "bytes_accessed", "pattern", "source")
# Headers of per-execution and whole-trace FLOPs/bytes (prof.ops and the roofline tables use
# the same keys with different meanings: the header says which).
OP_LABELS = {"flops": "FLOPs/exec", "bytes_accessed": "bytes/exec", "bytes": "bytes/exec"}
SUMMARY_OP_LABELS = {"flops": "FLOPs/exec", "bytes": "bytes/exec", "total_s": "total",
                     "count": "runs"}


def op_rows(prof: Any, ops: Any) -> Rows:
    """prof.ops as Rows: the OP_DISPLAY columns, and why there are none (no GPU kernels at all,
    or kernels none of which could be attributed)."""
    rows = Rows(ops)
    rows.title = "HLO ops"
    rows.display = OP_DISPLAY
    rows.labels = OP_LABELS
    if not rows:
        try:
            n = len(prof.kernels)
        except Exception:  # noqa: BLE001 - only the note is at stake
            n = None
        gpu = bool(D._get(prof, "gpu_available", False))
        rows.empty_note = D.empty_reason(n, D.unattributed_note(n), gpu)
    return rows


def _table_to_pandas(self):
    """The table as a pandas DataFrame (one column per record field, strings resolved)."""
    import pandas as pd
    return pd.DataFrame(self.columns())


def _table_repr_html(self) -> str:
    return table_html(self, type(self).__name__.replace("Table", " records").strip())


def install(core: Any) -> int:
    """Adds to_pandas() and _repr_html_ to the record table classes of fpgaprof._core (the
    C++ tables have len() and columns(); these two are plain Python on top). Returns how many
    classes got them; classes that already define them keep their own."""
    n = 0
    for name in dir(core):
        cls = getattr(core, name)
        if not (isinstance(cls, type) and name.endswith("Table") and hasattr(cls, "columns")):
            continue
        if not hasattr(cls, "to_pandas"):
            cls.to_pandas = _table_to_pandas
        if not hasattr(cls, "_repr_html_"):
            cls._repr_html_ = _table_repr_html
        n += 1
    return n
