"""The argument parser of `fpgaprof` (one subparser per command) and its usage errors: one
line naming what is wrong and whose --help to read, exit status 2."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn

from fpgaprof.base.constants import (
    BUFFER_BYTES_MAX,
    BUFFER_BYTES_MIN,
    DEFAULT_TARGET,
    TIMELINE_MAX_EVENTS,
)
from fpgaprof.cli import commands, compare, run
from fpgaprof.cli.common import PROG, usage_error

__all__ = ["build_parser", "parse_args", "TIMELINE_EVENTS"]

TIMELINE_EVENTS = TIMELINE_MAX_EVENTS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        raise usage_error(self.prog, message)


def _whole_number(minimum: int, maximum: int, too_small: str) -> Callable[[str], int]:
    """argparse type of a numeric option: a whole number (1_000 and 1,000 allowed) from
    `minimum` to `maximum`; below it, "<value> <too_small>". Anything else is a usage error."""

    def parse(text: str) -> int:
        try:
            v = int(text.replace("_", "").replace(",", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"{v} {too_small}")
        if v > maximum:
            raise argparse.ArgumentTypeError(f"{text[:40]} is larger than {maximum:,}")
        return v

    return parse


def _output_path(text: str) -> str:
    """argparse type of -o: not empty (an empty -o "$OUT" of an unset variable would write into
    the current folder, replacing what is there)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "is empty (an unset variable?): it would write into the current folder; give a path"
        )
    return text


_positive_int = _whole_number(1, 10**9, "must be 1 or more")
# CUPTI activity buffer bytes (fpgaprof.trace(buffer_size=...)).
_buffer_bytes = _whole_number(
    BUFFER_BYTES_MIN, BUFFER_BYTES_MAX, f"is below {BUFFER_BYTES_MIN} bytes"
)
_non_negative_int = _whole_number(0, 2**62, "is negative (0 means no limit)")
_device_ordinal = _whole_number(0, 2**31 - 1, "is negative (GPU ordinals start at 0)")


def add_row_imbalance_option(r: argparse.ArgumentParser) -> None:
    """--row-imbalance DELTA: the user's ratio for every FPGA estimate the command makes (the
    static estimate's ops, a report's rankings and answer)."""
    r.add_argument(
        "--row-imbalance",
        type=float,
        default=None,
        metavar="DELTA",
        help="the row imbalance ratio (HiSpMV's delta, >= 1) of the matrix behind a gather "
        "paired with a scatter (an SpMV-like op), which the shapes cannot show, applied to "
        "every restructured scatter (fpgaprof.fpga.row_imbalance computes it; "
        'docs/fpga-model.md, "Row imbalance")',
    )


