"""fpgaprof calibrate without a GPU: JAX is made to hand calibrate its CPU device as "the GPU",
and fpgaprof's trace/region are replaced by a fake whose records (kernel and copy durations,
per repeat region) are chosen here, so every ceiling can be worked out by hand. The JAX work
(the copy, the transfers, the matmuls, fp64 under enable_x64) really runs, on the CPU."""
import json
import types

import jax
import numpy as np
import pytest

import fpgaprof
from fpgaprof import calibrate, cli
from fpgaprof.api import calibrate as api_calibrate
from fpgaprof.base import constants
from fpgaprof.analysis.ceilings import save_measured
from fpgaprof.errors import FpgaprofError, FpgaprofWarning
from _store_builder import store_from_lists

REPEATS = 3
COPY_BYTES = 4 << 20   # 4194304
LINK_BYTES = 1 << 20   # 1048576
UUID = "GPU-12345678-9abc-def0-1234-56789abcdef0"

# Per measurement label, per repeat: the durations (ns) of its kernels, or of its copies as
# (copy kind, ns). Stray records of other kinds must be ignored.
PLAN = {
    "dram": [[2_000_000], [1_000_000], [1_500_000]],
    "htod": [[("HtoD", 400_000), ("HtoD", 100_000)], [("HtoD", 300_000), ("HtoD", 100_000)],
             [("HtoD", 600_000)]],
    "dtoh": [[("DtoH", 200_000), ("HtoD", 10**9)], [("DtoH", 250_000)], [("DtoH", 300_000)]],
    "fp32": [[300_000, 200_000], [250_000, 150_000], [100_000, 500_000]],
    "fp64_tensor": [[1_000_000], [1_000_000], [1_000_000]],
}


class _Table:
    def __init__(self, cols):
        self._cols = cols

    def columns(self):
        return {k: np.asarray(v) for k, v in self._cols.items()}

    def __len__(self):
        return len(next(iter(self._cols.values())))


class FakeProfiler:
    """trace()/region() pair: regions named fpgaprof.calibrate/<label>/<i> get PLAN's records."""

    def __init__(self, plan=PLAN):
        self.plan = plan
        self.x64_in = {}    # label -> jax_enable_x64 while its repeats ran
        self.traces = 0

    def trace(self):
        fake = self

        class _T:
            def __enter__(self):
                fake.traces += 1
                fake.regions = []
                self.prof = types.SimpleNamespace(
                    devices=[types.SimpleNamespace(name="Fake GPU 9000", uuid=UUID)])
                return self.prof

            def __exit__(self, *exc):
                k = {"start_ns": [], "end_ns": [], "region_index": []}
                t = {"start_ns": [], "end_ns": [], "region_index": [], "copy_kind": []}
                clock = 0
                for ri, name in enumerate(fake.regions):
                    _, label, rep = name.split("/")
                    for rec in fake.plan.get(label, [[]] * REPEATS)[int(rep)]:
                        kind, ns = rec if isinstance(rec, tuple) else (None, rec)
                        dst = k if kind is None else t
                        dst["start_ns"].append(clock)
                        dst["end_ns"].append(clock + ns)
                        dst["region_index"].append(ri)
                        if kind is not None:
                            t["copy_kind"].append(kind)
                        clock += ns + 1000
                self.prof.kernels = _Table(k)
                self.prof.transfers = _Table(t)
                self.prof.regions = _Table({"name": list(fake.regions)})
                return False

        return _T()

    def region(self, name):
        fake = self

        class _R:
            def __enter__(self):
                fake.regions.append(name)
                fake.x64_in[name.split("/")[1]] = bool(jax.config.jax_enable_x64)

            def __exit__(self, *exc):
                return False

        return _R()


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path):
    """JAX's CPU device stands in for the GPU; small sizes; the cache in tmp_path."""
    real = jax.devices
    monkeypatch.setattr(jax, "devices",
                        lambda backend=None: real("cpu") if backend == "gpu" else real(backend))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(api_calibrate, "MATMULS", (("fp32", "float32", "highest", 64),
                                                ("fp64_tensor", "float64", "highest", 32)))
    fake = FakeProfiler()
    monkeypatch.setattr(api_calibrate, "profiler", lambda: (fake.trace, fake.region))
    return fake


def _run(**kw):
    return calibrate.run(repeats=REPEATS, copy_bytes=COPY_BYTES, link_bytes=LINK_BYTES, **kw)


