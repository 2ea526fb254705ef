"""The transfer, memory and device sections, as text and as HTML.

``prof.transfer_report()``, ``prof.memory_report()`` and ``prof.device_report()`` return the
analysis' dicts as ``TransferReport``, ``MemoryReport`` and ``DeviceReport``: printed they read
as tables, in Jupyter they show the section of report.html. ``prof.summary()`` and report.html
draw the same sections with the functions here (``transfer_lines``, ``transfers_html``, ...),
each from the section dict of summary.json (analysis.sections), so the numbers agree.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Mapping
from typing import Any

from fpgaprof.analysis import sections
from fpgaprof.base import records
from fpgaprof.base.columns import cell, display_label
from fpgaprof.base.constants import TOP_ROWS
from fpgaprof.base.markup import esc, html_cell, html_table, not_available
from fpgaprof.base.text import terminal_safe
from fpgaprof.base.units import fmt_bytes, fmt_num, fmt_pct, fmt_s
from fpgaprof.views.ranking import op_labels, program_ids
from fpgaprof.views.tables import STYLE, rows_html, rows_text, sub_table

__all__ = [
    "ReportDict",
    "TransferReport",
    "MemoryReport",
    "DeviceReport",
    "transfer_report",
    "memory_report",
    "device_report",
    "transfer_lines",
    "memory_lines",
    "link_text",
    "transfers_html",
    "memory_html",
    "devices_html",
    "energy_device_notes",
    "largest_buffers_html",
    "multi_device",
    "MEMORY_LABELS",
    "RECORD_TITLE",
    "RECORD_COLUMNS",
    "DEVICE_COLOURS",
]


def _t(ns: float) -> str:
    """A duration given in ns, auto-scaled as in every report ("10.3 µs")."""
    return fmt_s(float(ns) / 1e9)


DEVICE_COLOURS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02")


# Headers of the memory views' columns (times: seconds from the trace start).
MEMORY_LABELS = {
    "peak_bytes": "peak",
    "peak_in_use_bytes": "peak",
    "in_use_at_start_bytes": "in use at start",
    "allocated_bytes": "allocated",
    "freed_bytes": "freed",
    "end_bytes": "at the end",
    "peak_time_s": "peak at",
    "alloc_s": "alloc at",
    "free_s": "free at",
}


def _pct(x: float | None) -> str:
    """A percent value (0..100) for the text table's "% link" column: a share above 0 that
    one decimal would show as 0 is "<0.1", as fmt_pct says it."""
    return "n/a" if x is None else fmt_pct(float(x) / 100).removesuffix(" %")


def link_text(t: dict) -> str:
    """The host link's peak and where it comes from, as report.html says it."""
    link = t.get("link_bytes_per_s")
    if not link:
        return (
            "host link peak unknown (no PCIe generation and width for the device, no "
            "`fpgaprof calibrate` measurement): % of link n/a"
        )
    desc = t.get("link_description")
    src = str(t.get("link_source") or "unknown")
    return (
        f"host link peak {link / 1e9:.2f} GB/s ({src}"
        + (f": {desc}" if desc and desc != src else "")
        + ")"
    )


def _one_line(text: str) -> str:
    """A name or a message naming one (a region path, an HLO op) on one line of the text
    views: every control character escaped, line breaks too (``\\x0a``), as the tables do
    (tables.text_cell); the views' own line breaks stay (terminal_safe(keep="\\n") over the
    whole text)."""
    return terminal_safe(text, keep="")


