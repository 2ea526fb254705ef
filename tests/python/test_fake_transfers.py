"""Every kind of copy, memset, allocation and release through capture -> converter -> analysis:
fpgaprof.trace() over the libcupti test double's "transfers" scenario (tests/fake_cupti/
fake_cupti.hpp has its table), then the same numbers again from the saved and loaded trace.

All expected values below are worked out by hand from that table (times are offsets in ns from
the scenario's base B, the start of its first copy; "Mi" = 2**20 bytes), never taken from
fpgaprof's output.

Copies (direction, host memory, sync/async, bytes, [start, end)):
  A  HtoD pinned   async 4000000  [0, 200000)
  E  DtoD          async 8000000  [100000, 150000)
  F  DtoD          async 8000000  [120000, 170000)      overlaps E by 30000
  C  DtoH pinned   async 3000000  [200000, 300000)
  Bp HtoD pageable sync  2000000  [300000, 500000)
  D  DtoH pageable sync  1000000  [600000, 700000)
  H  PtoP (MEMCPY2) async 16000000 [700000, 780000), device 0, src device 2, dst device 1
  G  HtoH pageable->pinned sync 500000 [800000, 900000)
  T  1200 x HtoD pinned async 4096 bytes [1000000 + 1000k, +500)
Kernel K [150000, 250000). Stream synchronize [2200000, 2300000).

Per direction:
  HtoD: count 1 + 1 + 1200 = 1202; bytes 4000000 + 2000000 + 1200*4096 (4915200) = 10915200;
        busy = 200000 + 200000 + 1200*500 = 1000000 (no overlaps) = duration sum;
        GB/s = 10915200 B / 1000000 ns = 10.9152; pinned 1201 (A, T), pageable 1 (Bp, 2000000 B);
        sync 1, async 1201; tiny (< 64 KiB = 65536 B) 1200; K overlaps A on [150000, 200000) = 50000.
        Link at 50 GB/s: 10.9152 / 50 = 21.8304 %.
  DtoH: count 2; bytes 4000000; busy 100000 + 100000 = 200000; 20 GB/s; pinned 1 (C),
        pageable 1 (D, 1000000 B); sync 1, async 1; tiny 0; K overlaps C on [200000, 250000) =
        50000. Link: 20 / 50 = 40 %.
  DtoD: count 2; bytes 16000000; busy = union [100000, 170000) = 70000, duration sum 100000;
        16000000 / 70000 = 228.5714... GB/s; neither pinned nor pageable (no host side); async 2;
        K overlaps on [150000, 170000) = 20000.
  PtoP: count 1; bytes 16000000; busy 80000; 200 GB/s; async 1; no kernel overlap.
  HtoH: count 1; bytes 500000; busy 100000; 5 GB/s; neither pinned nor pageable (a copy between
        host buffers crosses no link); sync 1.
  all:  count 1202 + 2 + 2 + 1 + 1 = 1208; bytes 10915200 + 4000000 + 16000000 + 16000000 +
        500000 = 47415200; busy = union: [0, 500000) (A, E, F, C, Bp touch or overlap) 500000 +
        [600000, 780000) (D, H) 180000 + [800000, 900000) 100000 + T 600000 = 1380000;
        duration sum 1000000 + 200000 + 100000 + 80000 + 100000 = 1480000; pinned 1202,
        pageable 2 (Bp, D: 3000000 B); sync 3, async 1205; tiny 1200; kernel overlap: K lies
        inside [0, 500000): 100000. Host wait: the stream synchronize, 100000 ns, 1 call.
Flags: pageable (2 copies, 3000000 B); tiny_transfers (1200 >= 1000 and 1200 >= 0.5 * 1208).

Memory (device, address offset from A, bytes, time):
  +64Mi dev0 A @10000; +16Mi dev0 A+0x10000000 @20000; -16Mi @50000; +32Mi dev0 A+0x20000000
  @60000; +8Mi dev1 A+0x30000000 @700000; -64Mi dev0 A @2500000; -8Mi dev1 @2550000;
  release of dev0 A+0x40000000 (8Mi, never allocated in the trace) @2600000.
  In use (all devices) after each matched event: 64, 80, 64, 96, 104, 40, 32 Mi (7 points; the
  unmatched release changes nothing). Peak 104 Mi = 109051904 B at 700000. Device 0: peak
  96 Mi = 100663296 at 60000, 32 Mi at the end; device 1: peak 8 Mi at 700000, 0 at the end.
  Allocations 4, releases 4 (one unmatched: 8 Mi = 8388608 B); never freed 1 (32 Mi).
  Largest: 64 Mi (alloc 10000, freed 2500000), 32 Mi (60000, never), 16 Mi (20000, 50000),
  8 Mi (dev 1, 700000, 2550000); all allocated by cuMemAlloc_v2 on thread 4200000.
"""
import json

