"""HTML for Jupyter: `_repr_html_` of Profile, its record tables, ops and FPGA candidates.

Small, escaped, no script (notebooks sanitize scripts away): a profile shows its overview and
warnings; a table shows its size and first rows; analysis rows show every column.
"""
from __future__ import annotations

from typing import Any

from fpgaprof.report import _data as D
from fpgaprof.report.html import _generic_cell, esc, fmt_bytes, fmt_num, fmt_pct, fmt_s

STYLE = ("<style>.fpgaprof-nb table{border-collapse:collapse;font-size:12px}"
         ".fpgaprof-nb th,.fpgaprof-nb td{padding:2px 8px;border-bottom:1px solid #ddd;"
         "text-align:right}.fpgaprof-nb th{text-align:left}.fpgaprof-nb .na{color:#8a5a00}"
         ".fpgaprof-nb .warn{color:#8a1f11}</style>")

MAX_ROWS = 20


def _grid(keys: list[str], rows: list[dict], total: int, what: str) -> str:
    out = ["<table><thead><tr>"]
    out += [f"<th>{esc(k)}</th>" for k in keys]
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
    rows = [{k: D._py(cols[k][i]) for k in keys} for i in range(min(n, max_rows))]
    return f'<div class="fpgaprof-nb">{STYLE}{head}{_grid(keys, rows, n, "rows")}</div>'


def rows_html(rows: Any, title: str = "rows", max_rows: int = 50) -> str:
    """Analysis results (ops, candidates: list of objects/dicts or a table)."""
    recs = D.records_of(rows)
    keys: list[str] = []
    for r in recs:
        keys += [k for k in r if k not in keys]
    head = f"<b>{esc(title)}</b>: {len(recs)} rows"
    return (f'<div class="fpgaprof-nb">{STYLE}{head}'
            f'{_grid(keys, recs[:max_rows], len(recs), "rows") if recs else ""}</div>')


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
        ("GPU busy", f'{fmt_s(tot["gpu_busy_s"])} ({fmt_pct(tot["gpu_busy_fraction"])})'),
        ("kernels", f'{fmt_num(tot["kernel_count"])} · {fmt_s(tot["kernel_time_s"])}'),
        ("transfers", f'{fmt_num(tot["transfer_count"])} · {fmt_bytes(tot["transfer_bytes"])} · '
                      f'{fmt_pct(tot["transfer_share_of_wall"])} of wall'),
        ("regions", fmt_num(tot["region_count"])),
        ("dropped records", fmt_num(t["dropped_records"])),
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
        out.append(_grid(keys, s["ops"]["items"][:10], s["ops"]["count"], "ops"))
    if s["warnings"]:
        out.append("<ul>" + "".join(f'<li class="warn">{esc(w)}</li>' for w in s["warnings"])
                   + "</ul>")
    out.append("</div>")
    return "".join(out)


class Rows(list):
    """Analysis rows (objects or dicts) that show as a table in Jupyter and convert with
    to_pandas()."""

    title = "rows"

    def to_pandas(self):
        import pandas as pd
        return pd.DataFrame(D.records_of(self))

    def _repr_html_(self) -> str:
        return rows_html(self, self.title)


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
