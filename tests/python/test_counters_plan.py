"""Counter plans (fpgaprof.counters, `fpgaprof counters`) against the REAL libcupti.

CUPTI's Profiler Host API needs neither a driver nor a GPU, so the host half of
trace(counters=True) — metric names per chip, their units, the config image, replay passes —
is checked here for real. Everything runs in a subprocess without the test double, so the
pytest process never loads libcupti (a loaded copy would be reused by later tests).

Expected values come from outside fpgaprof's code:
- the metric names are NVIDIA's (Nsight Compute metric reference; `ncu --query-metrics`);
- the units are what the roofline assumes when it decodes values (analysis/roofline.cpp: DRAM
  values are bytes, FLOP counts are thread instructions, duration is nanoseconds), so a unit
  change in a future CUPTI fails here instead of skewing the roofline;
- GB20x names DRAM traffic dram__bytes_op_{read,write} and GA10B (Orin, memory shared with the
  CPU) has no dram__ counters at all (checked with cuptiProfilerHostGetBaseMetrics in a separate
  probe program built against CUDA 13.0's headers, 2026-11-22).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import fpgaprof
from fpgaprof import counters
from _fake_cupti import driver_present

SASS = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
EXPECTED_GH100 = {
    "dram_read": ("dram__bytes_read.sum", "byte"),
    "dram_write": ("dram__bytes_write.sum", "byte"),
    "fp32_add": (SASS.format("fadd"), "instruction"),
    "fp32_mul": (SASS.format("fmul"), "instruction"),
    "fp32_fma": (SASS.format("ffma"), "instruction"),
    "fp64_add": (SASS.format("dadd"), "instruction"),
    "fp64_mul": (SASS.format("dmul"), "instruction"),
    "fp64_fma": (SASS.format("dfma"), "instruction"),
    "fp16_add": (SASS.format("hadd"), "instruction"),
    "fp16_mul": (SASS.format("hmul"), "instruction"),
    "fp16_fma": (SASS.format("hfma"), "instruction"),
    "tensor_instructions": ("sm__inst_executed_pipe_tensor.sum", "instruction"),
    "duration": ("gpu__time_duration.sum", "nanosecond"),
    "ctas_launched": ("sm__ctas_launched.sum", "cta"),
}


# The libcupti the plans are made with: fpgaprof's own search first (without a driver it takes
# the CUDA toolkit's copy itself), then the toolkit's copy named explicitly.
_library: str | None = None  # chosen by the plans fixture (None: fpgaprof's search)


def _toolkit_cupti() -> str | None:
    """The first toolkit libcupti of the search order docs/capture.md gives ($CUDA_HOME, then
    /usr/local/cuda; lib64, then extras/CUPTI/lib64; .so.13, .so.12, .so), or None."""
    roots = [r for r in (os.environ.get("CUDA_HOME"), "/usr/local/cuda") if r]
    for root in roots:
        for sub in ("lib64", "extras/CUPTI/lib64"):
            for name in ("libcupti.so.13", "libcupti.so.12", "libcupti.so"):
                path = os.path.join(root, sub, name)
                if os.path.isfile(path):
                    return path
    return None


def _real_env(library: str | None = None) -> dict:
    env = dict(os.environ)
    for k in ("FPGAPROF_FAKE_CUPTI", "FPGAPROF_CUPTI_LIBRARY"):
        env.pop(k, None)
    if library is None:
        library = _library
    if library:
        env["FPGAPROF_CUPTI_LIBRARY"] = library
    return env


def _run(code: str, *args: str, library: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          env=_real_env(library), capture_output=True, text=True, timeout=120)


# One subprocess computes every plan the tests read (CUPTI's host init per chip is ~0.1 s).
_PLANS = r"""
import json, sys
from fpgaprof import counters, errors
out = {}
try:
    out["chips"] = counters.chips()
except errors.FpgaprofError as e:  # no CUPTI, one that needs a driver, or one without the Host API
    print(json.dumps({"unavailable": f"{type(e).__name__}: {e}"})); sys.exit(0)
out["gv11b"] = None
try:
    counters.plan("GV11B")
except errors.FpgaprofError as e:
    out["gv11b"] = [type(e).__name__, str(e)]
