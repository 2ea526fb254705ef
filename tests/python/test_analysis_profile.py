"""Profile methods of the analysis layer delegate to fpgaprof.roofline / fpgaprof.fpga."""
import fpgaprof  # noqa: F401  (before jax)
import pytest
from fpgaprof import Profile

pytest.importorskip("jax")
from test_analysis_fpga import _hlo_text, _store  # noqa: E402


def test_profile_methods(tmp_path):
    p = Profile(_store(_hlo_text()))
    assert p.ceilings["dram_bytes_per_s"] == pytest.approx(1.024e12)
    rows = p.roofline(by="op")
    assert rows[0]["op"] == "broadcast_add_fusion"  # 60 us, the most time
    assert p.roofline(by="trace")["time_ns"] == 110_000
    assert [r["region"] for r in p.roofline(by="region")] == []
    cands = p.fpga_candidates(target="versal-v80")
    assert cands.meta["target"]["name"] == "versal-v80"
    assert {r["op"] for r in cands} == {"broadcast_add_fusion", "ynn_fusion", "wrapped_reduce"}
    assert p.transfer_report()["groups"][0]["all"]["count"] == 1
    assert p.memory_report()["allocation_count"] == 2
    text = p.export_hlo("broadcast_add_fusion", tmp_path / "a.hlo")
    assert text.startswith("HloModule broadcast_add_fusion_export")
    with pytest.raises(ValueError):
        p.roofline(by="nonsense")


def test_trace_counters_without_gpu_warns():
    import warnings

    from fpgaprof.base.core import core

    try:
        gpu = bool(core.probe_cupti()["devices"]) if hasattr(core, "probe_cupti") else False
    except Exception:
        gpu = False
    if gpu:
        pytest.skip("a GPU is present: tests/gpu covers counters")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with fpgaprof.trace(counters=True) as prof:
            pass
    assert any("counters" in str(w.message) for w in caught)
    assert len(prof.counters) == 0


class _RecordingCounters:
    """Stands in for core.analysis.CounterSession (no GPU here): records checkpoint calls."""

    def __init__(self, fail_at: int = 0):
        self.checkpoints = 0
        self.fail_at = fail_at
        self.calls: list = []

    def checkpoint(self):
        self.checkpoints += 1
        if self.checkpoints == self.fail_at:
            raise RuntimeError("image decode failed")

    def finish(self):
        self.calls.append("finish")

    def stop_into(self, store):
        self.calls.append(("stop_into", len(store.kernels)))
        return None


def _counting_without_a_gpu(monkeypatch):
    """trace(counters=True) on a capture session that reports a GPU (none here) and records
    nothing, with _RecordingCounters as the counter session; the list of those it started."""
    from fpgaprof.base.core import core

    started = []

    class _Counters:
        @staticmethod
        def start():
            started.append(_RecordingCounters())
            return started[-1]

    class _Session:
        gpu_active = True
        unavailable_reason = ""

        @staticmethod
        def start(**_kw):
            return _Session()

        def stop(self):
            return core.TraceStore()

    monkeypatch.setattr(core.analysis, "CounterSession", _Counters)
    monkeypatch.setattr(core, "CaptureSession", _Session)
    return started


def _trace_with(counters):
    t = fpgaprof.trace()
    t.__enter__()
    t._counters = counters
    import threading
    t._counters_thread = threading.get_ident()
    return t


def test_counter_image_checkpoints_when_the_outermost_region_ends():
    import threading
    import warnings

    rec = _RecordingCounters()
    t = _trace_with(rec)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(3):                     # three steps -> three checkpoints
                with fpgaprof.region("step"):
                    with fpgaprof.region("inner"):  # inner regions do not checkpoint
                        pass
                    assert rec.checkpoints == _
            other = threading.Thread(target=lambda: fpgaprof.region("elsewhere").__enter__().__exit__())
            other.start()
            other.join()                           # another thread's region: not the session's thread
    finally:
        t.__exit__(None, None, None)
    assert rec.checkpoints == 3
    # Counting ends before the activity session stops; then the complete store gets the values.
    assert rec.calls == ["finish", ("stop_into", 0)]


