"""Which libcupti fpgaprof loads, seen through `fpgaprof devices` in fresh interpreters.

A wheel folder and a CUDA toolkit are laid out in tmp_path, each holding a copy of the CUPTI
test double named libcupti.so.13, so the real dlopen path of the search is exercised without
depending on which real libcupti files this machine has. The expected choice follows the order
in docs/capture.md ("Loading libcupti"): with an NVIDIA driver the wheel's copy, without one the
toolkit's copy with the reason, and FPGAPROF_CUPTI_LIBRARY over both, driver or not.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from _fake_cupti import driver_present, need_fake

NO_DRIVER_HOW = "CUDA toolkit (no driver: the wheel's libcupti needs one for the Profiler Host API)"


@pytest.fixture()
def layout(tmp_path):
    fake = need_fake()
    wheel = tmp_path / "site-packages" / "nvidia" / "cu13" / "lib"
    toolkit = tmp_path / "cuda"
    (toolkit / "lib64").mkdir(parents=True)
    wheel.mkdir(parents=True)
    shutil.copyfile(fake, wheel / "libcupti.so.13")
    shutil.copyfile(fake, toolkit / "lib64" / "libcupti.so.13")
    return {"fake": fake, "wheel": str(wheel / "libcupti.so.13"),
            "toolkit": str(toolkit / "lib64" / "libcupti.so.13"),
            "env": {"FPGAPROF_WHEEL_LIB_DIRS": str(wheel), "CUDA_HOME": str(toolkit)}}


def _cupti_line(env_updates: dict) -> str:
    env = dict(os.environ)
    for k in ("FPGAPROF_CUPTI_LIBRARY", "FPGAPROF_WHEEL_LIB_DIRS", "CUDA_HOME",
              "NVTX_INJECTION64_PATH"):
        env.pop(k, None)
    env.update(env_updates)
    p = subprocess.run([sys.executable, "-m", "fpgaprof.cli", "devices"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("  CUPTI: ")]
    assert len(lines) == 1, p.stdout
    return lines[0]


def test_search_takes_the_wheel_with_a_driver_and_the_toolkit_without(layout):
    line = _cupti_line(layout["env"])
    if driver_present():
        assert line.startswith(f"  CUPTI: {layout['wheel']} (found: pip wheel; API version ")
    else:
        assert line.startswith(f"  CUPTI: {layout['toolkit']} (found: {NO_DRIVER_HOW}; API version ")


def test_without_a_wheel_folder_the_toolkit_needs_no_reason(layout):
    env = dict(layout["env"], FPGAPROF_WHEEL_LIB_DIRS=os.pathsep)  # set, but names no folder
    line = _cupti_line(env)
    assert line.startswith(f"  CUPTI: {layout['toolkit']} (found: CUDA toolkit; API version ")


def test_fpgaprof_cupti_library_wins_over_both(layout):
    # How every traced Python test loads the test double (FPGAPROF_FAKE_CUPTI -> this variable).
    env = dict(layout["env"], FPGAPROF_CUPTI_LIBRARY=layout["fake"])
    line = _cupti_line(env)
    assert line.startswith(f"  CUPTI: {layout['fake']} (found: FPGAPROF_CUPTI_LIBRARY; API version ")


def _devices(env_updates: dict) -> str:
    env = dict(os.environ)
    for k in ("FPGAPROF_WHEEL_LIB_DIRS", "CUDA_HOME", "NVTX_INJECTION64_PATH"):
        env.pop(k, None)
    env.update(env_updates)
    p = subprocess.run([sys.executable, "-m", "fpgaprof.cli", "devices"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _header_api_version() -> int:
    """CUPTI_API_VERSION of the headers the build used, read from them here (not from fpgaprof):
    the CMake cache of the build names the folder."""
    import re

    import fpgaprof

    for cache in ("build/test/CMakeCache.txt", "build/dev/CMakeCache.txt"):
        if os.path.exists(cache):
            m = re.search(r"^FPGAPROF_CUPTI_INCLUDE_DIR:PATH=(.*)$", open(cache).read(), re.M)
            if m:
                text = open(os.path.join(m.group(1), "cupti_version.h")).read()
                return int(re.search(r"#define CUPTI_API_VERSION (\d+)", text).group(1))
    pytest.skip(f"no CMake cache beside {fpgaprof.__file__} names the CUPTI headers")


def test_devices_names_the_headers_built_with_and_the_runtime_minimum(layout):
    out = _devices({"FPGAPROF_CUPTI_LIBRARY": layout["fake"], "FAKE_CUPTI_API_VERSION": "26"})
    assert "(found: FPGAPROF_CUPTI_LIBRARY; API version 26, CUDA 12.8)" in out, out
    built = [ln for ln in out.splitlines() if ln.startswith("  built with: ")]
    assert len(built) == 1, out
    assert built[0].startswith(f"  built with: CUPTI headers API version {_header_api_version()}")
    assert built[0].endswith("runs with libcupti API version 26, CUDA 12.8 or newer")


def test_devices_refuses_a_libcupti_older_than_12_8_with_the_fix(layout):
    out = _devices({"FPGAPROF_CUPTI_LIBRARY": layout["fake"], "FAKE_CUPTI_API_VERSION": "24"})
    (line,) = [ln for ln in out.splitlines() if ln.startswith("  tracing: ")]
    assert line.startswith(
        f"  tracing: not possible: libcupti at {layout['fake']} is API version 24, older than "
        "the CUDA 12.8 (API version 26) this fpgaprof needs: pip install "
        "'nvidia-cuda-cupti-cu12>=12.8'"
    ), line


def test_capture_doc_quotes_the_not_found_message_and_the_search_names():
    # docs/capture.md, "Loading libcupti": the message and the sonames are cupti_api.cpp's and
    # cupti_search_order.cpp's, CUDA 12 included (what a jax[cuda12] user has).
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    doc = " ".join((root / "docs" / "capture.md").read_text().split())
    src = (root / "cpp" / "src" / "cupti" / "cupti_api.cpp").read_text()
    start = src.index('"libcupti not found')
    message = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', src[start:src.index(";\n", start)]))
    assert f"When nothing is found: `{message}`" in doc
    assert '`dlopen("libcupti.so.13")`, then `"libcupti.so.12"`, then `"libcupti.so"`' in doc
    assert "nvidia/cuda_cupti/lib" in doc
