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

import errno
import glob
import os
import re
import stat
from collections import ChainMap
from collections.abc import Iterable
from typing import Any

from fpgaprof.analysis import hlo
from fpgaprof.base import xplane
from fpgaprof.base.core import core
from fpgaprof.base.errors import FpgaprofIOError, InvalidArgumentError, TraceFormatError

__all__ = [
    "is_xspace_path",
    "xspace_file",
    "store_from_xspace",
    "NO_GPU_REASON",
    "MAX_GPU_PLANES",
    "XSPACE_MAX_BYTES",
]

FP = xplane.FPGAPROF_STAT_PREFIX
COUNTER_STAT = xplane.COUNTER_STAT_PREFIX
NONE32 = 0xFFFFFFFF
NO_GPU_REASON = (
    "the XProf profile holds no GPU plane (/device:GPU:*): it was recorded without a GPU "
    "(a CPU-only jax.profiler.trace), so there are no kernels, copies or memsets to analyse"
)

# protobuf refuses messages of 2 GiB or more: a larger .xplane.pb is not an XSpace, and is
# refused before it is read.
XSPACE_MAX_BYTES = (2 << 30) - 1
# GPU planes imported per XSpace (one host's GPUs: 8 on the largest common nodes); planes
# beyond it are left out and counted in the warnings, so that a forged XSpace of thousands of
# planes cannot make every per-device table of a report thousands of rows long.
MAX_GPU_PLANES = 64
_GPU_ID = re.compile(r"[0-9]+", re.ASCII)
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1
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
    if not os.path.isdir(path):
        # a FIFO or device named .xplane.pb too: read_xspace says what it is, without reading
        return path if path.endswith(".xplane.pb") and os.path.lexists(path) else None
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

    def events(self) -> Iterable[tuple[Any, str, int, int, ChainMap]]:
        """(line, event name, start_ns, end_ns, stats) of every event: its own stats over its
        metadata's (a ChainMap, so that an event costs its own stats only: N stats on one
        metadata shared by M events cost N + M, not N x M)."""
        md_stats = {k: self.stats(m) for k, m in self.plane.event_metadata.items()}
        empty: dict[str, Any] = {}
        for line in self.plane.lines:
            t0 = int(line.timestamp_ns)
            for ev in line.events:
                start = t0 + int(ev.offset_ps) // 1000
                end = start + int(ev.duration_ps) // 1000
                st = ChainMap(self.stats(ev), md_stats.get(ev.metadata_id, empty))
                yield line, self.event_names.get(ev.metadata_id, ""), start, end, st


def _details(text: Any) -> dict[str, str]:
    return dict(_DETAIL.findall(str(text or "")))


def _int(v: Any, default: int = 0) -> int:
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):  # not a number, NaN, infinity
        return default


def _memory_kind(name: Any) -> str:
    n = str(name or "").lower()
    return n if n in core.MEMORY_KIND_NAMES else "unknown"


def _counters(
    add: Any, st: ChainMap, ranges: list[int], path: str, where: str, **target: int
) -> None:
    """The counter values fpgaprof's export put on a kernel or copy event (its own stats, where
    the export writes them), as one counter range of that kernel or copy (ranges[0]: the ranges
    read so far, numbering them)."""
    own = st.maps[0]
    values = [(k[len(COUNTER_STAT) :], v) for k, v in own.items() if k.startswith(COUNTER_STAT)]
    if not values:
        return
    for metric, value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TraceFormatError(
                f"{path}: {where}: counter {metric!r} is {_shown(value)}, not a number"
            )
        # an XStat number is an int64, uint64 or double: every one is a float
        add("counters", where, range_index=ranges[0], metric=metric, value=float(value), **target)
    ranges[0] += 1


