"""The commands of `fpgaprof` that read a trace or ask the core: report, export, estimate,
calibrate, counters, devices (run: cli.run; compare: cli.compare)."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import shlex
import sys
from typing import Any

import numpy as np

from fpgaprof import report
from fpgaprof.api import calibrate, counters, devices, fpga, job
from fpgaprof.base import records
from fpgaprof.base.atomic import OutputSet, write_text_atomic
from fpgaprof.base.core import core
from fpgaprof.base.errors import HloParseError, did_you_mean
from fpgaprof.base.text import read_text_file, unwrapped
from fpgaprof.cli.common import (
    PROG,
    TRACE_NAME,
    digest_of,
    failure,
    load_trace,
    one_line,
    other_runs_note,
    out,
    row_imbalance_option,
    timeline_options,
    trace_in,
    untraced_count_of,
    usage_error,
    write_hlo_modules,
)
from fpgaprof.report import summary_json

__all__ = [
    "cmd_report",
    "cmd_export",
    "cmd_estimate",
    "cmd_calibrate",
    "cmd_counters",
    "cmd_devices",
    "csv_table",
    "CSV_TABLES",
]


def cmd_report(args: argparse.Namespace) -> int:
    args.row_imbalance = row_imbalance_option(f"{PROG} report", args.row_imbalance)
    job.refuse_trace_beside_rank_folders(args.trace)
    if job.is_job_folder(args.trace):
        return _report_job(args)
    trace = trace_in(args.trace)
    # beside the trace; an XProf folder (a jax.profiler.trace output) gets them inside
    out_dir = args.output or (
        trace if os.path.isdir(trace) else os.path.dirname(os.path.abspath(trace))
    )
    bar = report.Progress(1 + len(report.WRITE_STAGES), f"{PROG} report")
    bar.stage("loading trace")
    prof = load_trace(trace)
    # Every output of this report appears at once, or none does (an error, Ctrl-C, SIGTERM).
    with OutputSet(out_dir) as outs:
        paths = report.write_all(
            prof,
            out_dir,
            target=args.target,
            row_imbalance=args.row_imbalance,
            trace_path=trace,
            progress=bar,
            untraced_processes=untraced_count_of(prof),
            output_set=outs,
            **timeline_options(args),
        )
        hlo = write_hlo_modules(prof, outs.final("hlo"), staging=outs)
    out(digest_of(paths["summary"]).rstrip("\n"))
    for k in ("html", "summary", "timeline"):
        if paths[k]:
            out(
                f"{k:9s} {paths[k]}"
                + (
                    f" (first {args.timeline_events:,} records; see the warning)"
                    if k == "timeline" and paths.get("timeline_note")
                    else ""
                )
            )
    if hlo:
        out(f"{'hlo':9s} {hlo} modules in {os.path.join(out_dir, 'hlo')}")
    if note := other_runs_note(args.trace):
        # runs that found this run's folder taken wrote their traces into <host>-pid<p>/
        sys.stderr.write(f"{PROG} report: note: {note}\n")
    return 0


def _report_job(args: argparse.Namespace) -> int:
    """`fpgaprof report JOB_FOLDER`: the job report, every rank trace read in turn."""
    j = job.Job(args.trace)
    out_dir = args.output or j.folder
    bar = report.Progress(len(j.ranks), f"{PROG} report")
    paths = report.write_job(
        j,
        out_dir,
        target=args.target,
        row_imbalance=args.row_imbalance,
        on_rank=lambda done, total: bar.stage(f"rank {done}/{total}"),
    )
    bar.done()
    out(paths["text"].rstrip("\n"))
    for k in ("html", "json", "text_file"):
        out(f"{'job.' + k.split('_')[0].replace('text', 'txt'):9s} {paths[k]}")
    if paths["running"]:
        # Reported mid-job: incomplete, and the status says so (a script stops here).
        sys.stderr.write(
            f"{PROG} report: error: the job is still running ({len(paths['running'])} "
            f"rank{'s' if len(paths['running']) != 1 else ''} without a trace yet, their "
            f"`{PROG} run` still going): this job report is incomplete; report again when "
            "the job ends\n"
        )
        return 1
    if paths.get("conflicts"):
        # Ranks of two runs summed as one job: every figure over the job is wrong.
        sys.stderr.write(
            f"{PROG} report: error: {paths['conflicts'][0]}; give each run its own -o "
            "folder, or move the earlier run's rank folders out\n"
        )
        return 1
    if paths["rank_count"] == 0:  # the job report says why for each; the command failed
        sys.stderr.write(
            f"{PROG} report: error: no rank trace in {j.folder} could be read (job.txt says why "
            "for each: trace the ranks again, or give the folder of their traces)\n"
        )
        return 1
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    args.row_imbalance = row_imbalance_option(f"{PROG} export", args.row_imbalance)
    if args.output == "-" and args.format in ("parquet", "xprof"):
        raise usage_error(
            f"{PROG} export",
            f"-o - (stdout) is for the one-file exports (json, csv, perfetto); --format "
            f"{args.format} writes a folder: give -o DIR",
        )
    trace = trace_in(args.trace)
    prof = load_trace(trace)
    if args.format == "perfetto":
        max_events = timeline_options(args)["timeline_max_events"]
        if args.output == "-":  # the timeline is the data on stdout; what it holds on stderr
            stream = unwrapped(sys.stdout)
            counts = report.write_timeline_to(prof, stream, max_events=max_events)
            stream.flush()
            path, say = "timeline on stdout", sys.stderr
        else:
            path = args.output or os.path.splitext(trace)[0] + ".timeline.json"
            counts = report.write_timeline(prof, path, max_events=max_events)
            say = sys.stdout
        counts.pop("cut_ns", None)
        say.write(
            f"{path}: "
            + ", ".join(
                f"{v} {k}" for k, v in sorted(counts.items()) if not k.startswith("omitted_")
            )
            + "\n"
        )
        return 0
    if args.format == "xprof":
        out_dir = args.output or os.path.splitext(trace)[0] + ".xprof"
        path, notes = report.write_xspace(prof, out_dir)
        for note in notes:
            print(f"{PROG}: note: {note}", file=sys.stderr)
        out(f"xplane    {path}")
        out(f"open it:  xprof --logdir {out_dir}   (or tensorboard --logdir {out_dir})")
        return 0
    if args.format == "parquet":
        # not "TRACE.parquet": DuckDB, pandas and pyarrow read a folder of that name as one
        # table's dataset (DuckDB sums every table's rows; pandas stops at index.json)
        out_dir = args.output or os.path.splitext(trace)[0] + ".tables"
        paths = report.write_parquet(
            prof, out_dir, target=args.target, row_imbalance=args.row_imbalance
        )
        for name, path in paths.items():
            out(f"{name:16s} {path}")
        return 0
    if args.format == "json":
        text = summary_json.dumps(
            report.collect(
                prof, target=args.target, trace_path=trace, row_imbalance=args.row_imbalance
            )
        )
    else:
        text = csv_table(prof, args.table)
    if args.output and args.output != "-":
        write_text_atomic(args.output, text)
        out(args.output)
    else:
        unwrapped(sys.stdout).write(text)  # data (CSV, JSON) as it is, not terminal text
    return 0


# XLA's largest optimized modules are tens of MB of text.
HLO_FILE_MAX_BYTES = 1 << 30

CSV_TABLES = (
    "kernels",
    "transfers",
    "memsets",
    "allocations",
    "api_calls",
    "markers",
    "regions",
    "syncs",
    "ops",
)


def _op_fields() -> list[str]:
    """The columns of prof.ops (fields of the attribution's OpStats, in the order records_of
    gives them): the CSV header of a trace with no op."""
    try:
        cls = core.attribution.OpStats
    except AttributeError:
        return []
    return [k for k in dir(cls) if not k.startswith("_") and isinstance(getattr(cls, k), property)]


# What a spreadsheet opening the file takes for the start of a formula (=, +, -, @) or strips
# before it looks (tab, carriage return): a text cell starting so is written after an apostrophe,
# which spreadsheets read as "text follows" (OWASP, "CSV Injection"). Numbers are written as
# they are: -5 stays a number.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(v: Any, none32: bool) -> Any:
    """One CSV cell: "none" (kNone32 in a uint32 column: no parent, no region, ...) and None
    are empty; lists are joined with ";" (kernel_names); text a spreadsheet would run as a
    formula ("=HYPERLINK(...)" as a region or kernel name from a trace) is written after an
    apostrophe."""
    if none32 and v == 0xFFFFFFFF:
        return ""
    if isinstance(v, (list, tuple)):
        v = ";".join("" if x is None else str(x) for x in v)
    if isinstance(v, str) and v.startswith(_FORMULA_START):
        return "'" + v
    return "" if v is None else v


def csv_table(prof: Any, table: str) -> str:
    """One record table (or prof.ops) as CSV: a header always (also without rows), one line
    per record; docs/reports.md, "CSV"."""
    obj = getattr(prof, table, None)
    if obj is None:
        raise failure(f"this profile has no {table} table (choose one of {', '.join(CSV_TABLES)})")
    cols: dict[str, Any]
    if table == "ops":
        rows = records.records_of(obj)
        keys: list[str] = [] if rows else _op_fields()
        for r in rows:
            keys += [k for k in r if k not in keys]
        cols = {k: [r.get(k) for r in rows] for k in keys}
    else:
        cols = records.columns(obj)
    buf = io.StringIO()
    # RFC 4180's CRLF: with "\n" alone, Python 3.11's writer leaves a field holding a bare "\r"
    # unquoted, and the file no longer parses (a name from a trace can hold one)
    w = csv.writer(buf, lineterminator="\r\n")
    keys = list(cols)
    w.writerow(keys)
    none32 = {
        k: getattr(cols[k], "dtype", None) == "uint32" and records.none_when_max(k) for k in keys
    }
    n = len(next(iter(cols.values()))) if cols else 0
    for i in range(n):
        w.writerow([_csv_cell(records.to_plain(cols[k][i]), none32[k]) for k in keys])
    return buf.getvalue()


def _not_a_module(path: str) -> str | None:
    """What a trace, a run folder or a summary.json given to `estimate` is, and what to give
    instead; None for anything else (read and parsed as HLO text)."""
    quoted = shlex.quote(path)
    if os.path.isdir(path) and (
        os.path.isfile(os.path.join(path, TRACE_NAME)) or os.path.isdir(os.path.join(path, "hlo"))
    ):
        return (
            f"{path} is a run folder, not an HLO module: give one of its modules "
            f"({os.path.join(path, 'hlo', 'module_*.txt')}), or `{PROG} report {quoted}` for "
            "its ops ranked on the card with their measured GPU times"
        )
    if not os.path.isfile(path):  # a FIFO or device is never opened here (it could block)
        return None  # read_text_file below says why
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return None
    if head.startswith(b"FPGAPROF"):
        return (
            f"{path} is an fpgaprof trace, not an HLO module: `{PROG} report {quoted} --target "
            "CARD` ranks its ops on the card with their measured GPU times; estimate takes one "
            "module's HLO text (the report's hlo/module_*.txt)"
        )
    if head.lstrip().startswith(b"{"):
        return (
            f"{path} is JSON, not an HLO module (a summary.json?): give an HLO text file "
            "(XLA's --xla_dump_to output, a report's hlo/module_*.txt, or compiled.as_text())"
        )
    return None


def cmd_estimate(args: argparse.Namespace) -> int:
    """The static FPGA what-if of an HLO module (fpgaprof.fpga.estimate_hlo): the ops table,
    the whole function's card time, transfers and total with their ranges; --json for all."""
    if why := _not_a_module(args.module):
        raise usage_error(f"{PROG} estimate", why)
    try:
        text = read_text_file(args.module, "an HLO text file", HLO_FILE_MAX_BYTES)
    except UnicodeDecodeError as e:
        raise usage_error(
            f"{PROG} estimate",
            f"{args.module} is not UTF-8 text ({e.reason} at byte {e.start}): "
            "give an HLO text file (XLA's --xla_dump_to output, or compiled.as_text())",
        )
    except OSError as e:
        reason = (e.strerror or str(e)).removeprefix(f"{args.module}: ")
        raise usage_error(f"{PROG} estimate", f"cannot read {args.module}: {reason}")
    try:
        est = fpga.estimate_hlo(
            text,
            target=fpga.target_spec(args.target),
            row_imbalance=row_imbalance_option(f"{PROG} estimate", args.row_imbalance),
        )
    except HloParseError as e:
        raise failure(f"{args.module}: not HLO text fpgaprof can read ({one_line(e)})")
    if args.json:
        _write_estimate_json(est)
        return 0
    # the command line's way, not Python's: the same module, card and ratio, quoted for a shell
    again = [PROG, "estimate", args.module]
    if args.target != fpga.DEFAULT_TARGET:
        again += ["--target", args.target]
    if args.row_imbalance is not None:
        again += ["--row-imbalance", repr(args.row_imbalance)]
    est.more = " ".join(shlex.quote(a) for a in again + ["--json"])
    if args.limit is not None and args.limit < len(est):
        shown = type(est)(sorted(est, key=lambda r: -(r.get("card_time_s") or 0))[: args.limit])
        for k in ("title", "display", "footer", "empty_note", "more"):
            setattr(shown, k, getattr(est, k))
        shown.title = est.title + f" (the {args.limit} longest of {len(est)})"
        out(str(shown))
    else:
        out(str(est))
    return 0


