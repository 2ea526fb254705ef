"""The api layer: what a user calls (``fpgaprof.trace``, ``region``, ``load``, ``Profile``) and
how its results read (tables, printed and in Jupyter), over the analysis layer.

- ``profile``: Profile (one cached analysis per store) and load().
- ``trace``: trace() and region(); NestedProfile under ``fpgaprof run``.
- ``views``: Table and the text/HTML tables of analysis rows and record tables.
- ``section_views``: the transfer, memory and device sections as text and HTML.
- ``overview``: what summary.json says about a trace, built once from a Profile.
- ``profile_views``: prof.summary() and the Profile in Jupyter.
- facades: ``roofline``, ``resource_reports`` (transfers, memory, devices), ``fpga``,
  ``calibrate``, ``counters``, ``devices``, ``fpga_validation`` (the public modules
  ``fpgaprof.roofline``, ``fpgaprof.fpga``, ... re-export them).
"""
