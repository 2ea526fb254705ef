"""examples/mbirjax_forward.py, the everyday-use example, runs as a user would run it (a
subprocess: fpgaprof imported before jax) and leaves a trace that loads with its two regions.
Without a GPU its tables must say why they are empty; on a GPU they must hold ranked rows."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fpgaprof

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mbirjax_forward.py"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mbirjax") is None,
                                reason="mbirjax not installed (pip install '.[mbirjax]')")


def fpgaprof_backend() -> str:
    """JAX's backend in a fresh process, as the example sees it."""
    return subprocess.run([sys.executable, "-c", "import jax; print(jax.default_backend())"],
                          capture_output=True, text=True, timeout=300).stdout.strip()


def test_forward_example_traces_ranks_and_saves(tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop("DISPLAY", None)
    p = subprocess.run([sys.executable, str(EXAMPLE), "--size", "8", "--target", "versal-v80",
                        "--out", "fwd.fpgaprof"], capture_output=True, text=True, timeout=600,
                       env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    out = p.stdout
    # on a GPU the FPGA answer comes first (prof.summary()), the trace line after it
    assert out.startswith(("fpgaprof trace: wall time ", "FPGA answer per "))
    assert "trace saved to fwd.fpgaprof" in out
    # Which projector kernels ran: XLA's without an H100/H200/A100 (and always on MBIRJAX 0.6).
    version = importlib.metadata.version("mbirjax")
    kernels = next(line for line in out.splitlines() if "projector kernels:" in line)
    if version.startswith("0.6."):
        assert kernels == (f"MBIRJAX {version} projector kernels: XLA "
                           "(get_compute_config() came with 0.7)")
    elif "cpu" in fpgaprof_backend():
        assert kernels == (f"MBIRJAX {version} projector kernels: XLA "
                           "(Pallas: not a GPU platform (cpu))")
    prof = fpgaprof.load(tmp_path / "fwd.fpgaprof")
    names = [prof.regions[i].name for i in range(len(prof.regions))]
    assert names == ["forward_project/8", "back_project/8"]  # the size in the name
    region_head = "FPGA offload candidates on versal-v80: region paths as whole units"
    ops_head = "FPGA offload candidates on versal-v80: HLO ops"
    if len(prof.kernels) == 0:  # no GPU: the tables say so instead of printing nothing
        why = "no rows (the trace has no GPU kernels: trace on a machine with an NVIDIA GPU)"
        assert f"{region_head}: {why}" in out and f"{ops_head}: {why}" in out
    else:
        assert f"{region_head}: 2 rows" in out
        assert f"{ops_head}: " in out and "rows" in out
