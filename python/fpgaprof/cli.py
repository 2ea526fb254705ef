"""The `fpgaprof` command (also `python -m fpgaprof`).

    fpgaprof run [-o DIR] [--counters] [--keep-command-buffers] [--target CARD] -- CMD ARGS...
    fpgaprof report TRACE [-o DIR] [--target CARD]
    fpgaprof export TRACE --format perfetto|json|csv [--table NAME] [-o FILE]
    fpgaprof compare A B [--json]
    fpgaprof calibrate
    fpgaprof devices

Exit status: 0 success, 1 failure, 2 bad usage; `run` passes the command's own status through.
Errors are one line on stderr saying the cause and the fix, never a traceback.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
from typing import Any, Sequence

from fpgaprof.analysis import sections
from fpgaprof.base import records
from fpgaprof.base.errors import did_you_mean
from fpgaprof.capture import process_env, runner, xla_flags
from fpgaprof.capture.signals import SAVE_ON
from fpgaprof.base.units import fmt_bytes, fmt_s

PROG = "fpgaprof"
TRACE_NAME = "trace.fpgaprof"
DEFAULT_TARGET = "alveo-u55c"


class UsageError(Exception):
    """Bad command line: exit status 2."""


def usage_error(prog: str, message: str) -> UsageError:
    """The one-line usage error of every command: "<prog>: error: <message> (see `<prog>
    --help`)", prog being "fpgaprof" or "fpgaprof <command>"."""
    return UsageError(f"{prog}: error: {message} (see `{prog} --help`)")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        raise usage_error(self.prog, message)


def _positive_int(text: str) -> int:
    """argparse type of a count option: a whole number >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v} must be 1 or more")
    return v


def _out(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


# ---------------------------------------------------------------------------------------------
# loading


def _load(path: str) -> Any:
    """A Profile from a trace file, or a clear error."""
    if not os.path.exists(path):
        raise FileNotFoundError(2, "no such trace file (give the path fpgaprof run/trace wrote)",
                                path)
    import fpgaprof
    load = getattr(fpgaprof, "load", None)
    if load is None:
        raise fpgaprof.FpgaprofError(
            "this fpgaprof build has no trace loader (fpgaprof.load); rebuild/reinstall fpgaprof")
    return load(path)


def _trace_in(path: str) -> str:
    """A trace path, also when given the output folder of `fpgaprof run`."""
    if os.path.isdir(path):
        cand = os.path.join(path, TRACE_NAME)
        if os.path.exists(cand):
            return cand
        raise FileNotFoundError(2, f"folder has no {TRACE_NAME} (give the trace file itself)",
                                path)
    return path


def _check_target(target: str | None, prog: str = PROG) -> None:
    """An unknown FPGA card name, or a card file (.json) that cannot be read or describes no
    valid card, is a usage error of command `prog` (a close match suggested, the known ones
    listed) when this build has the FPGA model; without it the candidates section says why it
    is missing."""
    if not target:
        return
    try:
        from fpgaprof import fpga
        from fpgaprof.analysis import targets
        from fpgaprof.base.errors import FpgaprofError
        names = [p["name"] for p in fpga.presets()]
    except Exception:
        return
    if not target.lower().endswith(".json"):
        if target not in names:
            raise usage_error(prog, f"unknown FPGA target {target!r} ({targets.preset_hint(target, names)}"
                              f"use --target with one of {', '.join(names)}, or a card file CARD.json)")
        return
    try:
        fpga.resolve_target(target)
    except FpgaprofError as e:
        raise usage_error(prog, f"--target: {e}") from None


# ---------------------------------------------------------------------------------------------
# commands


def _timeline_options(args: argparse.Namespace) -> dict:
    """write_all's timeline arguments from --no-timeline and --timeline-events (0: all)."""
    n = getattr(args, "timeline_events", None)
    return {"timeline": not getattr(args, "no_timeline", False),
            "timeline_max_events": None if not n else int(n)}


# fpgaprof.report.perfetto.MAX_EVENTS (not imported here: building the parser stays light).
TIMELINE_EVENTS = 1_000_000


def _add_timeline_options(r: argparse.ArgumentParser, no_timeline: bool = True) -> None:
    if no_timeline:
        r.add_argument("--no-timeline", action="store_true",
                       help="do not write timeline.json (large for long runs)")
    r.add_argument("--timeline-events", type=_non_negative_int, default=TIMELINE_EVENTS,
                   metavar="N", help=f"timeline.json holds the first N records by start time "
                   f"(default {TIMELINE_EVENTS:,}; 0: all, however large)")


def _non_negative_int(text: str) -> int:
    try:
        n = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative (0 means no limit)")
    return n


def cmd_report(args: argparse.Namespace) -> int:
    from fpgaprof import report
    trace = _trace_in(args.trace)
    out_dir = args.output or os.path.dirname(os.path.abspath(trace))
    bar = report.Progress(1 + len(report.WRITE_STAGES), f"{PROG} report")
    bar.stage("loading trace")
    prof = _load(trace)
    with _no_kernels_note_for(prof):
        paths = report.write_all(prof, out_dir, target=args.target, trace_path=trace,
                                 progress=bar, **_timeline_options(args))
    hlo = _write_hlo_modules(prof, os.path.join(out_dir, "hlo"))
    _out(_digest_of(paths["summary"]).rstrip("\n"))
    for k in ("html", "summary", "timeline"):
        if paths[k]:
            _out(f"{k:9s} {paths[k]}" + (f" (first {args.timeline_events:,} records; see "
                                         f"the warning)" if k == "timeline" and
                                         paths.get("timeline_note") else ""))
    if hlo:
        _out(f"{'hlo':9s} {hlo} modules in {os.path.join(out_dir, 'hlo')}")
    return 0


def _digest_of(summary_path: str) -> str:
    """The closing lines of run/report (report/digest.py); one "(no digest: <why>)" line when
    the summary cannot be read (the files were written: the digest is only a convenience)."""
    try:
        from fpgaprof.report.digest import digest
        with open(summary_path, encoding="utf-8") as f:
            return digest(json.load(f))
    except Exception as e:  # noqa: BLE001
        return f"{PROG}: (no digest: {_one_line(e)})\n"


def _write_hlo_modules(prof: Any, folder: str) -> int:
    """The optimized HLO modules stored in the trace, one text file each. Returns the count
    (0 when the profile does not expose them)."""
    mods = None
    for owner in (prof, getattr(prof, "_store", None)):
        if owner is None:
            continue
        try:
            mods = getattr(owner, "hlo_modules")
        except Exception:
            mods = None
        if mods is not None:
            break
    if not mods:
        return 0
    from fpgaprof.report.summary import write_atomic
    existing = os.listdir(folder) if os.path.isdir(folder) else []
    n = 0
    for i, m in enumerate(mods):
        name = m.get("name") if isinstance(m, dict) else getattr(m, "name", "")
        text = m.get("text") if isinstance(m, dict) else getattr(m, "text", "")
        pid = m.get("program_id", -1) if isinstance(m, dict) else getattr(m, "program_id", -1)
        if not text:
            continue
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in str(name)) or f"m{i}"
        fname = f"module_{int(pid):04d}.{safe}.txt" if int(pid) >= 0 else f"{safe}.txt"
        if any(e.startswith(fname[:-3]) for e in existing):
            continue  # XLA's own dump of this module is already there (`fpgaprof run`)
        write_atomic(os.path.join(folder, fname), str(text))
        n += 1
    return n


def prune_hlo_dump(folder: str) -> int:
    """Keeps only the optimized HLO text of each module XLA dumped into folder
    (module_NNNN.NAME.*after_optimizations.txt); removes XLA's other dump files (pre-
    optimization HLO, buffer assignment, debug options, per-module folders). Returns how many
    modules are kept."""
    import re
    if not os.path.isdir(folder):
        return 0
    keep = re.compile(r"^module_\d+\..+after_optimizations\.txt$")
    kept = 0
    for name in os.listdir(folder):
        p = os.path.join(folder, name)
        if not name.startswith("module_"):
            continue
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        elif keep.match(name):
            kept += 1
        else:
            os.unlink(p)
    return kept


def cmd_export(args: argparse.Namespace) -> int:
    from fpgaprof.report import perfetto, summary
    trace = _trace_in(args.trace)
    prof = _load(trace)
    if args.format == "perfetto":
        out = args.output or os.path.splitext(trace)[0] + ".timeline.json"
        counts = perfetto.write_timeline(prof, out,
                                         max_events=_timeline_options(args)["timeline_max_events"])
        counts.pop("cut_ns", None)
        _out(f"{out}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())
                                    if not k.startswith("omitted_")))
        return 0
    if args.format == "json":
        text = summary.dumps(summary.collect(prof, target=args.target, trace_path=trace))
    else:
        text = csv_table(prof, args.table)
    if args.output and args.output != "-":
        summary.write_atomic(args.output, text)
        _out(args.output)
    else:
        sys.stdout.write(text)
    return 0


CSV_TABLES = ("kernels", "transfers", "memsets", "allocations", "api_calls", "markers",
              "regions", "syncs", "ops")


def _op_fields() -> list[str]:
    """The columns of prof.ops (fields of the attribution's OpStats, in the order records_of
    gives them): the CSV header of a trace with no op."""
    try:
        from fpgaprof import _core
        cls = _core.attribution.OpStats
    except (ImportError, AttributeError):
        return []
    return [k for k in dir(cls) if not k.startswith("_") and isinstance(getattr(cls, k), property)]


def _csv_cell(v: Any, none32: bool) -> Any:
    """One CSV cell: "none" (kNone32 in a uint32 column: no parent, no region, ...) and None
    are empty; lists are joined with ";" (kernel_names)."""
    if none32 and v == 0xFFFFFFFF:
        return ""
    if isinstance(v, (list, tuple)):
        return ";".join("" if x is None else str(x) for x in v)
    return "" if v is None else v


def csv_table(prof: Any, table: str) -> str:
    """One record table (or prof.ops) as CSV: a header always (also without rows), one line
    per record; docs/reports.md, "CSV"."""
    obj = getattr(prof, table, None)
    if obj is None:
        raise _failure(f"this profile has no {table} table (choose one of "
                       f"{', '.join(CSV_TABLES)})")
    if table == "ops":
        rows = records.records_of(obj)
        keys: list[str] = [] if rows else _op_fields()
        for r in rows:
            keys += [k for k in r if k not in keys]
        cols = {k: [r.get(k) for r in rows] for k in keys}
    else:
        cols = records.columns(obj)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    keys = list(cols)
    w.writerow(keys)
    none32 = {k: getattr(cols[k], "dtype", None) == "uint32" for k in keys}
    n = len(next(iter(cols.values()))) if cols else 0
    for i in range(n):
        w.writerow([_csv_cell(records.to_plain(cols[k][i]), none32[k]) for k in keys])
    return buf.getvalue()


def _failure(msg: str) -> Exception:
    from fpgaprof.base.errors import FpgaprofError
    return FpgaprofError(msg)


class SummaryFormatError(Exception):
    """A summary.json that is not what fpgaprof writes (exit status 1, one line)."""


def _summary_of(path: str, target: str | None) -> dict:
    """A summary dict from summary.json, a run folder or a trace file."""
    from fpgaprof.report import summary
    if os.path.isdir(path):
        cand = os.path.join(path, "summary.json")
        if os.path.exists(cand):
            path = cand
        else:
            path = _trace_in(path)
    if path.endswith(".json"):
        try:
            with open(path, encoding="utf-8") as f:
                s = json.load(f)
        except ValueError as e:
            raise _failure(f"{path}: not valid JSON ({e}); give a summary.json or a trace file")
        if not isinstance(s, dict) or "schema_version" not in s:
            raise _failure(f"{path}: not an fpgaprof summary.json (no schema_version)")
        return s
    return summary.collect(_load(path), target=target, trace_path=path)


def _section(s: dict, name: str, rows_key: str) -> tuple[list, int | None, str | None]:
    """(rows, rows left out, why the section is unavailable) of one summary section."""
    sec = s.get(name)
    if sec is None:
        return [], 0, f"no {name} section"
    if not isinstance(sec, dict):
        raise SummaryFormatError(f"'{name}' is a {type(sec).__name__}, not an object")
    if sec.get("available") is False:
        return [], 0, str(sec.get("reason") or "not available")
    rows = sec.get(rows_key)
    if rows is None:
        rows = []
    if not isinstance(rows, list):
        raise SummaryFormatError(f"'{name}.{rows_key}' is a {type(rows).__name__}, not a list")
    left = sec.get("rows_left_out", 0) or 0
    if not isinstance(left, int):
        raise SummaryFormatError(f"'{name}.rows_left_out' is not an integer")
    return rows, left, None


def _number(v: Any, where: str) -> float:
    if v is None:
        return 0.0
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SummaryFormatError(f"{where} is {v!r}, not a number")
    return float(v)


def _count(v: Any, where: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise SummaryFormatError(f"{where} is {v!r}, not an integer")
    return v


def _per_run(time_s: float, count: int | None, mean_s: Any, where: str) -> float | None:
    """Mean time of one run: the summary's mean where it has one, else time / count."""
    if mean_s is not None:
        return _number(mean_s, where)
    return time_s / count if count else None


def _entries(s: dict, kind: str) -> tuple[dict, bool, str | None]:
    """{key: entry} of one kind of row, whether the table is complete (nothing left out), and
    why it is missing. Keys: (module, op) for ops, the region path, the kernel name, the copy
    direction. Each entry: time_s (the whole trace's), count (runs: executions of the op,
    instances of the region, kernel launches, copies) and mean_s (time per run; None for
    copy directions, whose busy time is a union, not a sum of runs)."""
    out: dict = {}
    if kind == "op":
        rows, left, why = _section(s, "ops", "items")
        bounds = {}
        roof = s.get("roofline")
        if isinstance(roof, dict) and isinstance(roof.get("points"), list):
            bounds = {(p.get("module") or "", str(p.get("op"))): p.get("bound")
                      for p in roof["points"] if isinstance(p, dict)}
        for i, r in enumerate(rows):
            where = f"ops.items[{i}]"
            if not isinstance(r, dict) or "op" not in r:
                raise SummaryFormatError(f"{where} has no 'op'")
            key = (str(r.get("module") or ""), str(r["op"]))
            t = _number(r.get("total_s"), f"{where}.total_s")
            n = _count(r.get("count"), f"{where}.count")
            out[key] = {"name": key[1], "module": key[0] or None, "time_s": t, "count": n,
                        "mean_s": _per_run(t, n, r.get("mean_s"), f"{where}.mean_s"),
                        "bytes": r.get("bytes"),
                        "bound": r.get("bound") if "bound" in r else bounds.get(key)}
    elif kind == "region":
        rows, left, why = _section(s, "regions", "items")
        for i, r in enumerate(rows):
            where = f"regions.items[{i}]"
            if not isinstance(r, dict) or not ("path" in r or "name" in r):
                raise SummaryFormatError(f"{where} has no 'path' or 'name'")
            key = str(r.get("path") or r.get("name"))
            t = _number(r.get("wall_s"), f"{where}.wall_s")
            n = _count(r.get("count"), f"{where}.count")
            out[key] = {"name": key, "module": None, "time_s": t, "count": n,
                        "mean_s": _per_run(t, n, None, f"{where}.mean_s"),
                        "bytes": None, "bound": None}
    elif kind == "kernel":
        rows, left, why = _section(s, "kernels", "top")
        for i, r in enumerate(rows):
            where = f"kernels.top[{i}]"
            if not isinstance(r, dict) or "name" not in r:
                raise SummaryFormatError(f"{where} has no 'name'")
            t = _number(r.get("total_s"), f"{where}.total_s")
            n = _count(r.get("count"), f"{where}.count")
            out[str(r["name"])] = {"name": str(r["name"]), "module": None, "time_s": t,
                                   "count": n,
                                   "mean_s": _per_run(t, n, r.get("mean_s"), f"{where}.mean_s"),
                                   "bytes": None, "bound": None}
    else:
        rows, _, why = _section(s, "transfers", "by_direction")
        left = 0
        for i, r in enumerate(rows):
            where = f"transfers.by_direction[{i}]"
            if not isinstance(r, dict) or "direction" not in r:
                raise SummaryFormatError(f"{where} has no 'direction'")
            out[str(r["direction"])] = {"name": str(r["direction"]), "module": None,
                                        "time_s": _number(r.get("busy_s"), f"{where}.busy_s"),
                                        "count": _count(r.get("count"), f"{where}.count"),
                                        "mean_s": None, "bytes": r.get("bytes"), "bound": None}
    return out, left == 0 and why is None, why


def compare_summaries(a: dict, b: dict) -> list[dict]:
    """Rows (kind, name, module, before/after time, runs (count_before/after: executions,
    instances, launches, copies) and mean time per run, bytes, bound, change; change_ratio is
    the whole time's B/A, mean_ratio the per-run time's), largest |change| first. Ops are
    keyed by (module, op), regions by their path. A row missing on a side whose table is
    complete is new or gone (time there: None, change against 0); missing on a side
    whose table is cut (kernels beyond the top rows, a section not available) it is unknown:
    change None, `unknown` says why, sorted last. SummaryFormatError for a malformed input."""
    rows = []
    for kind in ("op", "region", "kernel", "transfer"):
        sides = []
        for label, s in (("A", a), ("B", b)):
            if not isinstance(s, dict):
                raise SummaryFormatError(f"{label} is not a JSON object")
            try:
                sides.append(_entries(s, kind))
            except SummaryFormatError as e:
                raise SummaryFormatError(f"{label}: {e}") from None
        (ea, full_a, why_a), (eb, full_b, why_b) = sides
        for key in sorted(set(ea) | set(eb), key=str):
            x, y = ea.get(key), eb.get(key)
            unknown = None
            if x is None and not full_a:
                unknown = (f"A: {why_a}" if why_a else "A: not among its top rows")
            if y is None and not full_b:
                unknown = (f"B: {why_b}" if why_b else "B: not among its top rows")
            ta = x["time_s"] if x else 0.0
            tb = y["time_s"] if y else 0.0
            e = x or y
            rows.append({
                "kind": kind, "name": e["name"], "module": e["module"],
                "time_before_s": ta if x else None, "time_after_s": tb if y else None,
                "change_s": None if unknown else tb - ta,
                "change_ratio": (tb / ta) if x and y and ta else None,
                "count_before": x["count"] if x else None,
                "count_after": y["count"] if y else None,
                "mean_before_s": x["mean_s"] if x else None,
                "mean_after_s": y["mean_s"] if y else None,
                "mean_ratio": (y["mean_s"] / x["mean_s"]) if x and y and x["mean_s"]
                and y["mean_s"] is not None else None,
                "bytes_before": x["bytes"] if x else None, "bytes_after": y["bytes"] if y else None,
                "bound_before": x["bound"] if x else None, "bound_after": y["bound"] if y else None,
                "unknown": unknown,
            })
    rows.sort(key=lambda r: (r["change_s"] is None, -abs(r["change_s"] or 0.0), r["kind"],
                             r["module"] or "", r["name"]))
    return rows


def cmd_compare(args: argparse.Namespace) -> int:
    a = _summary_of(args.a, args.target)
    b = _summary_of(args.b, args.target)
    try:
        rows = compare_summaries(a, b)
    except SummaryFormatError as e:
        raise _failure(f"{args.a} vs {args.b}: malformed summary.json ({e}); regenerate it with "
                       f"`{PROG} report TRACE` or compare the traces themselves")
    if args.json:
        _out(json.dumps({"a": args.a, "b": args.b, "rows": rows}, indent=1))
        return 0

    def wall(s: dict) -> Any:
        t = s.get("trace")
        return t.get("wall_time_s") if isinstance(t, dict) else None
    wa, wb = wall(a), wall(b)
    # The traces' own wall times are the whole programs' (a bigger problem, more setup): the
    # sections compare parts, and per run, so more runs do not read as slower runs.
    _out(f"A: {args.a}  whole-program wall time "
         f"{fmt_s(wa if isinstance(wa, (int, float)) else None)}\n"
         f"B: {args.b}  whole-program wall time "
         f"{fmt_s(wb if isinstance(wb, (int, float)) else None)}\n"
         "(runs: executions of an op, instances of a region, launches of a kernel, copies in a "
         "direction; mean: time per run; B/A: whole time, mean B/A: per run)")
    # What the times and bytes of each section are: ops and kernels GPU time summed over the
    # trace, regions wall time, transfer directions busy time; op bytes are one execution's
    # (the cost model's), transfer bytes all copies'. Transfer directions have no mean: their
    # busy time is a union of copies, not a sum of runs.
    heads = {"op": ("GPU", "bytes/exec", "runs"), "region": ("wall", "", "runs"),
             "kernel": ("GPU", "", "runs"), "transfer": ("busy", "bytes", "copies")}
    for kind, note in (("op", "per HLO op (module:op), GPU time"),
                       ("region", "per region (path), wall time"),
                       ("kernel", "per kernel (top kernels only), GPU time"),
                       ("transfer", "per transfer direction, busy time")):
        sel = [r for r in rows if r["kind"] == kind]
        if not sel:
            why = []
            for label, s in (("A", a), ("B", b)):
                try:
                    reason = _entries(s, kind)[2]
                except SummaryFormatError:
                    reason = None
                why.append(f"{label}: {reason or 'no rows'}")
            _out(f"\n{note}: not available in either input ({'; '.join(why)})")
            continue
        _out(f"\n{note}, sorted by |change|:")
        t_head, b_head, n_head = heads[kind]
        means = kind != "transfer"
        _out(f"  {'name':40s} {n_head + ' A':>8s} {n_head + ' B':>8s} {t_head + ' A':>11s} "
             f"{t_head + ' B':>11s} {'change':>11s} {'B/A':>7s} "
             + (f"{'mean A':>10s} {'mean B':>10s} {'mean B/A':>8s} " if means else "")
             + f"{(b_head + ' A') if b_head else '':>12s} "
             f"{(b_head + ' B') if b_head else '':>12s}  bound A→B".rstrip())
        for r in sel[:args.limit]:
            ratio = f"{r['change_ratio']:.2f}x" if r["change_ratio"] is not None else "–"
            runs = [str(r[k]) if r[k] is not None else "–" for k in ("count_before",
                                                                    "count_after")]
            mean = ""
            if means:
                m_ratio = f"{r['mean_ratio']:.2f}x" if r["mean_ratio"] is not None else "–"
                mean = f"{fmt_s(r['mean_before_s']):>10s} {fmt_s(r['mean_after_s']):>10s} " \
                       f"{m_ratio:>8s} "
            bound = ""
            if r["bound_before"] or r["bound_after"]:
                bound = f"{r['bound_before'] or '–'}→{r['bound_after'] or '–'}"
            name = f"{r['module']}:{r['name']}" if r.get("module") else r["name"]
            name = name if len(name) <= 40 else name[:37] + "..."
            if r["change_s"] is None:
                change = "?"
                bound = (bound + "  " if bound else "") + f"(unknown: {r['unknown']})"
            else:
                sign = "+" if r["change_s"] > 0 else ("-" if r["change_s"] < 0 else " ")
                change = sign + fmt_s(abs(r["change_s"]))
            before = fmt_s(r["time_before_s"]) if r["time_before_s"] is not None else "absent"
            after = fmt_s(r["time_after_s"]) if r["time_after_s"] is not None else "absent"
            ba = fmt_bytes(r["bytes_before"]) if b_head else ""
            bb = fmt_bytes(r["bytes_after"]) if b_head else ""
            _out(f"  {name:40s} {runs[0]:>8s} {runs[1]:>8s} {before:>11s} {after:>11s} "
                 f"{change:>11s} {ratio:>7s} {mean}{ba:>12s} {bb:>12s}  {bound}".rstrip())
        if len(sel) > args.limit:
            _out(f"  ... {len(sel) - args.limit} more rows (--limit N, or --json for all)")
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    """The static FPGA what-if of an HLO module (fpgaprof.fpga.estimate_hlo): the ops table,
    the whole function's card time, transfers and total with their ranges; --json for all."""
    from fpgaprof import fpga
    from fpgaprof.base.errors import HloParseError
    try:
        with open(args.module, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise usage_error(f"{PROG} estimate", f"{args.module} is not UTF-8 text ({e.reason} at byte {e.start}): "
                          "give an HLO text file (XLA's --xla_dump_to output, or compiled.as_text())")
    except OSError as e:
        raise usage_error(f"{PROG} estimate", f"cannot read {args.module}: {e.strerror or e}")
    try:
        est = fpga.estimate_hlo(text, target=fpga.target_spec(args.target))
    except HloParseError as e:
        raise _failure(f"{args.module}: not HLO text fpgaprof can read ({_one_line(e)})")
    if args.json:
        out = {"summary": est.summary(), "target": est.target, "ops": list(est)}
        _out(json.dumps(out, indent=1, default=_json_default, allow_nan=False) + "\n")
        return 0
    if args.limit is not None and args.limit < len(est):
        shown = type(est)(sorted(est, key=lambda r: -(r.get("card_time_s") or 0))[:args.limit])
        for k in ("title", "display", "footer", "empty_note"):
            setattr(shown, k, getattr(est, k))
        shown.title = est.title + f" (the {args.limit} longest of {len(est)})"
        _out(str(shown))
    else:
        _out(str(est))
    return 0


def _json_default(x: Any) -> Any:
    return None


def cmd_calibrate(args: argparse.Namespace) -> int:
    try:
        from fpgaprof import calibrate
    except ImportError as e:
        raise _failure(f"this fpgaprof build has no calibration module ({e}); update fpgaprof")
    result = calibrate.run()
    if isinstance(result, dict):
        _out(json.dumps(result, indent=1, default=str))
    elif result is not None:
        _out(str(result))
    return 0


def cmd_counters(args: argparse.Namespace) -> int:
    from fpgaprof import counters
    if args.chips:
        _out(" ".join(counters.chips()) + "\n")
        return 0
    if args.chip:
        _check_chip(args.chip, counters)
    plan = counters.plan(args.chip, metrics=args.metric or None, device=args.device)
    _out(json.dumps(plan.to_dict(), indent=1) + "\n" if args.json else str(plan))
    return 0


def _check_chip(chip: str, counters) -> None:
    """An unknown --chip is a usage error of `fpgaprof counters` (a close match suggested)."""
    try:
        names = counters.chips()
    except Exception:  # noqa: BLE001 - no CUPTI to ask: plan() says why
        return
    if chip.strip().upper() in names:
        return
    raise usage_error(f"{PROG} counters", f"unknown chip {chip!r} "
                      f"({did_you_mean(chip.strip().upper(), names)}CUPTI's chip names: "
                      f"{', '.join(names)}; `{PROG} counters --chips` lists them)")


def cmd_devices(args: argparse.Namespace) -> int:
    from fpgaprof.api import devices

    _out(devices.describe())
    return 0


# ---------------------------------------------------------------------------------------------
# run


def child_environment(out_dir: str, *, keep_command_buffers: bool, counters: bool,
                      target: str | None, base: dict | None = None) -> dict:
    """The environment the profiled command starts with: the bootstrap on PYTHONPATH (it
    starts fpgaprof.trace() before the script), fpgaprof's XLA flags with the HLO dump in
    out_dir/hlo, and the FPGAPROF_RUN_* settings the bootstrap reads."""
    env = dict(os.environ if base is None else base)
    # This process may have prepared its own environment on import (a temp dump dir that it
    # removes at exit): the child gets a clean preparation of its own instead.
    marker = env.pop(xla_flags.MARKER_ENV, None)
    if marker:
        flags = xla_flags.split_flags(env.get("XLA_FLAGS", ""))
        setup = xla_flags.current() if base is None else None
        # The marker may come from an ancestor process too (then this process added nothing):
        # its dump dir is always dropped, and its command-buffer flag when the user asks to
        # keep command buffers.
        drop = set(setup.flags_added) if setup is not None else set()
        drop.add(f"--xla_dump_to={marker}")
        if keep_command_buffers:
            drop.add("--xla_gpu_enable_command_buffer=")
        kept = [f for f in flags if f not in drop]
        if kept:
            env["XLA_FLAGS"] = " ".join(kept)
        else:
            env.pop("XLA_FLAGS", None)
    xla_flags.prepare(env, keep_command_buffers=keep_command_buffers,
                       dump_dir=os.path.join(out_dir, "hlo"))
    boot = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bootstrap")
    env["PYTHONPATH"] = os.pathsep.join([boot] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    env["FPGAPROF_RUN_DIR"] = os.path.abspath(out_dir)
    env["FPGAPROF_RUN_TRACE"] = os.path.join(os.path.abspath(out_dir), TRACE_NAME)
    env["FPGAPROF_RUN_COUNTERS"] = "1" if counters else "0"
    if counters and "XLA_PYTHON_CLIENT_PREALLOCATE" not in env and "XLA_PYTHON_CLIENT_ALLOCATOR" not in env:
        # Kernel replay saves and restores JAX's preallocated pool around every kernel (seconds
        # per kernel on an H100): the pool grows on demand instead. A value the user set is kept.
        env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    if keep_command_buffers:
        env["FPGAPROF_KEEP_COMMAND_BUFFERS"] = "1"
    if target:
        env["FPGAPROF_RUN_TARGET"] = target
    return env


def _no_kernels_note_for(prof: Any) -> Any:
    """While reports of `prof` are written: when the run had untraced Python processes (its
    warning, see capture.runner.untraced_warning), an empty GPU table must not say "the traced code
    launched nothing on the GPU" (they may have); the note says so instead."""
    import contextlib
    try:
        n = runner.untraced_count(prof.meta.get("warnings", []))
    except Exception:  # noqa: BLE001 - no meta: nothing to adjust
        n = 0
    if not n:
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def note() -> Any:
        old = sections.NO_KERNELS_NOTE
        sections.NO_KERNELS_NOTE = ("the trace has no GPU kernels: the traced process launched nothing "
                             f"on the GPU ({n} further Python process{'es' if n != 1 else ''} "
                             f"ran untraced and may have)")
        try:
            yield
        finally:
            sections.NO_KERNELS_NOTE = old
    return note()


SI_KERNEL = 0x80  # siginfo si_code of a signal the kernel sent (a terminal's Ctrl-C, a hangup)


def _pass_on(si_code: int, same_group: bool) -> bool:
    """Whether `run` sends a signal it received on to the command: not one the kernel sent
    (si_code SI_KERNEL: a terminal's Ctrl-C or hangup goes to the whole foreground process
    group, so a command in run's group has it already); one a process sent (SI_USER, SI_QUEUE,
    SI_TKILL) was meant for run alone, or for both (`kill -INT -<pgid>`: then the command gets
    two, see docs/reports.md)."""
    return not (si_code == SI_KERNEL and same_group)


def _child_setup(watched: list[int], mask: Any, parent_pid: int) -> Any:
    """The preexec function of the profiled command: signal dispositions and mask as this
    process had them before run blocked them, and SIGTERM when this process dies (Linux
    PR_SET_PDEATHSIG: a SIGKILLed `fpgaprof run` must not leave the program running; the
    traced Python saves its trace on SIGTERM)."""
    prctl = None
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            prctl = None

    def setup() -> None:
        for num in watched:
            signal.signal(num, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if prctl is not None:
            prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
            if os.getppid() != parent_pid:  # died before the prctl: too late for it
                os.kill(os.getpid(), signal.SIGTERM)
    return setup


def _run_forwarding_signals(command: list[str], env: dict) -> int:
    """Runs the command and returns its wait status (negative: the signal that ended it).

    SIGINT, SIGTERM and SIGHUP sent to this process alone (`kill <pid>`, a scheduler) are
    passed on to the command: a traced Python saves its trace and ends as the signal would end
    it, and the reports are still written here. Signals the kernel sent to the whole
    foreground process group (Ctrl-C, a terminal hangup) reached the command already and are
    not sent twice. Signals this process ignores (nohup, a background job) stay ignored by the
    command. The command gets SIGTERM when this process dies, even by SIGKILL (Linux)."""
    watched = [num for num in (signal.SIGINT, *SAVE_ON)
               if signal.getsignal(num) is not signal.SIG_IGN]
    if not hasattr(signal, "sigtimedwait"):
        return _run_forwarding_by_handlers(command, env, watched)
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, watched + [signal.SIGCHLD])
    try:
        proc = subprocess.Popen(command, env=env,
                                preexec_fn=_child_setup(watched, old_mask, os.getpid()))
        try:
            same_group = os.getpgid(proc.pid) == os.getpgrp()
        except OSError:
            same_group = True
        while proc.poll() is None:
            info = signal.sigtimedwait(watched + [signal.SIGCHLD], 1.0)
            if info is None or info.si_signo == signal.SIGCHLD:
                continue
            if not _pass_on(info.si_code, same_group):
                continue
            try:
                proc.send_signal(info.si_signo)
            except OSError:
                pass
        # What came after the command ended is not passed on (nothing to pass it to).
        while signal.sigtimedwait(watched + [signal.SIGCHLD], 0) is not None:
            pass
        return proc.wait()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


def _run_forwarding_by_handlers(command: list[str], env: dict, watched: list[int]) -> int:
    """_run_forwarding_signals where sigtimedwait is missing (macOS): SIGTERM and SIGHUP are
    passed on; SIGINT is left to the terminal (no way to tell who sent it)."""
    child: list = []      # the program, once started
    early: list[int] = []  # signals that came before it started

    def _pass_on(signum: int, _frame: object) -> None:
        if not child:
            early.append(signum)
            return
        try:
            child[0].send_signal(signum)
        except OSError:
            pass

    # A Python-level no-op, not SIG_IGN: an ignored SIGINT would be inherited through exec and
    # the program would never see KeyboardInterrupt; a caught one is reset to the default.
    old_handlers: dict = {}
    try:
        for num in watched:
            try:
                old_handlers[num] = signal.signal(
                    num, (lambda *_: None) if num == signal.SIGINT else _pass_on)
            except (OSError, ValueError):
                pass
        proc = subprocess.Popen(command, env=env)
        child.append(proc)
        for num in early:
            proc.send_signal(num)
        return proc.wait()
    finally:
        for num, old in old_handlers.items():
            signal.signal(num, old)


def cmd_run(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise usage_error(f"{PROG} run", f"no command given (usage: {PROG} run [-o DIR] -- "
                          "python script.py ARGS)")
    out_dir = os.path.abspath(args.output)
    os.makedirs(out_dir, exist_ok=True)
    trace = os.path.join(out_dir, TRACE_NAME)
    # Outputs of an earlier run in the same folder would pass for this run's.
    for stale in (TRACE_NAME, ".fpgaprof-claim", "report.html", "summary.json", "timeline.json",
                  "environment.json"):
        if os.path.exists(os.path.join(out_dir, stale)):
            os.unlink(os.path.join(out_dir, stale))
    runner.drop_untraced_markers(out_dir)
    hlo_dir = os.path.join(out_dir, "hlo")
    if os.path.isdir(hlo_dir):
        for name in os.listdir(hlo_dir):
            p = os.path.join(hlo_dir, name)
            if name.startswith("module_") and os.path.isdir(p):
                shutil.rmtree(p, ignore_errors=True)
            elif name.startswith("module_"):
                os.unlink(p)
    env = child_environment(out_dir, keep_command_buffers=args.keep_command_buffers,
                            counters=args.counters, target=args.target)
    if args.counters:
        if process_env.jax_preallocates(env):  # the user's own allocator setting keeps JAX's pool
            sys.stderr.write(
                f"{PROG} run: warning: --counters with JAX's preallocated pool (kept by your "
                f"XLA_PYTHON_CLIENT_PREALLOCATE={env.get('XLA_PYTHON_CLIENT_PREALLOCATE', '')!r} / "
                f"XLA_PYTHON_CLIENT_ALLOCATOR={env.get('XLA_PYTHON_CLIENT_ALLOCATOR', '')!r}): kernel "
                "replay saves and restores the pool around every kernel, seconds per kernel on an "
                "H100; unset them or set XLA_PYTHON_CLIENT_PREALLOCATE=false\n")
    exe = shutil.which(command[0], path=env.get("PATH"))
    if exe is None and not os.path.exists(command[0]):
        raise FileNotFoundError(2, "command not found (check the name after --)", command[0])
    status = _run_forwarding_signals(command, env)
    code = status if status >= 0 else 128 - status
    untraced = runner.untraced_warning(runner.untraced_processes(out_dir))
    runner.drop_untraced_markers(out_dir)
    if not os.path.exists(trace):
        # why: from the marker the traced process left
        sys.stderr.write(f"{PROG} run: {runner.no_trace_message(out_dir, code)}\n")
        if untraced:
            sys.stderr.write(f"{PROG} run: warning: {untraced}\n")
        return code if code else 1
    claim = os.path.join(out_dir, ".fpgaprof-claim")
    if os.path.exists(claim):
        os.unlink(claim)
    kept = prune_hlo_dump(os.path.join(out_dir, "hlo"))
    try:
        from fpgaprof import report
        bar = report.Progress(1 + len(report.WRITE_STAGES), f"{PROG} run")
        bar.stage("loading trace")
        prof = _load(trace)
        if untraced:
            # Kept in the trace file, so that `fpgaprof report` says it too; the program's own
            # trace is intact if this fails (a full disk), and the reports are still written.
            prof._store.add_warning(untraced)
            try:
                prof.save(trace)
            except Exception as e:  # noqa: BLE001 - only the extra warning line is lost
                print(f"{PROG}: warning: could not add the untraced-process warning to {trace} "
                      f"({e}); the reports below carry it", file=sys.stderr)
        with _no_kernels_note_for(prof):
            paths = report.write_all(prof, out_dir, target=args.target, trace_path=trace,
                                     progress=bar, **_timeline_options(args))
        if kept == 0:
            _write_hlo_modules(prof, os.path.join(out_dir, "hlo"))
        sys.stderr.write(_digest_of(paths["summary"]))
        if untraced:
            sys.stderr.write(f"{PROG} run: warning: {untraced}\n")
        if paths.get("timeline_note"):
            sys.stderr.write(f"{PROG} run: {paths['timeline_note']}\n")
        sys.stderr.write(f"{PROG} run: report {paths['html']} · summary {paths['summary']}"
                         + (f" · timeline {paths['timeline']}" if paths["timeline"] else "")
                         + "\n")
    except Exception as e:
        # The command's status still wins; the report failure is stated once.
        sys.stderr.write(f"{PROG} run: the trace {trace} was written but the reports failed: "
                         f"{_one_line(e)} (retry with `{PROG} report {trace}`)\n")
        return code if code else 1
    return code


# ---------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Profile JAX/XLA programs on NVIDIA GPUs: kernels, "
                "transfers, roofline, FPGA offload candidates.")
    sub = p.add_subparsers(dest="command_name", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    r = sub.add_parser("run", help="run a command under the profiler and write all reports",
                       description="Runs an unmodified program under the profiler. The trace "
                       "starts before the script and is saved at exit (also on exceptions and "
                       "sys.exit). Writes DIR/trace.fpgaprof, report.html, summary.json, "
                       "timeline.json and hlo/. The command's exit status is passed through.")
    r.add_argument("-o", "--output", default="fpgaprof-out", metavar="DIR",
                   help="output folder (default: fpgaprof-out)")
    r.add_argument("--counters", action="store_true",
                   help="collect hardware counters (kernel replay: slower, kept apart from "
                   "timings)")
    r.add_argument("--keep-command-buffers", action="store_true",
                   help="leave XLA command buffers (CUDA graphs) on; per-op attribution is lost "
                   "inside them")
    r.add_argument("--target", default=DEFAULT_TARGET, metavar="CARD",
                   help=f"FPGA card for the what-if: a preset or a card file CARD.json "
                   f"(docs/fpga-model.md; default: {DEFAULT_TARGET})")
    _add_timeline_options(r)
    r.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD ARGS",
                   help="the command, e.g. -- python script.py --size 64")
    r.set_defaults(func=cmd_run)

    r = sub.add_parser("report", help="regenerate every report from a saved trace",
                       description="Regenerates report.html, summary.json, timeline.json and "
                       "hlo/ from a saved trace, on any machine (no GPU needed).")
    r.add_argument("trace", metavar="TRACE", help="trace file (or a `fpgaprof run` folder)")
    r.add_argument("-o", "--output", metavar="DIR", help="output folder (default: the trace's)")
    r.add_argument("--target", default=DEFAULT_TARGET, metavar="CARD",
                   help=f"FPGA card for the what-if: a preset or a card file CARD.json "
                   f"(docs/fpga-model.md; default: {DEFAULT_TARGET})")
    _add_timeline_options(r)
    r.set_defaults(func=cmd_report)

    r = sub.add_parser("export", help="export a trace as Perfetto JSON, summary JSON or CSV",
                       description="perfetto: Chrome/Perfetto trace-event JSON (ui.perfetto.dev); "
                       "json: the summary (docs/summary.schema.json); csv: one record table.")
    r.add_argument("trace", metavar="TRACE")
    r.add_argument("--format", required=True, choices=("perfetto", "json", "csv"))
    r.add_argument("--table", default="kernels", choices=CSV_TABLES,
                   help="table for --format csv (default: kernels)")
    r.add_argument("--target", default=DEFAULT_TARGET, metavar="CARD",
                   help="FPGA card (preset or CARD.json) for the candidates in --format json")
    r.add_argument("-o", "--output", metavar="FILE",
                   help="output file (default: stdout; perfetto: TRACE.timeline.json)")
    _add_timeline_options(r, no_timeline=False)
    r.set_defaults(func=cmd_export)

    r = sub.add_parser("compare", help="compare two traces or summaries (before/after)",
                       description="Per op, region, kernel and transfer direction: time, bytes "
                       "and bound before (A) and after (B), with runs (executions, "
                       "instances, launches) and mean time per run, sorted by the size of the "
                       "change. "
                       "A and B are trace files, summary.json files or `fpgaprof run` folders.")
    r.add_argument("a", metavar="A")
    r.add_argument("b", metavar="B")
    r.add_argument("--json", action="store_true", help="print the rows as JSON")
    r.add_argument("--limit", type=int, default=20, help="rows per section (default 20)")
    r.add_argument("--target", default=DEFAULT_TARGET, metavar="CARD", help=argparse.SUPPRESS)
    r.set_defaults(func=cmd_compare)

    r = sub.add_parser("estimate", help="estimate an HLO module on an FPGA card (no trace, no GPU)",
                       description="The static FPGA what-if of an HLO module (XLA's text, e.g. an "
                       "--xla_dump_to file or jax.jit(f).lower(...).compile().as_text()): every op "
                       "on the card as compiled and restructured, the whole function's card time, "
                       "host-link transfers and total, each with its range (docs/fpga-model.md).")
    r.add_argument("module", metavar="MODULE.hlo", help="HLO text file")
    r.add_argument("--target", default=DEFAULT_TARGET, metavar="CARD",
                   help=f"FPGA card: a preset or a card file CARD.json (default: {DEFAULT_TARGET})")
    r.add_argument("--json", action="store_true", help="print the whole estimate as JSON")
    r.add_argument("--limit", type=_positive_int, default=None, metavar="N",
                   help="show the N ops with the longest card time (default: all)")
    r.set_defaults(func=cmd_estimate)

    r = sub.add_parser("calibrate", help="measure this GPU's achieved ceilings",
                       description="Measures achieved DRAM bandwidth and FLOP/s on this GPU and "
                       "stores them for the roofline (needs a GPU).")
    r.set_defaults(func=cmd_calibrate)

    r = sub.add_parser("counters", help="show the hardware counters trace(counters=True) collects on a chip",
                       description="Shows the metric per role, its unit, the roles the chip cannot give "
                       "and the kernel-replay passes, from CUPTI's Profiler Host API (no GPU needed "
                       "with --chip).")
    r.add_argument("--chip", help="CUPTI chip name, e.g. GH100, GA100, AD102, GB100 (default: the GPU's)")
    r.add_argument("--device", type=int, default=0, help="GPU ordinal whose chip to use (default 0)")
    r.add_argument("--metric", action="append", metavar="NAME",
                   help="a metric with rollup (dram__bytes_read.sum) instead of fpgaprof's set; repeatable")
    r.add_argument("--json", action="store_true", help="print the plan as JSON")
    r.add_argument("--chips", action="store_true", help="list the chip names this CUPTI knows")
    r.set_defaults(func=cmd_counters)

    r = sub.add_parser("devices", help="show CUPTI, driver and GPUs as fpgaprof sees them",
                       description="Shows which libcupti fpgaprof uses, the driver and the GPUs, "
                       "and what is missing for tracing.")
    r.set_defaults(func=cmd_devices)
    return p


def _one_line(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename:
        return f"{e.filename}: {e.strerror or e}"
    return " ".join(str(e).split()) or type(e).__name__


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """parse_args with usage errors that name what is wrong and whose help to read: options
    without a command are unrecognized (not "COMMAND is required"), and an unknown option of
    a command points at that command's --help."""
    if argv and not any(not a.startswith("-") for a in argv):
        unknown = [a for a in argv if a not in ("-h", "--help")]
        if unknown:
            raise usage_error(PROG, f"unrecognized arguments: {' '.join(unknown)}")
    args, extra = parser.parse_known_args(argv)
    if extra:
        cmd = args.command_name
        # options before the command are the top level's, after it the command's
        before = argv.index(cmd) if cmd in argv else len(argv)
        top = [a for a in extra if a in argv[:before]]
        prog = PROG if top else f"{PROG} {cmd}"
        raise usage_error(prog, f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = _parse(parser, argv)
        _check_target(getattr(args, "target", None), f"{PROG} {args.command_name}")
        return int(args.func(args) or 0)
    except UsageError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:
        return 1
    except OSError as e:
        sys.stderr.write(f"{PROG}: error: {_one_line(e)}\n")
        return 1
    except Exception as e:
        from fpgaprof.base.errors import FpgaprofError
        if isinstance(e, FpgaprofError):
            sys.stderr.write(f"{PROG}: error: {_one_line(e)}\n")
            return 1
        if os.environ.get("FPGAPROF_DEBUG"):
            raise
        # A bug of fpgaprof: still one line (the promise), with the way to the traceback.
        sys.stderr.write(f"{PROG}: internal error: {type(e).__name__}: {_one_line(e)} (rerun "
                         f"with FPGAPROF_DEBUG=1 for the traceback and report it)\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
