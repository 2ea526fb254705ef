"""examples/mbirjax_sweep.py: the scaling fit, the compile counter, and a real sweep at size 32.

The sweep runs in a subprocess (it imports fpgaprof before jax, as users must). Expected
numbers are worked out by hand in the comments.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import json
import math
import os
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SWEEP = ROOT / "examples" / "mbirjax_sweep.py"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mbirjax") is None,
    reason="mbirjax not installed (pip install '.[mbirjax]')",
)

# The sweep runs on both MBIRJAX lines (0.6.17.1 and 0.7.x); these tests run on the installed one.
MBIRJAX_VERSION = (importlib.metadata.version("mbirjax")
                   if importlib.util.find_spec("mbirjax") is not None else None)
LINE_07 = MBIRJAX_VERSION is not None and MBIRJAX_VERSION.startswith("0.7.")
# get_compute_config()["kernels"] flags of MBIRJAX 0.7.3 (tomography_model.py) saying which
# projector paths run as Pallas kernels.
PALLAS_FLAGS = ("fwd_pallas", "back_pallas", "fwd_pallas_band", "back_pallas_band")


@pytest.fixture(scope="module")
def sweep():
    """The example as a module (imports fpgaprof, jax and mbirjax, in that order)."""
    spec = importlib.util.spec_from_file_location("mbirjax_sweep", SWEEP)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up here
    spec.loader.exec_module(mod)
    return mod


def test_fit_exponent_exact_power_law(sweep):
    # t = 2 n^3 at n = 2, 4, 8: log t = log 2 + 3 log n exactly, so the slope is 3.
    sizes = [2, 4, 8]
    times = [2 * n**3 for n in sizes]
    assert sweep.fit_exponent(sizes, times) == pytest.approx(3.0, abs=1e-12)


def test_fit_exponent_least_squares_by_hand(sweep):
    # Points (log n, log t) = (0, 0), (1, 2), (2, 3), i.e. n = 1, e, e^2 and t = 1, e^2, e^3.
    # mean x = 1, mean y = 5/3; Sxx = 1 + 0 + 1 = 2;
    # Sxy = (-1)(-5/3) + 0*(1/3) + (1)(4/3) = 3; slope = 3 / 2 = 1.5.
    sizes = [1.0, math.e, math.e**2]
    times = [1.0, math.e**2, math.e**3]
    assert sweep.fit_exponent(sizes, times) == pytest.approx(1.5, abs=1e-12)


def test_fit_exponent_needs_two_sizes(sweep):
    assert sweep.fit_exponent([32], [0.5]) is None
    assert sweep.fit_exponent([32, 32], [0.5, 0.7]) is None
    # A failed size (no time) is left out rather than fitted as zero.
    assert sweep.fit_exponent([16, 32, 64], [None, 1.0, 8.0]) == pytest.approx(3.0)


def test_compile_monitor_counts_real_compilations(sweep):
    import jax
    import jax.numpy as jnp

    mon = sweep.CompileMonitor.install()
    f = jax.jit(lambda x: jnp.sin(x) * 3.0 + 1.0)
    x4 = jnp.arange(4.0)
    x4.block_until_ready()
    mon.reset()
    f(x4).block_until_ready()  # first call: one trace, one lowering, one XLA compile
    first = mon.snapshot()
    mon.reset()
    f(x4 + 1).block_until_ready()  # same shape: f's executable is reused
    second = mon.snapshot()
    mon.reset()
    f(jnp.arange(5.0)).block_until_ready()  # new shape: recompiles f (arange itself may compile)
    third = mon.snapshot()

    assert first["compilations"] == 1 and first["traces"] == 1 and first["lowerings"] == 1
    assert first["compile_s"] > 0
    assert any("lambda" in name for name in first["compiled_functions"])
    # The second call's only possible compilation is the eager `x4 + 1` (first add of this shape);
    # f itself must not appear.
    assert not any("lambda" in name for name in second["compiled_functions"])
    assert any("lambda" in name for name in third["compiled_functions"])


def _run_sweep(tmp_path: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, MPLBACKEND="Agg", CI="1")
    env.pop("DISPLAY", None)
    return subprocess.run(
        [sys.executable, str(SWEEP), "--output", str(tmp_path), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=tmp_path,
    )


OPS = ["parallel_forward_project", "parallel_sparse_back_project", "median_filter3d"]


@pytest.mark.slow
def test_sweep_size_32_outputs(tmp_path):
    proc = _run_sweep(tmp_path, "--sizes", "16", "32", "--runs", "1", "--operations", *OPS)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    summary = json.loads((tmp_path / "summary.json").read_text())
    env = summary["environment"]
    for key in ("backend", "devices", "jax_version", "mbirjax_version"):
        assert key in env
    assert env["mbirjax_version"] == MBIRJAX_VERSION
    assert env["jax_version"] == importlib.metadata.version("jax")
    # MBIRJAX's compute configuration: one per model built (the parallel model at n = 16 and 32)
    # from get_compute_config() on 0.7; on 0.6 null with the reason.
    if LINE_07:
        assert set(env["compute_config"]) == {"parallel/16", "parallel/32"}
        for cfg in env["compute_config"].values():
            assert cfg["versions"]["mbirjax"] == MBIRJAX_VERSION
            assert set(PALLAS_FLAGS) <= set(cfg["kernels"])
        assert env["compute_config_reason"] is None
        if env["backend"] == "cpu":  # the Pallas kernels need an H100/H200/A100 GPU
            assert env["pallas_live"] is False
            assert all(cfg["kernels"]["pallas_status"] == "not a GPU platform (cpu)"
                       for cfg in env["compute_config"].values())
            assert env["projectors"] == {k: "XLA projectors: not a GPU platform (cpu)"
                                         for k in ("parallel/16", "parallel/32")}
            html = (tmp_path / "report.html").read_text()
            assert ("XLA projectors: not a GPU platform (cpu) (parallel/16, parallel/32)"
                    in html)
    else:
        assert env["compute_config"] is None and env["pallas_live"] is None
        assert "get_compute_config" in env["compute_config_reason"]
        assert all(v.startswith("XLA projectors: mbirjax 0.6") for v in env["projectors"].values())

    # The timing schema: one measurement per (operation, size, run), positive seconds.
    ms = summary["measurements"]
    assert sorted((m["operation"], m["volume_size"], m["run"]) for m in ms) == sorted(
        (op, n, 0) for op in OPS for n in (16, 32)
    )
    assert all(isinstance(m["time"], float) and m["time"] > 0 for m in ms)

    ops = {(o["operation"], o["volume_size"]): o for o in summary["sweep"]["operations"]}
    assert set(ops) == {(op, n) for op in OPS for n in (16, 32)}
    for o in ops.values():
        assert o["error"] is None
        assert 0 < o["min_s"] <= o["median_s"] <= o["max_s"]
        assert o["warmup_s"] > 0
        tc = o["timed_runs_compile"]
        assert o["recompiled_during_timed_runs"] == (tc["compilations"] > 0)
        prof = o["profile"]
        if env["backend"] == "cpu":  # no kernel data without a GPU, and it must say so
            assert prof["available"] is False and prof["reason"]

    # The jitted forward projector the operation dispatches is found and broken down (0.6:
    # Projectors' per-model sparse_forward_project_fcn; 0.7: the module-level
    # _sparse_forward_project driver).
    fwd = ops[("parallel_forward_project", 32)]
    assert fwd["aot_note"] is None
    aot = [a for name, a in fwd["aot"].items() if "sparse_forward_project" in name]
    assert len(aot) == 1, sorted(fwd["aot"])
    for key in ("trace_s", "lower_s", "compile_s", "execute_s"):
        assert aot[0][key] > 0, key
    assert aot[0]["calls_per_operation"] >= 1
    assert all("error" not in a for a in fwd["aot"].values())
    # A sparse back projection of a 32^3 volume costs real flops in XLA's cost model.
    sbp = [a for name, a in ops[("parallel_sparse_back_project", 32)]["aot"].items()
           if "sparse_back_project" in name]
    assert len(sbp) == 1 and sbp[0]["cost_analysis"]["flops"] > 32**3
    # median_filter3d: 0.6 jits a closure per call (broken down), 0.7 runs an eager lax.map (nothing
    # to break down, and the note says so).
    med = ops[("median_filter3d", 32)]
    if med["aot"]:
        assert all("error" not in a for a in med["aot"].values())
    else:
        assert med["aot_note"].startswith("nothing to break down")
    counts = summary["sweep"]["aot_counts"]
    assert sum(counts.values()) == len(ops) and counts["error"] == 0 and counts["failed"] == 0
    assert "AOT breakdown" in (tmp_path / "scaling.txt").read_text()

    # Scaling: the exponent in the files is the least-squares slope of the medians in them.
    rows = {r["operation"]: r for r in summary["sweep"]["scaling"]}
    for op in OPS:
        t16 = rows[op]["median_s_by_size"]["16"]
        t32 = rows[op]["median_s_by_size"]["32"]
        assert rows[op]["exponent"] == pytest.approx(math.log(t32 / t16) / math.log(2.0))
    csv = (tmp_path / "scaling.csv").read_text().splitlines()
    assert csv[0] == "operation,median_s_n16,median_s_n32,exponent,recompiled_sizes,failed_sizes"
    assert len(csv) == 1 + len(OPS)
    assert "exponent" in (tmp_path / "scaling.txt").read_text()
    assert "exponent" in proc.stdout


def test_sweep_rejects_unknown_operation(tmp_path):
    proc = _run_sweep(tmp_path, "--operations", "no_such_op", timeout=120)
    assert proc.returncode == 2
    assert "unknown operation" in proc.stderr


def test_trace_facts_table_formats_gpu_sections(sweep):
    # A GPU-shaped profile section as profile_section builds it from fpgaprof.report.collect;
    # the numbers are made up for the formatter only (nothing here is a measurement).
    res = sweep.Result("parallel_forward_project", 64, times_s=[0.5])
    res.profile = {
        "available": True,
        "kernels": {"available": True, "count": 1200, "total_s": 0.25},
        "transfers": {"available": True, "count": 40, "bytes": 3_000_000},
        "peak_device_memory": {"available": True, "peak_bytes": 125_000_000},
        "fpga": {"available": True, "top": [{"op": "fusion.12", "score": 0.8}],
                 "operation": {"region": "parallel_forward_project/64", "region_speedup": 2.484}},
    }
    off = sweep.Result("gen_weights", 64, times_s=[0.1])
    off.profile = {"available": False, "reason": "no CUDA driver"}
    text = sweep.format_trace_facts([res, off])
    row = next(line for line in text.splitlines() if line.startswith("parallel_forward_project"))
    # 3,000,000 B = 3.0 MB; 125,000,000 B = 125.0 MB
    assert row.split() == [
        "parallel_forward_project",
        "64",
        "1200",
        "0.2500",
        "40",
        "3.0",
        "125.0",
        "2.48",
        "fusion.12",
    ]
    assert "gen_weights" in text and "not available: no CUDA driver" in text
    # All sections unavailable: one line with the reason instead of a table.
    assert sweep.format_trace_facts([off]) == "trace facts: not available: no CUDA driver"


def test_whole_operation_offload_from_the_region_rows(sweep):
    # _section_facts keeps the outermost region row of a (operation, size) report as the
    # operation's offload what-if; format_offload_ranking ranks them as fpgaprof does, by what
    # offloading could change (could_save_ns), then GPU time. Made-up numbers: the formatter
    # and the pick only.
    summary = {"candidates": {"available": True, "target": "alveo-u55c", "items": [], "regions": {
        "available": True, "count": 2, "items_left_out": 0, "items": [
            {"region": "parallel_back_project/64 > inner", "depth": 1, "gpu_time_ns": 9e9, "score": 0.9},
            {"region": "parallel_back_project/64", "depth": 0, "gpu_time_ns": 1e9, "score": 0.25,
             "could_save_ns": 3.3e8,
             "region_speedup": 1.5, "workload_speedup": 1.2, "estimated": True, "estimated_share": 0.875,
             "transfer_bytes": 12_500_000, "estimate_note": ""}]}}}
    facts = sweep._section_facts(summary)
    op = facts["fpga"]["operation"]
    assert op["region"] == "parallel_back_project/64" and op["score"] == 0.25
    assert "regions" not in facts["fpga"] and facts["fpga"]["target"] == "alveo-u55c"
    a = sweep.Result("parallel_back_project", 64, times_s=[0.5])
    a.profile = {"available": True, "fpga": facts["fpga"]}
    b = sweep.Result("gen_weights", 64, times_s=[0.1])
    b.profile = {"available": True, "fpga": {"target": "alveo-u55c", "operation": {
        "region": "gen_weights/64", "score": None, "region_speedup": None, "gpu_time_ns": 1e8,
        "could_save_ns": 1e8,
        "estimate_note": "not estimated: nothing inside can be modelled on the card (x)"}}}
    c = sweep.Result("parallel_forward_project", 64, times_s=[0.5])
    c.profile = {"available": True, "fpga": {"target": "alveo-u55c", "operation": {
        "region": "parallel_forward_project/64", "score": 0.5, "region_speedup": 3.0,
        "gpu_time_ns": 2e9, "could_save_ns": 1.33e9,
        "workload_speedup": 2.0, "estimated_share": 1.0, "transfer_bytes": 0, "estimate_note": ""}}}
    text = sweep.format_offload_ranking([a, b, c])
    lines = text.splitlines()
    assert "target alveo-u55c" in lines[0]
    body = [ln.split() for ln in lines[3:]]
    assert [r[1] for r in body] == ["parallel_forward_project", "parallel_back_project", "gen_weights"]
    # rank, op, n, score, card x, workload x, modelled %, PCIe MB (12.5e6 B = 12.5 MB)
    assert body[1][:8] == ["2", "parallel_back_project", "64", "0.2500", "1.50", "1.200", "88%", "12.5"]
    assert body[2][3:5] == ["-", "-"] and "not estimated" in lines[-1]
    assert sweep.format_offload_ranking([sweep.Result("x", 8, times_s=[0.1])]) == ""


def test_profile_section_passes_trace_facts_through(tmp_path):
    """The sweep's per-section facts from a trace with kernel data, through the libcupti test
    double (tests/fake_cupti): the counts must be what the fake emitted."""
    from _fake_cupti import run_traced

    # FAKE_CUPTI_KERNELS=20, one thread (see tests/python/test_api_trace.py::expected):
    # 20 kernels; HtoD copies at i % 4 == 0 -> i = 0, 4, 8, 12, 16: 5 copies of 4096 (i + 1) B
    #   = 4096 * (1 + 5 + 9 + 13 + 17) = 4096 * 45 = 184320 B;
    # DtoH copies at i % 8 == 0 -> i = 0, 8, 16: 3 copies of 1024 (i + 1) B = 1024 * 27 = 27648 B.
    section = tmp_path / "section"
    got = run_traced(
        f"""
        import importlib.util
        spec = importlib.util.spec_from_file_location("mbirjax_sweep", {str(SWEEP)!r})
        sweep = importlib.util.module_from_spec(spec)
        sys.modules["mbirjax_sweep"] = sweep
        spec.loader.exec_module(sweep)
        with fpgaprof.trace() as prof:
            with fpgaprof.region("fake_op/16"):
                emit()
        res = sweep.Result("fake_op", 16, times_s=[0.01])
        done(sweep.profile_section(prof, {{"backend": "cpu", "devices": []}}, res,
                                   {str(section)!r}, None))
        """,
        kernels=20,
        timeout=300,
    )
    assert got["kernels"]["count"] == 20
    assert got["transfers"]["count"] == 8
    assert got["transfers"]["bytes"] == 184320 + 27648
    by_dir = {d["direction"]: d for d in got["transfers"]["by_direction"]}
    assert by_dir["HtoD"]["count"] == 5 and by_dir["HtoD"]["bytes"] == 184320
    assert by_dir["DtoH"]["count"] == 3 and by_dir["DtoH"]["bytes"] == 27648
    for key in ("peak_device_memory", "roofline", "fpga"):
        assert key in got  # filled, or {"available": false, "reason": ...}
    summary = json.loads((section / "summary.json").read_text())
    assert summary["measurements"] == [
        {"operation": "fake_op", "volume_size": 16, "run": 0, "time": 0.01}
    ]
    assert (section / "report.html").read_text().count("Sweep timing") >= 1


def test_section_facts_roofline_position_by_hand(sweep):
    # Three roofline points (as fpgaprof.report.collect lays them out), not in time order.
    summary = {
        "roofline": {
            "available": True,
            "points": [
                {"op": "a", "time_s": 0.3, "bound": "memory"},
                {"op": "b", "time_s": 0.1, "bound": "compute"},
                {"op": "c", "time_s": 0.2, "bound": "memory"},
            ],
        },
        "kernels": {"available": False, "reason": "no kernels in this trace"},
    }
    facts = sweep._section_facts(summary)
    assert [p["op"] for p in facts["roofline"]["top"]] == ["a", "c", "b"]
    # memory: 0.3 + 0.2 = 0.5 s; compute: 0.1 s
    assert facts["roofline"]["time_s_by_bound"] == pytest.approx({"memory": 0.5, "compute": 0.1})
    assert facts["kernels"] == {"available": False, "reason": "no kernels in this trace"}
    # A section missing from the summary is reported as missing, not invented.
    assert facts["fpga"]["available"] is False and "candidates" in facts["fpga"]["reason"]


def test_profile_section_under_fpgaprof_run_points_to_the_runs_report(sweep):
    """Under `fpgaprof run` the sweep's trace() is a region of the run's trace and its Profile
    has no records until the program ends (an H100 sweep under `fpgaprof run` printed 0 kernels
    for every operation): the facts say where they are instead of printing zeros."""
    from fpgaprof.api.trace import NestedProfile

    prof = NestedProfile("trace", "/run/trace.fpgaprof", None, [])
    res = sweep.Result("parallel_forward_project", 32, times_s=[0.01])
    res.profile = sweep.profile_section(prof, {"backend": "gpu", "devices": []}, res, None, None)
    assert res.profile == {"available": False,
                           "reason": "under `fpgaprof run`: region 'parallel_forward_project/32' of the "
                                     "run's trace; its answer is in the run's summary.json"}
    table = sweep.format_trace_facts([res])
    assert "0.0000" not in table and "not available: under `fpgaprof run`" in table


# --- The AOT breakdown's discovery of jitted functions, on hand-made ones -------------------------
# Functions jitted while the recorder is patched into jax.jit record their top-level calls during
# recording(); each recorded (function, argument signature) is then broken down through
# jitted.trace(...).lower().compile(). XLA's cost analysis of these one-fusion programs on
# float32[8] is worked out by hand: x * 2 + 1 is 8 multiplies + 8 adds = 16 flops, x * 3 is 8
# flops, and each fusion reads 8 x 4 = 32 B and writes 32 B (64 B accessed).


def _double_plus_one(x):
    return x * 2.0 + 1.0


def _scale(x, k):
    return x * k


def test_recorder_finds_the_jitted_functions_an_operation_calls(sweep):
    import jax
    import jax.numpy as jnp

    rec = sweep.JitCallRecorder()
    real_jit = jax.jit
    with rec.patched():
        f = jax.jit(_double_plus_one)
        g = jax.jit(_scale, static_argnames="k")
        outer = jax.jit(lambda x: f(x) * 2.0)  # calls f inside its own trace
    assert jax.jit is real_jit  # restored on exit
    x = jnp.arange(8.0, dtype=jnp.float32)

    def operation():
        return g(f(x), k=3.0), g(f(x), k=3.0), outer(x)

    with rec.recording():
        operation()
    g(x, k=3.0)  # outside recording(): not recorded
    names = [name for name, _, _ in rec.entries()]
    calls = [e["calls"] for _, _, e in rec.entries()]
    # f called twice at top level, g twice, outer once; f inside outer is part of outer's program.
    assert names == ["_double_plus_one", "_scale", "<lambda>"]
    assert calls == [2, 2, 1]

    res = sweep.Result("two_jitted", 8)
    sweep.run_aot(res, operation, rec, {})
    assert list(res.aot) == names and res.aot_note is None
    assert sweep.aot_status(res) == "complete"
    flops = {name: a["cost_analysis"]["flops"] for name, a in res.aot.items()}
    assert flops == {"_double_plus_one": 16.0, "_scale": 8.0, "<lambda>": 24.0}  # 16 + 8
    for name, a in res.aot.items():
        assert a["cost_analysis"]["bytes accessed"] == 64.0
        for key in ("trace_s", "lower_s", "compile_s", "execute_s"):
            assert a[key] > 0, (name, key)
        assert a["measured_in"] == "two_jitted"
    assert res.aot["_double_plus_one"]["function"].endswith("._double_plus_one")
    assert res.aot["_scale"]["calls_per_operation"] == 2

    # A second operation calling g with the same signature reuses the figures measured for the
    # first (measured_in), as operations of one size share MBIRJAX's projectors.
    cache: dict = {}
    first = sweep.Result("first", 8)
    with rec.recording():
        g(x, k=3.0)
    sweep.run_aot(first, lambda: g(x, k=3.0), rec, cache)
    second = sweep.Result("second", 8)
    with rec.recording():
        g(x, k=3.0)
        g(x, k=3.0)
    sweep.run_aot(second, lambda: g(x, k=3.0), rec, cache)
    assert second.aot["_scale"]["measured_in"] == "first"
    assert second.aot["_scale"]["calls_per_operation"] == 2


def test_recorder_binds_jitted_methods_and_drops_static_arguments(sweep):
    import jax
    import jax.numpy as jnp

    rec = sweep.JitCallRecorder()
    with rec.patched():
        class Model:  # self (hashable) and k static, as MBIRJAX jits some of its model methods
            @functools.partial(jax.jit, static_argnums=(0, 2))
            def scale_by(self, x, k):
                return x * k

    m = Model()
    x = jnp.ones(8, dtype=jnp.float32)
    with rec.recording():
        y = m.scale_by(x, 3.0)  # self and k static: the executable takes x only
    assert float(y[0]) == 3.0
    assert m.scale_by == m.scale_by  # bound like a method: equal (and hashable) per instance
    [(name, _, entry)] = rec.entries()
    assert name == "scale_by"
    out = sweep.aot_breakdown_one(entry["wrapper"], entry["args"], entry["kwargs"])
    assert "error" not in out and out["execute_s"] > 0
    assert out["cost_analysis"]["flops"] == 8.0  # 8 multiplies by the static k


def test_a_function_that_cannot_be_broken_down_says_why(sweep):
    import jax
    import jax.numpy as jnp

    traces = []

    def traced_once(x):  # a Python side effect at trace time: it cannot be traced (nor lowered)
        # again, so its AOT breakdown fails at its first step
        traces.append(1)
        if len(traces) > 1:
            raise ValueError("this function cannot be traced twice")
        return x - 1.0

    rec = sweep.JitCallRecorder()
    with rec.patched():
        ok = jax.jit(_double_plus_one)
        bad = jax.jit(traced_once)
        donating = jax.jit(_double_plus_one, donate_argnums=0)
    x = jnp.arange(8.0, dtype=jnp.float32)
    gift = jnp.arange(8.0, dtype=jnp.float32)

    def operation():
        return ok(x), bad(x)

    with rec.recording():
        operation()
        donating(gift)
    res = sweep.Result("half_broken", 8)
    # No exception; the warm-up after the breakdown is given a call that can be traced again.
    sweep.run_aot(res, lambda: ok(x), rec, {})
    assert res.aot["_double_plus_one"]["compile_s"] > 0
    assert res.aot["traced_once"]["error"] == (
        "trace failed: ValueError: this function cannot be traced twice")
    assert "trace_s" not in res.aot["traced_once"]
    assert res.aot_note == ("1 of 3 jitted function(s) could not be broken down: traced_once: "
                            "trace failed: ValueError: this function cannot be traced twice")
    assert sweep.aot_status(res) == "partial"
    # The donated argument is gone after the recorded call: compiled, not executed, and why.
    donated = res.aot["_double_plus_one#2"]
    assert donated["compile_s"] > 0 and donated["execute_s"] is None
    assert "donated" in donated["execute_note"]
    # The text output carries the reason too.
    row = next(line for line in sweep.format_aot([res]).splitlines()
               if line.startswith("half_broken"))
    assert row.split()[:4] == ["half_broken", "8", "3", "2"]
    assert "traced_once: trace failed: ValueError" in row

    # An operation that dispatches no jitted function has nothing to break down, and says so.
    empty = sweep.Result("numpy_only", 8)
    with rec.recording():
        pass
    sweep.run_aot(empty, lambda: None, rec, {})
    assert empty.aot == {} and empty.aot_note.startswith("nothing to break down")
    assert sweep.aot_status(empty) == "none"
    assert sweep.aot_counts([res, empty]) == {
        "complete": 0, "partial": 1, "failed": 0, "none": 1, "error": 0}


# --- MBIRJAX's compute configuration -----------------------------------------------------------


class _Tiles(typing.NamedTuple):  # MBIRJAX 0.7's tile policy is a namedtuple
    fwd_view_batch: Any
    fwd_pallas: bool
    back_pallas: bool


class _FakeModel07:
    """get_compute_config() as MBIRJAX 0.7.3 lays it out, with a NumPy integer and a namedtuple
    inside (made JSON-safe by the sweep); it prints unless print_results=False."""

    def __init__(self, fwd: bool, back: bool, status: str):
        self.fwd, self.back, self.status = fwd, back, status

    def get_compute_config(self, print_results=True):
        if print_results:
            print("Compute configuration:")
        return {
            "versions": {"mbirjax": "0.7.3", "jax": "0.10.1"},
            "devices": {"count": 1, "device_kind": "NVIDIA H100 80GB HBM3"},
            "tiles": _Tiles(np.int64(32), self.fwd, self.back),
            "kernels": {"pallas_available": self.fwd or self.back, "pallas_status": self.status,
                        "back_pallas": self.back, "fwd_pallas": self.fwd,
                        "back_pallas_band": False, "fwd_pallas_band": False},
            "jit_cache": {"persistent_cache_dir": None},
        }


def test_compute_config_recorded_json_safe_with_pallas_state(sweep, monkeypatch, capsys):
    live, reason = sweep.compute_config_of(_FakeModel07(False, True, "available (NVIDIA H100)"))
    assert reason is None
    assert capsys.readouterr().out == ""  # fetched silently
    assert live["tiles"] == {"fwd_view_batch": 32, "fwd_pallas": False, "back_pallas": True}
    assert type(live["tiles"]["fwd_view_batch"]) is int
    assert json.loads(json.dumps(live)) == live
    assert sweep.pallas_live(live) is True  # the back projector runs as a Pallas kernel
    off, _ = sweep.compute_config_of(_FakeModel07(False, False, "not a GPU platform (cpu)"))
    assert sweep.pallas_live(off) is False
    assert sweep.compute_config_line("cone/64", off, None) == (
        "compute config cone/64: XLA projectors: not a GPU platform (cpu); "
        "fwd_pallas=False, back_pallas=False, fwd_pallas_band=False, back_pallas_band=False")

    class Model06:  # MBIRJAX 0.6: no get_compute_config()
        pass

    class Broken:
        def get_compute_config(self, print_results=True):
            raise RuntimeError("no devices")

    none, why = sweep.compute_config_of(Model06())
    assert none is None and "no get_compute_config()" in why
    assert sweep.compute_config_of(Broken()) == (
        None, "get_compute_config() failed: RuntimeError: no devices")

    monkeypatch.setattr(sweep, "COMPUTE_CONFIGS", {"parallel/64": (off, None),
                                                   "cone/64": (live, None)})
    env = sweep.environment_compute_config()
    assert env["pallas_live"] is True and env["compute_config_reason"] is None
    assert env["compute_config"] == {"parallel/64": off, "cone/64": live}
    assert env["projectors"] == {
        "parallel/64": "XLA projectors: not a GPU platform (cpu)",
        "cone/64": "Pallas projectors on NVIDIA H100 80GB HBM3 (back_pallas)"}
    monkeypatch.setattr(sweep, "COMPUTE_CONFIGS", {"parallel/64": (None, why)})
    assert sweep.environment_compute_config() == {
        "compute_config": None, "compute_config_reason": why, "pallas_live": None,
        "projectors": {"parallel/64": why}}
    assert why.startswith("XLA projectors: mbirjax ")  # 0.6 has only XLA's projectors


def _config(kind: str, status: str, available: bool = False, **live: bool) -> dict:
    """get_compute_config()'s devices and kernels sections as MBIRJAX 0.7.3 fills them."""
    kernels = {"pallas_available": available, "pallas_status": status,
               **{k: live.get(k, False) for k in PALLAS_FLAGS}}
    return {"devices": {"count": 1, "device_kind": kind}, "kernels": kernels}


