"""GPU check of the region what-if (prof.fpga_candidates(by="region")) on real XLA output:
XLA's own XlaModule NVTX ranges count the jitted calls inside each region, and the bytes each
call moves come from the arrays JAX passed and returned (skipped without a CUDA GPU)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu

from _gpu import skip_without_gpu  # noqa: E402

_SCRIPT = '''
import json
import fpgaprof
import jax, jax.numpy as jnp

def scaled(x, y):
    return jnp.sin(x) * y + 1.0

x = jnp.ones((1 << 22,), jnp.float32)
fs = jax.jit(scaled)
out = fs(x, x).block_until_ready()                      # compile outside the trace
with fpgaprof.trace(require_gpu=True) as prof:
    with fpgaprof.region("step"):
        for _ in range(3):
            with fpgaprof.region("call"):
                fs(x, x).block_until_ready()
rows = {r["region"]: dict(r) for r in prof.fpga_candidates("alveo-u55c", by="region")}
k = prof.kernels.columns(["start_ns", "end_ns", "region_index"])
print(json.dumps({"rows": rows, "io": int(2 * x.nbytes + out.nbytes),
                  "kernel_ns": int((k["end_ns"] - k["start_ns"]).sum()),
                  "kernels": int(len(k["start_ns"]))}, default=float))
'''


@skip_without_gpu
def test_region_what_if_counts_jitted_calls_from_xla_ranges(tmp_path):
    path = tmp_path / "regions_gpu.py"
    path.write_text(textwrap.dedent(_SCRIPT))
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ))
    sys.stderr.write(p.stderr[-4000:])
    assert p.returncode == 0, p.stderr[-4000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    print(json.dumps(got, indent=1)[:6000])
    rows = got["rows"]
    assert set(rows) == {"step", "step > call"}
    step, call = rows["step"], rows["step > call"]
    assert call["instances"] == 3 and step["instances"] == 1
    # Three jitted calls, each an XlaModule range: counted, not estimated.
    for r in (step, call):
        assert r["module_calls"] == 3 and r["module_calls_counted"] is True
        # Each call takes x twice and returns one array of the same size (JAX's own nbytes).
        assert r["transfer_bytes"] == pytest.approx(3 * got["io"])
        assert r["estimated_share"] == pytest.approx(1.0)
    # Every kernel of the trace ran inside "step".
    assert step["kernel_count"] == got["kernels"]
    assert step["gpu_time_ns"] == pytest.approx(got["kernel_ns"])
    assert step["time_share"] == pytest.approx(1.0)