def transfer_lines(summary: dict) -> list[str]:
    """Copies per direction from the transfer analysis (the numbers of summary.json): busy
    time is the union of the copies' intervals, % of link for HtoD and DtoH; the flags."""
    t = summary["transfers"]
    n = int(t.get("count") or 0)
    if not t.get("available"):
        if not n:
            # nothing recorded without a GPU: unknown, as the kernels line says, not 0 copies
            no_gpu = (summary.get("trace") or {}).get("gpu_available") is False
            return ["", "Transfers: – (no GPU data)" if no_gpu else "Transfers: 0"]
        return ["", f"Transfers: {n} (analysis not available: {t.get('reason')})"]
    out = [
        "",
        f"Transfers: {n} {'copy' if n == 1 else 'copies'}, {fmt_bytes(t['bytes'])}, "
        f"busy {_t(t['busy_s'] * 1e9)} "
        f"({_t(t['kernel_overlap_s'] * 1e9)} of it overlapping kernels); the host waited "
        f"{_t(t['host_wait_s'] * 1e9)} in {t['sync_calls']} synchronization calls",
        f"  {link_text(t)}",
        f"  {'direction':10s} {'count':>8s} {'bytes':>14s} {'busy':>11s} {'GB/s':>9s} "
        f"{'% link':>7s} {'pageable':>9s}",
    ]
    for r in t["by_direction"]:
        rate = f"{r['gbps']:9.2f}" if r.get("gbps") is not None else f"{'-':>9s}"
        out.append(
            f"  {r['direction']:10s} {r['count']:8d} {fmt_bytes(r['bytes']):>14s} "
            f"{_t(r['busy_s'] * 1e9):>11s} {rate} {_pct(r.get('link_percent')):>7s} "
            f"{r['pageable_count']:9d}"
        )
    out.append(
        "  (busy = union of the copies' intervals; GB/s = bytes / busy time; % link = "
        "achieved rate in percent of the host link's peak, HtoD and DtoH)"
    )
    ops = t.get("by_op") or []
    if ops:
        left = len(ops) - min(len(ops), 5) + int(t.get("by_op_left_out") or 0)
        out.append(
            "  by HLO op (copies launched inside its XLA thunk): "
            + "; ".join(
                f"{_one_line(name)} {fmt_bytes(r['bytes'])} in {_t(r['busy_s'] * 1e9)}"
                # an op name of several modules with its module ("copy.1 (jit_f)"), and its
                # program id where the module repeats too
                for r, name in zip(ops[:5], op_labels(ops[:5], program_ids(summary)))
            )
            + (f"; {left} more" if left else "")
        )
    flags = t.get("flags") or []
    if flags:
        kinds: dict[str, int] = {}
        for f in flags:
            kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
        out.append(
            f"  Flags: {len(flags)} ("
            + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
            + "); each is listed with its advice under Warnings"
        )
    return out


def memory_lines(summary: dict) -> list[str]:
    """Device memory: the trace's peak (all devices) and bytes still in use at the end."""
    m = summary["memory"]
    if not m.get("available"):
        return ["", f"Device memory: not available ({m.get('reason')})"]
    at = f" at {_t(m['peak_time_s'] * 1e9)}" if m.get("peak_time_s") is not None else ""
    return [
        "",
        f"Device memory: peak {fmt_bytes(m['peak_bytes'])}{at} (all devices), "
        f"{fmt_bytes(m['end_bytes'])} still allocated at the end; "
        f"{m['allocation_count']} allocations, {m['free_count']} frees"
        + (
            f", {m['unmatched_frees']} frees of buffers allocated before the trace"
            if m.get("unmatched_frees")
            else ""
        ),
    ]


def _rate(gbps: float | None) -> str:
    return "–" if gbps is None else fmt_num(float(gbps) * 1e9, "B/s")


def _link_pct(v: float | None) -> str:
    """A percent of the host link (0..100) as HTML: "<0.1 %" for a share above 0 that one
    decimal would show as 0 (fmt_pct), never "0.0 %"."""
    return "n/a" if v is None else esc(fmt_pct(float(v) / 100))


