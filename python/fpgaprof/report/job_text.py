"""The job report as text: the lines `fpgaprof report JOB_FOLDER` prints (and job.txt), from
the job model (report.model.collect_job), never from a trace."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fpgaprof.base.columns import cell
from fpgaprof.base.text import terminal_safe
from fpgaprof.base.units import fmt_s, fmt_speedup_range
from fpgaprof.views.ranking import SLOW_END_AS_COMPILED_NOTE, row_imbalance_applied_text
from fpgaprof.views.sections import balance_text, unindexed_note

__all__ = [
    "render",
    "answer_lines",
    "RANK_COLUMNS",
    "DEVICE_COLUMNS",
    "STRAGGLER_COLUMNS",
    "CANDIDATE_COLUMNS",
]

RANK_COLUMNS = (
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
)
DEVICE_COLUMNS = (
    "process_index",
    "host",
    "device_id",
    "global_device_id",
    "busy_s",
    "busy_fraction",
    "kernel_count",
    "copy_count",
    "copy_bytes",
    "memory_peak_bytes",
    "htod_link_percent",
    "dtoh_link_percent",
)
STRAGGLER_COLUMNS = (
    "path",
    "ranks",
    "slowest_rank",
    "max_wall_s",
    "min_wall_s",
    "spread_s",
    "spread_fraction",
)
CANDIDATE_COLUMNS = (
    "op",
    "module",
    "ranks",
    "gpu_s",
    "fpga_s",
    "speedup",
    "rank_min_gpu_s",
    "rank_max_gpu_s",
    "slowest_rank",
)


def _clean(text: Any) -> str:
    """One line of plain text: names from traces may hold control characters, shown escaped
    (``\\x1b``, ``\\x0a``) as in every other text output (base.text.terminal_safe)."""
    return terminal_safe(str(text), keep="")


def table(rows: Iterable[Mapping], columns: Sequence[str]) -> str:
    """Rows as aligned text columns, each cell formatted by its column name."""
    body = [[_clean(cell(c, r.get(c))[0]) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(b[i]) for b in body]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(b, widths)).rstrip() for b in body]
    return "\n".join(lines)


def _pct(x: Any) -> str:
    return cell("x_fraction", x)[0]


def _ranks(ranks: Sequence) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(_clean(r) for r in ranks)


def _verdicts(groups: Sequence[Mapping], total: int) -> str:
    """Which ranks give which verdict: "gains (all 3 ranks)", "gains (ranks 0, 2), no (rank 1)"."""
    if len(groups) == 1 and total > 1:
        return f"{_clean(groups[0].get('value'))} (all {total} ranks)"
    return ", ".join(f"{_clean(g.get('value'))} ({_ranks(g.get('ranks') or [])})" for g in groups)


def answer_lines(a: Mapping) -> list[str]:
    """The FPGA answer over the job (the model's `answer`): per op, which rank gives which
    verdict in time, and per scenario the span of the ranks' speedup ranges, which rank gives
    which verdict in time and energy and the span of their card / GPU energy ratios."""
    out = [f"FPGA answer over the job (target {_clean(a.get('target'))}; per rank in job.html)"]
    e = a.get("energy") or {}
    if e.get("unmeasured_ranks"):
        where = _ranks(e["unmeasured_ranks"]) if e.get("measured_ranks") else "any rank"
        out.append(
            f"  GPU energy not measured on {where} (no NVML power samples): energy verdicts "
            "there are unknown"
        )
    for i in a.get("items") or []:
        ranks = list(i.get("ranks") or [])
        out.append(
            f"  {_clean(i.get('op'))} ({_clean(i.get('module'))}), {fmt_s(i.get('gpu_s'))} on "
            f"{_ranks(ranks)}: {_verdicts(i.get('verdicts') or [], len(ranks))}"
        )
        for sc in i.get("scenarios") or []:
            sp = fmt_speedup_range(sc.get("speedup_low"), sc.get("speedup_high")) or "-"
            sp += "*" if sc.get("slow_end_as_compiled") and sp != "-" else ""
            ratio = fmt_speedup_range(sc.get("energy_ratio_low"), sc.get("energy_ratio_high"))
            er = list(sc.get("energy_ranks") or [])
            ratio_text = (
                f", card / GPU energy {ratio}"
                + ("" if len(er) == len(ranks) else f" ({_ranks(er)})")
                if ratio
                else ""
            )
            out.append(
                f"    {_clean(sc.get('scenario'))}: speedup {sp}{ratio_text}; "
                f"{_verdicts(sc.get('energy_verdicts') or [], len(ranks))}"
            )
    if not a.get("items"):
        out.append("  none")
    if any(
        sc.get("slow_end_as_compiled")
        for i in a.get("items") or []
        for sc in i.get("scenarios") or []
    ):
        out.append(f"  {SLOW_END_AS_COMPILED_NOTE}")
    return out


def render(model: Mapping) -> str:
    """The job report as text: the job line, missing and failed ranks, clock alignment,
    balance, ranks, devices, collectives, stragglers, the FPGA candidates over the whole job
    and the FPGA answer over the job."""
    out = []
    n, expected = model["rank_count"], model.get("process_count")
    out.append(
        f"job {_clean(model.get('folder', ''))}: {n} rank traces"
        + (f" of {expected} processes" if expected else "")
        + f", FPGA target {_clean(model.get('target'))}"
    )
    for m in model.get("missing") or []:
        who = f"rank {m['process_index']}" if m.get("process_index") is not None else "a rank"
        where = f" ({_clean(m['name'])})" if m.get("name") else ""
        label = "RUNNING" if m.get("running") else "MISSING"
        out.append(f"{label} {who}{where}: {_clean(m['reason'])}")
    for m in model.get("exited") or []:
        who = f"rank {m['process_index']}" if m.get("process_index") is not None else "a rank"
        out.append(f"FAILED {who} ({_clean(m['name'])}): {_clean(m['reason'])}")
    for c in model.get("conflicts") or []:
        out.append(f"CONFLICT: {_clean(c['reason'])}")
    if note := unindexed_note(model):
        out.append(f"note: {_clean(note)}")
    out.append(f"clock: {_clean(model['clock']['text'])}")
    if balance := balance_text(model):
        out.append(f"balance: {balance}")
    named = bool(model.get("unindexed"))
    out += ["", "ranks", table(model["ranks"], ("name",) * named + RANK_COLUMNS)]
    if model.get("devices"):
        out += ["", "devices", table(model["devices"], ("rank_name",) * named + DEVICE_COLUMNS)]
    c = model["collectives"]
    out += [
        "",
        f"collectives: {c['kernel_count']} kernels, {fmt_s(c['busy_s'])} busy over all "
        f"ranks, {_pct(c['overlap_fraction'])} of it overlapped with compute"
        + (
            " ("
            + ", ".join(f"{_clean(k['kind'])} {fmt_s(k['total_s'])}" for k in c["by_kind"])
            + ")"
            if c["by_kind"]
            else ""
        ),
    ]
    s = model["stragglers"]
    if s["items"]:
        out += ["", f"stragglers (region paths, largest spread first; {s['count']} paths)"]
        out.append(table(s["items"], STRAGGLER_COLUMNS))
    k = model["candidates"]
    out += ["", f"FPGA candidates over the job ({k['count']} ops, most GPU time first)"]
    out.append(table(k["items"], CANDIDATE_COLUMNS) if k["items"] else "  none")
    if model.get("answer"):
        out += [""] + answer_lines(model["answer"])
        if given := row_imbalance_applied_text(model.get("row_imbalance"), every_rank=True):
            out.append(f"  {given}")
    return "\n".join(out) + "\n"
