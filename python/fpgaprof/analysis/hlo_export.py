"""One HLO instruction as a standalone module, for an HLS flow (``prof.export_hlo``,
``fpgaprof.fpga.export_hlo``; docs/fpga-model.md): a fusion's computation becomes the ENTRY, any
other instruction gets an ENTRY taking its operands, and every computation it calls comes along.
"""

from __future__ import annotations

import difflib
import os
import re
from typing import Any

from fpgaprof.base.atomic import write_text_atomic
from fpgaprof.base.core import core
from fpgaprof.base.errors import InvalidArgumentError

__all__ = ["HloText", "hlo_module_for_op", "export_hlo", "without_tuple_shorthand"]

_HEADER = re.compile(r"^\s*(ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*")
_CONTROL_PREDECESSORS = re.compile(r",\s*control-predecessors=\{[^}]*\}")


def _split_computations(text: str) -> dict[str, str]:
    """Computation name -> its text (header line to closing brace), as XLA prints them."""
    comps: dict[str, str] = {}
    cur: list[str] | None = None
    name = ""
    for line in text.splitlines():
        if cur is None:
            m = _HEADER.match(line)
            if m:
                name = m.group(2)
                cur = [line]
        else:
            cur.append(line)
            if line.strip() == "}":
                comps[name] = "\n".join(cur)
                cur = None
    return comps


def _preamble(text: str) -> list[str]:
    """The lines between the HloModule line and the first computation: newer XLA's stack-frame
    tables (FileNames, FunctionNames, FileLocations, StackFrames) that metadata's
    stack_frame_id refers to; copied so the exported module keeps its source lines."""
    lines = text.splitlines()
    out: list[str] = []
    for line in lines[1:]:
        if _HEADER.match(line):
            break
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    while out and not out[0].strip():
        out.pop(0)
    return out + [""] if out else []


def _balanced_end(s: str, start: int) -> int:
    """Index just past the bracket group opening at s[start] ("(", "[" or "{")."""
    depth = 0
    quoted = False
    i = start
    while i < len(s):
        ch = s[i]
        if quoted:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise InvalidArgumentError(f"unbalanced brackets in HLO text: {s[start : start + 120]!r}")