def _write_estimate_json(est: Any) -> None:
    """The estimate as one JSON object (summary, target, ops, and not_finite when a value was NaN
    or infinite), written a row at a time: the text json.dumps(indent=1) gives for the whole,
    without holding a copy of every row or the whole text (10^6 ops: a few GB otherwise)."""
    not_finite: dict[str, str] = {}
    write = sys.stdout.write

    def value(v: Any, path: str, depth: int) -> str:
        # `v` as json.dumps(indent=1) writes it `depth` levels in (no newline is raw inside a
        # JSON string, so each line of the value moves in by `depth` spaces)
        text = json.dumps(
            _finite(v, path, not_finite), indent=1, default=_json_default, allow_nan=False
        )
        return text.replace("\n", "\n" + " " * depth)

    write('{\n "summary": ' + value(est.summary(), "summary", 1))
    write(',\n "target": ' + value(est.target, "target", 1))
    write(',\n "ops": [')
    for i, row in enumerate(est):
        write(("\n  " if i == 0 else ",\n  ") + value(row, f"ops[{i}]", 2))
    write("\n ]" if len(est) else "]")
    if not_finite:
        # JSON has no NaN or infinity: such a value is null, and this says which and why
        reason = (
            "JSON has no NaN or infinity: these fields are null here (nan: not estimated, the "
            "op's estimate_note says why; inf: the estimate overflowed)"
        )
        write(',\n "not_finite": ' + value({"reason": reason, "fields": not_finite}, "", 1))
    write("\n}\n")