def transfers_html(s: Mapping) -> str:
    t = s["transfers"]
    if not t.get("available"):
        return not_available(t)
    link = t.get("link_bytes_per_s")
    head = (
        f"<p>{fmt_num(t['count'])} {'copy' if t['count'] == 1 else 'copies'} · "
        f"{fmt_bytes(t['bytes'])} · busy "
        f"{fmt_s(t.get('busy_s'))}, of which {fmt_s(t.get('kernel_overlap_s'))} overlap "
        f"kernels · the host waited {fmt_s(t.get('host_wait_s'))} in "
        f"{fmt_num(t.get('sync_calls', 0))} synchronization calls · host link peak "
        + (
            f"{fmt_num(link, 'B/s')} ({esc(t.get('link_source'))}"
            + (
                f": {esc(t.get('link_description'))}"
                if t.get("link_description") not in (None, "", t.get("link_source"))
                else ""
            )
            + ")"
            if link
            else "unknown (link % n/a)"
        )
        + "</p>"
    )
    rows = [
        [
            (esc(r["direction"]), r["direction"]),
            (fmt_num(r["count"]), r["count"]),
            (fmt_bytes(r["bytes"]), r["bytes"]),
            (fmt_s(r["busy_s"]), r["busy_s"]),
            (_rate(r["gbps"]), r["gbps"]),
            (_link_pct(r.get("link_percent")), r.get("link_percent")),
            (fmt_s(r.get("kernel_overlap_s")), r.get("kernel_overlap_s")),
            (fmt_num(r["pageable_count"]), r["pageable_count"]),
            (fmt_num(r["async_count"]), r["async_count"]),
        ]
        for r in t["by_direction"]
    ]
    out = (
        head
        + "<h3>By direction</h3>"
        + html_table(
            [
                ("direction", "text"),
                ("copies", "num"),
                ("bytes", "num"),
                ("busy", "num"),
                ("achieved", "num"),
                ("% of link", "num"),
                ("overlaps kernels", "num"),
                ("pageable", "num"),
                ("async", "num"),
            ],
            rows,
        )
    )
    rows = []
    for r in t["by_region"]:
        dirs = _dir_rates(r)
        rows.append(
            [
                (esc(r["region"]), r["region"]),
                (fmt_num(r["count"]), r["count"]),
                (fmt_bytes(r["bytes"]), r["bytes"]),
                (fmt_s(r["busy_s"]), r["busy_s"]),
                (fmt_s(r.get("kernel_overlap_s")), r.get("kernel_overlap_s")),
                (fmt_s(r.get("host_wait_s")), r.get("host_wait_s")),
                (dirs, dirs),
            ]
        )
    out += (
        '<h3>By region</h3><p class="dim">inclusive: a copy or wait inside a nested '
        "region counts for its enclosing regions too; instances of one region path are "
        "summed</p>"
        + html_table(
            [
                ("region", "text"),
                ("copies", "num"),
                ("bytes", "num"),
                ("busy", "num"),
                ("overlaps kernels", "num"),
                ("host wait", "num"),
                ("by direction", "text"),
            ],
            rows,
        )
    )
    left = t.get("by_region_left_out", 0)
    if left:
        out += (
            f'<p class="dim">{left} more regions not shown (summary.json keeps the first '
            f"{len(t['by_region'])})</p>"
        )
    return out + transfers_by_op_html(t) + transfer_flags_html(t)


def _dir_rates(r: Mapping) -> str:
    """ "HtoD 1.00 MB 2.00 GB/s (3.2 % of link)" per direction of a row."""
    return " · ".join(
        f"{esc(d['direction'])} {fmt_bytes(d['bytes'])} {_rate(d['gbps'])}"
        + (
            f" ({_link_pct(d['link_percent'])} of link)"
            if d.get("link_percent") is not None
            else ""
        )
        for d in r.get("directions", [])
    )


def transfers_by_op_html(t: Mapping) -> str:
    """Copies per HLO op (the op whose XLA thunk launched them), most busy time first."""
    items = list(t.get("by_op") or [])
    head = (
        '<h3>By HLO op</h3><p class="dim">copies launched inside an op\'s XLA thunk range '
        "(e.g. copy-start); copies launched outside every thunk (program inputs and "
        "outputs) have no op</p>"
    )
    if not items:
        return head + '<p class="na">not available: no copy was launched inside an XLA thunk</p>'
    rows = []
    for r in items[:TOP_ROWS]:
        dirs = _dir_rates(r)
        rows.append(
            [
                (esc(r["op"]), r["op"]),
                (esc(r.get("module") or ""), r.get("module") or ""),
                (fmt_num(r["count"]), r["count"]),
                (fmt_bytes(r["bytes"]), r["bytes"]),
                (fmt_s(r["busy_s"]), r["busy_s"]),
                (_rate(r["gbps"]), r["gbps"]),
                (fmt_s(r.get("kernel_overlap_s")), r.get("kernel_overlap_s")),
                (fmt_num(r["pageable_count"]), r["pageable_count"]),
                (dirs, dirs),
            ]
        )
    left = len(items) - len(rows) + int(t.get("by_op_left_out") or 0)
    return (
        head
        + html_table(
            [
                ("HLO op", "text"),
                ("module", "text"),
                ("copies", "num"),
                ("bytes", "num"),
                ("busy", "num"),
                ("achieved", "num"),
                ("overlaps kernels", "num"),
                ("pageable", "num"),
                ("by direction", "text"),
            ],
            rows,
        )
        + (
            f'<p class="dim">{left} more ops with copies not shown (prof.transfer_report() has '
            f"all)</p>"
            if left
            else ""
        )
    )


