"""Profile: the result of one trace (or of a trace file), and ``load()``.

A Profile wraps the C++ TraceStore (``prof.store``) and is immutable once the trace stopped.
Record tables (``prof.kernels``, ``prof.transfers``, ...) are the store's tables: ``len()``,
indexing, iteration (rows with the C++ field names as attributes, strings resolved) and
``columns()`` (numpy arrays, one copy). Units are in the field names (``*_ns``, ``*bytes``).
"""

from __future__ import annotations

import os
from typing import Any

from fpgaprof.analysis.trace_analysis import AnalysisCache
from fpgaprof.api import (
    answer,
    energy,
    fpga,
    overview,
    resource_reports,
    roofline,
    xspace_import,
)
from fpgaprof.base.constants import DEFAULT_TARGET, TRACE_FILE_NAME
from fpgaprof.base.core import core
from fpgaprof.base.errors import FpgaprofError, FpgaprofIOError, InvalidArgumentError
from fpgaprof.base.text import native_path, terminal_safe
from fpgaprof.views import profile as profile_views
from fpgaprof.views import tables as views
from fpgaprof.views.answer_text import answer_lines

__all__ = ["Profile", "load"]

views.install_record_views(core)  # to_pandas() and _repr_html_ on the record tables


class Profile:
    """Everything one trace recorded. Built by ``fpgaprof.trace()`` or ``fpgaprof.load()``."""

    def __init__(self, store: Any = None, *, path: str | None = None) -> None:
        self._store = store
        self.path = path  # the trace file it was saved to / loaded from, if any
        self._analyses = AnalysisCache()

    # -- lifecycle ---------------------------------------------------------------------------

    def attach(self, store: Any, path: str | None) -> None:
        """Gives this Profile the records of a finished trace (``fpgaprof.trace`` does it when
        its block ends; a NestedProfile gets the run's records so when the program ends).
        Results computed before belong to the old store and are dropped."""
        self._store = store
        self.path = path
        # results computed before (a nested trace's placeholder) belong to another store
        self._analyses = AnalysisCache()

    def _s(self) -> Any:
        if self._store is None:
            raise FpgaprofError(
                "the trace is still running: read the Profile after the `with fpgaprof.trace()` "
                "block has ended"
            )
        return self._store

    @property
    def store(self) -> Any:
        """The C++ TraceStore holding this trace's records (FpgaprofError while the trace that
        fills this Profile is still running)."""
        return self._s()

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
    def power_samples(self) -> Any:
        """GPU power and energy readings (NVML; docs/records.md): time_ns, device_id, power_mw,
        energy_mj. Empty when NVML was not available while tracing."""
        return self._s().power_samples

    @property
    def hlo_modules(self) -> list:
        """Optimized HLO modules (name, program_id, text) the trace carries."""
        return self._s().hlo_modules

    # -- attribution (kernel -> HLO op -> source line; docs/attribution.md) -------------------

    @property
    def analyses(self) -> AnalysisCache:
        """The analyses of this trace, each computed once and shared by every table, facade
        and report of this Profile: the attribution and one analysis result per set of options
        (fpgaprof.analysis.trace_analysis)."""
        return self._analyses

    @property
    def attribution(self) -> Any:
        """Per kernel/copy attribution, per-op table and unattributed kernels (computed once)."""
        return self._analyses.attribution(self._s())

    @property
    def ops(self) -> list:
        """Time per HLO op, largest first: count (``kernel_count``, ``executions``),
        ``total_ns``, ``mean_ns`` (per execution whose kernels were all timed:
        ``timed_executions``), static cost of one execution (``flops``, ``bytes_accessed``,
        ``pattern``), ``source_file``/``source_line``, match ``method``."""
        return views.op_rows(self, self.attribution.ops)

    # -- analysis: ceilings, roofline, transfers, memory, FPGA (docs/roofline.md, fpga-model.md)

    @property
    def ceilings(self) -> dict | None:
        """Peak FLOP/s per precision, DRAM and host-link B/s of the traced GPU: table values,
        replaced by ``fpgaprof calibrate`` measurements where present (sources given)."""
        return roofline.ceilings(self)

    def roofline(self, by: str = "op", **kwargs: Any) -> Any:
        """Roofline rows per "op", "region" (one per region path, instances summed),
        "region_instance" (one per region record), "kernel" (name) or the "trace" dict:
        intensity, achieved FLOP/s and B/s, percent of the applicable roof, bound."""
        return roofline.roofline(self, by=by, **kwargs)

    def transfer_report(self, by: str = "region", **kwargs: Any) -> dict:
        """Copies per direction for the trace, each region path (``by="region"``, instances
        summed) or region record (``by="region_instance"``) and HLO op; pageable/tiny flags."""
        return resource_reports.transfers(self, by=by, **kwargs)

    def memory_report(self, by: str = "region", **kwargs: Any) -> dict:
        """Device-memory timeline, peaks per trace/device, per region path (``by="region"``:
        highest instance peak, allocations summed) or region record (``by="region_instance"``),
        largest buffers. ``by="module"``: each HLO module's peak over its schedule and what is
        live at it, from XLA's buffer assignment (docs/fpga-model.md)."""
        return resource_reports.memory(self, by=by, **kwargs)

    def device_report(self, **kwargs: Any) -> dict:
        """Several GPUs: per device its kernels, busy time (union of its kernels, copies and
        memsets), idle share of the wall time, copies per direction with the use of its own
        host link, memory peak, ceilings and the threads that launched its kernels (``rows``);
        the load balance between the devices (``balance``: busiest / mean busy, the busiest
        device, the spread). docs/roofline.md, "Several GPUs"."""
        return resource_reports.devices(self, **kwargs)

    def energy_report(self, by: str = "region", **kwargs: Any) -> Any:
        """GPU energy measured through NVML (docs/energy.md): joules, mean and peak watts per
        region path (``by="region"``), region record (``"region_instance"``) or GPU
        (``"device"``, with idle watts); ``by="op"``: the energy attributed to HLO ops by their
        share of the busy time (an attribution, not a measurement)."""
        return energy.energy_report(self, by=by, **kwargs)

    def fpga_candidates(self, target: Any = DEFAULT_TARGET, by: str = "op", **kwargs: Any) -> Any:
        """HLO ops (``by="op"``) or fpgaprof.region() paths (``by="region"``) ranked for FPGA
        offload on ``target`` (preset name or FpgaTarget), with every score input and the
        what-if (card time, transfers, Amdahl speedup)."""
        return fpga.fpga_candidates(self, target=target, by=by, **kwargs)

    def export_hlo(self, op: str, path: str | os.PathLike, module: str | None = None) -> str:
        """Writes op ``op``'s HLO as a standalone module (for an HLS flow); returns the text."""
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
        """Records without timestamps (kernel replay for counters left them untimed, or the
        device timestamp buffer ran out: the trace's warning says which)."""
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
        """Every warning about this trace (also shown by summary()): their messages, each once."""
        return list(self.meta["warnings"])

    @property
    def diagnostics(self) -> list[dict]:
        """The trace's warnings as records: code, severity, source, count, numbers and message
        (docs/reports.md, "Warnings"), in the order of `warnings`."""
        return list(self._s().diagnostics)

    # -- output ------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> str:
        """Writes the trace file atomically; returns the path."""
        p = os.fspath(path)
        if not p:
            raise InvalidArgumentError(
                "Profile.save(''): the path is empty; give a file path such as 'run.fpgaprof'"
            )
        self._s().save(native_path(p))
        return p

    def summary(self, top: int = 15) -> str:
        """A readable text summary: the FPGA answer first (per operation and size, as
        `fpgaprof report` prints it), then top kernels, transfers, regions, drops and warnings."""
        if not isinstance(top, int) or isinstance(top, bool) or top < 0:
            raise InvalidArgumentError(
                f"summary(top={top!r}): top is how many rows each list shows, an int >= 0"
            )
        o = overview.trace_overview(self)
        text = profile_views.summary_text(self, o.data, o.analysis, top)
        if not o.data.get("totals", {}).get("kernel_count"):
            return text  # no GPU kernels: nothing to answer (the text says why)
        # The answer first, as `fpgaprof run` / `report` and report.html give it (the same
        # analysis, cached on the profile).
        try:
            ans = answer.answer_section(self, o.data, o.analysis)
        except Exception as e:  # noqa: BLE001 - the rest of the summary stands without it
            ans = {"available": False, "reason": f"the answer could not be built: {e}"}
        lines = answer_lines({"answer": ans}, top, more_in="prof.fpga_candidates()")
        return "\n".join(lines) + "\n\n" + text

    def _repr_html_(self) -> str:
        """Jupyter: overview, top kernels and ops, warnings (views.profile)."""
        if self._store is None:
            return "<b>fpgaprof Profile</b>: trace running"
        return profile_views.profile_html(overview.trace_overview(self).data)

    def __repr__(self) -> str:
        if self._store is None:
            return "<fpgaprof.Profile (trace running)>"
        dev = self.device
        gpu = dev.name if dev is not None else ("GPU" if self.gpu_available else "no GPU")
        return terminal_safe(  # the device name comes from the trace
            f"<fpgaprof.Profile {self.wall_time_ns / 1e9:.3f} s, {gpu}: "
            f"{len(self.kernels)} kernels, "
            f"{len(self.transfers)} transfers, {len(self.regions)} regions>",
            keep="",
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Profile):
            return NotImplemented
        if self._store is None or other._store is None:
            return self._store is other._store
        # The file encoding is deterministic and covers every field of every record.
        return bool(self._store.serialize() == other._store.serialize())

    __hash__ = None  # type: ignore[assignment]


