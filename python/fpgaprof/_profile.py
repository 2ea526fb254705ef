"""Profile: the result of one trace (or of a trace file), and ``load()``.

A Profile wraps the C++ TraceStore (``prof._store``) and is immutable once the trace stopped.
Record tables (``prof.kernels``, ``prof.transfers``, ...) are the store's tables: ``len()``,
indexing, iteration (rows with the C++ field names as attributes, strings resolved) and
``columns()`` (numpy arrays, one copy). Units are in the field names (``*_ns``, ``*bytes``).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from fpgaprof import _core
from fpgaprof.base.errors import FpgaprofError
from fpgaprof.base.units import fmt_bytes, fmt_s, shorten

__all__ = ["Profile", "load"]

from fpgaprof.report import notebook as _notebook  # noqa: E402

_notebook.install(_core)  # to_pandas() and _repr_html_ on the record tables

NONE32 = 0xFFFFFFFF


class Profile:
    """Everything one trace recorded. Built by ``fpgaprof.trace()`` or ``fpgaprof.load()``."""

    def __init__(self, store: Any = None, *, path: str | None = None) -> None:
        self._store = store
        self.path = path  # the trace file it was saved to / loaded from, if any

    # -- lifecycle ---------------------------------------------------------------------------

    def _attach(self, store: Any, path: str | None) -> None:
        self._store = store
        self.path = path
        # results computed before (a nested trace's placeholder) belong to another store
        self.__dict__.pop("_fpgaprof_analysis_cache", None)

    def _s(self) -> Any:
        if self._store is None:
            raise FpgaprofError(
                "the trace is still running: read the Profile after the `with fpgaprof.trace()` "
                "block has ended")
        return self._store

    @property
    def ready(self) -> bool:
        """False while the trace that fills this Profile is still running."""
        return self._store is not None

    # -- record tables -----------------------------------------------------------------------

    @property
    def kernels(self) -> Any:
        """GPU kernel executions (KernelRecord rows)."""
        return self._s().kernels

    @property
    def transfers(self) -> Any:
        """Memory copies (MemcpyRecord rows; ``copy_kind`` "HtoD", "DtoH", ...)."""
        return self._s().memcpys

    @property
    def memsets(self) -> Any:
        return self._s().memsets

    @property
    def allocations(self) -> Any:
        """Device memory allocations and releases (``is_alloc``)."""
        return self._s().allocations

    @property
    def regions(self) -> Any:
        """fpgaprof.region() ranges, per thread, with ``parent`` and ``depth``."""
        return self._s().regions

    @property
    def api_calls(self) -> Any:
        """CUDA runtime/driver API calls."""
        return self._s().api_calls

    @property
    def markers(self) -> Any:
        """NVTX ranges and marks (XLA's "TSL" domain, fpgaprof's, the user's)."""
        return self._s().markers

    @property
    def syncs(self) -> Any:
        """Host waits for the device (stream/event/context synchronize)."""
        return self._s().syncs

    @property
    def overheads(self) -> Any:
        return self._s().overheads

    @property
    def external_correlations(self) -> Any:
        return self._s().external_correlations

    @property
    def counters(self) -> Any:
        """Hardware counter values per profiled kernel range (when collected)."""
        return self._s().counters

    @property
    def hlo_modules(self) -> list:
        """Optimized HLO modules (name, program_id, text) the trace carries."""
        return self._s().hlo_modules

    # -- attribution (kernel -> HLO op -> source line; docs/attribution.md) -------------------

    @property
    def attribution(self) -> Any:
        """Per kernel/copy attribution, per-op table and unattributed kernels (computed once)."""
        store = self._s()
        cached = getattr(self, "_attribution_cache", None)
        if cached is None or cached[0] is not store:
            from fpgaprof import _attribution

            cached = (store, _attribution.attribute(store))
            self._attribution_cache = cached
        return cached[1]

    @property
    def ops(self) -> list:
        """Time per HLO op, largest first: count (``kernel_count``, ``executions``),
        ``total_ns``, ``mean_ns`` (per execution), static cost of one execution (``flops``,
        ``bytes_accessed``, ``pattern``), ``source_file``/``source_line``, match ``method``."""
        from fpgaprof.report.notebook import op_rows

        return op_rows(self, self.attribution.ops)

    # -- analysis: ceilings, roofline, transfers, memory, FPGA (docs/roofline.md, fpga-model.md)

    @property
    def ceilings(self) -> dict | None:
        """Peak FLOP/s per precision, DRAM and host-link B/s of the traced GPU: table values,
        replaced by ``fpgaprof calibrate`` measurements where present (sources given)."""
        from fpgaprof import roofline

        return roofline.ceilings(self)

    def roofline(self, by: str = "op", **kwargs: Any) -> Any:
        """Roofline rows per "op", "region" (one per region path, instances summed),
        "region_instance" (one per region record), "kernel" (name) or the "trace" dict:
        intensity, achieved FLOP/s and B/s, percent of the applicable roof, bound."""
        from fpgaprof import roofline

        return roofline.roofline(self, by=by, **kwargs)

    def transfer_report(self, by: str = "region", **kwargs: Any) -> dict:
        """Copies per direction for the trace, each region path (``by="region"``, instances
        summed) or region record (``by="region_instance"``) and HLO op; pageable/tiny flags."""
        from fpgaprof import roofline

        return roofline.transfers(self, by=by, **kwargs)

    def memory_report(self, by: str = "region", **kwargs: Any) -> dict:
        """Device-memory timeline, peaks per trace/device, per region path (``by="region"``:
        highest instance peak, allocations summed) or region record (``by="region_instance"``),
        largest buffers."""
        from fpgaprof import roofline

        return roofline.memory(self, by=by, **kwargs)

    def device_report(self, **kwargs: Any) -> dict:
        """Several GPUs: per device its kernels, busy time (union of its kernels, copies and
        memsets), idle share of the wall time, copies per direction with the use of its own
        host link, memory peak, ceilings and the threads that launched its kernels (``rows``);
        the load balance between the devices (``balance``: busiest / mean busy, the busiest
        device, the spread). docs/roofline.md, "Several GPUs"."""
        from fpgaprof import roofline

        return roofline.devices(self, **kwargs)

    def fpga_candidates(self, target: Any = "alveo-u55c", by: str = "op", **kwargs: Any) -> Any:
        """HLO ops (``by="op"``) or fpgaprof.region() paths (``by="region"``) ranked for FPGA
        offload on ``target`` (preset name or FpgaTarget), with every score input and the
        what-if (card time, transfers, Amdahl speedup)."""
        from fpgaprof import fpga

        return fpga.fpga_candidates(self, target=target, by=by, **kwargs)

    def export_hlo(self, op: str, path: str | os.PathLike, module: str | None = None) -> str:
        """Writes op ``op``'s HLO as a standalone module (for an HLS flow); returns the text."""
        from fpgaprof import fpga

        return fpga.export_hlo(self, op, path, module=module)

    # -- facts -------------------------------------------------------------------------------

    @property
    def meta(self) -> dict:
        """Trace-level facts (times, versions, counts, warnings) as a dict."""
        return self._s().meta

    @property
    def devices(self) -> list:
        """DeviceInfo of every GPU seen."""
        return self._s().devices

    @property
    def device(self) -> Any:
        """The first GPU, or None without one."""
        devs = self.devices
        return devs[0] if devs else None

    @property
    def dropped_records(self) -> int:
        """Records CUPTI lost (buffers full). Never silently: also in warnings and summary()."""
        return int(self.meta["dropped_records"])

    @property
    def incomplete_records(self) -> int:
        """Records without timestamps (device timestamp buffer ran out)."""
        return int(self.meta["incomplete_records"])

    @property
    def wall_time_ns(self) -> int:
        """Trace duration on the host, ns."""
        m = self.meta
        return max(int(m["end_ns"]) - int(m["start_ns"]), 0)

    @property
    def gpu_available(self) -> bool:
        return bool(self.meta["gpu_available"])

    @property
    def warnings(self) -> list[str]:
        """Every warning about this trace (also shown by summary())."""
        return list(self.meta["warnings"])

    # -- output ------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> str:
        """Writes the trace file atomically; returns the path."""
        p = os.fspath(path)
        self._s().save(p)
        return p

    def summary(self, top: int = 15) -> str:
        """A readable text summary: top kernels, transfers, regions, drops and warnings."""
        return _summary(self, top)

    def _repr_html_(self) -> str:
        """Jupyter: overview, top kernels and ops, warnings (fpgaprof.report.notebook)."""
        if self._store is None:
            return "<b>fpgaprof Profile</b>: trace running"
        from fpgaprof.report.notebook import profile_html

        return profile_html(self)

    def __repr__(self) -> str:
        if self._store is None:
            return "<fpgaprof.Profile (trace running)>"
        dev = self.device
        gpu = dev.name if dev is not None else ("GPU" if self.gpu_available else "no GPU")
        return (f"<fpgaprof.Profile {self.wall_time_ns / 1e9:.3f} s, {gpu}: "
                f"{len(self.kernels)} kernels, "
                f"{len(self.transfers)} transfers, {len(self.regions)} regions>")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Profile):
            return NotImplemented
        if self._store is None or other._store is None:
            return self._store is other._store
        # The file encoding is deterministic and covers every field of every record.
        return bool(self._store.serialize() == other._store.serialize())

    __hash__ = None  # type: ignore[assignment]


