"""The device-memory peak under JAX's preallocated pool: one allocation of at least half the
GPU's memory is named as the pool (analysis/sections.py pool_allocation), so that "peak 63.84 GB" is
not read as the program's arrays. Expected values by hand, and from the real H100 trace of the
MBIRJAX sweep under `fpgaprof run` (tests/data/traces), whose trace covers JAX's start."""
import os

import pytest

import fpgaprof
from fpgaprof.analysis import sections

SWEEP = os.path.join(os.path.dirname(__file__), "..", "data", "traces", "mbirjax_sweep_32_64_run_h100.fpgaprof")


def _buf(size, device=0):
    return {"bytes": size, "device_id": device, "alloc_s": 1.5}


def test_pool_threshold_by_hand():
    gpu = {0: 80_000_000_000, 1: 16_000_000_000}
    assert sections.pool_allocation([_buf(39_999_999_999)], gpu) is None        # 49.99 %
    p = sections.pool_allocation([_buf(40_000_000_000)], gpu)                   # 50 %
    assert p["bytes"] == 40_000_000_000 and p["share_of_device"] == 0.5 and p["alloc_s"] == 1.5
    assert p["allocations"] == 1
    assert "XLA_PYTHON_CLIENT_ALLOCATOR=platform" in p["note"] and "50%" in p["note"]
    assert sections.pool_allocation([_buf(12_000_000_000, device=1)], gpu)["share_of_device"] == 0.75
    assert sections.pool_allocation([_buf(12_000_000_000, device=2)], gpu) is None  # size unknown
    assert sections.pool_allocation([], gpu) is None
    assert sections.pool_allocation([_buf(60_000_000_000)], None) is None
    # Not an XLA trace (no HLO modules: PyTorch, CuPy): a big buffer is only a big buffer.
    assert sections.pool_allocation([_buf(60_000_000_000)], gpu, xla=False) is None


def test_pools_on_two_gpus_are_summed_and_the_largest_described():
    gpu = {0: 80_000_000_000, 1: 16_000_000_000}
    # largest-first, as the memory analysis lists them: GPU 0's pool, GPU 1's pool, a small one
    bufs = [_buf(60_000_000_000, 0), _buf(12_000_000_000, 1), _buf(1_000_000, 0)]
    p = sections.pool_allocation(bufs, gpu)
    assert p["allocations"] == 2
    assert p["bytes"] == 72_000_000_000
    assert p["device_id"] == 0 and p["share_of_device"] == 0.75
    assert "on 2 GPUs" in p["note"]
    # GPU 1's largest buffer is small: only GPU 0's pool counts
    q = sections.pool_allocation([_buf(60_000_000_000, 0), _buf(1_000_000_000, 1)], gpu)
    assert q["allocations"] == 1 and q["bytes"] == 60_000_000_000


@pytest.mark.skipif(not os.path.exists(SWEEP), reason="the saved H100 trace is not here")
def test_the_real_sweep_trace_shows_jax_s_75_percent_pool():
    prof = fpgaprof.load(SWEEP)
    sec = prof.memory_report().section
    pool = sec["pool"]
    # H100 80GB HBM3: 85,017,493,504 B; JAX's pool: 63,763,906,560 B (cuMemSetAccess at 4.64 s)
    assert prof.devices[0].global_memory_bytes == 85017493504
    assert pool["bytes"] == 63763906560 and pool["allocations"] == 1
    assert pool["share_of_device"] == pytest.approx(63763906560 / 85017493504)
    assert pool["share_of_device"] == pytest.approx(0.75, abs=1e-4)
    assert sec["peak_bytes"] >= pool["bytes"]


def test_digest_line_names_the_pool_on_one_or_several_gpus():
    from fpgaprof.report import digest

    mem = {"available": True, "peak_bytes": 72_000_000_000, "peak_time_s": 2.0,
           "pool": {"bytes": 72_000_000_000, "allocations": 2}}
    line = digest.facts_lines({"memory": mem, "transfers": {}})[0]
    assert "device memory peak 72.00 GB at 2.000 s (72.00 GB of it XLA's preallocated pool: report.html, Device memory)" in line
    line = digest.facts_lines({"memory": {**mem, "pool": None}, "transfers": {}})[0]
    assert "preallocated" not in line
