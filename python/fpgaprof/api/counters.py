"""Counter plans: what ``fpgaprof.trace(counters=True)`` collects on a chip (``fpgaprof counters``).

``plan("GH100")`` asks CUPTI's Profiler Host API, which needs neither a driver nor a GPU, for
the metric fpgaprof uses per role (DRAM bytes read/written, FP32/FP64/FP16 add/mul/fma thread
instructions, tensor-pipe instructions, duration), what CUPTI says each one counts and in which
unit, the roles the chip cannot give, and the replay cost: with kernel replay every kernel runs
``passes`` times while counters are collected. A metric is only used when CUPTI reports the
unit the roofline decodes it in (bytes, instructions, nanoseconds); otherwise its role is listed
under ``missing`` with the unit CUPTI gave.

``plan()`` without a chip reads the chip of GPU ``device`` (needs the driver and the GPU). The
plan is exact for the chip; which counters a particular board exposes (e.g. a MIG slice) is
only known when counting starts, and ``trace(counters=True)`` warns about what it leaves out.

Without an NVIDIA driver, fpgaprof's libcupti search takes the CUDA toolkit's copy before the
nvidia-cuda-cupti wheel's, whose Profiler Host API needs a driver (docs/capture.md, "Loading
libcupti"); ``FPGAPROF_CUPTI_LIBRARY`` still overrides it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from fpgaprof.base.core import core
from fpgaprof.base.errors import InvalidArgumentError

__all__ = ["CounterPlan", "plan", "chips"]


@dataclasses.dataclass(frozen=True)
class CounterPlan:
    """The counter configuration for one chip (see the module docstring)."""

    chip: str  # CUPTI's chip name, e.g. "GH100"
    chip_from_device: bool  # read from the GPU (True) or named by the caller
    cupti_path: str  # the libcupti that made the plan
    metrics: list[dict]  # role, name, description, hw_unit, unit (per metric collected)
    missing: list[str]  # roles the chip cannot give, with the reason
    passes: int  # replay passes per kernel (0: CUPTI could not say)
    config_image_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        how = "read from the GPU" if self.chip_from_device else "named"
        lines = [f"counter plan for chip {self.chip} ({how}; CUPTI {self.cupti_path})"]
        if self.passes:
            lines.append(
                f"  kernel replay: {self.passes} pass{'es' if self.passes != 1 else ''} "
                f"per kernel (each kernel runs {self.passes}x while counting; "
                "timing comes from the records, not from these runs)"
            )
        if self.metrics:
            w_role = max(len("role"), *(len(m["role"] or "(named)") for m in self.metrics))
            w_name = max(len("metric"), *(len(m["name"]) for m in self.metrics))
            lines.append(f"  {'role':<{w_role}}  {'metric':<{w_name}}  unit")
            for m in self.metrics:
                lines.append(
                    f"  {m['role'] or '(named)':<{w_role}}  {m['name']:<{w_name}}  {m['unit']}"
                )
        else:
            lines.append("  no metric can be collected on this chip")
        for why in self.missing:
            lines.append(f"  not available: {why}")
        return "\n".join(lines) + "\n"


def chips() -> list[str]:
    """The chip names this libcupti's Profiler Host API knows (GV100 ... GB20x for CUDA 13)."""
    return list(core.analysis.counter_chips())


def plan(
    chip: str | None = None, *, metrics: Sequence[str] | None = None, device: int = 0
) -> CounterPlan:
    """The counter plan for ``chip`` (any case, CUPTI's name such as "GH100" or "ga100"), or for
    GPU ``device`` when ``chip`` is None. ``metrics``: exact metric names with rollup
    (``"dram__bytes_read.sum"``) instead of fpgaprof's set.

    Raises InvalidArgumentError for an unknown chip (the message lists the known ones) or a
    metric the chip lacks, CuptiUnavailableError without CUPTI (or without a GPU when no chip is
    named), CountersError when this CUPTI lacks the Profiler Host API (CUDA < 12.6)."""
    if chip is not None and (not isinstance(chip, str) or not chip.strip()):
        raise InvalidArgumentError(f"chip must be a chip name such as 'GH100', not {chip!r}")
    if isinstance(metrics, str):
        raise InvalidArgumentError(
            "metrics is a list of metric names, e.g. ['dram__bytes_read.sum']"
        )
    names = [] if metrics is None else list(metrics)
    if any(not isinstance(m, str) or not m.strip() for m in names):
        raise InvalidArgumentError(f"metrics must be non-empty metric names, not {names!r}")
    if not isinstance(device, int) or device < 0:
        raise InvalidArgumentError(f"device must be a GPU ordinal (0, 1, ...), not {device!r}")
    d = core.analysis.counter_plan((chip or "").strip(), [m.strip() for m in names], device)
    return CounterPlan(
        chip=d["chip"],
        chip_from_device=d["chip_from_device"],
        cupti_path=d["cupti_path"],
        metrics=list(d["metrics"]),
        missing=list(d["missing"]),
        passes=int(d["passes"]),
        config_image_bytes=int(d["config_image_bytes"]),
    )
