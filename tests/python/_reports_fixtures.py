"""A small hand-built profile for the report tests (duck-typed like fpgaprof.Profile: tables
with len() and columns()). Every expected number in the tests is worked out by hand from the
records below; times are in ms after T0 unless said otherwise.

Kernels (device 0):            stream 7: fusion_a [1.1,1.6] corr 1, gemm<float> [2.0,3.0] corr 2,
                               fusion_a [5.1,5.6] corr 3; stream 8: fusion_b [2.5,3.5] corr 4
Copies:                        HtoD 1 MB [1.0,1.1] pageable→device corr 5 (stream 7)
                               DtoH 2 MB [3.6,3.8] device→pinned, async, corr 6 (stream 7)
Memset:                        4096 B [6.0,6.01] corr 7 (stream 7)
API calls (thread 101):        one per activity, corr 1..7, each starting 5 µs before it
Regions (thread 101):          forward_project/64 [0.9,4.0], forward_project/64 [5.0,7.0],
                               back_project [7.5,9.0]
Markers (thread 101):          TSL XlaModule range [1.0,3.9]; instantaneous "hello" at 8.0
Allocations:                   +1 MB A @0.5, +2 MB B @1, -A @2, +4 MB C @3, -B @4, -C @5
Trace:                         [0, 10] ms; dropped_records 3
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

T0 = 1_700_000_000_000_000_000  # a realistic CLOCK_REALTIME ns value
MS = 1_000_000
NONE32 = 0xFFFFFFFF


def ms(x: float) -> int:
    return T0 + int(round(x * MS))


class Table:
    def __init__(self, **cols):
        self._c = {k: np.asarray(v) for k, v in cols.items()}
        self._n = len(next(iter(self._c.values()))) if self._c else 0

    def __len__(self):
        return self._n

    def columns(self):
        return dict(self._c)

    def __iter__(self):
        for i in range(self._n):
            yield SimpleNamespace(**{k: v[i] for k, v in self._c.items()})


def kernels():
    n = 4
    return Table(
        name=np.array(["fusion_a", "gemm<float>", "fusion_a", "fusion_b"], dtype=object),
        start_ns=np.array([ms(1.1), ms(2.0), ms(5.1), ms(2.5)], dtype=np.uint64),
        end_ns=np.array([ms(1.6), ms(3.0), ms(5.6), ms(3.5)], dtype=np.uint64),
        launch_ns=np.array([ms(1.1) - 5000, ms(2.0) - 5000, ms(5.1) - 5000, ms(2.5) - 5000],
                           dtype=np.uint64),
        correlation_id=np.array([1, 2, 3, 4], dtype=np.uint32),
        thread_id=np.full(n, 101, dtype=np.uint32),
        device_id=np.zeros(n, dtype=np.uint32),
        context_id=np.ones(n, dtype=np.uint32),
        stream_id=np.array([7, 7, 7, 8], dtype=np.uint32),
        grid_x=np.array([128, 64, 128, 32], dtype=np.uint32),
        grid_y=np.ones(n, dtype=np.uint32), grid_z=np.ones(n, dtype=np.uint32),
        block_x=np.full(n, 256, dtype=np.uint32),
        block_y=np.ones(n, dtype=np.uint32), block_z=np.ones(n, dtype=np.uint32),
        registers_per_thread=np.full(n, 32, dtype=np.uint32),
        static_shared_bytes=np.zeros(n, dtype=np.uint32),
        dynamic_shared_bytes=np.array([0, 16384, 0, 0], dtype=np.uint32),
        graph_id=np.zeros(n, dtype=np.uint32),
        api_index=np.array([0, 1, 2, 3], dtype=np.uint32),
        region_index=np.array([0, 0, 1, 0], dtype=np.uint32),
        marker_index=np.array([0, 0, NONE32, 0], dtype=np.uint32),
    )


def memcpys():
    return Table(
        start_ns=np.array([ms(1.0), ms(3.6)], dtype=np.uint64),
        end_ns=np.array([ms(1.1), ms(3.8)], dtype=np.uint64),
        bytes=np.array([1_000_000, 2_000_000], dtype=np.uint64),
        correlation_id=np.array([5, 6], dtype=np.uint32),
        thread_id=np.array([101, 101], dtype=np.uint32),
        device_id=np.zeros(2, dtype=np.uint32),
        stream_id=np.array([7, 7], dtype=np.uint32),
        copy_kind=np.array([1, 2], dtype=np.uint8),
        src_kind=np.array([1, 3], dtype=np.uint8),
        dst_kind=np.array([3, 2], dtype=np.uint8),
        is_async=np.array([False, True]),
        api_index=np.array([4, 5], dtype=np.uint32),
        region_index=np.array([0, 0], dtype=np.uint32),
    )


def memsets():
    return Table(
        start_ns=np.array([ms(6.0)], dtype=np.uint64),
        end_ns=np.array([ms(6.01)], dtype=np.uint64),
        bytes=np.array([4096], dtype=np.uint64),
        value=np.array([0], dtype=np.uint32),
        correlation_id=np.array([7], dtype=np.uint32),
        thread_id=np.array([101], dtype=np.uint32),
        device_id=np.zeros(1, dtype=np.uint32),
        stream_id=np.array([7], dtype=np.uint32),
        region_index=np.array([1], dtype=np.uint32),
    )


def api_calls():
    starts = [1.1, 2.0, 5.1, 2.5, 1.0, 3.6, 6.0]
    return Table(
        name=np.array(["cuLaunchKernel"] * 4 + ["cuMemcpyHtoD", "cuMemcpyDtoHAsync",
                                                "cuMemsetD8"], dtype=object),
        start_ns=np.array([ms(s) - 5000 for s in starts], dtype=np.uint64),
        end_ns=np.array([ms(s) - 1000 for s in starts], dtype=np.uint64),
        correlation_id=np.arange(1, 8, dtype=np.uint32),
        thread_id=np.full(7, 101, dtype=np.uint32),
        callback_id=np.array([307] * 4 + [279, 282, 300], dtype=np.uint32),
        return_value=np.zeros(7, dtype=np.uint32),
        kind=np.ones(7, dtype=np.uint8),
    )


def regions():
    return Table(
        name=np.array(["forward_project/64", "forward_project/64", "back_project"],
                      dtype=object),
        start_ns=np.array([ms(0.9), ms(5.0), ms(7.5)], dtype=np.uint64),
        end_ns=np.array([ms(4.0), ms(7.0), ms(9.0)], dtype=np.uint64),
        thread_id=np.full(3, 101, dtype=np.uint32),
        parent=np.full(3, NONE32, dtype=np.uint32),
        depth=np.zeros(3, dtype=np.uint16),
    )


def markers():
    return Table(
        name=np.array(["XlaModule:#hlo_module=jit_f,program_id=1#", "hello"], dtype=object),
        domain=np.array(["TSL", "user"], dtype=object),
        start_ns=np.array([ms(1.0), ms(8.0)], dtype=np.uint64),
        end_ns=np.array([ms(3.9), ms(8.0)], dtype=np.uint64),
        thread_id=np.array([101, 101], dtype=np.uint32),
        id=np.array([1, 2], dtype=np.uint32),
        parent=np.full(2, NONE32, dtype=np.uint32),
        depth=np.zeros(2, dtype=np.uint16),
        is_range=np.array([True, False]),
        is_closed=np.array([True, True]),
    )


def allocations():
    A, B, C = 0x7F0000000000, 0x7F0000100000, 0x7F0000400000
    return Table(
        timestamp_ns=np.array([ms(0.5), ms(1), ms(2), ms(3), ms(4), ms(5)], dtype=np.uint64),
        address=np.array([A, B, A, C, B, C], dtype=np.uint64),
        bytes=np.array([1_000_000, 2_000_000, 1_000_000, 4_000_000, 2_000_000, 4_000_000],
                       dtype=np.uint64),
        is_alloc=np.array([True, True, False, True, False, False]),
        device_id=np.zeros(6, dtype=np.uint32),
    )


DEVICE = {"id": 0, "name": "NVIDIA H100 80GB HBM3 <test>", "compute_capability_major": 9,
          "compute_capability_minor": 0, "sm_count": 132, "memory_clock_khz": 2_619_000,
          "memory_bus_width_bits": 5120, "global_memory_bytes": 85_000_000_000}


class SyntheticProfile:
    """Duck-typed Profile. with_ops adds a prof.ops table shaped like the attribution's."""

    def __init__(self, with_ops: bool = False, with_gpu: bool = True,
                 with_ceilings: bool = False):
        self._with_ceilings = with_ceilings
        self.kernels = kernels() if with_gpu else Table()
        self.transfers = memcpys() if with_gpu else Table()
        self.memsets = memsets() if with_gpu else Table()
        self.api_calls = api_calls() if with_gpu else Table()
        self.markers = markers() if with_gpu else Table()
        self.allocations = allocations() if with_gpu else Table()
        self.regions = regions()
        self.devices = [DEVICE] if with_gpu else []
        self.device = DEVICE if with_gpu else None
        self.gpu_available = with_gpu
        self.dropped_records = 3 if with_gpu else 0
        self.incomplete_records = 0
        self.wall_time_ns = 10 * MS
        self.warnings = ["user <script>alert(1)</script> warning"]
        self.meta = {"start_ns": T0, "end_ns": T0 + 10 * MS, "clock": "CLOCK_REALTIME",
                     "gpu_available": with_gpu, "command_buffers_disabled": True,
                     "unavailable_reason": "" if with_gpu else
                     "no CUDA driver found: install the NVIDIA driver",
                     "dropped_records": self.dropped_records, "incomplete_records": 0}
        self._with_ops = with_ops

    # The same records in a real C++ TraceStore, as a Profile has one: the reports run the C++
    # analysis (transfers, memory, roofline, FPGA model, attribution) on it. Built from the
    # tables as they are now (tests change them before collecting).
    @property
    def store(self):
        # rebuilt only when a test has replaced a table (or the devices)
        key = tuple(id(getattr(self, a, None)) for a, _ in STORE_TABLES + (("syncs", ""),)) \
            + (id(self.devices),)
        cached = self.__dict__.get("_store_cache")
        if cached is None or cached[0] != key:
            cached = (key, store_of(self))
            self.__dict__["_store_cache"] = cached
        return cached[1]

    @property
    def ops(self):
        if not self._with_ops:
            # what a real Profile gives for this trace: the attribution of its store, which
            # finds no op (no HLO module in the trace)
            from fpgaprof.analysis import attribution
            return attribution.attribute(self.store).ops
        # fusion_a: 2 kernels, 1.0 ms; 1e6 FLOPs and 4e6 bytes per call
        # gemm: 1 kernel, 1.0 ms; 2e9 FLOPs and 1e7 bytes per call
        # (the keys of the attribution's OpStats rows; mean_ns = total_ns / timed_executions)
        return [
            {"hlo_op": "fusion.1", "module_name": "jit_f", "category": "loop", "executions": 2,
             "timed_executions": 2, "kernel_count": 2, "total_ns": 1_000_000, "mean_ns": 500_000.0, "has_cost": True,
             "cost_unknown": False, "flops": 1e6, "bytes_accessed": 4e6,
             "pattern": "elementwise", "source_file": "model.py", "source_line": 12},
            {"hlo_op": "dot.2", "module_name": "jit_f", "category": "dot", "executions": 1,
             "timed_executions": 1, "kernel_count": 1, "total_ns": 1_000_000, "mean_ns": 1_000_000.0, "has_cost": True,
             "cost_unknown": False, "flops": 2e9, "bytes_accessed": 1e7,
             "pattern": "dot", "source_file": "model.py", "source_line": 20},
        ]

    def ceilings(self):
        """Shaped like fpgaprof.roofline.ceilings(); H100 SXM datasheet figures."""
        if not self._with_ceilings:
            raise AttributeError("no ceilings in this test profile")
        return {"device_name": DEVICE["name"], "architecture": "sm_90 (H100 SXM)",
                "peak_flops_per_s": {"fp64": 67e12, "fp32": 67e12, "fp16_tensor": 989e12,
                                     "fp8_tensor": 0.0},
                "flops_source": {"fp64": "table", "fp32": "table", "fp16_tensor": "table"},
                "dram_bytes_per_s": 3.35e12, "dram_source": "table"}


