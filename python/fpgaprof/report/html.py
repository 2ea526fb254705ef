"""report.html: one self-contained page (inline CSS, JS and SVG; no server, no network).

A renderer of the report layer: rendered server-side from the summary (report.model.collect),
never from a Profile, so the page and summary.json show the same numbers. The transfer, memory
and device sections are the ones a Profile shows in Jupyter (views.sections). The page's
small script only adds interaction (sortable
tables, roofline tooltips) and, once it has run without error, sets
<div id="fpgaprof-status" data-status="ok">: the headless-browser test reads that marker.
Every user-provided string (kernel, op, region names, paths, warnings) is HTML-escaped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from fpgaprof.base.atomic import write_text_atomic
from fpgaprof.base.columns import (
    TOTAL_LABELS,
    display_label,
)
from fpgaprof.base.constants import TOP_ROWS
from fpgaprof.base.diagnostics import warning_text
from fpgaprof.base.markup import esc, html_cell, html_table, not_available
from fpgaprof.base.units import (
    fmt_bytes,
    fmt_j,
    fmt_num,
    fmt_pct,
    fmt_s,
    kernel_display_name,
)
from fpgaprof.report.model import MEASUREMENT_RUNS, measurement_stats
from fpgaprof.views.answer_text import speedup_parts
from fpgaprof.views.memory import dataflow_html, module_memory_html
from fpgaprof.views.ranking import (
    ABOVE_ROOF_STATIC,
    OP_TEXT_COLUMNS,
    REGION_TEXT_COLUMNS,
    SLOW_END_AS_COMPILED_NOTE,
    answer_gpu_time,
    combined_speedup_text,
    enclosing_note,
    energy_text,
    has_no_gpu_time,
    not_estimated_text,
    op_labels,
    ranked_table_html,
    row_imbalance_applied_text,
    source_cell,
)
from fpgaprof.views.sections import (
    devices_html,
    energy_device_notes,
    memory_html,
    multi_device,
    transfers_html,
)

__all__ = [
    "render",
    "answer_html",
    "write_html",
    "ranked_table_html",
    "extra_table_html",
    "transfer_flag_count",
    "CANDIDATE_FIRST",
    "REGION_CANDIDATE_FIRST",
    "CSS",
    "JS",
]

BOUND_COLOURS = {
    "memory": "#2b7bba",
    "compute": "#d7301f",
    "latency": "#7a7a7a",
    "unknown": "#9e6ebd",
}


def _card(label: str, value: str, sub: str = "") -> str:
    return (
        f'<div class="card"><div class="label">{esc(label)}</div>'
        f'<div class="value">{value}</div><div class="sub">{sub}</div></div>'
    )


def _log_ticks(lo: float, hi: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


# ---------------------------------------------------------------------------------------------
# sections


def _overview(s: Mapping) -> str:
    t, tot, dev = s["trace"], s["totals"], s.get("device") or {}
    busy = tot.get("gpu_busy_fraction")
    dev_txt = esc(dev.get("name", "no GPU")) if dev else "no GPU"
    if dev.get("compute_capability_major"):
        dev_txt += (
            f' <span class="dim">sm_{dev["compute_capability_major"]}'
            f"{dev.get('compute_capability_minor', 0)}</span>"
        )
    cards = [
        _card(
            "device",
            dev_txt,
            esc(t["unavailable_reason"])
            if not t["gpu_available"]
            else " · ".join(
                x
                for x in (
                    fmt_bytes(dev.get("global_memory_bytes"))
                    if dev.get("global_memory_bytes")
                    else "",
                    fmt_num(dev.get("peak_dram_bandwidth_bytes_per_s"), "B/s") + " peak"
                    if dev.get("peak_dram_bandwidth_bytes_per_s")
                    else "",
                )
                if x
            )
            if dev
            else "",
        ),
        _card("wall time", fmt_s(t["wall_time_s"]), f"{tot.get('region_count', 0)} regions"),
        _card(
            "GPU busy",
            fmt_s(tot.get("gpu_busy_s")),
            f"{esc(fmt_pct(busy))} of wall · idle {fmt_s(tot.get('gpu_idle_s'))}",
        )
        if tot.get("gpu_busy_s") is not None
        else _card("GPU busy", "n/a (no GPU)", "no GPU activity was traced"),
        _card(
            "kernels", fmt_num(tot.get("kernel_count")), f"{fmt_s(tot.get('kernel_time_s'))} summed"
        ),
        _card(
            "transfers",
            fmt_bytes(tot.get("transfer_bytes")),
            f"{fmt_num(tot.get('transfer_count'))} "
            f"{'copy' if tot.get('transfer_count') == 1 else 'copies'}"
            + (
                f" · busy {fmt_s(tot.get('transfer_busy_s'))}"
                if tot.get("transfer_busy_s") is not None
                else ""
            ),
        ),
        _card(
            "time in transfers",
            esc(fmt_pct(tot.get("transfer_share_of_wall"))),
            f"of wall · {esc(fmt_pct(tot.get('transfer_share_of_gpu_busy')))} of GPU busy",
        )
        if tot.get("gpu_busy_s") is not None
        else _card("time in transfers", "n/a (no GPU)", ""),
        _card(
            "dropped records",
            fmt_num(t["dropped_records"]),
            f"{fmt_num(t['incomplete_records'])} without timestamps",
        ),
        _memory_card(s.get("memory") or {}),
        _card(
            "warnings",
            fmt_num(len(s.get("warnings") or [])),
            f"{fmt_num(transfer_flag_count(s))} of them transfer flags",
        ),
    ]
    bar = ""
    if busy is not None:
        pct = max(0.0, min(100.0, 100 * busy))
        bar = (
            f'<div class="busybar" title="GPU busy {pct:.1f} %"><div style="width:{pct:.2f}%">'
            f'</div></div><div class="dim">GPU busy (kernels, copies, memsets; union of '
            f"intervals) vs idle over the traced wall time</div>"
        )
    return f'<div class="cards">{"".join(cards)}</div>{bar}'


def transfer_flag_count(s: Mapping) -> int:
    """Transfer flags of a summary: each listed flag is one of its warnings (those the
    analysis left out are counted in one more warning, `flags_left_out`)."""
    return len((s.get("transfers") or {}).get("flags") or [])


def _memory_card(m: Mapping) -> str:
    if not m.get("available"):
        return _card("device memory peak", "–", esc(m.get("reason") or ""))
    at = f" at {fmt_s(m['peak_time_s'])}" if m.get("peak_time_s") is not None else ""
    pool = m.get("pool")
    return _card(
        "device memory peak",
        fmt_bytes(m.get("peak_bytes")),
        f"{at.strip()} · {fmt_bytes(m.get('end_bytes'))} at the end"
        + (f" · {esc(pool['note'])}" if pool else ""),
    )


def _roofline_svg(roof: Mapping, device: Mapping | None) -> str:
    pts = [
        p
        for p in roof.get("points", [])
        if p.get("intensity")
        and p.get("achieved_flops_per_s")
        and p["intensity"] > 0
        and p["achieved_flops_per_s"] > 0
    ]
    if not pts:
        return (
            '<p class="na">not available: no op has both FLOPs and bytes with a measured time</p>'
        )
    ceil = roof.get("ceilings") or {}
    peak_bw = (
        ceil.get("dram_bytes_per_s")
        or ceil.get("peak_dram_bandwidth_bytes_per_s")
        or (device or {}).get("peak_dram_bandwidth_bytes_per_s")
    )
    peaks = ceil.get("peak_flops_per_s")
    if not isinstance(peaks, dict):
        peaks = {k: v for k, v in ceil.items() if "flop" in k.lower()}
    # one roof per distinct peak (precisions sharing a pipe rate share a line)
    by_value: dict[float, list[str]] = {}
    for k, v in peaks.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            by_value.setdefault(float(v), []).append(str(k))
    # Only the pipes the ops run on (their precision) when known; else the four highest.
    used = {str(p.get("precision")) for p in pts if p.get("precision")}
    chosen = {v: n for v, n in by_value.items() if used & set(n)} if used else {}
    if not chosen:
        chosen = dict(sorted(by_value.items(), reverse=True)[:4])
    compute_roofs = {"/".join(names): v for v, names in chosen.items()}
    xs = [p["intensity"] for p in pts]
    ys = [p["achieved_flops_per_s"] for p in pts]
    xlo, xhi = min(xs) / 4, max(xs) * 4
    ylo, yhi = min(ys) / 4, max(ys) * 4
    for v in compute_roofs.values():
        yhi = max(yhi, v * 2)
    if peak_bw:
        xlo = min(xlo, min(compute_roofs.values(), default=yhi) / peak_bw / 8)
    W, H, L, R, T, B = 760, 420, 70, 20, 20, 50

    def X(v: float) -> float:
        return L + (math.log10(v) - math.log10(xlo)) / (math.log10(xhi) - math.log10(xlo)) * (
            W - L - R
        )

    def Y(v: float) -> float:
        return (
            H
            - B
            - (math.log10(v) - math.log10(ylo)) / (math.log10(yhi) - math.log10(ylo)) * (H - T - B)
        )

    o = [
        f'<svg id="roofline" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
        f'role="img" aria-label="roofline">'
    ]
    o.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" class="plot"/>')
    for v in _log_ticks(xlo, xhi):
        if xlo <= v <= xhi:
            o.append(
                f'<line x1="{X(v):.1f}" x2="{X(v):.1f}" y1="{T}" y2="{H - B}" class="grid"/>'
                f'<text x="{X(v):.1f}" y="{H - B + 16}" class="tick" text-anchor="middle">'
                f"{fmt_num(v)}</text>"
            )
    for v in _log_ticks(ylo, yhi):
        if ylo <= v <= yhi:
            o.append(
                f'<line x1="{L}" x2="{W - R}" y1="{Y(v):.1f}" y2="{Y(v):.1f}" class="grid"/>'
                f'<text x="{L - 6}" y="{Y(v) + 4:.1f}" class="tick" text-anchor="end">'
                f"{fmt_num(v)}</text>"
            )
    o.append(
        f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle" class="axis">'
        f"arithmetic intensity (FLOP/byte)</text>"
    )
    o.append(
        f'<text x="16" y="{(T + H - B) / 2}" text-anchor="middle" class="axis" '
        f'transform="rotate(-90 16 {(T + H - B) / 2})">achieved FLOP/s</text>'
    )
    o.append(
        f'<clipPath id="plotclip"><rect x="{L}" y="{T}" width="{W - L - R}" '
        f'height="{H - T - B}"/></clipPath><g clip-path="url(#plotclip)">'
    )
    if peak_bw:
        top = max(compute_roofs.values(), default=yhi * 10)
        # memory roof up to the highest compute roof, then each compute roof flat
        x_ridge = top / peak_bw
        o.append(
            f'<line class="roof" x1="{X(xlo):.1f}" y1="{Y(peak_bw * xlo):.1f}" '
            f'x2="{X(x_ridge):.1f}" y2="{Y(top):.1f}"/>'
        )
        o.append(
            f'<text class="rooflabel" x="{X(xlo) + 6:.1f}" y="{Y(peak_bw * xlo) - 6:.1f}">'
            f"DRAM {fmt_num(peak_bw, 'B/s')}</text>"
        )
    for name, v in sorted(compute_roofs.items(), key=lambda kv: -kv[1]):
        # flat from the ridge point (from the left edge when the DRAM roof is unknown)
        xr = v / peak_bw if peak_bw else xlo
        o.append(
            f'<line class="roof" x1="{X(max(xr, xlo)):.1f}" y1="{Y(v):.1f}" '
            f'x2="{X(xhi):.1f}" y2="{Y(v):.1f}"/>'
            f'<text class="rooflabel" x="{X(xhi) - 4:.1f}" y="{Y(v) - 4:.1f}" '
            f'text-anchor="end">{esc(name)} {fmt_num(v, "FLOP/s")}</text>'
        )
    tmax = max((p.get("time_s") or 0) for p in pts) or 1.0
    for p in sorted(pts, key=lambda p: -(p.get("time_s") or 0)):
        r = 3 + 14 * math.sqrt((p.get("time_s") or 0) / tmax)
        bound = str(p.get("bound") or "unknown")
        colour = BOUND_COLOURS.get(bound, BOUND_COLOURS["unknown"])
        tip = (
            f"{p['op']} | {bound}-bound | time {fmt_s(p.get('time_s'))} | "
            f"{fmt_num(p['intensity'])} FLOP/B | {fmt_num(p['achieved_flops_per_s'], 'FLOP/s')}"
            f" | {fmt_num(p.get('achieved_bytes_per_s'), 'B/s')}"
            + (f" | {fmt_pct(p['roof_fraction'])} of roof" if p.get("roof_fraction") else "")
            + (
                f" | measured (counters): {fmt_num(p.get('measured_intensity'))} FLOP/B, "
                f"{fmt_num(p.get('measured_flops'))} FLOP, "
                f"{fmt_bytes(p.get('measured_bytes'))}, "
                f"{fmt_pct(p.get('measured_roof_fraction'))} of roof, "
                f"{p.get('measured_bound') or 'unknown'}-bound, "
                f"counters on {fmt_pct(p.get('measured_coverage'))} of its time"
                if p.get("has_measured")
                else ""
            )
            + (f" | {p['source']}" if p.get("source") else "")
        )
        above = bool(p.get("roof_note"))
        if above:
            tip += f" | {p['roof_note']}"
        o.append(
            f'<circle class="pt{" above" if above else ""}" cx="{X(p["intensity"]):.1f}" '
            f'cy="{Y(p["achieved_flops_per_s"]):.1f}" r="{r:.1f}" fill="{colour}" '
            f'data-tip="{esc(tip)}"><title>{esc(tip)}</title></circle>'
        )
    o.append("</g></svg>")
    legend = " ".join(
        f'<span class="swatch" style="background:{c}"></span>{esc(b)}'
        for b, c in BOUND_COLOURS.items()
    )
    n_above = sum(1 for p in pts if p.get("roof_note"))
    if n_above:
        legend += (
            f' · <span class="swatch above"></span>{n_above} drawn above the roof (dashed ring): '
            "the static byte count includes cache-served reads"
        )
    # A log axis cannot place an op without FLOPs (or without a time): the table below has them.
    # The table lists the first TOP_ROWS points only, and the points are the ROOFLINE_POINTS
    # ops with most time (roof["count"] in all): say how many of the undrawn it shows.
    charted = list(roof.get("points", []))
    undrawn = [i for i, p in enumerate(charted) if p not in pts]
    if undrawn:
        listed = [i for i in undrawn if i < TOP_ROWS]
        above_off = sum(1 for i in listed if charted[i].get("roof_note"))
        of = (
            f"the {len(charted)} with most time of {roof['count']}"
            if roof.get("points_left_out") and isinstance(roof.get("count"), int)
            else f"{len(charted)}"
        )
        where = (
            "the table below lists them"
            if len(listed) == len(undrawn)
            else f"the table below lists {len(listed)} of them, summary.json and prof.ops all"
        )
        legend += (
            f" · {len(undrawn)} of {of} ops not drawn (no FLOPs or no time: {where}"
            + (f", {above_off} of those listed above the roof" if above_off else "")
            + ")"
        )
    note = ""
    if not peak_bw and not compute_roofs:
        note = (
            f'<p class="na">device ceilings not available: '
            f"{esc(roof.get('ceilings_reason') or 'no peak bandwidth or FLOP/s known')}</p>"
        )
    elif not peak_bw:
        note = (
            '<p class="na">DRAM roof not drawn: the device record has no memory clock or '
            "bus width</p>"
        )
    src = (
        "points from the roofline analysis"
        if roof.get("points_from") == "analysis"
        else "points from per-op static cost (XLA cost model) and measured time; bound not computed"
    )
    if ceil.get("architecture"):
        src += f" · ceilings: {ceil['architecture']}"
        srcs = set((ceil.get("flops_source") or {}).values()) | {ceil.get("dram_source")}
        srcs.discard(None)
        if srcs:
            src += f" ({', '.join(sorted(map(str, srcs)))})"
    return (
        f'<div class="legend">{legend} · circle area ∝ time · {esc(src)}</div>'
        f'<div class="svgwrap">{"".join(o)}<div id="tip" class="tip" hidden></div></div>'
        f"{note}"
    )


def _roofline_table(roof: Mapping) -> str:
    """The points as a table: static cost (XLA cost model) and, where hardware counters were
    collected, the measured values beside them."""
    pts = list(roof.get("points") or [])
    measured = any(p.get("has_measured") for p in pts)
    # FLOPs and bytes of every execution together (the ops table shows one execution's)
    headers = [
        ("HLO op", "text"),
        ("time", "num"),
        ("FLOPs (total)", "num"),
        ("bytes (total)", "num"),
        ("FLOP/B", "num"),
        ("FLOP/s", "num"),
        ("B/s", "num"),
        ("% of roof", "num"),
        ("bound", "text"),
    ]
    if measured:
        headers += [
            ("measured FLOPs (total)", "num"),
            ("measured bytes (total)", "num"),
            ("measured FLOP/B", "num"),
            ("measured % of roof", "num"),
            ("measured bound", "text"),
            ("measured coverage", "num"),
        ]
    rows = []
    for p in pts[:TOP_ROWS]:
        row = [
            (esc(p["op"]), p["op"]),
            (fmt_s(p.get("time_s")), p.get("time_s")),
            (fmt_num(p.get("flops")), p.get("flops")),
            (fmt_bytes(p.get("bytes")), p.get("bytes")),
            (fmt_num(p.get("intensity")), p.get("intensity")),
            (fmt_num(p.get("achieved_flops_per_s")), p.get("achieved_flops_per_s")),
            (fmt_num(p.get("achieved_bytes_per_s")), p.get("achieved_bytes_per_s")),
            _roof_cell(p.get("roof_fraction"), p.get("roof_note")),
            (esc(p.get("bound") or ""), p.get("bound") or ""),
        ]
        if measured:
            mb = p.get("measured_bound") or ""
            row += [
                (fmt_num(p.get("measured_flops")), p.get("measured_flops")),
                (fmt_bytes(p.get("measured_bytes")), p.get("measured_bytes")),
                (fmt_num(p.get("measured_intensity")), p.get("measured_intensity")),
                (esc(fmt_pct(p.get("measured_roof_fraction"))), p.get("measured_roof_fraction")),
                (esc(mb), mb),
                (esc(fmt_pct(p.get("measured_coverage"))), p.get("measured_coverage")),
            ]
        rows.append(row)
    note = (
        "static cost from the XLA cost model; measured values from hardware counters "
        "(kernel replay) beside them, over the kernels that have counters (measured "
        "coverage: their share of the op's time)"
        if measured
        else "static cost from the XLA cost model (no hardware counters in this trace: "
        "trace(counters=True) adds measured values)"
    )
    left = len(pts) - len(rows) + int(roof.get("points_left_out") or 0)
    total = roof.get("count", len(pts))
    return (
        f'<h3>Points</h3><p class="dim">{esc(note)}</p>'
        + html_table(headers, rows, "wide")
        + (
            f'<p class="dim">{left} more of {total} ops not shown'
            + (
                f" (the chart draws the {len(pts)} with most time)"
                if roof.get("points_left_out")
                else ""
            )
            + "</p>"
            if left
            else ""
        )
    )


def _roof_cell(frac: Any, note: Any) -> tuple[str, Any]:
    """A "% of roof" cell; above 100 % flagged, with the reason as its title and in a fold."""
    if not note:
        return esc(fmt_pct(frac)), frac
    return (
        f'<span class="above" title="{esc(note)}">{esc(fmt_pct(frac))} ⚠</span>'
        f'<details class="note"><summary>why above</summary>{esc(note)}</details>',
        frac,
    )


def _point_cells(p: Mapping) -> list[tuple[str, Any]]:
    """time, kernels, FLOPs, bytes, FLOP/B, FLOP/s, B/s, % of roof, bound, cost coverage."""
    b = p.get("bound") or ""
    return [
        (fmt_s(p.get("time_s")), p.get("time_s")),
        (fmt_num(p.get("kernel_count")), p.get("kernel_count")),
        (fmt_num(p.get("flops")), p.get("flops")),
        (fmt_bytes(p.get("bytes")), p.get("bytes")),
        (fmt_num(p.get("intensity")), p.get("intensity")),
        (fmt_num(p.get("achieved_flops_per_s")), p.get("achieved_flops_per_s")),
        (fmt_num(p.get("achieved_bytes_per_s")), p.get("achieved_bytes_per_s")),
        _roof_cell(
            p.get("roof_fraction"),
            ABOVE_ROOF_STATIC if (p.get("roof_fraction") or 0) > 1 else "",
        ),
        (esc(b), b),
        (esc(fmt_pct(p.get("cost_coverage"))), p.get("cost_coverage")),
    ]


_POINT_HEADERS = [
    ("kernel time", "num"),
    ("kernels", "num"),
    ("FLOPs (total)", "num"),
    ("bytes (total)", "num"),
    ("FLOP/B", "num"),
    ("FLOP/s", "num"),
    ("B/s", "num"),
    ("% of roof", "num"),
    ("bound", "text"),
    ("cost known for", "num"),
]


def _roofline_totals(roof: Mapping) -> str:
    """The whole trace and each region path as roofline points (a table; the chart is the
    ops'): every kernel, FLOPs and bytes from the static cost of the attributed ones."""
    out = (
        '<h3>Whole trace and regions</h3><p class="dim">all kernels of the trace / of each '
        "region path (nested regions included, instances summed); FLOPs and bytes from the "
        'static cost of the kernels attributed to an HLO op ("cost known for": their share '
        "of the kernel time)</p>"
    )
    trace = roof.get("trace")
    br = roof.get("by_region") or {}
    if trace is None and (
        not br or (not br.get("available") and br.get("reason") == roof.get("reason"))
    ):
        return ""  # an older summary, or the op roofline said why already (no kernels)
    rows = []
    if trace:
        rows.append([("(whole trace)", "")] + _point_cells(trace))
    items = list(br.get("items") or [])
    shown = TOP_ROWS - len(rows)  # the trace's row counts: no table has more than TOP_ROWS
    for r in items[:shown]:
        rows.append([(esc(r["region"]), r["region"])] + _point_cells(r))
    out += html_table([("region", "text")] + _POINT_HEADERS, rows, "wide") if rows else ""
    if not br.get("available"):
        out += not_available(br) if br else ""
    left = len(items) - min(len(items), shown) + int(br.get("items_left_out") or 0)
    if left:
        out += (
            f'<p class="dim">{left} more region paths not shown '
            '(prof.roofline(by="region") has all)</p>'
        )
    return out


def _ops(s: Mapping) -> str:
    ops = s["ops"]
    if not ops.get("available"):
        return not_available(ops)
    rows = []
    items = ops["items"]
    energy = _energy_measured(s)
    for r in items[:TOP_ROWS]:
        bound = r.get("bound") or ""
        rows.append(
            [
                (esc(r["op"]), r["op"]),
                (esc(r.get("module") or ""), r.get("module") or ""),
                (esc(r.get("category") or ""), r.get("category") or ""),
                (fmt_num(r["count"]), r["count"]),
                (fmt_s(r["total_s"]), r["total_s"]),
                (fmt_s(r["mean_s"]), r["mean_s"]),
                *([(fmt_j(r.get("gpu_energy_j")), r.get("gpu_energy_j"))] if energy else []),
                (fmt_num(r.get("flops")), r.get("flops")),
                (fmt_bytes(r.get("bytes")), r.get("bytes")),
                (esc(r.get("pattern") or ""), r.get("pattern") or ""),
                (esc(bound), bound),
                (source_cell(r.get("source") or ""), r.get("source") or ""),
            ]
        )
    shown_left = len(items) - len(rows)
    left = shown_left + ops.get("rows_left_out", 0)
    where = "summary.json and prof.ops" if shown_left else "prof.ops"
    return html_table(
        [
            ("HLO op", "text"),
            ("module", "text"),
            ("category", "text"),
            ("runs", "num"),
            ("total", "num"),
            ("mean", "num"),
            *([("GPU energy (attributed)", "num")] if energy else []),
            ("FLOPs/exec", "num"),
            ("bytes/exec", "num"),
            ("pattern", "text"),
            ("bound", "text"),
            ("source", "text"),
        ],
        rows,
        "wide",
    ) + (f'<p class="dim">{left} more ops not shown (in {where})</p>' if left else "")


def _kernel_cell(r: dict) -> str:
    """A kernel's name: a mangled C++ symbol shown demangled and shortened, the whole demangled
    name and the symbol as recorded on hover."""
    full = str(r.get("demangled") or r["name"])
    if full == r["name"]:
        return f"<code>{esc(r['name'])}</code>"
    short = kernel_display_name(str(r["name"]), full)
    return f'<code title="{esc(full)}&#10;{esc(r["name"])}">{esc(short)}</code>'


def _kernels(s: Mapping) -> str:
    k = s["kernels"]
    if not k.get("available"):
        return not_available(k)
    rows = [
        [
            (_kernel_cell(r), r["name"]),
            (fmt_num(r["count"]), r["count"]),
            (fmt_s(r["total_s"]), r["total_s"]),
            (esc(fmt_pct(r["share"])), r["share"]),
            (fmt_s(r["mean_s"]), r["mean_s"]),
            (fmt_s(r["min_s"]), r["min_s"]),
            (fmt_s(r["max_s"]), r["max_s"]),
        ]
        for r in k["top"]
    ]
    left = k.get("rows_left_out", 0)
    return html_table(
        [
            ("kernel", "text"),
            ("count", "num"),
            ("total", "num"),
            ("share", "num"),
            ("mean", "num"),
            ("min", "num"),
            ("max", "num"),
        ],
        rows,
    ) + (f'<p class="dim">{left} more kernels not shown</p>' if left else "")


def _regions(s: Mapping) -> str:
    r = s["regions"]
    if not r.get("available"):
        return not_available(r)
    items = r["items"]
    energy = _energy_measured(s)
    rows = [
        [
            (esc(x.get("path") or x["name"]), x.get("path") or x["name"]),
            (fmt_num(x["count"]), x["count"]),
            (fmt_s(x["wall_s"]), x["wall_s"]),
            (fmt_s(x.get("gpu_s")), x.get("gpu_s")),
            *(
                [
                    (fmt_j(x.get("gpu_energy_j")), x.get("gpu_energy_j")),
                    (esc(fmt_pct(x.get("gpu_energy_coverage"))), x.get("gpu_energy_coverage")),
                ]
                if energy
                else []
            ),
        ]
        for x in items[:TOP_ROWS]
    ]
    left = len(items) - min(len(items), TOP_ROWS) + r.get("rows_left_out", 0)
    return html_table(
        [
            ("region (path)", "text"),
            ("count", "num"),
            ("wall", "num"),
            ("GPU time (kernels + copies + memsets; summed, nested incl.)", "num"),
            *(
                [
                    ("GPU energy (measured over the windows, every sampled GPU)", "num"),
                    ("sampled", "num"),
                ]
                if energy
                else []
            ),
        ],
        rows,
    ) + (
        f'<p class="dim">{left} more region paths not shown (summary.json has {len(items)})</p>'
        if left
        else ""
    )


def _energy_measured(s: Mapping) -> bool:
    e = s.get("energy")
    return isinstance(e, Mapping) and bool(e.get("available"))


def _energy(s: Mapping) -> str:
    """The GPU energy section: the totals and how the attribution splits them, then one row per
    GPU (docs/energy.md)."""
    e = s.get("energy")
    if not isinstance(e, Mapping):
        return ""
    if not e.get("available"):
        return not_available(e)
    update = e.get("update_period_s")
    head = (
        f"<p>{esc(fmt_j(e['total_j']))} measured through NVML (sampled every "
        f"{esc(fmt_s(e['sample_period_s']))}; energy counter update period "
        f"{esc(fmt_s(update) if update else 'unknown')}). Of it, the per-op attribution gives "
        f"{esc(fmt_j(e['unattributed_j']))} to kernels without an HLO op, "
        f"{esc(fmt_j(e['copies_j']))} to copies and memsets and "
        f"{esc(fmt_j(e['idle_j']))} to idle time; the ops and regions tables show the rest "
        "beside their time.</p>"
    )
    rows = [
        [
            (fmt_num(d["device_id"]), d["device_id"]),
            (fmt_j(d["joules"]), d["joules"]),
            (fmt_num(d["mean_w"], " W"), d["mean_w"]),
            (fmt_num(d["peak_w"], " W"), d["peak_w"]),
            (fmt_num(d.get("idle_w"), " W"), d.get("idle_w")),
            (fmt_s(int(d.get("idle_ns") or 0) / 1e9), d.get("idle_ns")),
            (fmt_num(d["samples"]), d["samples"]),
            (esc(_counter_text(d)), _counter_text(d)),
        ]
        for d in e["devices"]
    ]
    return (
        head
        + html_table(
            [
                ("GPU", "num"),
                ("energy", "num"),
                ("mean", "num"),
                ("peak", "num"),
                ("idle", "num"),
                ("idle time", "num"),
                ("samples", "num"),
                ("from", "text"),
            ],
            rows,
        )
        + (
            f'<p class="dim">{esc(notes)}</p>'
            if (notes := energy_device_notes(e["devices"]))
            else ""
        )
    )


def _counter_text(d: Mapping) -> str:
    if not d.get("has_counter"):
        return "power readings (no energy counter)"
    if d.get("flat_counter"):
        return "power readings (the counter never changed)"
    back = d.get("backwards_intervals") or 0
    return "energy counter" + (f" ({back} intervals from power: it went backwards)" if back else "")


# The columns read first: those print(prof.fpga_candidates()) shows (rank, the op, its score
# and what offloading it would give), in its order; then notebook.column_order's (TEXT_FIRST,
# then every other score input in the analysis' own order).
CANDIDATE_FIRST = OP_TEXT_COLUMNS + ("card_time_s", "transfer_s", "source")


# Region candidates: the same, for fpgaprof.region() paths.
REGION_CANDIDATE_FIRST = REGION_TEXT_COLUMNS + (
    "estimated_share",
    "card_time_s",
    "transfer_s",
    "memory_efficiency",
    "module_calls",
    "top_op",
)


def _region_candidates(c: Mapping) -> str:
    r = c.get("regions")
    if not isinstance(r, Mapping):
        return ""
    head = (
        '<h3>Regions as offload units</h3><p class="dim">each fpgaprof.region() path with all '
        "its ops on the card and data crossing the link at its jitted calls; nested paths "
        'overlap, so their gains do not add up (docs/fpga-model.md, "Regions")</p>'
    )
    if not r.get("available"):
        return head + not_available(r)
    left = r.get("items_left_out", 0)
    return (
        head
        + ranked_table_html(r["items"], REGION_CANDIDATE_FIRST, TOTAL_LABELS)
        + (
            f'<p class="dim">{left} more regions not shown '
            f'(prof.fpga_candidates(by="region") has all '
            f"{r.get('count', len(r['items']) + left)})</p>"
            if left
            else ""
        )
    )


def _candidates(s: Mapping) -> str:
    c = s["candidates"]
    head = f"<p>target card: <b>{esc(c.get('target'))}</b>"
    wi = c.get("what_if") or {}
    combined = combined_speedup_text(wi, "this card")
    if combined:
        head += f" · {esc(combined)}"
    if wi.get("not_estimated_count"):
        # summary.json counts the ops without GPU time over every row; an older one only
        # has the rows it lists
        no_time = c.get("no_gpu_time_count")
        if not isinstance(no_time, int):
            no_time = sum(has_no_gpu_time(r) for r in c.get("items") or [])
        head += f" · {esc(not_estimated_text(wi, no_time))}"
        if wi.get("bounded_count"):
            head += (
                f"; {esc(wi['bounded_count'])} of them bounded (≥ card time, ≤ speedup: "
                "estimate_basis)"
            )
        if wi.get("ruled_out_count"):
            ro_s = float(wi.get("ruled_out_gpu_ns") or 0) / 1e9
            head += (
                f", {esc(wi['ruled_out_count'])} ({fmt_s(ro_s)}) ruled out: no gain even at "
                "the fast end of the bound"
            )
    head += "</p>"
    head += (
        '<p class="dim">each estimate with its range under it (every constant of the card model at '
        "the ends of its measured spread); as compiled: the op accesses card memory as XLA "
        "compiled "
        "it; restructured: a dataflow design reading each input once and writing each output once, "
        "data-dependent accesses served on chip where their array fits; scenario: which of the two "
        "gains (docs/fpga-model.md, docs/fpga-validation.md)</p>"
    )
    if not c.get("available"):
        return head + not_available(c) + _region_candidates(c)
    items = c["items"]
    left = c.get("items_left_out", 0)
    return (
        head
        + ranked_table_html(items, CANDIDATE_FIRST, TOTAL_LABELS)
        + (
            f'<p class="dim">{left} more candidates not shown (prof.fpga_candidates() has all '
            f"{c.get('count', len(items) + left)})</p>"
            if left
            else ""
        )
        + _region_candidates(c)
    )


def _measurements(s: Mapping) -> str:
    """One row per (operation, volume size) over every run (measurement_stats; computed from
    the listed measurements for a summary written before it existed), best TOP_ROWS shown."""
    ms = s.get("measurements") or []
    st = s.get("measurement_stats")
    if not isinstance(st, Mapping):
        st = measurement_stats(ms)
    items = list(st.get("items") or [])
    if not items:
        return (
            '<p class="na">not available: no measurements (wrap operations in '
            'fpgaprof.region("op/size"))</p>'
        )
    rows = [
        [
            (esc(m.get("operation")), m.get("operation") or ""),
            (fmt_num(m.get("volume_size")), m.get("volume_size")),
            (fmt_num(m.get("runs")), m.get("runs")),
            (fmt_s(m.get("first")), m.get("first")),
            (fmt_s(m.get("median")), m.get("median")),
            (fmt_s(m.get("min")), m.get("min")),
            (fmt_s(m.get("max")), m.get("max")),
            (fmt_s(m.get("total")), m.get("total")),
        ]
        for m in items[:TOP_ROWS]
    ]
    left = len(items) - len(rows) + int(st.get("items_left_out") or 0)
    runs = int(st.get("runs") or 0)
    not_listed = s.get("measurements_left_out")
    not_listed = max(runs - len(ms), 0) if not_listed is None else int(not_listed)
    pairs = len(items) + int(st.get("items_left_out") or 0)
    return (
        f'<p class="dim">{fmt_num(runs)} runs in {fmt_num(pairs)} (operation, volume size) '
        f"pair{'s' if pairs != 1 else ''}"
        + (
            f"; summary.json lists the first {MEASUREMENT_RUNS} runs of each in "
            f"measurements, the other {fmt_num(not_listed)} only in these figures "
            "(measurements_left_out)"
            if not_listed
            else ""
        )
        + "</p>"
        + html_table(
            [
                ("operation", "text"),
                ("volume size", "num"),
                ("runs", "num"),
                ("first run", "num"),
                ("median", "num"),
                ("min", "num"),
                ("max", "num"),
                ("total", "num"),
            ],
            rows,
        )
        + (
            f'<p class="dim">{left} more (operation, volume size) pairs not shown '
            f"(summary.json measurement_stats has {len(items)})</p>"
            if left
            else ""
        )
    )


VERDICT_CLASS = {
    "gains": "v-gain",
    "only restructured": "v-restr",
    "no": "v-no",
    "unknown: bound only": "v-unk",
    "unknown: not estimated": "v-unk",
}


def _answer_speedup(i: Mapping) -> str:
    figure, rest = speedup_parts(i)
    if figure == "–":
        return figure
    return f"<b>{esc(figure)}</b>" + (f' <span class="dim">{esc(rest)}</span>' if rest else "")


def answer_html(s: Mapping) -> str:
    """The answer first (summary.json's `answer`): per operation and size, verdict, best card,
    speedup with its range and why, then what it rests on; `answer["see"]` ({"href", "text",
    "note"}) adds a link, `answer["lead"]` a sentence before it."""
    a = s.get("answer") or {}
    see = a.get("see")
    link = (
        f'<p class="see">→ <a href="{esc(see["href"])}">{esc(see.get("text") or see["href"])}</a>'
        + (f" — {esc(see['note'])}" if see.get("note") else "")
        + "</p>"
        if isinstance(see, Mapping) and see.get("href")
        else ""
    )
    lead = f'<p class="lead">{esc(a["lead"])}</p>' if a.get("lead") else ""
    if not a.get("available"):
        return lead + link + not_available(a if a else {"reason": "no answer in this summary"})
    held = list(a.get("items") or [])
    counts: dict[str, int] = {}
    for i in held:
        counts[str(i.get("verdict"))] = counts.get(str(i.get("verdict")), 0) + 1
    items = held[:TOP_ROWS]  # no table of the page holds more rows
    unit = "operation" if a.get("unit") == "region" else "HLO op"
    summary_line = ", ".join(f"{n} {esc(v)}" for v, n in counts.items())
    rows = []
    # HLO ops (a trace without regions): one op name in several modules told apart
    names = op_labels(items) if a.get("unit") != "region" else None
    for k, i in enumerate(items):
        v = str(i.get("verdict") or "")
        name = names[k] if names else str(i.get("operation") or "")
        rows.append(
            [
                (esc(name), name),
                (f"{esc(i['size'])}³" if i.get("size") else "–", i.get("size") or 0),
                (esc(answer_gpu_time(i)), i.get("gpu_time_s")),
                (f'<span class="{VERDICT_CLASS.get(v, "v-unk")}">{esc(v)}</span>', v),
                (esc(i.get("best_card") or "–"), i.get("best_card") or ""),
                (_answer_speedup(i), i.get("speedup")),
                (esc(energy_text(i)), energy_text(i)),
                (esc(i.get("reason") or ""), i.get("reason") or ""),
            ]
        )
    headers = [
        (unit, "text"),
        ("size", "num"),
        ("GPU time (kernels)", "num"),
        ("verdict", "text"),
        ("best card", "text"),
        ("speedup (range)", "num"),
        ("energy verdict, card / GPU energy", "text"),
        ("why", "text"),
    ]
    in_summary, left = len(held) - len(items), int(a.get("count") or 0) - len(held)
    rests = (a.get("rests_on") or {}).get("text") or ""
    return (
        lead + f"<p>per {esc(unit)} and size, the best of {len(a.get('cards') or [])} cards "
        f"({esc(', '.join(a.get('cards') or []))}): {summary_line}</p>"
        + html_table(headers, rows)
        + (f'<p class="dim">{in_summary} more in summary.json</p>' if in_summary > 0 else "")
        + (
            f'<p class="dim">{left} more with less GPU time in prof.fpga_candidates()</p>'
            if left > 0
            else ""
        )
        + (f'<p class="dim">{esc(enclosing_note(a))}</p>' if a.get("enclosing_left_out") else "")
        + (
            f'<p class="dim">{esc(SLOW_END_AS_COMPILED_NOTE)}</p>'
            if any(i.get("slow_end_as_compiled") for i in items)
            else ""
        )
        + (
            f'<p class="dim">{esc(given)}</p>'
            if (given := row_imbalance_applied_text(a.get("row_imbalance")))
            else ""
        )
        + (f'<p class="rests"><b>rests on</b>: {esc(rests)}</p>' if rests else "")
        + link
    )


def _warnings(s: Mapping) -> str:
    ws = s.get("warnings") or []
    if not ws:
        return '<p class="ok">no warnings</p>'
    return (
        '<ul class="warnings">' + "".join(f"<li>{esc(warning_text(w))}</li>" for w in ws) + "</ul>"
    )


def _environment(s: Mapping) -> str:
    e = s.get("environment") or {}
    devs = e.get("devices") or []
    return (
        f'<p class="dim">backend {esc(e.get("backend") or "–")} · jax '
        f"{esc(e.get('jax_version') or '–')} · mbirjax {esc(e.get('mbirjax_version') or '–')}"
        f" · devices {esc(', '.join(map(str, devs)) or '–')}"
        + (f" · driver {esc(e['driver_version'])}" if e.get("driver_version") else "")
        + (f" · CUPTI {esc(e['cupti_version'])}" if e.get("cupti_version") else "")
        + (" (from the trace META)" if e.get("source") == "trace META" else "")
        + " · fpgaprof "
        f"{esc(s.get('generated_by', {}).get('version'))} · trace "
        f"<code>{esc(s['trace'].get('path') or '(in memory)')}</code></p>"
    )


CSS = """
:root{--fg:#1d1d1f;--dim:#6b6b70;--bg:#fff;--line:#e3e3e8;--acc:#2b7bba}
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);
background:var(--bg);margin:0 auto;max-width:1100px;padding:18px 24px 60px}
h1{font-size:22px;margin:6px 0}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid
var(--line);padding-bottom:4px}h3{font-size:14px;margin:14px 0 6px}
.dim{color:var(--dim);font-size:12px}.na{color:#8a5a00;background:#fff7e6;padding:6px 10px;
border-radius:6px}.ok{color:#1a7f37}
nav a{margin-right:12px;color:var(--acc);text-decoration:none;font-size:13px}
.cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid var(--line);border-radius:8px;
padding:8px 12px;min-width:130px}.card .label{color:var(--dim);font-size:12px}
.card .value{font-size:18px;font-weight:600}.card .sub{color:var(--dim);font-size:12px}
.busybar{height:10px;background:#eee;border-radius:5px;margin:12px 0 2px;overflow:hidden}
.busybar div{height:100%;background:var(--acc)}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{padding:4px 8px;
border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{cursor:pointer;user-select:none;background:#fafafa;position:sticky;top:0}
th.asc::after{content:" ▲"}th.desc::after{content:" ▼"}td.num{text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}code{font-size:12px;word-break:break-all}
table.wide{display:block;overflow-x:auto}
.warnings li{color:#8a1f11}
svg .plot{fill:#fcfcfd;stroke:#ccc}svg .grid{stroke:#eee}svg .tick{font-size:10px;fill:#666}
svg .axis{font-size:12px;fill:#333}svg .roof{stroke:#333;stroke-width:1.5}
svg .rooflabel{font-size:10px;fill:#333}svg .pt{fill-opacity:.7;stroke:#fff;stroke-width:1}
svg .pt:hover{stroke:#000;stroke-width:2}svg .memline{fill:none;stroke:var(--acc);stroke-width:1.5}
.svgwrap{position:relative;display:inline-block}.tip{position:absolute;background:#222;color:#fff;
font-size:12px;padding:4px 8px;border-radius:4px;pointer-events:none;max-width:420px}
.legend{font-size:12px;color:var(--dim);margin-bottom:4px}.swatch{display:inline-block;width:10px;
height:10px;border-radius:5px;margin:0 3px 0 8px}
#fpgaprof-status{font-size:11px;color:var(--dim);margin-top:30px}
details.note{font-size:12px;max-width:22em}details.note summary{white-space:nowrap;
overflow:hidden;text-overflow:ellipsis;cursor:pointer;color:var(--dim)}
.above{color:#8a1f11;font-weight:600}svg .pt.above{stroke:#8a1f11;stroke-width:2;
stroke-dasharray:3 2}.swatch.above{background:#fff;border:2px dashed #8a1f11;width:8px;height:8px}
.v-gain{color:#1a7f37;font-weight:600}.v-restr{color:#9a6700;font-weight:600}
.v-no{color:#8a1f11;font-weight:600}.v-unk{color:#6b6b70;font-weight:600}
code.src,span.src{white-space:nowrap;word-break:normal}
.lead{font-size:16px;font-weight:600}.see{font-size:15px}.rests{font-size:13px}
"""

# The page's only script: error collector first, then sorting and tooltips, then the marker.
JS = r"""
(function(){
  var st=document.getElementById('fpgaprof-status');
  var errs=[];
  window.onerror=function(msg,src,line){errs.push(String(msg)+' @'+line);
    st.setAttribute('data-status','error');st.textContent='script error: '+errs.join('; ');};
  function sortTable(th){
    var table=th.closest('table'),tbody=table.tBodies[0];
    var idx=Array.prototype.indexOf.call(th.parentNode.children,th);
    var num=th.getAttribute('data-kind')==='num';
    var dir=th.classList.contains('desc')?1:-1;
    Array.prototype.forEach.call(th.parentNode.children,function(h){h.classList.remove('asc','desc');});
    th.classList.add(dir===1?'asc':'desc');
    var rows=Array.prototype.slice.call(tbody.rows);
    rows.sort(function(a,b){
      var x=a.cells[idx].getAttribute('data-v'),y=b.cells[idx].getAttribute('data-v');
      if(num){x=x===''?-Infinity:parseFloat(x);y=y===''?-Infinity:parseFloat(y);
        return dir*(x<y?-1:x>y?1:0);}
      return dir*x.localeCompare(y);});
    rows.forEach(function(r){tbody.appendChild(r);});
  }
  document.querySelectorAll('table.sortable th').forEach(function(th){
    th.addEventListener('click',function(){sortTable(th);});
    th.addEventListener('keydown',function(e){if(e.key==='Enter')sortTable(th);});});
  var tip=document.getElementById('tip');
  if(tip){
    var wrap=tip.parentNode;
    document.querySelectorAll('#roofline .pt').forEach(function(c){
      c.addEventListener('mousemove',function(e){
        var r=wrap.getBoundingClientRect();
        tip.textContent=c.getAttribute('data-tip');tip.hidden=false;
        tip.style.left=(e.clientX-r.left+12)+'px';tip.style.top=(e.clientY-r.top+12)+'px';});
      c.addEventListener('mouseleave',function(){tip.hidden=true;});});
  }
  var data=JSON.parse(document.getElementById('fpgaprof-data').textContent);
  if(errs.length===0){st.setAttribute('data-status','ok');
    st.textContent='rendered: '+document.querySelectorAll('table.sortable').length+
      ' tables, '+document.querySelectorAll('#roofline .pt').length+' roofline points, schema '+
      data.schema_version;}
})();
"""


def extra_table_html(rows: list[Mapping]) -> str:
    if not rows:
        return '<p class="na">not available: no rows</p>'
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    headers = [
        (
            display_label(k),
            "num"
            if any(
                isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool) for r in rows
            )
            else "text",
        )
        for k in keys
    ]
    return html_table(headers, [[html_cell(k, r.get(k)) for k in keys] for r in rows], "wide")


