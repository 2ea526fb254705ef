"""
transfers, device memory, ceilings, roofline, FPGA model
"""
from __future__ import annotations
import collections.abc
import fpgaprof._core
import fpgaprof.base.result_rows
import typing
__all__: list[str] = ['CounterSession', 'ResultField', 'analyze', 'card_fields', 'card_input_names', 'counter_chips', 'counter_plan', 'estimate_hlo', 'fpga_presets', 'fpga_target', 'hlo_module_texts', 'kernels_by_name', 'module_memory', 'onchip_need', 'result_fields', 'result_tables', 'table_ceilings', 'validate_row_imbalance']
class ResultField:
    """
    One field of an analysis result row (analysis/result_schema.hpp)
    """
    def __repr__(self) -> str:
        ...
    @property
    def description(self) -> str:
        ...
    @property
    def high_name(self) -> str:
        ...
    @property
    def low_name(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def names(self) -> list[str]:
        ...
    @property
    def nullable(self) -> bool:
        ...
    @property
    def only_when(self) -> str:
        ...
    @property
    def range(self) -> bool:
        ...
    @property
    def type(self) -> str:
        ...
    @property
    def unit(self) -> str:
        ...
class CounterSession:
    @staticmethod
    def start(max_ranges: typing.SupportsInt | typing.SupportsIndex = 2048, device: typing.SupportsInt | typing.SupportsIndex = 0) -> CounterSession:
        ...
    def checkpoint(self) -> None:
        ...
    def finish(self) -> None:
        ...
    def stop_into(self, store: fpgaprof._core.TraceStore) -> fpgaprof.base.result_rows.CounterMatch:
        ...
    @property
    def metrics(self) -> list[str]:
        ...
    @property
    def warnings(self) -> list[str]:
        ...
def analyze(store: fpgaprof._core.TraceStore, ceilings: typing.Any = None, target: typing.Any = 'alveo-u55c', workload_ns: typing.SupportsFloat | typing.SupportsIndex = 0.0, inputs_cross_link: bool = True, tiny_bytes: typing.SupportsInt | typing.SupportsIndex = 65536, tiny_flood_count: typing.SupportsInt | typing.SupportsIndex = 1000, latency_kernel_ns: typing.SupportsInt | typing.SupportsIndex = 5000, top_buffers: typing.SupportsInt | typing.SupportsIndex = 20, region_rows: str = 'path', with_attribution: bool = False, other_targets: list = [], row_imbalance: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> fpgaprof.base.result_rows.TraceAnalysis:
    ...
def card_fields() -> list[fpgaprof.base.result_rows.CardField]:
    """
    The card field table: every field a card has (the card_field table).
    """
def card_input_names() -> list[str]:
    """
    The names a card takes (FpgaTarget's fields): base, the fields that are not derived (a calibrated one with _low and _high), memory_bytes_per_s, the earlier names.
    """
def counter_chips() -> list[str]:
    ...
def counter_plan(chip: str = '', metrics: collections.abc.Sequence[str] = [], device: typing.SupportsInt | typing.SupportsIndex = 0) -> fpgaprof.base.result_rows.CounterPlan:
    ...
def estimate_hlo(hlo_text: str, target: typing.Any = 'alveo-u55c', row_imbalance: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> fpgaprof.base.result_rows.ModuleEstimate:
    ...
def fpga_presets() -> list:
    ...
def fpga_target(target: typing.Any) -> dict:
    ...
def hlo_module_texts(store: fpgaprof._core.TraceStore) -> list:
    ...
def kernels_by_name(store: fpgaprof._core.TraceStore) -> list:
    """
    Per distinct kernel name: (kernel, count, timed_count, total_ns, min_ns, max_ns), most time first, ties by name (the values of analyze()'s kernels_by_name).
    """
def module_memory(buffer_assignment: str, live_ranges: str = '', hlo_text: str = '', name: str = '') -> fpgaprof.base.result_rows.ModuleMemory:
    ...
def onchip_need(hlo_text: str, buffer_assignment: str, instruction: str) -> fpgaprof.base.result_rows.OnchipNeed | None:
    ...
def result_fields(table: str) -> list[ResultField]:
    """
    The fields of one analysis result table, in the order its rows have them.
    """
def result_tables() -> list[tuple[str, str]]:
    """
    (name, description) of every analysis result table, for result_fields(name).
    """
def table_ceilings(store: fpgaprof._core.TraceStore, device: typing.SupportsInt | typing.SupportsIndex = 0) -> fpgaprof.base.result_rows.Ceilings | None:
    ...
def validate_row_imbalance(row_imbalance: typing.SupportsFloat | typing.SupportsIndex) -> None:
    ...
