"""Values more than one layer needs (one place each)."""

from __future__ import annotations

__all__ = [
    "DEFAULT_TARGET",
    "NONE32",
    "TRACE_FILE_NAME",
    "PATH_SEP",
    "TOP_ROWS",
    "FULL_ROWS",
    "TIMELINE_MAX_EVENTS",
    "WARNINGS_MAX",
    "NAME_MAX_CHARS",
    "BUFFER_BYTES_MIN",
    "BUFFER_BYTES_MAX",
]

# The FPGA card of the what-if when none is named (fpga_candidates, the reports, the CLI).
DEFAULT_TARGET = "alveo-u55c"

# "None" in a uint32 index column of the records (no parent, no region, ...: docs/records.md).
NONE32 = 0xFFFFFFFF

# A CUPTI activity buffer's size (fpgaprof.trace(buffer_size=...), `run --buffer-size`): at least
# 4 KiB, at most 1 GiB (several are alive at once; 8 MiB by default). Checked here to name the
# Python argument; the core refuses the same range (kMinBufferBytes, kMaxBufferBytes).
BUFFER_BYTES_MIN = 4096
BUFFER_BYTES_MAX = 1 << 30

# The trace file in a `fpgaprof run` output folder.
TRACE_FILE_NAME = "trace.fpgaprof"

# Joins the names of nested regions into a region's path ("outer > inner"), as the C++
# analysis does (RegionPaths).
PATH_SEP = " > "

# How many rows a list section keeps in summary.json / report.html (the rest is counted).
TOP_ROWS = 50
# The tables `fpgaprof compare` reads (ops, regions) are complete in summary.json up to this
# many rows (the HTML shows the first TOP_ROWS); more are counted in rows_left_out.
FULL_ROWS = 10_000

# Records timeline.json holds by default: about 125-250 bytes each, so 150-250 MB of JSON,
# which Perfetto's UI still opens (files past a few hundred MB fail to load in the browser).
TIMELINE_MAX_EVENTS = 1_000_000

# Distinct warnings summary.json / report.html list; more are counted in one last warning (a
# trace may hold any number in META).
WARNINGS_MAX = 1_000

# Longest name (kernel, region, NVTX range, HLO op) timeline.json writes whole; a longer one is
# cut with "..." and its length (a trace may hold names of any length, and each slice repeats it).
NAME_MAX_CHARS = 1_024
