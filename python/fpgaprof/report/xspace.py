"""XProf's XSpace (``<host>.xplane.pb``, what jax.profiler.trace writes): open with
`xprof DIR` or `tensorboard --logdir DIR` (docs/reports.md, "XProf").

Layout, in the names XLA's own CUPTI tracer uses (xplane_schema.h), so XProf's tools
(trace_viewer, kernel_stats, hlo_stats, op_profile, roofline_model, ...) read it:

  plane "/device:GPU:<id>"  one line per CUDA stream ("Stream #<id>"): kernels (stats
                            correlation_id, kernel_details, hlo_op, hlo_module, device_id,
                            stream_id), copies (MemcpyH2D, ...: memcpy_details) and memsets
                            (memset_details); plane stats: the GPU's vendor, compute
                            capability, SMs, clock, memory size and bandwidth
  plane "/host:CUPTI"       one line per OS thread: CUDA runtime and driver calls
                            (correlation_id)
  plane "/host:CPU"         one line per OS thread: NVTX ranges (XLA's module and thunk ranges
                            included) and fpgaprof regions

Times: XLine.timestamp_ns is the line's first start (CUPTI's clock, CLOCK_REALTIME ns),
events are picosecond offsets from it. A renderer of the report layer: it takes the
timeline's model (report.model.TimelineRecords), never a Profile.
"""

from __future__ import annotations

import glob
import os
from typing import Any

import numpy as np

from fpgaprof.analysis import hlo, hlo_export
from fpgaprof.base import records, xplane
from fpgaprof.base.atomic import OutputSet, open_atomic_binary
from fpgaprof.base.core import core
from fpgaprof.report.model import TimelineRecords, untimed_note

__all__ = ["build_xspace", "write_xspace", "COPY_EVENT_NAMES"]

# CUPTI copy kinds as XLA's tracer names the events
COPY_EVENT_NAMES = {
    "HtoD": "MemcpyH2D",
    "DtoH": "MemcpyD2H",
    "DtoD": "MemcpyD2D",
    "PtoP": "MemcpyP2P",
    "HtoH": "MemcpyH2H",
}


# fpgaprof's own stats (XLA has no name for them): what the XSpace import reads back so that a
# trace exported and imported again gives the same analysis
FP = xplane.FPGAPROF_STAT_PREFIX
COUNTER_STAT = xplane.COUNTER_STAT_PREFIX
DEVICE_FIELDS = (
    "name",
    "uuid",
    "memory_clock_khz",
    "memory_bus_width_bits",
    "l2_cache_bytes",
    "pcie_generation",
    "pcie_link_width",
    "core_clock_khz",
    "sm_count",
    "global_memory_bytes",
    "compute_capability_major",
    "compute_capability_minor",
)


class _Plane:
    """An XPlane under construction: event and stat metadata interned by name."""

    def __init__(self, plane: Any) -> None:
        self.plane = plane
        self.events: dict[str, int] = {}
        self.stats: dict[str, int] = {}

    def event_id(self, name: str) -> int:
        i = self.events.get(name)
        if i is None:
            i = self.events[name] = len(self.events) + 1
            md = self.plane.event_metadata[i]
            md.id = i
            md.name = name
        return i

    def stat_id(self, name: str) -> int:
        i = self.stats.get(name)
        if i is None:
            i = self.stats[name] = len(self.stats) + 1
            md = self.plane.stat_metadata[i]
            md.id = i
            md.name = name
        return i

    def stat(self, holder: Any, name: str, value: Any) -> None:
        """An XStat on `holder` (event, plane): int -> int64 (uint64 when above), float ->
        double, str -> str."""
        st = holder.stats.add()
        st.metadata_id = self.stat_id(name)
        if isinstance(value, (bool, np.bool_)):
            st.int64_value = int(value)
        elif isinstance(value, (int, np.integer)):
            v = int(value)
            if v >= 1 << 63:
                st.uint64_value = v
            else:
                st.int64_value = v
        elif isinstance(value, (float, np.floating)):
            st.double_value = float(value)
        else:
            st.str_value = str(value)


