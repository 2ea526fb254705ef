"""Process environment that must be set before jax/XLA start (filled in by the capture layer)."""


def prepare_process() -> None:
    # XLA reads XLA_FLAGS once, when its first backend starts: add the HLO dump and command
    # buffer flags now (and warn once if a JAX backend is already running).
    from fpgaprof import _xla_flags

    _xla_flags.current()
    return None