def test_projector_path_in_words(sweep):
    # MBIRJAX's status strings as _pallas_kernels.availability() formats them (0.7.3).
    rtx = _config("NVIDIA GeForce RTX 5080",
                  "device kind 'NVIDIA GeForce RTX 5080' not in the measured allowlist "
                  "('H100', 'H200', 'A100')")
    assert sweep.projector_path(rtx) == (
        "XLA projectors: NVIDIA GeForce RTX 5080 is not in MBIRJAX's Pallas allowlist "
        "(H100, H200, A100)")
    assert sweep.compute_config_line("parallel/256", rtx, None) == (
        "compute config parallel/256: XLA projectors: NVIDIA GeForce RTX 5080 is not in "
        "MBIRJAX's Pallas allowlist (H100, H200, A100); fwd_pallas=False, back_pallas=False, "
        "fwd_pallas_band=False, back_pallas_band=False")
    # A later MBIRJAX with another allowlist: named as MBIRJAX states it.
    l40 = _config("NVIDIA L40S", "device kind 'NVIDIA L40S' not in the measured allowlist "
                                 "('H100', 'H200', 'A100', 'B200')")
    assert sweep.projector_path(l40) == (
        "XLA projectors: NVIDIA L40S is not in MBIRJAX's Pallas allowlist (H100, H200, A100, B200)")
    h200 = _config("NVIDIA H200", "available (NVIDIA H200)", True, fwd_pallas=True,
                   back_pallas=True)
    assert sweep.projector_path(h200) == "Pallas projectors on NVIDIA H200 (fwd_pallas, back_pallas)"
    assert sweep.projector_path(_config("cpu", "not a GPU platform (cpu)")) == (
        "XLA projectors: not a GPU platform (cpu)")
    assert sweep.projector_path(_config("NVIDIA H100 80GB HBM3",
                                        "disabled by MBIRJAX_DISABLE_PALLAS=1")) == (
        "XLA projectors: disabled by MBIRJAX_DISABLE_PALLAS=1")
    assert sweep.projector_path(_config("NVIDIA A100-SXM4-40GB", "probe kernel failed to "
                                        "compile/run: boom")) == (
        "XLA projectors: probe kernel failed to compile/run: boom")
    # Available, but this model's tile policy turned every Pallas path off.
    assert sweep.projector_path(_config("NVIDIA H200", "available (NVIDIA H200)", True)) == (
        "XLA projectors: Pallas is available (available (NVIDIA H200)) but this model's tile "
        "policy uses no Pallas path")
    assert sweep.projector_path(None, "get_compute_config() failed: RuntimeError: x") == (
        "projectors unknown: get_compute_config() failed: RuntimeError: x")


