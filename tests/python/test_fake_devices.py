"""Several GPUs in one process, through capture -> correlate -> analysis -> summary.json ->
report.html: fpgaprof.trace() over the libcupti test double's "devices" scenario
(tests/fake_cupti/fake_cupti.hpp has its table), with one host thread per device as MBIRJAX's
run_per_device, then the same numbers from the saved and loaded trace.

The traced program runs the table twice:
  phase 1 (offset 0): the main thread opens "sweep"; two threading.Threads, one per device,
    each open "gpu<d>" > "step" and write device d's work inside it.
  phase 2 (offset 2,000,000 ns): the main thread opens "recon"; a 2-worker ThreadPoolExecutor
    writes device 0's and device 1's work from pool threads that open no region (MBIRJAX's
    case: the user's region is on the main thread, the launches on the pool's threads).

Expected values are worked out by hand from the table (GPU times in ns from the base B, the
first kernel's start; MiB = 2**20 B), never taken from fpgaprof's output:

  device 0, per phase: kernels [0, 400000) fusion.0 + [400000, 700000) fusion.1 = 700000 ns;
    HtoD 8000000 B [700000, 900000) = 40 GB/s, DtoH 1000000 B [900000, 1000000) = 10 GB/s;
    busy = [0, 1000000) = 1000000.
  device 1, per phase: kernels [0, 200000) fusion.0 + [300000, 400000) fusion.1 = 300000 ns;
    memset 1 MiB [200000, 250000); HtoD 2000000 B [400000, 500000) = 20 GB/s;
    busy = [0, 250000) + [300000, 500000) = 450000.
  Both phases ([0, 1e6) and [2e6, 3e6) apart):
    device 0: 4 kernels, 1400000 ns; 4 copies, 18000000 B, copy busy 600000; busy 2000000;
      HtoD 2 copies 16000000 B busy 400000 = 40 GB/s = 80 % of a 50 GB/s link;
      DtoH 2 copies 2000000 B busy 200000 = 10 GB/s = 20 %.
    device 1: 4 kernels, 600000 ns; 2 copies 4000000 B busy 200000 = 20 GB/s = 40 %;
      2 memsets (2 MiB); busy 900000.
    Load balance: busy 2000000 and 900000, mean 1450000: busiest/mean = 1.37931; device 0 the
      busiest, device 1 the least busy; spread 1100000 = 55 % of the busiest.
    Memory: device 0 peak 64 MiB at B+10, device 1 32 + 16 = 48 MiB at B+30; both 0 at the end.
  Totals: 8 kernels, 2000000 ns summed; GPU busy (any device) [0, 1e6) + [2e6, 3e6) = 2e6 ns;
    6 copies, 22000000 B.
  Regions (GPU = summed kernel, copy and memset durations launched inside, nested included):
    "gpu0" = "gpu0 > step" = 700000 + 300000 = 1000000; "gpu1" = "gpu1 > step" = 300000 +
    50000 + 100000 = 450000; "sweep" 0 (its thread launched nothing and the device threads
    opened regions of their own: regions nest per thread); "recon" = all of phase 2 (by the
    time fallback for threads without regions) = 1000000 + 450000 = 1450000.
  Ops (thunk ranges on each device thread): fusion.0 = (400000 + 200000) x 2 = 1200000 ns in 4
    kernels; fusion.1 = (300000 + 100000) x 2 = 800000 ns in 4 kernels.
"""
import json

import pytest

fake = pytest.importorskip("_fake_cupti")

import fpgaprof  # noqa: E402

MI = 1 << 20
LINK = {"link_bytes_per_s": 50e9, "link_source": "user"}

CODE = """
import threading, time
from concurrent.futures import ThreadPoolExecutor
work = _fake.fake_cupti_device_work
work.argtypes = [ctypes.c_uint32, ctypes.c_uint64]
device_threads = {}

def on_device(d):
    device_threads[d] = threading.get_native_id()
    with fpgaprof.region(f"gpu{d}"):
        with fpgaprof.region("step"):
            work(d, 0)

with fpgaprof.trace(os.environ["TRACE_OUT"]) as prof:
    emit()
    with fpgaprof.region("sweep"):
        ts = [threading.Thread(target=on_device, args=(d,)) for d in (0, 1)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    with fpgaprof.region("recon"):
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda d: work(d, 2000000), (0, 1)))
    time.sleep(0.02)
LINK = {"link_bytes_per_s": 50e9, "link_source": "user"}
done({
    "devices": prof.device_report(ceilings_override=LINK),
    "device_threads": {str(k): v for k, v in device_threads.items()},
    "kernel_start_ns": min(prof.kernels.columns(["start_ns"])["start_ns"].tolist()),
    "warnings": prof.warnings,
})
"""


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    fake.need_fake()
    path = tmp_path_factory.mktemp("devices") / "devices.fpgaprof"
    live = fake.run_traced(CODE, scenario="devices", extra_env={"TRACE_OUT": str(path)})
    loaded = fpgaprof.load(str(path))
    assert len(loaded.kernels) == 8, \
        f"{fake.fake_cupti_path()} does not know FAKE_CUPTI_SCENARIO=devices: rebuild it"
    return live, loaded


