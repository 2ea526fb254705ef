"""XLA's buffer assignment on a real CPU dump: captured with the module, kept in the trace,
analysed (peak over the schedule, what is live at it, each op's on-chip need), shown by
prof.memory_report(by="module"), in report.html (memory view, dataflow graphs with and
without Graphviz, checked in headless Chromium) and next to an exported op's HLO.

The traced function and its hand-worked sizes (f32[256,256] = 256 x 256 x 4 = 262,144 bytes =
S, f32[256] = 1,024 bytes, f32[8,256] = 8,192 bytes):

    def f(a, b):
        c = jnp.tanh(a @ b)                      # dot, then tanh in place: one S buffer
        return (c * 2.0 + a).sum(axis=0), c      # the sum: f32[256]

A value counts at every schedule position of its live range, both ends included; values
sharing a buffer (the dot's result and tanh, in place) count once. XLA compiles the sum two
ways, and the test works out both:

- one reduce fusion reading a and tanh's result (jax 0.10.2's XLA): a, b (2 S) live
  throughout, the dot/tanh buffer from the dot on, the f32[256] sum from the reduce on. Peak
  3 S + 1,024 = 787,456 bytes at the reduce; XLA's own live-range dump lists the same.
- `c * 2 + a` materialised as a temporary S, reduced to f32[8,256] partial sums, then to
  f32[256] (jax 0.10.1's XLA, as in CI): at the partial reduce a, b, tanh, the temporary (4 S),
  the partials (8,192) and the f32[] zero constant (4): 1,056,772 bytes. XLA's own dump, which
  stops counting a value at its last use, lists 1,048,580 at the step before.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

import fpgaprof
from fpgaprof.analysis import dataflow
from fpgaprof.report import html as H
from fpgaprof.report import model

HERE = os.path.dirname(os.path.abspath(__file__))
OLD_TRACE = os.path.join(HERE, "..", "data", "traces", "mbirjax_parallel_64_counters_h100.fpgaprof")

F32_256x256 = 256 * 256 * 4
F32_256 = 256 * 4

SCRIPT = textwrap.dedent(
    """\
    import sys
    import fpgaprof
    import jax, jax.numpy as jnp

    def f(a, b):
        c = jnp.tanh(a @ b)
        return (c * 2.0 + a).sum(axis=0), c

    a = jnp.ones((256, 256), jnp.float32)
    b = jnp.full((256, 256), 0.5, jnp.float32)
    with fpgaprof.trace(path=sys.argv[1]):
        jax.jit(f)(a, b)[0].block_until_ready()
    """
)
TANH_LINE = 6
SUM_LINE = 7


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    d = tmp_path_factory.mktemp("bufs")
    script = d / "traced_f.py"
    script.write_text(SCRIPT)
    trace = d / "f.fpgaprof"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("XLA_FLAGS", "FPGAPROF_XLA_DUMP_DIR", "FPGAPROF_HLO_DUMP_DIR")
    }
    env["JAX_PLATFORMS"] = "cpu"
    r = subprocess.run(
        [sys.executable, str(script), str(trace)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return str(script), str(trace)


def _module(prof, name="jit_f"):
    mods = [m for m in prof.hlo_modules if m.name == name]
    assert len(mods) == 1, [m.name for m in prof.hlo_modules]
    return mods[0]


def test_the_trace_keeps_the_buffer_assignment(traced):
    _, trace = traced
    m = _module(fpgaprof.load(trace))
    # only the allocations are kept: not the module XLA prints before them
    assert m.buffer_assignment.startswith("BufferAssignment:\nallocation ")
    assert "HloModule" not in m.buffer_assignment
    assert m.live_ranges.startswith("HloLiveRange (max ")
    assert m.text.startswith("HloModule jit_f")


def _splits_the_reduce(text):
    """XLA reduced to f32[8,256] partial sums first (jax 0.10.1's CPU compiler)."""
    return "f32[8,256]{1,0} fusion(" in text


def test_peak_and_live_at_peak_by_hand(traced):
    script, trace = traced
    prof = fpgaprof.load(trace)
    rep = prof.memory_report(by="module")
    row = next(r for r in rep["modules"] if r["module"] == "jit_f")
    live = rep["live_at_peak"]["jit_f"]
    assert row["peak_source"] == "xla live ranges"
    assert row["parameter_bytes"] == 2 * F32_256x256
    assert row["output_bytes"] == F32_256x256 + F32_256
    tanh = next(b for b in live if b["op_name"].endswith("tanh"))
    assert tanh["source"] == f"{script}:{TANH_LINE}"
    assert tanh["shape"].startswith("f32[256,256]")
    assert tanh["kind"] == "output"
    if _splits_the_reduce(_module(prof).text):
        assert row["peak_bytes"] == 4 * F32_256x256 + 8 * 256 * 4 + 4 == 1_056_772
        assert row["xla_peak_bytes"] == 4 * F32_256x256 + 4 == 1_048_580
        assert row["temporary_bytes"] == F32_256x256 + 8 * 256 * 4
        assert row["constant_bytes"] == 4
        assert [b["size_bytes"] for b in live] == [F32_256x256] * 4 + [8192, 4]
        kinds = sorted(b["kind"] for b in live)
        assert kinds == ["constant", "output", "parameter", "parameter", "temporary", "temporary"]
        partial = next(b for b in live if b["size_bytes"] == 8192)
        assert row["peak_instruction"] == partial["producer"]  # the partial reduce
        tmp = next(b for b in live if b["kind"] == "temporary" and b["size_bytes"] == F32_256x256)
        assert tmp["source"] == f"{script}:{SUM_LINE}"  # c * 2.0 + a
    else:
        assert row["peak_bytes"] == 3 * F32_256x256 + F32_256 == 787_456
        assert row["xla_peak_bytes"] == 787_456
        assert row["temporary_bytes"] == 0 and row["constant_bytes"] == 0
        assert [b["size_bytes"] for b in live] == [F32_256x256] * 3 + [F32_256]
        kinds = sorted(b["kind"] for b in live)
        assert kinds == ["output", "output", "parameter", "parameter"]
        total = next(b for b in live if b["size_bytes"] == F32_256)
        assert total["op_name"].endswith("reduce_sum")
        assert total["source"] == f"{script}:{SUM_LINE}"
        assert row["peak_instruction"] == total["producer"]  # the reduce
    tl = rep["timeline"]["jit_f"]
    assert max(tl["live_bytes"]) == row["peak_bytes"]
    assert tl["live_bytes"][0] == 2 * F32_256x256  # the parameters alone at the start
    assert tl["live_bytes"][-1] == 3 * F32_256x256 + F32_256  # a, b and the two results


def _tanh_op(text):
    return re.search(r"%(\S+) = f32\[256,256\]\{1,0\} fusion\([^)]*\), kind=kLoop, calls=%wrapped_tanh", text).group(1)


def test_onchip_need_of_the_tanh_by_hand(traced):
    _, trace = traced
    m = _module(fpgaprof.load(trace))
    from fpgaprof.base.core import core

    need = core.analysis.onchip_need(m.text, m.buffer_assignment, _tanh_op(m.text))
    # in: the dot's result (S); out: tanh's result (S, the same buffer in place: on chip an
    # input and an output all the same); nothing called holds values
    assert need == {
        "input_bytes": F32_256x256,
        "output_bytes": F32_256x256,
        "temporary_bytes": 0,
        "total_bytes": 2 * F32_256x256,
    }


def test_dataflow_graph_of_the_tanh_by_hand(traced):
    _, trace = traced
    m = _module(fpgaprof.load(trace))
    g = dataflow.dataflow_graph(m.text, _tanh_op(m.text))
    # its fused computation: the parameter (the dot's result) -> tanh -> the result
    assert [(e["bytes"], e["boundary"]) for e in g["edges"]] == [(F32_256x256, True)] * 2
    assert g["boundary_bytes"] == 2 * F32_256x256
    inputs = [n for n in g["nodes"] if n["kind"] == "input"]
    assert len(inputs) == 1 and inputs[0]["outer"].startswith("ynn_fusion")
    op = next(n for n in g["nodes"] if n["kind"] == "op")
    assert op["opcode"] == "tanh" and op["source"].endswith(f":{TANH_LINE}")
    dot = dataflow.to_dot(g)
    assert len(re.findall(r"^  n\d+ -> n\d+ \[", dot, re.M)) == 2
    assert dot.count(', color="#c0392b"') == 2


def test_dataflow_graph_of_the_reduce_by_hand():
    """The committed dump (tests/data/buffer_assignment, jax 0.10.2's XLA): the reduce fusion
    expanded, its reducer collapsed."""
    with open(os.path.join(HERE, "..", "data", "buffer_assignment", "jit_f_cpu_after_optimizations.txt")) as fh:
        text = fh.read()
    g = dataflow.dataflow_graph(text, "ynn_fusion")
    # the fused computation: 2 f32[] constants, the broadcast, multiply, add, reduce: edges
    # const->bcast, tanh->mul, bcast->mul, mul->add, a->add, add->reduce, const->reduce, and
    # reduce->result; a and tanh's result in (S each), the f32[256] out
    assert len(g["edges"]) == 8
    boundary = [e for e in g["edges"] if e["boundary"]]
    assert sorted(e["bytes"] for e in boundary) == [F32_256, F32_256x256, F32_256x256]
    assert g["boundary_bytes"] == 2 * F32_256x256 + F32_256
    assert sorted(n["outer"] for n in g["nodes"] if n["kind"] == "input") == ["a.1", "wrapped_tanh"]
    reduce_node = next(n for n in g["nodes"] if n["opcode"] == "reduce")
    assert reduce_node["calls"] == ["region_0.1"]  # its reducer stays collapsed, named on it
    dot = dataflow.to_dot(g)
    assert len(re.findall(r"^  n\d+ -> n\d+ \[", dot, re.M)) == 8
    assert dot.count(', color="#c0392b"') == 3


def test_every_field_of_a_dataflow_graph_is_documented():
    """summary.json's dataflow.graphs[] carries dataflow_graph() whole: each of its keys is a
    property of docs/summary.schema.json's graph and named in docs/reports.md, "Dataflow
    graphs"; opcode, source and expanded from the committed dump by hand."""
    with open(os.path.join(HERE, "..", "data", "buffer_assignment", "jit_f_cpu_after_optimizations.txt")) as fh:
        text = fh.read()
    # line 58: %ynn_fusion = ... fusion(...), calls=%fused_computation, stack_frame_id=2
    # (<string>, line 5); line 59: ROOT %tuple.1 = ... tuple(...), no called computation;
    # line 53: ENTRY %main.2
    fused = dataflow.dataflow_graph(text, "ynn_fusion")
    assert (fused["opcode"], fused["source"], fused["expanded"]) == ("fusion", "<string>:5", "fused_computation")
    one = dataflow.dataflow_graph(text, "tuple.1")
    assert (one["opcode"], one["source"], one["expanded"]) == ("tuple", "", "")
    whole = dataflow.dataflow_graph(text)
    assert (whole["op"], whole["opcode"], whole["source"], whole["expanded"]) == ("jit_f", "module", "", "main.2")
    with open(os.path.join(HERE, "..", "..", "docs", "summary.schema.json")) as fh:
        graph = json.load(fh)["properties"]["dataflow"]["properties"]["graphs"]["items"]["properties"]
    with open(os.path.join(HERE, "..", "..", "docs", "reports.md")) as fh:
        docs = fh.read().split("### Dataflow graphs", 1)[1].split("\n### ", 1)[0]
    for key in fused:
        assert key in graph, key
        assert f"`{key}`" in docs, key
    for key in ("opcode", "source", "expanded"):
        assert graph[key]["type"] == "string" and graph[key]["description"], key


def test_an_old_trace_loads_without_buffer_assignment():
    prof = fpgaprof.load(OLD_TRACE)
    assert prof.hlo_modules and all(m.buffer_assignment == "" for m in prof.hlo_modules)
    rep = prof.memory_report(by="module")
    assert len(rep["modules"]) == 0
    assert "buffer assignment" in str(rep["modules"])
    # its candidates keep the cost model's sizes and say so
    cands = prof.fpga_candidates()
    scored = [c for c in cands if c.get("onchip_source") is not None]
    assert scored and all(c["onchip_source"] == "cost model" for c in scored)
    assert all(c["onchip_input_bytes"] is None for c in cands)


def test_export_hlo_writes_the_dataflow_graph(traced, tmp_path, monkeypatch):
    _, trace = traced
    prof = fpgaprof.load(trace)
    op = _tanh_op(_module(prof).text)
    out = prof.export_hlo(op, tmp_path / "op.hlo", module="jit_f")
    if dataflow.dot_available():
        assert out.dataflow_paths == [
            str(tmp_path / "op.dataflow.dot"),
            str(tmp_path / "op.dataflow.svg"),
        ]
        assert "<svg" in (tmp_path / "op.dataflow.svg").read_text()
    dot_text = (tmp_path / "op.dataflow.dot").read_text()
    assert dot_text.startswith("digraph")
    # the exported module's entry is the fused computation: parameter -> tanh -> result, both
    # edges crossing the boundary
    assert len(re.findall(r"^  n\d+ -> n\d+ \[", dot_text, re.M)) == 2
    assert dot_text.count(', color="#c0392b"') == 2
    # without Graphviz: the DOT file only
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    out2 = prof.export_hlo(op, tmp_path / "op2.hlo", module="jit_f")
    assert out2.dataflow_paths == [str(tmp_path / "op2.dataflow.dot")]
    assert not (tmp_path / "op2.dataflow.svg").exists()


def _chromium():
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def _render(exe, url):
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--disable-extensions", "--disable-background-networking",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
            "--virtual-time-budget=3000", "--enable-logging=stderr", "--v=0"]
    return subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("with_dot", [True, False], ids=["graphviz", "no_graphviz"])