def _shown(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _hlo_modules(store: Any, plane: _Plane, warnings: list[str]) -> None:
    for md in plane.plane.event_metadata.values():
        st = plane.stats(md)
        name = re.sub(r"\(\d+\)$", "", md.name)
        program_id = _int(st.get("program_id"), -1)
        if not 0 <= program_id <= INT64_MAX:
            m = re.search(r"\(([0-9]{1,18})\)$", md.name)
            program_id = int(m.group(1)) if m else md.id
        if not 0 <= program_id <= INT64_MAX:
            program_id = -1  # none that fits: the module is matched by name alone
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


# DeviceInfo's fields (records.hpp) and the largest value each takes: the device stats of
# fpgaprof's export (fpgaprof_device_<field>) and XLA's own plane stats map onto these.
_DEVICE_TEXT = ("name", "uuid")
_DEVICE_NUMBERS = {
    "compute_capability_major": NONE32,
    "compute_capability_minor": NONE32,
    "sm_count": NONE32,
    "core_clock_khz": UINT64_MAX,
    "memory_clock_khz": UINT64_MAX,
    "memory_bus_width_bits": NONE32,
    "global_memory_bytes": UINT64_MAX,
    "l2_cache_bytes": UINT64_MAX,
    "shared_memory_per_sm_bytes": UINT64_MAX,
    "max_threads_per_sm": NONE32,
    "max_registers_per_sm": NONE32,
    "pcie_generation": NONE32,
    "pcie_link_width": NONE32,
}


def _device(store: Any, dev: int, st: dict[str, Any], where: str, warnings: list[str]) -> None:
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
    unknown = []
    for k, v in fields.items():
        if v is None or k == "id":
            continue
        if k in _DEVICE_TEXT:
            if not isinstance(v, str):
                raise TraceFormatError(f"{where}: device field {k} is {_shown(v)}, not text")
            setattr(info, k, v)
        elif k in _DEVICE_NUMBERS:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool)
            if not (ok and (isinstance(v, int) or v.is_integer()) and 0 <= v <= _DEVICE_NUMBERS[k]):
                raise TraceFormatError(
                    f"{where}: device field {k} = {_shown(v)} is not a whole number from 0 to "
                    f"{_DEVICE_NUMBERS[k]}"
                )
            setattr(info, k, int(v))
        else:
            unknown.append(k)
    if unknown:
        # a newer export's field, or none at all: said, not guessed at
        warnings.append(
            f"{where}: device fields this fpgaprof does not know were left out: "
            + ", ".join(_shown(k) for k in sorted(unknown)[:8])
            + (f" and {len(unknown) - 8} more" if len(unknown) > 8 else "")
        )
    store.add_device(info)


