"""The compiled C++ core, ``fpgaprof._core`` (pybind11: record tables, the trace store, the CUPTI
session, attribution, the HLO parser and the analysis; cpp/bindings/, one file per section).

Every layer reaches it through this module (``from fpgaprof.base.core import core``), so the
compiled module is part of the base layer in the import graph too: the import contract cannot
see a compiled module, and the package root must stay out of the layers' imports.
"""

from fpgaprof import _core as core

__all__ = ["core"]