import pytest

fake = pytest.importorskip("_fake_cupti")

import fpgaprof  # noqa: E402

MI = 1 << 20
NONE32 = 0xFFFFFFFF
LINK = {"link_bytes_per_s": 50e9, "link_source": "user"}

CODE = """
import time
with fpgaprof.trace(os.environ["TRACE_OUT"]) as prof:
    emit()
    time.sleep(0.05)
LINK = {"link_bytes_per_s": 50e9, "link_source": "user"}

def cols(table, names):
    c = table.columns(names)
    return {k: [x if isinstance(x, (str, int, float, bool)) or x is None else x.item()
                for x in c[k].tolist()] for k in names}

done({
    "transfer_report": prof.transfer_report(ceilings_override=LINK),
    "memory_report": prof.memory_report(),
    "copies": cols(prof.transfers, ["start_ns", "end_ns", "bytes", "copy_kind", "src_kind",
                                    "dst_kind", "is_async", "device_id", "src_device_id",
                                    "dst_device_id", "thread_id"]),
    "memsets": cols(prof.memsets, ["start_ns", "end_ns", "bytes", "value", "is_async"]),
    "allocations": len(prof.allocations),
    "warnings": prof.warnings,
})
"""


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    fake.need_fake()
    path = tmp_path_factory.mktemp("xfer") / "transfers.fpgaprof"
    live = fake.run_traced(CODE, scenario="transfers", extra_env={"TRACE_OUT": str(path)})
    # A libfake_cupti.so built before the scenario existed emits its default kernel loop.
    assert len(live["copies"]["bytes"]) == 1208, \
        f"{fake.fake_cupti_path()} does not know FAKE_CUPTI_SCENARIO=transfers: rebuild it"
    return live, fpgaprof.load(str(path))


def _plain(obj):
    """A report as the JSON the traced process printed (tuples -> lists, keys -> str)."""
    return json.loads(json.dumps(obj))


def _base(copies: dict) -> int:
    return min(copies["start_ns"])  # copy A starts at B


def check_transfers(tr: dict, base: int) -> None:
    trace = next(g for g in tr["groups"] if g["kind"] == "trace")
    dirs = trace["directions"]
    assert set(dirs) == {"HtoD", "DtoH", "DtoD", "PtoP", "HtoH"}
    want = {  # count, bytes, busy, duration sum, pinned, pageable, pageable B, sync, async, tiny, kernel overlap
        "HtoD": (1202, 10915200, 1000000, 1000000, 1201, 1, 2000000, 1, 1201, 1200, 50000),
        "DtoH": (2, 4000000, 200000, 200000, 1, 1, 1000000, 1, 1, 0, 50000),
        "DtoD": (2, 16000000, 70000, 100000, 0, 0, 0, 0, 2, 0, 20000),
        "PtoP": (1, 16000000, 80000, 80000, 0, 0, 0, 0, 1, 0, 0),
        "HtoH": (1, 500000, 100000, 100000, 0, 0, 0, 1, 0, 0, 0),
    }
    keys = ("count", "bytes", "busy_ns", "duration_sum_ns", "pinned_count", "pageable_count",
            "pageable_bytes", "sync_count", "async_count", "tiny_count", "kernel_overlap_ns")
    for d, w in want.items():
        assert tuple(dirs[d][k] for k in keys) == w, d
    gbps = {"HtoD": 10.9152, "DtoH": 20.0, "DtoD": 16000000 / 70000, "PtoP": 200.0, "HtoH": 5.0}
    for d, g in gbps.items():
        assert dirs[d]["achieved_bytes_per_s"] / 1e9 == pytest.approx(g, rel=1e-12), d
    assert dirs["HtoD"]["link_percent"] == pytest.approx(21.8304, rel=1e-12)
    assert dirs["DtoH"]["link_percent"] == pytest.approx(40.0, rel=1e-12)
    assert tr["link_bytes_per_s"] == 50e9 and tr["link_source"] == "user"
    assert tuple(trace["all"][k] for k in keys) == \
        (1208, 47415200, 1380000, 1480000, 1202, 2, 3000000, 3, 1205, 1200, 100000)
    assert (trace["host_wait_ns"], trace["sync_calls"]) == (100000, 1)
    flags = {f["kind"]: f for f in tr["flags"] if f["group_kind"] == "trace"}
    assert set(flags) == {"pageable", "tiny_transfers"}
    assert (flags["pageable"]["count"], flags["pageable"]["bytes"]) == (2, 3000000)
    assert flags["tiny_transfers"]["count"] == 1200
    assert "1200 of 1208 copies" in flags["tiny_transfers"]["message"]


