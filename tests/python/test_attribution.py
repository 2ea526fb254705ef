"""Attribution through the Python package: stores built from records (correlated by the real
correlate()) with a real optimized HLO module from CPU JAX, the dump -> store path, and the
summary section."""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap

import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

import fpgaprof  # noqa: E402
from fpgaprof.base.core import core  # noqa: E402
from fpgaprof.analysis import attribution  # noqa: E402
from fpgaprof.views.profile import hlo_op_lines  # noqa: E402

SRC_FILE = os.path.abspath(__file__)


def scaled_sine(x, y):
    return jnp.sin(x) * y + 1.0  # the fused op's source line (looked up with inspect below)


def _line_of_body(fn) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + 1  # one-line body right below the def


def _compiled(fn, *args):
    c = jax.jit(fn).lower(*args).compile()
    ca = c.cost_analysis()
    if isinstance(ca, (list, tuple)):
        ca = ca[0]
    return c.as_text(), ca


def _entry_fusions(hlo_text: str) -> list[str]:
    m = fpgaprof.hlo.analyze(hlo_text)
    return [i.name for i in m.instructions if i.opcode == "fusion"]


def _store_with_launches(kernels: list[tuple[str, int, int, int]],
                         ranges: list[tuple[str, int, int]]) -> "core.TraceStore":
    """kernels: (name, launch_ns, start_ns, duration_ns), launched from thread 77;
    ranges: (name, start_ns, end_ns) NVTX ranges on thread 77 (domain TSL)."""
    s = core.TraceStore()
    for name, start, end in ranges:
        s.append("markers", name=name, domain="TSL", start_ns=start, end_ns=end, thread_id=77)
    for i, (name, launch, start, dur) in enumerate(kernels):
        cid = 100 + i
        s.append("api_calls", start_ns=launch, end_ns=launch + 5, correlation_id=cid,
                 thread_id=77, name="cuLaunchKernel", kind="driver")
        s.append("kernels", name=name, start_ns=start, end_ns=start + dur, correlation_id=cid,
                 stream_id=7)
    s.correlate()
    return s


def test_thunk_ranges_attribute_kernels_to_a_real_module():
    x = jnp.ones((512,), jnp.float32)
    text, ca = _compiled(scaled_sine, x, x)
    fusions = _entry_fusions(text)
    assert len(fusions) == 1  # XLA fuses sin, mul, add into one loop fusion
    op = fusions[0]
    kname = core.attribution.sanitize_kernel_name(op)
    module_name = fpgaprof.hlo.analyze(text).name

    # two executions of the module; the second kernel runs after its launch range closed
    ranges = [
        (f"XlaModule:#prefix=jit(scaled_sine),hlo_module={module_name},program_id=41#", 1000, 2000),
        (f"Thunk:#name=add,hlo_op={op}#", 1100, 1200),
        (f"XlaModule:#hlo_module={module_name},program_id=41#", 3000, 4000),
        (f"Thunk:#hlo_op={op},unique_hlo_op_id=3#", 3100, 3200),
    ]
    kernels = [(kname, 1150, 1300, 400), (kname, 3150, 3500, 600), ("stray_kernel", 5000, 5100, 50)]
    s = _store_with_launches(kernels, ranges)
    s.add_hlo_module(module_name, 41, text)

    r = attribution.attribute(s)
    k0, k1, k2 = r.kernels
    assert (k0.method, k1.method, k2.method) == ("nvtx_thunk", "nvtx_thunk", "unattributed")
    assert k0.hlo_op == op and k0.module_name == module_name and k0.program_id == 41
    assert k0.category == "fusion:kLoop"
    assert k0.source_file == SRC_FILE
    assert k0.source_line == _line_of_body(scaled_sine)
    assert len(r.ops) == 1
    o = r.ops[0]
    assert (o.kernel_count, o.executions, o.total_ns, o.mean_ns) == (2, 2, 1000, 500)
    # one fusion is the whole module: its static cost is XLA's module cost
    assert o.flops == pytest.approx(ca["flops"])
    assert o.bytes_accessed == pytest.approx(ca["bytes accessed"])
    assert o.transcendentals == pytest.approx(ca["transcendentals"])
    assert (r.unattributed_count, r.unattributed_ns) == (1, 50)
    assert r.unattributed[0].name == "stray_kernel"
    assert r.count_by_method == {"unattributed": 1, "nvtx_thunk": 2, "kernel_name": 0, "library": 0}
    # Compact form: both executions share one site; the stray kernel has its own.
    assert len(r.kernels.sites) == 2
    assert list(r.kernels.site_index) == [0, 0, 1]
    assert r.op_of_site == [0, 0xFFFFFFFF]
    cols = attribution.kernel_columns(r)
    assert list(cols["hlo_op"]) == [op, op, ""]
    assert list(cols["source_line"]) == [_line_of_body(scaled_sine)] * 2 + [-1]
    assert list(cols["method"]) == ["nvtx_thunk", "nvtx_thunk", "unattributed"]
    only = attribution.kernel_columns(r, ["hlo_op", "no_such_column"])  # only what is asked
    assert list(only) == ["hlo_op"]
    assert list(only["hlo_op"]) == [op, op, ""]

    lines = hlo_op_lines(r)
    assert lines[0].startswith("HLO ops (top 1 of 1 by GPU time; 95.2% of kernel time")  # 1000/1050
    assert any(op in ln and f":{_line_of_body(scaled_sine)}" in ln for ln in lines)
    assert any("stray_kernel" in ln for ln in lines)