def _plain(obj):
    return json.loads(json.dumps(obj))


def check_device_report(dr: dict, base: int, threads: dict) -> None:
    """The analysis' devices dict (ns, bytes) against the hand-worked numbers."""
    rows = {r["device_id"]: r for r in dr["rows"]}
    assert sorted(rows) == [0, 1]
    a, b = rows[0], rows[1]
    assert (a["name"], b["name"]) == ("Fake H100", "Fake H100")
    assert a["has_record"] and b["has_record"]
    keys = ("kernel_count", "kernel_time_ns", "kernel_busy_ns", "copy_count", "copy_bytes",
            "copy_busy_ns", "memset_count", "memset_bytes", "busy_ns")
    assert tuple(a[k] for k in keys) == (4, 1400000, 1400000, 4, 18000000, 600000, 0, 0, 2000000)
    assert tuple(b[k] for k in keys) == (4, 600000, 600000, 2, 4000000, 200000, 2, 2 * MI, 900000)
    assert (a["first_start_ns"] - base, a["last_end_ns"] - base) == (0, 3000000)
    assert (b["first_start_ns"] - base, b["last_end_ns"] - base) == (0, 2500000)
    wall = dr["wall_ns"]
    assert a["idle_ns"] == wall - 2000000 and b["idle_ns"] == wall - 900000
    assert a["busy_fraction"] == pytest.approx(2000000 / wall, rel=1e-12)
    ah, ad, bh = a["directions"]["HtoD"], a["directions"]["DtoH"], b["directions"]["HtoD"]
    assert set(a["directions"]) == {"HtoD", "DtoH"} and set(b["directions"]) == {"HtoD"}
    assert (ah["count"], ah["bytes"], ah["busy_ns"]) == (2, 16000000, 400000)
    assert (ad["count"], ad["bytes"], ad["busy_ns"]) == (2, 2000000, 200000)
    assert (bh["count"], bh["bytes"], bh["busy_ns"]) == (2, 4000000, 200000)
    assert ah["achieved_bytes_per_s"] == pytest.approx(40e9, rel=1e-12)
    assert [x["link_percent"] for x in (ah, ad, bh)] == pytest.approx([80.0, 20.0, 40.0], rel=1e-12)
    assert ah["link_bytes_per_s"] == 50e9
    assert (a["memory"]["peak_in_use_bytes"], a["memory"]["peak_ns"] - base,
            a["memory"]["final_in_use_bytes"]) == (64 * MI, 10, 0)
    assert (b["memory"]["peak_in_use_bytes"], b["memory"]["peak_ns"] - base,
            b["memory"]["final_in_use_bytes"]) == (48 * MI, 30, 0)
    # Hopper table ceilings for both (132 SMs at 1.98 GHz, 256 fp32 FLOPs per SM per cycle)
    for r in (a, b):
        assert r["ceilings"]["peak_flops_per_s"]["fp32"] == pytest.approx(132 * 1.98e9 * 256)
    assert a["ceilings"]["link_bytes_per_s"] == 50e9  # the given peak replaces every device's
    # Phase 1's device threads launched 2 kernels each on their own device; phase 2's pool
    # threads the other 2 (one pool thread may have served both devices).
    t0 = {t["thread_id"]: t for t in a["threads"]}
    t1 = {t["thread_id"]: t for t in b["threads"]}
    assert t0[threads["0"]]["kernel_count"] == 2 and t0[threads["0"]]["kernel_time_ns"] == 700000
    assert t1[threads["1"]]["kernel_count"] == 2 and t1[threads["1"]]["kernel_time_ns"] == 300000
    assert threads["1"] not in t0 and threads["0"] not in t1
    assert sum(t["kernel_count"] for t in a["threads"]) == 4
    assert sum(t["kernel_count"] for t in b["threads"]) == 4
    bal = dr["balance"]
    assert (bal["device_count"], bal["active_devices"]) == (2, 2)
    assert (bal["max_busy_ns"], bal["min_busy_ns"], bal["spread_ns"]) == (2000000, 900000, 1100000)
    assert bal["mean_busy_ns"] == pytest.approx(1450000)
    assert bal["imbalance"] == pytest.approx(2000000 / 1450000, rel=1e-12)
    assert (bal["slowest_device"], bal["least_busy_device"]) == (0, 1)
    assert bal["spread_fraction"] == pytest.approx(0.55, rel=1e-12)


