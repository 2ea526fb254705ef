"""job.html: the job report, one self-contained file, from the job model
(report.model.collect_job). Every name from a trace is escaped (base.markup)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from fpgaprof.base.atomic import write_text_atomic
from fpgaprof.base.columns import cell
from fpgaprof.base.markup import esc, html_cell, html_table
from fpgaprof.base.units import fmt_s

__all__ = ["render", "write_job_html"]

_TEXT_COLUMNS = {"host", "path", "op", "module", "kind", "name", "reason"}

_SECTIONS: tuple[tuple[str, str, Sequence[str]], ...] = (
    (
        "Ranks",
        "ranks",
        (
            "process_index",
            "host",
            "start_s",
            "wall_time_s",
            "busy_s",
            "kernel_count",
            "kernel_time_s",
            "copy_count",
            "copy_bytes",
            "memory_peak_bytes",
            "collective_s",
            "collective_overlap_s",
            "warning_count",
        ),
    ),
    (
        "Devices",
        "devices",
        (
            "process_index",
            "host",
            "device_id",
            "global_device_id",
            "name",
            "busy_s",
            "busy_fraction",
            "kernel_count",
            "kernel_time_s",
            "copy_count",
            "copy_bytes",
            "memory_peak_bytes",
            "htod_gbps",
            "htod_link_percent",
            "dtoh_gbps",
            "dtoh_link_percent",
        ),
    ),
)


def _table(rows: Iterable[Mapping], columns: Sequence[str]) -> str:
    headers = [(c, "text" if c in _TEXT_COLUMNS else "num") for c in columns]
    return html_table(headers, ([html_cell(c, r.get(c)) for c in columns] for r in rows))


def render(model: Mapping) -> str:
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>fpgaprof job report</title>",
        "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse;"
        "margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px}td.num{text-align:right}"
        ".missing{color:#a00}</style></head><body>",
        f"<h1>Job {esc(model.get('folder', ''))}</h1>",
        f"<p>{esc(model['rank_count'])} rank traces"
        + (f" of {esc(model['process_count'])} processes" if model.get("process_count") else "")
        + f"; FPGA target {esc(model.get('target'))}</p>",
    ]
    for m in model.get("missing") or []:
        who = f"rank {m['process_index']}" if m.get("process_index") is not None else "a rank"
        parts.append(
            f"<p class='missing'>Missing {esc(who)}"
            + (f" ({esc(m['name'])})" if m.get("name") else "")
            + f": {esc(m['reason'])}</p>"
        )
    parts.append(f"<p>Clock: {esc(model['clock']['text'])}</p>")
    b = model.get("balance") or {}
    if b.get("imbalance") is not None:
        parts.append(
            f"<p>Load balance: busiest rank {esc(b['slowest_rank'])} "
            f"({esc(fmt_s(b['max_busy_s']))}), least busy rank {esc(b['least_busy_rank'])} "
            f"({esc(fmt_s(b['min_busy_s']))}), busiest/mean {b['imbalance']:.2f}</p>"
        )
    for title, key, cols in _SECTIONS:
        if model.get(key):
            parts += [f"<h2>{title}</h2>", _table(model[key], cols)]
    c = model["collectives"]
    parts += [
        "<h2>Collectives</h2>",
        f"<p>{esc(c['kernel_count'])} collective kernels, {esc(fmt_s(c['busy_s']))} busy "
        f"over all ranks, {esc(cell('x_fraction', c['overlap_fraction'])[0])} overlapped with "
        "compute</p>",
        _table(c["by_kind"], ("kind", "count", "total_s")),
        _table(
            c["by_rank"],
            (
                "process_index",
                "kernel_count",
                "kernel_s",
                "busy_s",
                "overlap_s",
                "overlap_fraction",
                "share_of_busy",
            ),
        ),
        "<h2>Stragglers</h2><p>Per region path present on two or more ranks: the rank whose "
        "instances took the most wall time, largest spread first.</p>",
        _table(
            model["stragglers"]["items"],
            (
                "path",
                "ranks",
                "slowest_rank",
                "fastest_rank",
                "max_wall_s",
                "min_wall_s",
                "mean_wall_s",
                "spread_s",
                "spread_fraction",
                "slowest_gpu_s",
            ),
        ),
        "<h2>FPGA candidates over the job</h2><p>Per HLO op: GPU time summed over the ranks, the "
        "FPGA estimate summed likewise, and the per-rank spread.</p>",
        _table(
            model["candidates"]["items"],
            (
                "op",
                "module",
                "ranks",
                "gpu_s",
                "fpga_s",
                "speedup",
                "rank_min_gpu_s",
                "rank_mean_gpu_s",
                "rank_max_gpu_s",
                "slowest_rank",
            ),
        ),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_job_html(path: str | os.PathLike, model: Mapping) -> None:
    """Writes job.html atomically."""
    write_text_atomic(path, render(model))