@pytest.mark.skipif(not LINE_07, reason="get_compute_config() and the allowlist came with 0.7")
def test_projector_path_from_mbirjax_for_a_geforce_card(sweep, monkeypatch):
    """MBIRJAX's own availability check and get_compute_config() on a model, with JAX's device
    list in MBIRJAX's kernel module showing an RTX 5080 (the only way to reach that branch
    without the card): the sweep's words come from what MBIRJAX reports."""
    import mbirjax as mj
    from mbirjax import _pallas_kernels as pk

    class Rtx5080:
        platform = "gpu"
        device_kind = "NVIDIA GeForce RTX 5080"

    monkeypatch.setattr(pk, "jax", types.SimpleNamespace(devices=lambda: [Rtx5080()]))
    pk.availability.cache_clear()
    try:
        model = mj.ParallelBeamModel((8, 8, 8), np.linspace(0.0, np.pi, 8, endpoint=False))
        config, why = sweep.compute_config_of(model)
    finally:
        monkeypatch.undo()
        pk.availability.cache_clear()
    assert why is None
    assert config["kernels"]["pallas_status"] == (
        "device kind 'NVIDIA GeForce RTX 5080' not in the measured allowlist "
        "('H100', 'H200', 'A100')")
    assert sweep.pallas_live(config) is False
    assert sweep.projector_path(config) == (
        "XLA projectors: NVIDIA GeForce RTX 5080 is not in MBIRJAX's Pallas allowlist "
        "(H100, H200, A100)")


