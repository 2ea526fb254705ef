#!/usr/bin/env python3
"""What kernel replay costs per kernel under JAX's GPU allocator settings (GPU; docs/roofline.md,
"Timing under counters"). Runs N launches of one small jitted kernel (4 MiB in, 4 MiB out) under
trace(counters=True) and prints one JSON line: the allocator settings, the pool JAX holds
(memory_stats), the seconds of the counting block, of the same block untraced, and per kernel.

    XLA_PYTHON_CLIENT_PREALLOCATE=false python tests/gpu/replay_cost.py [N]
"""
import json
import os
import sys
import time

import fpgaprof  # noqa: F401  (before jax)
import jax
import jax.numpy as jnp


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    x = jnp.ones((1 << 20,), jnp.float32)
    f = jax.jit(lambda a: a * 2.0 + 1.0)
    f(x).block_until_ready()
    t0 = time.perf_counter()
    for _ in range(n):
        y = f(x)
    y.block_until_ready()
    plain = time.perf_counter() - t0
    t0 = time.perf_counter()
    with fpgaprof.trace(counters=True) as prof:
        for _ in range(n):
            y = f(x)
        y.block_until_ready()
    counted = time.perf_counter() - t0
    stats = jax.devices()[0].memory_stats() or {}
    print(json.dumps({
        "XLA_PYTHON_CLIENT_PREALLOCATE": os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE"),
        "XLA_PYTHON_CLIENT_ALLOCATOR": os.environ.get("XLA_PYTHON_CLIENT_ALLOCATOR"),
        "pool_bytes": stats.get("pool_bytes", stats.get("bytes_reserved")),
        "bytes_limit": stats.get("bytes_limit"),
        "kernels": len(prof.kernels), "counter_records": len(prof.counters),
        "untraced_s": plain, "counted_s": counted, "counted_s_per_kernel": counted / max(n, 1),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