def _split_top(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _tuple_element(shape: str, index: int) -> str | None:
    """Element `index` of a printed tuple shape ("(f32[2]{0}, /*index=1*/s32[3]{0})", XLA's
    index comments dropped); None when the shape is no tuple or has no such element."""
    elements = _split_top(shape[1:-1]) if shape.startswith("(") else []
    if not 0 <= index < len(elements):
        return None
    return re.sub(r"^/\*index=\d+\*/\s*", "", elements[index])


def _instruction_parts(text: str) -> tuple[str, str, str, str]:
    """(shape, opcode, operand list, attributes) of "%name = shape opcode(operands), attrs"."""
    m = _INSTRUCTION.match(text)
    if not m:
        raise InvalidArgumentError(f"cannot read the HLO instruction {text[:120]!r}")
    rest = text[m.end() :]
    if rest.startswith("("):
        end = _balanced_end(rest, 0)
    else:
        end = len(rest.split(None, 1)[0])
    shape, rest = rest[:end], rest[end:].lstrip()
    om = re.match(r"[\w\-]+", rest)
    if not om or om.end() >= len(rest) or rest[om.end()] != "(":
        raise InvalidArgumentError(f"cannot read the HLO instruction {text[:120]!r}")
    close = _balanced_end(rest, om.end())
    return shape, om.group(0), rest[om.end() + 1 : close - 1], rest[close:]


_SHORTHAND = re.compile(r"%([\w.\-]+)#(\d+)\b")
_DEFINED = re.compile(r"^\s*(?:ROOT\s+)?%([\w.\-]+)\s*=")


def without_tuple_shorthand(module_text: str) -> str:
    """The module with XLA's tuple-element shorthand spelled out, for parsers that predate it
    (jaxlib 0.10's): each `%t#N` an operand names becomes `%t.element_N`, a get-tuple-element
    of element N of %t's printed tuple shape, defined on the line after %t. Nothing else
    changes; text without the shorthand comes back as it is. Raises InvalidArgumentError when
    %t is not defined in the same computation or has no element N."""
    if "#" not in module_text:
        return module_text
    lines = module_text.split("\n")
    out: list[str] = []
    start = 0  # first line of the current computation
    for i, line in enumerate(lines + ["}"]):
        if not line.startswith("}"):
            continue
        comp = lines[start : i + 1] if i < len(lines) else lines[start:]
        start = i + 1
        defined = {m.group(1): k for k, ln in enumerate(comp) if (m := _DEFINED.match(ln))}
        taken = set(defined)
        wanted: dict[tuple[str, int], str] = {}
        extra: dict[int, list[str]] = {}
        for ln in comp:
            body = ln.split("=", 1)[1] if _DEFINED.match(ln) else ""
            for m in _SHORTHAND.finditer(body):
                key = (m.group(1), int(m.group(2)))
                if key in wanted:
                    continue
                base, index = key
                if base not in defined:
                    raise InvalidArgumentError(
                        f"%{base}#{index}: no instruction %{base} in its computation"
                    )
                shape = _instruction_parts(comp[defined[base]])[0].strip()
                element = _tuple_element(shape, index)
                if element is None:
                    raise InvalidArgumentError(
                        f"%{base}#{index}: %{base} has shape {shape[:200]!r}, "
                        f"without element {index}"
                    )
                name = f"{base}.element_{index}"
                while name in taken:
                    name += "_"
                taken.add(name)
                wanted[key] = name
                extra.setdefault(defined[base], []).append(
                    f"  %{name} = {element} get-tuple-element(%{base}), index={index}"
                )

        def spelled(m: re.Match, names: dict[tuple[str, int], str] = wanted) -> str:
            return "%" + names.get((m.group(1), int(m.group(2))), m.group(0)[1:])

        for k, ln in enumerate(comp):
            if _DEFINED.match(ln):
                head, body = ln.split("=", 1)
                ln = head + "=" + _SHORTHAND.sub(spelled, body)
            out.append(ln)
            out.extend(extra.get(k, []))
    return "\n".join(out)


def _instruction_texts(module_text: str, mod: Any) -> dict[tuple[int, str], str]:
    """(computation index, instruction name) -> its full text (attribute lines continued on the
    following lines joined), located by the parser's line numbers."""
    lines = module_text.splitlines()
    out: dict[tuple[int, str], str] = {}
    for ci, comp in enumerate(mod.computations):
        for ins in comp.instructions:
            k = ins.line - 1
            if not (0 <= k < len(lines)) or not _INSTRUCTION.match(lines[k]):
                continue
            parts = [lines[k].strip()]
            j = k + 1
            while (
                j < len(lines)
                and lines[j].strip() != "}"
                and not _INSTRUCTION.match(lines[j])
                and not _HEADER.match(lines[j])
            ):
                parts.append(lines[j].strip())
                j += 1
            out[(ci, ins.name)] = " ".join(parts)
    return out


def hlo_module_for_op(module_text: str, op: str) -> str:
    """A standalone HLO module computing one instruction of ``module_text`` (XLA's optimized
    HLO, any version): a fusion's fused computation becomes the ENTRY (its parameters kept); any
    other instruction gets an ENTRY whose parameters are its operands, each with the shape of
    the instruction that produced it. Every computation it calls (loop body and condition,
    reducers, comparators, nested fusions) is copied along, transitively. Raises
    InvalidArgumentError when ``op`` is not in the module or cannot stand alone."""
    mod = core.hlo.analyze(module_text)
    hits = [
        (ci, ins)
        for ci, c in enumerate(mod.computations)
        for ins in c.instructions
        if ins.name == op
    ]
    if not hits:
        raise InvalidArgumentError(
            f"instruction {op!r} is not in the module: pass an HLO op name from prof.ops"
        )
    ci, ins = hits[0]
    comp = mod.computations[ci]
    if ins.opcode == "parameter":
        raise InvalidArgumentError(
            f"{op!r} is a parameter of computation {comp.name!r}: export an "
            "instruction that computes something"
        )
    comp_index = {c.name: i for i, c in enumerate(mod.computations)}
    texts = _split_computations(module_text)
    root_comp = (
        ins.called_computations[0] if ins.opcode == "fusion" and ins.called_computations else None
    )
    needed: set[str] = set()
    stack = [root_comp] if root_comp else list(ins.called_computations)
    while stack:
        c = stack.pop()
        if c in needed:
            continue
        if c not in comp_index or c not in texts:
            raise InvalidArgumentError(
                f"{op!r} calls computation {c!r}, which is not in the module text"
            )
        needed.add(c)
        for i in mod.computations[comp_index[c]].instructions:
            stack.extend(i.called_computations)
    # XLA prints callees before their callers: keep the module's order.
    ordered = sorted((c for c in needed if c != root_comp), key=comp_index.__getitem__)
    parts = [f"HloModule {re.sub(r'[^A-Za-z0-9_.-]', '_', op)}_export", ""] + _preamble(module_text)
    for c in ordered:
        parts += [re.sub(r"^(\s*)ENTRY\s+", r"\1", texts[c], count=1), ""]
    if root_comp is not None:
        first, rest = texts[root_comp].split("\n", 1)
        parts.append("ENTRY " + re.sub(r"^\s*(ENTRY\s+)?", "", first) + "\n" + rest)
    else:
        taken = set(needed) | {
            i.name for c in needed for i in mod.computations[comp_index[c]].instructions
        }
        parts.append(_entry_for_instruction(module_text, mod, ci, ins, taken))
    return "\n".join(parts) + "\n"


def _entry_for_instruction(module_text: str, mod: Any, ci: int, ins: Any, taken: set[str]) -> str:
    # XLA prints operands with their shapes ("add(f32[4]{0} %a, ...)") in older versions and
    # without ("add(%a, %b)", "add(a, b)") in current ones: each parameter takes the shape of
    # the operand's producer in the same computation, printed as XLA printed it.
    texts = _instruction_texts(module_text, mod)
    op = ins.name
    line = texts.get((ci, op))
    if line is None:
        raise InvalidArgumentError(f"cannot find the text of instruction {op!r} in the module")
    shape, opcode, operand_text, tail = _instruction_parts(line)
    operands = list(ins.operands)
    items = _split_top(operand_text)
    if operands and len(items) != len(operands):
        raise InvalidArgumentError(
            f"cannot match the operands of {op!r} ({operand_text[:120]!r}) to "
            f"{len(operands)} parsed operands"
        )

    def fresh(base: str) -> str:
        name, k = base, 0
        while name in taken or name == op:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        return name

    params: list[tuple[str, str]] = []
    for k, (name, item) in enumerate(zip(operands, items)):
        producer = texts.get((ci, name))
        base, hash_, index = name.partition("#")
        if producer is None and hash_ and index.isdigit() and (ci, base) in texts:
            # XLA's tuple-element shorthand "%t#N": element N of the shape %t was printed with.
            tuple_shape = _instruction_parts(texts[(ci, base)])[0].strip()
            element = _tuple_element(tuple_shape, int(index))
            if element is None:
                raise InvalidArgumentError(
                    f"operand {name!r} of {op!r}: {base!r} has shape {tuple_shape!r}, "
                    f"which has no element {index}"
                )
            pshape = element
        elif producer is not None:
            pshape = _instruction_parts(producer)[0]
        else:
            im = re.match(r"^(.*\S)\s+%?[\w.\-]+$", item)
            if not im:
                raise InvalidArgumentError(
                    f"operand {name!r} of {op!r} has no producer in computation "
                    f"{mod.computations[ci].name!r} and no printed shape"
                )
            pshape = im.group(1)
        params.append((fresh(f"p{k}"), pshape))
    args = ", ".join(f"%{n}" for n, _ in params) if operands else operand_text
    entry = fresh("main")
    sig = ", ".join(f"{n}: {s}" for n, s in params)
    body = [f"  %{n} = {s} parameter({k})" for k, (n, s) in enumerate(params)]
    body.append(f"  ROOT %{op} = {shape} {opcode}({args}){_CONTROL_PREDECESSORS.sub('', tail)}")
    return f"ENTRY %{entry} ({sig}) -> {shape} {{\n" + "\n".join(body) + "\n}"


def _holds_instruction(text: str, op: str) -> bool:
    return re.search(r"^\s*(?:ROOT\s+)?%?" + re.escape(op) + r"\s*=", text, re.M) is not None


class HloText(str):
    """The exported module's text (a str), shown in a REPL as one line: what was written where."""

    path = ""
    op = ""
    dataflow_paths: list[str] = []  # the op's dataflow graph files (api.fpga.export_hlo)

    def __repr__(self) -> str:
        return (
            f"<HLO module for op {self.op!r}: {self.count(chr(10)) + 1} lines, "
            f"{len(self)} characters, written to {self.path}>"
        )


_INSTRUCTION_NAME = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=", re.M)


def _near_names(texts: list, op: str) -> list[str]:
    names = sorted({m.group(1) for _n, _p, t in texts for m in _INSTRUCTION_NAME.finditer(t)})
    return difflib.get_close_matches(op, names, n=3, cutoff=0.6)


def export_hlo(
    store: Any, op: str, path: str | os.PathLike, module: str | int | None = None
) -> HloText:
    """Writes the HLO of op ``op`` (from the store's optimized modules) as a standalone module to
    ``path`` (atomically) and returns the text (an ``HloText``: a str whose repr is one line
    saying what was written where). When several different modules hold an instruction of that
    name, ``module`` (a module name or program id) picks one; without it that raises
    InvalidArgumentError listing them."""
    if not os.fspath(path):
        raise InvalidArgumentError(
            f"export_hlo({op!r}, ''): the path is empty; give a file path such as "
            f"'{re.sub(r'[^A-Za-z0-9_.-]', '_', str(op))}.hlo'"
        )
    texts = core.analysis.hlo_module_texts(store)
    if not texts:
        raise InvalidArgumentError(
            "this trace holds no HLO modules: trace a jitted JAX function "
            "(fpgaprof enables the XLA dump)"
        )
    names = sorted({name for name, _pid, _t in texts})
    if module is not None:
        chosen = [t for t in texts if t[0] == module or str(t[1]) == str(module)]
        if not chosen:
            raise InvalidArgumentError(
                f"module={module!r} is not in the trace: use one of {', '.join(names)} "
                "or a program id"
            )
    else:
        chosen = list(texts)
    holders = [t for t in chosen if _holds_instruction(t[2], op)]
    if not holders:
        where = f"module {module!r}" if module is not None else "the trace's HLO modules"
        near = _near_names(chosen, op)
        hint = f"did you mean {', '.join(repr(n) for n in near)}? " if near else ""
        listed = ", ".join(names[:8]) + (f", ... ({len(names)} in all)" if len(names) > 8 else "")
        raise InvalidArgumentError(
            f"op {op!r} is not in {where}: {hint}pass an instruction name from prof.ops (ops "
            f"with GPU time) or from the modules in prof.hlo_modules ({listed})"
        )
    outs: dict[str, list[str]] = {}
    for name, pid, text in holders:
        outs.setdefault(hlo_module_for_op(text, op), []).append(f"{name} (program id {pid})")
    if len(outs) > 1:
        listed = "; ".join(", ".join(v) for v in outs.values())
        # one jitted function compiled twice (new shapes, a sweep) gives modules of one name:
        # only the program id tells them apart
        group_names = [
            {name for name, pid, _t in holders if f"{name} (program id {pid})" in v}
            for v in outs.values()
        ]
        shared = set.intersection(*group_names)
        how = (
            f"pass module=<program id> (the name {sorted(shared)[0]!r} is the same for "
            "them: each is a compilation of it; prof.ops rows carry the op's program_id)"
            if shared
            else "pass module=<name or program id>"
        )
        raise InvalidArgumentError(
            f"op {op!r} is in {len(outs)} different modules ({listed}): {how}"
        )
    out = HloText(next(iter(outs)))
    write_text_atomic(path, out)
    out.path, out.op = os.fspath(path), op
    return out