def _json_default(x: Any) -> Any:
    return None


def _finite(v: Any, path: str, not_finite: dict[str, str]) -> Any:
    """`v` with every NaN or infinity (float or numpy) made None, each noted in `not_finite`
    under its JSON path ("summary.card_time_s", "ops[3].flops") as "nan", "inf" or "-inf"."""
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isfinite(f):
            return f
        not_finite[path] = "nan" if math.isnan(f) else ("inf" if f > 0 else "-inf")
        return None
    if isinstance(v, dict):
        return {k: _finite(x, f"{path}.{k}" if path else str(k), not_finite) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x, f"{path}[{i}]", not_finite) for i, x in enumerate(v)]
    return v


def cmd_calibrate(args: argparse.Namespace) -> int:
    result = calibrate.run()
    if isinstance(result, dict):
        out(json.dumps(result, indent=1, default=str))
    elif result is not None:
        out(str(result))
    return 0


def cmd_counters(args: argparse.Namespace) -> int:
    if args.chips:
        out(" ".join(counters.chips()) + "\n")
        return 0
    if args.chip:
        _check_chip(args.chip)
    plan = counters.plan(args.chip, metrics=args.metric or None, device=args.device)
    out(json.dumps(plan.to_dict(), indent=1) + "\n" if args.json else str(plan))
    return 0


def _check_chip(chip: str) -> None:
    """An unknown --chip is a usage error of `fpgaprof counters` (a close match suggested)."""
    try:
        names = counters.chips()
    except Exception:  # noqa: BLE001 - no CUPTI to ask: plan() says why
        return
    if chip.strip().upper() in names:
        return
    raise usage_error(
        f"{PROG} counters",
        f"unknown chip {chip!r} "
        f"({did_you_mean(chip.strip().upper(), names)}CUPTI's chip names: "
        f"{', '.join(names)}; `{PROG} counters --chips` lists them)",
    )


def cmd_devices(args: argparse.Namespace) -> int:
    out(devices.describe())
    return 0
