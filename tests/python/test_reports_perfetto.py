"""timeline.json (Chrome/Perfetto trace-event JSON).

Two checks: (1) Perfetto's own trace processor loads it and its slice/flow counts equal the
record counts — only where a trace_processor_shell binary is present (the perfetto package
downloads it on first use, which an offline machine cannot: set FPGAPROF_TRACE_PROCESSOR to a
local binary); (2) always: an independent reading of the JSON against the trace-event format
rules the Perfetto JSON importer applies (X slices need ts+dur, slices on one thread must nest,
v2 flows pair one flow_out with flow_in by bind_id), with counts and times worked out by hand
from _reports_fixtures.py.
"""
import glob
import json
import os
from collections import Counter, defaultdict
from decimal import Decimal

import _reports_fixtures as F
import pytest
from fpgaprof import report
from fpgaprof.report import timeline as timeline_json


@pytest.fixture(scope="module")
def timeline(tmp_path_factory):
    path = tmp_path_factory.mktemp("tl") / "timeline.json"
    counts = report.write_timeline(F.SyntheticProfile(), path)
    with open(path, encoding="utf-8") as f:
        # Decimal keeps the exact microsecond text (three decimals = whole ns)
        doc = json.load(f, parse_float=Decimal)
    return path, counts, doc


def slices(doc):
    return [e for e in doc["traceEvents"] if e["ph"] in ("X", "i")]


def test_slice_counts_equal_record_counts(timeline):
    _, counts, doc = timeline
    by_cat = Counter(e["cat"] for e in slices(doc))
    prof = F.SyntheticProfile()
    # Kineto's categories: the fixture's API calls are all driver calls
    expected = {"kernel": len(prof.kernels), "gpu_memcpy": len(prof.transfers),
                "gpu_memset": len(prof.memsets), "cuda_driver": len(prof.api_calls),
                "nvtx": len(prof.markers), "region": len(prof.regions)}
    assert dict(by_cat) == expected == {"kernel": 4, "gpu_memcpy": 2, "gpu_memset": 1,
                                        "cuda_driver": 7, "nvtx": 2, "region": 3}
    assert {k: v for k, v in counts.items() if k != "flow"} == {
        "kernel": 4, "memcpy": 2, "memset": 1, "cuda_api": 7, "nvtx": 2, "region": 3}
    # every activity has its API call: 7 flows
    assert counts["flow"] == 7


def test_event_format_rules(timeline):
    _, _, doc = timeline
    assert doc["displayTimeUnit"] == "ns"
    for e in doc["traceEvents"]:
        assert e["ph"] in ("X", "i", "M")
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert 0 <= e["pid"] < 2**32 and 0 <= e["tid"] < 2**32
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name") and e["args"]["name"]
            continue
        assert isinstance(e["name"], str) and e["name"]
        assert e["ts"] >= 0
        if e["ph"] == "X":
            assert e["dur"] >= 0
        else:
            assert e["s"] == "t"
    # slices on one thread must nest (no partial overlap), as the JSON importer requires
    per_track = defaultdict(list)
    for e in slices(doc):
        if e["ph"] == "X":
            per_track[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    for track, evs in per_track.items():
        evs.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, end, name in evs:
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack:
                assert end <= stack[-1][1], f"{name} overlaps {stack[-1][2]} on {track}"
            stack.append((s, end, name))


def test_tracks_and_names(timeline):
    _, _, doc = timeline
    meta = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    procs = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta
               if e["name"] == "thread_name"}
    assert procs == {timeline_json.GPU_PID_BASE: "GPU 0: NVIDIA H100 80GB HBM3 <test>", timeline_json.HOST_PID: "host"}
    # two streams (7, 8) on GPU 0 and one host thread (101)
    assert sorted(v for (pid, _), v in threads.items() if pid == timeline_json.GPU_PID_BASE) == \
        ["stream 7", "stream 8"]
    assert threads[(timeline_json.HOST_PID, 101)] == "thread 101"
    kernel_tracks = {(e["pid"], e["tid"]) for e in slices(doc) if e["cat"] == "kernel"}
    assert len(kernel_tracks) == 2


def test_times_and_args_exact(timeline):
    _, _, doc = timeline
    ev = {(e["cat"], e["name"], e["ts"]): e for e in slices(doc)}
    # t0 is the trace start T0; gemm<float> runs [2.0, 3.0] ms → ts 2000.000 µs, dur 1000.000
    gemm = ev[("kernel", "gemm<float>", Decimal("2000.000"))]
    assert gemm["dur"] == Decimal("1000.000")
    assert gemm["args"]["grid"] == [64, 1, 1] and gemm["args"]["block"] == [256, 1, 1]
    assert gemm["args"]["shared_bytes"] == 16384
    # its launch call starts 5 µs before it
    api = [e for e in slices(doc) if e["cat"] == "cuda_driver" and e["args"]["correlation"] == 2]
    assert api[0]["ts"] == Decimal("1995.000") and api[0]["dur"] == Decimal("4.000")
    # HtoD: 1e6 B in 100 µs = 10 GB/s
    htod = ev[("gpu_memcpy", "Memcpy HtoD", Decimal("1000.000"))]
    assert htod["args"]["bytes"] == 1_000_000 and htod["args"]["memory bandwidth (GB/s)"] == Decimal("10.0")
    assert htod["args"]["src_kind"] == "pageable"
    inst = [e for e in slices(doc) if e["ph"] == "i"]
    assert len(inst) == 1 and inst[0]["name"] == "hello" and inst[0]["ts"] == Decimal("8000.000")
    assert inst[0]["args"]["domain"] == "user"


