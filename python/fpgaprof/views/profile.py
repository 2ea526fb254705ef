"""How a Profile reads: ``prof.summary()`` (text) and the Profile in Jupyter (HTML), both from
the trace overview's sections (api.overview passes them in), so their numbers are
summary.json's and report.html's."""

from __future__ import annotations

import os
from typing import Any

from fpgaprof.analysis import sections
from fpgaprof.analysis.trace_analysis import AnalysisResult, store_of
from fpgaprof.base import records
from fpgaprof.base.core import core
from fpgaprof.base.diagnostics import warning_text
from fpgaprof.base.markup import esc
from fpgaprof.base.text import terminal_safe
from fpgaprof.base.units import (
    distinct_shortened,
    fit_qualified,
    fmt_bytes,
    fmt_ns,
    fmt_num,
    fmt_pct,
    fmt_s,
    kernel_display_name,
    mark_lines,
)
from fpgaprof.views.sections import memory_lines, multi_device, transfer_lines
from fpgaprof.views.tables import STYLE, SUMMARY_OP_LABELS, grid_html, rows_text, sub_table

__all__ = ["summary_text", "profile_html", "hlo_op_lines"]


def _cell(name: str) -> str:
    """A name from the trace as one table cell: its line breaks and control characters shown
    escaped before it is padded (print(table) does the same: tables.text_cell), so a region or
    kernel name with a newline does not break its row and the columns stay aligned."""
    return terminal_safe(name, keep="")


# The op column of prof.summary()'s HLO ops: an op, its program id where its module repeats
# and its module ("input_scatter_fusion.1 #138466 (jit_sparse_…project_fcn)").
OP_WIDTH = 56


def _distinct(
    names: list[str], full: list[str], width: int, modules: list[str] | None = None
) -> tuple[list[str], list[str]]:
    """Table cells of `width` characters at most that never read alike: each name, with its
    module as "name (module)" where `modules` gives one, shortened in its middle, the module's
    first (base.units.fit_qualified: "fusion.3" and "fusion.4" stay apart); rows still alike
    marked " #k", with a line per mark giving the row's whole name (`full`;
    base.units.distinct_shortened)."""
    quals = modules or [""] * len(names)
    shown, marks = distinct_shortened(
        len(names), lambda i, w: fit_qualified(names[i], quals[i], w, "{n} ({q})"), width
    )
    return shown, mark_lines(marks, lambda i: full[i])


def _t(ns: float) -> str:
    """A duration given in ns, auto-scaled as in every report ("240 ns", "10.3 µs")."""
    return fmt_s(float(ns) / 1e9)


