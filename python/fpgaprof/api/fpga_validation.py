"""The FPGA model against published, measured FPGA results (docs/fpga-validation.md).

Every anchor in ``data/fpga_anchors.json`` is a kernel someone built and timed on an Alveo or
Versal card: its measured figure, the card, the size, the source with the exact place the figure
is printed, and the JAX function of the same size (a builder below). ``table()`` estimates each
one with ``fpgaprof.fpga.estimate`` (the static what-if, both scenarios) and sets the prediction
beside the measurement.

Calibration and validation are kept apart by source (``source_id``: the group whose designs an
anchor or a calibration measurement comes from): a source whose facts (a time, a rate, a PE count,
a channel count, a DSP share) set any constant is a calibration source, and none of its anchors
validates (``source_overlap()`` is empty). ``leave_one_source_out()`` refits every constant without
one calibration source's measurements and predicts that source's anchors with the refitted
constants.

    python -m fpgaprof.fpga_validation            # the table as Markdown
"""

from __future__ import annotations

import json
import math
import os
import statistics
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

from fpgaprof.api import fpga
from fpgaprof.api.answer import enclosing_only
from fpgaprof.api.profile import load
from fpgaprof.base.units import fmt_s, fmt_s_ranged, fmt_speedup, fmt_speedup_range

__all__ = [
    "anchors",
    "calibration",
    "table",
    "summary",
    "sources",
    "source_overlap",
    "refit",
    "leave_one_source_out",
    "loso_summary",
    "markdown",
    "trace_conclusions",
    "estimate_anchor",
    "measured_seconds",
    "BUILDERS",
    "scope_chain",
]

# Goals of docs/fpga-validation.md over the validation anchors: none beyond 2.5x of its
# measurement, the geometric mean of the ratios (taken symmetric: max(r, 1/r)) within 1.5x, and
# at least 80 % of the measurements inside the estimate's range.
WITHIN = 2.5
GEOMEAN_WITHIN = 1.5
IN_RANGE_SHARE = 0.8


def _data(name: str) -> Any:
    return json.loads(
        resources.files("fpgaprof").joinpath("data").joinpath(name).read_text(encoding="utf-8")
    )


def anchors() -> list[dict]:
    """The published measurements (data/fpga_anchors.json), as stored."""
    return _data("fpga_anchors.json")["anchors"]


def calibration() -> dict:
    """The measurements behind every calibrated constant (data/fpga_calibration.json)."""
    return _data("fpga_calibration.json")


# ---- the JAX functions of the anchors -----------------------------------------------------------
# Each builder returns (fn, args): a function and ShapeDtypeStructs of the anchor's size.


def _sds(shape: tuple, dtype: str) -> Any:
    import jax
    import jax.numpy as jnp

    return jax.ShapeDtypeStruct(tuple(int(d) for d in shape), jnp.dtype(dtype))


def stream_triad(n: int, dtype: str = "float32") -> tuple:
    def triad(b, c):
        return b + 3.0 * c

    return triad, (_sds((n,), dtype), _sds((n,), dtype))


def stream_copy(n: int, dtype: str = "float32") -> tuple:
    def copy(a):
        return a + 0  # a new array of the same values (c = a): one read, one write per element

    return copy, (_sds((n,), dtype),)


def stream_scale(n: int, dtype: str = "float32") -> tuple:
    def scale(c):
        return 3.0 * c

    return scale, (_sds((n,), dtype),)


def stream_add(n: int, dtype: str = "float32") -> tuple:
    def add(a, b):
        return a + b

    return add, (_sds((n,), dtype), _sds((n,), dtype))


def gemm(m: int, n: int, k: int, dtype: str = "float32", update: bool = False) -> tuple:
    import jax

    def matmul(a, b):
        return jax.numpy.matmul(a, b, precision=jax.lax.Precision.HIGHEST)

    def matmul_update(a, b, c):
        return 0.5 * c + 2.0 * matmul(a, b)

    if update:
        return matmul_update, (_sds((m, k), dtype), _sds((k, n), dtype), _sds((m, n), dtype))
    return matmul, (_sds((m, k), dtype), _sds((k, n), dtype))


