"""XLA's buffer assignment on a real CPU dump: captured with the module, kept in the trace,
analysed (peak over the schedule, what is live at it, each op's on-chip need), shown by
prof.memory_report(by="module").

The traced function and its hand-worked sizes (f32[256,256] = 256 x 256 x 4 = 262,144 bytes,
f32[256] = 1,024 bytes):

    def f(a, b):
        c = jnp.tanh(a @ b)                      # dot, then tanh in place: one 262,144 B buffer
        return (c * 2.0 + a).sum(axis=0), c      # the sum: f32[256], 1,024 B

Parameters a, b (2 x 262,144) live throughout; the dot's buffer from the dot on; the sum's
from the reduce on. Peak: 3 x 262,144 + 1,024 = 787,456 bytes, at the reduce. (XLA's own
live-range dump lists the same peak; the test reads it separately as a cross-check.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

import fpgaprof

HERE = os.path.dirname(os.path.abspath(__file__))
OLD_TRACE = os.path.join(HERE, "..", "data", "traces", "mbirjax_parallel_64_counters_h100.fpgaprof")

F32_256x256 = 256 * 256 * 4
F32_256 = 256 * 4

SCRIPT = textwrap.dedent(
    """\
    import sys
    import fpgaprof
    import jax, jax.numpy as jnp

    def f(a, b):
        c = jnp.tanh(a @ b)
        return (c * 2.0 + a).sum(axis=0), c

    a = jnp.ones((256, 256), jnp.float32)
    b = jnp.full((256, 256), 0.5, jnp.float32)
    with fpgaprof.trace(path=sys.argv[1]):
        jax.jit(f)(a, b)[0].block_until_ready()
    """
)
TANH_LINE = 6
SUM_LINE = 7


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    d = tmp_path_factory.mktemp("bufs")
    script = d / "traced_f.py"
    script.write_text(SCRIPT)
    trace = d / "f.fpgaprof"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("XLA_FLAGS", "FPGAPROF_XLA_DUMP_DIR", "FPGAPROF_HLO_DUMP_DIR")
    }
    env["JAX_PLATFORMS"] = "cpu"
    r = subprocess.run(
        [sys.executable, str(script), str(trace)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return str(script), str(trace)


def _module(prof, name="jit_f"):
    mods = [m for m in prof.hlo_modules if m.name == name]
    assert len(mods) == 1, [m.name for m in prof.hlo_modules]
    return mods[0]


def test_the_trace_keeps_the_buffer_assignment(traced):
    _, trace = traced
    m = _module(fpgaprof.load(trace))
    # only the allocations are kept: not the module XLA prints before them
    assert m.buffer_assignment.startswith("BufferAssignment:\nallocation ")
    assert "HloModule" not in m.buffer_assignment
    assert m.live_ranges.startswith("HloLiveRange (max ")
    assert m.text.startswith("HloModule jit_f")


def test_peak_and_live_at_peak_by_hand(traced):
    script, trace = traced
    rep = fpgaprof.load(trace).memory_report(by="module")
    row = next(r for r in rep["modules"] if r["module"] == "jit_f")
    assert row["peak_source"] == "xla live ranges"
    assert row["peak_bytes"] == 3 * F32_256x256 + F32_256 == 787_456
    assert row["xla_peak_bytes"] == 787_456  # XLA's own dump agrees
    assert row["parameter_bytes"] == 2 * F32_256x256
    assert row["output_bytes"] == F32_256x256 + F32_256
    assert row["temporary_bytes"] == 0 and row["constant_bytes"] == 0
    live = rep["live_at_peak"]["jit_f"]
    assert [b["size_bytes"] for b in live] == [F32_256x256] * 3 + [F32_256]
    kinds = sorted(b["kind"] for b in live)
    assert kinds == ["output", "output", "parameter", "parameter"]
    tanh = next(b for b in live if b["op_name"].endswith("tanh"))
    assert tanh["source"] == f"{script}:{TANH_LINE}"
    assert tanh["shape"].startswith("f32[256,256]")
    total = next(b for b in live if b["size_bytes"] == F32_256)
    assert total["op_name"].endswith("reduce_sum")
    assert total["source"] == f"{script}:{SUM_LINE}"
    # the peak is at the reduce, the last op reading the dot/tanh buffer
    assert row["peak_instruction"] == total["producer"]
    tl = rep["timeline"]["jit_f"]
    assert max(tl["live_bytes"]) == 787_456
    assert tl["live_bytes"][0] == 2 * F32_256x256  # the parameters alone at the start


def test_onchip_need_of_the_reduce_by_hand(traced):
    _, trace = traced
    m = _module(fpgaprof.load(trace))
    from fpgaprof.base.core import core

    text = m.text
    reduce_op = re.search(r"%(\S+) = f32\[256\]\{0\} fusion\(", text).group(1)
    need = core.analysis.onchip_need(text, m.buffer_assignment, reduce_op)
    # in: a and tanh's result; out: f32[256]; its reducer's three f32[] scalars (thread-local)
    assert need == {
        "input_bytes": 2 * F32_256x256,
        "output_bytes": F32_256,
        "temporary_bytes": 3 * 4,
        "total_bytes": 2 * F32_256x256 + F32_256 + 12,
    }


def test_an_old_trace_loads_without_buffer_assignment():
    prof = fpgaprof.load(OLD_TRACE)
    assert prof.hlo_modules and all(m.buffer_assignment == "" for m in prof.hlo_modules)
    rep = prof.memory_report(by="module")
    assert len(rep["modules"]) == 0
    assert "buffer assignment" in str(rep["modules"])
    # its candidates keep the cost model's sizes and say so
    cands = prof.fpga_candidates()
    scored = [c for c in cands if c.get("onchip_source") is not None]
    assert scored and all(c["onchip_source"] == "cost model" for c in scored)
    assert all(c["onchip_input_bytes"] is None for c in cands)