for key, chip, metrics in [("GH100", "GH100", None), ("gh100", "gh100", None),
                           ("GA100", "GA100", None), ("AD102", "AD102", None),
                           ("GB100", "GB100", None), ("GB202", "GB202", None),
                           ("GB203", "GB203", None),
                           ("GA10B", "GA10B", None),
                           ("named", "GH100", ["dram__bytes_read.sum", "gpu__time_duration.sum"])]:
    out[key] = counters.plan(chip, metrics=metrics).to_dict()
for key, chip, metrics in [("bad_chip", "XX100", None), ("bad_metric", "GH100", ["nonsense.sum", "dram__bytes_read.sum"]),
                           ("no_rollup", "GH100", ["dram__bytes_read"]), ("no_chip", None, None)]:
    try:
        counters.plan(chip, metrics=metrics)
        out[key] = None
    except errors.FpgaprofError as e:
        out[key] = [type(e).__name__, str(e)]
print(json.dumps(out))
"""



@pytest.fixture(scope="module")
def plans() -> dict:
    global _library
    tried = []
    for lib in [None] + [p for p in [_toolkit_cupti()] if p]:
        p = _run(_PLANS, library=lib)
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout.strip().splitlines()[-1])
        if "unavailable" not in out:
            _library = lib
            return out
        tried.append(out["unavailable"])
    pytest.skip(f"no libcupti that plans counters on this machine: {tried}")


def _by_role(plan: dict) -> dict:
    return {m["role"]: (m["name"], m["unit"]) for m in plan["metrics"]}


def test_gh100_plan_has_every_role_with_the_units_the_roofline_decodes(plans):
    p = plans["GH100"]
    assert p["chip"] == "GH100" and p["chip_from_device"] is False
    assert _by_role(p) == EXPECTED_GH100
    assert p["missing"] == []
    # Kernel replay needs at least one pass; 13 metrics do not fit one pass on any chip CUPTI
    # 13 knows (the probe said 2), and the config image is a real blob.
    assert p["passes"] >= 2
    assert p["config_image_bytes"] > 0
    assert os.path.basename(p["cupti_path"]).startswith("libcupti.so")
    assert all(m["description"] and m["hw_unit"] for m in p["metrics"])
    assert {m["hw_unit"] for m in p["metrics"] if m["role"].startswith("dram")} == {"dram"}


def test_chip_names_are_case_insensitive(plans):
    assert plans["gh100"] == plans["GH100"]


@pytest.mark.parametrize("chip", ["GA100", "AD102", "GB100"])
def test_datacenter_and_workstation_chips_give_every_role(plans, chip):
    assert _by_role(plans[chip]) == EXPECTED_GH100
    assert plans[chip]["missing"] == []


@pytest.mark.parametrize("chip", ["GB202", "GB203"])
def test_gb20x_falls_back_to_the_op_dram_metrics(plans, chip):
    # GB202: RTX 5090, RTX PRO 6000 Blackwell; GB203: RTX 5080 (the user's card). Every other
    # role has the names and units it has on GH100; kernel replay as on the other chips.
    roles = _by_role(plans[chip])
    assert roles["dram_read"] == ("dram__bytes_op_read.sum", "byte")
    assert roles["dram_write"] == ("dram__bytes_op_write.sum", "byte")
    others = {r: v for r, v in EXPECTED_GH100.items() if not r.startswith("dram_")}
    assert {r: v for r, v in roles.items() if not r.startswith("dram_")} == others
    assert plans[chip]["missing"] == []
    assert plans[chip]["passes"] == plans["GH100"]["passes"]
    assert {m["hw_unit"] for m in plans[chip]["metrics"] if m["role"].startswith("dram")} == {"dram"}


def test_chip_without_dram_counters_lists_them_as_missing_and_keeps_the_rest(plans):
    p = plans["GA10B"]
    roles = _by_role(p)
    assert "dram_read" not in roles and "dram_write" not in roles
    assert roles["fp32_fma"] == EXPECTED_GH100["fp32_fma"]
    assert len(p["missing"]) == 2
    assert p["missing"][0].startswith("dram_read (tried dram__bytes_read.sum, dram__bytes_op_read.sum")
    assert p["missing"][1].startswith("dram_write (tried dram__bytes_write.sum, dram__bytes_op_write.sum")
    assert p["passes"] >= 1


def test_named_metrics_are_taken_as_given(plans):
    p = plans["named"]
    assert [(m["role"], m["name"], m["unit"]) for m in p["metrics"]] == [
        ("", "dram__bytes_read.sum", "byte"), ("", "gpu__time_duration.sum", "nanosecond")]
    assert p["missing"] == [] and p["passes"] >= 1


def test_supported_chips_cover_every_architecture_of_the_ceilings_table(plans):
    # docs/roofline.md's table runs Volta to Blackwell; CUPTI must know a chip of each.
    for chip in ("GV100", "TU102", "GA100", "AD102", "GH100", "GB100", "GB202", "GB203"):
        assert chip in plans["chips"]


def test_errors_say_the_cause_and_the_fix(plans):
    kind, msg = plans["bad_chip"]
    assert kind == "InvalidArgumentError"
    assert "'XX100' is not known" in msg and "GH100" in msg
    kind, msg = plans["bad_metric"]
    assert kind == "InvalidArgumentError"
    assert "nonsense.sum" in msg and "dram__bytes_read.sum" not in msg.split(":")[1]
    assert "ncu --query-metrics --chip gh100" in msg
    kind, msg = plans["no_rollup"]  # CUPTI describes a bare name but cannot configure it
    assert kind == "InvalidArgumentError"
    assert "'dram__bytes_read' has no rollup" in msg and "'dram__bytes_read.sum'" in msg
    kind, msg = plans["no_chip"]  # this machine has no driver (CI, the dev box)
    if kind is not None:
        assert kind == "CuptiUnavailableError"
        assert "name the chip" in msg and "--chip GH100" in msg


def test_cli_prints_the_plan_and_json(plans):
    p = _run("import sys; from fpgaprof.cli import main; sys.exit(main(sys.argv[1:]))",
             "counters", "--chip", "GB202")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("counter plan for chip GB202 (named; CUPTI ")
    assert f"kernel replay: {plans['GB202']['passes']} passes per kernel" in p.stdout
    row = [ln.split() for ln in p.stdout.splitlines() if ln.strip().startswith("dram_read")]
    assert row == [["dram_read", "dram__bytes_op_read.sum", "byte"]]
    p = _run("import sys; from fpgaprof.cli import main; sys.exit(main(sys.argv[1:]))",
             "counters", "--chip", "GB203", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == plans["GB203"]
    p = _run("import sys; from fpgaprof.cli import main; sys.exit(main(sys.argv[1:]))",
             "counters", "--chip", "GA10B", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == plans["GA10B"]
    p = _run("import sys; from fpgaprof.cli import main; sys.exit(main(sys.argv[1:]))",
             "counters", "--chip", "GH100", "--metric", "nonsense.sum")
    assert p.returncode == 1
    assert p.stderr.startswith("fpgaprof: error: counter metric(s) not available on chip GH100: nonsense.sum")
    p = _run("import sys; from fpgaprof.cli import main; sys.exit(main(sys.argv[1:]))",
             "counters", "--chips")
    assert p.returncode == 0 and p.stdout.split() == plans["chips"]
    # an unknown chip is a usage error (exit 2) with the nearest of CUPTI's names
    p = _run("import sys; from fpgaprof.cli import main; sys.exit(main(sys.argv[1:]))",
             "counters", "--chip", "gh10")
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("fpgaprof counters: error: unknown chip 'gh10' (did you mean GH100? ")
    assert p.stderr.rstrip().endswith("(see `fpgaprof counters --help`)")


def test_a_chip_the_range_profiler_does_not_support_is_a_counters_error(plans):
    kind, msg = plans["gv11b"]  # Xavier: listed by CUPTI, refused by cuptiProfilerHostInitialize
    assert kind == "CountersError"
    assert msg.startswith("CUPTI's Range Profiler does not support chip GV11B")


def _wheel_cupti() -> str | None:
    from fpgaprof.capture import process_env
    for d in process_env.wheel_lib_dirs():
        p = os.path.join(d, "libcupti.so.13")
        if os.path.isfile(p):
            return p
    return None


_PLAN_PATH = """
import json
from fpgaprof import counters, errors
from fpgaprof.base.core import core
try:
    out = {"path": counters.plan("GH100").cupti_path}
