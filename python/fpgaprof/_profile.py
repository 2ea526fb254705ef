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
from fpgaprof.errors import FpgaprofError

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

    Raises TraceFormatError (naming the file and the reason) for truncated, corrupted, empty
    or future-version files, and FpgaprofIOError when it cannot be read.
    """
    p = os.fspath(path)
    return Profile(_core.TraceStore.load(p), path=p)


# ---- summary -------------------------------------------------------------------------------


def _t(ns: float) -> str:
    """A duration auto-scaled as in every report ("240 ns", "10.3 µs", "2.25 ms")."""
    from fpgaprof.report.html import fmt_s

    return fmt_s(float(ns) / 1e9)


def _bytes(n: float) -> str:
    """Bytes in decimal SI units as in report.html and the digest ("778.24 kB")."""
    from fpgaprof.report.html import fmt_bytes

    return fmt_bytes(n)


def _short(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


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

    k = prof.kernels.columns(["name", "start_ns", "end_ns"])
    n_k = len(k["name"])
    dur = (k["end_ns"].astype(np.int64) - k["start_ns"].astype(np.int64)).clip(min=0)
    total_k = float(dur.sum())
    out.append("")
    if n_k or prof.gpu_available:
        out.append(f"Kernels: {n_k} launches, {len(set(k['name'])) if n_k else 0} distinct, "
                   f"{_t(total_k)} GPU time")
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
            out.append(f"  {_short(str(names[i]), 60):60s} {int(cnt[i]):8d} {_t(tot[i]):>11s} "
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

    t = prof.transfers.columns(["copy_kind", "bytes", "start_ns", "end_ns"])
    n_t = len(t["bytes"])
    out.append("")
    out.append(f"Transfers: {n_t}")
    if n_t:
        tdur = (t["end_ns"].astype(np.int64) - t["start_ns"].astype(np.int64)).clip(min=0)
        out.append(f"  {'direction':10s} {'count':>8s} {'bytes':>14s} {'busy':>11s} "
                   f"{'GB/s':>9s}")
        kinds = t["copy_kind"].astype(str)
        for kind in sorted(set(kinds)):
            sel = kinds == kind
            b = float(t["bytes"][sel].sum())
            busy = float(tdur[sel].sum())
            rate = f"{b / busy:9.2f}" if busy > 0 else f"{'-':>9s}"  # bytes/ns == GB/s
            out.append(f"  {kind:10s} {int(sel.sum()):8d} {_bytes(b):>14s} {_t(busy):>11s} {rate}")
        out.append("  (busy = sum of copy durations; GB/s = bytes / busy time)")

    out.extend(_region_lines(prof, top))

    out.append("")
    out.append(f"Dropped records: {prof.dropped_records}; "
               f"incomplete records: {prof.incomplete_records}")
    warns = prof.warnings
    out.append(f"Warnings: {len(warns)}" + ("" if warns else " (none)"))
    for w in warns:
        out.append(f"  - {w}")
    return "\n".join(out) + "\n"


def _region_lines(prof: Profile, top: int) -> list[str]:
    """Per region name: instances, wall time, GPU time of the activities launched inside it
    (including nested regions)."""
    r = prof.regions.columns(["name", "start_ns", "end_ns", "parent", "depth"])
    n = len(r["name"])
    lines = ["", f"Regions: {n}"]
    if n == 0:
        return lines
    own = np.zeros(n, dtype=np.float64)
    for table in (prof.kernels, prof.transfers, prof.memsets):
        c = table.columns(["region_index", "start_ns", "end_ns"])
        idx = c["region_index"].astype(np.int64)
        sel = idx != NONE32
        if sel.any():
            d = (c["end_ns"].astype(np.int64) - c["start_ns"].astype(np.int64)).clip(min=0)
            own += np.bincount(idx[sel], weights=d[sel], minlength=n)[:n]
    inclusive = own.copy()
    parent = r["parent"].astype(np.int64)
    for i in np.argsort(-r["depth"].astype(np.int64), kind="stable"):  # children before parents
        if parent[i] != NONE32 and 0 <= parent[i] < n:
            inclusive[parent[i]] += inclusive[i]
    wall = (r["end_ns"].astype(np.int64) - r["start_ns"].astype(np.int64)).clip(min=0)
    names, inv = np.unique(r["name"].astype(str), return_inverse=True)
    cnt = np.bincount(inv, minlength=len(names))
    wall_tot = np.bincount(inv, weights=wall, minlength=len(names))
    gpu_tot = np.bincount(inv, weights=inclusive, minlength=len(names))
    # Without GPU data there is no GPU time to show: "–", as report.html (not a measured 0).
    no_gpu = not prof.gpu_available and len(prof.kernels) == 0
    lines.append(f"  {'region':40s} {'count':>7s} {'wall':>11s} {'GPU':>11s}")
    for i in np.argsort(-wall_tot, kind="stable")[:top]:
        gpu = "–" if no_gpu else _t(gpu_tot[i])
        lines.append(f"  {_short(str(names[i]), 40):40s} {int(cnt[i]):7d} {_t(wall_tot[i]):>11s} "
                     f"{gpu:>11s}")
    lines.append("  (GPU = kernel, copy and memset time launched inside the region, "
                 "nested ones included" + ("; – : no GPU data in this trace)" if no_gpu else ")"))
    return lines
