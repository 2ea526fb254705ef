"""Roofline, transfers, device memory and ceilings of a trace (the analysis layer's Python face).

Everything is computed by the C++ core in one pass (``fpgaprof._core.analysis.analyze``); this
module picks the pieces and turns them into tables. Rules and sources: docs/roofline.md.

Region results (transfer groups, memory regions, roofline regions) come one row per region
*path* ("outer > inner", every instance summed; ``by="region"``, the default) or, on request,
one row per region record (``by="region_instance"``). docs/roofline.md, "Regions".
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from fpgaprof import _core
from fpgaprof.base.columns import TOTAL_LABELS

__all__ = ["Table", "ceilings", "analyze", "roofline", "transfers", "memory", "devices",
           "REGION_BY"]

# by= values that choose the region rows: one per path (default) or one per region record.
REGION_BY = {"region": "path", "regions": "path", "region_instance": "instance",
             "region_instances": "instance"}




class Table(list):
    """Rows (dicts) of one analysis result, best first. ``to_pandas()`` gives a DataFrame;
    ``print(table)`` a text table of its main columns (``title``, ``display``: the columns shown
    first, ``empty_note``: why there are no rows, ``footer``: a closing line)."""

    title = "rows"
    display: tuple = ()
    labels: Mapping[str, str] = TOTAL_LABELS  # headers of some columns
    empty_note = ""
    footer = ""

    def __str__(self) -> str:
        from fpgaprof.report.notebook import rows_text

        return rows_text(self, self.title, self.display, empty_note=self.empty_note,
                         footer=self.footer, labels=self.labels)

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame(list(self))

    def _repr_html_(self) -> str:
        """Jupyter: every column, first rows (fpgaprof.report.notebook)."""
        from fpgaprof.report.notebook import rows_html

        return rows_html(self, self.title, labels=self.labels, empty_note=self.empty_note,
                         first=self.display)

    # The REPL and IPython's terminal show the table print() shows, not a list of dicts.
    def __repr__(self) -> str:
        return self.__str__()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.__str__() if not cycle else f"{self.title}: …")

    def columns(self) -> dict:
        import numpy as np

        keys: list[str] = []
        for r in self:
            for k in r:
                if k not in keys:
                    keys.append(k)
        return {k: np.array([r.get(k) for r in self], dtype=object) for k in keys}


def _store_of(prof: Any) -> Any:
    """The C++ TraceStore behind a Profile (or the store itself)."""
    getter = getattr(prof, "_s", None)
    if callable(getter):  # a Profile: its store, or the placeholder of a nested trace
        return getter()
    for name in ("store", "_store"):
        s = getattr(prof, name, None)
        if s is not None and not callable(s):
            return s
    return prof


def ceilings(prof: Any, device: int = 0, *, use_measured: bool = True) -> dict | None:
    """Peak FLOP/s per precision, DRAM and host-link bandwidth of the traced device: the
    per-architecture table, with values measured by ``fpgaprof.calibrate.run()`` on this GPU
    replacing table values where present (each value carries its source). None without a device."""
    table = _core.analysis.table_ceilings(_store_of(prof), device)
    if table is None:
        return None
    if use_measured:
        from fpgaprof import calibrate

        measured = calibrate.load(table.get("device_name", ""), _device_uuid(prof, device))
        if measured:
            table = calibrate.merge(table, measured)
    return table


def _device_uuid(prof: Any, device: int) -> str:
    try:
        devs = getattr(_store_of(prof), "devices")
        devs = devs() if callable(devs) else devs
        d = devs[device]
        return str((d.get("uuid") if isinstance(d, Mapping) else getattr(d, "uuid", "")) or "")
    except Exception:
        return ""


def analyze(prof: Any, *, target: str | Mapping | Any = "alveo-u55c", ceilings_override: Mapping | None = None,
            workload_s: float | None = None, inputs_cross_link: bool = True,
            tiny_bytes: int = 64 * 1024, tiny_flood_count: int = 1000, latency_kernel_ns: int = 5000,
            top_buffers: int = 20, region_rows: str = "path") -> dict:
    """The whole analysis as one dict: ceilings, transfers, memory, roofline, fpga.

    ``region_rows``: "path" (default: one transfer group, memory row and roofline point per
    region path, instances summed) or "instance" (one per region record). Cached on ``prof``
    per argument set (a Profile is immutable once the trace stopped)."""
    from fpgaprof import fpga

    if region_rows not in ("path", "instance"):
        raise ValueError(f"region_rows={region_rows!r}: use 'path' or 'instance'")
    tgt = fpga.target_spec(target)
    key = repr((tgt, ceilings_override, workload_s, inputs_cross_link, tiny_bytes, tiny_flood_count,
                latency_kernel_ns, top_buffers, region_rows))
    cache = getattr(prof, "_fpgaprof_analysis_cache", None)
    if isinstance(cache, dict) and key in cache:
        return cache[key]
    ceil = dict(ceilings_override) if ceilings_override is not None else ceilings(prof)
    result = _core.analysis.analyze(
        _store_of(prof), ceil, tgt, float(workload_s * 1e9) if workload_s else 0.0, bool(inputs_cross_link),
        int(tiny_bytes), int(tiny_flood_count), int(latency_kernel_ns), int(top_buffers),
        region_rows)
    try:
        if not isinstance(cache, dict):
            cache = {}
            setattr(prof, "_fpgaprof_analysis_cache", cache)
        cache[key] = result
    except (AttributeError, TypeError):
        pass  # a store or a slotted object: no cache
    return result


def _region_rows(by: str) -> str:
    rows = REGION_BY.get(by)
    if rows is None:
        raise ValueError(f"by={by!r}: use 'region' (one row per region path) or 'region_instance'")
    return rows


def roofline(prof: Any, by: str = "op", **kwargs: Any) -> Table | dict:
    """Roofline points: ``by`` = "op" (HLO ops), "region" (one row per region path, e.g.
    "outer > inner", inclusive, every instance summed: key ``region`` = the path, ``name``,
    ``depth``, ``instances``), "region_instance" (one row per region record: ``region`` = its
    name, ``index``, ``path``), "kernel" (kernel names) or "trace" (one dict). Each row: time,
    flops, bytes, intensity, achieved FLOP/s and B/s, the roof and its precision,
    percent_of_roof, bound (memory | compute | latency | unknown; a path's from its sums), and
    measured_* values when counters were collected."""
    if by in REGION_BY:
        r = analyze(prof, region_rows=REGION_BY[by], **kwargs)["roofline"]
        # Without any kernel a region has no GPU time, FLOPs or bytes to show: rows of zeros
        # would read as measured, so the table is empty and says why (as report.html).
        rows = [] if _kernel_count(prof) == 0 else r["regions"]
        t = Table(sorted(rows, key=lambda x: -x["time_ns"]))
        t.title = f"roofline by {by}"
        t.empty_note = _no_rows_note(prof, "no fpgaprof.region() with GPU kernels inside",
                                     regions=True)
        return t
    r = analyze(prof, **kwargs)["roofline"]
    if by == "trace":
        return r["trace"]
    key = {"op": "ops", "ops": "ops", "kernel": "kernels", "kernels": "kernels"}.get(by)
    if key is None:
        raise ValueError(f"by={by!r}: use 'op', 'region', 'region_instance', 'kernel' or 'trace'")
    rows = sorted(r[key], key=lambda x: -x["time_ns"])
    t = Table(rows)
    t.title = f"roofline by {key[:-1]}"
    t.empty_note = _no_rows_note(prof, "no kernel was attributed to an HLO op" if key == "ops" else "")
    return t


def _kernel_count(prof: Any) -> int | None:
    try:
        return len(getattr(_store_of(prof), "kernels"))
    except Exception:  # noqa: BLE001 - only a note is at stake
        return None


def _no_rows_note(prof: Any, otherwise: str, *, regions: bool = False) -> str:
    """Why an analysis table of `prof` is empty, in the words of every report
    (fpgaprof.report._data.empty_reason): no GPU kernels at all, else `otherwise`.
    regions: a table of region rows, which says so when the trace has no fpgaprof.region()."""
    from fpgaprof.report import _data as D

    n = _kernel_count(prof)
    if regions and n != 0:
        try:
            if len(getattr(_store_of(prof), "regions")) == 0:
                return "no fpgaprof.region() in the trace"
        except Exception:  # noqa: BLE001 - only the note is at stake
            pass
    gpu = bool(D._meta_dict(_store_of(prof)).get("gpu_available", False))
    return D.empty_reason(n, otherwise, gpu)


def transfers(prof: Any, by: str = "region", **kwargs: Any) -> dict:
    """Copies per direction for the trace, each region path (``by="region"``; groups of kind
    "region_path" with ``region`` = the path and ``instances``) or each region record
    (``by="region_instance"``; kind "region"), and each HLO op, with flags."""
    from fpgaprof.report.notebook import transfer_report

    an = analyze(prof, region_rows=_region_rows(by), **kwargs)
    # a dict that prints (and shows in Jupyter) as tables; its items are the analysis' own
    return transfer_report(prof, an["transfers"], [r.get("module") for r in an["roofline"]["ops"]])


def memory(prof: Any, by: str = "region", **kwargs: Any) -> dict:
    """Device-memory timeline, peaks (trace, device) and the largest buffers; ``regions``: one
    row per region path (``by="region"``: peak = the highest instance's, allocations summed) or
    per region record (``by="region_instance"``)."""
    from fpgaprof.report.notebook import memory_report

    return memory_report(prof, analyze(prof, region_rows=_region_rows(by), **kwargs)["memory"])


def devices(prof: Any, **kwargs: Any) -> dict:
    """One row per GPU (kernels, busy and idle time, copies per direction against that
    device's own host link, memory peak, ceilings, launching threads) and the load balance
    between them (``balance``): the analysis' ``devices`` dict, printing as tables."""
    from fpgaprof.report.notebook import device_report

    return device_report(prof, analyze(prof, **kwargs)["devices"])


def _rows(items: Iterable[Mapping]) -> Table:
    return Table(dict(x) for x in items)