except errors.FpgaprofError as e:
    out = {"error": f"{type(e).__name__}: {e}"}
out["how"] = core.probe_cupti().how_found
print(json.dumps(out))
"""


def test_without_a_driver_plans_come_from_the_toolkit_even_with_the_wheel_installed(plans):
    wheel, toolkit = _wheel_cupti(), _toolkit_cupti()
    if driver_present() or wheel is None or toolkit is None:
        pytest.skip("needs a machine without an NVIDIA driver, with the nvidia-cuda-cupti wheel "
                    "and a CUDA toolkit (the CI machine)")
    p = _run(_PLAN_PATH, library="")  # no FPGAPROF_CUPTI_LIBRARY: fpgaprof's own choice
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1]) == {
        "path": toolkit,
        "how": "CUDA toolkit (no driver: the wheel's libcupti needs one for the Profiler Host API)"}


def test_a_libcupti_that_needs_a_driver_says_which_library_to_use(plans):
    wheel = _wheel_cupti()
    if driver_present() or wheel is None:
        pytest.skip("needs a machine without an NVIDIA driver and with the nvidia-cuda-cupti wheel")
    out = json.loads(_run(_PLAN_PATH, library=wheel).stdout.strip().splitlines()[-1])
    if "path" in out:
        pytest.skip(f"this wheel's libcupti ({wheel}) plans without a driver")
    msg = out["error"]
    assert "answers CUPTI_ERROR_UNKNOWN on a machine without an NVIDIA driver" in msg
    assert "FPGAPROF_CUPTI_LIBRARY" in msg
    assert out["how"] == "FPGAPROF_CUPTI_LIBRARY"


def test_arguments_are_checked_before_cupti_is_asked():
    with pytest.raises(fpgaprof.InvalidArgumentError, match="list of metric names"):
        counters.plan("GH100", metrics="dram__bytes_read.sum")
    with pytest.raises(fpgaprof.InvalidArgumentError, match="chip name"):
        counters.plan("")
    with pytest.raises(fpgaprof.InvalidArgumentError, match="GPU ordinal"):
        counters.plan(device=-1)
    with pytest.raises(fpgaprof.InvalidArgumentError, match="non-empty metric names"):
        counters.plan("GH100", metrics=["dram__bytes_read.sum", " "])


def test_a_cupti_without_the_profiler_host_api_is_a_counters_error(tmp_path):
    # The CUPTI test double exports the activity API only, like a CUPTI older than 12.6.
    from _fake_cupti import need_fake
    env = _real_env()
    env["FPGAPROF_CUPTI_LIBRARY"] = need_fake()
    p = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        from fpgaprof import counters, errors
        try:
            counters.plan("GH100")
        except errors.CountersError as e:
            print("CountersError:", e)
        """)], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("CountersError: ")
    assert "lacks the Range Profiler" in p.stdout and "CUDA 12.6 or newer" in p.stdout


def test_devices_report_line_gives_the_plan_or_why_not(monkeypatch):
    from fpgaprof.api import counters as api_counters
    from fpgaprof.api import devices as device_info
    plan = counters.CounterPlan(chip="GH100", chip_from_device=True, cupti_path="/x/libcupti.so.13",
                                metrics=[{"role": "dram_read", "name": "dram__bytes_read.sum",
                                          "description": "", "hw_unit": "dram", "unit": "byte"}],
                                missing=["fp16_fma (tried x)"], passes=2, config_image_bytes=10)
    seen = []
    monkeypatch.setattr(api_counters, "plan", lambda device=0: seen.append(device) or plan)
    assert device_info.counters_line(1) == ("chip GH100, 1 metrics, 2 kernel-replay passes, missing: "
                                          "fp16_fma (tried x) (fpgaprof counters)")
    assert seen == [1]

    def refuse(device=0):
        raise fpgaprof.CountersError("cuptiProfilerInitialize failed:\n  CUPTI_ERROR_NOT_SUPPORTED")
    monkeypatch.setattr(api_counters, "plan", refuse)
    assert device_info.counters_line(0) == ("not available (cuptiProfilerInitialize failed: "
                                          "CUPTI_ERROR_NOT_SUPPORTED)")
