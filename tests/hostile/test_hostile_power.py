"""Hostile input for the GPU power samples (docs/trace-format.md, POWR; docs/capture.md, "GPU
power and energy"): a forged POWR table in a saved trace, and FPGAPROF_NVML_LIBRARY naming
something that is not a library file. Each case runs in a process of its own (driver.py)."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest
import tracegen as g
from test_hostile import BASE, HERE, MIB, TRACE_ERROR, baseline, bomb, expect_error, load_case

__all__ = ["baseline"]  # the fixture, used by the cases below

ROOT = HERE.parent.parent


def powr_table(columns: list[tuple[bytes, int, bytes]], records: int) -> bytes:
    """A record table payload: (name, encoding, column data) per column (docs/trace-format.md)."""
    out = g.varint(records) + g.varint(len(columns))
    for name, enc, data in columns:
        out += g.varint(len(name)) + name + bytes([enc]) + g.varint(len(data)) + data
    return out


def with_powr(raw: bytes, **kw) -> bytes:
    return g.build(g.insert_before_end(g.parse(BASE), g.Section(b"POWR", raw, **kw)))


def test_power_samples_load_and_analyze(tmp_path, baseline):
    """Two readings 10 ms apart at 250 W, counter +2500 mJ: the trace loads with them."""
    t = [1_700_000_000_000_000_000, 1_700_000_000_010_000_000]
    raw = powr_table(
        [
            (b"time_ns", 0, b"".join(g.varint(x) for x in t)),
            (b"energy_mj", 0, g.varint(1000) + g.varint(3500)),
            (b"device_id", 0, g.varint(0) + g.varint(0)),
            (b"power_mw", 0, g.varint(250_000) + g.varint(250_000)),
        ],
        2,
    )
    res = load_case(tmp_path, with_powr(raw), baseline)
    assert "ok" in res, res


def test_power_value_out_of_range(tmp_path, baseline):
    raw = powr_table([(b"power_mw", 0, g.varint(2**33))], 1)
    res = load_case(tmp_path, with_powr(raw), baseline)
    expect_error(res, TRACE_ERROR, r"power_mw")


def test_power_samples_huge_record_count(tmp_path, baseline):
    raw = powr_table([(b"power_mw", 0, g.varint(1))], 1)
    _n, pos = g.read_varint(raw, 0)
    res = load_case(tmp_path, with_powr(g.varint(2**62) + raw[pos:]), baseline)
    expect_error(
        res,
        TRACE_ERROR,
        r"implausible count of records \(4611686018427387904\) in table power_samples",
    )


def test_power_samples_bomb(tmp_path, baseline):
    res = load_case(tmp_path, with_powr(b"", stored=bomb(512 * MIB), raw_bytes=512 * MIB), baseline)
    expect_error(res, TRACE_ERROR, r"section POWR would need \d+ MiB of memory.*zlib bomb")


def _fake(name: str) -> str:
    found = [
        f
        for f in glob.glob(str(ROOT / "build" / "*" / "tests" / name))
        if b"__asan_init" not in open(f, "rb").read()
    ]
    if not found:
        pytest.skip(f"{name} not built: build the C++ tests (-DFPGAPROF_TESTS=ON)")
    return max(found, key=os.path.getmtime)


def _run_driver(code: str, nvml_library: str, hang: str) -> dict:
    """Runs `code` in driver.py's process of its own, over the libcupti test double (10 kernels
    on one thread) with FPGAPROF_NVML_LIBRARY=nvml_library, 60 s at most (`hang` says what a
    timeout means); returns the one result it appended."""
    env = dict(
        os.environ,
        FPGAPROF_CUPTI_LIBRARY=_fake("libfake_cupti.so"),
        FAKE_CUPTI_SCENARIO="kernels",
        FAKE_CUPTI_KERNELS="10",
        FAKE_CUPTI_THREADS="1",
        FPGAPROF_NVML_LIBRARY=nvml_library,
    )
    env.pop("NVTX_INJECTION64_PATH", None)
    try:
        r = subprocess.run(
            [sys.executable, str(HERE / "driver.py"), "py", code],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(hang)
    assert r.returncode == 0, r.stderr[-2000:]
    (res,) = json.loads(r.stdout.strip().splitlines()[-1])
    return res


def test_nvml_library_not_a_file_warns_once_and_traces(not_a_library):
    """A GPU trace (the libcupti test double) with FPGAPROF_NVML_LIBRARY a FIFO, a folder or a
    device: no hang, the kernels are traced, one warning says why there is no energy."""
    path, what = not_a_library
    code = (
        "import ctypes, os, warnings\n"
        "fake = ctypes.CDLL(os.environ['FPGAPROF_CUPTI_LIBRARY'])\n"
        "with warnings.catch_warnings(record=True):\n"
        "    warnings.simplefilter('always')\n"
        "    with fpgaprof.trace() as p:\n"
        "        fake.fake_cupti_emit()\n"
        "results.append({'kernels': len(p.kernels), 'samples': len(p.power_samples),\n"
        "                'energy': [w for w in p.warnings if 'GPU energy' in w]})\n"
    )
    res = _run_driver(
        code, path, f"FPGAPROF_NVML_LIBRARY={path}: the trace still ran after 60 s (a hang)"
    )
    assert res["kernels"] == 10 and res["samples"] == 0
    (w,) = res["energy"]
    assert f"FPGAPROF_NVML_LIBRARY={path} {what}, not a library file" in w
    assert "\n" not in w


def test_forked_child_leaving_the_trace_does_not_wait_for_nvml():
    """os.fork() inside `with fpgaprof.trace()` (the NVML test double sampling): the child leaves
    the block at once, stopping nothing of the parent's (the sampling thread and CUPTI are the
    parent's: nothing to wait for, no lock taken) and saying so once; the parent's trace has its
    power samples."""
    code = (
        "import ctypes, json, os, time, warnings\n"
        "fake = ctypes.CDLL(os.environ['FPGAPROF_CUPTI_LIBRARY'])\n"
        "r, w = os.pipe()\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    with fpgaprof.trace() as p:\n"
        "        fake.fake_cupti_emit()\n"
        "        time.sleep(0.1)\n"
        "        pid = os.fork()\n"
        "        t0 = time.monotonic()\n"
        "    stop_s = time.monotonic() - t0\n"
        "if pid == 0:\n"
        "    said = [str(x.message) for x in seen if 'forked inside the traced block' in str(x.message)]\n"
        "    os.write(w, json.dumps({'stop_s': stop_s, 'said': said, 'ready': p.ready}).encode())\n"
        "    os._exit(0)\n"
        "os.close(w)\n"
        "child = json.loads(os.read(r, 1 << 16))\n"
        "os.waitpid(pid, 0)\n"
        "energy = [x for x in p.warnings if 'GPU energy' in x]\n"
        "results.append({'child': child, 'samples': len(p.power_samples), 'energy': energy})\n"
    )
    res = _run_driver(code, _fake("libfake_nvml.so"), "a forked child leaving the trace block hung")
    child = res["child"]
    # Before, it waited the whole 2 s for a thread that does not exist in the child.
    assert child["stop_s"] < 1.0, child
    assert child["ready"] is False  # nothing stopped: the trace is the parent's
    (said,) = child["said"]
    assert "only process" in said and "stops and saves the trace" in said
    assert res["samples"] > 0 and res["energy"] == []