def test_ceilings_from_the_fastest_repeat_with_split_kernels_summed(fake_gpu, recwarn):
    r = _run()
    assert not [w for w in recwarn if issubclass(w.category, FpgaprofWarning)]
    # DRAM: repeats 2.0, 1.0, 1.5 ms -> 1.0 ms; 2 x 4194304 B / 1e-3 s
    assert r["dram_bytes_per_s"] == pytest.approx(8.388608e9, rel=1e-12)
    # fp32 64^3: repeats 0.5, 0.4, 0.6 ms (two kernels each) -> 0.4 ms; 2 x 262144 / 4e-4
    # (the longest single kernel, 0.5 ms, would give 1.048576e9)
    assert r["peak_flops_per_s"]["fp32"] == pytest.approx(1.31072e9, rel=1e-12)
    # fp64 32^3: 1 ms -> 65536 / 1e-3, and JAX had x64 on while it ran (float64, not float32)
    assert r["peak_flops_per_s"]["fp64_tensor"] == pytest.approx(6.5536e7, rel=1e-12)
    assert fake_gpu.x64_in == {"dram": False, "htod": False, "dtoh": False, "fp32": False,
                               "fp64_tensor": True}
    assert not jax.config.jax_enable_x64  # restored
    # HtoD: repeats 0.5, 0.4, 0.6 ms -> 1048576 / 4e-4; DtoH: 0.2 ms (the stray 1 s HtoD copy
    # in a DtoH repeat is not counted) -> 1048576 / 2e-4; the link is the faster direction
    assert r["link_htod_bytes_per_s"] == pytest.approx(2.62144e9, rel=1e-12)
    assert r["link_dtoh_bytes_per_s"] == pytest.approx(5.24288e9, rel=1e-12)
    assert r["link_bytes_per_s"] == pytest.approx(5.24288e9, rel=1e-12)
    assert "sum of kernel durations per repeat (by region), fastest of 3" in r["timing"]["fp32"]
    assert "sum of DtoH copy durations" in r["timing"]["link_dtoh"]
    assert fake_gpu.traces == 5  # dram, htod, dtoh, two matmuls
    # saved under the uuid the trace reported, atomically, and found again by uuid
    assert r["device_name"] == "Fake GPU 9000" and r["device_uuid"] == UUID
    assert r["path"] == calibrate.cache_path("Fake GPU 9000", UUID)
    assert r["path"].endswith(f"ceilings-{UUID}.json")
    with open(r["path"], encoding="utf-8") as f:
        stored = json.load(f)
    assert stored["link_bytes_per_s"] == r["link_bytes_per_s"]
    assert calibrate.load("Fake GPU 9000", UUID) == stored
    assert calibrate.load("Fake GPU 9000") is None  # stored by uuid, not by name


def test_merge_uses_the_measured_link():
    table = {"device_name": "g", "peak_flops_per_s": {"fp32": 1e13, "fp64": 1e12},
             "flops_source": {"fp32": "table", "fp64": "table"}, "dram_bytes_per_s": 2e12,
             "dram_source": "table", "link_bytes_per_s": 6.4e10, "link_source": "table",
             "link_description": "PCIe gen5 x16"}
    out = calibrate.merge(table, {"link_bytes_per_s": 5.24288e9,
                                  "peak_flops_per_s": {"fp32": 9e12}})
    assert out["link_bytes_per_s"] == 5.24288e9 and out["link_source"] == "measured"
    assert out["link_description"] == "measured by fpgaprof calibrate (PCIe gen5 x16)"
    dated = calibrate.merge(table, {"link_bytes_per_s": 5.24288e9,
                                    "measured_at": "2026-11-22T13:05:00Z"})
    assert dated["link_description"] == "measured by fpgaprof calibrate on 2026-11-22 (PCIe gen5 x16)"
    assert out["flops_source"] == {"fp32": "measured", "fp64": "table"}
    assert out["dram_source"] == "table" and table["link_source"] == "table"