def test_a_failing_counter_checkpoint_warns_once_and_stops_checkpointing():
    import warnings

    rec = _RecordingCounters(fail_at=2)
    t = _trace_with(rec)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(4):
                with fpgaprof.region("step"):
                    pass
    finally:
        t.__exit__(None, None, None)
    assert rec.checkpoints == 2                    # the failure at the 2nd ends checkpointing
    msgs = [str(w.message) for w in caught if "checkpoint" in str(w.message)]
    assert len(msgs) == 1 and "image decode failed" in msgs[0]
    assert any("checkpoint" in w for w in t.profile.warnings)


def test_counters_warn_when_jax_preallocates_gpu_memory(monkeypatch):
    """Under JAX's preallocated pool a script counting one kernel did not finish in 45 s on an H100: a
    counting trace in a JAX process says so, with the fix, unless the pool is off."""
    import sys
    import types
    import warnings

    from fpgaprof.capture import process_env

    _counting_without_a_gpu(monkeypatch)
    monkeypatch.setitem(sys.modules, "jax", sys.modules.get("jax") or types.ModuleType("jax"))
    # As jaxlib's xla_client: off only for exactly "false", "False", "0"; "FALSE" keeps the pool;
    # the allocator name is lower-cased ("PLATFORM" is the platform allocator).
    for env, expect in (({}, True), ({"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}, True),
                        ({"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}, False),
                        ({"XLA_PYTHON_CLIENT_PREALLOCATE": "False"}, False),
                        ({"XLA_PYTHON_CLIENT_PREALLOCATE": "0"}, False),
                        ({"XLA_PYTHON_CLIENT_PREALLOCATE": "FALSE"}, True),
                        ({"XLA_PYTHON_CLIENT_PREALLOCATE": ""}, True),
                        ({"XLA_PYTHON_CLIENT_ALLOCATOR": "bfc"}, True),
                        ({"XLA_PYTHON_CLIENT_ALLOCATOR": "PLATFORM"}, False),
                        ({"XLA_PYTHON_CLIENT_ALLOCATOR": "platform"}, False)):
        monkeypatch.delenv("XLA_PYTHON_CLIENT_PREALLOCATE", raising=False)
        monkeypatch.delenv("XLA_PYTHON_CLIENT_ALLOCATOR", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert process_env.jax_preallocates() is expect
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with fpgaprof.trace(counters=True) as prof:
                pass
        said = [w for w in prof.warnings if "XLA_PYTHON_CLIENT_PREALLOCATE=false" in w]
        assert bool(said) is expect, (env, prof.warnings)
        assert any("XLA_PYTHON_CLIENT_PREALLOCATE=false" in str(w.message) for w in caught) is expect


def test_counter_checkpoints_when_a_region_encloses_the_trace(monkeypatch):
    """A region open before the trace starts (one around it, or one a notebook cell left
    open) must not stop the per-step checkpoints: a step ends when this thread's region depth
    comes back to what it was when counting started. Before, the depth had to reach 0, so no
    checkpoint came and kernels past the counter image's capacity got no counters."""
    import warnings

    recs = _counting_without_a_gpu(monkeypatch)
    monkeypatch.delitem(__import__("sys").modules, "jax", raising=False)  # no preallocation note
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with fpgaprof.region("epoch"):                     # around the trace
            with fpgaprof.trace(counters=True):
                for _ in range(3):
                    with fpgaprof.region("step"):
                        with fpgaprof.region("inner"):       # no checkpoint
                            pass
        left_open = fpgaprof.region("left open by an earlier cell")
        left_open.__enter__()
        try:
            with fpgaprof.trace(counters=True):
                for _ in range(2):
                    with fpgaprof.region("step"):
                        pass
        finally:
            left_open.__exit__(None, None, None)
    assert [r.checkpoints for r in recs] == [3, 2]