def test_kernel_name_fallback_survives_save_and_load(tmp_path):
    x = jnp.ones((64,), jnp.float32)
    text, _ = _compiled(scaled_sine, x, x)
    op = _entry_fusions(text)[0]
    kname = core.attribution.sanitize_kernel_name(op)
    s = _store_with_launches([(kname, 10, 20, 30)], [])
    s.add_hlo_module("jit_scaled_sine", 5, text)
    path = str(tmp_path / "t.fpgaprof")
    s.save(path)
    loaded = core.TraceStore.load(path)
    assert [m.name for m in loaded.hlo_modules] == ["jit_scaled_sine"]
    loaded.correlate()
    r = attribution.attribute(loaded)
    assert r.kernels[0].method == "kernel_name"
    assert r.kernels[0].hlo_op == op
    assert r.kernels[0].source_line == _line_of_body(scaled_sine)


def test_unparsable_module_is_a_warning_not_an_error():
    s = _store_with_launches([("fusion_1", 10, 20, 30)],
                             [("XlaModule:#hlo_module=bad,program_id=2#", 0, 100),
                              ("Thunk:#hlo_op=fusion.1#", 5, 15)])
    s.add_hlo_module("bad", 2, "HloModule bad\nENTRY %e { garbage")
    r = attribution.attribute(s)
    assert r.kernels[0].method == "nvtx_thunk" and r.kernels[0].hlo_op == "fusion.1"
    assert r.kernels[0].module_name == "bad"
    assert len(r.warnings) == 1 and "bad" in r.warnings[0]
    assert r.ops[0].has_cost is False


def test_parse_xla_range_name_binding():
    p = core.attribution.parse_xla_range_name
    assert p("XlaModule:#hlo_module=jit_f,program_id=3#") == {
        "kind": "module", "hlo_module": "jit_f", "program_id": 3, "prefix": "", "hlo_op": "",
        "name": "", "unique_hlo_op_id": -1}
    assert p("Thunk:#name=a,b,hlo_op=fusion.2#")["name"] == "a,b"
    assert p("not xla") is None


_ATTACH_SCRIPT = """
import json
import fpgaprof
from fpgaprof.base.core import core
from fpgaprof.capture import hlo_dump, xla_flags
import jax, jax.numpy as jnp

def double_cos(v):
    return jnp.cos(v) * 2.0

v = jnp.ones((1000,), jnp.float32)
jax.jit(double_cos)(v).block_until_ready()
ops = [i.name for i in fpgaprof.hlo.analyze(
    [m for m in xla_flags.read_dumped_modules() if m.name == "jit_double_cos"][0].text
).instructions if i.opcode == "fusion"]
s = core.TraceStore()
s.append("api_calls", start_ns=1, end_ns=2, correlation_id=9, thread_id=3, name="cuLaunchKernel",
         kind="driver")
s.append("kernels", name=core.attribution.sanitize_kernel_name(ops[0]), start_ns=5, end_ns=25,
         correlation_id=9)
s.correlate()
added = hlo_dump.attach_hlo_modules(s)
again = hlo_dump.attach_hlo_modules(s)
r = fpgaprof.analysis.attribution.attribute(s)
print(json.dumps({"added": added, "again": again, "modules": [m.name for m in s.hlo_modules],
                  "method": r.kernels[0].method, "line": r.kernels[0].source_line,
                  "file": r.kernels[0].source_file}))
"""


def test_attach_hlo_modules_reads_this_processes_dump(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(_ATTACH_SCRIPT))
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "FPGAPROF_XLA_DUMP_DIR")}
    env["JAX_PLATFORMS"] = "cpu"
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["added"] == 1 and out["again"] == 0  # only the module holding the kernel
    assert out["modules"] == ["jit_double_cos"]
    assert out["method"] == "kernel_name"
    assert out["file"] == str(script) and out["line"] == 9  # `return jnp.cos(v) * 2.0`


# --- end to end through the libcupti test double -----------------------------------------------