def check_memory(mr: dict, base: int) -> None:
    assert (mr["peak_in_use_bytes"], mr["peak_ns"] - base) == (104 * MI, 700000)
    assert (mr["allocation_count"], mr["free_count"]) == (4, 4)
    assert (mr["unmatched_frees"], mr["unmatched_free_bytes"]) == (1, 8 * MI)
    assert (mr["never_freed_count"], mr["never_freed_bytes"]) == (1, 32 * MI)
    assert mr["reallocated_live"] == 0
    assert [t - base for t in mr["timeline_ns"]] == \
        [10000, 20000, 50000, 60000, 700000, 2500000, 2550000]
    assert mr["timeline_in_use_bytes"] == [x * MI for x in (64, 80, 64, 96, 104, 40, 32)]
    assert mr["timeline_device_id"] == [0, 0, 0, 0, 1, 0, 1]
    assert mr["timeline_device_in_use_bytes"] == [x * MI for x in (64, 80, 64, 96, 8, 32, 0)]
    devs = {d["device_id"]: d for d in mr["devices"]}
    assert (devs[0]["peak_in_use_bytes"], devs[0]["peak_ns"] - base, devs[0]["final_in_use_bytes"]) == \
        (96 * MI, 60000, 32 * MI)
    assert (devs[1]["peak_in_use_bytes"], devs[1]["peak_ns"] - base, devs[1]["final_in_use_bytes"]) == \
        (8 * MI, 700000, 0)
    largest = [(b["bytes"], b["device_id"], b["alloc_ns"] - base,
                None if b["free_ns"] is None else b["free_ns"] - base) for b in mr["largest"]]
    assert largest == [(64 * MI, 0, 10000, 2500000), (32 * MI, 0, 60000, None),
                       (16 * MI, 0, 20000, 50000), (8 * MI, 1, 700000, 2550000)]
    addresses = [b["address"] for b in mr["largest"]]
    a = addresses[0]
    assert addresses == [a, a + 0x20000000, a + 0x10000000, a + 0x30000000]
    assert {(b["api_call"], b["thread_id"]) for b in mr["largest"]} == {("cuMemAlloc_v2", 4200000)}


def test_live_trace_numbers(traced):
    live, _ = traced
    base = _base(live["copies"])
    check_transfers(live["transfer_report"], base)
    check_memory(live["memory_report"], base)
    assert live["allocations"] == 8  # 4 allocations + 4 releases
    # Every record found its API call: no "have no matching API record" warning.
    assert not [w for w in live["warnings"] if "no matching API record" in w], live["warnings"]


def test_copy_records(traced):
    live, _ = traced
    c = live["copies"]
    base = _base(c)
    rows = sorted(zip(*(c[k] for k in ("start_ns", "end_ns", "bytes", "copy_kind", "src_kind",
                                         "dst_kind", "is_async", "device_id", "src_device_id",
                                         "dst_device_id", "thread_id"))))
    assert len(rows) == 1208
    big = [(s - base, e - base, *rest) for s, e, *rest in rows if rest[0] > 4096]
    n = NONE32
    assert big == [
        (0, 200000, 4000000, "HtoD", "pinned", "device", True, 0, n, n, 4200000),
        (100000, 150000, 8000000, "DtoD", "device", "device", True, 0, n, n, 4200000),
        (120000, 170000, 8000000, "DtoD", "device", "device", True, 0, n, n, 4200000),
        (200000, 300000, 3000000, "DtoH", "device", "pinned", True, 0, n, n, 4200000),
        (300000, 500000, 2000000, "HtoD", "pageable", "device", False, 0, n, n, 4200000),
        (600000, 700000, 1000000, "DtoH", "device", "pageable", False, 0, n, n, 4200000),
        # the MEMCPY2 record: its srcDeviceId / dstDeviceId land in the owned record
        (700000, 780000, 16000000, "PtoP", "device", "device", True, 0, 2, 1, 4200000),
        (800000, 900000, 500000, "HtoH", "pageable", "pinned", False, 0, n, n, 4200000),
    ]
    tiny = [(s - base, e - s, *rest) for s, e, *rest in rows if rest[0] == 4096]
    assert tiny == [(1000000 + 1000 * k, 500, 4096, "HtoD", "pinned", "device", True, 0, n, n, 4200000)
                    for k in range(1200)]
    m = live["memsets"]
    assert sorted(zip([s - base for s in m["start_ns"]], [e - base for e in m["end_ns"]],
                      m["bytes"], m["value"], m["is_async"])) == \
        [(900000, 950000, MI, 0, True), (950000, 960000, 4096, 0xFFFFFFFF, False)]


