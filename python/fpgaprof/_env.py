"""Process environment that must be set before jax/XLA start (filled in by the capture layer)."""


def prepare_process() -> None:
    return None
