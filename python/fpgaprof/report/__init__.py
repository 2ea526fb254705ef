"""The report layer: files people read, from one data model.

    from fpgaprof import report
    report.write_all(prof, "out/")          # summary.json, report.html, timeline.json
    s = report.collect(prof, target="alveo-u55c")   # the summary as a dict

``model.collect(prof)`` builds the summary (the dict written as summary.json); the renderers
take it, never the Profile, and never import each other: ``summary_json`` (summary.json),
``html`` (report.html), ``digest`` (the closing lines of `fpgaprof run`/`report`), and
``timeline`` (timeline.json, from ``model.timeline_records(prof)``: its records are too many
for the summary) and ``parquet`` (the record and analysis tables, from
``tables.data_tables(prof)``).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Mapping
from typing import Any

from fpgaprof.analysis.targets import row_imbalance_given
from fpgaprof.analysis.trace_analysis import AnalysisCache
from fpgaprof.base.atomic import OutputSet, write_text_atomic
from fpgaprof.base.constants import TIMELINE_MAX_EVENTS
from fpgaprof.base.diagnostics import diagnostic
from fpgaprof.base.text import utf8_safe
from fpgaprof.report import job_text
from fpgaprof.report import parquet as parquet_renderer
from fpgaprof.report import timeline as timeline_renderer
from fpgaprof.report import xspace as xspace_renderer
from fpgaprof.report.html import render as render_html
from fpgaprof.report.html import write_html
from fpgaprof.report.job_html import write_job_html
from fpgaprof.report.model import (
    SCHEMA_VERSION,
    collect,
    collect_job,
    timeline_cut_note,
    timeline_records,
    xspace_records,
)
from fpgaprof.report.progress import Progress
from fpgaprof.report.summary_json import write_summary
from fpgaprof.report.tables import data_tables

__all__ = [
    "write_timeline_to",
    "collect",
    "write_all",
    "write_job",
    "write_html",
    "write_summary",
    "write_timeline",
    "write_parquet",
    "write_xspace",
    "XPROF_HOST",
    "render_html",
    "SCHEMA_VERSION",
    "Progress",
    "WRITE_STAGES",
    "TIMELINE_MAX_EVENTS",
]

# Stages write_all reports itself (a caller that loads the trace first adds "loading trace").
WRITE_STAGES = ("analysis", "summary.json", "report.html", "timeline.json")


def write_timeline(
    prof: Any, path: str | os.PathLike, max_events: int | None = TIMELINE_MAX_EVENTS
) -> dict[str, int]:
    """Writes timeline.json (Chrome/Perfetto trace-event JSON) of a Profile atomically: the
    first `max_events` records by start time (None: all). Returns the slices per category
    (report.timeline.write_timeline)."""
    return timeline_renderer.write_timeline(timeline_records(prof), path, max_events=max_events)


def write_timeline_to(
    prof: Any, f: Any, max_events: int | None = TIMELINE_MAX_EVENTS
) -> dict[str, int]:
    """write_timeline into an open text stream `f` (`fpgaprof export --format perfetto -o -`:
    stdout), as it is made: nothing atomic about a stream."""
    return timeline_renderer.write_timeline_to(timeline_records(prof), f, max_events=max_events)


def write_parquet(
    prof: Any,
    out_dir: str | os.PathLike,
    target: str | None = None,
    row_imbalance: float | None = None,
) -> dict[str, str]:
    """Writes every record and analysis table of a Profile as DIR/<table>.parquet and
    DIR/index.json (report.parquet; needs pyarrow). Returns table name -> path.
    row_imbalance: the ratio the FPGA candidates take (write_all())."""
    row_imbalance = row_imbalance_given(row_imbalance)
    tables = data_tables(prof, target=target, row_imbalance=row_imbalance)
    return parquet_renderer.write_parquet(tables, out_dir)


XPROF_HOST = "fpgaprof"  # the host name of an exported XSpace (<host>.xplane.pb)


def write_xspace(
    prof: Any, out_dir: str | os.PathLike, run: str | None = None, hostname: str = XPROF_HOST
) -> tuple[str, list[str]]:
    """Writes the trace as XProf's XSpace, DIR/plugins/profile/<run>/<hostname>.xplane.pb
    (report.xspace; needs protobuf, and jax for the HLO modules). `run`: the run folder's
    name (default: the trace's start time, as jax.profiler.trace names it, UTC). Returns the
    path and the notes on what the XSpace could not hold."""
    t = xspace_records(prof)
    if run is None:
        start_ns = int(t.facts.get("start_ns") or 0)
        run = time.strftime("%Y_%m_%d_%H_%M_%S", time.gmtime(start_ns / 1e9))
    return xspace_renderer.write_xspace(t, out_dir, run, hostname)


def write_all(
    prof: Any,
    out_dir: str | os.PathLike,
    *,
    target: str | None = None,
    trace_path: str | None = None,
    environment: Mapping | None = None,
    measurements: Iterable[Mapping] | None = None,
    extra_warnings: Iterable[Any] = (),
    progress: Progress | None = None,
    timeline: bool = True,
    timeline_max_events: int | None = TIMELINE_MAX_EVENTS,
    untraced_processes: int = 0,
    output_set: OutputSet | None = None,
    row_imbalance: float | None = None,
) -> dict[str, str]:
    """Writes summary.json, report.html and timeline.json into out_dir as one set: they appear
    together when all are written, and an error or a signal before that leaves out_dir as it
    was (base.atomic.OutputSet). Returns {"summary": path, "html": path, "timeline": path}
    ("timeline" is "" with timeline=False, when timeline.json is not written and an old one is
    removed). timeline.json holds the first `timeline_max_events` records by start time (None:
    all); when more are left out, summary.json's warnings and "timeline_note" in the result say
    how many. progress: a Progress with room for WRITE_STAGES (one is made when not given);
    its bar ends here. untraced_processes, row_imbalance: see collect(). output_set: a set the
    caller commits (with more files of its own); out_dir is then its folder."""
    # a bad ratio fails before the analysis; 0 (the core's "not known") is none
    row_imbalance = row_imbalance_given(row_imbalance)
    os.makedirs(os.fspath(out_dir), exist_ok=True)  # an unusable folder fails before the analysis
    bar = progress if progress is not None else Progress(len(WRITE_STAGES), "fpgaprof report")
    note = timeline_cut_note(prof, timeline_max_events) if timeline else ""
    if note:
        extra_warnings = list(extra_warnings) + [diagnostic("report.timeline_cut", note)]
    # The analysis result collect() caches on the profile (ops, roofline, transfer and memory
    # rows, per region path) is released before timeline.json when it was made only for this
    # report, so its memory does not come on top of the timeline's peak.
    cache = getattr(prof, "analyses", None)
    with cache.transient() if isinstance(cache, AnalysisCache) else contextlib.nullcontext():
        s = collect(
            prof,
            target=target,
            trace_path=trace_path,
            environment=environment,
            measurements=measurements,
            extra_warnings=extra_warnings,
            progress=bar,
            untraced_processes=untraced_processes,
            row_imbalance=row_imbalance,
        )
    outs = output_set if output_set is not None else OutputSet(out_dir)
    try:
        paths = {
            "summary": outs.final("summary.json"),
            "html": outs.final("report.html"),
            "timeline": outs.final("timeline.json"),
        }
        bar.stage("summary.json")
        write_summary(outs.path("summary.json"), s)
        title = "fpgaprof report"
        if trace_path:
            title += f" — {os.path.basename(os.fspath(trace_path))}"
        bar.stage("report.html")
        write_html(outs.path("report.html"), s, title)
        if timeline:
            bar.stage("timeline.json")
            write_timeline(prof, outs.path("timeline.json"), max_events=timeline_max_events)
            if note:
                paths["timeline_note"] = note
        else:
            outs.remove("timeline.json")  # an older one would pass for this trace's
            paths["timeline"] = ""
        if output_set is None:
            outs.commit()
    except BaseException as e:
        if output_set is not None:
            raise
        outs.discard()
        public = outs.public_error(e)
        if public is e:
            raise
        raise public from e
    bar.done()
    return paths


def _utf8_safe_tree(v: Any) -> Any:
    """`v` (dicts, lists, tuples, strings) with every string made UTF-8-safe (base.text)."""
    if isinstance(v, str):
        return utf8_safe(v)
    if isinstance(v, Mapping):
        return {_utf8_safe_tree(k): _utf8_safe_tree(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_utf8_safe_tree(x) for x in v]
    return v


def write_job(
    job: Any,
    out_dir: str | os.PathLike,
    *,
    target: str | None = None,
    on_rank: Any = None,
    row_imbalance: float | None = None,
) -> dict[str, Any]:
    """Writes job.json, job.html and job.txt (the text `fpgaprof report` prints) of an
    api.job.Job into out_dir as a set (base.atomic.OutputSet: all three appear together, or
    none does and out_dir stays as it was). Returns their paths, "text", "rank_count" (the
    rank traces read) and "running" (the rank folders a live `fpgaprof run` still holds).
    row_imbalance: the ratio every rank's FPGA rankings take (collect())."""
    # a bad ratio fails before any rank is read; 0 (the core's "not known") is none
    row_imbalance = row_imbalance_given(row_imbalance)
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    # rank folder names come from the file system: one that is not UTF-8 holds lone
    # surrogates, which no output can encode; they are written as escapes (\udcff)
    model = _utf8_safe_tree(
        collect_job(job, target=target, on_rank=on_rank, row_imbalance=row_imbalance)
    )
    names = {"json": "job.json", "html": "job.html", "text_file": "job.txt"}
    text = job_text.render(model)
    with OutputSet(out_dir) as outs:
        write_summary(outs.path(names["json"]), model)
        write_job_html(outs.path(names["html"]), model)
        write_text_atomic(outs.path(names["text_file"]), text)
    paths: dict[str, Any] = {k: os.path.join(out_dir, n) for k, n in names.items()}
    paths["text"] = text
    paths["rank_count"] = model["rank_count"]
    # ranks whose `fpgaprof run` still holds their folder: the report is not the whole job's
    paths["running"] = [m.get("name") for m in model.get("missing") or [] if m.get("running")]
    paths["conflicts"] = [c["reason"] for c in model.get("conflicts") or []]
    return paths
