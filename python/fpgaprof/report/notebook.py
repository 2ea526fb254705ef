"""HTML for Jupyter: `_repr_html_` of Profile, its record tables, ops and FPGA candidates.

Small, escaped, no script (notebooks sanitize scripts away): a profile shows its overview and
warnings; a table shows its size and first rows; analysis rows show every column.
"""
from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

from fpgaprof.base.columns import (
    TEXT_COLUMNS,
    TEXT_FIRST,
    bound_mark,
    cell,
    column_order,
    display_label,
    range_text,
)
from fpgaprof.base.markup import esc, html_cell, not_available
from fpgaprof.base.units import fmt_bytes, fmt_num, fmt_pct, fmt_s, fmt_speedup
from fpgaprof.report import _data as D

STYLE = ("<style>.fpgaprof-nb table{border-collapse:collapse;font-size:12px}"
         ".fpgaprof-nb th,.fpgaprof-nb td{padding:2px 8px;border-bottom:1px solid #ddd;"
         "text-align:right}.fpgaprof-nb th{text-align:left}.fpgaprof-nb .na{color:#8a5a00}"
         ".fpgaprof-nb .warn{color:#8a1f11}.fpgaprof-nb .dim{color:#6b6b70}"
         ".fpgaprof-nb h3{font-size:13px;margin:10px 0 2px}"
         # report.html's memory chart (transfer_report/memory_report views): its CSS, scoped
         ".fpgaprof-nb svg .plot{fill:#fcfcfd;stroke:#ccc}"
         ".fpgaprof-nb svg .tick{font-size:10px;fill:#666}"
         ".fpgaprof-nb svg .axis{font-size:12px;fill:#333}"
         ".fpgaprof-nb svg .memline{fill:none;stroke:#2b7bba;stroke-width:1.5}</style>")

MAX_ROWS = 20


def _grid(keys: list[str], rows: list[dict], total: int, what: str,
          labels: Mapping[str, str] | None = None) -> str:
    out = ["<table><thead><tr>"]
    out += [f"<th>{esc(display_label(k, labels))}</th>" for k in keys]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{html_cell(k, r.get(k))[0]}</td>" for k in keys)
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
    if "start_ns" in cols and "end_ns" in cols and "duration_ns" not in cols:
        # a region or API call reads by its length; the stamps alone make one subtract
        import numpy as np
        cols = dict(cols)
        cols["duration_ns"] = np.maximum(np.asarray(cols["end_ns"], dtype=np.int64)
                                         - np.asarray(cols["start_ns"], dtype=np.int64), 0)
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
        return D._py(v)

    rows = [{k: cell(k, cols[k][i]) for k in keys} for i in range(min(n, max_rows))]
    labels = {k: k for k in stamps}
    return f'<div class="fpgaprof-nb">{STYLE}{head}{_grid(keys, rows, n, "rows", labels)}</div>'


TIMESTAMP_COLUMNS = frozenset({"start_ns", "end_ns", "launch_ns", "timestamp_ns"})


def rows_html(rows: Any, title: str = "rows", max_rows: int = 50,
              labels: Mapping[str, str] | None = None, empty_note: str = "",
              first: Sequence[str] = ()) -> str:
    """Analysis results (ops, candidates: list of objects/dicts or a table), every column in
    column_order(keys, first): the columns print() shows (`first`, else TEXT_FIRST) lead, in
    its order. labels: headers for some columns (else display_label); empty_note: why there
    are no rows. A `first` column "source" is made from source_file:source_line."""
    recs = D.records_of(rows)
    if "source" in first:
        recs = _with_source(recs)
    keys: list[str] = []
    for r in recs:
        keys += [k for k in r if k not in keys]
    keys = column_order(keys, first, labels)
    head = f"<b>{esc(title)}</b>: {len(recs)} rows"
    if not recs and empty_note:
        head += f' <span class="na">({esc(empty_note)})</span>'
    return (f'<div class="fpgaprof-nb">{STYLE}{head}'
            f'{_grid(keys, recs[:max_rows], len(recs), "rows", labels) if recs else ""}</div>')


TEXT_CELL = 40  # characters; longer cells end in "…"


def _text_cell(k: str, v: Any, rng: str = "") -> str:
    if rng:
        return f"{_text_cell(k, v)} ({rng})"
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
    if len(t) <= TEXT_CELL:
        return t
    # a source location keeps its end (file name and line), anything else its start
    return "…" + t[-(TEXT_CELL - 1):] if k == "source" else t[:TEXT_CELL - 1] + "…"