def transfer_flags_html(t: Mapping) -> str:
    """The transfer flags as a table (each one's message is also a warning)."""
    flags = list(t.get("flags") or [])
    left = int(t.get("flags_left_out") or 0)
    if not flags:
        return ""
    rows = [
        [
            (esc(f["kind"]), f["kind"]),
            (esc(f["scope"]), f["scope"]),
            (esc(f.get("region") or "(whole trace)"), f.get("region") or ""),
            (fmt_num(f["count"]), f["count"]),
            (fmt_bytes(f["bytes"]) if f.get("bytes") else "–", f.get("bytes")),
        ]
        for f in flags
    ]
    return (
        '<h3>Flags</h3><p class="dim">pageable host memory and floods of tiny copies; '
        "each flag is also listed under Warnings with its advice</p>"
        + html_table(
            [
                ("flag", "text"),
                ("scope", "text"),
                ("region", "text"),
                ("copies", "num"),
                ("bytes", "num"),
            ],
            rows,
        )
        + (
            f'<p class="dim">{left} more region flags not shown '
            '(prof.transfer_report()["flags"] has the worst regions)</p>'
            if left
            else ""
        )
    )


def memory_html(s: Mapping) -> str:
    m = s["memory"]
    if not m.get("available"):
        return not_available(m)
    pts = list(m["timeline"])
    facts = (
        f"<p>peak {fmt_bytes(m['peak_bytes'])}"
        + (f" at {fmt_s(m['peak_time_s'])}" if m.get("peak_time_s") is not None else "")
        + f" (all devices together) · {fmt_bytes(m['end_bytes'])} still allocated at the "
        f"end · {fmt_num(m.get('allocation_count'))} allocations, "
        f"{fmt_num(m.get('free_count'))} frees"
        + (
            f" · {fmt_num(m['unmatched_frees'])} frees of buffers allocated before the "
            f"trace ({fmt_bytes(m.get('unmatched_free_bytes'))}) left out"
            if m.get("unmatched_frees")
            else ""
        )
        + "</p>"
    )
    devs = m.get("devices") or []
    if len(devs) > 1:
        facts += html_table(
            [("device", "num"), ("peak", "num"), ("peak at", "num"), ("at the end", "num")],
            [
                [
                    (fmt_num(d["device_id"]), d["device_id"]),
                    (fmt_bytes(d["peak_bytes"]), d["peak_bytes"]),
                    (fmt_s(d.get("peak_time_s")), d.get("peak_time_s")),
                    (fmt_bytes(d["end_bytes"]), d["end_bytes"]),
                ]
                for d in devs
            ],
        )
    if not pts:
        return facts + largest_buffers_html(m.get("largest")) + memory_by_region_html(m)
    # the chart spans the whole trace: nothing in use before the first event, the last value
    # held until the trace ends
    end_s = s["trace"].get("wall_time_s") or 0.0
    if pts[0][0] > 0:
        pts.insert(0, [0.0, 0])
    if end_s > pts[-1][0]:
        pts.append([end_s, pts[-1][1]])
    W, H, L, R, T, B = 760, 220, 70, 20, 14, 36
    tmin = min(p[0] for p in pts)
    tmax = max(p[0] for p in pts)
    span = (tmax - tmin) or 1.0
    vmax = max(max(p[1] for p in pts), 1)

    def X(t: float) -> float:
        return L + (t - tmin) / span * (W - L - R)

    def Y(v: float) -> float:
        return H - B - v / vmax * (H - T - B)

    def step_path(series: list) -> str:
        d = [f"M{X(series[0][0]):.1f},{Y(0):.1f}"]
        prev = 0
        for t, v in series:
            d.append(f"L{X(t):.1f},{Y(prev):.1f}L{X(t):.1f},{Y(v):.1f}")
            prev = v
        return "".join(d)

    # With several devices each gets its own line (held to the trace end like the total).
    dev_paths, legend = [], []
    for k, dv in enumerate(d for d in devs if d.get("timeline")):
        series = [list(p) for p in dv["timeline"]]
        if end_s > series[-1][0]:
            series.append([end_s, series[-1][1]])
        colour = DEVICE_COLOURS[k % len(DEVICE_COLOURS)]
        dev_paths.append(
            f'<path d="{step_path(series)}" fill="none" stroke="{colour}" '
            f'stroke-width="1.2" stroke-dasharray="4 2" class="memdev"/>'
        )
        legend.append(f'<span style="color:{colour}">― device {esc(dv["device_id"])}</span>')
    svg = (
        f'<svg viewBox="0 0 {W} {H}" width="{W}" height="{H}" id="memory">'
        f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" class="plot"/>'
        f'<path d="{step_path(pts)}" class="memline"/>'
        + "".join(dev_paths)
        + f'<text x="{L - 6}" y="{Y(vmax) + 4:.1f}" class="tick" text-anchor="end">'
        f"{fmt_bytes(vmax)}</text>"
        f'<text x="{L - 6}" y="{Y(0) + 4:.1f}" class="tick" text-anchor="end">0</text>'
        f'<text x="{L}" y="{H - B + 16}" class="tick">{fmt_s(tmin)}</text>'
        f'<text x="{W - R}" y="{H - B + 16}" class="tick" text-anchor="end">{fmt_s(tmax)}</text>'
        f'<text x="{(L + W - R) / 2}" y="{H - 6}" class="axis" text-anchor="middle">'
        f"time since trace start (bytes in use, all devices)</text></svg>"
    )
    n_pts = m.get("timeline_points", len(m["timeline"]))
    note = (
        f'<p class="dim">{len(m["timeline"])} of {n_pts} steps drawn (per time bucket its '
        f"first and its highest)</p>"
        if n_pts > len(m["timeline"])
        else ""
    )
    if legend:
        note = (f'<p class="dim">solid: all devices; dashed: {" · ".join(legend)}</p>') + note
    return facts + svg + note + largest_buffers_html(m.get("largest")) + memory_by_region_html(m)


