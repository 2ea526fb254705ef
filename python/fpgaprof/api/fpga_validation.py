"""The FPGA model against published, measured FPGA results (docs/fpga-validation.md).

Every anchor in ``data/fpga_anchors.json`` is a kernel someone built and timed on an Alveo or
Versal card: its measured figure, the card, the size, the source with the exact place the figure
is printed, and the JAX function of the same size (a builder below). ``table()`` estimates each
one with ``fpgaprof.fpga.estimate`` (the static what-if, both scenarios) and sets the prediction
beside the measurement; nothing here is fitted to the measured times of the validation anchors
(docs/fpga-model.md, "Constants", says which anchors' design facts enter two constants and
which anchors calibrate the sort and read-modify-write rates).

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
from fpgaprof.api.profile import load
from fpgaprof.base.units import fmt_s, fmt_s_range, fmt_speedup, fmt_speedup_range

__all__ = [
    "anchors",
    "calibration",
    "table",
    "summary",
    "markdown",
    "trace_conclusions",
    "estimate_anchor",
    "measured_seconds",
    "BUILDERS",
]

# Goals of docs/fpga-validation.md: every validation anchor within 2x of its measurement, the
# geometric mean of the ratios (taken symmetric: max(r, 1/r)) within 1.4x.
WITHIN = 2.0
GEOMEAN_WITHIN = 1.4


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


def fft1d(n: int, batch: int, dtype: str = "complex64") -> tuple:
    import jax.numpy as jnp

    def fft(x):
        return jnp.fft.fft(x, axis=-1)

    return fft, (_sds((batch, n), dtype),)


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


def estimate_anchor(anchor: Mapping) -> Any:
    """fpgaprof.fpga.estimate of the anchor's JAX function on its card."""
    import jax

    model = anchor["model"]
    fn, args = BUILDERS[model["builder"]](**model.get("args", {}))
    if _needs_x64(model):
        with jax.enable_x64(True):
            fn, args = BUILDERS[model["builder"]](**model.get("args", {}))
            return fpga.estimate(fn, *args, target=anchor["card"])
    return fpga.estimate(fn, *args, target=anchor["card"])


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


def table(ids: list[str] | None = None) -> list[dict]:
    """One row per anchor (``ids``: only these): its role (validation, calibration, out of model),
    the measured time, the model's estimate in both scenarios with its range, the scenario
    the published design corresponds to, and the ratio predicted / measured of that one."""
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
            "timed": a.get("timed", ""),
            "scenario": a.get("scenario", ""),
            "measured": f"{a['measured']['value']:g} {a['measured']['unit']}",
            "measured_s": measured_seconds(a) if a["role"] != "out of model" else None,
            "reason": a.get("reason", ""),
            "source": a["source"]["title"],
            "location": a["source"]["location"],
        }
        if a["role"] != "out of model":
            est = estimate_anchor(a)
            for scen in ("as compiled", "restructured"):
                n, lo, hi = _predicted(est, a["timed"], scen)
                prefix = "as_compiled" if scen == "as compiled" else "restructured"
                row[f"{prefix}_s"], row[f"{prefix}_low_s"], row[f"{prefix}_high_s"] = n, lo, hi
            pre = "restructured" if a["scenario"] == "restructured" else "as_compiled"
            # A calibration anchor is compared with the end of the range it sets (TopSort sets
            # the sort rate's fast end: the low end of the time).
            row["sets"] = a.get("sets", "nominal") if a["role"] == "calibration" else "nominal"
            end = {"nominal": "", "low": "_low", "high": "_high"}[row["sets"]]
            row["predicted_s"] = row[f"{pre}{end}_s"]
            row["ratio"] = row["predicted_s"] / row["measured_s"]
            row["in_range"] = row[f"{pre}_low_s"] <= row["measured_s"] <= row[f"{pre}_high_s"]
            row["within_2x"] = 1 / WITHIN <= row["ratio"] <= WITHIN
            row["card_limit"] = next(
                (
                    o.get("card_limit")
                    for o in sorted(est, key=lambda o: -(o.get("card_time_s") or 0))
                    if o.get("card_limit")
                ),
                "",
            )
        rows.append(row)
    return rows


def summary(rows: list[dict]) -> dict:
    """The goals over the validation rows: count, how many within 2x and within their range,
    the geometric mean of max(ratio, 1/ratio), and the worst."""
    val = [r for r in rows if r["role"] == "validation"]
    sym = [max(r["ratio"], 1 / r["ratio"]) for r in val]
    return {
        "validation": len(val),
        "within_2x": sum(r["within_2x"] for r in val),
        "in_range": sum(r["in_range"] for r in val),
        "geomean": math.exp(statistics.fmean(math.log(x) for x in sym)) if sym else math.nan,
        "worst": max(sym) if sym else math.nan,
        "calibration": sum(r["role"] == "calibration" for r in rows),
        "out_of_model": sum(r["role"] == "out of model" for r in rows),
    }


def markdown(rows: list[dict]) -> str:
    """The validation tables of docs/fpga-validation.md (generated: scripts/fpga_validation.py)."""
    s = summary(rows)
    out = [
        f"{s['validation']} validation anchors: {s['within_2x']} within 2x of the measurement, "
        f"{s['in_range']} inside the model's range; geometric mean of max(ratio, 1/ratio) "
        f"{s['geomean']:.2f}x, worst {s['worst']:.2f}x. {s['calibration']} calibration anchors, "
        f"{s['out_of_model']} out of model.",
        "",
    ]
    for role, title in (
        ("validation", "Validation anchors (not used to set any constant)"),
        (
            "calibration",
            "Calibration anchors (they set the constant named; the ratio is "
            "taken at the end of the range they set)",
        ),
    ):
        extra = " sets |" if role == "calibration" else ""
        out += [
            f"### {title}",
            "",
            "| anchor | kernel | card | size | timed | measured | design | estimate (range) | "
            f"other scenario | ratio | limit as compiled |{extra}",
            "|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if extra else ""),
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
                f"| {r['id']} | {r['kernel']} | {r['card']} | {r['size']} | {r['timed']} | "
                f"{fmt_s(r['measured_s'])} | {r['scenario']} | {fmt_s(r[pre + '_s'])} "
                f"({fmt_s_range(r[pre + '_low_s'], r[pre + '_high_s'])}) | "
                f"{fmt_s(r[other + '_s'])} | "
                f"{r['ratio']:.2f} | {r.get('card_limit', '')} |{sets}"
            )
        out.append("")
    out += [
        "### Out of model (listed, not estimated)",
        "",
        "| anchor | kernel | card | size | measured | why |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["role"] == "out of model":
            out.append(
                f"| {r['id']} | {r['kernel']} | {r['card']} | {r['size']} | {r['measured']} | "
                f"{r['reason']} |"
            )
    return "\n".join(out) + "\n"


# ---- what the model concludes on real traces ---------------------------------------------------


def trace_conclusions(
    paths: list[str],
    cards: tuple = ("alveo-u55c", "alveo-u280", "alveo-u250", "versal-v80"),
    regions: int = 3,
) -> str:
    """A Markdown table of what the FPGA model concludes on saved traces, per card: each
    trace's costliest region paths (``regions`` of them) as whole offload units with data
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
            top = sorted((r for r in resident if r["estimated"]), key=lambda r: -r["gpu_time_ns"])[
                :regions
            ]
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
    print(markdown(table()))
