"""XProf / jax.profiler.trace profiles (XSpace, ``<host>.xplane.pb``) read into a TraceStore, so
that every analysis runs on them (docs/reports.md, "Reading XProf and jax.profiler traces").

What comes in, by XLA's plane and stat names (xla/tsl/profiler/utils/xplane_schema.h):

- ``/device:GPU:<id>`` planes: kernels (launch shape from ``kernel_details``), copies (events
  named ``Memcpy*``: bytes from ``memcpy_details``), memsets (``Memset*``); the line is the
  stream unless a ``stream_id`` stat says otherwise; the plane's stats give the device.
- ``/host:CUPTI``: the CUDA API calls (joined to the GPU work by ``correlation_id``).
- ``/host:CPU``: host ranges as NVTX-like markers (fpgaprof's own export: its NVTX ranges and
  regions, restored as they were).
- ``/host:metadata``: the HLO modules (``Hlo Proto``, turned into HLO text by jaxlib; or the text
  fpgaprof's export carries).
- Kernels that carry XLA's ``hlo_op`` / ``hlo_module`` / ``program_id`` stats but no XLA NVTX
  range (a jax.profiler trace) get the ranges XLA pushes while tracing with NVTX
  (``XlaModule:#hlo_module=…,program_id=…#`` and ``Thunk:#hlo_op=…#``) around their launch
  call, one per launch, so the attribution reads them as it reads a CUPTI trace's.

- Hardware counter values of kernels and copies, where fpgaprof's export carried them
  (``fpgaprof_counter:<metric>`` stats; XLA's own XSpaces have none).

Not in an XSpace, so not imported: allocations, synchronizations, counter ranges that were not
paired with a kernel or copy.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable
from typing import Any

from fpgaprof.analysis import hlo
from fpgaprof.base import xplane
from fpgaprof.base.core import core
from fpgaprof.base.errors import FpgaprofIOError, TraceFormatError

__all__ = [
    "is_xspace_path",
    "xspace_file",
    "store_from_xspace",
    "NO_GPU_REASON",
]

FP = xplane.FPGAPROF_STAT_PREFIX
COUNTER_STAT = xplane.COUNTER_STAT_PREFIX
NONE32 = 0xFFFFFFFF
NO_GPU_REASON = (
    "the XProf profile holds no GPU plane (/device:GPU:*): it was recorded without a GPU "
    "(a CPU-only jax.profiler.trace), so there are no kernels, copies or memsets to analyse"
)

_DETAIL = re.compile(r"(\w+):(\S+)")
_COPY_KINDS = {
    "H2D": "HtoD",
    "D2H": "DtoH",
    "D2D": "DtoD",
    "P2P": "PtoP",
    "H2H": "HtoH",
    "HtoD": "HtoD",
    "DtoH": "DtoH",
    "DtoD": "DtoD",
    "PtoP": "PtoP",
    "HtoH": "HtoH",
}


def xspace_file(path: str) -> str | None:
    """The .xplane.pb that `path` names: the file itself, or in a jax.profiler.trace folder
    (DIR/plugins/profile/<run>/<host>.xplane.pb, or <run>/ itself) the newest run's; None when
    `path` is neither. Raises FpgaprofIOError for a run with several hosts."""
    if os.path.isfile(path):
        return path if path.endswith(".xplane.pb") else None
    if not os.path.isdir(path):
        return None
    here = sorted(glob.glob(os.path.join(path, "*.xplane.pb")))
    if not here:
        runs = sorted(
            d
            for d in glob.glob(os.path.join(path, "plugins", "profile", "*"))
            if glob.glob(os.path.join(d, "*.xplane.pb"))
        )
        if not runs:
            return None
        here = sorted(glob.glob(os.path.join(runs[-1], "*.xplane.pb")))
    if len(here) > 1:
        raise FpgaprofIOError(
            f"{os.path.dirname(here[0])}: profiles of {len(here)} hosts "
            f"({', '.join(os.path.basename(h) for h in here)}); give one .xplane.pb"
        )
    return here[0]


def is_xspace_path(path: str) -> bool:
    """True for a .xplane.pb file or a folder holding one as jax.profiler.trace writes it."""
    try:
        return xspace_file(path) is not None
    except FpgaprofIOError:
        return True


class _Plane:
    """Names of a plane's event and stat metadata, and its stats as a dict."""

    def __init__(self, plane: Any) -> None:
        self.plane = plane
        self.stat_names = {m.id: m.name for m in plane.stat_metadata.values()}
        self.event_names = {k: m.name for k, m in plane.event_metadata.items()}

    def stats(self, holder: Any) -> dict[str, Any]:
        out = {}
        for st in holder.stats:
            kind = st.WhichOneof("value")
            if kind is None:
                continue
            v = getattr(st, kind)
            if kind == "ref_value":
                v = self.stat_names.get(v, "")
            elif kind == "bytes_value":
                v = bytes(v)
            out[self.stat_names.get(st.metadata_id, "")] = v
        return out

    def events(self) -> Iterable[tuple[Any, str, int, int, dict[str, Any]]]:
        """(line, event name, start_ns, end_ns, stats) of every event (the event's metadata
        stats first, its own over them)."""
        md_stats = {k: self.stats(m) for k, m in self.plane.event_metadata.items()}
        for line in self.plane.lines:
            t0 = int(line.timestamp_ns)
            for ev in line.events:
                start = t0 + int(ev.offset_ps) // 1000
                end = start + int(ev.duration_ps) // 1000
                st = dict(md_stats.get(ev.metadata_id, {}))
                st.update(self.stats(ev))
                yield line, self.event_names.get(ev.metadata_id, ""), start, end, st