MAX_TRACE_MEMORY_ENV = "FPGAPROF_MAX_TRACE_MEMORY"


def _max_memory_bytes(given: int | None) -> int:
    """The memory a trace read may use (0: the core's bound, 64 x the file + 64 MiB): ``given``,
    else FPGAPROF_MAX_TRACE_MEMORY, in bytes."""
    if given is None:
        text = os.environ.get(MAX_TRACE_MEMORY_ENV, "").strip()
        if not text:
            return 0
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < 1:
            raise InvalidArgumentError(
                f"{MAX_TRACE_MEMORY_ENV}={text!r} is not a number of bytes: give a whole number "
                f"> 0 (e.g. {MAX_TRACE_MEMORY_ENV}=4000000000), or unset it for the default bound"
            )
        return min(value, _MAX_BOUND)
    if isinstance(given, bool) or not isinstance(given, int) or given < 1:
        raise InvalidArgumentError(
            f"max_memory_bytes must be a whole number of bytes > 0, not {given!r} "
            "(None: the default bound, 64 x the file size + 64 MiB)"
        )
    return min(given, _MAX_BOUND)


# The largest bound the core takes (a 64-bit size): a larger one bounds nothing more.
_MAX_BOUND = 2**63 - 1


def load(path: str | os.PathLike, max_memory_bytes: int | None = None) -> Profile:
    """Reads a trace file written by ``fpgaprof.trace(path)`` or ``Profile.save``.

    ``path`` may also be the output folder of ``fpgaprof run`` (its trace.fpgaprof is read),
    or an XProf profile: a ``jax.profiler.trace`` folder (its newest run) or one
    ``.xplane.pb`` (api.xspace_import: kernels, copies, memsets, API calls, XLA's op and
    module names, HLO modules; a profile without a GPU plane gives a Profile without GPU data
    that says why). Raises TraceFormatError (naming the file and the reason) for truncated,
    corrupted, empty or future-version files, and FpgaprofIOError when it cannot be read
    (missing, a folder without trace.fpgaprof or an XProf profile, no permission).
    ``max_memory_bytes`` (or the environment's FPGAPROF_MAX_TRACE_MEMORY) lets the read use
    that much memory instead of its bound against zlib bombs (64 x the file size + 64 MiB,
    docs/trace-format.md "Limits"), for a genuine trace whose records compress past it.
    """
    limit = _max_memory_bytes(max_memory_bytes)
    # bytes paths (a file name that is not UTF-8) as str with surrogate escapes; native_path
    # turns them back into the same bytes for the core
    p = os.fsdecode(os.fspath(path))
    if not (os.path.isdir(p) and os.path.isfile(os.path.join(p, TRACE_FILE_NAME))):
        xspace = xspace_import.xspace_file(p)
        if xspace is not None:
            return Profile(xspace_import.store_from_xspace(xspace), path=xspace)
    if os.path.isdir(p):
        inner = os.path.join(p, TRACE_FILE_NAME)
        if not os.path.isfile(inner):
            raise FpgaprofIOError(
                f"{p}: a folder without {TRACE_FILE_NAME} or an XProf profile; give the "
                "trace file itself, the output folder of `fpgaprof run`, or a "
                "jax.profiler.trace folder"
            )
        p = inner
    return Profile(core.TraceStore.load(native_path(p), limit), path=p)