# What XLA would dump for the fake's module: the fake emits
# "XlaModule:#hlo_module=jit_f,program_id=3#" around thunks "Thunk:#hlo_op=fusion.<i%4>,...#",
# each launching kernel "loop_fusion_<i%4>" (a name that matches no instruction, so only the
# thunk ranges can attribute them). Costs by hand: f32[1024] in and out = 8192 bytes per fusion;
# add, multiply, subtract: 1024 flops; exponential: 1024 transcendentals, 0 flops.
_FAKE_MODULE = """HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[1024]{0})->f32[1024]{0}}

%fused_computation.0 (param_0: f32[1024]) -> f32[1024] {
  %param_0 = f32[1024]{0} parameter(0)
  ROOT %add.0 = f32[1024]{0} add(f32[1024]{0} %param_0, f32[1024]{0} %param_0), metadata={op_name="jit(f)/add" source_file="/src/model.py" source_line=10}
}

%fused_computation.1 (param_0.1: f32[1024]) -> f32[1024] {
  %param_0.1 = f32[1024]{0} parameter(0)
  ROOT %multiply.0 = f32[1024]{0} multiply(f32[1024]{0} %param_0.1, f32[1024]{0} %param_0.1), metadata={op_name="jit(f)/mul" source_file="/src/model.py" source_line=11}
}

%fused_computation.2 (param_0.2: f32[1024]) -> f32[1024] {
  %param_0.2 = f32[1024]{0} parameter(0)
  ROOT %exponential.0 = f32[1024]{0} exponential(f32[1024]{0} %param_0.2), metadata={op_name="jit(f)/exp" source_file="/src/model.py" source_line=12}
}

%fused_computation.3 (param_0.3: f32[1024]) -> f32[1024] {
  %param_0.3 = f32[1024]{0} parameter(0)
  ROOT %subtract.0 = f32[1024]{0} subtract(f32[1024]{0} %param_0.3, f32[1024]{0} %param_0.3), metadata={op_name="jit(f)/sub" source_file="/src/model.py" source_line=13}
}

ENTRY %main (p: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0} parameter(0)
  %fusion.0 = f32[1024]{0} fusion(f32[1024]{0} %p), kind=kLoop, calls=%fused_computation.0
  %fusion.1 = f32[1024]{0} fusion(f32[1024]{0} %fusion.0), kind=kLoop, calls=%fused_computation.1
  %fusion.2 = f32[1024]{0} fusion(f32[1024]{0} %fusion.1), kind=kLoop, calls=%fused_computation.2
  ROOT %fusion.3 = f32[1024]{0} fusion(f32[1024]{0} %fusion.2), kind=kLoop, calls=%fused_computation.3
}
"""

_FAKE_CODE = """
import numpy as np
dump = os.environ["FPGAPROF_HLO_DUMP_DIR"]
with open(os.path.join(dump, "other.txt"), "w") as f:
    f.write("not a module")
with fpgaprof.trace() as prof:
    # XLA writes the dump when it compiles, inside the process, before the kernels run
    with open(os.path.join(dump, "module_0003.jit_f.sm_90_gpu_after_optimizations.txt"), "w") as f:
        f.write(MODULE)
    with open(os.path.join(dump, "module_0007.jit_unused.sm_90_gpu_after_optimizations.txt"), "w") as f:
        f.write(MODULE.replace("HloModule jit_f", "HloModule jit_unused"))
    emit()
k = prof.kernels.columns(["name", "start_ns", "end_ns"])
per_name = {}
for n, s, e in zip(k["name"], k["start_ns"], k["end_ns"]):
    per_name[str(n)] = per_name.get(str(n), 0) + int(e) - int(s)
done({
    "modules": [(m.name, m.program_id) for m in prof.hlo_modules],
    "per_name": per_name,
    "ops": [{a: getattr(o, a) for a in ("hlo_op", "module_name", "program_id", "kernel_count",
             "executions", "total_ns", "mean_ns", "flops", "transcendentals", "bytes_accessed",
             "source_file", "source_line", "method", "kernel_names", "category", "op_name")}
            for o in prof.ops],
    "methods": prof.attribution.count_by_method,
    "memcpy_methods": sorted({a.method for a in prof.attribution.memcpys}),
    "command_buffers_disabled": prof.meta["command_buffers_disabled"],
    "summary": prof.summary(),
})
"""


