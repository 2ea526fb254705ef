"""Static analysis of XLA HLO text: parse a module and cost every instruction.

    >>> m = fpgaprof.hlo.analyze(jax.jit(f).lower(x).compile().as_text())
    >>> m.flops, m.bytes_accessed                  # module totals, as XLA's cost_analysis()
    >>> [(i.name, i.flops, i.source_line) for i in m.instructions]   # entry computation

Totals follow XLA's HloCostAnalysis conventions (docs/cost-model.md); while loops and
conditionals are costed per iteration / per branch (``per_iteration`` is set).
Parse errors raise :class:`fpgaprof.HloParseError` with ``line``, ``column`` and ``text``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from fpgaprof.base.core import core
from fpgaprof.base.errors import HloParseError
from fpgaprof.base.text import first_non_utf8

__all__ = [
    "analyze",
    "check_text",
    "from_jax",
    "xla_hlo_bindings",
    "HloModule",
    "HloComputation",
    "HloInstruction",
]


class HloInstruction:
    """One HLO instruction with its static cost (read-only view into the parsed module)."""

    __slots__ = ("_i", "_module")

    def __init__(self, cpp_instruction, module: HloModule):
        self._i = cpp_instruction
        self._module = module

    # identity
    name = property(lambda self: self._i.name)
    opcode = property(lambda self: self._i.opcode)
    fusion_kind = property(lambda self: self._i.fusion_kind)
    shape = property(lambda self: self._i.shape)
    operands = property(lambda self: list(self._i.operands))
    attributes = property(lambda self: dict(self._i.attributes))
    called_computations = property(lambda self: list(self._i.called_computations))
    custom_call_target = property(lambda self: self._i.custom_call_target)
    backend_config = property(lambda self: self._i.backend_config)
    is_root = property(lambda self: self._i.is_root)
    line = property(lambda self: self._i.line)
    known_trip_count = property(lambda self: self._i.known_trip_count)
    parameter_number = property(lambda self: self._i.parameter_number)  # parameter(N); -1 others
    # cost (bytes are at the fusion boundary: what reaches device memory)
    flops = property(lambda self: self._i.cost.flops)
    transcendentals = property(lambda self: self._i.cost.transcendentals)
    bytes_read = property(lambda self: self._i.cost.bytes_read)
    bytes_written = property(lambda self: self._i.cost.bytes_written)
    bytes_accessed = property(lambda self: self._i.cost.bytes_accessed)
    output_bytes = property(lambda self: self._i.cost.output_bytes)
    working_set_bytes = property(lambda self: self._i.cost.working_set_bytes)
    per_iteration = property(lambda self: self._i.cost.per_iteration)
    unknown_cost = property(lambda self: self._i.cost.unknown)
    cost_from_author = property(lambda self: self._i.cost.from_author)
    pattern = property(lambda self: self._i.pattern)
    # attribution
    op_type = property(lambda self: self._i.op_type)
    op_name = property(lambda self: self._i.op_name)
    source_file = property(lambda self: self._i.source_file)
    source_line = property(lambda self: self._i.source_line)
    source_column = property(lambda self: self._i.source_column)
    function_name = property(lambda self: self._i.function_name)
    stack_frame_id = property(lambda self: self._i.stack_frame_id)

    @property
    def computation(self) -> str:
        """Name of the computation holding this instruction."""
        return self._module._m.computations[self._i.computation_index].name

    def called(self) -> list[HloComputation]:
        """Computations this instruction calls (fused computation, loop body, reducer, ...)."""
        return [self._module.computation(n) for n in self._i.called_computations]

    def __repr__(self) -> str:
        return (
            f"HloInstruction({self.name!r}, opcode={self.opcode!r}, flops={self.flops:g}, "
            f"bytes_accessed={self.bytes_accessed:g})"
        )


class HloComputation:
    """A computation (ENTRY, fused computation, loop body, reducer ...)."""

    __slots__ = ("_c", "_module")

    def __init__(self, cpp_computation, module: HloModule):
        self._c = cpp_computation
        self._module = module

    name = property(lambda self: self._c.name)
    is_entry = property(lambda self: self._c.is_entry)
    is_fusion = property(lambda self: self._c.is_fusion)

    @property
    def instructions(self) -> list[HloInstruction]:
        return [HloInstruction(i, self._module) for i in self._c.instructions]

    def __repr__(self) -> str:
        return f"HloComputation({self.name!r}, {len(self._c.instructions)} instructions)"


class HloModule:
    """A parsed, costed HLO module. Totals are the entry computation's (as XLA reports them)."""

    __slots__ = ("_m", "_by_name")

    def __init__(self, cpp_module):
        self._m = cpp_module
        self._by_name = None

    name = property(lambda self: self._m.name)
    flops = property(lambda self: self._m.total.flops)
    transcendentals = property(lambda self: self._m.total.transcendentals)
    bytes_accessed = property(lambda self: self._m.total.bytes_accessed)
    bytes_read = property(lambda self: self._m.total.bytes_read)
    bytes_written = property(lambda self: self._m.total.bytes_written)
    unknown_cost_instructions = property(lambda self: self._m.unknown_cost_instructions)
    attributes = property(lambda self: dict(self._m.attributes))
    stack_frames = property(lambda self: list(self._m.stack_frames))

    @property
    def computations(self) -> list[HloComputation]:
        return [HloComputation(c, self) for c in self._m.computations]

    @property
    def entry(self) -> HloComputation:
        return HloComputation(self._m.computations[self._m.entry_index], self)

    @property
    def instructions(self) -> list[HloInstruction]:
        """The entry computation's instructions, in text order."""
        return self.entry.instructions

    def computation(self, name: str) -> HloComputation:
        for c in self._m.computations:
            if c.name == name:
                return HloComputation(c, self)
        raise KeyError(name)

    def all_instructions(self) -> Iterator[HloInstruction]:
        """Every instruction of every computation (fused ones included)."""
        for c in self._m.computations:
            for i in c.instructions:
                yield HloInstruction(i, self)

    def instruction(self, name: str) -> HloInstruction:
        """Instruction by name across all computations."""
        if self._by_name is None:
            self._by_name = {}
            for c in self._m.computations:
                for i in c.instructions:
                    self._by_name.setdefault(i.name, i)
        return HloInstruction(self._by_name[name], self)

    def __repr__(self) -> str:
        return (
            f"HloModule({self.name!r}, flops={self.flops:g}, "
            f"bytes_accessed={self.bytes_accessed:g})"
        )


