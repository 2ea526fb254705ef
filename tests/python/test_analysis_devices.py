"""prof.device_report() on stores built from lists: one row per GPU and the load balance,
through the bindings (analyze()["devices"]), summary.json's by_device and report.html's Devices
section. Every expected number is worked out by hand in the comments (the same trace as
tests/cpp/test_analysis_devices.cpp, plus an idle third GPU)."""
import pytest

from fpgaprof import roofline

from fpgaprof.base.core import core
from fpgaprof.analysis import sections
from fpgaprof.views import sections as section_views
from _store_builder import store_from_lists

# The fictional sm_80 of the C++ fixture: 100 SMs at 1 GHz -> fp32 100 x 128 x 1e9 = 12.8e12
# FLOP/s; 1 GHz memory on a 4096-bit bus -> DRAM 2 x 1e9 x 4096 / 8 = 1.024e12 B/s.
SM80 = {"cc_major": 8, "sm_count": 100, "core_clock_khz": 1_000_000,
        "memory_clock_khz": 1_000_000, "memory_bus_width_bits": 4096}


def _store():
    """Wall [0, 10000) ns.
    device 0 "<b>GPU&0</b>", PCIe gen2 x16 = 16 x 5e9 x 8/10 / 8 = 8e9 B/s, thread 100:
      kernels [1000,3000) [2000,4000) [6000,7000): summed 5000, union 4000;
      HtoD 8000 B [0,1500), DtoH 4000 B [7000,7500), memset [3500,4500);
      busy [0,4500) + [6000,7500) = 6000; allocations +1000 @100, +3000 @200, -1000 @300:
      peak 4000 @200, 3000 at the end.
    device 1 "GPU 1", 50 SMs (fp32 6.4e12), PCIe gen1 x16 = 4e9 B/s, threads 200 and 300:
      kernels [1000,2000) [2000,2500) (200) [5000,5500) (300): summed 2000;
      HtoD 3000 B [500,1500), DtoD 1000 B [5200,5300); busy [500,2500) + [5000,5500) = 2500;
      +5000 B @400, never freed.
    device 2 "idle GPU": a record, nothing else."""
    return store_from_lists({
        "devices": [dict(SM80, id=0, name="<b>GPU&0</b>", pcie_generation=2, pcie_link_width=16),
                    dict(SM80, id=1, name="GPU 1", sm_count=50, pcie_generation=1,
                         pcie_link_width=16),
                    dict(SM80, id=2, name="idle GPU")],
        "kernels": [{"start_ns": 1000, "end_ns": 3000, "device": 0, "thread_id": 100},
                    {"start_ns": 2000, "end_ns": 4000, "device": 0, "thread_id": 100},
                    {"start_ns": 6000, "end_ns": 7000, "device": 0, "thread_id": 100},
                    {"start_ns": 1000, "end_ns": 2000, "device": 1, "thread_id": 200},
                    {"start_ns": 2000, "end_ns": 2500, "device": 1, "thread_id": 200},
                    {"start_ns": 5000, "end_ns": 5500, "device": 1, "thread_id": 300}],
        "memcpys": [{"copy_kind": 1, "bytes": 8000, "start_ns": 0, "end_ns": 1500, "device": 0},
                    {"copy_kind": 1, "bytes": 3000, "start_ns": 500, "end_ns": 1500, "device": 1},
                    {"copy_kind": 2, "bytes": 4000, "start_ns": 7000, "end_ns": 7500, "device": 0},
                    {"copy_kind": 3, "bytes": 1000, "start_ns": 5200, "end_ns": 5300, "device": 1}],
        "memsets": [{"start_ns": 3500, "end_ns": 4500, "bytes": 256, "device": 0}],
        "allocations": [{"timestamp_ns": 100, "address": 0x1000, "bytes": 1000, "device": 0},
                        {"timestamp_ns": 200, "address": 0x2000, "bytes": 3000, "device": 0},
                        {"timestamp_ns": 300, "address": 0x1000, "bytes": 1000, "device": 0,
                         "alloc": False},
                        {"timestamp_ns": 400, "address": 0x1000, "bytes": 5000, "device": 1}],
        "start_ns": 0, "end_ns": 10000,
    })