def gemv(m: int, n: int, dtype: str = "float64") -> tuple:
    import jax

    def matvec(a, x):
        return jax.numpy.matmul(a, x, precision=jax.lax.Precision.HIGHEST)

    return matvec, (_sds((m, n), dtype), _sds((n,), dtype))


def fft1d(n: int, batch: int, dtype: str = "complex64", inverse: bool = False) -> tuple:
    import jax.numpy as jnp

    def fft(x):
        return jnp.fft.fft(x, axis=-1)

    def ifft(x):
        return jnp.fft.ifft(x, axis=-1)

    return (ifft if inverse else fft), (_sds((batch, n), dtype),)


def sort(n: int, dtype: str = "int32") -> tuple:
    import jax.numpy as jnp

    def sort_keys(x):
        return jnp.sort(x)

    return sort_keys, (_sds((n,), dtype),)


def random_access(table_len: int, updates: int, dtype: str = "uint64") -> tuple:
    # HPCC RandomAccess XORs each update into the table; JAX scatters have no XOR, an add has the
    # same memory traffic (one read and one write of a data-dependent element per update).
    def update(table, index, value):
        return table.at[index].add(value)

    index_dtype = "int64" if dtype.endswith("64") else "int32"
    return update, (
        _sds((table_len,), dtype),
        _sds((updates,), index_dtype),
        _sds((updates,), dtype),
    )


def spmv(rows: int, cols: int, nnz: int, dtype: str = "float32", axpby: bool = False) -> tuple:
    # Coordinate form: the value, column and row of each nonzero; x gathered, summed per row.
    # The indices take the narrowest integer type the dimensions allow, as the published designs
    # pack them (HiSpMV: 16-bit row, 13-bit column beside each 32-bit value).
    import jax

    def matvec(values, col, row, x):
        return jax.ops.segment_sum(values * x[col], row, num_segments=rows, indices_are_sorted=True)

    def matvec_axpby(values, col, row, x, y):
        return 2.0 * matvec(values, col, row, x) + 0.5 * y

    index = "uint16" if max(rows, cols) <= 1 << 16 else "int32"
    args = (_sds((nnz,), dtype), _sds((nnz,), index), _sds((nnz,), index), _sds((cols,), dtype))
    if axpby:
        return matvec_axpby, args + (_sds((rows,), dtype),)
    return matvec, args


def conv3x3(
    channels_in: int, channels_out: int, height: int, width: int, dtype: str = "float32"
) -> tuple:
    import jax

    def conv(x, w):
        return jax.lax.conv_general_dilated(
            x,
            w,
            (1, 1),
            "VALID",
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
            precision=jax.lax.Precision.HIGHEST,
        )

    return conv, (
        _sds((1, height + 2, width + 2, channels_in), dtype),
        _sds((3, 3, channels_in, channels_out), dtype),
    )


def mttkrp(i: int, j: int, k: int, l: int, dtype: str = "float32") -> tuple:  # noqa: E741 - AutoSA's index names
    # D[i,j] = sum_{k,l} A[i,k,l] B[k,j] C[j,l], as AutoSA evaluates it: the whole (i,j,k,l) loop
    # nest, 3 FLOPs per point (einsum would contract it as two products with fewer FLOPs).
    def contract(a, b, c):
        return (a[:, None, :, :] * b.T[None, :, :, None] * c[None, :, None, :]).sum(axis=(2, 3))

    return contract, (_sds((i, k, l), dtype), _sds((k, j), dtype), _sds((j, l), dtype))


