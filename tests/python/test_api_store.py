"""The store, its record tables, the trace file and error mapping, through the Python API
(no CUPTI needed: stores are built with TraceStore.append)."""
import math
import os

import numpy as np
import pytest

import fpgaprof
from fpgaprof.base.core import core

ENUMS = {
    ("memcpys", "copy_kind"): "DtoH",
    ("memcpys", "src_kind"): "device",
    ("memcpys", "dst_kind"): "pinned",
    ("memsets", "memory_kind"): "device",
    ("allocations", "memory_kind"): "managed",
    ("api_calls", "kind"): "runtime",
    ("api_functions", "kind"): "driver",
    ("syncs", "kind"): "stream_synchronize",
}
STRINGS = {"name", "domain", "source", "range_name", "metric"}
INDEXES = {"api_index", "region_index", "marker_index", "parent", "kernel_index", "memcpy_index", "launch_config", "function"}
BOOLS = {"is_async", "is_alloc", "is_range", "is_closed"}
SMALL = {"depth": 0xFFFF, "object_kind": 0xFF}
WIDE = {"start_ns", "end_ns", "launch_ns", "bytes", "timestamp_ns", "address", "pc", "graph_node_id",
        "external_id"}


def value_for(table: str, field: str, t: int, f: int, row: int):
    """A distinct valid value for each (table, field, row), chosen by the field's meaning."""
    if (table, field) in ENUMS:
        return ENUMS[(table, field)]
    if table == "overheads" and field == "kind":
        return f"CUPTI_BUFFER_FLUSH_{row}"
    if field in STRINGS:
        return f"{table}.{field}#{row}"
    if field in INDEXES:
        return 0 if row == 1 else 0xFFFFFFFF  # every table has 2 records: index 0 exists
    if field in BOOLS:
        return (row + f) % 2 == 0
    if table == "counters" and field == "value":
        return -1.5 * (row + 1) + f
    base = 1000 * t + 10 * f + row + 1
    if field in SMALL:
        return base % SMALL[field]
    if field in WIDE:
        return (1 << 60) + base * 1_000_003
    return base


def build_full_store():
    s = core.TraceStore()
    for t, table in enumerate(s.table_names):
        fields = getattr(s, table).field_names
        for row in range(2):
            # A kernel's launch_config (an API call's function) index is set by giving the
            # configuration's (function's) own fields.
            s.append(table, **{f: value_for(table, f, t, i, row) for i, f in enumerate(fields)
                               if (table, f) not in (("kernels", "launch_config"), ("api_calls", "function"))})
    s.set_meta(start_ns=10, end_ns=2_000_000_010, dropped_records=3, incomplete_records=2,
               driver_version=13000, cupti_version=130001, cupti_path="/x/libcupti.so.13",
               gpu_available=True, command_buffers_disabled=True, fpgaprof_version="0.1.0",
               warnings=["w1", "w2 ü"])
    d = core.DeviceInfo()
    d.id, d.name, d.sm_count, d.memory_clock_khz, d.memory_bus_width_bits = 0, "Test GPU", 132, 2_619_000, 5120
    s.add_device(d)
    s.add_hlo_module("jit_f", 3, "HloModule jit_f\n")
    return s


def test_tables_expose_every_field_with_resolved_strings_and_enum_names():
    s = build_full_store()
    assert len(s.kernels) == 2
    k = s.kernels[1]
    assert k.name == "kernels.name#1"
    assert isinstance(k.name_id, int) and s.strings[k.name_id] == "kernels.name#1"
    assert k.api_index == 0 and s.kernels[0].api_index == 0xFFFFFFFF
    assert s.memcpys[0].copy_kind == "DtoH"
    assert s.memcpys[0].src_kind == "device" and s.memcpys[0].dst_kind == "pinned"
    assert s.api_calls[0].kind == "runtime"
    assert s.counters[0].value == -1.5 + 4  # value is field 4 of CounterRecord, row 0
    assert s.kernels[-1].name == s.kernels[1].name
    with pytest.raises(IndexError):
        s.kernels[2]
    with pytest.raises(IndexError):
        s.kernels[-3]
    assert [r.name for r in s.kernels] == ["kernels.name#0", "kernels.name#1"]
    assert k.duration_ns == max(k.end_ns - k.start_ns, 0)
    assert k.to_dict()["name"] == "kernels.name#1"
    assert set(k.to_dict()) == set(s.kernels.field_names)


