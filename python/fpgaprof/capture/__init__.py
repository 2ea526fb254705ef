"""The capture layer: what the profiled process needs around the C++ CUPTI session.

- ``process_env``: the environment set at ``import fpgaprof``, before JAX starts (NVTX
  injection, the CUPTI wheel folders, XLA flags).
- ``xla_flags``: XLA_FLAGS for the HLO dump and command buffers; reading the dumped modules.
- ``hlo_dump``: the dumped HLO modules a trace needs, copied into its store at the end.
- ``signals``: the trace saved when SIGTERM or SIGHUP ends the program.
- ``runner``: the traced side of ``fpgaprof run`` (started by ``_bootstrap/sitecustomize.py``).
- ``run_environment``: the JAX/MBIRJAX versions and devices a run had (environment.json).
"""
