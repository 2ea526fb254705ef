"""Compile-time cost of XLA's HLO dump that `import fpgaprof` turns on (docs/performance.md,
"XLA's HLO dump at compile time").

Compiles one small jitted function in fresh interpreters, alternating without and with
`--xla_dump_to=DIR --xla_dump_hlo_as_text`, and prints the median (min-max) process CPU time of
`.compile()` for each (CPU time: wall time is too noisy on a shared machine).

    .venv/bin/python bench/hlo_dump_cost.py [--runs 11] [--size 64]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

CHILD = """
import sys, time, jax, jax.numpy as jnp
n = int(sys.argv[1])
def f(x, y):
    return jnp.tanh(x @ y + 1.0).sum(axis=0) * 2.0
x = jnp.ones((n, n)); y = jnp.ones((n, n))
jax.block_until_ready(x); jax.block_until_ready(y)
t = time.process_time()
jax.jit(f).lower(x, y).compile()
print((time.process_time() - t) * 1e3)
"""


def one(size: int, dump_dir: str | None) -> float:
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    if dump_dir:
        env["XLA_FLAGS"] = f"--xla_dump_to={dump_dir} --xla_dump_hlo_as_text"
    r = subprocess.run([sys.executable, "-c", CHILD, str(size)], capture_output=True, text=True,
                       env=env, check=True)
    return float(r.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--size", type=int, default=64)
    a = ap.parse_args()
    plain, dumped = [], []
    tmp = tempfile.mkdtemp(prefix="hlo-dump-cost-")
    try:
        for i in range(a.runs):
            plain.append(one(a.size, None))
            d = os.path.join(tmp, str(i))
            dumped.append(one(a.size, d))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for name, v in (("without dump", plain), ("with dump", dumped)):
        print(f"{name:13s} {statistics.median(v):7.1f} ms CPU median ({min(v):.1f}-{max(v):.1f}), "
              f"{len(v)} runs")
    print(f"difference    {statistics.median(dumped) - statistics.median(plain):+7.1f} ms")


if __name__ == "__main__":
    main()