def test_load_by_uuid_then_by_name(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    save_measured(calibrate.cache_path("Some GPU"), {"dram_bytes_per_s": 1.0})
    assert calibrate.load("Some GPU", "GPU-unknown") == {"dram_bytes_per_s": 1.0}
    save_measured(calibrate.cache_path("Some GPU", "GPU-x"), {"dram_bytes_per_s": 2.0})
    assert calibrate.load("Some GPU", "GPU-x") == {"dram_bytes_per_s": 2.0}
    assert calibrate.load("Other GPU", "") is None


def test_repeat_seconds_groups_by_region_then_launch_order():
    # by region: repeat regions 4 and 7; durations 10+20 (region 4) and 25 (region 7) -> 25 ns
    got = calibrate.repeat_seconds([0, 100, 200], [10, 120, 225], [4, 4, 7], [4, 7])
    assert got == (pytest.approx(25e-9), "per repeat (by region)")
    # regions unknown, 4 records / 2 repeats: by start time (0,50 | 100,150): 30+10, 5+5 -> 10 ns
    none = constants.NONE32
    got = calibrate.repeat_seconds([100, 0, 150, 50], [105, 30, 155, 60], [none] * 4, [none, none])
    assert got == (pytest.approx(10e-9), "per repeat (by launch order)")
    # 3 records for 2 repeats and no regions: no trustworthy grouping
    assert calibrate.repeat_seconds([0, 1, 2], [1, 2, 3], [none] * 3, [none, none]) is None
    assert calibrate.repeat_seconds([], [], [], [0]) is None


def test_no_records_falls_back_to_wall_time(fake_gpu):
    fake_gpu.plan = {}
    r = _run(save=False)
    assert r["timing"]["fp32"].startswith("wall time around block_until_ready, fastest of 3")
    assert "the trace had no usable records" in r["timing"]["dram"]
    assert r["peak_flops_per_s"]["fp32"] > 0 and "path" not in r


def test_a_failed_precision_is_one_warning_and_the_rest_is_kept(fake_gpu, monkeypatch):
    monkeypatch.setattr(api_calibrate, "MATMULS", (("fp32", "float32", "highest", 64),
                                                ("fp16_tensor", "no_such_dtype", "default", 64)))
    with pytest.warns(FpgaprofWarning) as got:
        r = _run(save=False)
    msgs = [str(w.message) for w in got if issubclass(w.category, FpgaprofWarning)]
    assert len(msgs) == 1 and msgs[0].startswith("fpgaprof calibrate: fp16_tensor not measured (")
    assert r["timing"]["fp16_tensor"].startswith("failed: ")
    assert set(r["peak_flops_per_s"]) == {"fp32"}


def test_nothing_measured_is_an_error_and_exit_1(fake_gpu, monkeypatch, capsys):
    def broken(*a, **k):
        raise RuntimeError("RESOURCE_EXHAUSTED: out of memory")

    monkeypatch.setattr(jax, "device_put", broken)
    with pytest.warns(FpgaprofWarning):
        with pytest.raises(FpgaprofError, match="measured no ceiling: dram .*RESOURCE_EXHAUSTED"):
            _run()
    with pytest.warns(FpgaprofWarning):
        rc = cli.main(["calibrate"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1
    assert len(err) == 1
    assert err[0].startswith("fpgaprof: error: fpgaprof calibrate measured no ceiling")


def test_fit_keeps_arrays_within_half_the_free_memory():
    assert api_calibrate.array_bytes(1 << 30, None, 2) == 1 << 30
    # 1 GiB free, 2 arrays: each at most 1 GiB / 4 = 256 MiB
    assert api_calibrate.array_bytes(1 << 30, 1 << 30, 2) == 256 << 20
    assert api_calibrate.array_bytes(1 << 30, 1000, 2) == 1 << 20  # never below 1 MiB
    assert api_calibrate.array_bytes(10, None, 1) == 1 << 20


def test_x64_context_is_the_current_jax_api():
    import jax.numpy as jnp

    with api_calibrate.enable_x64():
        assert jnp.ones(2, "float64").dtype == np.float64
    assert not jax.config.jax_enable_x64
    assert fpgaprof.calibrate is calibrate


def test_the_analysis_uses_the_stored_link_and_says_measured(tmp_path, monkeypatch):
    """What calibrate stored (by uuid) reaches the transfer analysis: link peak and source."""
    from fpgaprof import roofline
    from fpgaprof.base.core import core

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    # sm_80-like device, PCIe gen4 x16 in the table; one HtoD copy of 4096 B in 1000 ns
    device = {"name": "test-gpu", "uuid": UUID, "cc_major": 8, "cc_minor": 0, "sm_count": 100,
              "core_clock_khz": 1_000_000, "memory_clock_khz": 1_000_000,
              "memory_bus_width_bits": 4096, "pcie_generation": 4, "pcie_link_width": 16}
    store = store_from_lists({
        "devices": [device],
        "kernels": [{"name": "k", "start_ns": 0, "end_ns": 10_000, "grid": 1000}],
        "memcpys": [{"copy_kind": 1, "src_kind": 1, "dst_kind": 3, "bytes": 4096,
                     "start_ns": 20_000, "end_ns": 21_000}],
        "start_ns": 0, "end_ns": 100_000})
    table = roofline.ceilings(store)
    assert table["link_source"] == "table"
    assert roofline.analyze(store)["transfers"]["link_description"] == "PCIe gen4 x16"
    save_measured(calibrate.cache_path("test-gpu", UUID),
                            {"link_bytes_per_s": 5e9, "measured_at": "2026-11-20T08:00:00Z"})
    ceil = roofline.ceilings(store)
    assert ceil["link_bytes_per_s"] == 5e9 and ceil["link_source"] == "measured"
    tr = roofline.analyze(store)["transfers"]
    assert tr["link_bytes_per_s"] == 5e9 and tr["link_source"] == "measured"
    assert tr["link_description"] == "measured by fpgaprof calibrate on 2026-11-20 (PCIe gen4 x16)"
    trace_group = next(g for g in tr["groups"] if g["kind"] == "trace")
    # 4096 B / 1 us = 4.096e9 B/s = 81.92 % of the measured 5e9 B/s
    assert trace_group["directions"]["HtoD"]["link_percent"] == pytest.approx(81.92)