def read_xspace(path: str) -> bytearray:
    """The bytes of the .xplane.pb `path`: a regular file of at most XSPACE_MAX_BYTES (a
    folder, device, FIFO or socket is refused before anything is read, a FIFO opened without
    waiting for a writer; FpgaprofIOError), read up to its size as it was when opened."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.ENXIO:  # a socket cannot be opened
            raise FpgaprofIOError(
                f"{path}: is a socket, not an XProf profile: give the .xplane.pb file "
                "jax.profiler.trace wrote (only regular files are read)"
            ) from None
        raise FpgaprofIOError(f"{path}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = (
                "a folder"
                if stat.S_ISDIR(st.st_mode)
                else "a FIFO"
                if stat.S_ISFIFO(st.st_mode)
                else "a socket"
                if stat.S_ISSOCK(st.st_mode)
                else "a device"
            )
            raise FpgaprofIOError(
                f"{path}: is {kind}, not an XProf profile: give the .xplane.pb file "
                "jax.profiler.trace wrote (only regular files are read)"
            )
        if st.st_size > XSPACE_MAX_BYTES:
            raise TraceFormatError(
                f"{path}: not an XProf profile (XSpace): {st.st_size:,} bytes, larger than a "
                f"protobuf message can be ({XSPACE_MAX_BYTES:,} bytes at most)"
            )
        buf = bytearray(st.st_size)
        view = memoryview(buf)
        done = 0
        while done < len(buf):
            n = os.readv(fd, [view[done : done + (1 << 24)]])
            if n == 0:
                break  # shortened while read: protobuf says what is missing
            done += n
        view.release()
        del buf[done:]
        return buf
    except OSError as e:
        raise FpgaprofIOError(f"{path}: {e.strerror or e}") from None
    finally:
        os.close(fd)


def store_from_xspace(path: str) -> Any:
    """A TraceStore (correlated, with its HLO modules) from the XSpace file `path`. Raises
    TraceFormatError when the file is not an XSpace, FpgaprofError when this build cannot
    read XSpaces."""
    pb = xplane.messages()
    space = pb.XSpace()
    data = read_xspace(path)
    try:
        space.ParseFromString(data)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and its relatives
        why = str(e) or f"protobuf cannot parse its {len(data):,} bytes ({type(e).__name__})"
        raise TraceFormatError(f"{path}: not an XProf profile (XSpace): {why}") from None
    del data

    store = core.TraceStore()
    warnings: list[str] = [f"imported from the XProf profile {path}"]

    def add(table: str, where: str, **fields: Any) -> None:
        """store.append, a value out of the record's range (InvalidArgumentError naming the
        field) as a TraceFormatError naming the file and the event."""
        try:
            store.append(table, **fields)
        except InvalidArgumentError as e:
            raise TraceFormatError(f"{path}: {where}: {e}") from None

    planes = {p.name: _Plane(p) for p in space.planes}
    gpu_all = []
    for n, p in planes.items():
        digits = n[len(xplane.GPU_PLANE_PREFIX) :]
        if n.startswith(xplane.GPU_PLANE_PREFIX) and _GPU_ID.fullmatch(digits):
            if len(digits) > 10 or int(digits) > NONE32 - 1:
                shown = digits if len(digits) <= 20 else digits[:20] + "..."
                raise TraceFormatError(
                    f"{path}: plane {_shown(n)}: GPU id {shown} is beyond a device id "
                    f"(0 to {NONE32 - 1})"
                )
            gpu_all.append((int(digits), p))
    gpu_all.sort(key=lambda dp: dp[0])
    gpu = gpu_all[:MAX_GPU_PLANES]
    if len(gpu_all) > len(gpu):
        warnings.append(
            f"the XProf profile has {len(gpu_all):,} GPU planes: the first {MAX_GPU_PLANES} "
            f"(/device:GPU:{gpu[0][0]} to /device:GPU:{gpu[-1][0]}) are imported, "
            f"{len(gpu_all) - len(gpu):,} left out (one host has at most a few dozen GPUs)"
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
            add(
                "api_calls",
                f"{xplane.CUPTI_PLANE} event {_shown(name)}",
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
            where = f"{xplane.HOST_THREADS_PLANE} event {_shown(name)}"
            if FP + "region_depth" in st:
                add("regions", where, start_ns=start, end_ns=end, thread_id=thread, name=name)
                continue
            instant = bool(_int(st.get(FP + "instant")))
            add(
                "markers",
                where,
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
        _device(store, dev, plane.stats(plane.plane), f"{path}: plane {plane.plane.name}", warnings)
        for line, name, start, end, st in plane.events():
            where = f"plane {plane.plane.name} event {_shown(name)}"
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
                add("memcpys", where, **rec)
                _counters(add, st, ranges, path, where, memcpy_index=len(store.memcpys) - 1)
            elif "memset_details" in st or name.startswith("Memset"):
                d = _details(st.get("memset_details"))
                add(
                    "memsets",
                    where,
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
                add(
                    "kernels",
                    where,
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
                _counters(add, st, ranges, path, where, kernel_index=len(store.kernels) - 1)
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
                add(
                    "markers",
                    f"the XLA range of a kernel launch of {_shown(op)}",
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

    def env_int(key: str, top: int) -> int:
        v = env_st.get(key)
        n = _int(v, -1)
        if not 0 <= n <= top:
            raise TraceFormatError(
                f"{path}: plane {xplane.TASK_ENV_PLANE}: stat {key} = {_shown(v)} is not a whole "
                f"number from 0 to {top}"
            )
        return n

    first, last = _span(store)
    start_ns = env_int("profile_start_time", INT64_MAX) if "profile_start_time" in env_st else 0
    end_ns = env_int("profile_stop_time", INT64_MAX) if "profile_stop_time" in env_st else 0
    start_ns = start_ns or (first if first is not None else 0)
    end_ns = end_ns or (last if last is not None else 0)
    if first is not None and last is not None and (start_ns > first or end_ns < last):
        # the environment's times are on another clock (jax: its own): the records' span
        start_ns, end_ns = first, last
    if end_ns > INT64_MAX or end_ns < start_ns:
        raise TraceFormatError(
            f"{path}: the profile's times run from {start_ns} to {end_ns} ns: not a span a "
            f"trace can hold (0 to {INT64_MAX}, end after start)"
        )
    meta: dict[str, Any] = {"start_ns": start_ns, "end_ns": end_ns, "gpu_available": bool(gpu)}
    if not gpu:
        meta["unavailable_reason"] = NO_GPU_REASON
        warnings.append(NO_GPU_REASON)
    for k, top in (
        ("dropped_records", INT64_MAX),
        ("driver_version", NONE32),
        ("cupti_version", NONE32),
    ):
        if FP + k in env_st:
            meta[k] = env_int(FP + k, top)
    if FP + "command_buffers_disabled" in env_st:
        meta["command_buffers_disabled"] = bool(_int(env_st[FP + "command_buffers_disabled"]))
    store.set_meta(**meta)
    for w in list(space.warnings) + warnings:
        store.add_warning(str(w), "capture.xspace_import")
    store.correlate()
    return store


def _span(store: Any) -> tuple[int | None, int | None]:
    """The first start and the last end of the kernels, copies, memsets and API calls (None
    without any)."""
    first: int | None = None
    last: int | None = None
    for table in (store.kernels, store.memcpys, store.memsets, store.api_calls):
        cols = table.columns()
        if len(cols.get("start_ns", ())):
            lo, hi = int(cols["start_ns"].min()), int(cols["end_ns"].max())
            first = lo if first is None else min(first, lo)
            last = hi if last is None else max(last, hi)
    return first, last
