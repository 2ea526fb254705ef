"""`fpgaprof compare` of two constructed traces whose XLA modules jit_step and jit_init each
have an op loop_add_fusion launching a kernel of that name (XLA names a kernel after its
fusion). Worked out by hand:

A: jit_step 10 runs of 100 us, jit_init 1 run of 1 us. B: jit_step the same, jit_init 100 runs.
  op jit_step:loop_add_fusion   1.00 ms / 10 -> 1.00 ms / 10: change 0, B/A 1.00x, mean 1.00x
  op jit_init:loop_add_fusion   1 us / 1 -> 100 us / 100: +99 us, B/A 100x, mean 1 us -> 1 us
  kernel loop_add_fusion        (1,000 + 1) us / 11 = 91.0 us -> (1,000 + 100) us / 110 = 10.0 us
    a "mean B/A" of 0.11x that no kernel had: every launch took what it took before. The
    kernel row keeps its sums (+99 us, 1.10x) but has no mean B/A, and says which modules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

US = 1000


def _save(path, runs):
    """runs: [(module, program_id, kernel ns)], one module execution each, one op and kernel
    loop_add_fusion per execution, attributed by XLA's NVTX ranges."""
    import fpgaprof
    from fpgaprof.base.core import core

    s = core.TraceStore()
    s.set_meta(start_ns=0, end_ns=100_000_000, gpu_available=True, command_buffers_disabled=True)
    d = core.DeviceInfo()
    d.name, d.compute_capability_major, d.sm_count = "H100 (constructed)", 9, 132
    s.add_device(d)
    t = 1000
    for cid, (module, pid, dur) in enumerate(runs, 1):
        s.append(
            "markers",
            name=f"XlaModule:#hlo_module={module},program_id={pid}#",
            domain="TSL",
            start_ns=t,
            end_ns=t + 1000 + dur + 100,
            thread_id=1,
        )
        s.append(
            "markers",
            name="Thunk:#hlo_op=loop_add_fusion#",
            domain="TSL",
            start_ns=t + 100,
            end_ns=t + 200,
            thread_id=1,
        )
        s.append(
            "api_calls",
            correlation_id=cid,
            thread_id=1,
            start_ns=t + 150,
            end_ns=t + 160,
            name="cuLaunchKernel",
        )
        s.append(
            "kernels",
            correlation_id=cid,
            name="loop_add_fusion",
            start_ns=t + 1000,
            end_ns=t + 1000 + dur,
            grid_x=100,
            stream_id=7,
        )
        t += 1000 + dur + 1100
    s.correlate()
    fpgaprof.Profile(s).save(str(path))


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("modules")
    step = [("jit_step", 1, 100 * US)] * 10
    _save(d / "a.fpgaprof", step + [("jit_init", 2, 1 * US)])
    _save(d / "b.fpgaprof", step + [("jit_init", 2, 1 * US)] * 100)
    return str(d / "a.fpgaprof"), str(d / "b.fpgaprof")


def _run(*args):
    r = subprocess.run(
        [sys.executable, "-m", "fpgaprof", "compare", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_ops_of_one_name_in_two_modules_are_two_rows(traces):
    rows = json.loads(_run("--json", *traces))["rows"]
    ops = {r["module"]: r for r in rows if r["kind"] == "op"}
    assert set(ops) == {"jit_step", "jit_init"}
    assert ops["jit_step"]["change_s"] == 0 and ops["jit_step"]["mean_ratio"] == pytest.approx(1)
    init = ops["jit_init"]
    assert (init["count_before"], init["count_after"]) == (1, 100)
    assert init["change_s"] == pytest.approx(99e-6) and init["mean_ratio"] == pytest.approx(1)


def test_a_kernel_name_of_several_modules_has_no_mean_ratio(traces):
    rows = json.loads(_run("--json", *traces))["rows"]
    k = [r for r in rows if r["kind"] == "kernel"]
    assert len(k) == 1
    k = k[0]
    # the sums are right: 1,001 us in 11 launches -> 1,100 us in 110
    assert k["time_before_s"] == pytest.approx(1001e-6) and k["time_after_s"] == pytest.approx(
        1100e-6
    )
    assert (k["count_before"], k["count_after"]) == (11, 110)
    assert k["change_s"] == pytest.approx(99e-6) and k["change_ratio"] == pytest.approx(1100 / 1001)
    # the means mix two modules' kernels: 91.0 us -> 10.0 us is no launch's change (was 0.11x)
    assert k["mean_before_s"] == pytest.approx(1001e-6 / 11)
    assert k["mean_ratio"] is None
    assert (
        "in A jit_step 10, jit_init 1" in k["note"]
        and "in B jit_init 100, jit_step 10" in k["note"]
    )
    text = _run(*traces)
    line = [x for x in text.splitlines() if x.startswith("  loop_add_fusion ")][0]
    assert "0.11x" not in line and "several modules" in line and "jit_init 100" in line


def test_summary_json_says_which_modules_launched_a_kernel(traces, tmp_path):
    import fpgaprof
    from fpgaprof import report

    s = report.collect(fpgaprof.load(traces[1]), target=None, trace_path=traces[1])
    assert s["kernels"]["top"][0]["modules"] == [
        {"module": "jit_init", "count": 100},
        {"module": "jit_step", "count": 10},
    ]


def test_one_module_on_each_side_keeps_its_mean_ratio(tmp_path):
    # older summaries (no `modules`) and kernels of one and the same module keep mean B/A
    def summary(n, t, modules):
        row = {"name": "k", "count": n, "timed_count": n, "total_s": t, "mean_s": t / n}
        if modules is not None:
            row["modules"] = modules
        return {
            "schema_version": 2,
            "trace": {"wall_time_s": 1.0},
            "kernels": {"available": True, "top": [row], "rows_left_out": 0},
        }

    for ma, mb, ratio in [
        (None, None, 2.0),
        ([{"module": "jit_f", "count": 2}], [{"module": "jit_f", "count": 2}], 2.0),
        ([{"module": "jit_f", "count": 2}], [{"module": "jit_g", "count": 2}], None),
    ]:
        (tmp_path / "a.json").write_text(json.dumps(summary(2, 2e-6, ma)))
        (tmp_path / "b.json").write_text(json.dumps(summary(2, 4e-6, mb)))
        rows = json.loads(_run("--json", str(tmp_path / "a.json"), str(tmp_path / "b.json")))[
            "rows"
        ]
        k = [r for r in rows if r["kind"] == "kernel"][0]
        assert k["mean_ratio"] == (pytest.approx(ratio) if ratio else None), (ma, mb, k)
        assert (k["note"] is None) == (ratio is not None)
