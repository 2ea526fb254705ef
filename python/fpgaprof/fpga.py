"""FPGA offload candidates and the what-if model (docs/fpga-model.md), and HLO export for HLS.

``fpga_candidates(prof, target="alveo-u55c")`` ranks HLO ops by a documented score and
estimates each op's time on the card, the host-link transfer cost and the end-to-end speedup
(Amdahl). Every input of the score is a column of the returned table.
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Mapping

from fpgaprof import _core
from fpgaprof._atomic import write_text_atomic
from fpgaprof.roofline import Table, analyze, _store_of

__all__ = ["FpgaTarget", "presets", "target_spec", "fpga_candidates", "export_hlo", "hlo_module_for_op"]


@dataclasses.dataclass
class FpgaTarget:
    """A user FPGA card. Compute per precision = dsp_count x dsp_utilization / dsps_per_fma x 2 x
    clock_hz; memory = hbm_bytes_per_s x hbm_efficiency; link = link_bytes_per_s x
    link_efficiency. ``base`` starts from a preset and overrides the fields given."""

    name: str = "user"
    base: str | None = None
    hbm_bytes_per_s: float | None = None
    hbm_efficiency: float | None = None
    sram_bytes: float | None = None
    dsp_count: int | None = None
    clock_hz: float | None = None
    dsp_utilization: float | None = None
    dsps_per_fma_fp64: float | None = None
    dsps_per_fma_fp32: float | None = None
    dsps_per_fma_fp16: float | None = None
    link_bytes_per_s: float | None = None
    link_efficiency: float | None = None
    call_latency_s: float | None = None
    transfer_latency_s: float | None = None
    description: str | None = None


def presets() -> list[dict]:
    """The built-in cards (alveo-u55c, alveo-u280, versal-v80) with derived compute rates."""
    return _core.analysis.fpga_presets()


def target_spec(target: str | Mapping | FpgaTarget) -> str | dict:
    """A preset name, or a dict the core accepts (None fields dropped)."""
    if isinstance(target, str):
        names = [p["name"] for p in presets()]
        if target not in names:
            raise ValueError(f"unknown FPGA target {target!r}: use one of {', '.join(names)} "
                             "or pass fpgaprof.fpga.FpgaTarget(...)")
        return target
    if dataclasses.is_dataclass(target):
        target = dataclasses.asdict(target)
    return {k: v for k, v in dict(target).items() if v is not None}


def fpga_candidates(prof: Any, target: str | Mapping | FpgaTarget = "alveo-u55c", *,
                    inputs_cross_link: bool = True, workload_s: float | None = None,
                    **kwargs: Any) -> Table:
    """HLO ops ranked by FPGA offload score, best first. Columns: rank, op, module, source,
    pattern, precision, executions, gpu_time_ns, time_share, intensity, ridge,
    memory_boundness, pattern_affinity, working_set_bytes, sram_bytes, fits_on_chip,
    onchip_factor, host_bytes_per_call, link_factor, score, and the what-if: card_compute_s,
    card_memory_s, card_latency_s, card_time_s, transfer_bytes, transfer_s, fpga_total_s,
    op_speedup, workload_speedup. ``Table.meta`` holds the target and the combined speedup."""
    res = analyze(prof, target=target, inputs_cross_link=inputs_cross_link, workload_s=workload_s, **kwargs)
    f = res["fpga"]
    t = Table(f["candidates"])
    t.meta = {k: v for k, v in f.items() if k != "candidates"}  # type: ignore[attr-defined]
    return t


# --- HLO export --------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*(ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")
_CALLS = re.compile(r"\b(?:calls|to_apply|body|condition|branch_computations|called_computations)="
                    r"\{?([^,}\s][^}]*?)\}?(?=,\s*\w+=|\s*$|,\s*metadata)")
_NAME = re.compile(r"%?([\w.\-]+)")


def _split_computations(text: str) -> tuple[dict[str, str], str | None]:
    comps: dict[str, str] = {}
    entry = None
    cur: list[str] | None = None
    name = None
    for line in text.splitlines():
        if cur is None:
            m = _HEADER.match(line)
            if m:
                name = m.group(2)
                if m.group(1):
                    entry = name
                cur = [line]
        else:
            cur.append(line)
            if line.strip() == "}":
                comps[name] = "\n".join(cur)  # type: ignore[index]
                cur = None
    return comps, entry


def _called(body: str) -> list[str]:
    out = []
    for line in body.splitlines()[1:]:
        for m in _CALLS.finditer(line):
            for part in m.group(1).split(","):
                n = _NAME.search(part.strip())
                if n:
                    out.append(n.group(1))
    return out


def _instruction_line(body: str, op: str) -> str | None:
    pat = re.compile(r"^\s*(ROOT\s+)?%?" + re.escape(op) + r"\s*=\s*(.*)$")
    for line in body.splitlines():
        m = pat.match(line)
        if m:
            return m.group(2)
    return None


def hlo_module_for_op(module_text: str, op: str) -> str:
    """A standalone HLO module computing one instruction of ``module_text``: a fusion's fused
    computation becomes the entry (its parameters kept); any other instruction gets an entry
    whose parameters are its operands. Called computations are copied along. Raises
    ValueError when ``op`` is not in the module."""
    comps, entry = _split_computations(module_text)
    line = None
    for body in comps.values():
        line = _instruction_line(body, op)
        if line is not None:
            break
    if line is None:
        raise ValueError(f"instruction {op!r} is not in the module: pass an HLO op name from prof.ops")
    needed: list[str] = []
    root_comp = None
    m = re.search(r"\bfusion\(", line)
    calls = re.search(r"\bcalls=%?([\w.\-]+)", line)
    if m and calls:
        root_comp = calls.group(1)
        stack = [root_comp]
    else:
        stack = list(_called(" \n" + line))
    while stack:
        c = stack.pop()
        if c in needed or c not in comps:
            continue
        needed.append(c)
        stack.extend(_called(comps[c]))
    parts = [f"HloModule {re.sub(r'[^A-Za-z0-9_.-]', '_', op)}_export", ""]
    for c in reversed(needed):
        if c == root_comp:
            continue
        parts += [comps[c].replace("ENTRY ", "", 1) if c == entry else comps[c], ""]
    if root_comp is not None:
        body = comps[root_comp]
        first, rest = body.split("\n", 1)
        parts.append("ENTRY " + first.lstrip() + "\n" + rest)
    else:
        parts.append(_entry_for_instruction(line, op))
    return "\n".join(parts) + "\n"


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


def _entry_for_instruction(line: str, op: str) -> str:
    # line: "<shape> opcode(<typed operands>), attrs..." as XLA prints it (operands with shapes).
    m = re.match(r"^(.*?)\s+([\w\-]+)\((.*?)\)(.*)$", line)
    if not m:
        raise ValueError(f"cannot read the instruction {op!r}: {line[:120]}")
    shape, opcode, operands, tail = m.groups()
    params, args = [], []
    for i, operand in enumerate(_split_top(operands)):
        om = re.match(r"^(.*\S)\s+%?([\w.\-]+)$", operand)
        if not om:
            raise ValueError(f"operand {operand!r} of {op!r} has no shape: cannot build parameters")
        params.append((f"p{i}", om.group(1)))
        args.append(f"%p{i}")
    sig = ", ".join(f"p{i}: {s}" for i, (_, s) in enumerate(params))
    body = [f"  %p{i} = {s} parameter({i})" for i, (_, s) in enumerate(params)]
    body.append(f"  ROOT %{op} = {shape} {opcode}({', '.join(args)}){tail}")
    return f"ENTRY %main ({sig}) -> {shape} {{\n" + "\n".join(body) + "\n}"


def export_hlo(prof: Any, op: str, path: str | os.PathLike, module: str | None = None) -> str:
    """Writes the HLO of op ``op`` (from the trace's optimized modules; ``module`` picks one when
    several hold that name) as a standalone module to ``path`` (atomically) and returns the text."""
    texts = _core.analysis.hlo_module_texts(_store_of(prof))
    if not texts:
        raise ValueError("this trace holds no HLO modules: trace a jitted JAX function (XLA dump enabled)")
    last: Exception | None = None
    for name, _pid, text in texts:
        if module is not None and name != module:
            continue
        try:
            out = hlo_module_for_op(text, op)
        except ValueError as e:
            last = e
            continue
        write_text_atomic(path, out)
        return out
    raise ValueError(f"op {op!r} not found in the trace's HLO modules" + (f" ({last})" if last else ""))