def test_flows_bind_launch_to_activity(timeline):
    _, _, doc = timeline
    outs = defaultdict(list)
    ins = defaultdict(list)
    for e in slices(doc):
        if e.get("flow_out"):
            outs[e["bind_id"]].append(e)
        if e.get("flow_in"):
            ins[e["bind_id"]].append(e)
    assert set(outs) == set(ins) == set(range(1, 8))
    for cid in outs:
        assert len(outs[cid]) == 1 and len(ins[cid]) == 1
        assert outs[cid][0]["cat"] == "cuda_driver"
        assert outs[cid][0]["pid"] == timeline_json.HOST_PID
        assert ins[cid][0]["pid"] == timeline_json.GPU_PID_BASE
        assert ins[cid][0]["args"]["correlation"] == cid
        assert outs[cid][0]["ts"] <= ins[cid][0]["ts"]  # launched before it ran


def test_user_strings_are_valid_json(tmp_path):
    prof = F.SyntheticProfile()
    import numpy as np
    c = prof.kernels.columns()
    c["name"] = np.array(['quote"back\\slash', "nl\nx", "ünï</script>", "\x01ctl"], dtype=object)
    prof.kernels = F.Table(**c)
    path = tmp_path / "t.json"
    report.write_timeline(prof, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    names = {e["name"] for e in doc["traceEvents"] if e.get("cat") == "kernel"}
    assert names == {'quote"back\\slash', "nl\nx", "ünï</script>", "\x01ctl"}


def test_empty_profile(tmp_path):
    prof = F.SyntheticProfile(with_gpu=False)
    path = tmp_path / "t.json"
    counts = report.write_timeline(prof, path)
    doc = json.loads(path.read_text())
    assert counts == {"region": 3, "flow": 0}
    assert len([e for e in doc["traceEvents"] if e["ph"] == "X"]) == 3


def _trace_processor_shell():
    p = os.environ.get("FPGAPROF_TRACE_PROCESSOR")
    if p and os.path.isfile(p):
        return p
    cached = glob.glob(os.path.expanduser(
        "~/.local/share/perfetto/prebuilts/trace_processor_shell*"))
    return next((c for c in cached if os.access(c, os.X_OK) and not c.endswith(".tmp")), None)


def test_perfetto_trace_processor_counts(timeline):
    tp_mod = pytest.importorskip("perfetto.trace_processor")
    shell = _trace_processor_shell()
    if shell is None:
        pytest.skip("no trace_processor_shell binary: the perfetto package downloads it on first "
                    "use (no network here); set FPGAPROF_TRACE_PROCESSOR=/path/to/binary")
    path, _, _ = timeline
    tp = tp_mod.TraceProcessor(trace=str(path),
                               config=tp_mod.TraceProcessorConfig(bin_path=shell))
    try:
        rows = tp.query("select category as cat, count(*) as n from slice group by category")
        got = {r.cat: r.n for r in rows}
        assert got == {"kernel": 4, "gpu_memcpy": 2, "gpu_memset": 1, "cuda_driver": 7,
                       "nvtx": 2, "region": 3}
        flows = next(iter(tp.query("select count(*) as n from flow"))).n
        assert flows == 7
    finally:
        tp.close()


def test_assign_lanes_by_hand():
    # track a: [0,10] lane 0; [2,5] nests in it → lane 0; [4,12] partly overlaps [0,10] → lane 1;
    # [11,13] starts after [0,10] and [2,5] ended → lane 0. Track b: its own lane 0.
    keys = ["a", "a", "a", "a", "b"]
    starts = [0, 2, 4, 11, 3]
    ends = [10, 5, 12, 13, 4]
    assert timeline_json.assign_lanes(keys, starts, ends) == [0, 0, 1, 0, 0]
    # equal starts: the longer one is the parent, the shorter nests (same lane)
    assert timeline_json.assign_lanes(["x", "x"], [5, 5], [6, 9]) == [0, 0]


def test_overlapping_kernels_get_an_overlap_track(tmp_path):
    prof = F.SyntheticProfile()
    c = prof.kernels.columns()
    # fusion_a #1 [1.1,1.6] and gemm [2.0,3.0] on stream 7: move gemm to start at 1.5 ms so
    # that it partly overlaps fusion_a (programmatic dependent launch does this on Hopper)
    c["start_ns"] = c["start_ns"].copy()
    c["start_ns"][1] = F.ms(1.5)
    prof.kernels = F.Table(**c)
    path = tmp_path / "t.json"
    report.write_timeline(prof, path)
    doc = json.loads(path.read_text())
    names = {e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == timeline_json.GPU_PID_BASE}
    assert names == {"stream 7", "stream 7 (overlap 1)", "stream 8"}
    gemm = [e for e in doc["traceEvents"] if e.get("name") == "gemm<float>"][0]
    assert gemm["tid"] == timeline_json.gpu_tid(0, 7, 1)
