"""A job of several processes read as one: ``fpgaprof.load(folder)`` of a folder of rank traces
(``fpgaprof run`` under a launcher, or ``fpgaprof.trace(folder)`` in each process), and the
summary ``fpgaprof report folder`` renders (docs/reports.md, "Jobs of several processes").

The rank traces are read one at a time: each is loaded, analysed once (the C++ analysis,
collectives included) and reduced to its rows (``rank_summary``) before the next is loaded, so
the memory a job takes is one trace's plus the rows. The job's tables (per rank, per device,
stragglers, collectives, FPGA candidates over the whole job, the FPGA answer per rank and over
the job, clock alignment) are then built from the rows alone (``combine``). The verdicts, speedups
and energy ratios are the core's, per rank, copied; the job's answer gathers them over the ranks
(which rank says what, the span of their ranges), computing none again.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fpgaprof.analysis.targets import row_imbalance_given
from fpgaprof.api import profile
from fpgaprof.api.overview import trace_overview
from fpgaprof.api.profile import Profile
from fpgaprof.base import records
from fpgaprof.base.constants import DEFAULT_TARGET, TRACE_FILE_NAME
from fpgaprof.base.errors import FpgaprofError, FpgaprofIOError
from fpgaprof.base.units import fmt_s
from fpgaprof.capture import runner
from fpgaprof.capture.job_process import PID_FOLDER_RE, RANK_FOLDER_RE
from fpgaprof.views.ranking import best_rows

__all__ = [
    "load",
    "Job",
    "RankTrace",
    "is_job_folder",
    "refuse_trace_beside_rank_folders",
    "find_rank_traces",
    "other_run_traces",
    "rank_summary",
    "combine",
    "align_clocks",
    "STRAGGLER_ROWS",
    "CANDIDATE_ROWS",
    "MISSING_ROWS",
    "ANSWER_ROWS",
    "VERDICT_FIELDS",
    "SCENARIOS",
]

STRAGGLER_ROWS = 50  # region paths shown, largest spread first
CANDIDATE_ROWS = 50  # FPGA candidate ops over the job, most GPU time first
# Ranks below process_count with no entry at all named one per row; the rest in one row (a
# trace claiming 4294967295 processes makes one row, not four billion).
MISSING_ROWS = 64
# The FPGA answer (job.json `answer`): the top candidate ops of each rank (the core's ranking,
# best_rows: none hidden that holds more GPU time than one shown) and of the job (most GPU time
# over the ranks first).
ANSWER_ROWS = 10
# The fields of a core op row (docs/result-fields.md, fpga_op_row) the answer carries, as the
# core computed them on each rank: the verdict in time, both scenarios' speedups and verdicts in
# time and energy with their card / GPU energy ratios, each with its range.
VERDICT_FIELDS = (
    "verdict",
    "op_speedup",
    "op_speedup_low",
    "op_speedup_high",
    "restructured_op_speedup",
    "restructured_op_speedup_low",
    "restructured_op_speedup_high",
    "energy_verdict",
    "energy_ratio",
    "energy_ratio_low",
    "energy_ratio_high",
    "restructured_energy_verdict",
    "restructured_energy_ratio",
    "restructured_energy_ratio_low",
    "restructured_energy_ratio_high",
    "gpu_energy_j",
    "estimate_basis",
    "restructured_structure_dependent",
)
# (scenario, its speedup field, its energy verdict field, its energy ratio field)
SCENARIOS = (
    ("as compiled", "op_speedup", "energy_verdict", "energy_ratio"),
    (
        "restructured",
        "restructured_op_speedup",
        "restructured_energy_verdict",
        "restructured_energy_ratio",
    ),
)
ABSENT_REASON = (
    "no trace of this rank in the folder: the process ended before saving it (killed, "
    "crashed, os._exit), never traced, or saved elsewhere"
)


@dataclasses.dataclass(frozen=True)
class RankTrace:
    """One rank's entry in a job folder: ``name`` (the rank folder, or the file for a trace
    saved directly in the folder), ``path`` of its trace (None: none was written), and the
    index and host its folder name says (None where the name does not say)."""

    name: str
    path: str | None
    index: int | None
    host: str | None


def _rank_from_name(name: str) -> tuple[int | None, str | None]:
    stem = name[: -len(".fpgaprof")] if name.endswith(".fpgaprof") else name
    m = RANK_FOLDER_RE.match(stem)
    return (int(m.group("index")), m.group("host")) if m else (None, None)


def _pid_folder_traces(base: str, folder: str) -> list[RankTrace]:
    """The traces of runs that found ``folder`` taken (two runs of one rank folder, a rank
    given the wrong index): entries named ``folder/<host>-pid<p>``, placed by their trace's
    process index, so that no trace in a job folder goes unread (a rank they hold is no longer
    "missing"; a rank held twice is a conflict)."""
    p = os.path.join(base, folder) if folder else base
    out = []
    for sub in sorted(os.listdir(p)):
        t = os.path.join(p, sub, TRACE_FILE_NAME)
        if PID_FOLDER_RE.match(sub) and os.path.isfile(t):
            out.append(RankTrace(os.path.join(folder, sub) if folder else sub, t, None, None))
    return out


def other_run_traces(folder: str | os.PathLike) -> list[str]:
    """The traces in ``folder/<host>-pid<p>/`` folders: runs that found ``folder`` taken by
    another live `fpgaprof run` (job_process.pid_folder_name), which a report of the folder's
    own trace does not read. Paths, sorted."""
    base = os.fspath(folder)
    try:
        return [r.path for r in _pid_folder_traces(base, "") if r.path is not None]
    except OSError:
        return []


def find_rank_traces(folder: str | os.PathLike) -> list[RankTrace]:
    """The rank entries of a job folder, by name: every ``<host>-rank<k>/`` folder (with its
    trace.fpgaprof, or without one: that rank wrote none), the ``<host>-pid<p>/`` folders with
    a trace.fpgaprof inside those or beside them (runs that found their folder taken), and every
    ``*.fpgaprof`` file directly in the folder."""
    base = os.fspath(folder)
    out: list[RankTrace] = []
    for name in sorted(os.listdir(base)):
        p = os.path.join(base, name)
        if os.path.isdir(p) and RANK_FOLDER_RE.match(name):
            t = os.path.join(p, TRACE_FILE_NAME)
            out.append(RankTrace(name, t if os.path.isfile(t) else None, *_rank_from_name(name)))
            out += _pid_folder_traces(base, name)
        elif os.path.isfile(p) and name.endswith(".fpgaprof") and name != TRACE_FILE_NAME:
            out.append(RankTrace(name, p, *_rank_from_name(name)))
    if out:  # a job folder: runs that found it taken wrote beside its rank folders
        out += _pid_folder_traces(base, "")
    return out


def is_job_folder(folder: str | os.PathLike) -> bool:
    """A folder without a trace.fpgaprof of its own that holds rank folders or trace files."""
    p = os.fspath(folder)
    return (
        os.path.isdir(p)
        and not os.path.isfile(os.path.join(p, TRACE_FILE_NAME))
        and bool(find_rank_traces(p))
    )


def refuse_trace_beside_rank_folders(folder: str | os.PathLike) -> None:
    """FpgaprofIOError when folder holds both a single-process trace.fpgaprof and the
    ``<host>-rank<k>/`` folders of a job (a job run with `-o` into the folder of an earlier
    single-process run, which `run` under a launcher leaves in place): which one is meant is
    not for fpgaprof to guess, and reading the old trace alone would hide the job."""
    p = os.fspath(folder)
    if not (os.path.isdir(p) and os.path.isfile(os.path.join(p, TRACE_FILE_NAME))):
        return
    ranks = [r for r in find_rank_traces(p) if os.path.isdir(os.path.join(p, r.name))]
    if ranks:
        raise FpgaprofIOError(
            f"{p} holds a single-process {TRACE_FILE_NAME} and {len(ranks)} rank "
            f"folder{'s' if len(ranks) != 1 else ''} of a job ({ranks[0].name}"
            f"{', ...' if len(ranks) > 1 else ''}): give {os.path.join(p, TRACE_FILE_NAME)} for "
            "the single run, or move it out of the folder to report the job"
        )


def _s(ns: Any) -> float | None:
    return None if ns is None else int(ns) / 1e9


def _device_link(item: Mapping) -> dict:
    """HtoD and DtoH bytes, GB/s and link % of one by_device item."""
    out: dict[str, Any] = {}
    for row in item.get("by_direction") or []:
        d = str(row.get("direction"))
        if d in ("HtoD", "DtoH"):
            out[f"{d.lower()}_bytes"] = row.get("bytes")
            out[f"{d.lower()}_gbps"] = row.get("gbps")
            out[f"{d.lower()}_link_percent"] = row.get("link_percent")
    return out


def rank_summary(
    prof: Any, name: str, target: str = DEFAULT_TARGET, row_imbalance: float | None = None
) -> dict:
    """The rows of one rank's trace that the job's tables need (a few per device, region path
    and candidate op), from one analysis of the Profile (``row_imbalance``: the user's ratio
    for its FPGA rankings)."""
    ov = trace_overview(prof, target=target, row_imbalance=row_imbalance)
    data, an = ov.data, ov.analysis
    meta = prof.meta
    facts, totals = data["trace"], data["totals"]
    index_from_name, host_from_name = _rank_from_name(name)
    index = int(meta.get("process_index", -1))
    ids = list(meta.get("global_device_ids") or [])
    devices = []
    bd = data.get("by_device") or {}
    for it in bd.get("items") or []:
        dev = int(it["device_id"])
        devices.append(
            {
                "device_id": dev,
                "global_device_id": ids[dev] if dev < len(ids) and ids[dev] >= 0 else None,
                "name": it.get("name"),
                "kernel_count": it.get("kernel_count"),
                "kernel_time_s": it.get("kernel_time_s"),
                "busy_s": it.get("busy_s"),
                "busy_fraction": it.get("busy_fraction"),
                "copy_count": it.get("copy_count"),
                "copy_bytes": it.get("copy_bytes"),
                "memory_peak_bytes": it.get("memory_peak_bytes"),
                **_device_link(it),
            }
        )
    regions: dict[str, Any] = dict(data.get("regions") or {})
    an_map: Mapping[str, Any] = an if an is not None else {}
    coll: dict[str, Any] = dict(an_map.get("collectives") or {})
    candidates = []
    if an is not None and an.get("fpga"):
        for c in an["fpga"].get("candidates", []):
            candidates.append(
                {
                    "module": str(c.get("module") or ""),
                    "op": str(c.get("op") or ""),
                    "gpu_s": _s(c.get("gpu_time_ns")) or 0.0,
                    "fpga_s": c.get("fpga_total_s"),
                    "kernel_count": int(c.get("kernel_count") or 0),
                    "gpu_time_ns": c.get("gpu_time_ns"),
                    # a speedup the core leaves NaN (not estimated) is None in job.json
                    **{k: records.to_plain(c.get(k)) for k in VERDICT_FIELDS},
                }
            )
    peaks = [d["memory_peak_bytes"] for d in devices if d.get("memory_peak_bytes") is not None]
    energy: Mapping[str, Any] = an_map.get("energy") or {}
    return {
        "name": name,
        "process_index": index if index >= 0 else index_from_name,
        "process_count": int(meta.get("process_count", 0)) or None,
        "process_source": str(meta.get("process_source") or "") or None,
        "host": str(meta.get("host_name") or "") or host_from_name,
        "start_ns": int(meta.get("start_ns", 0)),
        "end_ns": int(meta.get("end_ns", 0)),
        "wall_time_s": facts.get("wall_time_s"),
        "gpu_available": bool(facts.get("gpu_available")),
        "kernel_count": totals.get("kernel_count"),
        "kernel_time_s": totals.get("kernel_time_s"),
        "busy_s": totals.get("gpu_busy_s"),
        "copy_count": totals.get("transfer_count"),
        "copy_bytes": totals.get("transfer_bytes"),
        "memory_peak_bytes": max(peaks) if peaks else None,
        "warning_count": len(data.get("warnings") or []),
        "energy_measured": bool(energy.get("measured")),
        "devices": devices,
        "regions": [
            {"path": r["path"], "count": r["count"], "wall_s": r["wall_s"], "gpu_s": r["gpu_s"]}
            for r in regions.get("items") or []
        ],
        "collectives": {
            "kernel_count": int(coll.get("kernel_count", 0)),
            "kernel_s": _s(coll.get("kernel_ns", 0)),
            "busy_s": _s(coll.get("busy_ns", 0)),
            "overlap_s": _s(coll.get("overlap_ns", 0)),
            "by_kind": [
                {"kind": k["kind"], "count": int(k["count"]), "total_s": _s(k["total_ns"])}
                for k in coll.get("by_kind", [])
            ],
            "first_end_ns": [int(x) for x in coll.get("first_end_ns", [])],
        },
        "candidates": candidates,
    }


def align_clocks(ranks: list[dict]) -> dict:
    """Offsets that put every rank's timestamps on the clock of the first rank's host.

    Ranks on one host share its clock (CLOCK_REALTIME): offset 0 among them. Another host is
    aligned on the collectives: the i-th collective kernel of an SPMD job ends at nearly the same
    moment on every rank (none can finish before the last one has joined), so the host's offset
    is the median over i of (end_i on the reference rank - end_i on the host's first rank), and
    its uncertainty the largest deviation of those differences from the median (None with
    fewer than two common collectives). Without collectives the hosts' own clocks are taken as
    they are (NTP/PTP-synchronised; uncertainty unknown)."""
    if not ranks:
        return {"method": "none", "hosts": [], "text": "no rank traces"}
    ref = ranks[0]
    first_of_host: dict[str, dict] = {}
    for r in ranks:
        first_of_host.setdefault(str(r.get("host")), r)
    hosts: list[dict[str, Any]] = []
    methods: set[str] = set()
    for host, r in first_of_host.items():
        if r is ref or host == str(ref.get("host")):
            hosts.append(
                {
                    "host": host,
                    "offset_ns": 0,
                    "uncertainty_ns": 0,
                    "anchors": 0,
                    "method": "same host",
                }
            )
            continue
        a, b = ref["collectives"]["first_end_ns"], r["collectives"]["first_end_ns"]
        n = min(len(a), len(b))
        if n == 0:
            methods.add("wall clock")
            hosts.append(
                {
                    "host": host,
                    "offset_ns": 0,
                    "uncertainty_ns": None,
                    "anchors": 0,
                    "method": "wall clock",
                }
            )
            continue
        diffs = [a[i] - b[i] for i in range(n)]
        off = int(statistics.median(diffs))
        unc = max(abs(d - off) for d in diffs) if n >= 2 else None
        methods.add("collectives")
        hosts.append(
            {
                "host": host,
                "offset_ns": off,
                "uncertainty_ns": unc,
                "anchors": n,
                "method": "collectives",
            }
        )
    if len(first_of_host) == 1 and ref.get("host") is None:
        # No trace names its host (not saved as a rank of a job): one host is not known.
        text = "no trace names its host: each trace's own clock is taken as it is (not aligned)"
        method = "wall clock"
    elif len(first_of_host) == 1:
        text = "one host: all ranks share its clock (no alignment needed)"
        method = "same host"
    else:
        aligned = [h for h in hosts if h["method"] == "collectives"]
        known = [int(h["uncertainty_ns"]) for h in aligned if h["uncertainty_ns"] is not None]
        single = [h["host"] for h in aligned if h["uncertainty_ns"] is None]
        method = " + ".join(sorted(methods)) or "same host"
        worst = max(known) if known else None
        text = (
            f"{len(first_of_host)} hosts aligned on the first common collectives"
            + (
                # one common collective: nothing to measure the alignment against
                f" (uncertainty unknown for {', '.join(single)}: one common collective)"
                if single
                else f" (uncertainty up to {fmt_s(worst / 1e9)})"
                if worst is not None
                else ""
            )
            if methods == {"collectives"}
            else f"{len(first_of_host)} hosts: "
            + method
            + " (hosts without collectives keep their own clock, as synchronised by NTP/PTP;"
            " uncertainty unknown)"
        )
    return {"method": method, "reference_host": str(ref.get("host")), "hosts": hosts, "text": text}


def _spread(values: list[float]) -> dict:
    mx, mn = max(values), min(values)
    mean = sum(values) / len(values)
    return {
        "max": mx,
        "min": mn,
        "mean": mean,
        "imbalance": mx / mean if mean > 0 else None,
        "spread": mx - mn,
        "spread_fraction": (mx - mn) / mx if mx > 0 else None,
    }


def absent_ranks(count: int, present: set, limit: int) -> tuple[list[int], int]:
    """The first `limit` indices in range(count) not in `present`, and how many there are in
    all; time and memory grow with len(present), not with `count`."""
    have = sorted(k for k in present if isinstance(k, int) and 0 <= k < count)
    first: list[int] = []
    k = 0
    for p in [*have, count]:
        while k < p and len(first) < limit:
            first.append(k)
            k += 1
        k = p + 1
    return first, count - len(have)


def rank_conflicts(ranks: list[dict], expected: int | None) -> list[dict]:
    """Entries that cannot all be one run's ranks: a process index held by more than one
    entry, and entries whose trace names another process count than the job's (rank folders
    of an earlier run left in the folder by a rerun into it, or two jobs in one folder)."""
    out: list[dict] = []
    by_index: dict[int, list[str]] = {}
    for r in ranks:
        if r["process_index"] is not None:
            by_index.setdefault(r["process_index"], []).append(str(r["name"]))
    for k, names in sorted(by_index.items()):
        if len(names) > 1:
            out.append(
                {
                    "process_index": k,
                    "names": names,
                    "reason": f"{len(names)} traces claim rank {k} ({', '.join(names)}): "
                    "the folder holds more than one run",
                }
            )
    odd = [r for r in ranks if r["process_count"] and r["process_count"] != expected]
    if odd:
        out.append(
            {
                "process_index": None,
                "names": [str(r["name"]) for r in odd],
                "reason": f"{len(odd)} trace(s) of a {odd[0]['process_count']}-process job "
                f"beside ranks of a {expected}-process job "
                f"({', '.join(str(r['name']) for r in odd[:4])}"
                f"{', ...' if len(odd) > 4 else ''}): the folder holds more than one run",
            }
        )
    return out


def combine(ranks: list[dict], missing: list[dict], target: str = DEFAULT_TARGET) -> dict:
    """The job's tables from the ranks' rows (rank_summary) and the ranks that left no
    readable trace (``missing``: name, process_index, reason)."""
    ranks = sorted(
        ranks, key=lambda r: (r["process_index"] is None, r["process_index"] or 0, r["name"])
    )
    counts = {r["process_count"] for r in ranks if r["process_count"]}
    expected = max(counts) if counts else None
    seen = {r["process_index"] for r in ranks if r["process_index"] is not None}
    missing = list(missing)
    named = {m.get("process_index") for m in missing}
    absent, absent_count = absent_ranks(expected or 0, seen | named, MISSING_ROWS)
    missing += [{"name": None, "process_index": k, "reason": ABSENT_REASON} for k in absent]
    missing.sort(key=lambda m: (m.get("process_index") is None, m.get("process_index") or 0))
    if absent_count > len(absent):
        rest = absent_count - len(absent)
        missing.append(
            {
                "name": None,
                "process_index": None,
                "absent_count": rest,
                "reason": f"{rest:,} further ranks below the job's {expected:,} processes, "
                f"after rank {absent[-1]}, have no trace in the folder (only the first "
                f"{MISSING_ROWS} are named): the processes ended before saving them, never "
                "traced, or saved elsewhere",
            }
        )
    conflicts = rank_conflicts(ranks, expected)
    # Ranks read like the others whose program exited non-zero after saving the trace.
    exited = [
        {
            "name": r["name"],
            "process_index": r["process_index"],
            "exit_status": r["exit_status"],
            "reason": exited_reason(r["exit_status"]),
        }
        for r in ranks
        if r.get("exit_status")
    ]
    clock = align_clocks(ranks)
    offset_of = {h["host"]: h["offset_ns"] for h in clock.get("hosts", [])}
    t0 = min((r["start_ns"] + offset_of.get(str(r["host"]), 0) for r in ranks), default=0)

    rank_rows, device_rows = [], []
    for r in ranks:
        off = offset_of.get(str(r["host"]), 0)
        c = r["collectives"]
        rank_rows.append(
            {
                "process_index": r["process_index"],
                "host": r["host"],
                "name": r["name"],
                "start_s": (r["start_ns"] + off - t0) / 1e9,
                "wall_time_s": r["wall_time_s"],
                "kernel_count": r["kernel_count"],
                "kernel_time_s": r["kernel_time_s"],
                "busy_s": r["busy_s"],
                "copy_count": r["copy_count"],
                "copy_bytes": r["copy_bytes"],
                "memory_peak_bytes": r["memory_peak_bytes"],
                "collective_s": c["busy_s"],
                "collective_overlap_s": c["overlap_s"],
                "warning_count": r["warning_count"],
                # non-zero: the program failed after saving the trace (`run`'s record)
                "exit_status": r.get("exit_status"),
            }
        )
        for d in r["devices"]:
            device_rows.append(
                {
                    "process_index": r["process_index"],
                    "host": r["host"],
                    "rank_name": r["name"],
                    **d,
                }
            )

    busy = [float(r["busy_s"]) for r in ranks if r["busy_s"] is not None]
    balance: dict[str, Any] = {"rank_count": len(ranks)}
    if busy and len(busy) == len(ranks):
        sp = _spread(busy)
        slow = max(ranks, key=lambda r: r["busy_s"])
        idle = min(ranks, key=lambda r: r["busy_s"])
        balance.update(
            {
                "slowest_rank": _rank_of(slow),
                "least_busy_rank": _rank_of(idle),
                "max_busy_s": sp["max"],
                "min_busy_s": sp["min"],
                "mean_busy_s": sp["mean"],
                "imbalance": sp["imbalance"],
                "spread_s": sp["spread"],
                "spread_fraction": sp["spread_fraction"],
            }
        )

    # Stragglers: per region path, the rank whose instances took the most wall time.
    per_path: dict[str, list[tuple[Any, dict]]] = {}
    for r in ranks:
        for g in r["regions"]:
            per_path.setdefault(g["path"], []).append((_rank_of(r), g))
    stragglers = []
    for path, rows in per_path.items():
        if len(rows) < 2:
            continue
        walls = [float(g["wall_s"]) for _, g in rows]
        sp = _spread(walls)
        slow_rank, slow = max(rows, key=lambda x: x[1]["wall_s"])
        fast_rank, _ = min(rows, key=lambda x: x[1]["wall_s"])
        stragglers.append(
            {
                "path": path,
                "ranks": len(rows),
                "slowest_rank": slow_rank,
                "fastest_rank": fast_rank,
                "max_wall_s": sp["max"],
                "min_wall_s": sp["min"],
                "mean_wall_s": sp["mean"],
                "spread_s": sp["spread"],
                "spread_fraction": sp["spread_fraction"],
                "slowest_gpu_s": slow["gpu_s"],
            }
        )
    stragglers.sort(key=lambda s: (-s["spread_s"], s["path"]))

    coll_rows = []
    kinds: dict[str, dict] = {}
    for r in ranks:
        c = r["collectives"]
        coll_rows.append(
            {
                "process_index": r["process_index"],
                "kernel_count": c["kernel_count"],
                "kernel_s": c["kernel_s"],
                "busy_s": c["busy_s"],
                "overlap_s": c["overlap_s"],
                "overlap_fraction": c["overlap_s"] / c["busy_s"] if c["busy_s"] else None,
                "share_of_busy": c["busy_s"] / r["busy_s"] if r["busy_s"] else None,
            }
        )
        for k in c["by_kind"]:
            t = kinds.setdefault(k["kind"], {"kind": k["kind"], "count": 0, "total_s": 0.0})
            t["count"] += k["count"]
            t["total_s"] += k["total_s"]
    coll_busy = sum(float(x["busy_s"] or 0) for x in coll_rows)
    coll_overlap = sum(float(x["overlap_s"] or 0) for x in coll_rows)
    collectives = {
        "kernel_count": sum(x["kernel_count"] for x in coll_rows),
        "kernel_s": sum(float(x["kernel_s"] or 0) for x in coll_rows),
        "busy_s": coll_busy,
        "overlap_s": coll_overlap,
        "overlap_fraction": coll_overlap / coll_busy if coll_busy else None,
        "by_kind": sorted(kinds.values(), key=lambda k: (-k["total_s"], k["kind"])),
        "by_rank": coll_rows,
    }

    ops: dict[tuple[str, str], dict] = {}
    for r in ranks:
        for c in r["candidates"]:
            o = ops.setdefault(
                (c["module"], c["op"]),
                {
                    "module": c["module"],
                    "op": c["op"],
                    "per_rank": [],
                    "fpga_s": 0.0,
                    "fpga_known": True,
                },
            )
            o["per_rank"].append((_rank_of(r), c["gpu_s"]))
            if c["fpga_s"] is None:
                o["fpga_known"] = False
            else:
                o["fpga_s"] += float(c["fpga_s"])
    cand_rows = []
    for o in ops.values():
        per = [g for _, g in o["per_rank"]]
        gpu = sum(per)
        fpga = o["fpga_s"] if o["fpga_known"] else None
        slow_rank, _ = max(o["per_rank"], key=lambda x: x[1])
        cand_rows.append(
            {
                "module": o["module"],
                "op": o["op"],
                "ranks": len(per),
                "gpu_s": gpu,
                "fpga_s": fpga,
                "speedup": gpu / fpga if fpga else None,
                "rank_min_gpu_s": min(per),
                "rank_max_gpu_s": max(per),
                "rank_mean_gpu_s": gpu / len(per),
                "slowest_rank": slow_rank,
            }
        )
    cand_rows.sort(key=lambda c: (-c["gpu_s"], c["module"], c["op"]))
    answer = job_answer(ranks, [(c["module"], c["op"]) for c in cand_rows], target)

    return {
        "kind": "fpgaprof-job",
        "target": target,
        "process_count": expected,
        "rank_count": len(ranks),
        # traces that name no process of a job (no process index: a folder of separate runs);
        # the job's rows name them by their entry and the reports say so
        "unindexed": [str(r["name"]) for r in ranks if r["process_index"] is None],
        "missing": missing,
        "exited": exited,
        "conflicts": conflicts,
        "clock": clock,
        "ranks": rank_rows,
        "devices": device_rows,
        "balance": balance,
        "stragglers": {"items": stragglers[:STRAGGLER_ROWS], "count": len(stragglers)},
        "collectives": collectives,
        "candidates": {"items": cand_rows[:CANDIDATE_ROWS], "count": len(cand_rows)},
        "answer": answer,
    }


def _rank_of(r: Mapping) -> Any:
    """How the answer names a rank: its process index, else its entry's name."""
    return r["process_index"] if r.get("process_index") is not None else r.get("name")


