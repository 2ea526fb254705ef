"""Reports people read: summary.json, report.html, timeline.json (Perfetto) and notebook HTML.

    from fpgaprof import report
    report.write_all(prof, "out/")          # summary.json, report.html, timeline.json
    s = report.collect(prof, target="alveo-u55c")   # the summary as a dict
"""
from __future__ import annotations

import os
import sys
from typing import Any, Iterable, Mapping

from fpgaprof.report.html import render as render_html
from fpgaprof.report.html import write_html
from fpgaprof.report.perfetto import write_timeline
from fpgaprof.report.summary import SCHEMA_VERSION, collect, write_summary

__all__ = ["collect", "write_all", "write_html", "write_summary", "write_timeline",
           "render_html", "SCHEMA_VERSION", "Progress"]


class Progress:
    """Steps of long work on stderr, only when stderr is a terminal and not in CI."""

    def __init__(self, total: int, label: str = "fpgaprof") -> None:
        self.total, self.done, self.label = total, 0, label
        self.enabled = sys.stderr.isatty() and not os.environ.get("CI")

    def step(self, what: str) -> None:
        self.done += 1
        if self.enabled:
            width = 24
            filled = int(width * self.done / max(self.total, 1))
            sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                             f"{self.done}/{self.total} {what:<28}")
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def write_all(prof: Any, out_dir: str | os.PathLike, *, target: str | None = None,
              trace_path: str | None = None, environment: Mapping | None = None,
              measurements: Iterable[Mapping] | None = None,
              extra_warnings: Iterable[str] = ()) -> dict[str, str]:
    """Writes summary.json, report.html and timeline.json into out_dir (each atomically).
    Returns {"summary": path, "html": path, "timeline": path}."""
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    bar = Progress(3, "fpgaprof report")
    s = collect(prof, target=target, trace_path=trace_path, environment=environment,
                measurements=measurements, extra_warnings=extra_warnings)
    paths = {"summary": os.path.join(out_dir, "summary.json"),
             "html": os.path.join(out_dir, "report.html"),
             "timeline": os.path.join(out_dir, "timeline.json")}
    write_summary(paths["summary"], s)
    bar.step("summary.json")
    title = "fpgaprof report"
    if trace_path:
        title += f" — {os.path.basename(os.fspath(trace_path))}"
    write_html(paths["html"], s, title)
    bar.step("report.html")
    write_timeline(prof, paths["timeline"])
    bar.step("timeline.json")
    return paths