def test_report_html_memory_view_and_dataflow(traced, tmp_path, monkeypatch, with_dot):
    _, trace = traced
    chromium = _chromium()
    if with_dot and not dataflow.dot_available():
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz)")
    if not with_dot:
        monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    summary = model.collect(fpgaprof.load(trace), trace_path=trace)
    mm = summary["module_memory"]
    first = next(m for m in mm["modules"] if m["module"] == "jit_f")
    assert first["peak_bytes"] in (787_456, 1_056_772)  # the two compilations (module doc)
    # summary.json's new sections follow docs/summary.schema.json
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.path.join(HERE, "..", "..", "docs", "summary.schema.json")) as fh:
        schema = json.load(fh)
    jsonschema.validate(json.loads(json.dumps(summary, default=str)), schema)
    doc = H.render(summary, "memory <test>")
    mem = doc.split('id="sec-hlo-memory"')[1].split("</section>")[0]
    label = "787.46 kB" if first["peak_bytes"] == 787_456 else "1.06 MB"  # decimal units
    assert f"peak {label} at " in mem  # the chart's peak marker
    assert mem.count("<svg") >= 1 and "live at the peak" in mem
    flow = doc.split('id="sec-dataflow"')[1].split("</section>")[0]
    assert "cross the boundary" in flow
    if with_dot:
        assert "<svg" in flow and "not installed" not in flow
        assert "#c0392b" in flow  # the boundary edges
        assert "http://" not in flow and "<!--" not in flow
    else:
        assert "Graphviz's dot is not installed" in flow
        assert "crosses the boundary" in flow and "<svg" not in flow
    # no URL the page could fetch, nothing unescaped from the trace
    assert "http://" not in doc and "https://" not in doc
    assert "<title>memory &lt;test&gt;</title>" in doc
    if chromium is None:
        pytest.skip("chromium not installed (apt-get install chromium): not rendered")
    path = tmp_path / "report.html"
    path.write_text(doc)
    r = _render(chromium, path.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    st = re.search(r'<div id="fpgaprof-status" data-status="(\w+)">([^<]*)</div>', r.stdout)
    assert st and st.group(1) == "ok", st.group(2) if st else r.stdout[-2000:]
    assert 'id="sec-hlo-memory"' in r.stdout and 'id="sec-dataflow"' in r.stdout
    console = [ln for ln in r.stderr.splitlines() if "CONSOLE" in ln]
    assert not console, console
    assert "ERR_NAME_NOT_RESOLVED" not in r.stderr and "ERR_PROXY" not in r.stderr


HOSTILE_HLO = textwrap.dedent(
    """\
    HloModule jit_evil

    ENTRY %main (p0: f32[4]) -> f32[4] {
      %p0 = f32[4]{0} parameter(0)
      ROOT %n = f32[4]{0} negate(%p0), metadata={op_name="jit(<b>x</b>)/neg" source_file="<script>alert(1)</script>.py" source_line=3}
    }
    """
)


@pytest.mark.parametrize("with_dot", [True, False], ids=["graphviz", "no_graphviz"])
def test_trace_text_in_the_dataflow_section_is_escaped(with_dot):
    from fpgaprof.views.memory import dataflow_html

    if with_dot and not dataflow.dot_available():
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz)")
    g = dataflow.dataflow_graph(HOSTILE_HLO, "n")
    # one op node, its operand in, its result out: f32[4] = 16 bytes each way
    assert [(e["source"], e["target"], e["bytes"], e["boundary"]) for e in g["edges"]] == [
        ("p0", "n", 16, True),
        ("n", "n (result)", 16, True),
    ]
    assert g["boundary_bytes"] == 32
    section = {"basis": "test <i>basis</i>", "graphs": [g]}
    out = dataflow_html(section, None if with_dot else (lambda _dot: None))
    assert "<script" not in out and "<b>x</b>" not in out and "<i>" not in out
    assert "&lt;script&gt;" in out or "&amp;lt;script" in out or "&#60;script" in out