def test_columns_are_numpy_arrays_with_the_cpp_types():
    s = build_full_store()
    c = s.kernels.columns()
    assert set(c) == set(s.kernels.field_names)
    assert c["start_ns"].dtype == np.uint64
    assert c["grid_x"].dtype == np.uint32
    assert c["name"].dtype == object and list(c["name"]) == ["kernels.name#0", "kernels.name#1"]
    m = s.memcpys.columns(["copy_kind", "bytes", "is_async"])
    assert list(m) == ["copy_kind", "bytes", "is_async"]
    assert list(m["copy_kind"]) == ["DtoH", "DtoH"]
    assert m["is_async"].dtype == np.bool_
    assert s.regions.columns()["depth"].dtype == np.uint16
    assert s.counters.columns()["value"].dtype == np.float64
    with pytest.raises(fpgaprof.InvalidArgumentError, match="no field 'nope'"):
        s.kernels.columns(["nope"])
    # Columns agree with rows.
    for table in s.table_names:
        tab = getattr(s, table)
        cols = tab.columns()
        for i, row in enumerate(tab):
            for f in tab.field_names:
                assert cols[f][i] == getattr(row, f), (table, f, i)


def test_append_validates_fields():
    s = core.TraceStore()
    with pytest.raises(fpgaprof.InvalidArgumentError, match="no field"):
        s.append("kernels", bogus=1)
    with pytest.raises(fpgaprof.InvalidArgumentError, match="no record table"):
        s.append("nope", start_ns=1)
    with pytest.raises(fpgaprof.InvalidArgumentError, match="unknown value 'sideways'"):
        s.append("memcpys", copy_kind="sideways")
    with pytest.raises(fpgaprof.InvalidArgumentError, match="out of range"):
        s.append("regions", depth=70000)
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError
        s.append("kernels", grid_x=1 << 33)


def test_kernels_show_their_launch_configuration_stored_once():
    s = core.TraceStore()
    # Two kernels with one configuration, one with another: 2 stored configurations.
    s.append("kernels", start_ns=0, end_ns=10, grid_x=132, grid_y=1, grid_z=1, block_x=256, graph_node_id=1 << 40)
    s.append("kernels", start_ns=20, end_ns=30, grid_x=132, grid_y=1, grid_z=1, block_x=256, graph_node_id=1 << 40)
    s.append("kernels", start_ns=40, end_ns=50, grid_x=8, grid_y=1, grid_z=1, block_x=128)
    s.append("kernels", start_ns=60, end_ns=70)  # no configuration: launch_config stays "none"
    assert len(s.launch_configs) == 2
    assert [k.launch_config for k in s.kernels] == [0, 0, 1, 0xFFFFFFFF]
    c = s.kernels.columns(["grid_x", "block_x", "graph_node_id", "launch_config"])
    assert list(c["grid_x"]) == [132, 132, 8, 0]
    assert list(c["block_x"]) == [256, 256, 128, 0]
    assert c["graph_node_id"].dtype == np.uint64 and int(c["graph_node_id"][1]) == 1 << 40
    assert s.kernels[2].grid_x == 8 and s.kernels[2].to_dict()["block_x"] == 128
    assert "grid_x=132" in repr(s.kernels[0])
    # An explicit index works too; giving both is ambiguous.
    s.append("kernels", start_ns=80, end_ns=90, launch_config=1)
    assert s.kernels[4].grid_x == 8
    with pytest.raises(fpgaprof.InvalidArgumentError, match="not both"):
        s.append("kernels", launch_config=0, grid_x=3)
    # The file keeps both tables; a reference past the end of launch_configs is rejected.
    back = core.TraceStore.deserialize(s.serialize())
    assert list(back.kernels.columns(["grid_x"])["grid_x"]) == [132, 132, 8, 0, 8]
    s.append("kernels", launch_config=7)
    with pytest.raises(fpgaprof.TraceFormatError, match="launch_config"):
        core.TraceStore.deserialize(s.serialize())


