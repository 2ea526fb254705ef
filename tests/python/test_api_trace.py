"""fpgaprof.trace() / region() / Profile end to end, through the libcupti test double.

Each traced scenario runs in a fresh interpreter (CUPTI state is process-global). Expected
numbers come from the fake's documented generation rule (tests/fake_cupti/fake_cupti.hpp),
worked out here by hand, never from fpgaprof's own output.
"""
import json
import os
import subprocess
import sys
import threading

import pytest

import fpgaprof
from _fake_cupti import need_fake, run_traced


def expected(kernels: int, threads: int) -> dict:
    """What the fake emits for FAKE_CUPTI_KERNELS=kernels, FAKE_CUPTI_THREADS=threads."""
    htod = [i for i in range(kernels) if i % 4 == 0]
    dtoh = [i for i in range(kernels) if i % 8 == 0]
    return {
        "kernels": kernels * threads,
        "htod": len(htod) * threads,
        "htod_bytes": sum(4096 * (i + 1) for i in htod) * threads,
        "dtoh": len(dtoh) * threads,
        "dtoh_bytes": sum(1024 * (i + 1) for i in dtoh) * threads,
        "memsets": len([i for i in range(kernels) if i % 16 == 0]) * threads,
        "syncs": threads,
        # per thread: module range, one instantaneous mark, one thunk per kernel; thread 0 also
        # opens "still_open"
        "markers": threads * (2 + kernels) + 1,
    }


def test_kernels_copies_and_markers_from_three_threads(tmp_path):
    path = tmp_path / "fake.fpgaprof"
    got = run_traced(f"""
        with fpgaprof.trace({str(path)!r}) as prof:
            emit()
        k = prof.kernels.columns()
        t = prof.transfers.columns()
        m = prof.markers.columns()
        per_thread = {{}}
        for tid in k["thread_id"].tolist():
            per_thread[str(tid)] = per_thread.get(str(tid), 0) + 1
        # the Thunk range each kernel was launched in, and its enclosing module range
        thunks = [m["name"][i] if i != 0xFFFFFFFF else None for i in k["marker_index"].tolist()]
        parents = [m["name"][m["parent"][i]] if i != 0xFFFFFFFF and m["parent"][i] != 0xFFFFFFFF else None
                   for i in k["marker_index"].tolist()]
        api = prof.api_calls.columns(["name"])["name"]
        done({{
            "kernels": len(prof.kernels),
            "per_thread": per_thread,
            "kernel_names": [str(x) for x in k["name"]],
            "thunks": thunks, "parents": parents,
            "api_of_kernels": [str(api[i]) for i in k["api_index"].tolist()],
            "launch_before_start": bool((k["launch_ns"] <= k["start_ns"]).all()),
            "htod": int((t["copy_kind"] == "HtoD").sum()),
            "htod_bytes": int(t["bytes"][t["copy_kind"] == "HtoD"].sum()),
            "dtoh": int((t["copy_kind"] == "DtoH").sum()),
            "dtoh_bytes": int(t["bytes"][t["copy_kind"] == "DtoH"].sum()),
            "memsets": len(prof.memsets),
            "syncs": len(prof.syncs),
            "markers": len(prof.markers),
            "device": prof.device.name,
            "gpu": prof.gpu_available,
            "summary": prof.summary(),
            "wall": prof.wall_time_ns,
            "dropped": prof.dropped_records,
        }})
    """, kernels=12, threads=3)
    exp = expected(12, 3)
    assert got["kernels"] == exp["kernels"] == 36
    # Kernels are attributed to the thread that launched them (fake threads 4200000..4200002:
    # above pid_max, never a real thread of this process).
    assert got["per_thread"] == {"4200000": 12, "4200001": 12, "4200002": 12}
    assert (got["htod"], got["htod_bytes"]) == (exp["htod"], exp["htod_bytes"]) == (9, 3 * 4096 * (1 + 5 + 9))
    assert (got["dtoh"], got["dtoh_bytes"]) == (exp["dtoh"], exp["dtoh_bytes"]) == (6, 3 * 1024 * (1 + 9))
    assert got["memsets"] == exp["memsets"] == 3
    assert got["syncs"] == exp["syncs"] == 3
    assert got["markers"] == exp["markers"] == 43
    assert got["device"] == "Fake H100" and got["gpu"] is True
    assert got["dropped"] == 0
    assert got["wall"] > 0
    assert set(got["api_of_kernels"]) == {"cuLaunchKernel"}
    assert got["launch_before_start"]
    # Kernel loop_fusion_<n> is launched inside Thunk "...hlo_op=fusion.<n>..." inside the module.
    for name, thunk, parent in zip(got["kernel_names"], got["thunks"], got["parents"]):
        n = name.rsplit("_", 1)[1]
        assert thunk == f"Thunk:#hlo_op=fusion.{n},unique_hlo_op_id={7 + int(n)}#"
        assert parent == "XlaModule:#hlo_module=jit_f,program_id=3#"
    s = got["summary"]
    assert "Kernels: 36 launches, 4 distinct" in s
    htod_line = next(line for line in s.splitlines() if line.strip().startswith("HtoD"))
    assert htod_line.split()[1] == "9"
    assert "Dropped records: 0" in s
    # The trace file was written atomically and loads to an equal Profile, every field.
    loaded = fpgaprof.load(path)
    assert len(loaded.kernels) == 36
    assert [r.to_dict() for r in loaded.kernels][:2] == [r.to_dict() for r in loaded.kernels][:2]
    assert sorted(os.listdir(tmp_path)) == ["fake.fpgaprof"]


