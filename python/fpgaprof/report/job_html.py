"""job.html: the job report, one self-contained file, from the job model
(report.model.collect_job). Every name from a trace is escaped (base.markup). The FPGA answer
(the model's `answer`: the core's verdicts per rank, gathered over the job) leads; each rank's
candidates are the ranked table report.html shows (views.ranking)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fpgaprof.base.atomic import write_text_atomic
from fpgaprof.base.columns import cell
from fpgaprof.base.markup import esc, html_cell, html_table
from fpgaprof.base.units import fmt_s, fmt_speedup_range
from fpgaprof.views.ranking import (
    SLOW_END_AS_COMPILED_NOTE,
    ranked_table_html,
    row_imbalance_applied_text,
)
from fpgaprof.views.sections import balance_text, unindexed_note

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
            "exit_status",
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


# A rank's candidates: the op, then per scenario its speedup, its verdict in time and energy and
# its card / GPU energy ratio side by side (each with its range under it), then the rest.
RANK_ANSWER_FIRST = (
    "op",
    "verdict",
    "op_speedup",
    "energy_verdict",
    "energy_ratio",
    "restructured_op_speedup",
    "restructured_energy_verdict",
    "restructured_energy_ratio",
    "gpu_time_ns",
    "gpu_energy_j",
    "estimate_basis",
    "module",
)

VERDICT_CLASS = {
    "gains": "v-gain",
    "only restructured": "v-gain",
    "wins only on energy": "v-energy",
    "no": "v-no",
    "loses": "v-no",
}


def _ranks_text(ranks: Sequence) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def _verdicts_html(groups: Sequence[Mapping], total: int) -> str:
    """Which ranks give which verdict: "gains (all 3 ranks)", or each verdict with its ranks."""
    parts = []
    for g in groups:
        v = str(g.get("value") or "–")
        mark = f'<span class="{VERDICT_CLASS.get(v, "v-unk")}">{esc(v)}</span>'
        ranks = list(g.get("ranks") or [])
        if len(groups) == 1 and total > 1:
            parts.append(f"{mark} (all {total} ranks)")
        else:
            parts.append(f"{mark} ({esc(_ranks_text(ranks))})")
    return "<br>".join(parts) or "–"


def _span_html(low: Any, high: Any, ranks: Sequence, total: int, star: bool = False) -> str:
    rng = fmt_speedup_range(low, high)
    if not rng:
        return "–"
    over = "" if len(ranks) == total else f' <span class="dim">({esc(_ranks_text(ranks))})</span>'
    return esc(rng) + ("*" if star else "") + over


def _answer(a: Mapping) -> list[str]:
    """The FPGA answer over the job (the model's `answer`), the page's lead."""
    parts = [
        "<h2>The answer: FPGA offload over the job</h2>",
        f"<p>Target card {esc(a.get('target'))}. Per HLO op, the verdict in time and, per "
        "scenario (as compiled; restructured: a dataflow design reading each input once), the "
        "verdict in time and energy each rank's analysis gives, with the span of the ranks' "
        "speedup ranges and of their card / GPU energy ratio ranges (below 1 the card needs "
        "less energy). <i>wins only on energy</i>: not faster across the speedup range, but "
        'less energy across the ratio\'s range (docs/fpga-model.md, "Energy verdict").</p>',
    ]
    e = a.get("energy") or {}
    measured, unmeasured = (
        list(e.get("measured_ranks") or []),
        list(e.get("unmeasured_ranks") or []),
    )
    if unmeasured:
        where = "any rank" if not measured else _ranks_text(unmeasured)
        parts.append(
            f"<p class='missing'>GPU energy not measured on {esc(where)} (no NVML power "
            "samples in the trace): energy verdicts there are &quot;unknown: no GPU energy&quot;"
            + (f"; measured on {esc(_ranks_text(measured))}" if measured else "")
            + ".</p>"
        )
    elif measured:
        parts.append(f"<p>GPU energy measured on every rank ({esc(_ranks_text(measured))}).</p>")
    items = list(a.get("items") or [])
    if not items:
        parts.append("<p class='na'>not available: no FPGA candidates on any rank</p>")
    else:
        headers = [("HLO op", "text"), ("module", "text"), ("ranks", "num")]
        headers += [("GPU time (kernels, sum over ranks)", "num"), ("verdict in time", "text")]
        for name in ("as compiled", "restructured"):
            headers += [
                (f"{name}: speedup", "num"),
                (f"{name}: verdict in time and energy", "text"),
                (f"{name}: card / GPU energy", "num"),
            ]
        rows = []
        for i in items:
            ranks = list(i.get("ranks") or [])
            n = len(ranks)
            row = [
                (esc(i.get("op")), i.get("op") or ""),
                (esc(i.get("module")), i.get("module") or ""),
                (esc(n), n),
                (esc(fmt_s(i.get("gpu_s"))), i.get("gpu_s")),
                (_verdicts_html(i.get("verdicts") or [], n), ""),
            ]
            for sc in i.get("scenarios") or []:
                row += [
                    (
                        _span_html(
                            sc.get("speedup_low"),
                            sc.get("speedup_high"),
                            ranks,
                            n,
                            bool(sc.get("slow_end_as_compiled")),
                        ),
                        sc.get("speedup_high"),
                    ),
                    (_verdicts_html(sc.get("energy_verdicts") or [], n), ""),
                    (
                        _span_html(
                            sc.get("energy_ratio_low"),
                            sc.get("energy_ratio_high"),
                            sc.get("energy_ranks") or [],
                            n,
                        ),
                        sc.get("energy_ratio_low"),
                    ),
                ]
            rows.append(row)
        left = int(a.get("count") or 0) - len(items)
        parts += [
            html_table(headers, rows),
            "<p class='dim'>speedup and energy ratio: from the lowest low end to the highest "
            "high end of the ranks' ranges (each rank's range: docs/fpga-model.md); most GPU "
            "time first"
            + (f"; {esc(left)} more ops in job.json's candidates" if left > 0 else "")
            + "</p>",
        ]
        if any(sc.get("slow_end_as_compiled") for i in items for sc in i.get("scenarios") or []):
            parts.append(f'<p class="dim">{esc(SLOW_END_AS_COMPILED_NOTE)}</p>')
    return parts


def _rank_answers(a: Mapping) -> list[str]:
    """Each rank's own top candidates with their verdicts (the model's `answer.ranks`)."""
    parts = [
        "<h2>The answer per rank</h2><p>Each rank's top FPGA candidates as its own analysis "
        "ranks them: per scenario the speedup, the verdict in time and energy and the card / "
        "GPU energy ratio, each with its range under it.</p>"
    ]
    for r in a.get("ranks") or []:
        who = (
            f"Rank {r['process_index']}"
            if r.get("process_index") is not None
            else f"Rank of {r.get('name')}"
        )
        energy = (
            "GPU energy measured"
            if r.get("energy_measured")
            else "GPU energy not measured (no NVML power samples)"
        )
        shown = list(r.get("items") or [])
        left = int(r.get("count") or 0) - len(shown)
        parts.append(
            f"<h3>{esc(who)}" + (f" ({esc(r['host'])})" if r.get("host") else "") + "</h3>"
            f"<p class='dim'>its own ranking on {esc(a.get('target'))}; {esc(energy)}"
            + (f"; {esc(left)} more ops not shown" if left > 0 else "")
            + "</p>"
            + (ranked_table_html(shown, RANK_ANSWER_FIRST) if shown else "<p>no candidates</p>")
        )
    return parts


def _table(rows: Iterable[Mapping], columns: Sequence[str]) -> str:
    headers = [(c, "text" if c in _TEXT_COLUMNS else "num") for c in columns]
    return html_table(headers, ([html_cell(c, r.get(c)) for c in columns] for r in rows))


def render(model: Mapping) -> str:
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>fpgaprof job report</title>",
        "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse;"
        "margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px}td.num{text-align:right}"
        ".missing{color:#a00}.dim{color:#666}.v-gain{color:#060;font-weight:bold}"
        ".v-energy{color:#06a;font-weight:bold}.v-no{color:#a00}.v-unk{color:#777}"
        "</style></head><body>",
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
    for m in model.get("exited") or []:
        who = f"rank {m['process_index']}" if m.get("process_index") is not None else "a rank"
        parts.append(
            f"<p class='missing'>Failed {esc(who)} ({esc(m['name'])}): {esc(m['reason'])}</p>"
        )
    for c in model.get("conflicts") or []:
        parts.append(f"<p class='missing'>Conflict: {esc(c['reason'])}</p>")
    answer = model.get("answer")
    if answer:
        parts += _answer(answer)
        if given := row_imbalance_applied_text(model.get("row_imbalance"), every_rank=True):
            parts.append(f'<p class="dim">{esc(given)}</p>')
    if note := unindexed_note(model):
        parts.append(f"<p class='missing'>Note: {esc(note)}</p>")
    parts.append(f"<p>Clock: {esc(model['clock']['text'])}</p>")
    if balance := balance_text(model):
        parts.append(f"<p>Load balance: {esc(balance)}</p>")
    named = bool(model.get("unindexed"))
    for title, key, cols in _SECTIONS:
        if model.get(key):
            first = {"ranks": ("name",), "devices": ("rank_name",)}.get(key, ())
            cols = first * named + tuple(cols)
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
    ]
    if answer:
        parts += _rank_answers(answer)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_job_html(path: str | os.PathLike, model: Mapping) -> None:
    """Writes job.html atomically."""
    write_text_atomic(path, render(model))
