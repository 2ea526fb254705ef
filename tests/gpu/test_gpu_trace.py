"""GPU checks of fpgaprof.trace with real JAX work (skipped without a CUDA GPU).

Each check runs in a fresh interpreter that imports fpgaprof before JAX (as users must), so
that NVTX injection and XLA flags are in place whatever other tests did in this process.
Expected byte counts come from the arrays' sizes (numpy's nbytes), not from fpgaprof.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu

from _gpu import skip_without_gpu  # noqa: E402


def run(code: str, env: dict | None = None) -> dict:
    prelude = "import json, warnings\nimport fpgaprof, fpgaprof.base.core\nimport jax, jax.numpy as jnp, numpy as np\n"
    p = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=600, env={**os.environ, **(env or {})})
    sys.stderr.write(p.stderr[-4000:])
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@skip_without_gpu
def test_jitted_matmul_kernel_is_captured():
    got = run("""
        f = jax.jit(lambda a, b: a @ b)
        a = jnp.ones((1024, 1024), jnp.float32)
        b = jnp.ones((1024, 1024), jnp.float32)
        f(a, b).block_until_ready()          # compile and warm up outside the trace
        with fpgaprof.trace(require_gpu=True) as prof:
            with fpgaprof.region("matmul"):
                c = f(a, b)
                c.block_until_ready()
        k = prof.kernels
        print(json.dumps({
            "kernels": [r.name for r in k],
            "durations": [r.duration_ns for r in k],
            "joined": [r.api_index != 0xFFFFFFFF for r in k],
            "regions": [prof.regions[r.region_index].name if r.region_index != 0xFFFFFFFF else None for r in k],
            "device": prof.device.name if prof.device else None,
            "value": float(c[0, 0]),
            "dropped": prof.dropped_records,
            "summary": prof.summary(),
        }))
    """)
    print(got["summary"])
    assert got["value"] == 1024.0
    assert len(got["kernels"]) >= 1, "no kernel captured for a jitted matmul"
    assert all(d > 0 for d in got["durations"])
    assert all(got["joined"]), "a kernel was not joined to its launch API call"
    assert got["device"]
    assert got["dropped"] == 0
    _MATMUL["regions"] = got["regions"]


_MATMUL: dict = {}


@skip_without_gpu
def test_matmul_kernels_are_attributed_to_the_enclosing_region():
    """Region attribution goes by the launching thread: this fails if JAX launches the
    kernels from a worker thread instead of the calling Python thread."""
    if "regions" not in _MATMUL:
        test_jitted_matmul_kernel_is_captured()
    assert _MATMUL["regions"] and set(_MATMUL["regions"]) == {"matmul"}, _MATMUL["regions"]


@skip_without_gpu
def test_device_put_and_get_move_exactly_the_array_bytes():
    got = run("""
        dev = jax.devices()[0]
        x = np.arange(1_000_003, dtype=np.float32)   # 4,000,012 bytes: not a round size
        jax.device_put(np.ones(16, np.float32), dev).block_until_ready()   # warm up the transfer path
        with fpgaprof.trace(require_gpu=True) as put:
            y = jax.device_put(x, dev)
            y.block_until_ready()
        with fpgaprof.trace(require_gpu=True) as get:
            back = jax.device_get(y)
        def by_kind(prof, kind):
            c = prof.transfers.columns(["copy_kind", "bytes"])
            sel = c["copy_kind"] == kind
            return int(sel.sum()), int(c["bytes"][sel].sum())
        print(json.dumps({"nbytes": int(x.nbytes), "put": by_kind(put, "HtoD"), "get": by_kind(get, "DtoH"),
                          "put_dtoh": by_kind(put, "DtoH"), "same": bool((back == x).all())}))
    """)
    n = got["nbytes"]
    assert n == 4_000_012
    assert got["same"]
    put_count, put_bytes = got["put"]
    get_count, get_bytes = got["get"]
    assert put_count >= 1 and put_bytes == n, got
    assert get_count >= 1 and get_bytes == n, got
    assert got["put_dtoh"] == [0, 0]


QUIET_APIS = {"cuEventQuery", "cuStreamQuery", "cuStreamQuery_ptsz", "cuCtxGetCurrent",
              "cuCtxSetCurrent", "cuCtxGetDevice", "cuCtxGetDevice_v2", "cuCtxPushCurrent",
              "cuCtxPushCurrent_v2", "cuCtxPopCurrent", "cuCtxPopCurrent_v2", "cudaEventQuery",
              "cudaStreamQuery", "cudaStreamQuery_ptsz", "cudaGetDevice", "cudaSetDevice"}


@skip_without_gpu
def test_record_census_matches_what_the_capture_layer_assumes_of_cupti_13():
    """What the CUDA 13 review (docs/capture.md, "CUPTI 13 facts") could not check without a
    driver: XLA's ranges arrive through the NVTX injection as TSL/Thunk markers, the polling
    calls are not traced, fpgaprof's own stop() leaves no records on the stopping thread, the
    device's clocks and bus width come from the driver, and only waits are sync records: every
    kept sync record has an API record (those of the untraced, completed polls are dropped at
    stop(), docs/capture.md "Sync records of untraced polls"), none is an unfinished query.
    The census itself is printed for docs/gpu-validation.md."""
    got = run("""
        import threading, time
        from collections import Counter
        f = jax.jit(lambda x: jnp.sin(x) * 2.0 + 1.0)
        x = jnp.ones((1 << 22,), jnp.float32)
        f(x).block_until_ready()                     # compile (and XLA's first NVTX call) outside
        main_tid = threading.get_native_id()
        with fpgaprof.trace(require_gpu=True) as prof:
            for _ in range(5):
                y = f(x)
            y.block_until_ready()
            host = np.asarray(y)                     # DtoH + a finished wait
            body_end_ns = time.time_ns()
        api = prof.api_calls.columns()
        m = prof.markers.columns()
        d = prof.device
        print(json.dumps({
            "api": Counter(str(n) for n in api["name"]).most_common(),
            "late_main_api": [str(n) for n, t, s in zip(api["name"], api["thread_id"], api["start_ns"])
                              if int(t) == main_tid and int(s) > body_end_ns],
            "domains": Counter(str(x) for x in m["domain"]).most_common(),
            "thunks": sum(str(n).startswith("Thunk:#") for n in m["name"]),
            "modules": sum(str(n).startswith("XlaModule:#") for n in m["name"]),
            "syncs": Counter(str(k) for k in prof.syncs.columns()["kind"]).most_common(),
            "syncs_without_api": sorted(set(int(c) for c in prof.syncs.columns()["correlation_id"])
                                        - set(int(c) for c in api["correlation_id"])),
            "device": d.to_dict() if d else None,
            "nvtx": dict(fpgaprof.base.core.core.nvtx_injection_status()),
            "warnings": prof.warnings,
            "kernels": len(prof.kernels), "value": float(host[0]),
        }, default=str))
    """)
    print(json.dumps(got, indent=1))
    assert got["value"] == pytest.approx(2.0 * 0.8414709848 + 1.0, rel=1e-5)
    assert got["kernels"] >= 5
    assert not QUIET_APIS & {n for n, _ in got["api"]}, got["api"]
    assert got["late_main_api"] == [], "fpgaprof's own stop() calls are in the trace"
    assert dict(got["domains"]).get("TSL", 0) > 0, got["domains"]
    assert got["thunks"] >= 5 and got["modules"] >= 5, (got["thunks"], got["modules"])
    dev = got["device"]
    assert dev["sm_count"] > 0 and dev["memory_clock_khz"] > 0 and dev["memory_bus_width_bits"] > 0
    assert not any("NVTX injection was not active" in w for w in got["warnings"]), got["warnings"]
    assert got["syncs_without_api"] == [], "sync records of untraced calls (polls) were kept"
    assert not any("found the work unfinished" in w for w in got["warnings"]), got["warnings"]