def load(path: str | os.PathLike) -> Profile:
    """Reads a trace file written by ``fpgaprof.trace(path)`` or ``Profile.save``.

    ``path`` may also be the output folder of ``fpgaprof run`` (its trace.fpgaprof is read).
    Raises TraceFormatError (naming the file and the reason) for truncated, corrupted, empty
    or future-version files, and FpgaprofIOError when it cannot be read (missing, a folder
    without trace.fpgaprof, no permission).
    """
    p = os.fspath(path)
    if os.path.isdir(p):
        inner = os.path.join(p, "trace.fpgaprof")
        if not os.path.isfile(inner):
            from fpgaprof.base.errors import FpgaprofIOError
            raise FpgaprofIOError(f"{p}: a folder without trace.fpgaprof; give the trace file "
                                  "itself or the output folder of `fpgaprof run`")
        p = inner
    return Profile(_core.TraceStore.load(p), path=p)


# ---- summary -------------------------------------------------------------------------------


def _t(ns: float) -> str:
    """A duration auto-scaled as in every report ("240 ns", "10.3 µs", "2.25 ms")."""
    return fmt_s(float(ns) / 1e9)


def _summary(prof: Profile, top: int) -> str:
    out: list[str] = []
    wall = prof.wall_time_ns
    dev = prof.device
    if dev is not None:
        gpu = (f"{dev.name} (cc {dev.compute_capability_major}.{dev.compute_capability_minor}, "
               f"{dev.sm_count} SMs)")
    elif prof.gpu_available:
        gpu = "GPU (no device record)"
    else:
        gpu = "no GPU data: " + (prof.meta.get("unavailable_reason") or "unknown reason")
    out.append(f"fpgaprof trace: wall time {_t(wall)}; {gpu}")
    # summary.json's numbers (one analysis, cached on the profile): GPU busy, transfers,
    # memory, regions and warnings mean here what they mean there. environment={}: nothing
    # about this process is needed, and asking JAX for its devices could start a backend.
    from fpgaprof.report.summary import collect

    summary = collect(prof, environment={})
    tot = summary["totals"]
    if tot.get("gpu_busy_s") is not None:
        frac = tot.get("gpu_busy_fraction")
        out.append(f"GPU busy: {_t(tot['gpu_busy_s'] * 1e9)}"
                   + (f" ({100 * frac:.1f} % of wall)" if frac is not None else "")
                   + f", idle {_t(tot['gpu_idle_s'] * 1e9)} (busy = union of the kernel, copy "
                   "and memset intervals on every device and stream)")

    k = prof.kernels.columns(["name", "start_ns", "end_ns"])
    n_k = len(k["name"])
    dur = (k["end_ns"].astype(np.int64) - k["start_ns"].astype(np.int64)).clip(min=0)
    total_k = float(dur.sum())
    out.append("")
    if n_k or prof.gpu_available:
        out.append(f"Kernels: {n_k} launches, {len(set(k['name'])) if n_k else 0} distinct, "
                   f"{_t(total_k)} summed kernel time")
    else:
        out.append("Kernels: – (no GPU data)")
    if n_k:
        names, inv = np.unique(k["name"].astype(str), return_inverse=True)
        tot = np.bincount(inv, weights=dur, minlength=len(names))
        cnt = np.bincount(inv, minlength=len(names))
        order = np.argsort(-tot, kind="stable")[:top]
        out.append(f"  {'kernel':60s} {'count':>8s} {'total':>11s} {'mean':>10s} {'%':>6s}")
        for i in order:
            pct = 100.0 * tot[i] / total_k if total_k else 0.0
            out.append(f"  {shorten(str(names[i]), 60):60s} {int(cnt[i]):8d} {_t(tot[i]):>11s} "
                       f"{_t(tot[i] / cnt[i]):>10s} {pct:6.1f}")
        if len(names) > top:
            out.append(f"  ... {len(names) - top} more kernels")

    if n_k:
        out.append("")
        try:
            from fpgaprof import _attribution

            out.extend(_attribution.summary_lines(prof.attribution, top))
        except Exception as e:  # noqa: BLE001 - the rest of the summary stays useful
            out.append(f"HLO ops: attribution failed ({type(e).__name__}: {e})")

    out.extend(_transfer_lines(summary))
    out.extend(_memory_lines(summary))
    out.extend(_device_lines(summary))
    out.extend(_region_lines(prof, summary, top))

    out.append("")
    out.append(f"Dropped records: {prof.dropped_records}; "
               f"incomplete records: {prof.incomplete_records}")
    # The warnings of summary.json and report.html: the trace's own, those the reports derive
    # and every transfer flag (docs/reports.md, "Warnings").
    warns = summary["warnings"]
    flags = len((summary["transfers"] or {}).get("flags") or [])
    out.append(f"Warnings: {len(warns)}" + (f" ({flags} of them transfer flags)" if flags else "")
               + ("" if warns else " (none)"))
    for w in warns:
        out.append(f"  - {w}")
    return "\n".join(out) + "\n"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}"