def test_device_rows_and_balance():
    dr = roofline.devices(_store())
    assert dr["wall_ns"] == 10000
    rows = {r["device_id"]: r for r in dr["rows"]}
    assert sorted(rows) == [0, 1, 2]
    a, b, idle = rows[0], rows[1], rows[2]
    assert a["name"] == "<b>GPU&0</b>"
    keys = ("kernel_count", "kernel_time_ns", "kernel_busy_ns", "copy_count", "copy_bytes",
            "copy_busy_ns", "memset_count", "busy_ns", "idle_ns")
    assert tuple(a[k] for k in keys) == (3, 5000, 4000, 2, 12000, 2000, 1, 6000, 4000)
    assert tuple(b[k] for k in keys) == (3, 2000, 2000, 2, 4000, 1100, 0, 2500, 7500)
    assert tuple(idle[k] for k in keys) == (0, 0, 0, 0, 0, 0, 0, 0, 10000)
    assert (a["busy_fraction"], b["idle_fraction"], idle["idle_fraction"]) == \
        pytest.approx((0.6, 0.75, 1.0))
    assert (idle["first_start_ns"], idle["last_end_ns"], idle["memory"]) == (None, None, None)
    # each device against its own link: 8000 B / (1500 ns x 8e9 B/s) = 66.67 %,
    # 4000 / (500 x 8) = 100 %, device 1: 3000 / (1000 x 4) = 75 %
    assert a["directions"]["HtoD"]["link_percent"] == pytest.approx(200 / 3)
    assert a["directions"]["DtoH"]["link_percent"] == pytest.approx(100.0)
    assert b["directions"]["HtoD"]["link_percent"] == pytest.approx(75.0)
    assert b["directions"]["HtoD"]["link_bytes_per_s"] == pytest.approx(4e9)
    # DtoD does not cross the host link: no peak, no %
    assert b["directions"]["DtoD"]["link_percent"] is None
    assert b["directions"]["DtoD"]["link_bytes_per_s"] is None
    assert a["memory"] == {"peak_in_use_bytes": 4000, "peak_ns": 200, "final_in_use_bytes": 3000}
    assert b["memory"]["peak_in_use_bytes"] == 5000
    assert a["ceilings"]["peak_flops_per_s"]["fp32"] == pytest.approx(12.8e12)
    assert b["ceilings"]["peak_flops_per_s"]["fp32"] == pytest.approx(6.4e12)
    assert b["ceilings"]["dram_bytes_per_s"] == pytest.approx(1.024e12)
    assert [(t["thread_id"], t["kernel_count"], t["kernel_time_ns"]) for t in b["threads"]] == \
        [(200, 2, 1500), (300, 1, 500)]
    # busy 6000, 2500, 0: mean 8500 / 3 = 2833.3; 6000 / 2833.3 = 2.1176; the idle GPU is the
    # least busy; spread 6000 = 100 % of the busiest
    bal = dr["balance"]
    assert (bal["device_count"], bal["active_devices"]) == (3, 2)
    assert bal["imbalance"] == pytest.approx(6000 / (8500 / 3))
    assert (bal["slowest_device"], bal["least_busy_device"]) == (0, 2)
    assert (bal["spread_ns"], bal["spread_fraction"]) == (6000, pytest.approx(1.0))


