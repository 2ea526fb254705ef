"""The analysis layer: typed wrappers of the C++ analysis of one trace store.

- ``attribution``: kernels and copies -> HLO ops -> Python lines.
- ``trace_analysis``: one call of the C++ analysis (transfers, memory, roofline, FPGA model,
  devices) with its options, and the per-store cache a Profile owns.
- ``sections``: the analysis' results in report units (seconds, GB/s, region paths), and the
  trace-level facts the reports show; what the C++ analysis computes (busy-time unions,
  kernels by name, region paths and their GPU time, transfer groups, DRAM peaks) is read from
  its result, not computed again.
- ``targets``: FPGA cards (presets, card files, FpgaTarget) as the model takes them.
- ``ceilings``: the GPU's peak FLOP/s and bandwidths (table, or measured by calibrate).
- ``hlo``: the HLO parser and cost model (``fpgaprof.hlo``).
- ``hlo_export``: one HLO instruction as a standalone module (for an HLS flow).
"""