# Table attribute of SyntheticProfile -> record table of the TraceStore. Not the markers: the
# XlaModule range would attribute kernels to module jit_f, which the timeline tests' events do
# not carry (the store holds no HLO module, so the attribution finds no op either way).
STORE_TABLES = (("kernels", "kernels"), ("transfers", "memcpys"), ("memsets", "memsets"),
                ("allocations", "allocations"), ("api_calls", "api_calls"),
                ("regions", "regions"))


def store_of(prof):
    """A fpgaprof._core.TraceStore holding prof's records, devices and trace facts."""
    from fpgaprof.base.core import core
    s = core.TraceStore()
    for attr, table in STORE_TABLES + (("syncs", "syncs"),):
        if not hasattr(prof, attr):
            continue  # (syncs: only where a test adds them)
        src = getattr(prof, attr).columns()
        known = set(getattr(s, table).columns()) | {"grid_x", "grid_y", "grid_z", "block_x",
                                                     "block_y", "block_z"}
        keys = [k for k in src if k in known and k not in ("launch_config", "marker_index")]
        n = len(next(iter(src.values()))) if src else 0
        for i in range(n):
            s.append(table, **{k: _plain(src[k][i]) for k in keys})
    for d in prof.devices:
        info = core.DeviceInfo()
        for k, v in d.items():
            setattr(info, k, v)
        s.add_device(info)
    meta = prof.meta
    s.set_meta(start_ns=meta["start_ns"], end_ns=meta["end_ns"],
               dropped_records=meta["dropped_records"])
    return s


def _plain(v):
    return v.item() if hasattr(v, "item") else v