def test_loaded_profile_equals_the_traced_one_field_by_field(tmp_path):
    path = tmp_path / "eq.fpgaprof"
    got = run_traced(f"""
        with fpgaprof.trace({str(path)!r}) as prof:
            with fpgaprof.region("all"):
                emit()
        back = fpgaprof.load({str(path)!r})
        tables = ["kernels", "transfers", "memsets", "allocations", "regions", "api_calls", "markers",
                  "syncs", "overheads", "external_correlations", "counters", "power_samples"]
        diffs = []
        for name in tables:
            a, b = getattr(prof, name), getattr(back, name)
            if len(a) != len(b):
                diffs.append((name, "len"))
            for ra, rb in zip(a, b):
                if ra.to_dict() != rb.to_dict():
                    diffs.append((name, ra.index))
        done({{"diffs": diffs, "eq": back == prof, "meta": back.meta == prof.meta,
               "devices": [d.to_dict() for d in back.devices] == [d.to_dict() for d in prof.devices],
               "warnings": back.warnings == prof.warnings, "n": {{t: len(getattr(prof, t)) for t in tables}}}})
    """, kernels=20, threads=2)
    assert got["diffs"] == []
    assert got["eq"] and got["meta"] and got["devices"] and got["warnings"]
    exp = expected(20, 2)
    assert got["n"]["kernels"] == exp["kernels"]
    assert got["n"]["markers"] == exp["markers"]
    assert got["n"]["regions"] == 1


def test_dropped_and_incomplete_records_are_counted_and_shown():
    got = run_traced("""
        with fpgaprof.trace() as prof:
            emit()
        done({"dropped": prof.dropped_records, "incomplete": prof.incomplete_records,
              "warnings": prof.warnings, "summary": prof.summary()})
    """, scenario="dropped", kernels=16)
    # Scenario "dropped": 17 reported after the first buffer; the first 3 kernels have no timestamps.
    assert got["dropped"] >= 17
    assert got["incomplete"] == 3
    assert any("dropped" in w.lower() for w in got["warnings"])
    assert f"Dropped records: {got['dropped']}; incomplete records: 3" in got["summary"]
    # Without counters their cause is the device timestamp buffer, and the fix is one the API
    # offers; the summary says it once (not again as a report-level line).
    (w,) = [w for w in got["warnings"] if "no timestamps" in w]
    assert "device timestamp buffer ran out" in w and "device_buffer_size" in w
    assert got["summary"].count("no timestamps") == 1


