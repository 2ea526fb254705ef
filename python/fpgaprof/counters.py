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
"""
from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import glob
import os
from typing import Any, Iterator, Sequence

from fpgaprof import _core
from fpgaprof.errors import InvalidArgumentError

__all__ = ["CounterPlan", "plan", "chips"]


@dataclasses.dataclass(frozen=True)
class CounterPlan:
    """The counter configuration for one chip (see the module docstring)."""

    chip: str                   # CUPTI's chip name, e.g. "GH100"
    chip_from_device: bool      # read from the GPU (True) or named by the caller
    cupti_path: str             # the libcupti that made the plan
    metrics: list[dict]         # role, name, description, hw_unit, unit (per metric collected)
    missing: list[str]          # roles the chip cannot give, with the reason
    passes: int                 # replay passes per kernel (0: CUPTI could not say)
    config_image_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        how = "read from the GPU" if self.chip_from_device else "named"
        lines = [f"counter plan for chip {self.chip} ({how}; CUPTI {self.cupti_path})"]
        if self.passes:
            lines.append(f"  kernel replay: {self.passes} pass{'es' if self.passes != 1 else ''} "
                         f"per kernel (each kernel runs {self.passes}x while counting; "
                         "timing comes from the records, not from these runs)")
        if self.metrics:
            w_role = max(len("role"), *(len(m["role"] or "(named)") for m in self.metrics))
            w_name = max(len("metric"), *(len(m["name"]) for m in self.metrics))
            lines.append(f"  {'role':<{w_role}}  {'metric':<{w_name}}  unit")
            for m in self.metrics:
                lines.append(f"  {m['role'] or '(named)':<{w_role}}  {m['name']:<{w_name}}  {m['unit']}")
        else:
            lines.append("  no metric can be collected on this chip")
        for m in self.missing:
            lines.append(f"  not available: {m}")
        return "\n".join(lines) + "\n"


def chips() -> list[str]:
    """The chip names this libcupti's Profiler Host API knows (GV100 ... GB20x for CUDA 13)."""
    with _host_only_cupti():
        return list(_core.analysis.counter_chips())


def _driver_present() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def _libcupti_mapped() -> bool:
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            return any("/libcupti.so" in line for line in f)
    except OSError:
        return False


def toolkit_cupti() -> str | None:
    """The CUDA toolkit's libcupti ($CUDA_HOME, then /usr/local/cuda), or None."""
    roots = [r for r in (os.environ.get("CUDA_HOME"), "/usr/local/cuda") if r]
    for root in roots:
        for sub in ("lib64", "extras/CUPTI/lib64"):
            found = sorted(glob.glob(os.path.join(root, sub, "libcupti.so.1[23]")))
            if found:
                return found[-1]
    return None


@contextlib.contextmanager
def _host_only_cupti() -> Iterator[None]:
    """Without an NVIDIA driver, plans come from the CUDA toolkit's libcupti when there is one.

    The nvidia-cuda-cupti wheel's libcupti (13.5) answers CUPTI_ERROR_UNKNOWN to every Profiler
    Host API call when no driver is installed, while the toolkit's copy (13.0) works there.
    Without a driver nothing can be traced, so loading the toolkit's copy costs nothing; with
    a driver, FPGAPROF_CUPTI_LIBRARY set, or a libcupti already in the process, the usual
    search (docs/capture.md) decides."""
    chosen = None
    if (not os.environ.get("FPGAPROF_CUPTI_LIBRARY") and not _libcupti_mapped()
            and not _driver_present()):
        chosen = toolkit_cupti()
    if chosen is None:
        yield
        return
    os.environ["FPGAPROF_CUPTI_LIBRARY"] = chosen
    try:
        yield
    finally:
        os.environ.pop("FPGAPROF_CUPTI_LIBRARY", None)


def plan(chip: str | None = None, *, metrics: Sequence[str] | None = None,
         device: int = 0) -> CounterPlan:
    """The counter plan for ``chip`` (any case, CUPTI's name such as "GH100" or "ga100"), or for
    GPU ``device`` when ``chip`` is None. ``metrics``: exact metric names with rollup
    (``"dram__bytes_read.sum"``) instead of fpgaprof's set.

    Raises InvalidArgumentError for an unknown chip (the message lists the known ones) or a
    metric the chip lacks, CuptiUnavailableError without CUPTI (or without a GPU when no chip is
    named), CountersError when this CUPTI lacks the Profiler Host API (CUDA < 12.6)."""
    if chip is not None and (not isinstance(chip, str) or not chip.strip()):
        raise InvalidArgumentError(f"chip must be a chip name such as 'GH100', not {chip!r}")
    if isinstance(metrics, str):
        raise InvalidArgumentError("metrics is a list of metric names, e.g. ['dram__bytes_read.sum']")
    names = [] if metrics is None else list(metrics)
    if any(not isinstance(m, str) or not m.strip() for m in names):
        raise InvalidArgumentError(f"metrics must be non-empty metric names, not {names!r}")
    if not isinstance(device, int) or device < 0:
        raise InvalidArgumentError(f"device must be a GPU ordinal (0, 1, ...), not {device!r}")
    with _host_only_cupti():
        d = _core.analysis.counter_plan((chip or "").strip(), [m.strip() for m in names], device)
    return CounterPlan(chip=d["chip"], chip_from_device=d["chip_from_device"],
                       cupti_path=d["cupti_path"], metrics=list(d["metrics"]),
                       missing=list(d["missing"]), passes=int(d["passes"]),
                       config_image_bytes=int(d["config_image_bytes"]))