def render(
    summary: Mapping,
    title: str | None = None,
    extra_tables: Iterable[tuple[str, list[Mapping]]] = (),
) -> str:
    """The whole page as a string. extra_tables: (title, rows as dicts) shown as sections at
    the end (e.g. a sweep's per-operation, per-size results); escaped like everything else."""
    s = summary
    ttl = title or "fpgaprof report"
    # The summary is embedded for scripts and for people saving the page; "<" is escaped so
    # that no string in it can close the script element.
    data = json.dumps(
        {"schema_version": s.get("schema_version"), "totals": s.get("totals")}, default=str
    ).replace("<", "\\u003c")
    sections = [
        ("answer", "The answer: FPGA offload per operation and size", answer_html(s)),
        ("overview", "Overview", _overview(s) + _environment(s)),
        ("warnings", "Warnings", _warnings(s)),
        (
            "roofline",
            "Roofline",
            (
                _roofline_svg(s["roofline"], s.get("device")) + _roofline_table(s["roofline"])
                if s["roofline"].get("available")
                else not_available(s["roofline"])
            )
            + _roofline_totals(s["roofline"]),
        ),
        ("ops", "Top HLO ops", _ops(s)),
        ("kernels", "Top kernels", _kernels(s)),
        ("transfers", "Transfers", transfers_html(s)),
        ("memory", "Device memory", memory_html(s)),
        *([("devices", "Devices", devices_html(s))] if multi_device(s) else []),
        ("regions", "Regions", _regions(s)),
        *([("energy", "Energy", _energy(s))] if "energy" in s else []),
        ("candidates", "FPGA candidates", _candidates(s)),
        # traces with XLA's buffer assignment: the memory view and the dataflow graphs
        *(
            [("hlo-memory", "HLO memory (XLA buffer assignment)", module_memory_html(mm))]
            if (mm := s.get("module_memory"))
            else []
        ),
        *(
            [("dataflow", "Dataflow graphs", dataflow_html(df))]
            if (df := s.get("dataflow"))
            else []
        ),
        ("measurements", "Measurements", _measurements(s)),
    ]
    for i, (t, rows) in enumerate(extra_tables):
        sections.append((f"extra{i}", str(t), extra_table_html(list(rows))))
    nav = "".join(f'<a href="#sec-{k}">{esc(t)}</a>' for k, t, _ in sections)
    body = "".join(f'<section id="sec-{k}"><h2>{esc(t)}</h2>{h}</section>' for k, t, h in sections)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{esc(ttl)}</title><style>{CSS}</style></head><body>"
        f"<h1>{esc(ttl)}</h1><nav>{nav}</nav>{body}"
        f'<script type="application/json" id="fpgaprof-data">{data}</script>'
        '<div id="fpgaprof-status" data-status="pending">script did not run</div>'
        f"<script>{JS}</script></body></html>\n"
    )


def write_html(
    path: str,
    summary: Mapping,
    title: str | None = None,
    extra_tables: Iterable[tuple[str, list[Mapping]]] = (),
) -> None:
    write_text_atomic(path, render(summary, title, extra_tables))