def test_the_page_answers_first_and_says_no_gpu_once(sweep, tmp_path):
    """Without a GPU the demo's page opens with the bundled GPU trace's answer (--answer-from:
    its summary.json), links to its report and says what the rest of the page is; the no-GPU
    reason is said once for the page, not once per trace section of every operation."""
    reason = sweep.NO_GPU_REASON.format(backend="cpu")
    results = []
    for name in ("parallel_forward_project", "parallel_back_project"):
        r = sweep.Result(name, 32, times_s=[0.05])
        r.profile = {"available": False, "reason": reason,
                     **{k: {"available": False, "reason": f"no {k} in this trace"}
                        for k in ("kernels", "transfers", "peak_device_memory", "roofline", "fpga")}}
        results.append(r)
    bundled = tmp_path / "bundled_gpu_trace"
    bundled.mkdir()
    answer = {"available": True, "unit": "region", "cards": ["alveo-u55c", "versal-v80"], "count": 1,
              "items_left_out": 0,
              "items": [{"operation": "forward_project", "size": 128, "region": "forward_project/128",
                         "gpu_time_s": 6.241e-4, "verdict": "no", "best_card": "versal-v80",
                         "scenario": "restructured", "speedup": 0.24, "speedup_low": 0.13,
                         "speedup_high": 0.33, "bound": False, "reason": "host link alone 1.75 ms"}],
              "rests_on": {"text": "GPU times measured on NVIDIA H200"}}
    (bundled / "summary.json").write_text(json.dumps({"answer": answer, "trace": {"path": "x/h200.fpgaprof"}}))
    got = sweep.load_answer(str(bundled / "summary.json"))
    env = {"backend": "cpu", "devices": ["cpu:0"]}
    page = sweep.render_html(env, results, [32], 1, sweep.scaling_table(results, [32]), str(tmp_path), got)
    body = page[page.index("<body>"):]
    answer_at = body.index("The answer: FPGA offload per operation and size")
    assert answer_at < body.index("Scaling") and answer_at < body.index("Per operation and size")
    assert 'href="bundled_gpu_trace/report.html"' in page
    assert "The rest of this page is the CPU part" in page
    assert ">forward_project<" in page and "versal-v80" in page and "0.24x" in page
    assert "h200.fpgaprof" in page
    assert page.count("not available") == 0  # the page's no-GPU note says it, once
    assert page.count(reason) == 1
    # the terminal's last lines: the same answer, said to come from the bundled trace
    text = sweep.answer_text(results, got)
    assert text.splitlines()[0].startswith("From the bundled GPU trace h200.fpgaprof")
    assert "forward_project" in text and "rests on: GPU times measured on NVIDIA H200" in text