def multi_device(s: Mapping) -> bool:
    """True when the summary's per-device section has more than one device (report.html then
    shows its Devices section, the digest its load-balance line)."""
    d = s.get("by_device") or {}
    return bool(d.get("available")) and int(d.get("count") or 0) > 1


def devices_html(s: Mapping) -> str:
    """The devices side by side (one column each) and the load balance between them."""
    d = s.get("by_device") or {}
    if not d.get("available"):
        return not_available(d)
    items = list(d.get("items") or [])
    directions = []
    for i in items:
        for r in i.get("by_direction") or []:
            if r["direction"] not in directions:
                directions.append(r["direction"])

    def busy(i: Mapping) -> str:
        frac = i.get("busy_fraction")
        pct = 0.0 if frac is None else max(0.0, min(100.0, 100 * float(frac)))
        return (
            f"{fmt_s(i['busy_s'])} ({esc(fmt_pct(frac))} of wall)"
            f'<div class="busybar" title="busy {pct:.1f} %"><div style="width:{pct:.2f}%">'
            f"</div></div>"
        )

    def direction(i: Mapping, name: str) -> str:
        r = next((x for x in i.get("by_direction") or [] if x["direction"] == name), None)
        if r is None:
            return "–"
        return f"{fmt_num(r['count'])} · {fmt_bytes(r['bytes'])} · {_rate(r.get('gbps'))}" + (
            f" · {_link_pct(r['link_percent'])} of link"
            if r.get("link_percent") is not None
            else ""
        )

    def memory(i: Mapping) -> str:
        if i.get("memory_peak_bytes") is None:
            return "–"
        at = (
            f" at {fmt_s(i['memory_peak_time_s'])}"
            if i.get("memory_peak_time_s") is not None
            else ""
        )
        return (
            f"{fmt_bytes(i['memory_peak_bytes'])}{at} · "
            f"{fmt_bytes(i.get('memory_end_bytes'))} at the end"
        )

    def peak(i: Mapping, prec: str) -> str:
        v = ((i.get("ceilings") or {}).get("peak_flops_per_s") or {}).get(prec)
        return "–" if v is None else fmt_num(v, "FLOP/s")

    def link(i: Mapping) -> str:
        c = i.get("ceilings") or {}
        if c.get("link_bytes_per_s") is None:
            return "unknown"
        desc = c.get("link_description")
        return (
            f"{fmt_num(c['link_bytes_per_s'], 'B/s')} ({esc(c.get('link_source'))}"
            + (f": {esc(desc)}" if desc and desc != c.get("link_source") else "")
            + ")"
        )

    def threads(i: Mapping) -> str:
        ts = [
            f"{esc(t['thread_id'])} ({fmt_num(t['kernel_count'])} kernels, "
            f"{fmt_s(t['kernel_time_s'])})"
            for t in i.get("threads") or []
        ]
        if i.get("threads_left_out"):
            ts.append(f"{fmt_num(i['threads_left_out'])} more")
        return "<br>".join(ts) or "–"

    rows: list[tuple[str, Any]] = [
        ("name", lambda i: esc(i.get("name") or "–")),
        ("kernels", lambda i: f"{fmt_num(i['kernel_count'])} · {fmt_s(i['kernel_time_s'])} summed"),
        ("busy", busy),
        (
            "idle",
            lambda i: f"{fmt_s(i['idle_s'])} ({esc(fmt_pct(i.get('idle_fraction')))} of wall)",
        ),
        (
            "copies",
            lambda i: (
                f"{fmt_num(i['copy_count'])} · {fmt_bytes(i['copy_bytes'])} · busy "
                f"{fmt_s(i['copy_busy_s'])}"
            ),
        ),
    ]
    rows += [
        (f"{esc(name)} copies", functools.partial(direction, name=name)) for name in directions
    ]
    rows += [
        ("memsets", lambda i: fmt_num(i["memset_count"])),
        ("memory peak", memory),
        ("fp32 peak", lambda i: peak(i, "fp32")),
        ("tf32 tensor peak", lambda i: peak(i, "tf32_tensor")),
        (
            "DRAM peak",
            lambda i: (
                fmt_num((i.get("ceilings") or {}).get("dram_bytes_per_s"), "B/s")
                if (i.get("ceilings") or {}).get("dram_bytes_per_s")
                else "–"
            ),
        ),
        ("host link", link),
        ("launching threads", threads),
    ]
    head = "".join(f"<th>device {esc(i['device_id'])}</th>" for i in items)
    body = "".join(
        f"<tr><th>{label}</th>" + "".join(f"<td>{fn(i)}</td>" for i in items) + "</tr>"
        for label, fn in rows
    )
    b = d.get("balance") or {}
    return (
        f"<p>{esc(b.get('text'))}</p>"
        f'<table class="devices"><thead><tr><th></th>{head}</tr></thead><tbody>{body}'
        "</tbody></table>"
        '<p class="dim">busy = union of the device\'s kernel, copy and memset intervals; '
        "idle = the rest of the traced wall time; % of link: the copies' rate in percent of "
        "that device's own host link; load balance: busiest / mean busy time over every "
        "device in the trace (1.00 = even)</p>"
    )


