"""bench/tracing_overhead.py: says it needs a GPU, and its CPU dry run exercises the alternation."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "tracing_overhead.py"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mbirjax") is None,
    reason="mbirjax not installed (pip install '.[mbirjax]')",
)


def _has_gpu() -> bool:
    probe = subprocess.run(
        [sys.executable, "-c", "import jax; print(jax.default_backend())"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return probe.stdout.strip() == "gpu"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )


def test_without_gpu_it_exits_77_and_says_why(tmp_path):
    if _has_gpu():
        pytest.skip("a GPU is present: the script would run the real benchmark")
    proc = _run(tmp_path)
    assert proc.returncode == 77
    assert "needs an NVIDIA GPU" in proc.stderr and "--allow-cpu" in proc.stderr


def test_cpu_dry_run_alternates_all_modes(tmp_path):
    out = tmp_path / "overhead.json"
    proc = _run(
        tmp_path, "--allow-cpu", "--size", "16", "--reps", "1", "--samples", "3", "--json", str(out)
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    res = json.loads(out.read_text())
    if res["backend"] != "gpu":
        assert res["label"].startswith("CPU DRY RUN")
        assert "CPU DRY RUN" in proc.stdout
        assert res["target_met"] is None  # no verdict from a CPU run
    assert res["errors"] == []
    for mode in ("none", "fpgaprof", "jax"):
        samples = res["samples_raw"][mode]
        assert len(samples) == 3
        assert all(0 < s["work_s"] <= s["total_s"] for s in samples)
        s = res["summary"][mode]
        # overhead is median(mode) / median(none) - 1, recomputed here from the raw samples
        med = sorted(x["work_s"] for x in samples)[1]
        base = sorted(x["work_s"] for x in res["samples_raw"]["none"])[1]
        assert s["median_work_s"] == pytest.approx(med)
        assert s["work_overhead_pct"] == pytest.approx(100.0 * (med / base - 1.0))
    assert res["summary"]["none"]["work_overhead_pct"] == pytest.approx(0.0)


def test_isolated_samples_run_in_child_processes(tmp_path):
    out = tmp_path / "overhead.json"
    proc = _run(
        tmp_path,
        "--allow-cpu",
        "--isolate",
        "--size",
        "16",
        "--reps",
        "1",
        "--samples",
        "1",
        "--modes",
        "none,fpgaprof",
        "--json",
        str(out),
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    res = json.loads(out.read_text())
    assert res["errors"] == []
    assert set(res["summary"]) == {"none", "fpgaprof"}
    assert all(len(res["samples_raw"][m]) == 1 for m in ("none", "fpgaprof"))
