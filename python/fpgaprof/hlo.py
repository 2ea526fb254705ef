"""``fpgaprof.hlo``: static analysis of XLA HLO text (defined in fpgaprof.analysis.hlo)."""

from fpgaprof.analysis.hlo import (
    HloComputation,
    HloInstruction,
    HloModule,
    analyze,
    from_jax,
)

__all__ = ["analyze", "from_jax", "HloModule", "HloComputation", "HloInstruction"]
