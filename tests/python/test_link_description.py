"""The host link's description reaches every transfer report: prof.transfer_report(),
summary.json and the HTML page say which link the link % is measured against ("PCIe gen4 x16"
from the device's generation and width, calibrate's "measured by ..." when a measured link is
stored), not just the source name ("table")."""
import fpgaprof
from fpgaprof import calibrate
from fpgaprof.base.core import core
from fpgaprof.analysis.ceilings import save_measured
from fpgaprof.report import html
from fpgaprof.report import model
from _store_builder import store_from_lists

UUID = "GPU-00000000-0000-0000-0000-00000000c0de"


def _profile():
    # sm_80-like device on PCIe gen4 x16; one pinned 4096 B HtoD copy of 1 us
    device = {"name": "link-test-gpu", "uuid": UUID, "cc_major": 8, "cc_minor": 0,
              "sm_count": 100, "core_clock_khz": 1_000_000, "memory_clock_khz": 1_000_000,
              "memory_bus_width_bits": 4096, "pcie_generation": 4, "pcie_link_width": 16}
    return fpgaprof.Profile(store_from_lists({
        "devices": [device],
        "kernels": [{"name": "k", "start_ns": 0, "end_ns": 10_000, "grid": 1000}],
        "memcpys": [{"copy_kind": 1, "src_kind": 1, "dst_kind": 3, "bytes": 4096,
                     "start_ns": 20_000, "end_ns": 21_000}],
        "start_ns": 0, "end_ns": 100_000}))


def test_table_link_described_by_generation_and_width(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no stored calibration
    prof = _profile()
    tr = prof.transfer_report()
    assert (tr["link_source"], tr["link_description"]) == ("table", "PCIe gen4 x16")
    # 16 GT/s x 16 lanes x 128/130 / 8 = 31.508 GB/s
    assert abs(tr["link_bytes_per_s"] - 16e9 * 16 * 128 / 130 / 8) < 1e3
    s = model.collect(prof)
    assert s["transfers"]["link_description"] == "PCIe gen4 x16"
    assert "(table: PCIe gen4 x16)" in html.render(s)


def test_measured_link_described_with_its_date(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    save_measured(calibrate.cache_path("link-test-gpu", UUID),
                            {"link_bytes_per_s": 5e9, "measured_at": "2026-11-20T08:00:00Z"})
    prof = _profile()
    want = "measured by fpgaprof calibrate on 2026-11-20 (PCIe gen4 x16)"
    tr = prof.transfer_report()
    assert (tr["link_source"], tr["link_description"]) == ("measured", want)
    s = model.collect(prof)
    assert s["transfers"]["link_description"] == want
    assert f"(measured: {want})" in html.render(s)


def test_devices_report_shows_the_link_or_why_not(monkeypatch):
    """`fpgaprof devices` names each GPU's PCIe link (filled from sysfs by the probe), or says
    it is unknown. The probe needs a driver; here its answer is stood in for."""
    import types

    from fpgaprof.api import devices as device_info

    known, unknown = core.DeviceInfo(), core.DeviceInfo()
    known.id, known.name, known.pcie_generation, known.pcie_link_width = 0, "gpu-a", 5, 16
    unknown.id, unknown.name = 1, "gpu-b"
    fake = types.SimpleNamespace(library_found=False, library_path="", how_found="",
                                 cupti_version=0, cupti_cuda="", header_cupti_version=130001,
                                 header_cuda="13.0", min_cupti_version=26, min_cuda="12.8",
                                 driver_version=13000, devices=[known, unknown], problem="")
    monkeypatch.setattr(device_info, "status", lambda: fake)
    lines = {ln.strip().split(":")[0]: ln for ln in device_info.describe().splitlines()}
    assert lines["[0] gpu-a"].endswith(", PCIe gen5 x16")
    assert lines["[1] gpu-b"].endswith(", PCIe link unknown (not in sysfs; `fpgaprof calibrate` "
                                       "measures it)")