def analyze(hlo_text: str | bytes) -> HloModule:
    """Parses HLO text (``compiled.as_text()`` or an XLA dump) and costs it.

    Raises fpgaprof.HloParseError (with ``line``, ``column``, ``text``) on text it cannot parse.
    """
    if isinstance(hlo_text, bytes):
        hlo_text = hlo_text.decode("utf-8", errors="replace")
    check_text(hlo_text)
    return HloModule(core.hlo.analyze(hlo_text))


def check_text(hlo_text: str) -> None:
    """Raises fpgaprof.HloParseError (with ``line``, ``column``, ``text``) at the first lone
    surrogate of `hlo_text` (a str UTF-8 cannot encode, so the core never sees it)."""
    bad = first_non_utf8(hlo_text)
    if bad is not None:
        line = hlo_text.count("\n", 0, bad) + 1
        column = bad - (hlo_text.rfind("\n", 0, bad) + 1) + 1
        e = HloParseError(
            f"line {line}, column {column}: a lone surrogate ({hlo_text[bad]!r}) is not HLO "
            "text (give the text XLA printed, or bytes)"
        )
        e.line, e.column, e.text = line, column, ascii(hlo_text[bad])
        raise e


def from_jax(fn, *args, **kwargs) -> HloModule:
    """Lowers and compiles ``fn`` for these arguments and analyses the optimized HLO.

    ``fn`` is a plain function (wrapped in ``jax.jit``) or an already jitted one; ``args`` and
    ``kwargs`` are example arguments (arrays or ``jax.ShapeDtypeStruct``). The module is what
    XLA would run on the default backend: costs are per call. Nothing is executed.
    """
    import jax

    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
    compiled = jitted.lower(*args, **kwargs).compile()
    # jax types as_text() Optional; a compiled function always has its HLO text
    return analyze(cast(str, compiled.as_text()))


def xla_hlo_bindings() -> Any:
    """jaxlib's own HLO module bindings (``hlo_module_from_text``, ``HloModule`` with
    ``from_serialized_hlo_module_proto``): ``xla_client.hlo`` (jaxlib._hlo) from jaxlib 0.10.2,
    jaxlib._jax before it. Raises ImportError without jaxlib."""
    from jax._src.lib import xla_client

    bindings = getattr(xla_client, "hlo", None)
    if bindings is not None and hasattr(bindings, "hlo_module_from_text"):
        return bindings
    from jax._src.lib import _jax

    return _jax
