"""GPU energy on a real GPU (skipped without one): a long matmul loop traced with the NVML power
sampler, checked against nvidia-smi's own power readings taken at the same time (another tool,
docs/energy.md). Not run yet: written for the first CUDA machine without network."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu

from _gpu import skip_without_gpu  # noqa: E402

CODE = """
import json, subprocess, time
import fpgaprof
import jax, jax.numpy as jnp
f = jax.jit(lambda a, b: jnp.tanh(a @ b) @ b)
a = jnp.ones((8192, 8192), jnp.float32) / 8192
b = jnp.ones((8192, 8192), jnp.float32) / 8192
f(a, b).block_until_ready()  # compile and warm up outside the trace
with fpgaprof.trace(require_gpu=True) as prof:
    time.sleep(0.5)  # idle first: the idle power has time of its own
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=uuid,power.draw,power.limit",
                            "--format=csv,noheader,nounits", "-lms", "100"],
                           stdout=subprocess.PIPE, text=True)
    with fpgaprof.region("matmul"):
        t_end = time.time() + 4.0
        while time.time() < t_end:
            c = f(a, b)
        c.block_until_ready()
    smi.terminate()
    readings = smi.communicate()[0]
region = [dict(r) for r in prof.energy_report(by="region")]
device = [dict(r) for r in prof.energy_report(by="device")]
op = [dict(r) for r in prof.energy_report(by="op")]
print(json.dumps({"region": region, "device": device, "op": op, "smi": readings,
                  "uuid": prof.device.uuid if prof.device else "",
                  "samples": len(prof.power_samples), "meta": prof.energy_report().meta,
                  "warnings": [w for w in prof.warnings if "GPU energy" in w]}))
"""


@skip_without_gpu
@pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="nvidia-smi not on PATH")
def test_matmul_energy_agrees_with_nvidia_smi():
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(CODE)], capture_output=True, text=True,
                       timeout=600, env=dict(os.environ))
    sys.stderr.write(p.stderr[-4000:])
    assert p.returncode == 0, p.stderr[-4000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    print(json.dumps({k: got[k] for k in ("region", "device", "meta", "samples")}, indent=1))
    assert not got["warnings"], got["warnings"]
    assert got["samples"] > 100
    meta = got["meta"]
    assert meta["measured"] and meta["sample_period_ns"] == 1_000_000
    # The counter's update period: NVML documents none; anything from a reading to a second.
    assert 0 < meta["update_period_ns"] < 1_000_000_000
    (dev,) = got["device"]
    assert dev["has_counter"], "an H100/H200 has nvmlDeviceGetTotalEnergyConsumption"
    (reg,) = got["region"]
    # nvidia-smi's readings of the same GPU during the loop (W), and its power limit.
    smi = [line.split(", ") for line in got["smi"].strip().splitlines()]
    draws = [float(d) for u, d, _lim in smi if u == got["uuid"]]
    limits = [float(lim) for u, _d, lim in smi if u == got["uuid"]]
    assert len(draws) >= 10, got["smi"]
    smi_mean_w = sorted(draws)[len(draws) // 2]
    # Both read the board's power; nvidia-smi's power.draw is NVML's averaged reading, the
    # region's mean is the energy counter over the region: within 20 % of each other.
    assert reg["mean_w"] == pytest.approx(smi_mean_w, rel=0.20)
    assert reg["peak_w"] <= max(limits) * 1.05
    assert dev["idle_w"] is not None and dev["idle_w"] < reg["mean_w"]
    # The op table (ops, then kernels without an op, copies and idle time) adds up to the total.
    assert sum(r["joules"] for r in got["op"]) == pytest.approx(dev["joules"], rel=1e-6)