def test_under_fpgaprof_run_the_sweep_opens_no_trace_of_its_own(sweep, monkeypatch):
    """A trace already running in the process (`fpgaprof run`'s) is seen, so the sweep records
    each operation as its region only: a nested trace() would wrap every operation in a region
    "trace" that the run's answer ranked first as an operation of its own."""
    import fpgaprof

    assert not sweep._run_trace_active()
    with fpgaprof.trace():
        assert sweep._run_trace_active()
    assert not sweep._run_trace_active()
    monkeypatch.setenv("FPGAPROF_RUN_DIR", "/runs/r1")
    assert sweep.under_run_reason("cone_back_project", 64) == (
        "under `fpgaprof run`: region 'cone_back_project/64' of the run's trace; its answer is in "
        "/runs/r1/summary.json")
    # the trace-facts line says it once, not once per operation
    results = []
    for name in ("cone_back_project", "parallel_recon", "gen_weights"):
        r = sweep.Result(name, 64, times_s=[0.01])
        r.profile = {"available": False, "reason": sweep.under_run_reason(name, 64)}
        results.append(r)
    facts = sweep.format_trace_facts(results)
    assert facts.count("under `fpgaprof run`") == 1 and "parallel_recon" not in facts


def test_the_sweep_answer_names_every_operation_it_has_no_row_for(sweep):
    """One operation with its region row, one that failed, one whose trace has no answer, one
    whose answer has no row of its own (a per-op answer): the three are listed with their
    reasons, never dropped without a word."""
    row = {"operation": "parallel_forward_project", "size": None, "region": "parallel_forward_project/64",
           "gpu_time_s": 1e-3, "verdict": "no", "best_card": "versal-v80", "speedup": 0.1,
           "speedup_low": 0.05, "speedup_high": 0.2, "bound": False, "reason": "r"}
    ok = sweep.Result("parallel_forward_project", 64, times_s=[0.01])
    ok.profile = {"answer": {"available": True, "cards": ["versal-v80"], "items": [row],
                             "rests_on": {"text": "GPU times measured on H100"}}}
    failed = sweep.Result("cone_recon", 64, times_s=[])
    failed.error = "RuntimeError: out of memory"
    no_gpu = sweep.Result("gen_pixel_partition", 64, times_s=[0.001])
    no_gpu.profile = {"answer": {"available": False, "reason": "no FPGA candidates: no GPU kernels"}}
    per_op = sweep.Result("gen_weights", 64, times_s=[0.001])
    per_op.profile = {"answer": {"available": True, "cards": ["versal-v80"],
                                 "items": [dict(row, operation="fusion.3", region=None)]}}
    a = sweep.sweep_answer([ok, failed, no_gpu, per_op])
    assert [i["operation"] for i in a["items"]] == ["parallel_forward_project"]
    assert a["items"][0]["size"] == 64
    assert [(m["operation"], m["size"]) for m in a["missing"]] == [
        ("cone_recon", 64), ("gen_pixel_partition", 64), ("gen_weights", 64)]
    reasons = [m["reason"] for m in a["missing"]]
    assert reasons[0] == "the operation failed: RuntimeError: out of memory"
    assert reasons[1] == "no FPGA candidates: no GPU kernels"
    assert reasons[2] == "no region 'gen_weights/64' with GPU kernels in its trace"
    assert a["rests_on"]["text"] == "GPU times measured on H100"
    text = sweep.answer_text([ok, failed, no_gpu, per_op], None)
    assert "no answer for 3 operation(s) and size(s):" in text
    assert "cone_recon 64³: the operation failed: RuntimeError: out of memory" in text