def test_given_ceilings_apply_to_the_first_device_and_a_given_link_to_every_device():
    """The roofline's ceilings (measured, or the user's) replace the first device's table
    values where they give one; a measured or user link peak is every device's link."""
    given = {"peak_flops_per_s": {"fp32": 1e12}, "link_bytes_per_s": 16e9,
             "link_source": "measured"}
    rows = {r["device_id"]: r for r in roofline.devices(_store(), ceilings_override=given)["rows"]}
    a, b = rows[0], rows[1]
    assert a["ceilings"]["peak_flops_per_s"]["fp32"] == 1e12
    assert a["ceilings"]["flops_source"]["fp32"] == "user"  # the dict names no source
    assert a["ceilings"]["dram_bytes_per_s"] == pytest.approx(1.024e12)  # not given: the table's
    assert b["ceilings"]["peak_flops_per_s"]["fp32"] == pytest.approx(6.4e12)
    assert (a["ceilings"]["link_bytes_per_s"], b["ceilings"]["link_bytes_per_s"]) == (16e9, 16e9)
    assert b["ceilings"]["link_source"] == "measured"
    # 8000 B / (1500 ns x 16e9) = 33.33 %; device 1: 3000 / (1000 x 16) = 18.75 %
    assert a["directions"]["HtoD"]["link_percent"] == pytest.approx(100 / 3)
    assert b["directions"]["HtoD"]["link_percent"] == pytest.approx(18.75)


def test_summary_section_text_and_html():
    dr = roofline.devices(_store())
    sec = sections.devices_section(dict(dr), t0_ns=0)
    assert sec["available"] and sec["count"] == 3 and sec["wall_time_s"] == pytest.approx(1e-5)
    a = sec["items"][0]
    assert (a["busy_s"], a["idle_s"], a["kernel_time_s"]) == pytest.approx((6e-6, 4e-6, 5e-6))
    assert (a["first_start_s"], a["last_end_s"]) == pytest.approx((0.0, 7.5e-6))
    assert a["memory_peak_time_s"] == pytest.approx(2e-7)
    # by busy time: HtoD 1500 ns first; 8000 B / 1500 ns = 5.333 GB/s
    assert [(d["direction"], d["gbps"]) for d in a["by_direction"]] == \
        [("HtoD", pytest.approx(8000 / 1500)), ("DtoH", pytest.approx(8.0))]
    assert a["ceilings"]["link_description"] == "PCIe gen2 x16"
    idle = sec["items"][2]
    assert (idle["memory_peak_bytes"], idle["first_start_s"],
            idle["ceilings"]["link_bytes_per_s"]) == (None, None, None)
    text = sec["balance"]["text"]
    assert text == ("load balance over 3 devices (2 active; device 2 ran nothing): busiest/mean "
                    "busy 2.12 (1.00 = even); device 0 the busiest (6.0 µs), device 2 the least "
                    "busy (0 s), spread 6.0 µs (100.0 % of the busiest)")
    printed = str(dr)
    assert text in printed
    assert "66.7 %" in printed and "75 %" in printed  # HtoD % link of devices 0 and 1
    html = section_views.devices_html({"by_device": sec})
    assert "&lt;b&gt;GPU&amp;0&lt;/b&gt;" in html and "<b>GPU" not in html
    assert "<th>device 0</th><th>device 1</th><th>device 2</th>" in html
    assert "1 · 8.00 kB · 5.33 GB/s · 66.7 % of link" in html
    assert "100 (3 kernels, 5.0 µs)" in html  # device 0's launching thread
    assert "12.8 TFLOP/s" in html and "6.4 TFLOP/s" in html
    nb = dr._repr_html_()
    assert "&lt;b&gt;GPU&amp;0&lt;/b&gt;" in nb and "<b>GPU&" not in nb


def test_no_device_at_all():
    dr = roofline.devices(store_from_lists({}))
    assert dr["rows"] == [] and dr["balance"]["imbalance"] is None
    assert dr["balance"]["slowest_device"] is None
    sec = sections.devices_section(dict(dr), 0)
    assert sec == {"available": False,
                   "reason": "no GPU device in this trace (no device record, no GPU activity)"}
    assert "not available: no GPU device" in str(dr)