def test_device_buffer_size_reaches_cupti():
    """fpgaprof.trace(device_buffer_size=...) sets CUPTI's device buffer size: made to fail in
    the test double, the trace goes on with one warning naming it; with the default (0:
    CUPTI's own size) nothing is set, so nothing can fail. Bad values are refused."""
    code = """
        with fpgaprof.trace(device_buffer_size=SIZE) as prof:
            emit()
        done({"warnings": prof.warnings, "kernels": len(prof.kernels)})
    """
    fail = {"FAKE_CUPTI_FAIL": "cuptiActivitySetAttribute=1"}
    got = run_traced(code.replace("SIZE", str(1 << 20)), kernels=4, extra_env=fail)
    assert got["kernels"] == 4
    assert [w for w in got["warnings"] if "device_buffer_bytes could not be set" in w]
    got = run_traced(code.replace("SIZE", "0"), kernels=4, extra_env=fail)
    assert got["kernels"] == 4
    assert not [w for w in got["warnings"] if "device_buffer" in w]
    for bad in (100, -1, 2**31, True, "big", 1.5):
        with pytest.raises(ValueError, match="device_buffer_size"):
            fpgaprof.trace(device_buffer_size=bad)


def test_conflicting_subscriber_raises_profiler_conflict_error_naming_it():
    got = run_traced("""
        ran = False
        try:
            with fpgaprof.trace():
                ran = True
        except fpgaprof.ProfilerConflictError as e:
            done({"error": str(e), "ran": ran})
    """, scenario="conflict")
    assert "Nsight" in got["error"]
    assert got["ran"] is False


def test_no_gpu_runs_the_body_with_exactly_one_warning():
    got = run_traced("""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with fpgaprof.trace() as prof:
                with fpgaprof.region("host work"):
                    total = sum(range(100000))
        ours = [w for w in caught if issubclass(w.category, fpgaprof.FpgaprofWarning)]
        try:
            with fpgaprof.trace(require_gpu=True):
                pass
            err = None
        except fpgaprof.CuptiUnavailableError as e:
            err = str(e)
        done({"n": len(ours), "msg": str(ours[0].message) if ours else "",
              "runtime_warning": issubclass(ours[0].category, RuntimeWarning) if ours else False,
              "total": total, "gpu": prof.gpu_available, "wall": prof.wall_time_ns,
              "regions": [r.name for r in prof.regions], "kernels": len(prof.kernels),
              "device": prof.device is None, "err": err, "reason": prof.meta["unavailable_reason"]})
    """, scenario="nodriver")
    assert got["n"] == 1
    assert got["runtime_warning"]
    assert got["total"] == sum(range(100000))
    assert got["gpu"] is False and got["device"] is True and got["kernels"] == 0
    assert got["wall"] > 0
    assert got["regions"] == ["host work"]
    assert got["reason"] and got["reason"] in got["msg"]  # names what is missing and the fix
    assert "require_gpu=True" in got["msg"]
    assert got["err"] == got["reason"]  # require_gpu=True: the same message, as an error


def test_nested_trace_is_a_clear_error_and_the_outer_trace_survives():
    got = run_traced("""
        with fpgaprof.trace() as outer:
            try:
                with fpgaprof.trace():
                    pass
                nested = None
            except fpgaprof.ProfilerConflictError as e:
                nested = str(e)
            emit()
        done({"nested": nested, "kernels": len(outer.kernels)})
    """, kernels=8)
    assert "already running" in got["nested"]
    assert got["kernels"] == 8


def test_exception_in_the_body_propagates_unchanged_and_the_trace_is_saved(tmp_path):
    path = tmp_path / "boom.fpgaprof"
    got = run_traced(f"""
        class Boom(Exception):
            pass
        err = Boom("from the body")
        try:
            with fpgaprof.trace({str(path)!r}) as prof:
                emit()
                raise err
        except Boom as e:
            same = e is err
        back = fpgaprof.load({str(path)!r})
        done({{"same": same, "kernels": len(back.kernels), "live": len(prof.kernels)}})
    """, kernels=10)
    assert got["same"] is True
    assert got["kernels"] == got["live"] == 10