def test_scaling_seconds_keep_four_significant_digits(sweep):
    # a 40 us call printed 0.0000s with four decimals
    assert sweep._fmt_s(3.97e-05) == "3.97e-05s"
    assert sweep._fmt_s(0.81935) == "0.8194s" and sweep._fmt_s(None) == "-"


def test_the_scaling_table_marks_recompiled_and_failed_sizes(sweep):
    """A size whose timed runs compiled is starred (its median is mostly compile time) and a
    size whose operation failed reads 'failed!', each with its footnote, where both read as
    plain medians or a bare '-' before."""
    a32 = sweep.Result("qggmrf_denoise", 32, times_s=[0.8, 0.82])
    a32.timed_compile = {"compilations": 2}
    a64 = sweep.Result("qggmrf_denoise", 64, times_s=[0.9, 0.91])
    b32 = sweep.Result("cone_recon", 32, times_s=[0.1])
    b64 = sweep.Result("cone_recon", 64, times_s=[])
    b64.error = "RuntimeError: out of memory"
    rows = sweep.scaling_table([a32, a64, b32, b64], [32, 64])
    by = {r["operation"]: r for r in rows}
    assert by["qggmrf_denoise"]["recompiled_sizes"] == [32] and by["cone_recon"]["failed_sizes"] == [64]
    text = sweep.format_scaling(rows, [32, 64])
    assert "0.81s*" in text and "failed!" in text
    assert "* XLA compiled during the timed runs" in text and "! the operation failed" in text
    assert by["cone_recon"]["exponent"] is None  # one size with a time


