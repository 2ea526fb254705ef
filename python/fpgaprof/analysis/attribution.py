"""Kernels and copies attributed to HLO ops and Python lines (fpgaprof._core.attribution;
docs/attribution.md).

* ``attribute(store)``: the AttributionResult of a correlated store (per kernel/copy, per op,
  unattributed kernels with the reason).
* ``kernel_columns(result, names=None)``: per-kernel attribution columns (parallel to the kernel
  table).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fpgaprof.base.core import core

__all__ = ["attribute", "kernel_columns"]


def attribute(store: Any) -> Any:
    """Runs the attribution over a correlated store (GIL released inside)."""
    return core.attribution.attribute(store)


_SITE_FIELDS = {
    "module": lambda a: a.module_name,
    "program_id": lambda a: a.program_id,
    "hlo_op": lambda a: a.hlo_op,
    "category": lambda a: a.category,
    "library": lambda a: a.library,
    "op_name": lambda a: a.op_name,
    "source_file": lambda a: a.source_file,
    "source_line": lambda a: a.source_line,
    "source": lambda a: f"{a.source_file}:{a.source_line}" if a.source_file else "",
    "method": lambda a: a.method,
}


def kernel_columns(result: Any, names: Sequence[str] | None = None) -> dict[str, Any]:
    """Per-kernel attribution columns (parallel to the store's kernel table) as numpy arrays:
    module, program_id, hlo_op, category, library, op_name, source_file, source_line, source
    ("file:line") and method, or only those `names` picks.

    Built once per distinct attribution site and gathered by each kernel's site index, so
    the cost is per site plus one numpy take per column, not Python work per kernel."""
    wanted = list(_SITE_FIELDS) if names is None else [k for k in names if k in _SITE_FIELDS]
    kernels = result.kernels
    sites = list(kernels.sites)
    index = np.asarray(kernels.site_index, dtype=np.int64)
    cols: dict[str, Any] = {}
    for k in wanted:
        field = _SITE_FIELDS[k]
        dtype = np.int64 if k in ("program_id", "source_line") else object
        table = np.empty(len(sites), dtype=dtype)
        table[:] = [field(a) for a in sites]
        cols[k] = table[index] if len(sites) else np.empty(0, dtype=dtype)
    return cols
