"""Hardware counters under WSL2, through the libcupti test double (tests/fake_cupti).

CUPTI's cuptiProfilerDeviceSupported says in its `wsl` field whether this WSL setup supports
profiling; where that answer is missing (the test double, like a libcupti without the call, has
none), /proc/version decides: a Microsoft kernel means WSL, and counters are refused with the fix
before the Range Profiler is loaded, so no kernel is replayed. $FPGAPROF_PROC_VERSION names the
file read instead of /proc/version. The decision on CUPTI's own answer (supported, unsupported,
disabled, unknown) is unit-tested in tests/cpp/test_analysis_counters.cpp.

The /proc/version texts are real ones: WSL2's kernel (Microsoft's WSL2-Linux-Kernel 5.15, as WSL
2.x installs it) and Debian 12's.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from _fake_cupti import need_fake, run_traced

WSL2 = ("Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0, "
        "GNU ld (GNU Binutils) 2.37) #1 SMP Tue Nov 5 00:21:55 UTC 2024\n")
DEBIAN = ("Linux version 6.1.0-26-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) "
          "12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.112-1\n")

# What the test double answers without WSL: it exports the activity API only, like a CUPTI
# older than 12.6 (tests/python/test_counters_plan.py checks the same error).
NO_RANGE_PROFILER = "lacks the Range Profiler"

TRACE = """
from fpgaprof.base.core import core
with fpgaprof.trace(counters=True) as prof:
    emit()
try:
    core.analysis.CounterSession.start()
    direct = None
except Exception as e:
    direct = [type(e).__name__, str(e)]
done({"kernels": len(prof.kernels), "counters": len(prof.counters), "warnings": list(prof.warnings),
      "direct": direct})
"""


def _version_file(tmp_path, text: str) -> str:
    p = tmp_path / "version"
    p.write_text(text)
    return str(p)


def test_on_wsl_counters_are_refused_with_the_fix_and_the_trace_goes_on(tmp_path):
    path = _version_file(tmp_path, WSL2)
    out = run_traced(TRACE, kernels=20, extra_env={"FPGAPROF_PROC_VERSION": path})
    kind, msg = out["direct"]
    assert kind == "CountersError"
    assert msg == (
        f"hardware counters are not available: this is WSL ({path} names a Microsoft kernel) and "
        "CUPTI cannot confirm that it supports hardware counters here (cuptiProfilerDeviceSupported "
        "is not in this libcupti): counters under WSL2 need a Windows NVIDIA driver whose CUPTI "
        "reports WSL profiling support and 'Allow access to the GPU performance counters to all "
        "users' in the NVIDIA Control Panel (Desktop > Enable Developer Settings, then Developer > "
        "Manage GPU Performance Counters); else run on native Linux, or trace without counters=True")
    assert NO_RANGE_PROFILER not in msg  # refused before the profiler was loaded
    # trace(counters=True): the existing counters-unavailable path, a warning with that error;
    # timing is untouched (every kernel of the test double is in the trace), no counter values
    said = [w for w in out["warnings"] if "hardware counters not collected" in w]
    assert said == [f"fpgaprof.trace(counters=True): hardware counters not collected: {msg}"]
    assert out["kernels"] == 20 and out["counters"] == 0
    assert "FpgaprofWarning" in out["_stderr"] and "this is WSL" in out["_stderr"]


def test_off_wsl_the_check_says_nothing(tmp_path):
    out = run_traced(TRACE, kernels=20,
                     extra_env={"FPGAPROF_PROC_VERSION": _version_file(tmp_path, DEBIAN)})
    kind, msg = out["direct"]
    assert kind == "CountersError" and NO_RANGE_PROFILER in msg and "WSL" not in msg
    assert not any("WSL" in w for w in out["warnings"])
    assert any(NO_RANGE_PROFILER in w for w in out["warnings"])
    assert out["kernels"] == 20


@pytest.mark.parametrize("what", ["missing", "folder", "fifo"])
def test_an_unreadable_version_file_is_not_wsl(tmp_path, what):
    path = tmp_path / "v"
    if what == "folder":
        path.mkdir()
    elif what == "fifo":
        os.mkfifo(path)  # no writer: must not block
    out = run_traced(TRACE, kernels=3, extra_env={"FPGAPROF_PROC_VERSION": str(path)}, timeout=60)
    assert NO_RANGE_PROFILER in out["direct"][1] and "WSL" not in out["direct"][1]


def test_fpgaprof_run_counters_on_wsl_warns_with_the_fix_and_keeps_the_trace(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import ctypes, os
        ctypes.CDLL(os.environ["FPGAPROF_CUPTI_LIBRARY"]).fake_cupti_emit()
        print("program ran")
    """))
    env = dict(os.environ)
    env.pop("FPGAPROF_RUN_DIR", None)
    env.pop("NVTX_INJECTION64_PATH", None)
    env.update({"FPGAPROF_CUPTI_LIBRARY": need_fake(), "FAKE_CUPTI_SCENARIO": "kernels",
                "FAKE_CUPTI_KERNELS": "7", "FAKE_CUPTI_THREADS": "1",
                "FPGAPROF_PROC_VERSION": _version_file(tmp_path, WSL2)})
    out = tmp_path / "run"
    p = subprocess.run([sys.executable, "-m", "fpgaprof.cli", "run", "--counters", "-o", str(out), "--",
                        sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "program ran" in p.stdout
    summary = json.loads((out / "summary.json").read_text())
    said = [w["message"] for w in summary["warnings"] if "hardware counters not collected" in w["message"]]
    assert len(said) == 1 and "this is WSL (" in said[0] and "Manage GPU Performance Counters" in said[0]
    assert summary["totals"]["kernel_count"] == 7  # timing untouched