def test_api_calls_show_their_function_stored_once():
    s = core.TraceStore()
    for i in range(3):
        s.append("api_calls", start_ns=10 * i, end_ns=10 * i + 5, correlation_id=i + 1, name="cuLaunchKernel",
                 callback_id=307, kind="driver")
    s.append("api_calls", start_ns=40, end_ns=45, name="cudaMemcpyAsync", callback_id=41, kind="runtime",
             return_value=700)
    assert len(s.api_functions) == 2
    assert [a.function for a in s.api_calls] == [0, 0, 0, 1]
    c = s.api_calls.columns(["name", "kind", "callback_id", "return_value"])
    assert list(c["name"]) == ["cuLaunchKernel"] * 3 + ["cudaMemcpyAsync"]
    assert list(c["kind"]) == ["driver"] * 3 + ["runtime"]
    assert list(c["callback_id"]) == [307, 307, 307, 41] and c["return_value"][3] == 700
    back = core.TraceStore.deserialize(s.serialize())
    assert back.api_calls[3].to_dict()["name"] == "cudaMemcpyAsync"


def _columns_of(store):
    return {t: getattr(store, t).columns() for t in store.table_names}


def test_save_load_round_trip_keeps_every_field(tmp_path):
    s = build_full_store()
    path = tmp_path / "full.fpgaprof"
    s.save(str(path))
    back = core.TraceStore.load(str(path))
    a, b = _columns_of(s), _columns_of(back)
    for table in s.table_names:
        assert set(a[table]) == set(b[table])
        for f in a[table]:
            assert list(a[table][f]) == list(b[table][f]), (table, f)
    assert back.meta == s.meta
    assert back.strings == s.strings
    assert [d.to_dict() for d in back.devices] == [d.to_dict() for d in s.devices]
    assert [(h.name, h.program_id, h.text) for h in back.hlo_modules] == [("jit_f", 3, "HloModule jit_f\n")]
    # Through the public API: a Profile saved and loaded is equal, field by field.
    prof = fpgaprof.Profile(s)
    p2 = tmp_path / "p.fpgaprof"
    prof.save(p2)
    loaded = fpgaprof.load(p2)
    assert loaded == prof
    assert loaded.path == str(p2)
    assert loaded.dropped_records == 3 and loaded.incomplete_records == 2
    assert loaded.wall_time_ns == 2_000_000_000
    assert loaded.device.name == "Test GPU"
    assert math.isclose(loaded.device.peak_dram_bandwidth_bytes_per_s(), 2 * 2_619_000e3 * 5120 / 8)


def test_no_temporary_file_is_left_behind(tmp_path):
    s = build_full_store()
    for _ in range(3):
        s.save(str(tmp_path / "t.fpgaprof"))
    assert os.listdir(tmp_path) == ["t.fpgaprof"]


@pytest.fixture()
def good_bytes():
    return build_full_store().serialize()


