"""tests/gpu/cone_counters.py's checks (run on a GPU by run_on_gpu.sh's conecounters step) on the
saved H100 counters trace of parallel projection at 64^3: they pass there, and fail as they
should when a region is missing or kernels lack counters."""
import importlib.util
import pathlib

import fpgaprof

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("cone_counters", ROOT / "tests" / "gpu" / "cone_counters.py")
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)
TRACE = ROOT / "tests" / "data" / "traces" / "mbirjax_parallel_64_counters_h100.fpgaprof"


def test_the_checks_pass_on_a_real_counters_trace():
    prof = fpgaprof.load(str(TRACE))
    out, failures = C.evaluate(prof, ("forward_project", "back_project"))
    assert failures == [], failures
    assert out["kernels"] == out["kernels_with_counters"] == 62
    assert out["dtod_copies_with_counters"] == 27 and out["unpaired_counter_values"] == 0
    fwd = out["regions"]["forward_project"]
    assert fwd["kernels"] == 23 and fwd["measured_coverage"] == 1.0
    assert fwd["counted_fp32_flops"] > 0 and fwd["dram_read_bytes"] + fwd["dram_write_bytes"] > 0
    # the roofline's measured bytes are these DRAM bytes
    roof = {r["region"]: r for r in prof.roofline(by="region")}
    assert fwd["dram_read_bytes"] + fwd["dram_write_bytes"] == roof["forward_project"]["measured_bytes"]


def test_a_missing_region_fails():
    prof = fpgaprof.load(str(TRACE))
    _out, failures = C.evaluate(prof, ("cone_forward_project",))
    assert failures == ["no roofline row for region cone_forward_project"]


def test_a_trace_without_counters_fails():
    prof = fpgaprof.load(str(ROOT / "tests" / "data" / "traces" / "mbirjax_parallel_128_h100.fpgaprof"))
    _out, failures = C.evaluate(prof, ("forward_project",))
    assert failures[0].startswith("154 of 154 kernels have no counters")
    assert any("counted FLOPs 0" in f for f in failures)