def test_end_to_end_through_fake_cupti(tmp_path):
    from _fake_cupti import run_traced

    dump = tmp_path / "hlo"
    dump.mkdir()
    out = run_traced(f"MODULE = {_FAKE_MODULE!r}\n" + textwrap.dedent(_FAKE_CODE), kernels=40,
                     extra_env={"FPGAPROF_HLO_DUMP_DIR": str(dump), "XLA_FLAGS": ""})
    assert out["command_buffers_disabled"] is True  # fpgaprof's default, XLA_FLAGS was empty
    # only the module the trace's XlaModule range names is kept
    assert out["modules"] == [["jit_f", 3]]
    # 40 kernels: fusion.<i%4> -> 10 each, one thunk range per kernel
    assert out["methods"] == {"unattributed": 0, "nvtx_thunk": 40, "kernel_name": 0, "library": 0}
    ops = {o["hlo_op"]: o for o in out["ops"]}
    assert sorted(ops) == ["fusion.0", "fusion.1", "fusion.2", "fusion.3"]
    expect = {"fusion.0": (1024, 0, 10), "fusion.1": (1024, 0, 11), "fusion.2": (0, 1024, 12),
              "fusion.3": (1024, 0, 13)}
    for name, (flops, trans, line) in expect.items():
        o = ops[name]
        i = int(name[-1])
        assert o["module_name"] == "jit_f" and o["program_id"] == 3
        assert o["kernel_count"] == 10 and o["executions"] == 10
        assert o["kernel_names"] == [f"loop_fusion_{i}"]
        # time per op = the raw kernel records' durations summed by kernel name
        assert o["total_ns"] == out["per_name"][f"loop_fusion_{i}"]
        assert o["mean_ns"] == o["total_ns"] // 10
        assert (o["flops"], o["transcendentals"], o["bytes_accessed"]) == (flops, trans, 8192)
        assert (o["source_file"], o["source_line"]) == ("/src/model.py", line)
        assert o["method"] == "nvtx_thunk" and o["category"] == "fusion:kLoop"
    assert ops["fusion.2"]["op_name"] == "jit(f)/exp"
    # the fake's copies run after the thunk range closed: not attributed to an op
    assert out["memcpy_methods"] == ["unattributed"]
    s = out["summary"]
    assert "HLO ops (top 4 of 4 by GPU time; 100.0% of kernel time attributed: 40 by thunk" in s
    assert "/src/model.py:12" in s


def test_kernel_names_never_land_on_the_parser_s_tuple_element_instructions():
    # MBIRJAX's forward projector as dumped on an H100 (tests/data/hlo): the while body uses
    # %loop_cosine_sine_fusion#1, which the parser turns into a get-tuple-element named
    # "loop_cosine_sine_fusion#1"; sanitised, that is "loop_cosine_sine_fusion_1", the kernel
    # name of the real fusion "loop_cosine_sine_fusion.1" in ENTRY. A kernel of that name must
    # go to the fusion (by name, no thunk ranges), with its cost.
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "data", "hlo",
                        "h100_jax0.11_jit_sparse_forward_project_fcn.21869.txt")
    text = open(path).read()
    assert "%loop_cosine_sine_fusion#1" in text and "%loop_cosine_sine_fusion.1 = " in text
    s = _store_with_launches([("loop_cosine_sine_fusion_1", 10, 20, 30), ("loop_select_fusion_1", 40, 50, 60)], [])
    s.add_hlo_module("jit_sparse_forward_project_fcn", 21869, text)
    r = attribution.attribute(s)
    k0, k1 = r.kernels
    assert (k0.method, k0.hlo_op) == ("kernel_name", "loop_cosine_sine_fusion.1")
    assert (k1.method, k1.hlo_op) == ("kernel_name", "loop_select_fusion.1")
    assert k0.category.startswith("fusion")
    assert all("#" not in o.hlo_op for o in r.ops)


def test_an_op_run_as_several_thunks_in_a_row_is_one_execution():
    # XLA runs a sort as one thunk per pass, each its own kernel. On the saved H100 trace,
    # jit_sort's `fusion` (sort.4.1 of s32[1,12644] keys and values) ran twice, six passes each
    # (sort_4_1, sort_4_1__1, ..., sort_4_1__5, one Thunk range apiece): 12 kernels, 2 executions.
    # MBIRJAX 0.7.3's cone forward projection at 64³ (H200) sorts once in three passes
    # (sort_10_1, sort_10_1__1, sort_10_1__2): 3 kernels, 1 execution.
    here = os.path.join(os.path.dirname(__file__), "..", "data", "traces")
    for trace, module, op, kernels, executions in (
        ("mbirjax_parallel_128_h100", "jit_sort", "fusion", 12, 2),
        ("mbirjax073_cone_64_xla_counters_h200", "jit__sparse_forward_project", "fusion.1", 3, 1),
    ):
        prof = fpgaprof.load(os.path.join(here, trace + ".fpgaprof"))
        (row,) = [o for o in prof.ops if o.module_name == module and o.hlo_op == op]
        assert (row.kernel_count, row.executions, row.timed_executions) == (kernels, executions, executions)
        assert row.mean_ns == pytest.approx(row.total_ns / executions)