def _details(text: Any) -> dict[str, str]:
    return dict(_DETAIL.findall(str(text or "")))


def _int(v: Any, default: int = 0) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def _memory_kind(name: Any) -> str:
    n = str(name or "").lower()
    return n if n in core.MEMORY_KIND_NAMES else "unknown"


def _counters(store: Any, st: dict[str, Any], ranges: list[int], **target: int) -> None:
    """The counter values fpgaprof's export put on a kernel or copy event, as one counter range
    of that kernel or copy (ranges[0]: the ranges read so far, numbering them)."""
    values = [(k[len(COUNTER_STAT) :], v) for k, v in st.items() if k.startswith(COUNTER_STAT)]
    if not values:
        return
    for metric, value in values:
        store.append("counters", range_index=ranges[0], metric=metric, value=float(value), **target)
    ranges[0] += 1


def _hlo_modules(store: Any, plane: _Plane, warnings: list[str]) -> None:
    for md in plane.plane.event_metadata.values():
        st = plane.stats(md)
        name = re.sub(r"\(\d+\)$", "", md.name)
        program_id = _int(st.get("program_id"), -1)
        if program_id < 0:
            m = re.search(r"\((\d+)\)$", md.name)
            program_id = int(m.group(1)) if m else md.id
        text = st.get(FP + "hlo_text")
        if not text and st.get(xplane.HLO_PROTO_STAT):
            text = _hlo_text(st[xplane.HLO_PROTO_STAT], md.name, warnings)
        if text:
            # fpgaprof's export carries XLA's buffer-assignment and live-range dumps (XLA's own
            # XSpaces do not: then the FPGA model's on-chip sizes come from the cost model)
            store.add_hlo_module(
                name,
                program_id,
                str(text),
                str(st.get(FP + "buffer_assignment") or ""),
                str(st.get(FP + "live_ranges") or ""),
            )


def _hlo_text(hlo_proto: bytes, name: str, warnings: list[str]) -> str:
    """An HloProto's module as HLO text, by XLA's printer (jaxlib)."""
    pb = xplane.messages()
    try:
        xla_hlo = hlo.xla_hlo_bindings()
        proto = pb.HloProto()
        proto.ParseFromString(hlo_proto)
        return str(xla_hlo.HloModule.from_serialized_hlo_module_proto(proto.hlo_module).to_string())
    except Exception as e:  # noqa: BLE001 - no jaxlib, or a proto it cannot read: said
        warnings.append(f"HLO module {name} of the XProf profile could not be read ({e})")
        return ""


def _device(store: Any, dev: int, st: dict[str, Any]) -> None:
    info = core.DeviceInfo()
    info.id = dev
    fields = {
        "compute_capability_major": st.get("compute_cap_major"),
        "compute_capability_minor": st.get("compute_cap_minor"),
        "sm_count": st.get("core_count"),
        "core_clock_khz": st.get("clock_rate"),
        "global_memory_bytes": st.get("memory_size"),
    }
    prefix = FP + "device_"
    fields.update({k[len(prefix) :]: v for k, v in st.items() if k.startswith(prefix)})
    for k, v in fields.items():
        if v is not None and hasattr(info, k) and k != "id":
            setattr(info, k, v if isinstance(v, str) else int(v))
    store.add_device(info)