def ttmc(i: int, j: int, k: int, l: int, m: int, dtype: str = "float32") -> tuple:  # noqa: E741 - AutoSA's index names
    # D[i,j,k] = sum_{l,m} A[i,l,m] B[l,j] C[k,m], as AutoSA evaluates it: the (i,j,k,l,m) loop
    # nest.
    def contract(a, b, c):
        return (
            a[:, None, None, :, :] * b.T[None, :, None, :, None] * c[None, None, :, None, :]
        ).sum(axis=(3, 4))

    return contract, (_sds((i, l, m), dtype), _sds((l, j), dtype), _sds((k, m), dtype))


BUILDERS: dict[str, Callable[..., tuple]] = {
    "stream_triad": stream_triad,
    "stream_copy": stream_copy,
    "stream_scale": stream_scale,
    "stream_add": stream_add,
    "gemm": gemm,
    "gemv": gemv,
    "fft1d": fft1d,
    "sort": sort,
    "random_access": random_access,
    "spmv": spmv,
    "conv3x3": conv3x3,
    "mttkrp": mttkrp,
    "ttmc": ttmc,
}


# ---- the table ----------------------------------------------------------------------------------

_RATE_UNITS = {"GB/s": 1e9, "GFLOP/s": 1e9, "GOPS": 1e9, "MUOP/s": 1e6, "TOPs": 1e12}
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def measured_seconds(anchor: Mapping) -> float:
    """The anchor's measured time: printed as a time, or its rate's own work count (as the source
    counts it: bytes for GB/s, FLOPs for GFLOP/s, updates for MUOP/s) divided by the rate."""
    m = anchor["measured"]
    unit = m["unit"]
    if unit in _TIME_UNITS:
        return float(m["value"]) * _TIME_UNITS[unit]
    if unit in _RATE_UNITS:
        return float(anchor["work"]["value"]) / (float(m["value"]) * _RATE_UNITS[unit])
    raise ValueError(f"anchor {anchor['id']}: unit {unit!r} has no conversion")


def _needs_x64(model: Mapping) -> bool:
    args = model.get("args") or {}
    return any(isinstance(v, str) and v.endswith("64") and v != "complex64" for v in args.values())


_HLO: dict[str, str] = {}


def _anchor_hlo(anchor: Mapping) -> str:
    """The optimized HLO of the anchor's JAX function, compiled once per process (the estimate
    of one HLO on several cards, or with refitted constants, needs no second compilation)."""
    import jax

    key = json.dumps(anchor["model"], sort_keys=True)
    if key not in _HLO:
        model = anchor["model"]
        with jax.enable_x64(_needs_x64(model)):
            fn, args = BUILDERS[model["builder"]](**model.get("args", {}))
            text = jax.jit(fn).lower(*args).compile().as_text()
        if not isinstance(text, str):
            raise ValueError(f"anchor {anchor['id']}: this JAX gives no optimized HLO text")
        _HLO[key] = text
    return _HLO[key]


def estimate_anchor(anchor: Mapping, target: Any = None) -> Any:
    """fpgaprof.fpga.estimate of the anchor's JAX function on its card (or on ``target``: the
    card with refitted constants, a dict with ``base``), with the matrix's row imbalance where
    the source prints it for a row-imbalanced matrix (``row_imbalance``, as a user gives it)."""
    return fpga.estimate_hlo(
        _anchor_hlo(anchor),
        target=target or anchor["card"],
        row_imbalance=anchor.get("row_imbalance"),
    )


def _predicted(est: Any, timed: str, scenario: str) -> tuple[float, float, float]:
    """(nominal, low, high) seconds of what the anchor timed: the kernel alone (the card time
    without its launch), the kernel and its launch, or everything with the transfers."""
    restructured = scenario == "restructured"
    key = "restructured_card_time" if restructured else "card_time"
    nominal, (low, high) = getattr(est, f"{key}_s"), getattr(est, f"{key}_range_s")
    if timed == "kernel":
        launch = est.target
        nominal -= launch["call_latency_s"]
        low -= launch["call_latency_s_low"]
        high -= launch["call_latency_s_high"]
    elif timed == "end to end":
        key = "restructured_total" if restructured else "total"
        nominal, (low, high) = getattr(est, f"{key}_s"), getattr(est, f"{key}_range_s")
    return nominal, low, high


