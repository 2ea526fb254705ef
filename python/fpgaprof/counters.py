"""``fpgaprof.counters``: what ``fpgaprof.trace(counters=True)`` collects on a chip (defined in
fpgaprof.api.counters; ``fpgaprof counters``)."""

from fpgaprof.api.counters import CounterPlan, chips, plan

__all__ = ["CounterPlan", "plan", "chips"]