def summary_text(prof: Any, summary: dict, analysis: AnalysisResult | None, top: int = 15) -> str:
    """prof.summary(): the trace in text, with the numbers of summary.json (`summary`: the
    trace overview's sections; `analysis`: the analysis result they come from, or None):
    wall time and device, GPU busy, top kernels, HLO ops with source lines, transfers, device
    memory, several GPUs' balance, regions, dropped records and every warning."""
    out: list[str] = []
    wall = prof.wall_time_ns
    dev = prof.device
    if dev is not None:
        gpu = (
            f"{dev.name} (cc {dev.compute_capability_major}.{dev.compute_capability_minor}, "
            f"{dev.sm_count} SMs)"
        )
    elif prof.gpu_available:
        gpu = "GPU (no device record)"
    else:
        gpu = "no GPU data: " + (prof.meta.get("unavailable_reason") or "unknown reason")
    out.append(f"fpgaprof trace: wall time {_t(wall)}; {gpu}")
    # summary.json's numbers (one analysis, cached on the profile): GPU busy, transfers,
    # memory, regions and warnings mean here what they mean there.
    tot = summary["totals"]
    if tot.get("gpu_busy_s") is not None:
        frac = tot.get("gpu_busy_fraction")
        out.append(
            f"GPU busy: {_t(tot['gpu_busy_s'] * 1e9)}"
            + (f" ({fmt_pct(frac)} of wall)" if frac is not None else "")
            + f", idle {_t(tot['gpu_idle_s'] * 1e9)} (busy = union of the kernel, copy "
            "and memset intervals on every device and stream)"
        )

    n_k = len(prof.kernels)
    by_name = _kernels_by_name(prof, analysis)
    total_k = float(sum(k["total_ns"] for k in by_name))
    out.append("")
    if n_k or prof.gpu_available:
        out.append(
            f"Kernels: {n_k} launches, {len(by_name)} distinct, {_t(total_k)} summed kernel time"
        )
    else:
        out.append("Kernels: – (no GPU data)")
    if n_k:
        out.append(f"  {'kernel':60s} {'count':>8s} {'total':>11s} {'mean':>10s} {'%':>6s}")
        rows = by_name[:top]
        shown, marks = _distinct(
            [_cell(kernel_display_name(str(k["kernel"]))) for k in rows],
            # a mark's line: the whole name demangled (two template instances differ there)
            [_cell(str(core.attribution.demangle_kernel_name(str(k["kernel"])))) for k in rows],
            60,
        )
        for k, name in zip(rows, shown):
            ns, cnt, timed = float(k["total_ns"]), int(k["count"]), int(k["timed_count"])
            pct = 100.0 * ns / total_k if total_k else 0.0
            # the mean over the launches with a duration (a counter replay leaves some without)
            mean = fmt_s(ns / timed / 1e9 if timed else None)
            out.append(f"  {name:60s} {cnt:8d} {_t(ns):>11s} {mean:>10s} {pct:6.1f}")
        out.extend(marks)
        if len(by_name) > top:
            out.append(f"  ... {len(by_name) - top} more kernels")

    if n_k:
        out.append("")
        try:
            out.extend(hlo_op_lines(prof.attribution, top))
        except Exception as e:  # noqa: BLE001 - the rest of the summary stays useful
            out.append(f"HLO ops: attribution failed ({type(e).__name__}: {e})")

    out.extend(transfer_lines(summary))
    out.extend(memory_lines(summary))
    out.extend(_device_lines(summary))
    out.extend(_region_lines(prof, summary, analysis, top))

    out.append("")
    out.append(
        f"Dropped records: {prof.dropped_records}; incomplete records: {prof.incomplete_records}"
    )
    # The warnings of summary.json and report.html: the trace's own, those the reports derive
    # and every transfer flag (docs/reports.md, "Warnings").
    warns = summary["warnings"]
    flags = len((summary["transfers"] or {}).get("flags") or [])
    out.append(
        f"Warnings: {len(warns)}"
        + (f" ({flags} of them transfer flags)" if flags else "")
        + ("" if warns else " (none)")
    )
    for w in warns:
        # a transfer flag names its region path: one line, as the tables show names (_cell)
        out.append(f"  - {_cell(warning_text(w))}")
    return terminal_safe("\n".join(out) + "\n", keep="\n")  # names from the trace


def _kernels_by_name(prof: Any, analysis: AnalysisResult | None) -> list:
    """Per distinct kernel name (``kernel``, ``count``, ``timed_count``, ``total_ns``, ...),
    most time first, ties by name: the C++ analysis' kernels_by_name, or, without an analysis
    result (it failed: the summary still shows the kernels), the same from the core alone."""
    if analysis is not None:
        return analysis["kernels_by_name"]
    keys = ("kernel", "count", "timed_count", "total_ns", "min_ns", "max_ns")
    return [dict(zip(keys, k)) for k in core.analysis.kernels_by_name(store_of(prof))]


def _device_lines(summary: dict) -> list[str]:
    """Several GPUs: the load balance and one row per device (summary.json's by_device);
    nothing for a single device."""
    if not multi_device(summary):
        return []
    d = summary["by_device"]
    return ["", f"Devices: {d['count']}; {d['balance']['text']}"] + sub_table(
        rows_text(
            sections.device_table_rows(d),
            "per device",
            (
                "device_id",
                "name",
                "kernel_count",
                "kernel_time_s",
                "busy_s",
                "busy_fraction",
                "copy_bytes",
                "htod_link_percent",
                "memory_peak_bytes",
                "threads",
            ),
            more="prof.device_report()",
            labels=sections.DEVICE_LABELS,
        )
    )


