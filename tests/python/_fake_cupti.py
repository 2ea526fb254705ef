"""Helpers for tests that trace through the libcupti test double (tests/fake_cupti).

CUPTI state is process-global (one subscriber, one loaded library), so every traced scenario
runs in a fresh interpreter: ``run_traced(code, **fake_env)`` runs ``code`` with
FPGAPROF_CUPTI_LIBRARY pointing at libfake_cupti.so and returns what the code printed as JSON
on its last line. ``emit()`` inside the code makes the fake emit its records.
"""
from __future__ import annotations

import ctypes
import glob
import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fake_cupti_path() -> str | None:
    """libfake_cupti.so: $FPGAPROF_FAKE_CUPTI, else the newest build/*/tests/libfake_cupti.so."""
    p = os.environ.get("FPGAPROF_FAKE_CUPTI")
    if p and os.path.isfile(p):
        return p
    found = [f for f in glob.glob(os.path.join(ROOT, "build", "*", "tests", "libfake_cupti.so"))
             if not _sanitized(f)]
    return max(found, key=os.path.getmtime) if found else None


def fake_nvml_path() -> str | None:
    """libfake_nvml.so (tests/fake_nvml): $FPGAPROF_FAKE_NVML, else the one beside the
    libfake_cupti.so that fake_cupti_path() finds."""
    p = os.environ.get("FPGAPROF_FAKE_NVML")
    if p and os.path.isfile(p):
        return p
    cupti = fake_cupti_path()
    if cupti is None:
        return None
    p = os.path.join(os.path.dirname(cupti), "libfake_nvml.so")
    return p if os.path.isfile(p) else None


def need_fake_nvml() -> str:
    p = fake_nvml_path()
    if p is None:
        pytest.skip("libfake_nvml.so not built: build the C++ tests (-DFPGAPROF_TESTS=ON) or set "
                    "FPGAPROF_FAKE_NVML")
    return p


def counter_joules(readings: list, a_ms: float, b_ms: float) -> float:
    """The energy counter's joules over [a_ms, b_ms), worked out by hand from a trace's own
    readings ((time_ns - t0, energy_mj) pairs from prof.power_samples) as docs/energy.md says:
    linear between the readings at which the counter changed. Those readings come up to a
    sampling period or so after each step of a slowly updated counter (later on a busy host),
    so this is the power times the window only to within that lag. The window must lie between
    two such readings."""
    knots = [(t / 1e6, e / 1000) for k, (t, e) in enumerate(readings)
             if k > 0 and e != readings[k - 1][1]]
    (((t1, e1), (t2, e2)),) = [(p, q) for p, q in zip(knots, knots[1:])
                               if p[0] <= a_ms and b_ms <= q[0]]
    return (e2 - e1) / (t2 - t1) * (b_ms - a_ms)

def _sanitized(path: str) -> bool:
    """A sanitizer build cannot be loaded into an uninstrumented Python."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return True
    return b"libasan.so" in data or b"__asan_init" in data


def driver_present() -> bool:
    """Whether libcuda.so.1 loads (an NVIDIA driver is installed): which libcupti fpgaprof picks
    depends on it (docs/capture.md, "Loading libcupti")."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def need_fake() -> str:
    p = fake_cupti_path()
    if p is None:
        pytest.skip("libfake_cupti.so not built: build the C++ tests (-DFPGAPROF_TESTS=ON) or set "
                    "FPGAPROF_FAKE_CUPTI")
    return p


PRELUDE = """
import ctypes, json, os, sys, warnings
warnings.simplefilter("always")
import fpgaprof
_fake = ctypes.CDLL(os.environ["FPGAPROF_CUPTI_LIBRARY"])
def emit():
    _fake.fake_cupti_emit()
def done(obj):
    print(json.dumps(obj))
"""


def run_traced(code: str, *, scenario: str = "kernels", kernels: int = 100, threads: int = 1,
               extra_env: dict | None = None, timeout: float = 120.0) -> dict:
    """Runs `code` (after PRELUDE) in a fresh interpreter with the fake libcupti; returns the
    JSON object the code passed to done()."""
    lib = need_fake()
    env = dict(os.environ)
    env.update({
        "FPGAPROF_CUPTI_LIBRARY": lib,
        "FAKE_CUPTI_SCENARIO": scenario,
        "FAKE_CUPTI_KERNELS": str(kernels),
        "FAKE_CUPTI_THREADS": str(threads),
        "PYTHONWARNINGS": "always",
    })
    env.pop("NVTX_INJECTION64_PATH", None)
    env.update(extra_env or {})
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"traced subprocess failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    out = json.loads(lines[-1])
    out["_stderr"] = proc.stderr
    return out
