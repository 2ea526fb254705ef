"""What fpgaprof sees of CUPTI, the CUDA driver and the GPUs (``fpgaprof devices``)."""

from __future__ import annotations

from typing import Any

from fpgaprof.api import counters
from fpgaprof.base.core import core
from fpgaprof.capture import xla_flags

__all__ = ["describe", "devices", "status"]


def status() -> Any:
    """The CuptiStatus from probing (never raises): library_found, library_path, how_found,
    cupti_version (and cupti_cuda, its CUDA release), header_cupti_version / header_cuda (the
    CUPTI headers this build compiled with), min_cupti_version / min_cuda (the oldest libcupti it
    runs with), driver_version, devices, problem."""
    return core.probe_cupti()


def devices() -> list:
    """DeviceInfo of every GPU the driver reports ([] without a driver or GPU)."""
    return list(status().devices)


def _version(v: int) -> str:
    # CUDA encodes versions as 1000*major + 10*minor (13000 -> 13.0).
    return f"{v // 1000}.{(v % 1000) // 10}" if v else "none"


def describe() -> str:
    """A readable report of the CUPTI library, driver, GPUs and, if tracing cannot work, why."""
    s = status()
    lines = [f"fpgaprof {core.__version__}", f"  libfpgaprof: {core.library_path() or '(unknown)'}"]
    if s.library_found:
        lines.append(
            f"  CUPTI: {s.library_path} (found: {s.how_found}; "
            f"{_api_text(s.cupti_version, s.cupti_cuda)})"
        )
    else:
        lines.append("  CUPTI: not found")
    lines.append(
        f"  built with: CUPTI headers {_api_text(s.header_cupti_version, s.header_cuda)}; runs "
        f"with libcupti {_api_text(s.min_cupti_version, s.min_cuda)} or newer"
    )
    lines.append(f"  CUDA driver: {_version(s.driver_version)}")
    if s.devices:
        lines.append(f"  GPUs: {len(s.devices)}")
        for d in s.devices:
            bw = d.peak_dram_bandwidth_bytes_per_s()
            lines.append(
                f"    [{d.id}] {d.name}: compute capability {d.compute_capability_major}."
                f"{d.compute_capability_minor}, {d.sm_count} SMs, "
                f"{d.global_memory_bytes / 2**30:.1f} GiB, "
                f"SM clock {d.core_clock_khz / 1e3:.0f} MHz, "
                f"memory clock {d.memory_clock_khz / 1e3:.0f} MHz x {d.memory_bus_width_bits} bit"
                + (f" ({bw / 1e9:.0f} GB/s peak)" if bw else "")
                + ", "
                + _link_text(d)
            )
    else:
        lines.append("  GPUs: none")
    lines.append("  NVTX injection: " + _nvtx_line())
    # What `import fpgaprof` merged into this process's XLA_FLAGS (a script gets the same).
    lines.append("  " + xla_flags.describe(xla_flags.current()))
    lines.append("  tracing: " + ("ready" if not s.problem else f"not possible: {s.problem}"))
    if s.devices and s.library_found:
        lines.append("  counters: " + counters_line(s.devices[0].id))
    return "\n".join(lines) + "\n"


def _api_text(version: int, cuda: str) -> str:
    """'API version 26, CUDA 12.8' (the CUDA release left out where the core does not know it)."""
    return f"API version {version}" + (f", CUDA {cuda}" if cuda else "")


def _link_text(d: Any) -> str:
    """The host link as sysfs describes it (docs/capture.md), or why link % will be n/a."""
    gen, width = int(d.pcie_generation), int(d.pcie_link_width)
    if gen and width:
        return f"PCIe gen{gen} x{width}"
    return "PCIe link unknown (not in sysfs; `fpgaprof calibrate` measures it)"


def _nvtx_line() -> str:
    """Whether NVTX (XLA's ranges) reaches CUPTI in this process so far."""
    n = core.nvtx_injection_status()
    if n["succeeded"]:
        return f"active ({n['detail']})"
    if n["calls"] == 0:
        return "not called yet (NVTX calls it at the process's first NVTX call)"
    return f"failed: {n['detail']} (no XLA ranges in traces of this process)"


def counters_line(device: int) -> str:
    """What trace(counters=True) would collect on GPU `device` (never raises)."""
    try:
        p = counters.plan(device=device)
    except Exception as e:  # noqa: BLE001 - a report line, not a failure of `devices`
        return f"not available ({' '.join(str(e).split())})"
    missing = f", missing: {'; '.join(p.missing)}" if p.missing else ""
    return (
        f"chip {p.chip}, {len(p.metrics)} metrics, {p.passes} kernel-replay passes"
        f"{missing} (fpgaprof counters)"
    )