def _region_lines(prof: Any, summary: dict, analysis: AnalysisResult | None, top: int) -> list[str]:
    """Per region path (summary.json's regions): instances, wall time, GPU time of the
    activities launched inside it (summed durations, nested regions included) and the peak of
    device memory in use while it was open (the memory analysis, highest instance)."""
    r = summary["regions"]
    n = len(prof.regions)
    paths = r.get("paths")
    lines = [
        "",
        f"Regions: {n}"
        + (
            f" ({paths} path{'s' if paths != 1 else ''})"
            if r.get("available") and paths != n
            else ""
        ),
    ]
    if not r.get("available"):
        return lines
    peaks: dict[str, int] = {}
    if summary["memory"].get("available") and analysis is not None:
        peaks = {
            x["region"]: x["peak_bytes"] for x in sections.memory_region_rows(analysis["memory"])
        }
    # Without GPU data there is no GPU time to show: "–", as report.html (not a measured 0).
    no_gpu = not prof.gpu_available and len(prof.kernels) == 0
    gpu_head = "GPU time (kernels + copies + memsets)"
    lines.append(
        f"  {'region':40s} {'count':>7s} {'wall':>11s} {gpu_head:>{len(gpu_head)}s} "
        f"{'mem peak':>11s}"
    )
    items = r["items"]
    paths = [_cell(x["path"]) for x in items[:top]]
    shown, marks = _distinct(paths, paths, 40)
    for x, path in zip(items[:top], shown):
        gpu = "–" if no_gpu or x.get("gpu_s") is None else _t(x["gpu_s"] * 1e9)
        peak = fmt_bytes(peaks[x["path"]]) if x["path"] in peaks else "–"
        lines.append(
            f"  {path:40s} {x['count']:7d} {_t(x['wall_s'] * 1e9):>11s} "
            f"{gpu:>{len(gpu_head)}s} {peak:>11s}"
        )
    lines.extend(marks)
    left = len(items) - min(len(items), top) + int(r.get("rows_left_out") or 0)
    if left:
        lines.append(f"  ... {left} more region paths")
    lines.append(
        "  (GPU time = summed durations of the kernels, copies and memsets launched inside "
        "the region, nested ones included: a sum, not a union"
        + ("; – : no GPU data in this trace" if no_gpu else "")
        + "; mem peak = most device memory in use while it was open"
        + ("" if peaks else ", – : no allocation records")
        + ")"
    )
    return lines


def _short_path(path: str) -> str:
    if not path:
        return ""
    try:
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else path
    except ValueError:
        return path