def _bounded(k: str, row: Mapping, text: str) -> str:
    """A cell's text with "≤ " / "≥ " before it where the row is only a bound (bound_mark)."""
    mark = bound_mark(k, row)
    return mark + text if mark and text != "–" else text


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
    cells = [[_bounded(c, r, _text_cell(c, r.get(c), range_text(c, r))) for c in cols] for r in shown]
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
        return rows_html(self, self.title, labels=self.labels, empty_note=self.empty_note,
                         first=self.display)

    def __str__(self) -> str:
        return rows_text(self, self.title, self.display, empty_note=self.empty_note,
                         labels=self.labels)

    # The REPL and IPython's terminal show the table print() shows, not a list of objects.
    def __repr__(self) -> str:
        return self.__str__()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.__str__() if not cycle else f"{self.title}: …")


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


# ---- dict results: prof.transfer_report(), prof.memory_report(), prof.device_report() --------


# Headers of the memory views' columns (times: seconds from the trace start).
MEMORY_LABELS = {"peak_bytes": "peak", "peak_in_use_bytes": "peak",
                 "in_use_at_start_bytes": "in use at start",
                 "allocated_bytes": "allocated", "freed_bytes": "freed", "end_bytes": "at the end",
                 "peak_time_s": "peak at", "alloc_s": "alloc at", "free_s": "free at"}


def _sub_table(text: str) -> list[str]:
    """A rows_text table as lines inside a report: its title indented by 2, the rest by 4."""
    lines = text.rstrip("\n").splitlines()
    return ["  " + lines[0]] + ["  " + x for x in lines[1:]]


class ReportDict(dict):
    """A dict result of the analysis that reads as tables: print(), the REPL and IPython's
    terminal show text, Jupyter shows HTML (report.html's section for it). The keys and values
    are the analysis' own, unchanged (json.dumps, ==, ["groups"] work as on the plain dict);
    the views are drawn from `section`, the summary.json section made from it."""

    title = "report"
    section: Mapping = {}

    def _text_lines(self) -> list[str]:
        raise NotImplementedError

    def _body_html(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        keys = ", ".join(self)
        return "\n".join([f"{self.title}:"] + self._text_lines()
                         + [f"  (a dict with keys {keys}; docs/roofline.md)"]) + "\n"

    def __repr__(self) -> str:
        return self.__str__()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.__str__() if not cycle else f"{self.title}: …")

    def _repr_html_(self) -> str:
        from fpgaprof.report import html as H
        body = self._body_html() if self.section.get("available") else not_available(self.section)
        return f'<div class="fpgaprof-nb">{STYLE}<b>{esc(self.title)}</b>{body}</div>'


class TransferReport(ReportDict):
    """prof.transfer_report(): copies per direction, per region path and per HLO op, flags."""

    title = "transfers"

    def _text_lines(self) -> list[str]:
        from fpgaprof._profile import _transfer_lines
        sec = self.section
        # the printed summary's lines, the flags listed here (not "under Warnings")
        lines = ["  " + x.replace("Transfers: ", "", 1) if i == 0 else
                 x.replace("each is listed with its advice under Warnings", "each below")
                 for i, x in enumerate(_transfer_lines({"transfers": sec})[1:])]
        if not sec.get("available"):
            return lines
        regions = sec.get("by_region") or []
        if regions:
            lines += _sub_table(rows_text(
                regions, "by region path (inclusive of nested regions, instances summed)",
                ("region", "instances", "count", "bytes", "busy_s", "kernel_overlap_s",
                 "host_wait_s", "sync_calls"), more="the dict's 'groups'",
                labels={"count": "copies"}))
        lines += [f"  - {f['message']}" for f in sec.get("flags") or [] if f.get("message")]
        return lines

    def _body_html(self) -> str:
        from fpgaprof.report import html as H
        return H._transfers({"transfers": self.section})