def _printed(measured: Mapping) -> str:
    """The measured figure as the source prints it (a number with its unit, or a printed word such
    as "inf" for a cell that is no measurement)."""
    v = measured["value"]
    return (
        f"{v:g} {measured['unit']}" if isinstance(v, (int, float)) else f"{v} ({measured['unit']})"
    )


def _limit(est: Any) -> str:
    return next(
        (
            o.get("card_limit")
            for o in sorted(est, key=lambda o: -(o.get("card_time_s") or 0))
            if o.get("card_limit")
        ),
        "",
    )


def _compare(row: dict, a: Mapping, est: Any) -> None:
    """Fills ``row`` with the anchor's estimate in both scenarios (with ranges) and the ratio of
    the design's own scenario at the end it is compared with."""
    for scen in ("as compiled", "restructured"):
        n, lo, hi = _predicted(est, a["timed"], scen)
        prefix = "as_compiled" if scen == "as compiled" else "restructured"
        row[f"{prefix}_s"], row[f"{prefix}_low_s"], row[f"{prefix}_high_s"] = n, lo, hi
    pre = "restructured" if a["scenario"] == "restructured" else "as_compiled"
    # A calibration anchor is compared with the end of the range it sets (TopSort sets the sort
    # rate's fast end: the low end of the time).
    row["sets"] = a.get("sets", "nominal") if a["role"] == "calibration" else "nominal"
    end = {"nominal": "", "low": "_low", "high": "_high"}[row["sets"]]
    row["predicted_s"] = row[f"{pre}{end}_s"]
    row["ratio"] = row["predicted_s"] / row["measured_s"]
    row["in_range"] = row[f"{pre}_low_s"] <= row["measured_s"] <= row[f"{pre}_high_s"]
    row["within_goal"] = 1 / WITHIN <= row["ratio"] <= WITHIN


def table(ids: list[str] | None = None) -> list[dict]:
    """One row per anchor (``ids``: only these): its role (validation, calibration, out of model),
    its source, the measured time, the model's estimate in both scenarios with its range, the
    scenario the published design corresponds to, and the ratio predicted / measured of that
    one."""
    rows = []
    for a in anchors():
        if ids is not None and a["id"] not in ids:
            continue
        row = {
            "id": a["id"],
            "kernel": a["kernel"],
            "card": a["card_label"],
            "size": a["size_text"],
            "role": a["role"],
            "source_id": a["source_id"],
            "timed": a.get("timed", ""),
            "scenario": a.get("scenario", ""),
            "measured": _printed(a["measured"]),
            "measured_s": measured_seconds(a) if a["role"] != "out of model" else None,
            "reason": a.get("reason", ""),
            "source": a["source"]["title"],
            "location": a["source"]["location"],
        }
        if a["role"] != "out of model":
            est = estimate_anchor(a)
            _compare(row, a, est)
            row["card_limit"] = _limit(est)
        rows.append(row)
    return rows


def _stats(rows: list[dict]) -> dict:
    sym = [max(r["ratio"], 1 / r["ratio"]) for r in rows]
    return {
        "count": len(rows),
        "within_goal": sum(r["within_goal"] for r in rows),
        "in_range": sum(r["in_range"] for r in rows),
        "in_range_share": sum(r["in_range"] for r in rows) / len(rows) if rows else math.nan,
        "geomean": math.exp(statistics.fmean(math.log(x) for x in sym)) if sym else math.nan,
        "worst": max(sym) if sym else math.nan,
    }


