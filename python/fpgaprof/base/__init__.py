"""The bottom layer: what every other layer may use and that uses nothing of fpgaprof but the
compiled core (``fpgaprof._core``).

- ``errors``: the exception classes (``fpgaprof.errors`` re-exports them; the C++ core raises
  them by that name).
- ``units``: numbers, times, bytes, shares and speedups as text (one place for every report).
- ``columns``: what a column name says about its values (unit, range, bound) and how a cell
  of it reads; the one column order of printed tables, notebook tables and report.html.
- ``markup``: HTML building blocks (escaping, sortable tables, "not available" lines).
- ``records``: record tables (anything with ``len()`` and ``columns()``) as numpy columns and
  rows, and values made JSON-safe.
- ``atomic``: files written whole or not at all.
- ``constants``: values shared by several layers (the default FPGA card, row limits, ...).
"""
