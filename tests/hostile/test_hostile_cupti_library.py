"""FPGAPROF_CUPTI_LIBRARY naming something that is not a library file (issue: a FIFO there made
`dlopen` block, so `fpgaprof devices`, `trace()` and `run` hung): each gives its one-line
reason at once. Each case runs driver.py in its own process under a time limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _driver(env_path: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, FPGAPROF_CUPTI_LIBRARY=env_path)
    try:
        return subprocess.run(
            [sys.executable, str(HERE / "driver.py"), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"FPGAPROF_CUPTI_LIBRARY={env_path}: {args} still ran after {timeout} s (a hang)")


def test_devices_says_why_at_once(not_a_library):
    path, what = not_a_library
    r = _driver(path, "cli", "devices")
    out = r.stdout + r.stderr
    assert "Traceback" not in out, out
    assert f"FPGAPROF_CUPTI_LIBRARY={path} {what}, not a library file" in out, out


def test_trace_is_host_only_and_require_gpu_raises(not_a_library):
    path, what = not_a_library
    code = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    with fpgaprof.trace() as p:\n"
        "        pass\n"
        "results.append([str(x.message) for x in w])\n"
        "try:\n"
        "    with fpgaprof.trace(require_gpu=True):\n"
        "        pass\n"
        "except fpgaprof.CuptiUnavailableError as e:\n"
        "    results.append(str(e))\n"
    )
    r = _driver(path, "py", code)
    assert r.returncode == 0, r.stderr[-2000:]
    warned, raised = json.loads(r.stdout.strip().splitlines()[-1])
    assert any(f"{what}, not a library file" in m for m in warned), warned
    assert f"FPGAPROF_CUPTI_LIBRARY={path} {what}" in raised
    assert "\n" not in raised.strip()
