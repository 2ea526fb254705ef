"""XLA's tuple-element shorthand (`%t#N` for element N of tuple-shaped %t, printed since 2025 in
place of get-tuple-element instructions) on real HLO: the modules in tests/data/hlo/h100_jax0.11_*
were dumped by JAX 0.11.2 on an NVIDIA H100 while fpgaprof traced MBIRJAX 0.6.17.1's parallel-beam
forward and back projection (n = 128; examples/mbirjax_forward.py, 2026-11-22). fpgaprof 0.1.0
before this support could not parse them and lost every cost of those modules.

Expected values are independent of the parser's handling of the shorthand: the same text is
rewritten here, by regular expressions, into explicit get-tuple-element instructions (what the
shorthand means), and both must cost the same, instruction by instruction and in total."""
import glob
import os
import re

import pytest

from fpgaprof import fpga, hlo

from fpgaprof.base.core import core

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "hlo")
FILES = sorted(glob.glob(os.path.join(DATA, "h100_jax0.11_*.txt")))
_TOKEN = re.compile(r"%([\w.\-]+)#(\d+)")


def _tuple_elements(shape: str) -> list[str]:
    assert shape.startswith("(") and shape.endswith(")"), shape
    out, depth, cur = [], 0, ""
    for ch in shape[1:-1]:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [re.sub(r"^/\*index=\d+\*/\s*", "", e) for e in out]


def _shape_after_equals(line: str) -> str:
    rest = line.split("=", 1)[1].lstrip()
    if not rest.startswith("("):
        return rest.split(None, 1)[0]
    depth = 0
    for i, ch in enumerate(rest):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return rest[:i + 1]
    raise AssertionError(line)


def explicit_gte(text: str) -> str:
    """The module with every `%t#N` replaced by a get-tuple-element inserted after %t."""
    lines = text.split("\n")
    out: list[str] = []
    comp: list[str] = []

    def flush() -> None:
        wanted = sorted({(m.group(1), int(m.group(2))) for ln in comp for m in _TOKEN.finditer(ln)})
        defs = {}
        for i, ln in enumerate(comp):
            m = re.match(r"^\s*(?:ROOT\s+)?%([\w.\-]+)\s*=", ln)
            if m:
                defs[m.group(1)] = i
        extra: dict[int, list[str]] = {}
        for base, k in wanted:
            i = defs[base]
            elem = _tuple_elements(_shape_after_equals(comp[i]))[k]
            extra.setdefault(i, []).append(f"  %{base}.gte{k} = {elem} get-tuple-element(%{base}), index={k}")
        for i, ln in enumerate(comp):
            out.append(_TOKEN.sub(lambda m: f"%{m.group(1)}.gte{m.group(2)}", ln))
            out.extend(extra.get(i, []))
        comp.clear()

    for ln in lines:
        comp.append(ln)
        if ln.startswith("}"):
            flush()
    flush()
    return "\n".join(out)


def test_the_real_modules_are_here_and_use_the_shorthand():
    assert len(FILES) == 3
    for f in FILES:
        body = open(f).read().split("\n", 1)[1]
        assert _TOKEN.search(body), f


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_shorthand_costs_what_explicit_get_tuple_element_costs(path):
    text = open(path).read()
    rewritten = explicit_gte(text)
    assert "#" not in re.sub(r'"[^"]*"', "", rewritten.split("\n", 1)[1]).replace("/*index=", "")
    short, expl = core.hlo.analyze(text), core.hlo.analyze(rewritten)
    for q in ("flops", "transcendentals", "bytes_read", "bytes_written"):
        assert getattr(short.total, q) == getattr(expl.total, q), q
    assert short.total.bytes_read > 0
    costs = {}
    for c in expl.computations:
        for i in c.instructions:
            costs[(c.name, i.name)] = i.cost
    compared = 0
    for c in short.computations:
        for i in c.instructions:
            if "#" in i.name:
                assert i.opcode == "get-tuple-element" and i.line == 0
                continue
            e = costs[(c.name, i.name)]
            assert (i.cost.flops, i.cost.bytes_read, i.cost.bytes_written) == \
                (e.flops, e.bytes_read, e.bytes_written), (c.name, i.name)
            compared += 1
    assert compared > 20 or "broadcast" in path


def test_broadcast_arrays_by_hand():
    # ENTRY: two s32[12644] parameters, a tuple of them, copy(%tuple#0), copy(%tuple#1), a tuple.
    # Each copy reads and writes 12644 x 4 = 50,576 B; each tuple writes its table of two 8-byte
    # pointers (XLA's HloCostAnalysis convention, docs/cost-model.md); parameters cost nothing.
    m = hlo.analyze(open(os.path.join(DATA, "h100_jax0.11_jit__broadcast_arrays.35804.txt")).read())
    assert m.flops == 0
    assert m.bytes_read == 2 * 50576 and m.bytes_written == 2 * 50576 + 2 * 16