def test_live_device_report(traced):
    live, _ = traced
    check_device_report(live["devices"], live["kernel_start_ns"], live["device_threads"])
    assert not [w for w in live["warnings"] if "no matching API record" in w], live["warnings"]


def test_saved_trace_gives_the_same_device_report(traced):
    live, loaded = traced
    dr = _plain(loaded.device_report(ceilings_override=LINK))
    assert dr == live["devices"]
    base = int(loaded.kernels.columns(["start_ns"])["start_ns"].min())
    check_device_report(dr, base, live["device_threads"])


def test_regions_and_ops_across_device_threads(traced):
    _, loaded = traced
    kr = loaded.kernels.columns(["device_id", "region_index", "thread_id"])
    regions = loaded.regions.columns(["name", "thread_id"])
    names = [str(n) for n in regions["name"]]
    # every kernel is in a region: the device thread's own "step" (phase 1) or, launched from a
    # pool thread without regions, the main thread's "recon" (phase 2)
    got = sorted((int(d), names[int(r)]) for d, r in zip(kr["device_id"], kr["region_index"]))
    assert got == [(0, "recon"), (0, "recon"), (0, "step"), (0, "step"),
                   (1, "recon"), (1, "recon"), (1, "step"), (1, "step")]
    rows = {r["region"]: r for r in loaded.roofline(by="region")}
    assert (rows["gpu0 > step"]["kernel_count"], rows["gpu0 > step"]["time_ns"]) == (2, 700000)
    assert (rows["gpu1 > step"]["kernel_count"], rows["gpu1 > step"]["time_ns"]) == (2, 300000)
    assert (rows["recon"]["kernel_count"], rows["recon"]["time_ns"]) == (4, 1000000)
    assert rows["sweep"]["kernel_count"] == 0
    tr = loaded.transfer_report(ceilings_override=LINK)
    by = {g["region"]: g for g in tr["groups"] if g["kind"] == "region_path"}
    # phase 1's copies in each device thread's path; phase 2's three copies in "recon"
    assert by["gpu0 > step"]["directions"]["HtoD"]["bytes"] == 8000000
    assert by["gpu1"]["directions"]["HtoD"]["bytes"] == 2000000
    assert (by["recon"]["all"]["count"], by["recon"]["all"]["bytes"]) == (3, 11000000)
    ops = {r.hlo_op: r for r in loaded.ops}
    assert set(ops) == {"fusion.0", "fusion.1"}
    assert (ops["fusion.0"].kernel_count, ops["fusion.0"].total_ns) == (4, 1200000)
    assert (ops["fusion.1"].kernel_count, ops["fusion.1"].total_ns) == (4, 800000)
    # one execution per thunk range: 2 devices x 2 phases
    assert (ops["fusion.0"].executions, ops["fusion.1"].executions) == (4, 4)


