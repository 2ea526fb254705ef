"""``prof.energy_report(by=...)``: the GPU energy of a trace, measured through NVML (the total
energy counter; power readings where there is none), per region path, region record, device,
or HLO op, from the Profile's cached analysis (the C++ energy analysis; docs/energy.md). The
per-op table is an attribution (each sampled interval's busy energy split by the ops' share of
the busy time), not a measurement."""

from __future__ import annotations

from typing import Any

from fpgaprof.analysis.sections import traced_gpu_ids
from fpgaprof.api.roofline import analyze
from fpgaprof.base.errors import InvalidArgumentError
from fpgaprof.views.sections import energy_device_notes
from fpgaprof.views.tables import Table

__all__ = ["energy_report", "ENERGY_BY"]

ENERGY_BY = ("region", "region_instance", "op", "device")

WINDOW_COLUMNS = (
    "region",
    "device_id",
    "joules",
    "mean_w",
    "peak_w",
    "duration_ns",
    "coverage_ns",
    "from_counter",
)
DEVICE_COLUMNS = (
    "device_id",
    "joules",
    "mean_w",
    "peak_w",
    "idle_w",
    "idle_ns",
    "samples",
    "has_counter",
    "backwards_intervals",
)
OP_COLUMNS = ("hlo_op", "module", "joules", "busy_ns")
LABELS = {
    "joules": "J",
    "mean_w": "mean W",
    "peak_w": "peak W",
    "idle_w": "idle W",
    "idle_ns": "idle for",
    "coverage_ns": "sampled",
}

# The rows of the per-op attribution that are not ops (the analysis' totals of the trace).
OTHER_ROWS = (
    ("unattributed_joules", "(kernels without an HLO op)"),
    ("copies_joules", "(copies and memsets)"),
    ("idle_joules", "(device idle)"),
)


def energy_report(prof: Any, by: str = "region", **kwargs: Any) -> Table:
    """Joules, mean and peak watts per region path (``by="region"``: instances summed, one row
    per path and GPU), per region record (``"region_instance"``), per GPU (``"device"``: with idle
    watts, the median power while nothing runs on it) or per HLO op (``"op"``: an attribution,
    with rows for kernels without an op, copies and idle time, which add up to the total).
    ``meta``: whether energy was measured, the sampling period, the counter's measured update
    period (ns; 0 unknown) and the total joules."""
    if by not in ENERGY_BY:
        raise InvalidArgumentError(
            f"by={by!r}: use 'region', 'region_instance', 'op' or 'device' (energy_report)"
        )
    an = analyze(prof, **kwargs)
    e = an["energy"]
    if by == "region":
        t = Table(e["region_paths"])
        t.title = "GPU energy per region path (measured, NVML)"
        t.display = WINDOW_COLUMNS
    elif by == "region_instance":
        t = Table(e["regions"])
        t.title = "GPU energy per region record (measured, NVML)"
        t.display = ("region_index",) + WINDOW_COLUMNS
    elif by == "device":
        t = Table(e["devices"])
        t.title = "GPU energy per device (measured, NVML)"
        t.display = DEVICE_COLUMNS
    else:
        rows = [dict(r, attribution=True) for r in e["ops"]]
        for key, label in OTHER_ROWS:
            if e[key] > 0:
                rows.append(
                    {
                        "op_index": None,
                        "hlo_op": label,
                        "module": "",
                        "joules": e[key],
                        "busy_ns": None,
                        "attribution": True,
                    }
                )
        t = Table(rows)
        t.title = (
            "GPU energy per HLO op: an attribution (each interval's busy energy split by "
            "the ops' share of the busy time), not a measurement"
        )
        t.display = OP_COLUMNS
    t.labels = LABELS
    t.meta = {k: e[k] for k in ("measured", "sample_period_ns", "update_period_ns", "total_joules")}
    if not e["measured"]:
        t.empty_note = (
            "no GPU power samples in this trace: NVML was not available while tracing "
            "(prof.warnings says why) or the trace was made with power_sample_ms=0"
        )
    elif not t:
        t.empty_note = "no fpgaprof.region() in this trace" if by.startswith("region") else ""
    t.footer = (
        f"total {e['total_joules']:.4g} J; energy counter update period "
        f"{e['update_period_ns'] / 1e6:.3g} ms"
        if e["measured"] and e["update_period_ns"]
        else (f"total {e['total_joules']:.4g} J" if e["measured"] else "")
    )
    flat = [d["device_id"] for d in e["devices"] if d["flat_counter"]]
    if flat:
        t.footer += (
            f"{'; ' if t.footer else ''}the energy counter of GPU "
            f"{', '.join(str(d) for d in flat)} did not change while read: its joules "
            "integrate the power readings (1 s averages on Ampere and later)"
        )
    if e["measured"]:
        sampled = {int(d["device_id"]) for d in e["devices"]}
        unsampled = sorted(traced_gpu_ids(an) - sampled)
        if unsampled:
            t.footer += (
                f"{'; ' if t.footer else ''}GPU {', '.join(str(d) for d in unsampled)} traced "
                "but not sampled (no power samples: prof.warnings says why): the rows "
                f"{'' if by.startswith('region') else 'and the total '}leave its energy out"
            )
    if by == "device":
        t.footer += energy_device_notes(e["devices"], t.footer)
    if by.startswith("region"):
        unsampled_rows = sum(1 for r in t if r["coverage_ns"] == 0)
        if unsampled_rows:
            t.footer += (
                f"{'; ' if t.footer else ''}{unsampled_rows} of {len(t)} rows not sampled at "
                "all (the window lies outside the GPU's sampled span: before the first power "
                "sample, or after the energy counter's last step): their J, mean W and peak W "
                "are unknown (–), not 0"
            )
        short = sum(1 for r in t if 0 < r["coverage_ns"] < r["duration_ns"])
        if short:
            t.footer += (
                f"{'; ' if t.footer else ''}{short} of {len(t)} rows sampled for less than "
                "their duration: their joules cover the sampled part only (mean W over it); "
                "the energy counter's last step before the trace ended bounds what a region "
                "ending with the trace can show"
            )
        unknown_peak = sum(1 for r in t if r["coverage_ns"] > 0 and not r["peak_w"])
        if unknown_peak:
            t.footer += (
                f"{'; ' if t.footer else ''}peak W unknown (–) in {unknown_peak} sampled rows "
                "(no power reading in force there: NVML's power reads failed, and the sampler "
                "stopped reading power)"
            )
    return t
