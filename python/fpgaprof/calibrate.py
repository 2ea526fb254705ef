"""``fpgaprof.calibrate``: this GPU's achieved ceilings, measured and stored for the roofline
(defined in fpgaprof.api.calibrate; ``fpgaprof calibrate``)."""

from fpgaprof.api.calibrate import cache_path, load, merge, repeat_seconds, run

__all__ = ["run", "load", "merge", "cache_path", "repeat_seconds"]
