"""Kernels and copies attributed to HLO ops and Python lines (fpgaprof._core.attribution;
docs/attribution.md).

* ``attribute(store)``: the AttributionResult of a correlated store (per kernel/copy, per op,
  unattributed kernels with the reason).
* ``kernel_columns(result)``: per-kernel attribution columns (parallel to the kernel table).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fpgaprof.base.core import core

__all__ = ["attribute", "kernel_columns"]


def attribute(store: Any) -> Any:
    """Runs the attribution over a correlated store (GIL released inside)."""
    return core.attribution.attribute(store)


def kernel_columns(result: Any) -> dict[str, Any]:
    """Per-kernel attribution columns (parallel to the store's kernel table) as numpy arrays.

    Built once per distinct attribution site and gathered by each kernel's site index, so
    the cost is per site plus one numpy take per column, not Python work per kernel."""
    kernels = result.kernels
    sites = list(kernels.sites)
    index = np.asarray(kernels.site_index, dtype=np.int64)
    per_site: dict[str, list] = {
        k: []
        for k in (
            "module",
            "program_id",
            "hlo_op",
            "category",
            "library",
            "op_name",
            "source_file",
            "source_line",
            "source",
            "method",
        )
    }
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