def memory_by_region_html(m: Mapping) -> str:
    """Peak bytes in use per region path (the highest instance's), highest first."""
    items = list(m.get("by_region") or [])
    if not items:
        return ""
    rows = [
        [
            (esc(r["region"]), r["region"]),
            (fmt_num(r["instances"]), r["instances"]),
            (fmt_bytes(r["peak_bytes"]), r["peak_bytes"]),
            (fmt_bytes(r["in_use_at_start_bytes"]), r["in_use_at_start_bytes"]),
            (fmt_bytes(r["allocated_bytes"]), r["allocated_bytes"]),
            (fmt_bytes(r["freed_bytes"]), r["freed_bytes"]),
            (fmt_num(r["allocations"]), r["allocations"]),
            (fmt_num(r["frees"]), r["frees"]),
        ]
        for r in items[:TOP_ROWS]
    ]
    left = len(items) - len(rows) + int(m.get("by_region_left_out") or 0)
    return (
        '<h3>By region</h3><p class="dim">peak: the most bytes in use on the device(s) '
        "while an instance of the region path was open (buffers allocated before it "
        "included; the highest instance); allocated and freed: inside it, nested regions "
        "included, summed over its instances</p>"
        + html_table(
            [
                ("region", "text"),
                ("instances", "num"),
                ("peak", "num"),
                ("in use at start", "num"),
                ("allocated", "num"),
                ("freed", "num"),
                ("allocations", "num"),
                ("frees", "num"),
            ],
            rows,
        )
        + (
            f'<p class="dim">{left} more regions not shown (prof.memory_report() has all)</p>'
            if left
            else ""
        )
    )


def largest_buffers_html(rows: list | None) -> str:
    if not rows:
        return ""
    keys = [
        k
        for k in ("bytes", "region", "api_call", "thread_id", "device_id", "alloc_s", "free_s")
        if any(k in r for r in rows)
    ]
    headers = [(display_label(k), "text" if k in ("region", "api_call") else "num") for k in keys]
    return "<h3>Largest buffers</h3>" + html_table(
        headers, [[html_cell(k, r.get(k)) for k in keys] for r in rows]
    )


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
        text = (
            "\n".join(
                [f"{self.title}:"]
                + self._text_lines()
                + [f"  (a dict with keys {keys}; docs/roofline.md)"]
            )
            + "\n"
        )
        return terminal_safe(text, keep="\n")  # region and op names from the trace

    def __repr__(self) -> str:
        return self.__str__()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.__str__() if not cycle else f"{self.title}: …")

    def _repr_html_(self) -> str:
        body = self._body_html() if self.section.get("available") else not_available(self.section)
        return f'<div class="fpgaprof-nb">{STYLE}<b>{esc(self.title)}</b>{body}</div>'