def _link_text(t: dict) -> str:
    """The host link's peak and where it comes from, as report.html says it."""
    link = t.get("link_bytes_per_s")
    if not link:
        return ("host link peak unknown (no PCIe generation and width for the device, no "
                "`fpgaprof calibrate` measurement): % of link n/a")
    desc = t.get("link_description")
    src = str(t.get("link_source") or "unknown")
    return (f"host link peak {link / 1e9:.2f} GB/s ({src}"
            + (f": {desc}" if desc and desc != src else "") + ")")


def _transfer_lines(summary: dict) -> list[str]:
    """Copies per direction from the transfer analysis (the numbers of summary.json): busy
    time is the union of the copies' intervals, % of link for HtoD and DtoH; the flags."""
    t = summary["transfers"]
    n = int(t.get("count") or 0)
    if not t.get("available"):
        if not n:
            return ["", "Transfers: 0"]
        return ["", f"Transfers: {n} (analysis not available: {t.get('reason')})"]
    out = ["", f"Transfers: {n} {'copy' if n == 1 else 'copies'}, {fmt_bytes(t['bytes'])}, busy {_t(t['busy_s'] * 1e9)} "
               f"({_t(t['kernel_overlap_s'] * 1e9)} of it overlapping kernels); the host waited "
               f"{_t(t['host_wait_s'] * 1e9)} in {t['sync_calls']} synchronization calls",
           f"  {_link_text(t)}",
           f"  {'direction':10s} {'count':>8s} {'bytes':>14s} {'busy':>11s} {'GB/s':>9s} "
           f"{'% link':>7s} {'pageable':>9s}"]
    for r in t["by_direction"]:
        rate = f"{r['gbps']:9.2f}" if r.get("gbps") is not None else f"{'-':>9s}"
        out.append(f"  {r['direction']:10s} {r['count']:8d} {fmt_bytes(r['bytes']):>14s} "
                   f"{_t(r['busy_s'] * 1e9):>11s} {rate} {_pct(r.get('link_percent')):>7s} "
                   f"{r['pageable_count']:9d}")
    out.append("  (busy = union of the copies' intervals; GB/s = bytes / busy time; % link = "
               "achieved rate in percent of the host link's peak, HtoD and DtoH)")
    ops = t.get("by_op") or []
    if ops:
        left = len(ops) - min(len(ops), 5) + int(t.get("by_op_left_out") or 0)
        out.append("  by HLO op (copies launched inside its XLA thunk): " + "; ".join(
            f"{r['op']} {fmt_bytes(r['bytes'])} in {_t(r['busy_s'] * 1e9)}" for r in ops[:5])
            + (f"; {left} more" if left else ""))
    flags = t.get("flags") or []
    if flags:
        kinds: dict[str, int] = {}
        for f in flags:
            kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
        out.append(f"  Flags: {len(flags)} ("
                   + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
                   + "); each is listed with its advice under Warnings")
    return out