def _add_events(
    p: _Plane,
    line: Any,
    names: list[str],
    starts: np.ndarray,
    ends: np.ndarray,
    stats: list[dict[str, Any]],
) -> None:
    """Events of one line, in start order; the line starts at its first event."""
    order = np.argsort(starts, kind="stable")
    t0 = int(starts[order[0]]) if len(order) else 0
    line.timestamp_ns = t0
    last = t0
    for i in order.tolist():
        ev = line.events.add()
        ev.metadata_id = p.event_id(names[i])
        ev.offset_ps = (int(starts[i]) - t0) * 1000
        ev.duration_ps = max(int(ends[i]) - int(starts[i]), 0) * 1000
        last = max(last, int(ends[i]))
        for k, v in stats[i].items():
            if v is not None and v != "":
                p.stat(ev, k, v)
    line.duration_ps = (last - t0) * 1000


def _i64(c: dict[str, np.ndarray], name: str, n: int) -> np.ndarray:
    return np.asarray(records.col(c, name, n)).astype(np.int64)


def _counter_stats(st: dict[str, Any], counters: np.ndarray | None, i: int) -> None:
    """Record i's hardware counter values as "fpgaprof_counter:<metric>" stats (XProf ignores
    them; fpgaprof's import reads them back)."""
    values = counters[i] if counters is not None and i < len(counters) else None
    for metric, value in (values or {}).items():
        st[COUNTER_STAT + metric] = float(value)


def _gpu_rows(kc: dict, mc: dict, sc: dict) -> list[tuple[int, int, str, int, int, dict]]:
    """(device, stream, event name, start_ns, end_ns, stats) of every kernel, copy, memset."""
    rows = []
    nk = records.nrows(kc)
    if nk:
        names = records.names_of(kc, nk).tolist()
        cols = {
            k: _i64(kc, k, nk)
            for k in (
                "start_ns",
                "end_ns",
                "device_id",
                "stream_id",
                "correlation_id",
                "grid_x",
                "grid_y",
                "grid_z",
                "block_x",
                "block_y",
                "block_z",
                "registers_per_thread",
                "static_shared_bytes",
                "dynamic_shared_bytes",
                "local_bytes_per_thread",
                "context_id",
                "graph_id",
                "launch_ns",
            )
        }
        hlo_op = kc.get("hlo_op")
        module = kc.get("module")
        program_id = kc.get("program_id")
        kcounters = kc.get("counters")
        for i in range(nk):
            c = {k: int(v[i]) for k, v in cols.items()}
            details = (
                f"regs:{c['registers_per_thread']} static_shared:{c['static_shared_bytes']} "
                f"dynamic_shared:{c['dynamic_shared_bytes']} "
                f"grid:{c['grid_x']},{c['grid_y']},{c['grid_z']} "
                f"block:{c['block_x']},{c['block_y']},{c['block_z']}"
            )
            st: dict[str, Any] = {
                "correlation_id": c["correlation_id"],
                "kernel_details": details,
                "device_id": c["device_id"],
                "stream_id": c["stream_id"],
                "context_id": c["context_id"],
                FP + "launch_ns": c["launch_ns"],
                FP + "local_bytes_per_thread": c["local_bytes_per_thread"],
            }
            if c["graph_id"]:
                st[FP + "graph_id"] = c["graph_id"]
            if hlo_op is not None and hlo_op[i]:
                st["hlo_op"] = str(hlo_op[i])
            if module is not None and module[i]:
                st["hlo_module"] = str(module[i])
            if program_id is not None and st.get("hlo_op") and int(program_id[i]) >= 0:
                st["program_id"] = int(program_id[i])
            _counter_stats(st, kcounters, i)
            rows.append((c["device_id"], c["stream_id"], names[i], c["start_ns"], c["end_ns"], st))
    nm = records.nrows(mc)
    if nm:
        kinds = records.enum_names(records.col(mc, "copy_kind", nm), core.COPY_KIND_NAMES)
        src = records.enum_names(records.col(mc, "src_kind", nm), core.MEMORY_KIND_NAMES)
        dst = records.enum_names(records.col(mc, "dst_kind", nm), core.MEMORY_KIND_NAMES)
        asyn = np.asarray(records.col(mc, "is_async", nm)).astype(bool)
        cols = {
            k: _i64(mc, k, nm)
            for k in (
                "start_ns",
                "end_ns",
                "device_id",
                "stream_id",
                "context_id",
                "launch_ns",
                "src_device_id",
                "dst_device_id",
                "graph_id",
            )
        }
        nbytes = _i64(mc, "bytes", nm)
        corr = _i64(mc, "correlation_id", nm)
        mcounters = mc.get("counters")
        for i in range(nm):
            kind = str(kinds[i])
            st = {
                "correlation_id": int(corr[i]),
                "memcpy_details": (
                    f"kind_src:{src[i]} kind_dst:{dst[i]} size:{int(nbytes[i])} "
                    f"dest:{int(cols['device_id'][i])} async:{int(asyn[i])}"
                ),
                "device_id": int(cols["device_id"][i]),
                "stream_id": int(cols["stream_id"][i]),
                "context_id": int(cols["context_id"][i]),
                FP + "copy_kind": kind,
                FP + "bytes": int(nbytes[i]),
                FP + "launch_ns": int(cols["launch_ns"][i]),
                FP + "src_device_id": int(cols["src_device_id"][i]),
                FP + "dst_device_id": int(cols["dst_device_id"][i]),
                FP + "graph_id": int(cols["graph_id"][i]),
            }
            _counter_stats(st, mcounters, i)
            rows.append(
                (
                    int(cols["device_id"][i]),
                    int(cols["stream_id"][i]),
                    COPY_EVENT_NAMES.get(kind, f"Memcpy{kind}"),
                    int(cols["start_ns"][i]),
                    int(cols["end_ns"][i]),
                    st,
                )
            )
    ns = records.nrows(sc)
    if ns:
        cols = {
            k: _i64(sc, k, ns)
            for k in ("start_ns", "end_ns", "device_id", "stream_id", "context_id", "value")
        }
        mkind = records.enum_names(records.col(sc, "memory_kind", ns), core.MEMORY_KIND_NAMES)
        nbytes = _i64(sc, "bytes", ns)
        corr = _i64(sc, "correlation_id", ns)
        asyn = np.asarray(records.col(sc, "is_async", ns)).astype(bool)
        for i in range(ns):
            st = {
                "correlation_id": int(corr[i]),
                "memset_details": f"size:{int(nbytes[i])} async:{int(asyn[i])}",
                "device_id": int(cols["device_id"][i]),
                "stream_id": int(cols["stream_id"][i]),
                "context_id": int(cols["context_id"][i]),
                FP + "value": int(cols["value"][i]),
                FP + "memory_kind": str(mkind[i]),
            }
            rows.append(
                (
                    int(cols["device_id"][i]),
                    int(cols["stream_id"][i]),
                    "Memset",
                    int(cols["start_ns"][i]),
                    int(cols["end_ns"][i]),
                    st,
                )
            )
    return rows


