"""A TraceStore built from plain Python lists, through the store's public bindings
(TraceStore.append / add_device / add_hlo_module / set_meta): the tests of the analysis build
their traces with it. Each table's rows are dicts of a few short keys; a key left out takes the
record's default (no region, no marker, device 0, thread 0)."""

from __future__ import annotations

from typing import Any

from fpgaprof.base.core import core

NONE32 = 0xFFFFFFFF


def store_from_lists(spec: dict[str, Any]) -> Any:
    """spec: {"devices", "kernels", "memcpys", "memsets", "allocations", "regions", "syncs",
    "hlo_modules": [dict, ...], "start_ns", "end_ns"} (every key optional). Strings are interned
    in this order (devices, kernels, memcpys, memsets, allocations, regions, syncs)."""
    s = core.TraceStore()
    for d in spec.get("devices", []):
        x = core.DeviceInfo()
        x.name = d.get("name", "")
        x.uuid = d.get("uuid", "")
        x.compute_capability_major = d.get("cc_major", 0)
        x.compute_capability_minor = d.get("cc_minor", 0)
        x.sm_count = d.get("sm_count", 0)
        x.core_clock_khz = d.get("core_clock_khz", 0)
        x.memory_clock_khz = d.get("memory_clock_khz", 0)
        x.memory_bus_width_bits = d.get("memory_bus_width_bits", 0)
        x.pcie_generation = d.get("pcie_generation", 0)
        x.pcie_link_width = d.get("pcie_link_width", 0)
        x.id = d.get("id", len(s.devices))
        s.add_device(x)
    for d in spec.get("kernels", []):
        s.append(
            "kernels",
            start_ns=d.get("start_ns", 0),
            end_ns=d.get("end_ns", 0),
            name=d.get("name", ""),
            grid_x=d.get("grid", 1),
            grid_y=1,
            grid_z=1,
            region_index=d.get("region", NONE32),
            marker_index=d.get("marker", NONE32),
            device_id=d.get("device", 0),
            thread_id=d.get("thread_id", 0),
        )
    for d in spec.get("memcpys", []):
        s.append(
            "memcpys",
            start_ns=d.get("start_ns", 0),
            end_ns=d.get("end_ns", 0),
            bytes=d.get("bytes", 0),
            copy_kind=d.get("copy_kind", 0),
            src_kind=d.get("src_kind", 0),
            dst_kind=d.get("dst_kind", 0),
            is_async=bool(d.get("async", False)),
            region_index=d.get("region", NONE32),
            device_id=d.get("device", 0),
            thread_id=d.get("thread_id", 0),
        )
    for d in spec.get("memsets", []):
        s.append(
            "memsets",
            start_ns=d.get("start_ns", 0),
            end_ns=d.get("end_ns", 0),
            bytes=d.get("bytes", 0),
            device_id=d.get("device", 0),
            thread_id=d.get("thread_id", 0),
            region_index=d.get("region", NONE32),
        )
    for d in spec.get("allocations", []):
        s.append(
            "allocations",
            timestamp_ns=d.get("timestamp_ns", 0),
            address=d.get("address", 0),
            bytes=d.get("bytes", 0),
            is_alloc=bool(d.get("alloc", True)),
            region_index=d.get("region", NONE32),
            device_id=d.get("device", 0),
        )
    for d in spec.get("regions", []):
        s.append(
            "regions",
            start_ns=d.get("start_ns", 0),
            end_ns=d.get("end_ns", 0),
            thread_id=d.get("thread_id", 0),
            name=d.get("name", ""),
            parent=d.get("parent", NONE32),
            depth=d.get("depth", 0),
        )
    for d in spec.get("syncs", []):
        s.append(
            "syncs",
            start_ns=d.get("start_ns", 0),
            end_ns=d.get("end_ns", 0),
            thread_id=d.get("thread_id", 0),
        )
    for d in spec.get("hlo_modules", []):
        s.add_hlo_module(d["name"], -1, d["text"])
    s.set_meta(start_ns=spec.get("start_ns", 0), end_ns=spec.get("end_ns", 0))
    return s