class TransferReport(ReportDict):
    """prof.transfer_report(): copies per direction, per region path and per HLO op, flags."""

    title = "transfers"

    def _text_lines(self) -> list[str]:
        sec = self.section
        # the printed summary's lines, the flags listed here (not "under Warnings")
        lines = [
            "  " + x.replace("Transfers: ", "", 1)
            if i == 0
            else x.replace("each is listed with its advice under Warnings", "each below")
            for i, x in enumerate(transfer_lines({"transfers": sec})[1:])
        ]
        if not sec.get("available"):
            return lines
        regions = sec.get("by_region") or []
        if regions:
            lines += sub_table(
                rows_text(
                    regions,
                    "by region path (inclusive of nested regions, instances summed)",
                    (
                        "region",
                        "instances",
                        "count",
                        "bytes",
                        "busy_s",
                        "kernel_overlap_s",
                        "host_wait_s",
                        "sync_calls",
                    ),
                    more="the dict's 'groups'",
                    labels={"count": "copies"},
                )
            )
        # a flag's message names its region path: escaped whole (a line break in it too)
        lines += [
            f"  - {_one_line(str(f['message']))}"
            for f in sec.get("flags") or []
            if f.get("message")
        ]
        return lines

    def _body_html(self) -> str:
        return transfers_html({"transfers": self.section})


class MemoryReport(ReportDict):
    """prof.memory_report(): device memory peak, per device, per region path, largest
    buffers (the timeline arrays stay in the dict: timeline_ns, timeline_in_use_bytes)."""

    title = "device memory"
    wall_s: float | None = None

    def _text_lines(self) -> list[str]:
        sec = self.section
        lines = [x.replace("Device memory: ", "", 1) for x in memory_lines({"memory": sec})[1:]]
        lines = ["  " + x for x in lines]
        if not sec.get("available"):
            return lines
        devs = sec.get("devices") or []
        if len(devs) > 1:
            lines += sub_table(
                rows_text(
                    devs,
                    "per device",
                    ("device_id", "peak_bytes", "peak_time_s", "end_bytes"),
                    more="the dict's 'devices'",
                    labels=MEMORY_LABELS,
                )
            )
        for rows, title, cols, key in (
            (
                sec.get("by_region"),
                "by region path (peak: the highest instance's)",
                (
                    "region",
                    "instances",
                    "peak_bytes",
                    "in_use_at_start_bytes",
                    "allocated_bytes",
                    "freed_bytes",
                    "allocations",
                    "frees",
                ),
                "regions",
            ),
            (
                sec.get("largest"),
                "largest buffers",
                ("bytes", "region", "api_call", "thread_id", "device_id", "alloc_s", "free_s"),
                "largest",
            ),
        ):
            if rows:
                lines += sub_table(
                    rows_text(rows, title, cols, more=f"the dict's {key!r}", labels=MEMORY_LABELS)
                )
        records = self._record_rows()
        if records:
            lines += sub_table(
                rows_text(
                    records,
                    RECORD_TITLE,
                    RECORD_COLUMNS,
                    more="the dict's 'regions'",
                    labels=MEMORY_LABELS,
                )
            )
        return lines

    def _record_rows(self) -> list[dict]:
        """Per region record rows (by="region_instance": they have an `index`), highest peak
        first; the summary section has only per-path rows."""
        rows = [dict(r) for r in self.get("regions") or [] if "index" in r]
        rows.sort(key=lambda r: (-int(r.get("peak_in_use_bytes", 0)), int(r["index"])))
        return rows

    def _body_html(self) -> str:
        out = memory_html({"memory": self.section, "trace": {"wall_time_s": self.wall_s}})
        records = self._record_rows()
        if records:
            out += f"<h3>{esc(RECORD_TITLE)}</h3>" + rows_html(
                records, "region records", first=RECORD_COLUMNS, labels=MEMORY_LABELS
            )
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
        lines += sub_table(
            rows_text(
                sections.device_table_rows(sec),
                "per device",
                tuple(sections.DEVICE_LABELS),
                more="the dict's 'rows'",
                labels=sections.DEVICE_LABELS,
            )
        )
        lines.append(
            "  (busy = union of the device's kernel, copy and memset intervals; % link "
            "= its HtoD or DtoH copies' rate in percent of its own host link)"
        )
        return lines

    def _body_html(self) -> str:
        return devices_html({"by_device": self.section})


