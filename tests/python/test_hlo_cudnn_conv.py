"""cuDNN convolution custom calls against XLA's own convolution FLOP count. XLA's GPU cost
analysis (xla/service/gpu/model/gpu_hlo_cost_analysis.cc) costs a `__cudnn$conv*` call with
HloCostAnalysis::GetConvolutionFlops on operand 0, operand 1 and the call's first result,
under the call's window, dim_labels and group counts. jaxlib carries that function in its CPU
cost analysis: a plain `convolution` of the same shapes and attributes, costed by XLA, gives the
figure XLA's GPU cost analysis gives the call. Checked on every such call of XLA's HLO test
corpus (FPGAPROF_XLA_HLO_CORPUS, default /work/shared/corpora/xla-hlo; skipped without it)."""
import os
import pathlib

import pytest

import fpgaprof

CORPUS = pathlib.Path(os.environ.get("FPGAPROF_XLA_HLO_CORPUS") or "/work/shared/corpora/xla-hlo")
CONV_ATTRIBUTES = ("window", "dim_labels", "feature_group_count", "batch_group_count")


def _conv_calls():
    if not CORPUS.is_dir():
        return []
    calls = []
    for path in sorted(CORPUS.glob("*.hlo")):
        text = path.read_text(encoding="utf-8")
        if '"__cudnn$conv' in text:
            calls.append(pytest.param(path, id=path.stem))
    return calls


def _xla():
    jax = pytest.importorskip("jax")
    lib = pytest.importorskip("jax._src.lib")
    parser = getattr(lib, "hlo", None) or lib._jax
    if not hasattr(lib._jax, "hlo_module_cost_analysis"):
        pytest.skip("this jaxlib has no hlo_module_cost_analysis")
    return parser, lib._jax, jax.devices("cpu")[0].client


def _as_convolution(call, shapes):
    """The call as a plain convolution: f32 everywhere (the FLOP count does not depend on it)."""
    def array(dims):
        return "f32[" + ",".join(str(d) for d in dims) + "]"
    result = call.shape.tuple[0] if call.shape.tuple else call.shape
    attrs = "".join(f", {k}={call.attributes[k]}" for k in CONV_ATTRIBUTES if k in call.attributes)
    return (f"HloModule m\nENTRY e {{\n  a = {array(shapes[0].dims)} parameter(0)\n"
            f"  b = {array(shapes[1].dims)} parameter(1)\n"
            f"  ROOT c = {array(result.dims)} convolution(a, b){attrs}\n}}\n")


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"XLA HLO corpus not found at {CORPUS}")
@pytest.mark.parametrize("path", _conv_calls())
def test_cudnn_convolution_flops_are_xlas(path):
    parser, jax_lib, client = _xla()
    module = fpgaprof.hlo.analyze(path.read_text(encoding="utf-8"))
    checked = 0
    for comp in module.computations:
        by_name = {i.name: i for i in comp.instructions}
        for call in comp.instructions:
            if not call.custom_call_target.startswith("__cudnn$conv"):
                continue
            assert not call.unknown_cost and call.pattern == "convolution"
            shapes = [by_name[o].shape for o in call.operands[:2]]
            xla = jax_lib.hlo_module_cost_analysis(client, parser.hlo_module_from_text(_as_convolution(call, shapes)))
            assert call.flops == xla["flops"] > 0, call.name
            # bytes: every operand and the convolution result, not the scratch (XLA's GPU rule)
            result = call.shape.tuple[0] if call.shape.tuple else call.shape
            assert call.bytes_read == sum(by_name[o].shape.byte_size for o in call.operands)
            assert call.bytes_written == result.byte_size
            checked += 1
    assert checked > 0