def add_timeline_options(r: argparse.ArgumentParser, no_timeline: bool = True) -> None:
    if no_timeline:
        r.add_argument(
            "--no-timeline",
            action="store_true",
            help="do not write timeline.json (large for long runs)",
        )
    r.add_argument(
        "--timeline-events",
        type=_non_negative_int,
        default=TIMELINE_EVENTS,
        metavar="N",
        help=f"timeline.json holds the first N records by start time "
        f"(default {TIMELINE_EVENTS:,}; 0: all, however large)",
    )


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Profile JAX/XLA programs on NVIDIA GPUs: kernels, "
        "transfers, roofline, FPGA offload candidates.",
    )
    sub = p.add_subparsers(dest="command_name", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    r = sub.add_parser(
        "run",
        help="run a command under the profiler and write all reports",
        description="Runs an unmodified program under the profiler. The trace "
        "starts before the script and is saved at exit (also on exceptions and "
        "sys.exit). Writes DIR/trace.fpgaprof, report.html, summary.json, "
        "timeline.json, hlo/ and environment.json. The command's exit status is passed "
        "through. Under a launcher (srun, mpirun, torchrun: SLURM_PROCID, "
        "OMPI_COMM_WORLD_RANK, PMI_RANK or RANK with a process count above 1) each process "
        "writes DIR/<host>-rank<k>/ instead; "
        "`fpgaprof report DIR` then reports the job as one.",
    )
    r.add_argument(
        "-o",
        "--output",
        default="fpgaprof-out",
        type=_output_path,
        metavar="DIR",
        help="output folder (default: fpgaprof-out)",
    )
    r.add_argument(
        "--buffer-size",
        type=_buffer_bytes,
        default=None,
        metavar="BYTES",
        help="bytes per CUPTI activity buffer (fpgaprof.trace(buffer_size=...); default 8 MiB): "
        "raise it when the report says records were dropped",
    )
    r.add_argument(
        "--device-buffer-size",
        type=_buffer_bytes,
        default=None,
        metavar="BYTES",
        help="bytes of CUPTI's device buffer for GPU timestamps (fpgaprof.trace("
        "device_buffer_size=...); default CUPTI's own): raise it when the report says records "
        "have no timestamps because that buffer ran out",
    )
    r.add_argument(
        "--counters",
        action="store_true",
        help="collect hardware counters (kernel replay: slower, kept apart from timings)",
    )
    r.add_argument(
        "--keep-command-buffers",
        action="store_true",
        help="leave XLA command buffers (CUDA graphs) on; per-op attribution is lost inside them",
    )
    r.add_argument(
        "--target",
        default=DEFAULT_TARGET,
        metavar="CARD",
        help=f"FPGA card for the what-if: a preset or a card file CARD.json "
        f"(docs/fpga-model.md; default: {DEFAULT_TARGET})",
    )
    add_row_imbalance_option(r)
    add_timeline_options(r)
    r.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        metavar="-- CMD ARGS",
        help="the command, e.g. -- python script.py --size 64",
    )
    r.set_defaults(func=run.cmd_run)

    r = sub.add_parser(
        "report",
        help="regenerate every report from a saved trace",
        description="Regenerates report.html, summary.json, timeline.json and "
        "hlo/ from a saved trace, on any machine (no GPU needed). Given a job folder of rank "
        "traces (<host>-rank<k>/ folders of `fpgaprof run` under a launcher, or *.fpgaprof "
        "files), writes job.json, job.html and job.txt there, the ranks read one at a time.",
    )
    r.add_argument(
        "trace", metavar="TRACE", help="trace file, a `fpgaprof run` folder, or a job folder"
    )
    r.add_argument(
        "-o",
        "--output",
        type=_output_path,
        metavar="DIR",
        help="output folder (default: the trace's)",
    )
    r.add_argument(
        "--target",
        default=DEFAULT_TARGET,
        metavar="CARD",
        help=f"FPGA card for the what-if: a preset or a card file CARD.json "
        f"(docs/fpga-model.md; default: {DEFAULT_TARGET})",
    )
    add_row_imbalance_option(r)
    add_timeline_options(r)
    r.set_defaults(func=commands.cmd_report)

    r = sub.add_parser(
        "export",
        help="export a trace as Perfetto JSON, summary JSON, CSV, Parquet tables or XProf",
        description="perfetto: Chrome/Perfetto trace-event JSON (ui.perfetto.dev, HTA); "
        "json: the summary (docs/summary.schema.json); csv: one record table; "
        "parquet: every record and analysis table into a folder (needs pyarrow); "
        "xprof: XProf's XSpace in a jax.profiler.trace folder (xprof/tensorboard --logdir).",
    )
    r.add_argument("trace", metavar="TRACE")
    r.add_argument(
        "--format", required=True, choices=("perfetto", "json", "csv", "parquet", "xprof")
    )
    r.add_argument(
        "--table",
        default="kernels",
        choices=commands.CSV_TABLES,
        help="table for --format csv (default: kernels)",
    )
    r.add_argument(
        "--target",
        default=DEFAULT_TARGET,
        metavar="CARD",
        help="FPGA card (preset or CARD.json) for the candidates in --format json/parquet",
    )
    add_row_imbalance_option(r)
    r.add_argument(
        "-o",
        "--output",
        type=_output_path,
        metavar="FILE",
        help="output file (default: stdout; perfetto: TRACE.timeline.json); "
        "parquet: output folder (default: TRACE.tables/); xprof: output folder "
        "(default: TRACE.xprof/)",
    )
    add_timeline_options(r, no_timeline=False)
    r.set_defaults(func=commands.cmd_export)

    r = sub.add_parser(
        "compare",
        help="compare two traces or summaries (before/after)",
        description="Per op, region, kernel and transfer direction: time, bytes "
        "and bound before (A) and after (B), with runs (executions, "
        "instances, launches) and mean time per run, sorted by the size of the "
        "change. "
        "A and B are trace files, summary.json files or `fpgaprof run` folders.",
    )
    r.add_argument("a", metavar="A")
    r.add_argument("b", metavar="B")
    r.add_argument("--json", action="store_true", help="print the rows as JSON")
    r.add_argument(
        "--limit", type=_positive_int, default=20, metavar="N", help="rows per section (default 20)"
    )
    r.add_argument("--target", default=DEFAULT_TARGET, metavar="CARD", help=argparse.SUPPRESS)
    r.set_defaults(func=compare.cmd_compare)

    r = sub.add_parser(
        "estimate",
        help="estimate an HLO module on an FPGA card (no trace, no GPU)",
        description="The static FPGA what-if of an HLO module (XLA's text, e.g. an "
        "--xla_dump_to file or jax.jit(f).lower(...).compile().as_text()): every op "
        "on the card as compiled and restructured, the whole function's card time, "
        "host-link transfers and total, each with its range (docs/fpga-model.md).",
    )
    r.add_argument("module", metavar="MODULE.hlo", help="HLO text file")
    r.add_argument(
        "--target",
        default=DEFAULT_TARGET,
        metavar="CARD",
        help=f"FPGA card: a preset or a card file CARD.json (default: {DEFAULT_TARGET})",
    )
    r.add_argument("--json", action="store_true", help="print the whole estimate as JSON")
    r.add_argument(
        "--limit",
        type=_positive_int,
        default=None,
        metavar="N",
        help="show the N ops with the longest card time (default: all)",
    )
    add_row_imbalance_option(r)
    r.set_defaults(func=commands.cmd_estimate)

    r = sub.add_parser(
        "calibrate",
        help="measure this GPU's achieved ceilings",
        description="Measures achieved DRAM bandwidth, host-link bandwidth per direction and "
        "matmul FLOP/s per precision on this GPU and stores them for the roofline and the link % "
        "(needs a GPU).",
    )
    r.set_defaults(func=commands.cmd_calibrate)

    r = sub.add_parser(
        "counters",
        help="show the hardware counters trace(counters=True) collects on a chip",
        description="Shows the metric per role, its unit, the roles the chip cannot give "
        "and the kernel-replay passes, from CUPTI's Profiler Host API (no GPU needed "
        "with --chip).",
    )
    r.add_argument(
        "--chip", help="CUPTI chip name, e.g. GH100, GA100, AD102, GB100 (default: the GPU's)"
    )
    r.add_argument(
        "--device",
        type=_device_ordinal,
        default=0,
        metavar="N",
        help="GPU ordinal whose chip to use (default 0)",
    )
    r.add_argument(
        "--metric",
        action="append",
        metavar="NAME",
        help="a metric with rollup (dram__bytes_read.sum) instead of fpgaprof's set; repeatable",
    )
    r.add_argument("--json", action="store_true", help="print the plan as JSON")
    r.add_argument("--chips", action="store_true", help="list the chip names this CUPTI knows")
    r.set_defaults(func=commands.cmd_counters)

    r = sub.add_parser(
        "devices",
        help="show CUPTI, driver and GPUs as fpgaprof sees them",
        description="Shows which libcupti fpgaprof uses, the driver and the GPUs, "
        "and what is missing for tracing.",
    )
    r.set_defaults(func=commands.cmd_devices)
    return p


def parse_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
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