def hlo_op_lines(result: Any, top: int = 10) -> list[str]:
    """The summary section: top ops by GPU time with source lines, then unattributed kernels."""
    ops = list(result.ops)
    total = result.attributed_ns + result.unattributed_ns
    n_kernels = result.attributed_count + result.unattributed_count
    lines: list[str] = []
    if n_kernels == 0:
        return ["HLO ops: no kernels in the trace"]
    by = result.count_by_method
    pct = 100.0 * result.attributed_ns / total if total else 0.0
    lines.append(
        f"HLO ops (top {min(top, len(ops))} of {len(ops)} by GPU time; {pct:.1f}% of kernel "
        f"time attributed: {by['nvtx_thunk']} by thunk range, {by['kernel_name']} by kernel "
        f"name, {by['library']} library)"
    )
    if ops:
        lines.append(
            f"  {'time':>10} {'%':>6} {'execs':>6} {'mean':>10} {'GFLOP/s':>8}  "
            f"{'op (module)':<{OP_WIDTH}} {'category':<22} source"
        )
    # each op with its module, and XLA's program id where op and module repeat (one function
    # compiled several times: "fusion #7 (jit_sort)", as the digest names them), shortened in
    # the middle, marked where still alike
    shown_ops = ops[:top]
    pairs = [(op.hlo_op, op.module_name) for op in shown_ops]
    labels, modules = [], [_cell(op.module_name or "") for op in shown_ops]
    for op, pair in zip(shown_ops, pairs):
        pid = records.program_id(op)
        labels.append(
            _cell(op.hlo_op + (f" #{pid}" if pid is not None and pairs.count(pair) > 1 else ""))
        )
    whole = [f"{n} ({m})" if m else n for n, m in zip(labels, modules)]
    names, marks = _distinct(labels, whole, OP_WIDTH, modules)
    for op, name in zip(ops[:top], names):
        t = op.total_ns + op.memcpy_ns
        share = 100.0 * op.total_ns / total if total else 0.0
        rate = ""
        if op.has_cost and not op.cost_unknown and op.mean_ns and op.flops:
            gflops = op.flops / op.mean_ns
            # a fixed-unit column: 1234 GFLOP/s as "1234", not .3g's "1.23e+03"
            rate = f"{gflops:.3g}" if abs(gflops) < 999.5 else f"{gflops:.0f}"
        src = (
            f"{_short_path(op.source_file)}:{op.source_line}"
            if op.source_file and op.source_line >= 0
            else ""
        )
        # an op that only launched copies (copy-start, a host transfer) has no kernel run
        category = op.category or ("copies only" if not op.executions and op.memcpy_ns else "")
        # no timed kernel run (none, or untimed by a counter replay): no mean per run (not
        # "0 ns" beside the time of its copies)
        mean = fmt_ns(op.mean_ns) if op.timed_executions else "–"
        lines.append(
            f"  {fmt_ns(t):>10} {share:5.1f}% {op.executions:>6} "
            f"{mean:>10} {rate:>8}  {name:<{OP_WIDTH}} "
            f"{category[:22]:<22} {src}"
        )
    lines.extend(marks)
    if ops:
        lines.append(
            "  (time = the op's kernels + the copies it launched; % = its share of kernel "
            "time; execs and mean count kernel runs)"
        )
    if result.unattributed_count:
        upct = 100.0 * result.unattributed_ns / total if total else 0.0
        lines.append(
            f"Unattributed kernels: {result.unattributed_count} "
            f"({fmt_ns(result.unattributed_ns)}, {upct:.1f}% of kernel time)"
        )
        for u in list(result.unattributed)[:top]:
            lines.append(f"  {_cell(u.name)[:60]} x{u.count}, {fmt_ns(u.total_ns)}: {u.reason}")
    for w in result.warnings:
        lines.append(f"warning: {w}")
    return lines


def profile_html(summary: dict) -> str:
    """Overview of a Profile: device, wall time, GPU busy, kernels, transfers, top kernels,
    warnings. Built from the same summary as report.html (`summary`: the trace overview's
    sections; without the FPGA what-if, which needs a target: see prof.fpga_candidates)."""
    s = summary
    t, tot, dev = s["trace"], s["totals"], s.get("device") or {}
    items = [
        (
            "device",
            esc(dev.get("name"))
            if dev
            else f'<span class="na">no GPU: {esc(t["unavailable_reason"])}</span>',
        ),
        ("wall time", fmt_s(t["wall_time_s"])),
        (
            "GPU busy",
            f"{fmt_s(tot['gpu_busy_s'])} ({esc(fmt_pct(tot['gpu_busy_fraction']))})"
            if tot["gpu_busy_s"] is not None
            else "n/a (no GPU)",
        ),
        ("kernels", f"{fmt_num(tot['kernel_count'])} · {fmt_s(tot['kernel_time_s'])} summed"),
        (
            "transfers",
            f"{fmt_num(tot['transfer_count'])} · {fmt_bytes(tot['transfer_bytes'])} · "
            f"{esc(fmt_pct(tot['transfer_share_of_wall']))} of wall",
        ),
        (
            "device memory peak",
            fmt_bytes(s["memory"]["peak_bytes"]) if s["memory"].get("available") else "–",
        ),
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
        out.append(grid_html(keys, s["kernels"]["top"][:10], len(s["kernels"]["top"]), "kernels"))
    if s["ops"].get("available"):
        keys = ["op", "category", "count", "total_s", "flops", "bytes", "source"]
        out.append("<b>top HLO ops</b>")
        out.append(
            grid_html(keys, s["ops"]["items"][:10], s["ops"]["count"], "ops", SUMMARY_OP_LABELS)
        )
    if s["warnings"]:
        out.append(
            "<ul>"
            + "".join(f'<li class="warn">{esc(warning_text(w))}</li>' for w in s["warnings"])
            + "</ul>"
        )
    out.append("</div>")
    return "".join(out)
