"""fpgaprof.hlo Python API: module / instruction views, attribution fields, parse errors."""
import threading

import pytest

import fpgaprof

# Hand-written module; expected numbers worked out in the comments.
TEXT = """HloModule jit_g, is_scheduled=true

FileNames
1 "/src/user.py"

FunctionNames
1 "g"

FileLocations
1 {file_name_id=1 function_name_id=1 line=42 end_line=42 column=8 end_column=20}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

%fused (p0: f32[128,64], p1: f32[64,32]) -> f32[128,32] {
  %p0 = f32[128,64]{1,0} parameter(0)
  %p1 = f32[64,32]{1,0} parameter(1)
  %d = f32[128,32]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(g)/dot_general" stack_frame_id=1}
  ROOT %t = f32[128,32]{1,0} tanh(%d), metadata={op_name="jit(g)/tanh" stack_frame_id=1}
}

ENTRY %main (a: f32[128,64], b: f32[64,32]) -> f32[128,32] {
  %a = f32[128,64]{1,0} parameter(0)
  %b = f32[64,32]{1,0} parameter(1)
  ROOT %f = f32[128,32]{1,0} fusion(%a, %b), kind=kOutput, calls=%fused, metadata={op_name="jit(g)/tanh" stack_frame_id=1}
}
"""


def test_module_totals_and_instruction_fields():
    m = fpgaprof.hlo.analyze(TEXT)
    assert m.name == "jit_g"
    # dot: 2 * 128*32 * 64 = 524288 flops; tanh: 4096 transcendentals
    assert m.flops == 524288
    assert m.transcendentals == 4096
    # boundary bytes: a 32768 + b 8192 read, 16384 written
    assert m.bytes_accessed == 32768 + 8192 + 16384
    names = [i.name for i in m.instructions]
    assert names == ["a", "b", "f"]
    f = m.instructions[2]
    assert f.opcode == "fusion" and f.fusion_kind == "kOutput"
    assert (f.bytes_read, f.bytes_written, f.output_bytes) == (40960, 16384, 16384)
    assert f.working_set_bytes == 16384
    assert f.pattern == "dot"
    assert f.op_name == "jit(g)/tanh"
    assert (f.source_file, f.source_line) == ("/src/user.py", 42)
    assert f.computation == "main"
    assert [c.name for c in f.called()] == ["fused"]
    inner = {i.name: i for i in m.computation("fused").instructions}
    assert inner["d"].flops == 524288 and inner["d"].computation == "fused"
    assert m.instruction("t").transcendentals == 4096
    assert len(list(m.all_instructions())) == 7


def test_parse_error_has_line_column_text():
    bad = "HloModule m\nENTRY e {\n  x = f32[2]{0} parameter(0)\n  ROOT y = f32[2]{0} frobnicate(x\n}\n"
    with pytest.raises(fpgaprof.HloParseError) as info:
        fpgaprof.hlo.analyze(bad)
    err = info.value
    assert isinstance(err, fpgaprof.FpgaprofError)
    assert err.line == 5 and err.column == 1
    assert err.text == "}"
    assert str(err).startswith("line 5, column 1: expected")


def test_garbage_input_raises_parse_error_not_crash():
    for text in ["", "HloModule", "ENTRY {", "HloModule m\nENTRY e {\n", "\x00\xff" * 10]:
        with pytest.raises(fpgaprof.HloParseError):
            fpgaprof.hlo.analyze(text)


def test_analyze_releases_the_gil():
    big = TEXT.replace("ENTRY %main", "%unused") + TEXT[TEXT.index("ENTRY"):]
    results = []

    def work():
        results.append(fpgaprof.hlo.analyze(big).flops)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [524288] * 4