def test_regions_from_python_threads_belong_to_their_threads():
    got = run_traced("""
        import threading
        ids = {}
        barrier = threading.Barrier(3)
        def work(name):
            ids[name] = threading.get_native_id()
            with fpgaprof.region(name):
                barrier.wait()   # all three regions open at once
                with fpgaprof.region(name + "/inner"):
                    pass
        with fpgaprof.trace() as prof:
            threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(3)]
            for t in threads: t.start()
            for t in threads: t.join()
        regs = [(r.name, r.thread_id, r.depth, prof.regions[r.parent].name if r.parent != 0xFFFFFFFF else None)
                for r in prof.regions]
        done({"ids": ids, "regions": regs})
    """, scenario="nodriver")
    by_name = {name: (tid, depth, parent) for name, tid, depth, parent in got["regions"]}
    assert len(got["regions"]) == 6
    for i in range(3):
        name = f"t{i}"
        assert by_name[name] == (got["ids"][name], 0, None)
        assert by_name[name + "/inner"] == (got["ids"][name], 1, name)


def test_profile_is_not_readable_inside_the_block():
    got = run_traced("""
        with fpgaprof.trace() as prof:
            try:
                prof.kernels
                msg = None
            except fpgaprof.FpgaprofError as e:
                msg = str(e)
            emit()
        done({"msg": msg, "n": len(prof.kernels)})
    """, kernels=4)
    assert "still running" in got["msg"]
    assert got["n"] == 4


# ---- in-process: region and argument checks (no CUPTI involved) ---------------------------


def test_region_is_a_decorator_that_keeps_the_function():
    @fpgaprof.region("named")
    def f(x):
        """doc of f"""
        return x + 1

    @fpgaprof.region
    def g():
        return "g"

    assert f(1) == 2 and f.__name__ == "f" and f.__doc__ == "doc of f"
    assert g() == "g" and g.__name__ == "g"
    with fpgaprof.region("ctx") as r:
        assert r.name == "ctx"
    with pytest.raises(TypeError):
        fpgaprof.region()


def test_region_is_thread_safe_without_a_trace():
    errors = []

    def work():
        try:
            for _ in range(2000):
                with fpgaprof.region("x"):
                    pass
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_bad_arguments():
    with pytest.raises(ValueError, match="buffer_size"):
        fpgaprof.trace(buffer_size=10)
    with pytest.raises(ValueError, match="buffer_size"):
        fpgaprof.trace(buffer_size="big")


# ---- process setup and CLI -------------------------------------------------------------------