def _device_stats(p: _Plane, d: dict) -> None:
    """The GPU's capabilities as XLA's tracer records them on its plane."""
    p.stat(p.plane, "device_vendor", "Nvidia")
    for ours, theirs in (
        ("core_clock_khz", "clock_rate"),
        ("sm_count", "core_count"),
        ("global_memory_bytes", "memory_size"),
        ("compute_capability_major", "compute_cap_major"),
        ("compute_capability_minor", "compute_cap_minor"),
    ):
        # 0 is unknown, except for the minor of a known compute capability (9.0: H100, H200)
        known = d.get("compute_capability_major") if ours == "compute_capability_minor" else None
        if d.get(ours) or (known and d.get(ours) is not None):
            p.stat(p.plane, theirs, int(d[ours]))
    if d.get("peak_dram_bandwidth_bytes_per_s"):
        p.stat(p.plane, "memory_bandwidth", int(d["peak_dram_bandwidth_bytes_per_s"]))
    # what XLA has no stat for, under fpgaprof's own names (read back by the XSpace import)
    for k in DEVICE_FIELDS:
        if d.get(k) not in (None, ""):
            p.stat(p.plane, FP + "device_" + k, d[k])


def _thread_lines(
    p: _Plane,
    names: list[str],
    starts: np.ndarray,
    ends: np.ndarray,
    threads: np.ndarray,
    stats: list[dict[str, Any]],
) -> None:
    for t in sorted(set(threads.tolist())):
        m = np.nonzero(threads == t)[0]
        line = p.plane.lines.add()
        line.id = int(t)
        line.display_id = int(t)
        line.name = f"thread {t}"
        _add_events(p, line, [names[i] for i in m], starts[m], ends[m], [stats[i] for i in m])