def store_from_xspace(path: str) -> Any:
    """A TraceStore (correlated, with its HLO modules) from the XSpace file `path`. Raises
    TraceFormatError when the file is not an XSpace, FpgaprofError when this build cannot
    read XSpaces."""
    pb = xplane.messages()
    space = pb.XSpace()
    try:
        with open(path, "rb") as f:
            space.ParseFromString(f.read())
    except OSError as e:
        raise FpgaprofIOError(f"{path}: {e.strerror or e}")
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and its relatives
        raise TraceFormatError(f"{path}: not an XProf profile (XSpace): {e}")

    store = core.TraceStore()
    warnings: list[str] = [f"imported from the XProf profile {path}"]
    planes = {p.name: _Plane(p) for p in space.planes}
    gpu = sorted(
        (int(n[len(xplane.GPU_PLANE_PREFIX) :]), p)
        for n, p in planes.items()
        if n.startswith(xplane.GPU_PLANE_PREFIX) and n[len(xplane.GPU_PLANE_PREFIX) :].isdigit()
    )

    # API calls first: the GPU work takes its launch thread from them
    api_of: dict[int, tuple[int, int, int]] = {}  # correlation id -> (thread, start, end)
    cupti = planes.get(xplane.CUPTI_PLANE)
    if cupti is not None:
        for line, name, start, end, st in cupti.events():
            corr = _int(st.get("correlation_id"))
            kind = st.get("api") or (
                "driver" if name.startswith("cu") and not name.startswith("cuda") else "runtime"
            )
            store.append(
                "api_calls",
                start_ns=start,
                end_ns=end,
                correlation_id=corr,
                thread_id=int(line.id) & NONE32,
                name=name,
                kind=str(kind),
                callback_id=_int(st.get(FP + "cbid")),
                return_value=_int(st.get(FP + "return")),
            )
            if corr:
                api_of[corr] = (int(line.id) & NONE32, start, end)

    xla_ranges = False
    host = planes.get(xplane.HOST_THREADS_PLANE)
    if host is not None:
        for line, name, start, end, st in host.events():
            thread = int(line.id) & NONE32
            if FP + "region_depth" in st:
                store.append("regions", start_ns=start, end_ns=end, thread_id=thread, name=name)
                continue
            instant = bool(_int(st.get(FP + "instant")))
            store.append(
                "markers",
                start_ns=start,
                end_ns=start if instant else end,
                thread_id=thread,
                domain=str(st.get("nvtx_domain", "xprof")),
                name=name,
                is_range=not instant,
                is_closed=not bool(_int(st.get(FP + "open"))),
            )
            xla_ranges = xla_ranges or name.startswith("XlaModule:")

    thunks: list[tuple[int, int, int, str, str, int]] = []
    ranges = [0]  # counter ranges read back (fpgaprof's export)
    for dev, plane in gpu:
        _device(store, dev, plane.stats(plane.plane))
        for line, name, start, end, st in plane.events():
            corr = _int(st.get("correlation_id"))
            thread, api_start, api_end = api_of.get(corr, (0, 0, 0))
            common = {
                "start_ns": start,
                "end_ns": end,
                "correlation_id": corr,
                "thread_id": thread,
                "device_id": _int(st.get("device_id"), dev),
                "context_id": _int(st.get("context_id")),
                "stream_id": _int(st.get("stream_id"), int(line.id)),
            }
            launch_ns = _int(st.get(FP + "launch_ns"), api_start)
            if "memcpy_details" in st or name.startswith("Memcpy"):
                d = _details(st.get("memcpy_details"))
                kind = st.get(FP + "copy_kind") or _COPY_KINDS.get(name[len("Memcpy") :], "unknown")
                rec = dict(
                    common,
                    launch_ns=launch_ns,
                    bytes=_int(st.get(FP + "bytes"), _int(d.get("size"))),
                    copy_kind=str(kind),
                    src_kind=_memory_kind(d.get("kind_src")),
                    dst_kind=_memory_kind(d.get("kind_dst")),
                    is_async=bool(_int(d.get("async"))),
                    graph_id=_int(st.get(FP + "graph_id")),
                )
                for k in ("src_device_id", "dst_device_id"):
                    if FP + k in st:
                        rec[k] = _int(st[FP + k]) & NONE32
                store.append("memcpys", **rec)
                _counters(store, st, ranges, memcpy_index=len(store.memcpys) - 1)
            elif "memset_details" in st or name.startswith("Memset"):
                d = _details(st.get("memset_details"))
                store.append(
                    "memsets",
                    **common,
                    launch_ns=launch_ns,
                    bytes=_int(d.get("size")),
                    value=_int(st.get(FP + "value")),
                    memory_kind=_memory_kind(st.get(FP + "memory_kind", d.get("kind"))),
                    is_async=bool(_int(d.get("async"))),
                )
            else:
                d = _details(st.get("kernel_details"))
                grid = (d.get("grid") or "1,1,1").split(",")
                block = (d.get("block") or "1,1,1").split(",")
                store.append(
                    "kernels",
                    **common,
                    launch_ns=launch_ns,
                    name=name,
                    grid_x=_int(grid[0], 1),
                    grid_y=_int(grid[1] if len(grid) > 1 else 1, 1),
                    grid_z=_int(grid[2] if len(grid) > 2 else 1, 1),
                    block_x=_int(block[0], 1),
                    block_y=_int(block[1] if len(block) > 1 else 1, 1),
                    block_z=_int(block[2] if len(block) > 2 else 1, 1),
                    registers_per_thread=_int(d.get("regs")),
                    static_shared_bytes=_int(d.get("static_shared")),
                    dynamic_shared_bytes=_int(d.get("dynamic_shared")),
                    local_bytes_per_thread=_int(st.get(FP + "local_bytes_per_thread")),
                    graph_id=_int(st.get(FP + "graph_id")),
                )
                _counters(store, st, ranges, kernel_index=len(store.kernels) - 1)
                op, module = st.get("hlo_op"), st.get("hlo_module")
                if op and module and api_end:
                    pid = _int(st.get("program_id"), -1)
                    thunks.append((thread, api_start, api_end, str(module), str(op), pid))

    if thunks and not xla_ranges:
        # XLA's own ranges, as its NVTX annotations would have put them (docs/attribution.md)
        for thread, start, end, module, op, pid in thunks:
            ident = f"hlo_module={module}" + (f",program_id={pid}" if pid >= 0 else "")
            for name, lo, hi in (
                (f"XlaModule:#{ident}#", start - 2, end + 2),
                (f"Thunk:#hlo_op={op}#", start - 1, end + 1),
            ):
                store.append(
                    "markers",
                    start_ns=max(lo, 0),
                    end_ns=hi,
                    thread_id=thread,
                    domain="TSL",
                    name=name,
                    is_range=True,
                    is_closed=True,
                )
        warnings.append(
            f"XLA's module and op ranges were rebuilt from the kernels' hlo_op/hlo_module "
            f"stats ({len(thunks)} launches: one op execution per launch)"
        )

    meta_plane = planes.get(xplane.METADATA_PLANE)
    if meta_plane is not None:
        _hlo_modules(store, meta_plane, warnings)

    env = planes.get(xplane.TASK_ENV_PLANE)
    env_st = env.stats(env.plane) if env is not None else {}
    starts = [int(x) for x in _all_times(store, "start_ns")]
    ends = [int(x) for x in _all_times(store, "end_ns")]
    start_ns = _int(env_st.get("profile_start_time")) or (min(starts) if starts else 0)
    end_ns = _int(env_st.get("profile_stop_time")) or (max(ends) if ends else 0)
    if starts and (start_ns > min(starts) or end_ns < max(ends)):
        # the environment's times are on another clock (jax: its own): the records' span
        start_ns, end_ns = min(starts), max(ends)
    meta: dict[str, Any] = {"start_ns": start_ns, "end_ns": end_ns, "gpu_available": bool(gpu)}
    if not gpu:
        meta["unavailable_reason"] = NO_GPU_REASON
        warnings.append(NO_GPU_REASON)
    for k in ("dropped_records", "driver_version", "cupti_version"):
        if FP + k in env_st:
            meta[k] = _int(env_st[FP + k])
    if FP + "command_buffers_disabled" in env_st:
        meta["command_buffers_disabled"] = bool(_int(env_st[FP + "command_buffers_disabled"]))
    store.set_meta(**meta)
    for w in list(space.warnings) + warnings:
        store.add_warning(str(w))
    store.correlate()
    return store


def _all_times(store: Any, key: str) -> list[int]:
    out: list[int] = []
    for table in (store.kernels, store.memcpys, store.memsets, store.api_calls):
        cols = table.columns()
        if key in cols:
            out.extend(int(x) for x in cols[key])
    return out