def _bad(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def test_empty_file_is_a_trace_format_error_naming_the_path(tmp_path):
    p = _bad(tmp_path, "empty.fpgaprof", b"")
    with pytest.raises(fpgaprof.TraceFormatError, match="empty") as e:
        fpgaprof.load(p)
    assert str(e.value).startswith(p + ": ")


def test_truncated_file(tmp_path, good_bytes):
    for cut in (len(good_bytes) // 2, len(good_bytes) - 1, 20, 9):
        p = _bad(tmp_path, f"cut{cut}.fpgaprof", good_bytes[:cut])
        with pytest.raises(fpgaprof.TraceFormatError, match="truncated") as e:
            fpgaprof.load(p)
        assert p in str(e.value)


def test_corrupted_file(tmp_path, good_bytes):
    data = bytearray(good_bytes)
    data[len(data) // 2] ^= 0x40
    p = _bad(tmp_path, "corrupt.fpgaprof", bytes(data))
    with pytest.raises(fpgaprof.TraceFormatError, match="corrupted") as e:
        fpgaprof.load(p)
    assert p in str(e.value)


def test_future_version(tmp_path, good_bytes):
    data = bytearray(good_bytes)
    data[8] = 9  # format version (u32 little endian after the 8-byte magic)
    p = _bad(tmp_path, "future.fpgaprof", bytes(data))
    with pytest.raises(fpgaprof.TraceFormatError, match="version 9") as e:
        fpgaprof.load(p)
    assert "upgrade fpgaprof" in str(e.value) and p in str(e.value)


def test_not_a_trace(tmp_path):
    p = _bad(tmp_path, "x.json", b'{"traceEvents": []}')
    with pytest.raises(fpgaprof.TraceFormatError, match="wrong magic"):
        fpgaprof.load(p)


def test_io_errors_are_oserrors(tmp_path):
    with pytest.raises(fpgaprof.FpgaprofIOError) as e:
        fpgaprof.load(tmp_path / "missing.fpgaprof")
    assert isinstance(e.value, OSError) and isinstance(e.value, fpgaprof.FpgaprofError)
    with pytest.raises(OSError, match="no_dir"):
        build_full_store().save(str(tmp_path / "no_dir" / "t.fpgaprof"))


@pytest.mark.parametrize("kind, cls", [
    ("internal", fpgaprof.FpgaprofError),
    ("invalid_argument", fpgaprof.InvalidArgumentError),
    ("cupti_unavailable", fpgaprof.CuptiUnavailableError),
    ("profiler_conflict", fpgaprof.ProfilerConflictError),
    ("trace_format", fpgaprof.TraceFormatError),
    ("hlo_parse", fpgaprof.HloParseError),
    ("io", fpgaprof.FpgaprofIOError),
    ("state", fpgaprof.ProfilerConflictError),
    ("counters", fpgaprof.CountersError),
])
def test_every_error_kind_maps_to_its_python_exception(kind, cls):
    with pytest.raises(cls, match="^cause; fix$") as e:
        core._raise_error(kind, "cause; fix")
    assert isinstance(e.value, fpgaprof.FpgaprofError)


def test_correlate_from_python_counts_unmatched():
    s = core.TraceStore()
    s.append("api_calls", correlation_id=5, thread_id=42, start_ns=100, end_ns=120, name="cuLaunchKernel")
    s.append("kernels", correlation_id=5, start_ns=200, end_ns=300, name="k")
    s.append("kernels", correlation_id=6, start_ns=400, end_ns=500, name="k")
    s.append("regions", thread_id=42, start_ns=50, end_ns=150, name="r")
    stats = s.correlate()
    assert stats["unmatched_kernels"] == 1
    assert s.kernels[0].thread_id == 42 and s.kernels[0].launch_ns == 100
    assert s.kernels[0].region_index == 0 and s.kernels[1].region_index == 0xFFFFFFFF
    assert any("1 kernels have no matching API record" in w for w in s.meta["warnings"])


def test_summary_shows_kernels_transfers_regions_drops_and_warnings():
    s = core.TraceStore()
    s.set_meta(start_ns=0, end_ns=10_000_000, dropped_records=7, gpu_available=True, warnings=["beware"])
    s.append("api_calls", correlation_id=1, thread_id=9, start_ns=10, end_ns=20)
    s.append("api_calls", correlation_id=2, thread_id=9, start_ns=30, end_ns=40)
    s.append("api_calls", correlation_id=3, thread_id=9, start_ns=50, end_ns=60)
    # k1 runs 2000 ns twice, k2 1000 ns once: k1 total 4000, mean 2 us, 80% of 5000 ns.
    s.append("kernels", correlation_id=1, name="k1", start_ns=1000, end_ns=3000)
    s.append("kernels", correlation_id=2, name="k1", start_ns=4000, end_ns=6000)
    s.append("kernels", correlation_id=3, name="k2", start_ns=7000, end_ns=8000)
    # 2 HtoD copies: 1 MiB in 500 ns + 1 MiB in 1500 ns = 2 MiB in 2000 ns = 1048.576 GB/s;
    # 2 MiB = 2,097,152 B shows as 2.10 MB (decimal units, as report.html).
    s.append("memcpys", copy_kind="HtoD", bytes=1 << 20, start_ns=100, end_ns=600)
    s.append("memcpys", copy_kind="HtoD", bytes=1 << 20, start_ns=700, end_ns=2200)
    s.append("regions", name="step", thread_id=9, start_ns=0, end_ns=45)  # holds launches 1 and 2
    s.correlate()
    text = fpgaprof.Profile(s).summary()
    assert "Kernels: 3 launches, 2 distinct" in text
    k1 = next(line for line in text.splitlines() if line.strip().startswith("k1"))
    assert k1.split()[1:] == ["2", "4.0", "µs", "2.0", "µs", "80.0"]  # times auto-scaled
    htod = next(line for line in text.splitlines() if line.strip().startswith("HtoD"))
    # busy is the union (here also the sum); % of link n/a: no device, no link peak; 0 pageable
    assert htod.split() == ["HtoD", "2", "2.10", "MB", "2.0", "µs", "1048.58", "n/a", "0"]
    step = next(line for line in text.splitlines() if line.strip().startswith("step"))
    # 45 ns wall, 4000 ns of kernels, no memory peak (no allocation records)
    assert step.split() == ["step", "1", "45", "ns", "4.0", "µs", "–"]
    assert "Dropped records: 7" in text
    assert "beware" in text
    # the kernel table is the analysis' kernels_by_name; without an analysis result (it
    # failed) the summary reads the kernel table itself, with the same lines
    from fpgaprof.api.overview import trace_overview
    from fpgaprof.views.profile import summary_text

    prof = fpgaprof.Profile(s)
    o = trace_overview(prof)
    # prof.summary() is the answer (views.answer_text) and then this text
    body = summary_text(prof, o.data, o.analysis)
    assert text.startswith("FPGA answer") and text.endswith("\n\n" + body)
    text = body
    without = summary_text(prof, o.data, None).splitlines()
    kernel_lines = [i for i, line in enumerate(text.splitlines()) if line.startswith("Kernels:")]
    start = kernel_lines[0]
    assert without[start : start + 4] == text.splitlines()[start : start + 4]
    assert without[start + 2].split()[1:] == ["2", "4.0", "µs", "2.0", "µs", "80.0"]
    # k2: 1000 ns once, 20 % of 5000 ns
    assert without[start + 3].split()[1:] == ["1", "1.0", "µs", "1.0", "µs", "20.0"]
    # (kernel, count, timed_count, total_ns, min_ns, max_ns), most time first
    assert core.analysis.kernels_by_name(s) == [("k1", 2, 2, 4000, 2000, 2000), ("k2", 1, 1, 1000, 1000, 1000)]


def test_top_kernels_leave_launches_without_timestamps_out_of_mean_min_max():
    """A counter replay leaves some launches with start = end = 0: launched, no duration. "k"
    ran 100 and 300 ns and once untimed: 3 launches, mean (100 + 300) / 2 = 200 ns (not 133),
    min 100 ns (not 0). "u" was never timed: no mean, min or max to state."""
    from fpgaprof.report import model

    s = core.TraceStore()
    s.set_meta(start_ns=0, end_ns=10_000, gpu_available=True)
    s.append("kernels", name="k", start_ns=1000, end_ns=1100)
    s.append("kernels", name="k", start_ns=2000, end_ns=2300)
    s.append("kernels", name="k", start_ns=0, end_ns=0)
    s.append("kernels", name="u", start_ns=0, end_ns=0)
    prof = fpgaprof.Profile(s)
    top = {r["name"]: r for r in model.collect(prof)["kernels"]["top"]}
    assert (top["k"]["count"], top["k"]["timed_count"]) == (3, 2)
    assert (top["k"]["mean_s"], top["k"]["min_s"], top["k"]["max_s"]) == (200e-9, 100e-9, 300e-9)
    assert (top["u"]["count"], top["u"]["timed_count"], top["u"]["total_s"]) == (1, 0, 0.0)
    assert (top["u"]["mean_s"], top["u"]["min_s"], top["u"]["max_s"]) == (None, None, None)
    text = prof.summary()
    table = text[text.index("Kernels:"):].split("\n\n")[0]  # the kernel table, not the op lines
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines()[2:]}
    assert rows["k"] == ["3", "400", "ns", "200", "ns", "100.0"]
    assert rows["u"] == ["1", "0", "s", "–", "0.0"]


def test_kernels_by_name_ties_go_by_name_and_durations_clip_at_zero():
    s = core.TraceStore()
    # "b" 300 + 200 ns, "a" 500 ns: a tie, by name; "c" ends before it starts (a clock glitch):
    # 0 ns, last
    s.append("kernels", name="b", start_ns=100, end_ns=400)
    s.append("kernels", name="a", start_ns=500, end_ns=1000)
    s.append("kernels", name="b", start_ns=1100, end_ns=1300)
    s.append("kernels", name="c", start_ns=2000, end_ns=1900)
    assert core.analysis.kernels_by_name(s) == [("a", 1, 1, 500, 500, 500), ("b", 2, 2, 500, 200, 300),
                                                ("c", 1, 0, 0, 0, 0)]
    assert core.analysis.kernels_by_name(core.TraceStore()) == []


def test_summary_without_gpu_shows_no_gpu_time():
    """A trace without GPU data: region GPU time is "–" (nothing measured), not 0.000, and
    times are auto-scaled as in report.html."""
    s = core.TraceStore()
    s.set_meta(start_ns=0, end_ns=2_500_000, gpu_available=False, unavailable_reason="no driver")
    s.append("regions", name="forward_project", thread_id=9, start_ns=500_000, end_ns=1_750_000)
    s.correlate()
    text = fpgaprof.Profile(s).summary()
    assert text.splitlines()[0] == "fpgaprof trace: wall time 2.50 ms; no GPU data: no driver"
    row = next(line for line in text.splitlines() if line.strip().startswith("forward_project"))
    assert row.split() == ["forward_project", "1", "1.25", "ms", "–", "–"]  # 1.25 ms wall
    assert "– : no GPU data in this trace" in text
    assert "Kernels: – (no GPU data)" in text and "0 launches" not in text
    # no copy was recorded either: unknown, not "0" copies
    assert "Transfers: – (no GPU data)" in text and "Transfers: 0" not in text


def test_profile_of_a_running_trace_says_so():
    p = fpgaprof.Profile()
    assert not p.ready
    with pytest.raises(fpgaprof.FpgaprofError, match="still running"):
        p.kernels


def test_a_load_can_be_given_another_memory_bound(tmp_path, monkeypatch):
    # The default bound (64 x the file + 64 MiB) holds for this trace; a bound below what its
    # decoded records need refuses it, naming the bound, by argument or by environment; a
    # bound above reads it; a bound that is no number of bytes is a typed error.
    path = tmp_path / "full.fpgaprof"
    fpgaprof.Profile(build_full_store()).save(path)
    monkeypatch.delenv("FPGAPROF_MAX_TRACE_MEMORY", raising=False)
    assert fpgaprof.load(path) == fpgaprof.load(path, max_memory_bytes=1 << 30)
    with pytest.raises(fpgaprof.TraceFormatError, match=r"more than the 64 bytes allowed"):
        fpgaprof.load(path, max_memory_bytes=64)
    monkeypatch.setenv("FPGAPROF_MAX_TRACE_MEMORY", "64")
    with pytest.raises(fpgaprof.TraceFormatError, match="FPGAPROF_MAX_TRACE_MEMORY"):
        fpgaprof.load(path)
    fpgaprof.load(path, max_memory_bytes=1 << 30)  # the argument before the environment
    for bad in ("lots", "0", "-5", "1e9"):
        monkeypatch.setenv("FPGAPROF_MAX_TRACE_MEMORY", bad)
        with pytest.raises(fpgaprof.InvalidArgumentError, match="is not a number of bytes"):
            fpgaprof.load(path)
    monkeypatch.delenv("FPGAPROF_MAX_TRACE_MEMORY")
    for bad in (0, -1, 2.5, True):
        with pytest.raises(fpgaprof.InvalidArgumentError, match="max_memory_bytes"):
            fpgaprof.load(path, max_memory_bytes=bad)
