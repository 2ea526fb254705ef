"""GPU detection shared by the tests in tests/gpu: a fresh interpreter asks JAX for devices, so
that this pytest process never initialises a JAX backend (and fpgaprof stays importable first)."""
import functools
import json
import subprocess
import sys

import pytest

_DETECT = ("import json, jax\n"
           "try:\n ds = jax.devices()\nexcept RuntimeError:\n ds = []\n"
           "print(json.dumps(any(d.platform in ('gpu', 'cuda') for d in ds)))")


@functools.lru_cache(maxsize=1)
def has_gpu() -> bool:
    try:
        p = subprocess.run([sys.executable, "-c", _DETECT], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return False
    lines = p.stdout.strip().splitlines()
    return p.returncode == 0 and bool(lines) and json.loads(lines[-1]) is True


skip_without_gpu = pytest.mark.skipif(not has_gpu(), reason="no CUDA GPU visible to JAX (jax.devices())")