def test_export_of_an_instruction_with_a_shorthand_operand(tmp_path):
    text = open(os.path.join(DATA, "h100_jax0.11_jit__broadcast_arrays.35804.txt")).read()
    out = fpga.hlo_module_for_op(text, "copy.3")
    assert "%p0 = s32[12644]{0} parameter(0)" in out
    assert "ROOT %copy.3 = s32[12644]{0} copy(%p0)" in out
    m = hlo.analyze(out)
    assert m.bytes_read == 50576 and m.bytes_written == 50576


def test_export_refuses_an_element_the_tuple_lacks():
    text = ("HloModule m\n\nENTRY %e (a: f32[2]) -> f32[2] {\n  %a = f32[2]{0} parameter(0)\n"
            "  %t = (f32[2]{0}) tuple(%a)\n  ROOT %c = f32[2]{0} copy(%t#0)\n}\n")
    assert "copy(%p0)" in fpga.hlo_module_for_op(text, "c")
    bad = text.replace("%t#0", "%t#3")
    with pytest.raises(Exception, match=r"'t#3' to name an element of a tuple-shaped instruction \('t' has 1 elements\)"):
        fpga.hlo_module_for_op(bad, "c")


# ---- the shorthand spelled out for parsers that predate it (XProf export through jaxlib) -----

def test_without_tuple_shorthand_by_hand():
    from fpgaprof.analysis.hlo_export import without_tuple_shorthand

    text = ("HloModule m\n\nENTRY %e (a: f32[2], b: s32[3]) -> f32[2] {\n"
            "  %a = f32[2]{0} parameter(0)\n  %b = s32[3]{0} parameter(1)\n"
            "  %t = (f32[2]{0}, /*index=1*/s32[3]{0}) tuple(%a, %b)\n"
            "  %t.element_1 = s32[3]{0} copy(%b)\n"
            "  %c = s32[3]{0} add(%t#1, %t#1), metadata={op_name=\"x#1\"}\n"
            "  ROOT %d = f32[2]{0} copy(%t#0)\n}\n")
    want = ("HloModule m\n\nENTRY %e (a: f32[2], b: s32[3]) -> f32[2] {\n"
            "  %a = f32[2]{0} parameter(0)\n  %b = s32[3]{0} parameter(1)\n"
            "  %t = (f32[2]{0}, /*index=1*/s32[3]{0}) tuple(%a, %b)\n"
            # element 1's own name is taken by an instruction of the module: one more "_"
            "  %t.element_1_ = s32[3]{0} get-tuple-element(%t), index=1\n"
            "  %t.element_0 = f32[2]{0} get-tuple-element(%t), index=0\n"
            "  %t.element_1 = s32[3]{0} copy(%b)\n"
            "  %c = s32[3]{0} add(%t.element_1_, %t.element_1_), metadata={op_name=\"x#1\"}\n"
            "  ROOT %d = f32[2]{0} copy(%t.element_0)\n}\n")
    assert without_tuple_shorthand(text) == want
    plain = text.replace("%t#1", "%t.element_1").replace("%t#0", "%a")
    assert without_tuple_shorthand(plain) == plain
    with pytest.raises(Exception, match=r"%t#5: %t has shape .*without element 5"):
        without_tuple_shorthand(text.replace("%t#0", "%t#5"))
    with pytest.raises(Exception, match=r"%u#0: no instruction %u in its computation"):
        without_tuple_shorthand(text.replace("%t#0", "%u#0"))


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_xla_reads_the_spelled_out_module_and_costs_it_as_fpgaprof(path):
    """jaxlib's own parser refuses the real H100 modules (its XLA predates the shorthand) and
    reads them spelled out; XLA's HloCostAnalysis of that text equals fpgaprof's cost of the
    original (float32 sums in XLA: 1e-5)."""
    pytest.importorskip("jax")
    import jax
    from jax._src import lib

    from fpgaprof.analysis.hlo import xla_hlo_bindings
    from fpgaprof.analysis.hlo_export import without_tuple_shorthand

    text = open(path).read()
    xla = xla_hlo_bindings()
    with pytest.raises(Exception, match="parse"):
        xla.hlo_module_from_text(text)
    module = xla.hlo_module_from_text(without_tuple_shorthand(text))
    cost = lib._jax.hlo_module_cost_analysis(jax.devices("cpu")[0].client, module)
    mine = hlo.analyze(text)
    assert mine.flops == pytest.approx(float(cost.get("flops", 0.0)), rel=1e-5)
    assert mine.bytes_read + mine.bytes_written == \
        pytest.approx(float(cost.get("bytes accessed", 0.0)), rel=1e-5)
