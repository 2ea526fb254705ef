"""Glue between a trace store and the C++ attribution (fpgaprof._core.attribution).

* ``attribute(store)``: the AttributionResult (per kernel/copy, per op, unattributed).
* ``summary_lines(result)``: the "HLO ops" section of ``Profile.summary()``.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from fpgaprof.base.units import fmt_ns as format_ns

__all__ = ["attribute", "summary_lines", "format_ns"]


def attribute(store: Any):
    """Runs the attribution over a correlated store (GIL released inside)."""
    from fpgaprof import _core

    return _core.attribution.attribute(store)


def _short_path(path: str) -> str:
    if not path:
        return ""
    try:
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else path
    except ValueError:
        return path


def summary_lines(result: Any, top: int = 10) -> list[str]:
    """The summary section: top ops by GPU time with source lines, then unattributed kernels."""
    ops = list(result.ops)
    total = result.attributed_ns + result.unattributed_ns
    n_kernels = result.attributed_count + result.unattributed_count
    lines: list[str] = []
    if n_kernels == 0:
        return ["HLO ops: no kernels in the trace"]
    by = result.count_by_method
    pct = 100.0 * result.attributed_ns / total if total else 0.0
    lines.append(
        f"HLO ops (top {min(top, len(ops))} of {len(ops)} by GPU time; {pct:.1f}% of kernel "
        f"time attributed: {by['nvtx_thunk']} by thunk range, {by['kernel_name']} by kernel "
        f"name, {by['library']} library)")
    if ops:
        lines.append(f"  {'time':>10} {'%':>6} {'execs':>6} {'mean':>10} {'GFLOP/s':>8}  "
                     f"{'op (module)':<44} {'category':<22} source")
    for op in ops[:top]:
        t = op.total_ns + op.memcpy_ns
        share = 100.0 * op.total_ns / total if total else 0.0
        rate = ""
        if op.has_cost and not op.cost_unknown and op.mean_ns and op.flops:
            gflops = op.flops / op.mean_ns
            # a fixed-unit column: 1234 GFLOP/s as "1234", not .3g's "1.23e+03"
            rate = f"{gflops:.3g}" if abs(gflops) < 999.5 else f"{gflops:.0f}"
        name = f"{op.hlo_op} ({op.module_name})" if op.module_name else op.hlo_op
        src = f"{_short_path(op.source_file)}:{op.source_line}" if op.source_file and op.source_line >= 0 else ""
        # an op that only launched copies (copy-start, a host transfer) has no kernel run
        category = op.category or ("copies only" if not op.executions and op.memcpy_ns else "")
        lines.append(f"  {format_ns(t):>10} {share:5.1f}% {op.executions:>6} "
                     f"{format_ns(op.mean_ns):>10} {rate:>8}  {name[:44]:<44} "
                     f"{category[:22]:<22} {src}")
    if ops:
        lines.append("  (time = the op's kernels + the copies it launched; % = its share of kernel "
                     "time; execs and mean count kernel runs)")
    if result.unattributed_count:
        upct = 100.0 * result.unattributed_ns / total if total else 0.0
        lines.append(f"Unattributed kernels: {result.unattributed_count} "
                     f"({format_ns(result.unattributed_ns)}, {upct:.1f}% of kernel time)")
        for u in list(result.unattributed)[:top]:
            lines.append(f"  {u.name[:60]} x{u.count}, {format_ns(u.total_ns)}: {u.reason}")
    for w in result.warnings:
        lines.append(f"warning: {w}")
    return lines


def kernel_columns(result: Any) -> dict[str, Any]:
    """Per-kernel attribution columns (parallel to the store's kernel table) as numpy arrays.

    Built once per distinct attribution site and gathered by each kernel's site index, so
    the cost is per site plus one numpy take per column, not Python work per kernel."""
    import numpy as np

    kernels = result.kernels
    sites = list(kernels.sites)
    index = np.asarray(kernels.site_index, dtype=np.int64)
    per_site: dict[str, list] = {k: [] for k in (
        "module", "program_id", "hlo_op", "category", "library", "op_name", "source_file",
        "source_line", "source", "method")}
    for a in sites:
        per_site["module"].append(a.module_name)
        per_site["program_id"].append(a.program_id)
        per_site["hlo_op"].append(a.hlo_op)
        per_site["category"].append(a.category)
        per_site["library"].append(a.library)
        per_site["op_name"].append(a.op_name)
        per_site["source_file"].append(a.source_file)
        per_site["source_line"].append(a.source_line)
        per_site["source"].append(f"{a.source_file}:{a.source_line}" if a.source_file else "")
        per_site["method"].append(a.method)
    cols: dict[str, Any] = {}
    for k, values in per_site.items():
        dtype = np.int64 if k in ("program_id", "source_line") else object
        table = np.empty(len(values), dtype=dtype)
        table[:] = values
        cols[k] = table[index] if len(values) else np.empty(0, dtype=dtype)
    return cols
