"""The analysis layer: typed wrappers of the C++ analysis of one trace store.

- ``attribution``: kernels and copies -> HLO ops -> Python lines.
- ``trace_analysis``: one call of the C++ analysis (transfers, memory, roofline, FPGA model,
  devices) with its options, and the per-store cache a Profile owns.
- ``sections``: the analysis' results in report units (seconds, GB/s, region paths), and the
  trace-level facts the reports show. It also holds the Python re-computations of results the
  C++ analysis will give (GPU busy union, region paths and their GPU time, top kernels, the
  per-instance transfer sums, the DRAM peak formula, copy kind names): issue #20's follow-up
  reads them from the C++ result instead.
- ``targets``: FPGA cards (presets, card files, FpgaTarget) as the model takes them.
- ``ceilings``: the GPU's peak FLOP/s and bandwidths (table, or measured by calibrate).
- ``hlo``: the HLO parser and cost model (``fpgaprof.hlo``).
- ``hlo_export``: one HLO instruction as a standalone module (for an HLS flow).
"""