def summary(rows: list[dict]) -> dict:
    """The goals over the validation rows: count, how many within 2.5x and within their range,
    the share inside the range, the geometric mean of max(ratio, 1/ratio), the worst, and
    whether the three goals hold."""
    st = _stats([r for r in rows if r["role"] == "validation"])
    return {
        "validation": st["count"],
        "within_goal": st["within_goal"],
        "in_range": st["in_range"],
        "in_range_share": st["in_range_share"],
        "geomean": st["geomean"],
        "worst": st["worst"],
        "goals_met": bool(
            st["count"]
            and st["geomean"] <= GEOMEAN_WITHIN
            and st["worst"] <= WITHIN
            and st["in_range_share"] >= IN_RANGE_SHARE
        ),
        "calibration": sum(r["role"] == "calibration" for r in rows),
        "out_of_model": sum(r["role"] == "out of model" for r in rows),
    }


# ---- sources: calibration and validation apart, and the leave-one-source-out error ---------------


def sources() -> dict[str, dict]:
    """Per source id: the constants its measurements set (``scope field``), and its anchors by
    role. A source is a calibration source when it sets a constant or has a calibration anchor."""
    out: dict[str, dict] = {}

    def entry(sid: str) -> dict:
        return out.setdefault(sid, {"constants": [], "anchors": {}})

    for c in calibration()["constants"]:
        for m in c["measurements"]:
            e = entry(m["source_id"])
            name = f"{c['field']} ({c['scope']})"
            if name not in e["constants"]:
                e["constants"].append(name)
    for a in anchors():
        entry(a["source_id"])["anchors"].setdefault(a["role"], []).append(a["id"])
    for e in out.values():
        e["role"] = (
            "calibration"
            if e["constants"] or "calibration" in e["anchors"]
            else "validation"
            if "validation" in e["anchors"]
            else "out of model"
        )
    return out


def source_overlap() -> list[str]:
    """Sources that both calibrate (set a constant, or hold a calibration anchor) and validate:
    empty when calibration and validation are apart."""
    return sorted(
        sid
        for sid, e in sources().items()
        if (e["constants"] or "calibration" in e["anchors"]) and "validation" in e["anchors"]
    )


def _rule(c: Mapping, end: str, constants: list[Mapping], exclude: str | None) -> float | None:
    """One end of a constant by its rule over its measurements, without those of source
    ``exclude``; None when the rule needs measurements and none is left."""
    rule = c["rule"][end]
    if isinstance(rule, dict):
        if "value" in rule:
            return float(rule["value"])
        if "same_as" in rule:
            other = next(
                o for o in constants if o["scope"] == rule["same_as"] and o["field"] == c["field"]
            )
            return _rule(other, end, constants, exclude)
        reads = next(
            o for o in constants if o["scope"] == "hbm2" and o["field"] == "random_reads_per_s"
        )
        nominal = _rule(reads, "nominal", constants, exclude)
        return None if nominal is None else nominal / 2
    values = _values(c, exclude, end)
    if not values:
        return None
    how = rule.split(" of ")[0]
    fn: dict[str, Callable[[list[float]], float]] = {
        "median": statistics.median,
        "min": min,
        "max": max,
        "mean": statistics.fmean,
    }
    return float(fn[how](values))


def _values(c: Mapping, exclude: str | None, end: str) -> list[float]:
    """A constant's measurements without those of source ``exclude``. A design known only by
    its PE count (``from_pes``: no timing of its own) gets 2 x PEs x the median fraction of one
    nonzero per PE per cycle that the timed designs left achieve (``onchip_lanes``), so the
    timed designs' source is left out of it too."""
    kept = [
        m
        for m in c["measurements"]
        if m["source_id"] != exclude and (end != "nominal" or m.get("in_nominal", True))
    ]
    timed = [
        float(m["value"]) / (2 * m["pes"]) for m in kept if "pes" in m and not m.get("from_pes")
    ]
    out = []
    for m in kept:
        if not m.get("from_pes"):
            out.append(float(m["value"]))
        elif timed:
            out.append(2 * m["pes"] * statistics.median(timed))
    return out


def refit(exclude: str | None = None) -> list[dict]:
    """Every calibrated constant by its rule over its measurements, leaving out those of source
    ``exclude``: scope, field, (nominal, low, high), with None where no measurement is left."""
    constants = calibration()["constants"]
    out = []
    for c in constants:
        ends = tuple(_rule(c, e, constants, exclude) for e in ("nominal", "low", "high"))
        out.append({"scope": c["scope"], "field": c["field"], "values": ends})
    return out


