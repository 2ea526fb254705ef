"""summary.json: the summary (report.model.collect) as JSON, the machine-readable report
(schema: docs/summary.schema.json). NaN and infinities are written as null."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from fpgaprof.base.atomic import write_text_atomic
from fpgaprof.base.records import to_plain

__all__ = ["dumps", "write_summary"]


def dumps(summary: Mapping) -> str:
    """The summary as summary.json's text (JSON-safe: numpy scalars to Python, NaN to null)."""
    return json.dumps(to_plain(dict(summary)), indent=1, allow_nan=False) + "\n"


def write_summary(path: str | os.PathLike, summary: Mapping) -> None:
    """Writes summary.json atomically."""
    write_text_atomic(path, dumps(summary))
