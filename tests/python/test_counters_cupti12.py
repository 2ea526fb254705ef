"""A core built with one CUPTI's headers (CUDA 13.0's in CI) makes counter plans through CUDA
12.8's libcupti (the nvidia-cuda-cupti-cu12 wheel, what jax[cuda12] loads) exactly as through
CUDA 13's: the Profiler Host API takes the parameter structs fpgaprof passes (CUDA 12.8's sizes,
cpp/src/cupti/profiler_headers.hpp) and answers the same metrics, units and passes. The 12.8
library is the one scripts/test.sh installs for its CUDA 12 build (build/cupti-cu12-12.8);
the expected plans are the CUDA 13 toolkit library's own answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CU12 = ROOT / "build" / "cupti-cu12-12.8" / "nvidia" / "cuda_cupti" / "lib" / "libcupti.so.12"
TOOLKIT = Path("/usr/local/cuda/lib64/libcupti.so.13")

PLANS = """
import json, sys
from fpgaprof import counters
out = {}
for chip in sys.argv[1:]:
    p = counters.plan(chip)
    out[chip] = {"cupti": p.cupti_path, "passes": p.passes, "missing": list(p.missing),
                 "metrics": [(m["role"], m["name"], m["unit"]) for m in p.metrics]}
print(json.dumps(out))
"""

CHIPS = ["GH100", "GA100", "AD102", "GB100"]


def _plans(library: Path) -> dict:
    env = dict(os.environ, FPGAPROF_CUPTI_LIBRARY=str(library))
    env.pop("FPGAPROF_FAKE_CUPTI", None)
    p = subprocess.run([sys.executable, "-c", PLANS, *CHIPS], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not CU12.is_file() or not TOOLKIT.is_file(),
                    reason="needs build/cupti-cu12-12.8 (scripts/test.sh) and the CUDA 13 toolkit")
def test_plans_through_libcupti_12_8_equal_those_through_13():
    got, want = _plans(CU12), _plans(TOOLKIT)
    for chip in CHIPS:
        assert got[chip]["cupti"] == str(CU12)
        assert want[chip]["cupti"] == str(TOOLKIT)
        for key in ("passes", "missing", "metrics"):
            assert got[chip][key] == want[chip][key], (chip, key)
    # The plan is a real one: GH100's DRAM bytes and FP32 FMAs with their units.
    gh = dict((r, (n, u)) for r, n, u in got["GH100"]["metrics"])
    assert gh["dram_read"] == ("dram__bytes_read.sum", "byte")
    assert gh["fp32_fma"] == ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "instruction")
