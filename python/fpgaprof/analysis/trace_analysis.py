"""One call of the C++ analysis of a trace store, typed: its options, its result, and the cache
a Profile keeps of it.

``run(store, options)`` calls ``fpgaprof._core.analysis.analyze`` once: attribution, region
paths, busy-time totals, transfers, device memory, roofline, FPGA model, per-device rows,
GPU time per region path and kernels by name in one pass (docs/architecture.md, "The analysis
pipeline"; docs/roofline.md, docs/fpga-model.md). ``AnalysisCache`` keeps one result per set
of options, and the attribution, for one store: a Profile is immutable once its trace stopped,
so every table, report and facade of a Profile reads the same result instead of computing it
again, and the attribution the first analysis computed is the Profile's attribution.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypedDict, cast

from fpgaprof.analysis import attribution
from fpgaprof.analysis.ceilings import ceilings as store_ceilings
from fpgaprof.analysis.targets import row_imbalance_arg, target_spec
from fpgaprof.base.constants import DEFAULT_TARGET
from fpgaprof.base.core import core

__all__ = [
    "REGION_ROWS",
    "AnalysisOptions",
    "AnalysisResult",
    "AnalysisCache",
    "run",
    "store_of",
]

# How region results come: one row per region path ("outer > inner", every instance summed)
# or one per region record (docs/roofline.md, "Regions").
REGION_ROWS = ("path", "instance")


def store_of(trace: Any) -> Any:
    """The C++ TraceStore behind a Profile (its ``store``; a nested trace's placeholder while
    it runs) or behind an object with the same tables; the object itself when it is a store."""
    store = getattr(trace, "store", None)
    return store if store is not None and not callable(store) else trace


class AnalysisResult(TypedDict):
    """What the C++ analysis returns (docs/architecture.md, "The analysis pipeline";
    docs/roofline.md): each value is the C++ result's dict or list. ``totals``: counts, summed
    kernel time and busy-time unions of the trace (ns); ``region_paths``: one dict per region
    path (name, depth, parent, instances, inclusive GPU time in ns); ``region_path_of``: the
    path index of each region record; ``kernels_by_name``: per distinct kernel name, most time
    first; ``device_dram_bytes_per_s``: per store device (0 unknown); ``module_memory``: per HLO
    module with XLA's buffer assignment, its memory over the schedule; ``attribution``: the
    AttributionResult the analysis computed (every result of an AnalysisCache has it; run()
    gives None unless asked for it); ``energy``: the GPU energy from the trace's NVML power
    samples (docs/energy.md: per device, region path, region record and HLO op). The fields of
    every row are those of the C++ result tables (core.analysis.result_fields(name);
    docs/result-fields.md)."""

    ceilings: dict | None
    warnings: list
    region_rows: str
    transfers: dict
    memory: dict
    devices: dict
    roofline: dict
    fpga: dict
    fpga_other_targets: list  # the same as fpga on each of AnalysisOptions.other_targets
    totals: dict
    region_paths: list
    region_path_of: list
    kernels_by_name: list
    device_dram_bytes_per_s: list
    module_memory: list
    energy: dict
    attribution: Any


@dataclasses.dataclass(frozen=True)
class AnalysisOptions:
    """The inputs of one analysis besides the store.

    ``target``: the FPGA card (a preset name, card file, dict or FpgaTarget; kept as
    targets.target_spec gives it). ``ceilings``: the GPU's ceilings to use (None: the store's
    own, measured values included: analysis.ceilings). ``workload_s``: the whole workload's
    time for the Amdahl speedups (None: the trace's GPU time). ``inputs_cross_link``: the FPGA
    model moves each op's inputs over the host link. ``tiny_bytes``, ``tiny_flood_count``:
    the tiny-copy flag; ``latency_kernel_ns``: a kernel at most this long is latency-bound;
    ``top_buffers``: largest buffers listed; ``region_rows``: "path" or "instance";
    ``other_targets``: more cards (as ``target``) whose op and region rankings the same
    analysis returns (``fpga_other_targets``, in this order). ``row_imbalance``: the user's
    row imbalance ratio (HiSpMV's delta) for the restructured scatters of the FPGA rankings
    (None: not known; a bad one is an InvalidArgumentError, from the core)."""

    target: str | Mapping[str, Any] = DEFAULT_TARGET
    ceilings: Mapping[str, Any] | None = None
    workload_s: float | None = None
    inputs_cross_link: bool = True
    tiny_bytes: int = 64 * 1024
    tiny_flood_count: int = 1000
    latency_kernel_ns: int = 5000
    top_buffers: int = 20
    region_rows: str = "path"
    other_targets: tuple = ()
    row_imbalance: float | None = None

    def __post_init__(self) -> None:
        if self.region_rows not in REGION_ROWS:
            raise ValueError(f"region_rows={self.region_rows!r}: use 'path' or 'instance'")
        # a card file or FpgaTarget is read and checked once, here (InvalidArgumentError)
        object.__setattr__(self, "target", target_spec(self.target))
        object.__setattr__(self, "other_targets", tuple(target_spec(t) for t in self.other_targets))
        row_imbalance_arg(self.row_imbalance)  # a number or None (its range: the core)

    def key(self) -> str:
        """A string that is equal for equal options (the cache key: dicts are not hashable)."""
        return repr(dataclasses.astuple(self))

    def key_without_other_targets(self) -> str:
        """key() of every option but ``other_targets``: two analyses with equal such keys give
        the same result but for ``fpga_other_targets`` (the other cards are ranked after the
        rest, from the same inputs, and change nothing else)."""
        return repr(
            tuple(
                getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "other_targets"
            )
        )


def run(
    store: Any,
    options: AnalysisOptions,
    ceilings: Mapping[str, Any] | None,
    with_attribution: bool = False,
) -> AnalysisResult:
    """The C++ analysis of `store` (GIL released inside) with the GPU ceilings `ceilings`
    (options.ceilings, when given, wins; None: no ceilings known). `with_attribution`: the
    result's ``attribution`` is the attribution the analysis computed (equal to
    analysis.attribution.attribute(store), with its per-record lists: 4 bytes per kernel, copy
    and memset); otherwise None."""
    o = options
    ceil = o.ceilings if o.ceilings is not None else ceilings
    # the binding returns a plain dict with AnalysisResult's keys
    result = cast(
        AnalysisResult,
        core.analysis.analyze(
            store,
            dict(ceil) if ceil is not None else None,
            o.target,
            float(o.workload_s * 1e9) if o.workload_s else 0.0,
            bool(o.inputs_cross_link),
            int(o.tiny_bytes),
            int(o.tiny_flood_count),
            int(o.latency_kernel_ns),
            int(o.top_buffers),
            o.region_rows,
            with_attribution=with_attribution,
            other_targets=list(o.other_targets),
            row_imbalance=row_imbalance_arg(o.row_imbalance),
        ),
    )
    result.setdefault("attribution", None)
    result.setdefault("fpga_other_targets", [])
    return result


class AnalysisCache:
    """The analyses of one trace store, each computed once: the attribution and one analysis
    result per set of options. The first analysis brings the attribution it computed (the C++
    analysis attributes every kernel anyway), so a report attributes once; every cached result
    holds that attribution under ``attribution``. A Profile owns one (``Profile.analyses``);
    when the Profile is given another store (a nested trace's placeholder replaced by the run's
    records) the results of the old store are dropped. Not thread-safe: a Profile is read by
    one thread at a time."""

    def __init__(self) -> None:
        self._store: Any = None
        self._attribution: Any = None
        self._results: dict[str, AnalysisResult] = {}
        self._options: dict[str, AnalysisOptions] = {}

    def _for(self, store: Any) -> None:
        if store is not self._store:
            self._store = store
            self._attribution = None
            self._results = {}
            self._options = {}

    def _narrowed(self, options: AnalysisOptions) -> AnalysisResult | None:
        """A cached result whose options are `options` but with more ``other_targets``, as the
        analysis with `options` gives it (``fpga_other_targets`` of the cards `options` names,
        in its order; every other value the cached result's own); None without one. A report's
        analysis (its card and every other preset) thus also serves fpgaprof.roofline.analyze
        on its card alone, without a second C++ analysis."""
        rest = options.key_without_other_targets()
        want = [repr(t) for t in options.other_targets]
        for key, cached in self._options.items():
            if key not in self._results or cached.key_without_other_targets() != rest:
                continue
            have = [repr(t) for t in cached.other_targets]
            if all(w in have for w in want):
                wider = self._results[key]
                out = cast(AnalysisResult, dict(wider))
                out["fpga_other_targets"] = [
                    wider["fpga_other_targets"][have.index(w)] for w in want
                ]
                return out
        return None

    def attribution(self, store: Any) -> Any:
        """The attribution of `store`, computed once: the cached analysis' own, or, when no
        analysis ran yet, analysis.attribution.attribute (the analyses that follow reuse it)."""
        self._for(store)
        if self._attribution is None:
            self._attribution = attribution.attribute(store)
        return self._attribution

    def analysis(
        self,
        store: Any,
        options: AnalysisOptions,
        ceilings: Callable[[], Mapping[str, Any] | None] | None = None,
    ) -> AnalysisResult:
        """The analysis of `store` with `options` (run()), computed once per options; its
        ``attribution`` is this cache's attribution (the first analysis computes it).
        `ceilings`: called for the GPU's ceilings when the options name none and the result is
        not cached yet (None: the store's own, analysis.ceilings.ceilings)."""
        self._for(store)
        key = options.key()
        result = self._results.get(key)
        if result is None:
            result = self._narrowed(options)
            if result is None:
                ceil = None
                if options.ceilings is None:
                    ceil = ceilings() if ceilings is not None else store_ceilings(store)
                result = run(store, options, ceil, with_attribution=self._attribution is None)
                if result["attribution"] is None:
                    result["attribution"] = self._attribution
                else:
                    self._attribution = result["attribution"]
            self._results[key] = result
            self._options[key] = options
        return result

    def __len__(self) -> int:
        """How many analysis results are cached."""
        return len(self._results)

    @contextlib.contextmanager
    def transient(self) -> Iterator[None]:
        """Analysis results computed inside the block are dropped when it ends (those cached
        before stay): a report that needs an analysis once does not keep its memory."""
        before = set(self._results)
        try:
            yield
        finally:
            for key in set(self._results) - before:
                del self._results[key]
                self._options.pop(key, None)