def _by_value(pairs: Sequence[tuple[Any, Any]]) -> list[dict]:
    """[(rank, value), ...] as [{"value": v, "ranks": [...]}, ...] in order of first appearance:
    which ranks say what."""
    out: dict[Any, list] = {}
    for rank, v in pairs:
        out.setdefault(v, []).append(rank)
    return [{"value": v, "ranks": rs} for v, rs in out.items()]


def _span(rows: Sequence[Mapping], key: str) -> tuple[float | None, float | None]:
    """The span of the ranks' ranges of `key`: the lowest `key`_low and highest `key`_high
    (each rank's range from the core), over the ranks that have one; (None, None) without."""
    lows = [r[f"{key}_low"] for r in rows if r.get(f"{key}_low") is not None]
    highs = [r[f"{key}_high"] for r in rows if r.get(f"{key}_high") is not None]
    return (min(lows) if lows else None, max(highs) if highs else None)


def job_answer(ranks: list[dict], ops: Sequence[tuple[str, str]], target: str) -> dict:
    """job.json's `answer`: the FPGA verdict in time and energy per rank and over the job.

    ``ranks``: each with the top ANSWER_ROWS candidate ops of its own ranking (best_rows), every
    VERDICT_FIELDS value as the core computed it on that rank. ``items``: per op of the job
    (``ops``, most GPU time over the ranks first; the first ANSWER_ROWS), which ranks give which
    verdict in time, and per scenario which give which energy verdict with the span of their
    speedup ranges and of their card / GPU energy ratio ranges (the ranks with a ratio:
    ``energy_ranks``). ``energy``: the ranks whose trace measured GPU energy and those that did
    not (their energy verdicts say "unknown: no GPU energy")."""
    per_op: dict[tuple[str, str], list[tuple[Any, dict]]] = {}
    rank_items = []
    for r in ranks:
        who = _rank_of(r)
        cands = r["candidates"]
        for c in cands:
            per_op.setdefault((c["module"], c["op"]), []).append((who, c))
        shown = best_rows(cands, ANSWER_ROWS)
        rank_items.append(
            {
                "process_index": r["process_index"],
                "host": r["host"],
                "name": r["name"],
                "energy_measured": bool(r.get("energy_measured")),
                "count": len(cands),
                "items": [
                    {
                        "op": c["op"],
                        "module": c["module"],
                        "gpu_time_ns": c.get("gpu_time_ns"),
                        **{k: c.get(k) for k in VERDICT_FIELDS},
                    }
                    for c in shown
                ],
            }
        )
    items = []
    for key in ops[:ANSWER_ROWS]:
        got = per_op.get(key) or []
        rows = [c for _, c in got]
        scenarios = []
        for name, speedup, everdict, ratio in SCENARIOS:
            lo, hi = _span(rows, speedup)
            rlo, rhi = _span(rows, ratio)
            scenarios.append(
                {
                    "scenario": name,
                    "speedup_low": lo,
                    "speedup_high": hi,
                    # The restructured span's slow end is as compiled on some rank (its op's
                    # structure decides: docs/fpga-model.md, "When the structure decides").
                    "slow_end_as_compiled": name == "restructured"
                    and any(c.get("restructured_structure_dependent") is True for c in rows),
                    "energy_verdicts": _by_value([(w, c.get(everdict)) for w, c in got]),
                    "energy_ratio_low": rlo,
                    "energy_ratio_high": rhi,
                    "energy_ranks": [w for w, c in got if c.get(ratio) is not None],
                }
            )
        items.append(
            {
                "module": key[0],
                "op": key[1],
                "ranks": [w for w, _ in got],
                "gpu_s": sum(float(c.get("gpu_s") or 0.0) for c in rows),
                "verdicts": _by_value([(w, c.get("verdict")) for w, c in got]),
                "scenarios": scenarios,
            }
        )
    return {
        "target": target,
        "ranks": rank_items,
        "items": items,
        "count": len(ops),
        "energy": {
            "measured_ranks": [_rank_of(r) for r in ranks if r.get("energy_measured")],
            "unmeasured_ranks": [_rank_of(r) for r in ranks if not r.get("energy_measured")],
        },
    }