def _memory_lines(summary: dict) -> list[str]:
    """Device memory: the trace's peak (all devices) and bytes still in use at the end."""
    m = summary["memory"]
    if not m.get("available"):
        return ["", f"Device memory: not available ({m.get('reason')})"]
    at = (f" at {_t(m['peak_time_s'] * 1e9)}" if m.get("peak_time_s") is not None else "")
    return ["", f"Device memory: peak {fmt_bytes(m['peak_bytes'])}{at} (all devices), "
                f"{fmt_bytes(m['end_bytes'])} still allocated at the end; "
                f"{m['allocation_count']} allocations, {m['free_count']} frees"
                + (f", {m['unmatched_frees']} frees of buffers allocated before the trace"
                   if m.get("unmatched_frees") else "")]


def _device_lines(summary: dict) -> list[str]:
    """Several GPUs: the load balance and one row per device (summary.json's by_device);
    nothing for a single device."""
    from fpgaprof.report import _data as D
    from fpgaprof.report.html import multi_device
    from fpgaprof.report.notebook import _sub_table, rows_text

    if not multi_device(summary):
        return []
    d = summary["by_device"]
    return (["", f"Devices: {d['count']}; {d['balance']['text']}"]
            + _sub_table(rows_text(D.device_table_rows(d), "per device",
                                   ("device_id", "name", "kernel_count", "kernel_time_s", "busy_s",
                                    "busy_fraction", "copy_bytes", "htod_link_percent",
                                    "memory_peak_bytes", "threads"),
                                   more="prof.device_report()", labels=D.DEVICE_LABELS)))