def device_report(prof: Any, report: Mapping) -> DeviceReport:
    """The device analysis' dict (analyze(...)["devices"]) as a DeviceReport of `prof`; times
    in its views are seconds from the trace start."""
    out = DeviceReport(report)
    out.section = sections.devices_section(
        dict(report), int(sections.trace_facts(prof)["start_ns"])
    )
    return out


# memory_report(by="region_instance"): one row per region record.
RECORD_TITLE = "by region record (peak: bytes in use while it was open)"
RECORD_COLUMNS = (
    "path",
    "index",
    "peak_in_use_bytes",
    "in_use_at_start_bytes",
    "allocated_bytes",
    "freed_bytes",
    "allocations",
    "frees",
)


def transfer_report(prof: Any, report: Mapping, op_modules: list | None = None) -> TransferReport:
    """The transfer analysis' dict (analyze(...)["transfers"]) as a TransferReport of `prof`
    (op_modules: the module of each roofline op, to name the ops)."""
    out = TransferReport(report)
    copies = records.table_len(sections.transfer_table(prof))
    out.section = sections.transfers_section(dict(report), copies, op_modules=op_modules)
    return out


def memory_report(prof: Any, report: Mapping) -> MemoryReport:
    """The memory analysis' dict (analyze(...)["memory"]) as a MemoryReport of `prof`; times
    in its views are seconds from the trace start."""
    out = MemoryReport(report)
    facts = sections.trace_facts(prof)
    out.section = sections.memory_section_of(prof, dict(report), int(facts["start_ns"]))
    out.wall_s = facts.get("wall_time_s")
    return out


def balance_text(model: Mapping) -> str | None:
    """The job's load-balance line (text and HTML alike), None for one trace (nothing to balance
    against) or no balance; a rank without a known index says so."""
    b = model.get("balance") or {}
    if b.get("imbalance") is None or model["rank_count"] < 2:
        return None

    def rank(k: str) -> str:
        return "(index unknown)" if b.get(k) is None else str(b[k])

    return (
        f"busiest rank {rank('slowest_rank')} {fmt_s(b['max_busy_s'])}, "
        f"least busy rank {rank('least_busy_rank')} {fmt_s(b['min_busy_s'])}, "
        f"busiest/mean {b['imbalance']:.2f}, "
        f"spread {cell('x_fraction', b['spread_fraction'])[0]} of the busiest"
    )


def unindexed_note(model: Mapping) -> str | None:
    """What a job of traces that name no process is (text and HTML alike): None for a job whose
    every trace has its process index."""
    names = list(model.get("unindexed") or [])
    if not names:
        return None
    n, all_ = len(names), len(names) == model["rank_count"]
    first = names[0]
    folder = str(model.get("folder") or "DIR")
    return (
        f"{'all ' if all_ and n > 1 else ''}{n} of the traces ({', '.join(names[:3])}"
        f"{', ...' if n > 3 else ''}) name no process of a job (no process index: not saved "
        "as a rank of `fpgaprof run` under srun/mpirun/torchrun or of jax.distributed), so "
        "they may be separate runs: the balance, stragglers and clock compare them as ranks of "
        "one job and name them by file; for one run's report give its trace: "
        f"`fpgaprof report {shlex.quote(os.path.join(folder, first))}`"
    )


def energy_device_notes(devices: list, footer: str = "") -> str:
    """What the per-GPU rows rest on where NVML's power reads failed for part of the record
    (no_power_ns): idle W rests on the idle time with a reading (idle_ns), and the
    peak is unknown once the sampler stopped reading power. "" when every read answered."""
    out = ""
    for d in devices:
        lost = int(d.get("no_power_ns") or 0)
        if lost <= 0:
            continue
        idle = (
            f"its idle W rests on the {fmt_s(int(d['idle_ns']) / 1e9)} of idle time with a "
            "power reading"
            if d.get("idle_w") is not None
            else "its idle W is unknown (–)"
        )
        out += (
            f"{'; ' if footer or out else ''}GPU {d['device_id']}: no power reading for "
            f"{fmt_s(lost / 1e9)} of its samples (NVML's power reads failed: the warnings say "
            f"why): {idle}"
            + (
                ", its peak W is unknown (–): the sampler stopped reading power"
                if d.get("peak_w") is None
                else ""
            )
        )
    return out
