"""Reports people read: summary.json, report.html, timeline.json (Perfetto) and notebook HTML.

    from fpgaprof import report
    report.write_all(prof, "out/")          # summary.json, report.html, timeline.json
    s = report.collect(prof, target="alveo-u55c")   # the summary as a dict
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any, Iterable, Mapping

from fpgaprof.analysis.trace_analysis import AnalysisCache
from fpgaprof.report.html import render as render_html
from fpgaprof.report.html import write_html
from fpgaprof.report.perfetto import MAX_EVENTS as TIMELINE_MAX_EVENTS
from fpgaprof.report.perfetto import write_timeline
from fpgaprof.report.summary import SCHEMA_VERSION, collect, write_summary

__all__ = ["collect", "write_all", "write_html", "write_summary", "write_timeline",
           "render_html", "SCHEMA_VERSION", "Progress", "WRITE_STAGES", "TIMELINE_MAX_EVENTS"]


class Progress:
    """Stages of long work as a bar on stderr, only when stderr is a terminal (not when CI is
    set, not with TERM=dumb, never into a log file). Each stage is drawn when it begins, with
    the seconds since the start, so the bar is there from the first second and says what is
    running: `stage(name)` begins the next stage, `done()` ends the bar."""

    def __init__(self, total: int, label: str = "fpgaprof", stream: Any = None) -> None:
        self.total, self.done_count, self.label = total, 0, label
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(isatty and isatty()) and not os.environ.get("CI") \
            and os.environ.get("TERM") != "dumb"
        self.t0 = time.monotonic()
        self.current: str | None = None

    def _draw(self, text: str, end: str = "") -> None:
        if not self.enabled:
            return
        width = 24
        filled = int(width * self.done_count / max(self.total, 1))
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                          f"{self.done_count}/{self.total} {text:<32.32} "
                          f"{time.monotonic() - self.t0:6.1f} s{end}")
        self.stream.flush()

    def stage(self, what: str) -> None:
        """The previous stage is done; `what` begins."""
        if self.current is not None:
            self.done_count = min(self.done_count + 1, self.total)
        self.current = what
        self._draw(f"{what}…")

    def step(self, what: str) -> None:
        """`what` is done (counted after the work; stage() shows work as it begins)."""
        self.current = None
        self.done_count = min(self.done_count + 1, self.total)
        self._draw(what, "\n" if self.done_count >= self.total else "")

    def done(self) -> None:
        if self.current is not None:
            self.done_count = min(self.done_count + 1, self.total)
            self.current = None
            self._draw("done", "\n")


# Stages write_all reports itself (a caller that loads the trace first adds "loading trace").
WRITE_STAGES = ("attribution", "analysis", "summary.json", "report.html", "timeline.json")


def write_all(prof: Any, out_dir: str | os.PathLike, *, target: str | None = None,
              trace_path: str | None = None, environment: Mapping | None = None,
              measurements: Iterable[Mapping] | None = None,
              extra_warnings: Iterable[str] = (), progress: Progress | None = None,
              timeline: bool = True, timeline_max_events: int | None = TIMELINE_MAX_EVENTS
              ) -> dict[str, str]:
    """Writes summary.json, report.html and timeline.json into out_dir (each atomically).
    Returns {"summary": path, "html": path, "timeline": path} ("timeline" is "" with
    timeline=False, when timeline.json is not written and an old one is removed).
    timeline.json holds the first `timeline_max_events` records by start time (None: all);
    when more are left out, summary.json's warnings and "timeline_note" in the result say
    how many. progress: a Progress with room for WRITE_STAGES (one is made when not given);
    its bar ends here."""
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    bar = progress if progress is not None else Progress(len(WRITE_STAGES), "fpgaprof report")
    note = _timeline_cut(prof, timeline_max_events) if timeline else ""
    if note:
        extra_warnings = list(extra_warnings) + [note]
    # The analysis result collect() caches on the profile (ops, roofline, transfer and memory
    # rows, per region path) is released before timeline.json when it was made only for this
    # report, so its memory does not come on top of the timeline's peak.
    cache = getattr(prof, "analyses", None)
    with cache.transient() if isinstance(cache, AnalysisCache) else contextlib.nullcontext():
        s = collect(prof, target=target, trace_path=trace_path, environment=environment,
                    measurements=measurements, extra_warnings=extra_warnings, progress=bar)
    paths = {"summary": os.path.join(out_dir, "summary.json"),
             "html": os.path.join(out_dir, "report.html"),
             "timeline": os.path.join(out_dir, "timeline.json")}
    bar.stage("summary.json")
    write_summary(paths["summary"], s)
    title = "fpgaprof report"
    if trace_path:
        title += f" — {os.path.basename(os.fspath(trace_path))}"
    bar.stage("report.html")
    write_html(paths["html"], s, title)
    if timeline:
        bar.stage("timeline.json")
        write_timeline(prof, paths["timeline"], max_events=timeline_max_events)
        if note:
            paths["timeline_note"] = note
    else:
        if os.path.exists(paths["timeline"]):  # an older one would pass for this trace's
            os.unlink(paths["timeline"])
        paths["timeline"] = ""
    bar.done()
    return paths


def _timeline_cut(prof: Any, max_events: int | None) -> str:
    """The warning for a timeline.json cut at max_events records ("" when all fit)."""
    from fpgaprof.base import records
    tables = ("kernels", "transfers" if records.attr_or(prof, "transfers") is not None else "memcpys",
              "memsets", "api_calls", "markers", "regions")
    total = sum(records.table_len(records.attr_or(prof, t)) for t in tables)
    if max_events is None or total <= max_events:
        return ""
    return (f"timeline.json shows the first {max_events:,} of {total:,} records by start time "
            f"({total - max_events:,} later ones left out, a line marks the cut); `fpgaprof "
            f"report TRACE --timeline-events 0` writes them all, --timeline-events N another "
            f"number")