def test_saved_trace_gives_the_same_numbers(traced):
    live, loaded = traced
    tr = _plain(loaded.transfer_report(ceilings_override=LINK))
    mr = _plain(loaded.memory_report())
    assert tr == live["transfer_report"]
    assert mr == live["memory_report"]
    # and they are the hand-worked numbers, not just equal to each other
    t = loaded.transfers.columns(["start_ns", "copy_kind", "src_device_id", "dst_device_id"])
    base = int(t["start_ns"].min())
    assert base == _base(live["copies"])
    check_transfers(tr, base)
    check_memory(mr, base)
    ptop = [(int(s), int(d)) for k, s, d in zip(t["copy_kind"], t["src_device_id"], t["dst_device_id"])
            if k == "PtoP"]
    assert ptop == [(2, 1)]


def test_summary_json_reports_them(traced, tmp_path):
    """summary.json (fpgaprof report) shows the same numbers in its units (s, GB/s)."""
    from fpgaprof import report

    _, loaded = traced
    paths = report.write_all(loaded, tmp_path / "out")
    with open(paths["summary"], encoding="utf-8") as f:
        s = json.load(f)
    t = s["transfers"]
    assert (t["count"], t["bytes"], t["sync_calls"]) == (1208, 47415200, 1)
    assert t["busy_s"] == pytest.approx(1380000e-9, rel=1e-12)
    assert t["host_wait_s"] == pytest.approx(100000e-9, rel=1e-12)
    rows = {r["direction"]: r for r in t["by_direction"]}
    keys = ("count", "bytes", "pinned_count", "pageable_count", "sync_count", "async_count",
            "tiny_count")
    assert {d: tuple(r[k] for k in keys) for d, r in rows.items()} == {
        "HtoD": (1202, 10915200, 1201, 1, 1, 1201, 1200),
        "DtoH": (2, 4000000, 1, 1, 1, 1, 0),
        "DtoD": (2, 16000000, 0, 0, 0, 2, 0),
        "PtoP": (1, 16000000, 0, 0, 0, 1, 0),
        "HtoH": (1, 500000, 0, 0, 1, 0, 0),  # between host buffers: neither pinned nor pageable
    }
    gbps = {"HtoD": 10.9152, "DtoH": 20.0, "DtoD": 16000000 / 70000, "PtoP": 200.0, "HtoH": 5.0}
    assert {d: r["gbps"] for d, r in rows.items()} == pytest.approx(gbps, rel=1e-12)
    # ordered by busy time: HtoD 1 ms, DtoH 0.2 ms, HtoH 0.1 ms, PtoP 80 us, DtoD 70 us
    assert [r["direction"] for r in t["by_direction"]] == ["HtoD", "DtoH", "HtoH", "PtoP", "DtoD"]
    m = s["memory"]
    assert (m["peak_bytes"], m["end_bytes"], m["allocation_count"], m["free_count"]) == \
        (104 * MI, 32 * MI, 4, 4)
    assert (m["unmatched_frees"], m["never_freed_count"], m["timeline_points"]) == (1, 1, 7)
    assert [(b["bytes"], b["device_id"], b["free_s"] is None) for b in m["largest"]] == \
        [(64 * MI, 0, False), (32 * MI, 0, True), (16 * MI, 0, False), (8 * MI, 1, False)]
    held = m["largest"][0]
    assert held["free_s"] - held["alloc_s"] == pytest.approx(2490000e-9, rel=1e-9)
    assert s["totals"]["memset_count"] == 2
