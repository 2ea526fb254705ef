"""
kernel -> XLA HLO op -> source line attribution
"""
from __future__ import annotations
import collections.abc
import fpgaprof._core
import fpgaprof.base.result_rows
import numpy
import numpy.typing
import typing
__all__: list[str] = ['ActivityAttribution', 'AttributionList', 'AttributionResult', 'OpStats', 'UnattributedKernel', 'attribute', 'demangle_kernel_name', 'library_of_kernel', 'parse_xla_range_name', 'sanitize_kernel_name']
class ActivityAttribution:
    @property
    def category(self) -> str:
        ...
    @property
    def hlo_op(self) -> str:
        ...
    @property
    def library(self) -> str:
        ...
    @property
    def method(self) -> str:
        ...
    @property
    def module_index(self) -> typing.Any:
        ...
    @property
    def module_name(self) -> str:
        ...
    @property
    def op_name(self) -> str:
        ...
    @property
    def program_id(self) -> int:
        ...
    @property
    def reason(self) -> str:
        ...
    @property
    def source_file(self) -> str:
        ...
    @property
    def source_line(self) -> int:
        ...
class OpStats:
    @property
    def bytes_accessed(self) -> float:
        ...
    @property
    def bytes_read(self) -> float:
        ...
    @property
    def bytes_written(self) -> float:
        ...
    @property
    def category(self) -> str:
        ...
    @property
    def cost_per_iteration(self) -> bool:
        ...
    @property
    def cost_unknown(self) -> bool:
        ...
    @property
    def executions(self) -> int:
        ...
    @property
    def flops(self) -> float:
        ...
    @property
    def has_cost(self) -> bool:
        ...
    @property
    def hlo_op(self) -> str:
        ...
    @property
    def kernel_count(self) -> int:
        ...
    @property
    def kernel_names(self) -> list[str]:
        ...
    @property
    def mean_ns(self) -> int:
        ...
    @property
    def memcpy_bytes(self) -> int:
        ...
    @property
    def memcpy_count(self) -> int:
        ...
    @property
    def memcpy_ns(self) -> int:
        ...
    @property
    def method(self) -> str:
        ...
    @property
    def module_index(self) -> typing.Any:
        ...
    @property
    def module_name(self) -> str:
        ...
    @property
    def op_name(self) -> str:
        ...
    @property
    def opcode(self) -> str:
        ...
    @property
    def pattern(self) -> str:
        ...
    @property
    def program_id(self) -> int:
        ...
    @property
    def source_file(self) -> str:
        ...
    @property
    def source_line(self) -> int:
        ...
    @property
    def timed_executions(self) -> int:
        ...
    @property
    def total_ns(self) -> int:
        ...
    @property
    def transcendentals(self) -> float:
        ...
class UnattributedKernel:
    @property
    def count(self) -> int:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def reason(self) -> str:
        ...
    @property
    def total_ns(self) -> int:
        ...
class AttributionList:
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> ActivityAttribution:
        ...
    def __iter__(self) -> collections.abc.Iterator[ActivityAttribution]:
        ...
    def __len__(self) -> int:
        ...
    @property
    def site_index(self) -> numpy.typing.NDArray[numpy.uint32]:
        ...
    @property
    def sites(self) -> list[ActivityAttribution]:
        ...
class AttributionResult:
    @property
    def attributed_count(self) -> int:
        ...
    @property
    def attributed_ns(self) -> int:
        ...
    @property
    def count_by_method(self) -> fpgaprof.base.result_rows.AttributionMethodCounts:
        ...
    @property
    def kernels(self) -> AttributionList:
        ...
    @property
    def memcpys(self) -> AttributionList:
        ...
    @property
    def memsets(self) -> AttributionList:
        ...
    @property
    def op_of_site(self) -> list[int]:
        ...
    @property
    def ops(self) -> list[OpStats]:
        ...
    @property
    def unattributed(self) -> list[UnattributedKernel]:
        ...
    @property
    def unattributed_count(self) -> int:
        ...
    @property
    def unattributed_ns(self) -> int:
        ...
    @property
    def warnings(self) -> list[str]:
        ...
def attribute(store: fpgaprof._core.TraceStore) -> AttributionResult:
    """
    Attributes every kernel/copy of a correlated store (parses store.hlo_modules).
    """
def demangle_kernel_name(name: str) -> str:
    """
    A mangled C++ kernel name demangled (as c++filt prints it); any other name unchanged.
    """
def library_of_kernel(kernel_name: str) -> str:
    ...
def parse_xla_range_name(text: str) -> fpgaprof.base.result_rows.XlaRangeName | None:
    ...
def sanitize_kernel_name(hlo_name: str) -> str:
    """
    The kernel name XLA gives an HLO instruction: each character outside [A-Za-z0-9_$] becomes '_'.
    """