def test_the_bundled_answer_names_its_size(sweep, tmp_path):
    """The bundled trace (examples/mbirjax_forward.py --size 128) has regions "forward_project"
    and "back_project": its answer must still say which problem size and geometry it answers
    for, from the trace's name, and say where that came from."""
    bundled = tmp_path / "bundled_gpu_trace"
    bundled.mkdir()
    answer = {"available": True, "unit": "region", "cards": ["versal-v80"], "count": 1,
              "items": [{"operation": "forward_project", "size": None, "region": "forward_project",
                         "gpu_time_s": 6.241e-4, "verdict": "no", "best_card": "versal-v80",
                         "speedup": 0.24, "speedup_low": 0.13, "speedup_high": 0.33}],
              "rests_on": {"text": "GPU times measured on NVIDIA H200"}}
    trace = "tests/data/traces/mbirjax073_parallel_128_pallas_h200.fpgaprof"
    (bundled / "summary.json").write_text(json.dumps({"answer": answer, "trace": {"path": trace}}))
    got = sweep.load_answer(str(bundled / "summary.json"))
    (item,) = got["items"]
    assert (item["operation"], item["size"]) == ("parallel_forward_project", 128)
    assert "size 128³, parallel beam (from the trace's file name)" in got["rests_on"]["text"]
    row = sweep.answer_text([], got).splitlines()[3]
    assert row.split()[:2] == ["parallel_forward_project", "128³"]


