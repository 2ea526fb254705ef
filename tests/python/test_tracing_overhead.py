"""bench/tracing_overhead.py: its logic (medians, per-unit ratios, the rotation, dropped modes, the
time limit, the verdict, the size comparison) on made-up samples; it says it needs a GPU; and its
CPU dry run alternates the modes on both workloads, skips the counters mode with a note, measures
both tools' output on disk and runs the process without fpgaprof."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "tracing_overhead.py"

_spec = importlib.util.spec_from_file_location("tracing_overhead", SCRIPT)
T = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(T)  # imports neither jax nor fpgaprof at module level

needs_mbirjax = pytest.mark.skipif(
    importlib.util.find_spec("mbirjax") is None,
    reason="mbirjax not installed (pip install '.[mbirjax]')",
)


# ------------------------------------------------------------------------------ logic, no JAX


def _rows(work: list[float], units: int, **extra) -> list[dict]:
    return [dict({"work_s": w, "total_s": w + 0.5, "units": units}, **extra) for w in work]


def test_summary_is_per_unit_so_the_counters_mode_compares_with_less_work():
    results = {
        "none": _rows([1.00, 1.02, 0.98], 100),
        "fpgaprof": _rows([1.01, 1.03, 0.99], 100, output_bytes=2000, kernels=300),
        "jax": _rows([1.10, 1.12, 1.08], 100, output_bytes=9000, kernels=300),
        # 10 units only (kernel replay): 0.05 s per unit against 0.01 s per unit with no profiler
        "fpgaprof_counters": _rows([0.5, 0.6, 0.4], 10, output_bytes=500, kernels=30),
    }
    s = T.summarise(results)
    assert s["none"]["work_overhead_pct"] == pytest.approx(0.0)
    assert s["fpgaprof"]["median_work_per_unit_s"] == pytest.approx(0.0101)
    assert s["fpgaprof"]["work_overhead_pct"] == pytest.approx(1.0)
    assert s["jax"]["work_ratio"] == pytest.approx(1.10)
    assert s["fpgaprof_counters"]["median_work_per_unit_s"] == pytest.approx(0.05)
    assert s["fpgaprof_counters"]["work_ratio"] == pytest.approx(5.0)
    assert s["fpgaprof_counters"]["units_per_sample"] == 10
    # total_s per unit: (1.00 + 0.5) / 100 against (0.5 + 0.5) / 10
    assert s["fpgaprof_counters"]["total_ratio"] == pytest.approx((1.0 / 10) / (1.5 / 100))
    assert s["fpgaprof"]["output_bytes"] == 2000 and s["fpgaprof"]["output_bytes_per_unit"] == 20
    assert s["jax"]["kernels_per_unit"] == 3
    assert "output_bytes" not in s["none"]
    assert T.verdict(s) is True
    assert T.size_comparison(s) == {"fpgaprof_bytes": 2000, "jax_profiler_bytes": 9000, "jax_over_fpgaprof": 4.5}


def test_verdict_needs_two_percent_and_less_than_jax_profiler():
    base = {"none": _rows([1.0], 1)}
    assert T.verdict(T.summarise(dict(base, fpgaprof=_rows([1.03], 1)))) is False  # 3 % > 2 %
    assert T.verdict(T.summarise(dict(base, fpgaprof=_rows([1.015], 1), jax=_rows([1.01], 1)))) is False
    assert T.verdict(T.summarise(dict(base, fpgaprof=_rows([1.015], 1), jax=_rows([1.02], 1)))) is True
    assert T.verdict(T.summarise(dict(base, fpgaprof=_rows([1.015], 1)))) is True  # no jax mode
    assert T.verdict(T.summarise(base)) is None


def test_alternate_rotates_the_order_and_drops_a_failing_mode():
    calls = []

    def sampler(mode: str, s: int) -> dict:
        calls.append((s, mode))
        if mode == "jax" and s == 1:
            raise RuntimeError("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED")
        return {"work_s": 1.0, "total_s": 1.0, "units": 1}

    res, errors, notes = T.alternate(["none", "fpgaprof", "jax"], sampler, 3, log=lambda _m: None)
    assert [m for s, m in calls if s == 0] == ["none", "fpgaprof", "jax"]
    assert [m for s, m in calls if s == 1] == ["fpgaprof", "jax", "none"]
    assert [m for s, m in calls if s == 2] == ["none", "fpgaprof"]  # jax dropped, rotation by 2 of 2
    assert errors == ["jax: RuntimeError: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"]
    assert len(res["none"]) == 3 and len(res["jax"]) == 1 and notes == []


def test_alternate_stops_at_the_time_limit_with_a_note():
    asked = []

    def fits(longest: float) -> bool:
        asked.append(longest)
        return len(asked) < 2

    res, errors, notes = T.alternate(["none", "fpgaprof"], lambda m, s: {"work_s": 1, "total_s": 1, "units": 1},
                                     5, fits=fits, log=lambda _m: None)
    assert len(res["none"]) == 2 and len(res["fpgaprof"]) == 2 and not errors
    assert notes and notes[0].startswith("stopped after 2 of 5 samples: the time limit")


def test_deadline():
    now = [100.0]
    d = T.Deadline(60, clock=lambda: now[0])
    now[0] = 130.0
    assert d.left() == pytest.approx(30.0)
    assert d.fits(29) and not d.fits(31) and not d.fits(20, share=0.5)
    assert T.Deadline(0).fits(1e9)  # no limit


def test_the_no_power_mode_traces_without_the_sampler():
    """fpgaprof_no_power is fpgaprof.trace with power_sample_ms=0; not run unless asked for."""
    calls = []

    class FakeFp:
        def trace(self, path, **kwargs):
            calls.append((path, kwargs))
            return "ctx"

    assert T.profiler_context(FakeFp(), None, "fpgaprof_no_power", "p") == "ctx"
    assert T.profiler_context(FakeFp(), None, "fpgaprof", "q") == "ctx"
    assert calls == [("p", {"power_sample_ms": 0}), ("q", {})]
    assert "fpgaprof_no_power" not in T.parse_args([]).modes
    assert T.parse_args(["--modes", "none,fpgaprof,fpgaprof_no_power"]).modes[-1] == "fpgaprof_no_power"


def test_units_for_each_mode():
    args = T.parse_args(["--steps", "3000", "--reps", "5", "--counter-steps", "20", "--counter-reps", "1"])
    assert T.units_for("dense", "none", args) == 3000
    assert T.units_for("dense", "fpgaprof_counters", args) == 20
    assert T.units_for("forward", "jax", args) == 5
    assert T.units_for("forward", "fpgaprof_counters", args) == 1
    assert args.modes == ["none", "fpgaprof", "jax", "fpgaprof_counters"]
    assert args.workloads == ["dense", "forward"]
    with pytest.raises(SystemExit):
        T.parse_args(["--modes", "fpgaprof,jax"])  # no baseline
    with pytest.raises(SystemExit):
        T.parse_args(["--workloads", "matmul"])


def test_dir_bytes_and_keep_output(tmp_path):
    d = tmp_path / "jax" / "plugins" / "profile" / "run"
    d.mkdir(parents=True)
    (d / "host.xplane.pb").write_bytes(b"x" * 1000)
    (d / "host.trace.json.gz").write_bytes(b"y" * 24)
    assert T.dir_bytes(str(tmp_path / "jax")) == 1024
    keep = tmp_path / "keep"
    keep.mkdir()
    T.keep_output(str(tmp_path / "jax"), str(keep / "forward_jax"))
    assert (keep / "forward_jax" / "plugins").is_dir() and not (tmp_path / "jax").exists()
    f = tmp_path / "b.fpgaprof"
    f.write_bytes(b"z")
    T.keep_output(str(f), str(keep / "forward_jax"))  # one of each kind kept: the second removed
    assert not f.exists()


# ------------------------------------------------------------------------- the script itself


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
        timeout=600,
        env=env,
        cwd=tmp_path,
    )


def test_without_gpu_it_exits_77_and_says_why(tmp_path):
    if _has_gpu():
        pytest.skip("a GPU is present: the script would run the real benchmark")
    proc = _run(tmp_path, "--workloads", "dense")
    assert proc.returncode == 77
    assert "needs an NVIDIA GPU" in proc.stderr and "--allow-cpu" in proc.stderr


@needs_mbirjax
def test_cpu_dry_run_alternates_all_modes_on_both_workloads(tmp_path):
    if _has_gpu():
        pytest.skip("a GPU is present: the dry run's CPU labels would not apply")
    out = tmp_path / "overhead.json"
    keep = tmp_path / "keep"
    proc = _run(tmp_path, "--allow-cpu", "--size", "16", "--reps", "1", "--steps", "30", "--samples", "3",
                "--json", str(out), "--keep", str(keep))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    res = json.loads(out.read_text())
    assert res["label"].startswith("CPU DRY RUN") and "CPU DRY RUN" in proc.stdout
    assert res["target_met"] is None  # no verdict from a CPU run
    assert res["errors"] == [] and res["complete"] is True
    assert res["modes"] == ["none", "fpgaprof", "jax"]
    assert any(n.startswith("fpgaprof_counters skipped: hardware counters need a GPU") for n in res["notes"])
    for w, units in (("dense", 30), ("forward", 1)):
        r = res["workloads"][w]
        assert r["units"] == {"none": units, "fpgaprof": units, "jax": units}
        for mode in ("none", "fpgaprof", "jax"):
            samples = r["samples_raw"][mode]
            assert len(samples) == 3
            assert all(0 < s["work_s"] <= s["total_s"] and s["units"] == units for s in samples)
            s = r["summary"][mode]
            # overhead is median(mode) / median(none) - 1 per unit, recomputed from the raw samples
            med = sorted(x["work_s"] / units for x in samples)[1]
            base = sorted(x["work_s"] / units for x in r["samples_raw"]["none"])[1]
            assert s["median_work_per_unit_s"] == pytest.approx(med)
            assert s["work_overhead_pct"] == pytest.approx(100.0 * (med / base - 1.0))
        assert r["summary"]["none"]["work_overhead_pct"] == pytest.approx(0.0)
        # both tools wrote something for the same work, and its size is recorded
        sizes = r["output_sizes"]
        assert sizes["fpgaprof_bytes"] > 0 and sizes["jax_profiler_bytes"] > 0
        assert (keep / f"{w}_fpgaprof.fpgaprof").stat().st_size > 0 and (keep / f"{w}_jax").is_dir()
        assert r["bare"]["samples"] == 3 and r["bare"]["median_work_per_unit_s"] > 0


@needs_mbirjax
def test_isolated_samples_run_in_child_processes(tmp_path):
    out = tmp_path / "overhead.json"
    proc = _run(tmp_path, "--allow-cpu", "--isolate", "--no-bare", "--workloads", "forward", "--size", "16",
                "--reps", "1", "--samples", "1", "--modes", "none,fpgaprof", "--json", str(out))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    res = json.loads(out.read_text())
    assert res["errors"] == [] and res["bare"] is None
    r = res["workloads"]["forward"]
    assert set(r["summary"]) == {"none", "fpgaprof"}
    assert all(len(r["samples_raw"][m]) == 1 for m in ("none", "fpgaprof"))
    assert r["samples_raw"]["fpgaprof"][0]["output_bytes"] > 0


@needs_mbirjax
def test_a_run_stopped_after_its_first_workload_keeps_that_workload(tmp_path):
    """The GPU runner stops the benchmark at its step's limit: what it measured by then is in the
    JSON, written after each workload (and atomically: never a half-written file)."""
    if _has_gpu():
        pytest.skip("a GPU is present: the dry run's CPU labels would not apply")
    out = tmp_path / "overhead.json"
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--allow-cpu", "--no-bare", "--workloads", "dense,forward", "--steps",
         "20", "--size", "16", "--reps", "1", "--samples", "1", "--modes", "none,fpgaprof", "--json", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
        env=dict(os.environ, MPLBACKEND="Agg"),
    )
    try:
        deadline = time.monotonic() + 300
        while not out.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.kill()  # as the runner's SIGKILL would, while the forward projection compiles
    finally:
        proc.wait(timeout=60)
        log = proc.stdout.read() if proc.stdout else ""
    res = json.loads(out.read_text())
    assert res["complete"] is False, log[-2000:]
    assert list(res["workloads"]) == ["dense"]
    assert set(res["workloads"]["dense"]["summary"]) == {"none", "fpgaprof"}
    assert not list(tmp_path.glob("overhead.json.tmp*"))