def test_summary_html_and_digest(traced, tmp_path, monkeypatch):
    """summary.json's by_device and report.html's Devices section show the same numbers."""
    import pathlib

    from fpgaprof import report
    from fpgaprof.report.digest import digest

    from fpgaprof.api import roofline as api_roofline

    jsonschema = pytest.importorskip("jsonschema")
    _, loaded = traced
    # the host link's peak as `fpgaprof calibrate` would give it (the fake has no PCIe link);
    # a fresh Profile: none of the other tests' analyses cached on it
    monkeypatch.setattr(api_roofline, "ceilings", lambda prof, device=0, use_measured=True: dict(LINK))
    prof = fpgaprof.load(loaded.path)
    paths = report.write_all(prof, tmp_path / "out")
    with open(paths["summary"], encoding="utf-8") as f:
        s = json.load(f)
    schema_path = pathlib.Path(__file__).resolve().parents[2] / "docs" / "summary.schema.json"
    jsonschema.Draft202012Validator(json.loads(schema_path.read_text())).validate(s)
    t = s["totals"]
    assert (t["kernel_count"], t["transfer_count"], t["transfer_bytes"]) == (8, 6, 22000000)
    assert t["kernel_time_s"] == pytest.approx(2e-3, rel=1e-12)
    assert t["gpu_busy_s"] == pytest.approx(2e-3, rel=1e-12)
    d = s["by_device"]
    assert d["available"] and d["count"] == 2
    a, b = d["items"]
    assert (a["device_id"], b["device_id"]) == (0, 1)
    assert (a["busy_s"], b["busy_s"]) == pytest.approx((2e-3, 0.9e-3), rel=1e-12)
    assert a["idle_s"] == pytest.approx(d["wall_time_s"] - 2e-3, rel=1e-9)
    assert (a["kernel_time_s"], b["kernel_time_s"]) == pytest.approx((1.4e-3, 0.6e-3), rel=1e-12)
    assert [(x["direction"], x["gbps"], x["link_percent"]) for x in a["by_direction"]] == \
        [("HtoD", pytest.approx(40.0), pytest.approx(80.0)),
         ("DtoH", pytest.approx(10.0), pytest.approx(20.0))]
    assert (a["memory_peak_bytes"], b["memory_peak_bytes"]) == (64 * MI, 48 * MI)
    bal = d["balance"]
    assert bal["imbalance"] == pytest.approx(2 / 1.45, rel=1e-12)
    assert (bal["slowest_device"], bal["least_busy_device"]) == (0, 1)
    assert bal["spread_s"] == pytest.approx(1.1e-3, rel=1e-12)
    assert bal["text"].startswith("load balance over 2 devices: busiest/mean busy 1.38 ")
    assert "device 0 the busiest (2.00 ms)" in bal["text"]
    assert "spread 1.10 ms (55.0 % of the busiest)" in bal["text"]
    regions = {r["path"]: r for r in s["regions"]["items"]}
    assert regions["gpu0 > step"]["gpu_s"] == pytest.approx(1e-3, rel=1e-12)
    assert regions["gpu1"]["gpu_s"] == pytest.approx(0.45e-3, rel=1e-12)
    assert regions["sweep"]["gpu_s"] == 0
    assert regions["recon"]["gpu_s"] == pytest.approx(1.45e-3, rel=1e-12)

    html = pathlib.Path(paths["html"]).read_text(encoding="utf-8")
    sec = html[html.index('id="sec-devices"'):html.index('id="sec-regions"')]
    assert "<th>device 0</th><th>device 1</th>" in sec
    assert "busiest/mean busy 1.38" in sec
    assert "2 · 16.00 MB · 40 GB/s · 80.0 % of link" in sec  # device 0's HtoD copies
    assert "2 · 4.00 MB · 20 GB/s · 40.0 % of link" in sec   # device 1's
    assert "2.00 ms (" in sec and "900.0 µs (" in sec
    assert '<a href="#sec-devices">Devices</a>' in html

    text = digest(s)
    line = next(x for x in text.splitlines() if "load balance" in x)
    assert line.startswith("  load balance over 2 devices: busiest/mean busy 1.38")
    assert "busy share of wall: device 0 " in line


def test_one_device_shows_nothing_new(tmp_path):
    """The default kernels scenario (one device, one thread): by_device has one item, and
    report.html and the digest say nothing about devices or their balance."""
    from fpgaprof import report
    from fpgaprof.report.digest import digest

    fake.need_fake()
    path = tmp_path / "one.fpgaprof"
    fake.run_traced("""
with fpgaprof.trace(os.environ["TRACE_OUT"]) as prof:
    emit()
done({})
""", kernels=8, extra_env={"TRACE_OUT": str(path)})
    prof = fpgaprof.load(str(path))
    paths = report.write_all(prof, tmp_path / "out")
    with open(paths["summary"], encoding="utf-8") as f:
        s = json.load(f)
    assert s["by_device"]["count"] == 1
    item = s["by_device"]["items"][0]
    assert (item["device_id"], item["kernel_count"]) == (0, 8)
    assert s["by_device"]["balance"]["imbalance"] == pytest.approx(1.0)
    html = open(paths["html"], encoding="utf-8").read()
    assert "sec-devices" not in html
    assert "load balance" not in digest(s)
    assert "Devices:" not in prof.summary()