def _python(code: str, env_updates: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("NVTX_INJECTION64_PATH", None)
    env.update(env_updates or {})
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_import_sets_nvtx_injection_to_libfpgaprof():
    p = _python("import os, fpgaprof, fpgaprof.base.core as fc; c = fc.core; print(os.environ['NVTX_INJECTION64_PATH']); "
                "print(c.library_path())")
    assert p.returncode == 0, p.stderr
    env_path, lib = p.stdout.split()
    assert os.path.realpath(env_path) == os.path.realpath(lib)
    assert os.path.basename(lib) == "libfpgaprof.so"


def test_a_different_nvtx_injection_is_kept_with_one_warning():
    p = _python("import warnings; warnings.simplefilter('always'); import os, fpgaprof; "
                "import fpgaprof.capture.process_env as e; e.prepare_process(); print(os.environ['NVTX_INJECTION64_PATH'])",
                {"NVTX_INJECTION64_PATH": "/opt/other/libinject.so"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "/opt/other/libinject.so"
    assert p.stderr.count("NVTX_INJECTION64_PATH is set to /opt/other/libinject.so") == 1


def test_importing_after_jax_started_warns_once():
    pytest.importorskip("jax")
    p = _python("import warnings; warnings.simplefilter('always'); import jax; jax.devices(); import fpgaprof")
    assert p.returncode == 0, p.stderr
    hits = [line for line in p.stderr.splitlines() if "import fpgaprof" in line and "Warning" in line]
    assert len(hits) == 1, p.stderr
    q = _python("import warnings; warnings.simplefilter('always'); import fpgaprof, jax; jax.devices()")
    assert "import fpgaprof" not in q.stderr


def test_python_m_fpgaprof_devices():
    p = subprocess.run([sys.executable, "-m", "fpgaprof", "devices"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "CUPTI" in p.stdout and "tracing:" in p.stdout
    from fpgaprof.api import devices as device_info
    assert device_info.describe().splitlines()[0] == p.stdout.splitlines()[0]


def test_devices_with_the_fake_library():
    need_fake()
    got = run_traced("""
        from fpgaprof.api import devices as device_info
        done({"text": device_info.describe(), "n": len(fpgaprof.devices())})
    """)
    assert "libfake_cupti.so" in got["text"]
    assert got["n"] >= 0


def test_sigterm_inside_a_trace_block_saves_the_file_then_ends_as_sigterm(tmp_path):
    # A scheduler's time limit: SIGTERM while the body runs. The trace file is written (with a
    # warning that the program ended there) and the process still dies of SIGTERM.
    path = tmp_path / "t.fpgaprof"
    code = (
        "import os, signal, sys, time, warnings\n"
        "import fpgaprof\n"
        "warnings.simplefilter('ignore')\n"
        f"with fpgaprof.trace({str(path)!r}):\n"
        "    with fpgaprof.region('before-term'):\n"
        "        time.sleep(0.01)\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(60)\n"
        "    print('still running')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("FPGAPROF_RUN")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == -15, r.stderr
    assert "still running" not in r.stdout
    assert "fpgaprof.trace: SIGTERM received: saving the trace" in r.stderr
    prof = fpgaprof.load(str(path))
    names = [str(x) for x in prof.regions.columns(["name"])["name"]]
    assert names == ["before-term"]
    assert any("ended by SIGTERM" in w for w in prof.meta["warnings"])


def test_a_trace_without_a_file_or_a_finished_trace_leaves_sigterm_alone():
    import signal as _signal

    before = _signal.getsignal(_signal.SIGTERM)
    with fpgaprof.trace():  # nothing to save: no handler
        assert _signal.getsignal(_signal.SIGTERM) == before
    assert _signal.getsignal(_signal.SIGTERM) == before


def test_a_trace_without_nvtx_ranges_says_the_injection_was_not_active():
    # FAKE_CUPTI_MARKERS=0: the fake writes no marker records, as when NVTX never reached
    # CUPTI. First trace: no NVTX call yet in the process, so the injection was never called.
    # Second trace: fpgaprof.region's NVTX push makes NVTX load libfpgaprof.so (import set
    # NVTX_INJECTION64_PATH) and call InitializeInjectionNvtx2, which the fake's
    # cuptiNvtxInitialize2 accepts: no warning any more.
    got = run_traced("""
        from fpgaprof.base.core import core
        before = core.nvtx_injection_status()
        with fpgaprof.trace() as prof:
            emit()
        with fpgaprof.trace() as prof2:
            with fpgaprof.region("step"):
                emit()
        after = core.nvtx_injection_status()
        done({"before": before, "after": after, "w1": prof.meta["warnings"],
              "w2": prof2.meta["warnings"], "k1": len(prof.kernels), "k2": len(prof2.kernels),
              "m2": len(prof2.markers), "env": os.environ.get("NVTX_INJECTION64_PATH", "")})
    """, kernels=4, extra_env={"FAKE_CUPTI_MARKERS": "0"})
    assert os.path.basename(got["env"]) == "libfpgaprof.so"
    assert got["before"] == {"calls": 0, "last_result": -1, "succeeded": False, "detail": ""}
    assert got["k1"] == 4 and got["k2"] == 4
    assert [w for w in got["w1"] if w.startswith("NVTX injection was not active")]
    assert any("no XLA ranges, HLO attribution by kernel name only" in w for w in got["w1"])
    assert got["after"]["calls"] == 1 and got["after"]["succeeded"] and got["after"]["last_result"] == 1
    assert "cuptiNvtxInitialize2" in got["after"]["detail"]
    assert got["m2"] == 0  # the fake writes no records for NVTX calls
    assert not [w for w in got["w2"] if "NVTX injection" in w]


def test_the_devices_report_says_whether_nvtx_reached_cupti():
    got = run_traced("""
        from fpgaprof.api import devices as device_info
        first = device_info.describe()
        with fpgaprof.region("r"):
            pass
        done({"first": first, "second": device_info.describe()})
    """, kernels=1)
    assert "  NVTX injection: not called yet" in got["first"]
    assert "  NVTX injection: active (cuptiNvtxInitialize2 of " in got["second"]