# Scopes that name a group of presets rather than a memory type or one card (fpga_calibration.json,
# "about"): the DDR4 of the Intel cards, measured on the BittWare 520N, and the Intel cards' host
# runtime (launch and small-copy latencies), which stands before the fabric's.
GROUP_SCOPES: dict[str, tuple[str, ...]] = {
    "intel-ddr4": ("intel-pac-a10", "bittware-520n-s10gx", "intel-pac-d5005"),
    "intel-fabric": ("intel-pac-a10", "bittware-520n-s10gx", "intel-pac-d5005", "intel-s10mx-2100"),
}


def scope_chain(memory_type: str, name: str) -> list[str]:
    """The scopes whose constants reach preset ``name`` with ``memory_type``, the most specific
    first: its own, a group's it belongs to (when its memory type is the group's), its memory
    type's (HBM2e's, then HBM2's), a fabric group's it belongs to, the fabric's. A constant is
    the preset's when no earlier scope sets its field."""
    mine = [g for g, cards in GROUP_SCOPES.items() if name in cards]
    memory = [g for g in mine if g.endswith(memory_type)]
    fabric = [g for g in mine if g.endswith("-fabric")]
    # Versal HBM2e takes UltraScale+ HBM2's access timing where it has no measurement of its own.
    types = [memory_type, *(["hbm2"] if memory_type == "hbm2e" else [])]
    return [name, *memory, *types, *fabric, "fabric"]


def leave_one_source_out() -> list[dict]:
    """For each calibration source with estimated anchors: every constant refitted without its
    measurements, and each of its anchors predicted on its card with the refitted constants.
    A constant left without measurements keeps its value when the anchor's estimate does not
    depend on it (the estimate is the same at both ends of its range); otherwise the anchor is
    not predictable without its own source (``missing`` names the constants)."""
    cards = {p["name"]: p for p in fpga.presets()}
    current = {(c["scope"], c["field"]): c["values"] for c in calibration()["constants"]}
    out = []
    for sid, e in sources().items():
        if e["role"] != "calibration":
            continue
        own = [a for a in anchors() if a["source_id"] == sid and a["role"] == "calibration"]
        if not own:
            continue
        fitted = refit(sid)
        for a in own:
            spec = a["card"] if isinstance(a["card"], dict) else {"base": a["card"]}
            base = spec["base"]
            memory = spec.get("memory_type", cards[base]["memory_type"])
            over: dict[str, Any] = dict(spec, name=f"{spec.get('name', base)} without {sid}")
            changed, missing = [], []
            chain = scope_chain(memory, base)
            for f in fitted:
                if f["scope"] not in chain:
                    continue
                ahead = chain[: chain.index(f["scope"])]
                if any(g["scope"] in ahead and g["field"] == f["field"] for g in fitted):
                    continue  # a more specific scope's constant replaces this one
                cur = current[(f["scope"], f["field"])]
                vals = f["values"]
                if None in vals:
                    lo = dict(over, **{f["field"]: cur["low"]})
                    hi = dict(over, **{f["field"]: cur["high"]})
                    a_lo = _predicted(estimate_anchor(a, lo), a["timed"], a["scenario"])[0]
                    a_hi = _predicted(estimate_anchor(a, hi), a["timed"], a["scenario"])[0]
                    if not math.isclose(a_lo, a_hi, rel_tol=1e-9):
                        missing.append(f"{f['field']} ({f['scope']})")
                    continue
                if any(
                    not math.isclose(v, cur[k], rel_tol=1e-9)
                    for v, k in zip(vals, ("nominal", "low", "high"))
                ):
                    over[f["field"]], over[f["field"] + "_low"], over[f["field"] + "_high"] = vals
                    changed.append(f"{f['field']} ({f['scope']}) {vals[0]:.4g}")
            row = {
                "source_id": sid,
                "id": a["id"],
                "kernel": a["kernel"],
                "role": "calibration",
                "timed": a["timed"],
                "scenario": a["scenario"],
                "measured_s": measured_seconds(a),
                "refitted": changed,
                "missing": missing,
            }
            if not missing:
                # compared at the nominal end: the source no longer sets an end of its own
                _compare(row, dict(a, role="loso"), estimate_anchor(a, over))
            out.append(row)
    return out