class MemoryReport(ReportDict):
    """prof.memory_report(): device memory peak, per device, per region path, largest
    buffers (the timeline arrays stay in the dict: timeline_ns, timeline_in_use_bytes)."""

    title = "device memory"
    wall_s: float | None = None

    def _text_lines(self) -> list[str]:
        from fpgaprof._profile import _memory_lines
        sec = self.section
        lines = [x.replace("Device memory: ", "", 1) for x in
                 _memory_lines({"memory": sec})[1:]]
        lines = ["  " + x for x in lines]
        if not sec.get("available"):
            return lines
        devs = sec.get("devices") or []
        if len(devs) > 1:
            lines += _sub_table(rows_text(devs, "per device", ("device_id", "peak_bytes",
                                                               "peak_time_s", "end_bytes"),
                                          more="the dict's 'devices'", labels=MEMORY_LABELS))
        for rows, title, cols, key in (
                (sec.get("by_region"), "by region path (peak: the highest instance's)",
                 ("region", "instances", "peak_bytes", "in_use_at_start_bytes",
                  "allocated_bytes", "freed_bytes", "allocations", "frees"), "regions"),
                (sec.get("largest"), "largest buffers",
                 ("bytes", "region", "api_call", "thread_id", "device_id", "alloc_s",
                  "free_s"), "largest")):
            if rows:
                lines += _sub_table(rows_text(rows, title, cols, more=f"the dict's {key!r}",
                                              labels=MEMORY_LABELS))
        records = self._record_rows()
        if records:
            lines += _sub_table(rows_text(records, RECORD_TITLE, RECORD_COLUMNS,
                                          more="the dict's 'regions'", labels=MEMORY_LABELS))
        return lines

    def _record_rows(self) -> list[dict]:
        """Per region record rows (by="region_instance": they have an `index`), highest peak
        first; the summary section has only per-path rows."""
        rows = [dict(r) for r in self.get("regions") or [] if "index" in r]
        rows.sort(key=lambda r: (-int(r.get("peak_in_use_bytes", 0)), int(r["index"])))
        return rows

    def _body_html(self) -> str:
        from fpgaprof.report import html as H
        out = H._memory({"memory": self.section, "trace": {"wall_time_s": self.wall_s}})
        records = self._record_rows()
        if records:
            out += (f"<h3>{esc(RECORD_TITLE)}</h3>"
                    + rows_html(records, "region records", first=RECORD_COLUMNS,
                                labels=MEMORY_LABELS))
        return out


class DeviceReport(ReportDict):
    """prof.device_report(): one row per GPU and the load balance between them (the analysis'
    dict: wall_ns, rows, balance)."""

    title = "devices"

    def _text_lines(self) -> list[str]:
        sec = self.section
        if not sec.get("available"):
            return [f"  not available: {sec.get('reason')}"]
        lines = ["  " + sec["balance"]["text"]]
        lines += _sub_table(rows_text(D.device_table_rows(sec), "per device",
                                      tuple(D.DEVICE_LABELS), more="the dict's 'rows'",
                                      labels=D.DEVICE_LABELS))
        lines.append("  (busy = union of the device's kernel, copy and memset intervals; % link "
                     "= its HtoD or DtoH copies' rate in percent of its own host link)")
        return lines

    def _body_html(self) -> str:
        from fpgaprof.report import html as H
        return H._devices({"by_device": self.section})


def device_report(prof: Any, report: Mapping) -> DeviceReport:
    """The device analysis' dict (analyze(...)["devices"]) as a DeviceReport of `prof`; times
    in its views are seconds from the trace start."""
    out = DeviceReport(report)
    out.section = D.devices_section(dict(report), int(D.trace_facts(prof)["start_ns"]))
    return out


# memory_report(by="region_instance"): one row per region record.
RECORD_TITLE = "by region record (peak: bytes in use while it was open)"
RECORD_COLUMNS = ("path", "index", "peak_in_use_bytes", "in_use_at_start_bytes",
                  "allocated_bytes", "freed_bytes", "allocations", "frees")


def transfer_report(prof: Any, report: Mapping, op_modules: list | None = None
                    ) -> TransferReport:
    """The transfer analysis' dict (analyze(...)["transfers"]) as a TransferReport of `prof`
    (op_modules: the module of each roofline op, to name the ops)."""
    out = TransferReport(report)
    copies = D.table_len(D.transfer_table(prof))
    out.section = D.transfers_section(dict(report), copies, op_modules=op_modules)
    return out


def memory_report(prof: Any, report: Mapping) -> MemoryReport:
    """The memory analysis' dict (analyze(...)["memory"]) as a MemoryReport of `prof`; times
    in its views are seconds from the trace start."""
    out = MemoryReport(report)
    facts = D.trace_facts(prof)
    out.section = D.memory_section_of(prof, dict(report), int(facts["start_ns"]))
    out.wall_s = facts.get("wall_time_s")
    return out