def test_time_limit_reason_by_hand(sweep):
    r = sweep.time_limit_reason
    assert r(0.0, 1e9, 5.0, 64) is None  # no limit
    assert r(100.0, 40.0, None, 64) is None  # the first at a size starts while time is left
    assert r(100.0, 40.0, 59.0, 64) is None  # 60 s left >= 59 s
    assert r(100.0, 40.0, 61.0, 64) == (
        "the --max-seconds 100 s limit: 60 s left, less than the longest operation at n=64 so far (61 s)")
    assert r(100.0, 100.0, None, 256) == "the --max-seconds 100 s limit had passed"


def test_format_not_run_groups_by_size(sweep):
    assert sweep.format_not_run([]) == ""
    text = sweep.format_not_run([
        {"operation": "a", "volume_size": 64, "reason": "x"},
        {"operation": "b", "volume_size": 64, "reason": "x"},
        {"operation": "a", "volume_size": 256, "reason": "y"},
    ])
    assert text == ("\nnot run, the sweep's time limit (--max-seconds): 3 (operation, size) pair(s)"
                    "\n  n=64: a, b\n  n=256: a")


@pytest.mark.slow
def test_a_time_limited_sweep_lists_what_it_did_not_run_and_ends_normally(tmp_path):
    # 1 s: the first operation at each size always starts; by its end the limit has passed, so
    # the second operation at 16 and both at 24 are not started.
    ops = ["shepp_logan_phantom", "gen_pixel_partition"]
    proc = _run_sweep(tmp_path, "--sizes", "16", "24", "--runs", "1", "--no-aot", "--no-section-reports",
                      "--max-seconds", "1", "--operations", *ops)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    measured = [(o["operation"], o["volume_size"]) for o in summary["sweep"]["operations"]]
    assert measured == [("shepp_logan_phantom", 16)]
    not_run = summary["sweep"]["not_run"]
    assert [(x["operation"], x["volume_size"]) for x in not_run] == [
        ("gen_pixel_partition", 16), ("shepp_logan_phantom", 24), ("gen_pixel_partition", 24)]
    assert all(x["reason"] == "the --max-seconds 1 s limit had passed" for x in not_run)
    assert "not run, the sweep's time limit (--max-seconds): 3 (operation, size) pair(s)" in proc.stdout
    assert "n=24: shepp_logan_phantom, gen_pixel_partition" in (tmp_path / "scaling.txt").read_text()
    assert "not run, the sweep&#x27;s time limit" in (tmp_path / "report.html").read_text()
