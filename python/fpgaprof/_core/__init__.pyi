"""
fpgaprof C++ core (private; use the fpgaprof package)
"""
from __future__ import annotations
import collections.abc
import fpgaprof.base.result_rows
import os
import typing
from . import hlo
from . import attribution
from . import analysis
__all__: list[str] = ['API_KIND_NAMES', 'AllocationRecord', 'AllocationTable', 'AllocationTableIterator', 'ApiFunctionRecord', 'ApiFunctionTable', 'ApiFunctionTableIterator', 'ApiRecord', 'ApiTable', 'ApiTableIterator', 'COPY_KIND_NAMES', 'CaptureSession', 'CounterRecord', 'CounterTable', 'CounterTableIterator', 'CuptiStatus', 'DeviceInfo', 'ExternalCorrelationRecord', 'ExternalCorrelationTable', 'ExternalCorrelationTableIterator', 'HloModuleText', 'KernelRecord', 'KernelTable', 'KernelTableIterator', 'LaunchConfigRecord', 'LaunchConfigTable', 'LaunchConfigTableIterator', 'MEMORY_KIND_NAMES', 'MarkerRecord', 'MarkerTable', 'MarkerTableIterator', 'MemcpyRecord', 'MemcpyTable', 'MemcpyTableIterator', 'MemsetRecord', 'MemsetTable', 'MemsetTableIterator', 'OverheadRecord', 'OverheadTable', 'OverheadTableIterator', 'PowerSampleRecord', 'PowerSampleTable', 'PowerSampleTableIterator', 'RegionRecord', 'RegionTable', 'RegionTableIterator', 'SYNC_KIND_NAMES', 'SyncRecord', 'SyncTable', 'SyncTableIterator', 'TraceStore', 'analysis', 'attribution', 'current_thread_id', 'diagnostic_codes', 'hlo', 'library_path', 'nvtx_injection_status', 'probe_cupti', 'region_pop', 'region_push', 'trace_clock_ns']
class DeviceInfo:
    name: str
    uuid: str
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def peak_dram_bandwidth_bytes_per_s(self) -> float:
        """
        2 x memory clock x bus width / 8, bytes/s (0 when unknown)
        """
    def to_dict(self) -> fpgaprof.base.result_rows.DeviceInfo:
        """
        Every field and peak_dram_bandwidth_bytes_per_s (the device_info table)
        """
    @property
    def compute_capability_major(self) -> int:
        ...
    @compute_capability_major.setter
    def compute_capability_major(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def compute_capability_minor(self) -> int:
        ...
    @compute_capability_minor.setter
    def compute_capability_minor(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def core_clock_khz(self) -> int:
        ...
    @core_clock_khz.setter
    def core_clock_khz(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def global_memory_bytes(self) -> int:
        ...
    @global_memory_bytes.setter
    def global_memory_bytes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def id(self) -> int:
        ...
    @id.setter
    def id(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def l2_cache_bytes(self) -> int:
        ...
    @l2_cache_bytes.setter
    def l2_cache_bytes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_registers_per_sm(self) -> int:
        ...
    @max_registers_per_sm.setter
    def max_registers_per_sm(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_threads_per_sm(self) -> int:
        ...
    @max_threads_per_sm.setter
    def max_threads_per_sm(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def memory_bus_width_bits(self) -> int:
        ...
    @memory_bus_width_bits.setter
    def memory_bus_width_bits(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def memory_clock_khz(self) -> int:
        ...
    @memory_clock_khz.setter
    def memory_clock_khz(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def pcie_generation(self) -> int:
        ...
    @pcie_generation.setter
    def pcie_generation(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def pcie_link_width(self) -> int:
        ...
    @pcie_link_width.setter
    def pcie_link_width(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def shared_memory_per_sm_bytes(self) -> int:
        ...
    @shared_memory_per_sm_bytes.setter
    def shared_memory_per_sm_bytes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def sm_count(self) -> int:
        ...
    @sm_count.setter
    def sm_count(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class HloModuleText:
    def __init__(self, name: str, program_id: typing.SupportsInt | typing.SupportsIndex = -1, text: str = '', buffer_assignment: str = '', live_ranges: str = '') -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def buffer_assignment(self) -> str:
        """
        XLA's buffer assignment (its allocations), '' when not dumped
        """
    @property
    def live_ranges(self) -> str:
        """
        XLA's live ranges, '' when not dumped
        """
    @property
    def name(self) -> str:
        ...
    @property
    def program_id(self) -> int:
        ...
    @property
    def text(self) -> str:
        ...
class TraceStore:
    """
    Every record of one trace (owned; tables share it).
    """
    @staticmethod
    def deserialize(data: bytes, origin: str = '<bytes>') -> TraceStore:
        ...
    @staticmethod
    def load(path: os.PathLike | str | bytes, max_memory_bytes: typing.SupportsInt | typing.SupportsIndex = 0) -> TraceStore:
        """
        Reads a trace file (a bytes path is the system's bytes: names that are not UTF-8). Ctrl-C stops it. max_memory_bytes: the memory the read may use instead of the default bound (0).
        """
    def __init__(self) -> None:
        ...
    def add_device(self, arg0: DeviceInfo) -> None:
        ...
    def add_hlo_module(self, name: str, program_id: typing.SupportsInt | typing.SupportsIndex, text: str, buffer_assignment: str = '', live_ranges: str = '') -> None:
        ...
    def add_warning(self, message: str, code: str, numbers: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex] = []) -> None:
        """
        Adds a warning with its code (fpgaprof.base.diagnostics); a repeated one is counted.
        """
    def append(self, table: str, **kwargs) -> int:
        """
        Appends one record to a table (fields by name; str for string fields and enum names). For building stores in tests; returns the new record's index.
        """
    def correlate(self) -> fpgaprof.base.result_rows.CorrelationStats:
        """
        Joins records (fpgaprof/correlate.hpp); returns the unmatched counts.
        """
    def save(self, path: os.PathLike | str | bytes) -> None:
        """
        Writes the trace file atomically (temp file + fsync + rename). A bytes path is the system's bytes.
        """
    def serialize(self) -> bytes:
        ...
    def set_meta(self, **kwargs) -> None:
        """
        Sets TraceMeta fields by name (building stores in tests, adding warnings).
        """
    @property
    def allocations(self) -> AllocationTable:
        ...
    @property
    def api_calls(self) -> ApiTable:
        ...
    @property
    def api_functions(self) -> ApiFunctionTable:
        ...
    @property
    def counters(self) -> CounterTable:
        ...
    @property
    def devices(self) -> list[DeviceInfo]:
        """
        DeviceInfo list (copies)
        """
    @property
    def diagnostics(self) -> list[fpgaprof.base.result_rows.Diagnostic]:
        """
        TraceMeta::warnings as records (dicts of code, severity, source, count, numbers, message; copies)
        """
    @property
    def external_correlations(self) -> ExternalCorrelationTable:
        ...
    @property
    def hlo_modules(self) -> list[HloModuleText]:
        ...
    @property
    def kernels(self) -> KernelTable:
        ...
    @property
    def launch_configs(self) -> LaunchConfigTable:
        ...
    @property
    def markers(self) -> MarkerTable:
        ...
    @property
    def memcpys(self) -> MemcpyTable:
        ...
    @property
    def memsets(self) -> MemsetTable:
        ...
    @property
    def meta(self) -> fpgaprof.base.result_rows.TraceMeta:
        """
        TraceMeta as a dict (a copy; the trace_meta table)
        """
    @property
    def overheads(self) -> OverheadTable:
        ...
    @property
    def power_samples(self) -> PowerSampleTable:
        ...
    @property
    def regions(self) -> RegionTable:
        ...
    @property
    def strings(self) -> list[str]:
        ...
    @property
    def syncs(self) -> SyncTable:
        ...
    @property
    def table_names(self) -> list[str]:
        ...
class KernelRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: KernelRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def api_index(self) -> typing.Any:
        ...
    @property
    def block_x(self) -> typing.Any:
        ...
    @property
    def block_y(self) -> typing.Any:
        ...
    @property
    def block_z(self) -> typing.Any:
        ...
    @property
    def context_id(self) -> typing.Any:
        ...
    @property
    def correlation_id(self) -> typing.Any:
        ...
    @property
    def device_id(self) -> typing.Any:
        ...
    @property
    def duration_ns(self) -> int:
        ...
    @property
    def dynamic_shared_bytes(self) -> typing.Any:
        ...
    @property
    def end_ns(self) -> typing.Any:
        ...
    @property
    def graph_id(self) -> typing.Any:
        ...
    @property
    def graph_node_id(self) -> typing.Any:
        ...
    @property
    def grid_x(self) -> typing.Any:
        ...
    @property
    def grid_y(self) -> typing.Any:
        ...
    @property
    def grid_z(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def launch_config(self) -> typing.Any:
        ...
    @property
    def launch_ns(self) -> typing.Any:
        ...
    @property
    def local_bytes_per_thread(self) -> typing.Any:
        ...
    @property
    def marker_index(self) -> typing.Any:
        ...
    @property
    def name(self) -> typing.Any:
        ...
    @property
    def name_id(self) -> int:
        ...
    @property
    def region_index(self) -> typing.Any:
        ...
    @property
    def registers_per_thread(self) -> typing.Any:
        ...
    @property
    def start_ns(self) -> typing.Any:
        ...
    @property
    def static_shared_bytes(self) -> typing.Any:
        ...
    @property
    def stream_id(self) -> typing.Any:
        ...
    @property
    def thread_id(self) -> typing.Any:
        ...
class KernelTableIterator:
    def __iter__(self) -> KernelTableIterator:
        ...
    def __next__(self) -> KernelRecord:
        ...
class KernelTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> KernelRecord:
        ...
    def __iter__(self) -> KernelTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class LaunchConfigRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: LaunchConfigRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def block_x(self) -> typing.Any:
        ...
    @property
    def block_y(self) -> typing.Any:
        ...
    @property
    def block_z(self) -> typing.Any:
        ...
    @property
    def dynamic_shared_bytes(self) -> typing.Any:
        ...
    @property
    def graph_id(self) -> typing.Any:
        ...
    @property
    def graph_node_id(self) -> typing.Any:
        ...
    @property
    def grid_x(self) -> typing.Any:
        ...
    @property
    def grid_y(self) -> typing.Any:
        ...
    @property
    def grid_z(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def local_bytes_per_thread(self) -> typing.Any:
        ...
    @property
    def registers_per_thread(self) -> typing.Any:
        ...
    @property
    def static_shared_bytes(self) -> typing.Any:
        ...
class LaunchConfigTableIterator:
    def __iter__(self) -> LaunchConfigTableIterator:
        ...
    def __next__(self) -> LaunchConfigRecord:
        ...
class LaunchConfigTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> LaunchConfigRecord:
        ...
    def __iter__(self) -> LaunchConfigTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class MemcpyRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: MemcpyRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def api_index(self) -> typing.Any:
        ...
    @property
    def bytes(self) -> typing.Any:
        ...
    @property
    def context_id(self) -> typing.Any:
        ...
    @property
    def copy_kind(self) -> typing.Any:
        ...
    @property
    def correlation_id(self) -> typing.Any:
        ...
    @property
    def device_id(self) -> typing.Any:
        ...
    @property
    def dst_device_id(self) -> typing.Any:
        ...
    @property
    def dst_kind(self) -> typing.Any:
        ...
    @property
    def duration_ns(self) -> int:
        ...
    @property
    def end_ns(self) -> typing.Any:
        ...
    @property
    def graph_id(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def is_async(self) -> typing.Any:
        ...
    @property
    def launch_ns(self) -> typing.Any:
        ...
    @property
    def marker_index(self) -> typing.Any:
        ...
    @property
    def region_index(self) -> typing.Any:
        ...
    @property
    def src_device_id(self) -> typing.Any:
        ...
    @property
    def src_kind(self) -> typing.Any:
        ...
    @property
    def start_ns(self) -> typing.Any:
        ...
    @property
    def stream_id(self) -> typing.Any:
        ...
    @property
    def thread_id(self) -> typing.Any:
        ...
class MemcpyTableIterator:
    def __iter__(self) -> MemcpyTableIterator:
        ...
    def __next__(self) -> MemcpyRecord:
        ...
class MemcpyTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> MemcpyRecord:
        ...
    def __iter__(self) -> MemcpyTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class MemsetRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: MemsetRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def api_index(self) -> typing.Any:
        ...
    @property
    def bytes(self) -> typing.Any:
        ...
    @property
    def context_id(self) -> typing.Any:
        ...
    @property
    def correlation_id(self) -> typing.Any:
        ...
    @property
    def device_id(self) -> typing.Any:
        ...
    @property
    def duration_ns(self) -> int:
        ...
    @property
    def end_ns(self) -> typing.Any:
        ...
    @property
    def graph_id(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def is_async(self) -> typing.Any:
        ...
    @property
    def launch_ns(self) -> typing.Any:
        ...
    @property
    def marker_index(self) -> typing.Any:
        ...
    @property
    def memory_kind(self) -> typing.Any:
        ...
    @property
    def region_index(self) -> typing.Any:
        ...
    @property
    def start_ns(self) -> typing.Any:
        ...
    @property
    def stream_id(self) -> typing.Any:
        ...
    @property
    def thread_id(self) -> typing.Any:
        ...
    @property
    def value(self) -> typing.Any:
        ...
class MemsetTableIterator:
    def __iter__(self) -> MemsetTableIterator:
        ...
    def __next__(self) -> MemsetRecord:
        ...
class MemsetTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> MemsetRecord:
        ...
    def __iter__(self) -> MemsetTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class AllocationRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: AllocationRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def address(self) -> typing.Any:
        ...
    @property
    def api_index(self) -> typing.Any:
        ...
    @property
    def bytes(self) -> typing.Any:
        ...
    @property
    def context_id(self) -> typing.Any:
        ...
    @property
    def correlation_id(self) -> typing.Any:
        ...
    @property
    def device_id(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def is_alloc(self) -> typing.Any:
        ...
    @property
    def is_async(self) -> typing.Any:
        ...
    @property
    def memory_kind(self) -> typing.Any:
        ...
    @property
    def pc(self) -> typing.Any:
        ...
    @property
    def region_index(self) -> typing.Any:
        ...
    @property
    def source(self) -> typing.Any:
        ...
    @property
    def source_id(self) -> int:
        ...
    @property
    def stream_id(self) -> typing.Any:
        ...
    @property
    def thread_id(self) -> typing.Any:
        ...
    @property
    def timestamp_ns(self) -> typing.Any:
        ...
class AllocationTableIterator:
    def __iter__(self) -> AllocationTableIterator:
        ...
    def __next__(self) -> AllocationRecord:
        ...
class AllocationTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> AllocationRecord:
        ...
    def __iter__(self) -> AllocationTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class ApiRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: ApiRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def callback_id(self) -> typing.Any:
        ...
    @property
    def correlation_id(self) -> typing.Any:
        ...
    @property
    def end_ns(self) -> typing.Any:
        ...
    @property
    def function(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def kind(self) -> typing.Any:
        ...
    @property
    def name(self) -> typing.Any:
        ...
    @property
    def return_value(self) -> typing.Any:
        ...
    @property
    def start_ns(self) -> typing.Any:
        ...
    @property
    def thread_id(self) -> typing.Any:
        ...
class ApiTableIterator:
    def __iter__(self) -> ApiTableIterator:
        ...
    def __next__(self) -> ApiRecord:
        ...
class ApiTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> ApiRecord:
        ...
    def __iter__(self) -> ApiTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class ApiFunctionRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: ApiFunctionRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def callback_id(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def kind(self) -> typing.Any:
        ...
    @property
    def name(self) -> typing.Any:
        ...
    @property
    def name_id(self) -> int:
        ...
class ApiFunctionTableIterator:
    def __iter__(self) -> ApiFunctionTableIterator:
        ...
    def __next__(self) -> ApiFunctionRecord:
        ...
class ApiFunctionTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> ApiFunctionRecord:
        ...
    def __iter__(self) -> ApiFunctionTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class SyncRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: SyncRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def context_id(self) -> typing.Any:
        ...
    @property
    def correlation_id(self) -> typing.Any:
        ...
    @property
    def end_ns(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def kind(self) -> typing.Any:
        ...
    @property
    def start_ns(self) -> typing.Any:
        ...
    @property
    def stream_id(self) -> typing.Any:
        ...
    @property
    def thread_id(self) -> typing.Any:
        ...
class SyncTableIterator:
    def __iter__(self) -> SyncTableIterator:
        ...
    def __next__(self) -> SyncRecord:
        ...
class SyncTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> SyncRecord:
        ...
    def __iter__(self) -> SyncTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class MarkerRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: MarkerRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def depth(self) -> typing.Any:
        ...
    @property
    def domain(self) -> typing.Any:
        ...
    @property
    def domain_id(self) -> int:
        ...
    @property
    def end_ns(self) -> typing.Any:
        ...
    @property
    def id(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def is_closed(self) -> typing.Any:
        ...
    @property
    def is_range(self) -> typing.Any:
        ...
    @property
    def name(self) -> typing.Any:
        ...
    @property
    def name_id(self) -> int:
        ...
    @property
    def parent(self) -> typing.Any:
        ...
    @property
    def start_ns(self) -> typing.Any:
        ...
    @property
    def thread_id(self) -> typing.Any:
        ...
class MarkerTableIterator:
    def __iter__(self) -> MarkerTableIterator:
        ...
    def __next__(self) -> MarkerRecord:
        ...
class MarkerTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> MarkerRecord:
        ...
    def __iter__(self) -> MarkerTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class RegionRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: RegionRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def depth(self) -> typing.Any:
        ...
    @property
    def end_ns(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def name(self) -> typing.Any:
        ...
    @property
    def name_id(self) -> int:
        ...
    @property
    def parent(self) -> typing.Any:
        ...
    @property
    def start_ns(self) -> typing.Any:
        ...
    @property
    def thread_id(self) -> typing.Any:
        ...
class RegionTableIterator:
    def __iter__(self) -> RegionTableIterator:
        ...
    def __next__(self) -> RegionRecord:
        ...
class RegionTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> RegionRecord:
        ...
    def __iter__(self) -> RegionTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class OverheadRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: OverheadRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def end_ns(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def kind(self) -> typing.Any:
        ...
    @property
    def kind_id(self) -> int:
        ...
    @property
    def object_id(self) -> typing.Any:
        ...
    @property
    def object_kind(self) -> typing.Any:
        ...
    @property
    def start_ns(self) -> typing.Any:
        ...
class OverheadTableIterator:
    def __iter__(self) -> OverheadTableIterator:
        ...
    def __next__(self) -> OverheadRecord:
        ...
class OverheadTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> OverheadRecord:
        ...
    def __iter__(self) -> OverheadTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class ExternalCorrelationRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: ExternalCorrelationRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def correlation_id(self) -> typing.Any:
        ...
    @property
    def external_id(self) -> typing.Any:
        ...
    @property
    def external_kind(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
class ExternalCorrelationTableIterator:
    def __iter__(self) -> ExternalCorrelationTableIterator:
        ...
    def __next__(self) -> ExternalCorrelationRecord:
        ...
class ExternalCorrelationTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> ExternalCorrelationRecord:
        ...
    def __iter__(self) -> ExternalCorrelationTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class CounterRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: CounterRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def index(self) -> int:
        ...
    @property
    def kernel_index(self) -> typing.Any:
        ...
    @property
    def memcpy_index(self) -> typing.Any:
        ...
    @property
    def metric(self) -> typing.Any:
        ...
    @property
    def metric_id(self) -> int:
        ...
    @property
    def range_index(self) -> typing.Any:
        ...
    @property
    def range_name(self) -> typing.Any:
        ...
    @property
    def range_name_id(self) -> int:
        ...
    @property
    def value(self) -> typing.Any:
        ...
class CounterTableIterator:
    def __iter__(self) -> CounterTableIterator:
        ...
    def __next__(self) -> CounterRecord:
        ...
class CounterTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> CounterRecord:
        ...
    def __iter__(self) -> CounterTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class PowerSampleRecord:
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: PowerSampleRecord) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        Every field as a dict (strings resolved, enums as names).
        """
    @property
    def device_id(self) -> typing.Any:
        ...
    @property
    def energy_mj(self) -> typing.Any:
        ...
    @property
    def index(self) -> int:
        ...
    @property
    def power_mw(self) -> typing.Any:
        ...
    @property
    def time_ns(self) -> typing.Any:
        ...
class PowerSampleTableIterator:
    def __iter__(self) -> PowerSampleTableIterator:
        ...
    def __next__(self) -> PowerSampleRecord:
        ...
class PowerSampleTable:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> PowerSampleRecord:
        ...
    def __iter__(self) -> PowerSampleTableIterator:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def _repr_html_(self) -> str:
        ...
    def columns(self, names: collections.abc.Sequence[str] = []) -> dict:
        """
        Columns as numpy arrays, {field: array}: integers/floats/bools with the C++ types, string fields as str (object arrays), enums as their names. `names` picks fields.
        """
    def to_pandas(self):
        """
        The table as a pandas DataFrame (one column per record field, strings resolved).
        """
    @property
    def field_names(self) -> list[str]:
        ...
    @property
    def name(self) -> str:
        ...
class CuptiStatus:
    def __repr__(self) -> str:
        ...
    @property
    def cupti_cuda(self) -> str:
        ...
    @property
    def cupti_version(self) -> int:
        ...
    @property
    def devices(self) -> list[DeviceInfo]:
        ...
    @property
    def driver_version(self) -> int:
        ...
    @property
    def header_cuda(self) -> str:
        ...
    @property
    def header_cupti_version(self) -> int:
        ...
    @property
    def how_found(self) -> str:
        ...
    @property
    def library_found(self) -> bool:
        ...
    @property
    def library_path(self) -> str:
        ...
    @property
    def min_cuda(self) -> str:
        ...
    @property
    def min_cupti_version(self) -> int:
        ...
    @property
    def problem(self) -> str:
        ...
class CaptureSession:
    @staticmethod
    def start(buffer_bytes: typing.SupportsInt | typing.SupportsIndex = 8388608, max_buffers: typing.SupportsInt | typing.SupportsIndex = 0, device_buffer_bytes: typing.SupportsInt | typing.SupportsIndex = 0, require_gpu: bool = False, power_sample_period_ns: typing.SupportsInt | typing.SupportsIndex = 1000000) -> CaptureSession:
        ...
    def stop(self) -> TraceStore:
        """
        Synchronizes, flushes and returns the (uncorrelated) TraceStore. Once only.
        """
    @property
    def gpu_active(self) -> bool:
        ...
    @property
    def unavailable_reason(self) -> str:
        ...
def _raise_error(kind: str, message: str) -> None:
    ...
def current_thread_id() -> int:
    """
    gettid() of the calling thread.
    """
def diagnostic_codes() -> list[fpgaprof.base.result_rows.DiagnosticCode]:
    """
    Every diagnostic code (code, severity, source, description): the one table, diagnostics.hpp.
    """
def library_path() -> str:
    """
    Absolute path of libfpgaprof.so.
    """
def nvtx_injection_status() -> fpgaprof.base.result_rows.NvtxInjection:
    """
    What NVTX's injection hook (libfpgaprof.so's InitializeInjectionNvtx2) did in this process: calls, last_result (-1 never called), succeeded, detail.
    """
def probe_cupti() -> CuptiStatus:
    """
    What fpgaprof sees of CUPTI, the driver and the GPUs (never raises).
    """
def region_pop() -> None:
    ...
def region_push(name: str) -> None:
    ...
def trace_clock_ns() -> int:
    """
    Trace clock now (CLOCK_REALTIME ns).
    """
API_KIND_NAMES: tuple = ('runtime', 'driver')
COPY_KIND_NAMES: tuple = ('unknown', 'HtoD', 'DtoH', 'DtoD', 'HtoH', 'PtoP', 'HtoA', 'AtoH', 'AtoA', 'AtoD', 'DtoA')
MEMORY_KIND_NAMES: tuple = ('unknown', 'pageable', 'pinned', 'device', 'array', 'managed', 'device_static', 'managed_static')
SYNC_KIND_NAMES: tuple = ('unknown', 'event_synchronize', 'stream_wait_event', 'stream_synchronize', 'context_synchronize')
__version__: str = '0.1.0'