class Job:
    """The ranks of one job, read from a job folder (``fpgaprof.load(folder)``).

    ``ranks``: the RankTrace entries found; ``rank(i)``: the Profile of entry i (loaded on
    demand; each call loads it again); ``summary(target, row_imbalance=)``: the job's tables
    (cached per target and ratio), built by streaming over the traces: one trace in memory at
    a time. Traces that
    cannot be read are listed in the summary's ``missing`` with the reason, as are ranks that
    wrote none. ``on_rank``: called with (done, total) as each trace is analysed."""

    def __init__(self, folder: str | os.PathLike, max_memory_bytes: int | None = None) -> None:
        self.folder = os.fspath(folder)
        self.max_memory_bytes = max_memory_bytes  # each rank's load (profile.load)
        if not os.path.isdir(self.folder):
            raise FpgaprofIOError(f"{self.folder}: not a folder; give a job folder of rank traces")
        self.ranks = find_rank_traces(self.folder)
        if not self.ranks:
            raise FpgaprofIOError(
                f"{self.folder}: no rank traces (<host>-rank<k>/{TRACE_FILE_NAME} or *.fpgaprof); "
                "give the folder that `fpgaprof run` wrote under a launcher"
            )
        self._summaries: dict[tuple, dict] = {}

    def rank(self, i: int) -> Profile:
        e = self.ranks[i]
        if e.path is None:
            folder = os.path.join(self.folder, e.name)
            if runner.run_in_progress(folder):
                raise FpgaprofIOError(f"{folder}: {RUNNING_REASON}")
            reason = runner.no_trace_reason(folder) or _folder_reason(runner.marker_state(folder))
            raise FpgaprofIOError(f"{folder}: {reason}")
        return profile.load(e.path, max_memory_bytes=self.max_memory_bytes)

    def summary(
        self,
        target: str = DEFAULT_TARGET,
        on_rank: Callable[[int, int], None] | None = None,
        row_imbalance: float | None = None,
    ) -> dict:
        row_imbalance = row_imbalance_given(row_imbalance)  # 0: not known
        key = (target, row_imbalance)
        if key in self._summaries:
            return self._summaries[key]
        rows, missing = [], []
        for i, e in enumerate(self.ranks):
            if e.path is None:
                folder = os.path.join(self.folder, e.name)
                if runner.run_in_progress(folder):
                    missing.append(
                        {
                            "name": e.name,
                            "process_index": e.index,
                            "reason": RUNNING_REASON,
                            "running": True,
                        }
                    )
                else:
                    reason = runner.no_trace_reason(folder) or _folder_reason(
                        runner.marker_state(folder)
                    )
                    missing.append({"name": e.name, "process_index": e.index, "reason": reason})
            else:
                prof = None
                try:
                    prof = self.rank(i)
                    row = rank_summary(prof, e.name, target, row_imbalance)
                    row["exit_status"] = _exit_status_of(e)
                    rows.append(row)
                except FpgaprofError as err:
                    missing.append(
                        {
                            "name": e.name,
                            "process_index": e.index,
                            "reason": " ".join(str(err).split()),
                        }
                    )
                finally:
                    del prof  # the next trace replaces this one in memory, not joins it
                    gc.collect()
            if on_rank is not None:
                on_rank(i + 1, len(self.ranks))
        out = combine(rows, missing, target)
        out["folder"] = self.folder
        out["row_imbalance"] = row_imbalance  # the user's ratio every rank's rankings took
        self._summaries[key] = out
        return out

    def __repr__(self) -> str:
        return f"<fpgaprof Job {self.folder!r}: {len(self.ranks)} rank entries>"


