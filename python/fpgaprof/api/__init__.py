"""The api layer: what a user calls (``fpgaprof.trace``, ``region``, ``load``, ``Profile``) and
its results (tables, printed and in Jupyter through the views layer), over the analysis layer.

- ``profile``: Profile (one cached analysis per store) and load().
- ``trace``: trace() and region(); NestedProfile under ``fpgaprof run``.
- ``overview``: what summary.json says about a trace, built once from a Profile.
- facades: ``roofline``, ``resource_reports`` (transfers, memory, devices), ``fpga``,
  ``calibrate``, ``counters``, ``devices``, ``fpga_validation`` (the public modules
  ``fpgaprof.roofline``, ``fpgaprof.fpga``, ... re-export them).
"""