def loso_summary(rows: list[dict]) -> dict:
    """Geometric mean, worst and share inside the range of the leave-one-source-out
    predictions, and how many anchors could not be predicted without their own source."""
    st = _stats([r for r in rows if not r["missing"]])
    st["not_predictable"] = sum(bool(r["missing"]) for r in rows)
    return st


def markdown(rows: list[dict], loso: list[dict] | None = None) -> str:
    """The validation tables of docs/fpga-validation.md (generated: scripts/fpga_docs.py)."""
    s = summary(rows)
    out = [
        f"{s['validation']} validation anchors: geometric mean of max(ratio, 1/ratio) "
        f"{s['geomean']:.2f}x (goal {GEOMEAN_WITHIN}x), worst {s['worst']:.2f}x (goal "
        f"{WITHIN}x), {s['in_range']} of {s['validation']} ({100 * s['in_range_share']:.0f} %) "
        f"inside the model's range (goal {100 * IN_RANGE_SHARE:.0f} %): "
        + ("the goals hold." if s["goals_met"] else "the goals do not all hold.")
        + f" {s['calibration']} calibration anchors, {s['out_of_model']} out of model.",
        "",
    ]
    if loso is not None:
        ls = loso_summary(loso)
        out += [
            f"Leave one source out: {ls['count']} of {ls['count'] + ls['not_predictable']} "
            "calibration anchors predicted with every constant refitted without their own "
            f"source's measurements: geometric mean "
            f"{ls['geomean']:.2f}x, worst {ls['worst']:.2f}x, {ls['in_range']} of {ls['count']} "
            f"({100 * ls['in_range_share']:.0f} %) inside the range; {ls['not_predictable']} not "
            "predictable without their own source.",
            "",
        ]
    srcs = sources()
    out += [
        "### Sources",
        "",
        "| source | role | constants its measurements set | "
        "anchors (validation / calibration / out of model) |",
        "|---|---|---|---|",
    ]
    for sid in sorted(srcs, key=lambda k: (srcs[k]["role"], k)):
        e = srcs[sid]
        n = [len(e["anchors"].get(r, [])) for r in ("validation", "calibration", "out of model")]
        out.append(
            f"| {sid} | {e['role']} | {', '.join(e['constants']) or '-'} | "
            f"{n[0]} / {n[1]} / {n[2]} |"
        )
    out.append("")
    for role, title in (
        ("validation", "Validation anchors (no fact of their sources sets a constant)"),
        (
            "calibration",
            "Calibration anchors (their sources set constants; the ratio is taken at the end of "
            "the range they set)",
        ),
    ):
        extra = " sets |" if role == "calibration" else ""
        out += [
            f"### {title}",
            "",
            "| anchor | source | kernel | card | size | timed | measured | design | "
            f"estimate (range) | other scenario | ratio | limit as compiled |{extra}",
            "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if extra else ""),
        ]
        for r in rows:
            if r["role"] != role:
                continue
            pre, other = (
                ("restructured", "as_compiled")
                if r["scenario"] == "restructured"
                else ("as_compiled", "restructured")
            )
            sets = f" {r['reason'].split(':')[0]} ({r['sets']}) |" if extra else ""
            out.append(
                f"| {r['id']} | {r['source_id']} | {r['kernel']} | {r['card']} | {r['size']} | "
                f"{r['timed']} | {fmt_s(r['measured_s'])} | {r['scenario']} | "
                f"{fmt_s_ranged(r[pre + '_s'], r[pre + '_low_s'], r[pre + '_high_s'])} | "
                f"{fmt_s(r[other + '_s'])} | "
                f"{r['ratio']:.2f} | {r.get('card_limit', '')} |{sets}"
            )
        out.append("")
    if loso is not None:
        out += [
            "### Leave one source out (each calibration source's anchors, its measurements "
            "left out of every constant)",
            "",
            "| source | anchor | measured | estimate (range) | ratio | constants refitted |",
            "|---|---|---|---|---|---|",
        ]
        for r in loso:
            pre = "restructured" if r["scenario"] == "restructured" else "as_compiled"
            if r["missing"]:
                est, ratio = "not predictable: no other source for " + ", ".join(r["missing"]), "-"
            else:
                est = fmt_s_ranged(r[pre + "_s"], r[pre + "_low_s"], r[pre + "_high_s"])
                ratio = f"{r['ratio']:.2f}"
            out.append(
                f"| {r['source_id']} | {r['id']} | {fmt_s(r['measured_s'])} | {est} | {ratio} | "
                f"{', '.join(r['refitted']) or 'none changed'} |"
            )
        out.append("")
    out += [
        "### Out of model (listed, not estimated)",
        "",
        "| anchor | source | kernel | card | size | measured | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["role"] == "out of model":
            out.append(
                f"| {r['id']} | {r['source_id']} | {r['kernel']} | {r['card']} | {r['size']} | "
                f"{r['measured']} | {r['reason']} |"
            )
    return "\n".join(out) + "\n"


# ---- what the model concludes on real traces ---------------------------------------------------


def trace_conclusions(
    paths: list[str],
    cards: tuple = ("alveo-u55c", "alveo-u280", "alveo-u250", "versal-v80"),
    regions: int = 3,
) -> str:
    """A Markdown table of what the FPGA model concludes on saved traces, per card: each
    trace's costliest region paths (``regions`` of them; a path that only encloses others left
    out, as in the answer) as whole offload units with data
    resident on the card, as compiled and restructured with their ranges, the gap between
    the two, the same restructured over PCIe, and how many HLO ops gain in either scenario."""

    def sp(r: Mapping, key: str) -> str:
        return f"{fmt_speedup(r[key])} ({fmt_speedup_range(r[key + '_low'], r[key + '_high'])})"

    out = [
        "| trace | card | region (GPU time) | as compiled | restructured | gap | "
        "restructured over PCIe | "
        "ops that gain (as compiled / restructured) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for path in paths:
        prof = load(path)
        name = os.path.basename(path).removesuffix(".fpgaprof")
        for card in cards:
            ops = fpga.fpga_candidates(prof, card, inputs_cross_link=False)
            resident = fpga.fpga_candidates(prof, card, by="region", inputs_cross_link=False)
            pcie = {r["region"]: r for r in fpga.fpga_candidates(prof, card, by="region")}
            # a path that only encloses others (a nested trace()'s region "trace") is their sum
            rows = [dict(r) for r in resident]
            enclosing = set(enclosing_only(rows))
            top = sorted(
                (r for r in rows if r["estimated"] and r["region"] not in enclosing),
                key=lambda r: -r["gpu_time_ns"],
            )[:regions]
            gains = (
                f"{ops.meta['combined_count']} / {ops.meta['restructured_combined_count']} of "
                f"{len(ops) - ops.meta['not_estimated_count']}"
            )
            for r in top:
                gap = (
                    r["restructured_region_speedup"] / r["region_speedup"]
                    if r["region_speedup"] > 0
                    else math.nan
                )
                out.append(
                    f"| {name} | {card} | {r['region']} ({fmt_s(r['gpu_time_ns'] * 1e-9)}) | "
                    f"{sp(r, 'region_speedup')} | {sp(r, 'restructured_region_speedup')} | "
                    f"{gap:.0f}x | "
                    f"{sp(pcie[r['region']], 'restructured_region_speedup')} | {gains} |"
                )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(markdown(table(), leave_one_source_out()))