def _exit_status_of(e: RankTrace) -> int | None:
    """The non-zero exit status `fpgaprof run` recorded beside a rank's trace.fpgaprof (its
    program failed after saving the trace: runner.EXIT_STATUS_NAME), else None."""
    if e.path is None or os.path.basename(e.path) != TRACE_FILE_NAME:
        return None  # a *.fpgaprof file directly in the job folder: no folder of its own
    return runner.exit_status(os.path.dirname(e.path))


def exited_reason(code: int) -> str:
    """The job report's line for a rank whose program failed after saving its trace."""
    return (
        f"the program ended with {runner.exit_status_text(code)} (it failed) after saving its "
        "trace; the rank's figures below are from that trace"
    )


RUNNING_REASON = (
    "no trace yet: still running (its `fpgaprof run` holds the folder); report again when "
    "the job ends"
)


def _folder_reason(state: str) -> str:
    return {
        "tracing": "no trace: the process was traced but ended without a normal exit "
        "(killed, crashed or os._exit), so its trace was never saved",
        "not-tracing": "no trace: tracing did not start in this process",
        "save-failed": "no trace: the process was traced but saving its trace failed (a full "
        "disk or an unwritable folder?)",
        "claimed": "no trace: this process could not import fpgaprof",
        "saved": "no trace: the process saved its trace but the file is gone",
    }.get(state, "no trace: no process of this rank started fpgaprof's bootstrap")


def load(path: str | os.PathLike, max_memory_bytes: int | None = None) -> Profile | Job:
    """``fpgaprof.load``: a trace file or a `fpgaprof run` folder gives its Profile
    (api.profile.load); a job folder of rank traces (is_job_folder) gives a Job.
    ``max_memory_bytes``: the memory each trace read may use instead of its bound against zlib
    bombs (api.profile.load; also FPGAPROF_MAX_TRACE_MEMORY)."""
    path = os.fsdecode(os.fspath(path))  # a bytes path as str with surrogate escapes
    refuse_trace_beside_rank_folders(path)
    if is_job_folder(path):
        return Job(path, max_memory_bytes)
    return profile.load(path, max_memory_bytes)