def _hlo_protos(pb: Any, modules: list[dict]) -> tuple[list[tuple[dict, bytes]], list[str]]:
    """Each HLO module with its serialized xla.HloProto (b"" where XLA's parser, jaxlib's,
    refuses its text), and a note per module left without one (or one when jaxlib is
    missing)."""
    if not modules:
        return [], []
    try:
        xla_hlo = hlo.xla_hlo_bindings()
    except ImportError as e:
        note = f"the HLO modules are not in XProf's form: converting them needs jaxlib ({e})"
        return [(m, b"") for m in modules], [note]
    out, notes = [], []
    for m in modules:
        try:
            # jaxlib 0.10's parser predates XLA's "%t#N" (newer GPU dumps print it)
            mod = xla_hlo.hlo_module_from_text(hlo_export.without_tuple_shorthand(m["text"]))
            proto = pb.HloProto(hlo_module=mod.as_serialized_hlo_module_proto())
        except Exception as e:  # noqa: BLE001 - XLA's parser refuses the text: said, skipped
            # the parser's first lines say where (its message repeats the whole line)
            why = " ".join(" ".join(str(e).splitlines()[:2]).split())[:300]
            notes.append(
                f"HLO module {m['name']} (program {m['program_id']}) is not in XProf's form "
                f"(its ops are missing from hlo_stats and op_profile): {why}"
            )
            out.append((m, b""))
            continue
        out.append((m, proto.SerializeToString()))
    return out, notes


def _metadata_plane(p: _Plane, protos: list[tuple[dict, bytes]]) -> None:
    """The HLO modules as XLA's profiler stores them: one event metadata per program, named
    "<module>(<program id>)", with the serialized HloProto ("Hlo Proto", where XLA's parser
    read the module) and the program id; and fpgaprof's own copy of the text."""
    p.plane.name = xplane.METADATA_PLANE
    for m, data in protos:
        program_id = int(m["program_id"])
        md = p.plane.event_metadata[p.event_id(f"{m['name']}({program_id})")]
        if data:
            st = md.stats.add()
            st.metadata_id = p.stat_id(xplane.HLO_PROTO_STAT)
            st.bytes_value = data
        st = md.stats.add()
        st.metadata_id = p.stat_id("program_id")
        st.uint64_value = program_id
        st = md.stats.add()
        st.metadata_id = p.stat_id(FP + "hlo_text")
        st.str_value = m["text"]
        # XLA's buffer-assignment and live-range dumps fpgaprof keeps with the module (the
        # on-chip sizes of the FPGA model): the import reads them back
        for key in ("buffer_assignment", "live_ranges"):
            if m.get(key):
                st = md.stats.add()
                st.metadata_id = p.stat_id(FP + key)
                st.str_value = m[key]