def _region_lines(prof: Profile, summary: dict, top: int) -> list[str]:
    """Per region path (summary.json's regions): instances, wall time, GPU time of the
    activities launched inside it (summed durations, nested regions included) and the peak of
    device memory in use while it was open (the memory analysis, highest instance)."""
    from fpgaprof.report import _data as D

    r = summary["regions"]
    n = len(prof.regions)
    paths = r.get("paths")
    lines = ["", f"Regions: {n}" + (f" ({paths} path{'s' if paths != 1 else ''})"
                                    if r.get("available") and paths != n else "")]
    if not r.get("available"):
        return lines
    peaks: dict[str, int] = {}
    if summary["memory"].get("available"):
        from fpgaprof.report.summary import DEFAULT_TARGET, _analysis_of

        res, _, _ = _analysis_of(prof, DEFAULT_TARGET, [])  # collect()'s, cached on prof
        if res is not None:
            peaks = {x["region"]: x["peak_bytes"] for x in D.memory_region_rows(res["memory"])}
    # Without GPU data there is no GPU time to show: "–", as report.html (not a measured 0).
    no_gpu = not prof.gpu_available and len(prof.kernels) == 0
    lines.append(f"  {'region':40s} {'count':>7s} {'wall':>11s} {'GPU':>11s} {'mem peak':>11s}")
    items = r["items"]
    for x in items[:top]:
        gpu = "–" if no_gpu or x.get("gpu_s") is None else _t(x["gpu_s"] * 1e9)
        peak = fmt_bytes(peaks[x["path"]]) if x["path"] in peaks else "–"
        lines.append(f"  {shorten(x['path'], 40):40s} {x['count']:7d} {_t(x['wall_s'] * 1e9):>11s} "
                     f"{gpu:>11s} {peak:>11s}")
    left = len(items) - min(len(items), top) + int(r.get("rows_left_out") or 0)
    if left:
        lines.append(f"  ... {left} more region paths")
    lines.append("  (GPU = summed durations of the kernels, copies and memsets launched inside "
                 "the region, nested ones included: a sum, not a union"
                 + ("; – : no GPU data in this trace" if no_gpu else "")
                 + "; mem peak = most device memory in use while it was open"
                 + ("" if peaks else ", – : no allocation records") + ")")
    return lines