def build_xspace(timeline: TimelineRecords, hostname: str) -> tuple[Any, list[str]]:
    """The XSpace of `timeline` (its columns are handed over: the model is empty afterwards)
    and the notes on what it could not hold (HLO modules XLA's parser refused)."""
    pb = xplane.messages()
    protos, notes = _hlo_protos(pb, timeline.hlo_modules)
    untimed = untimed_note(timeline.facts.get("untimed_records") or {})
    if untimed:
        notes.append(untimed)
    kc, mc, sc, ac, nc, rc = timeline.take()
    space = pb.XSpace()
    space.hostnames.append(hostname)
    for note in notes:
        space.warnings.append(note)
    devices = {int(d.get("id", i)): d for i, d in enumerate(timeline.devices)}

    rows = _gpu_rows(kc, mc, sc)
    plane_id = 1
    for dev in sorted({r[0] for r in rows} | set(devices)):
        p = _Plane(space.planes.add())
        p.plane.id = plane_id
        plane_id += 1
        p.plane.name = f"{xplane.GPU_PLANE_PREFIX}{dev}"
        _device_stats(p, devices.get(dev, {}))
        mine = [r for r in rows if r[0] == dev]
        for stream in sorted({r[1] for r in mine}):
            on = [r for r in mine if r[1] == stream]
            line = p.plane.lines.add()
            line.id = stream
            line.display_id = stream
            line.name = f"{xplane.XLINE_STREAM_PREFIX}{stream}"
            _add_events(
                p,
                line,
                [r[2] for r in on],
                np.array([r[3] for r in on], dtype=np.int64),
                np.array([r[4] for r in on], dtype=np.int64),
                [r[5] for r in on],
            )

    na = records.nrows(ac)
    if na:
        p = _Plane(space.planes.add())
        p.plane.id = plane_id
        plane_id += 1
        p.plane.name = xplane.CUPTI_PLANE
        corr = _i64(ac, "correlation_id", na)
        kinds = records.enum_names(records.col(ac, "kind", na), core.API_KIND_NAMES)
        cbid = _i64(ac, "callback_id", na)
        ret = _i64(ac, "return_value", na)
        _thread_lines(
            p,
            [str(x) for x in records.names_of(ac, na).tolist()],
            _i64(ac, "start_ns", na),
            _i64(ac, "end_ns", na),
            _i64(ac, "thread_id", na),
            [
                {
                    "correlation_id": int(corr[i]),
                    "api": str(kinds[i]),
                    FP + "cbid": int(cbid[i]),
                    FP + "return": int(ret[i]),
                }
                for i in range(na)
            ],
        )

    nn, nr = records.nrows(nc), records.nrows(rc)
    if nn or nr:
        p = _Plane(space.planes.add())
        p.plane.id = plane_id
        p.plane.name = xplane.HOST_THREADS_PLANE
        dom = list(nc.get("domain", [""] * nn)) if nn else []
        ranged = np.asarray(records.col(nc, "is_range", nn, 1)).astype(bool)
        closed = np.asarray(records.col(nc, "is_closed", nn, 1)).astype(bool)
        stats = [
            {
                "nvtx_domain": str(d),
                FP + "instant": 0 if ranged[i] else 1,
                FP + "open": 0 if closed[i] else 1,
            }
            for i, d in enumerate(dom)
        ] + [{FP + "region_depth": int(x)} for x in records.col(rc, "depth", nr)]
        names = [str(x) for x in records.names_of(nc, nn).tolist()] if nn else []
        names += [str(x) for x in records.names_of(rc, nr).tolist()] if nr else []
        _thread_lines(
            p,
            names,
            np.concatenate([_i64(nc, "start_ns", nn), _i64(rc, "start_ns", nr)]),
            np.concatenate([_i64(nc, "end_ns", nn), _i64(rc, "end_ns", nr)]),
            np.concatenate([_i64(nc, "thread_id", nn), _i64(rc, "thread_id", nr)]),
            stats,
        )
        plane_id += 1
    if protos:
        p = _Plane(space.planes.add())
        p.plane.id = plane_id
        plane_id += 1
        _metadata_plane(p, protos)
    p = _Plane(space.planes.add())
    p.plane.id = plane_id
    p.plane.name = xplane.TASK_ENV_PLANE
    facts = timeline.facts
    p.stat(p.plane, "profile_start_time", int(facts.get("start_ns") or 0))
    p.stat(p.plane, "profile_stop_time", int(facts.get("end_ns") or 0))
    for k in ("dropped_records", "incomplete_records", "driver_version", "cupti_version"):
        if facts.get(k):
            p.stat(p.plane, FP + k, int(facts[k]))
    p.stat(
        p.plane, FP + "command_buffers_disabled", int(bool(facts.get("command_buffers_disabled")))
    )
    return space, notes


def write_xspace(
    timeline: TimelineRecords, out_dir: str | os.PathLike, run: str, hostname: str
) -> tuple[str, list[str]]:
    """Writes DIR/plugins/profile/<run>/<hostname>.xplane.pb (the layout of jax.profiler.trace's
    folders, which `xprof DIR` and `tensorboard --logdir DIR` open) atomically. Returns its
    path and the notes on what the XSpace could not hold (also in its warnings). Written as a
    set (base.atomic.OutputSet): on a failure nothing of it is left."""
    space, notes = build_xspace(timeline, hostname)
    rel = os.path.join("plugins", "profile", run, f"{hostname}.xplane.pb")
    # as a set: on a failure (a full disk) no empty plugins/profile/<run> tree is left
    with OutputSet(out_dir) as outs, open_atomic_binary(outs.path(rel)) as f:
        f.write(space.SerializeToString())
        # An earlier export of another trace into DIR (a run named by that trace's start)
        # sorts after this one when that trace started later, and fpgaprof.load(DIR) and
        # `fpgaprof report DIR` (the last run by name) would read that trace: its XSpace goes
        # with the set, as the Parquet export removes the tables of an earlier one. Only
        # files named as this export names them; jax.profiler.trace's runs stay.
        profile = os.path.join(os.fspath(out_dir), "plugins", "profile")
        for old in glob.glob(os.path.join(glob.escape(profile), "*", f"{hostname}.xplane.pb")):
            old_rel = os.path.relpath(old, os.fspath(out_dir))
            if old_rel != rel:
                outs.remove(old_rel)
    return os.path.join(os.fspath(out_dir), rel), notes
