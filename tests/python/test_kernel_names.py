"""Kernel names as reports show them: CUPTI reports C++ kernels (CUB's sorts, cuBLAS) as mangled
symbols; summary.json's kernel rows carry them demangled, the text summary and report.html show a
short form, and the name as recorded stays the key everywhere. Expected texts come from binutils'
c++filt (run here when it is installed; its output for the H200 trace's CUB kernel is also
written out below) and, for the short form, by hand from c++filt's text."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import fpgaprof
from fpgaprof import report
from fpgaprof.base.units import kernel_display_name

TRACE = Path(__file__).resolve().parents[1] / "data" / "traces" / "mbirjax073_parallel_128_pallas_h200.fpgaprof"
CUB = (
    "_ZN3cub39_V_300200_SM_750_800_900_1000_1100_12006detail10radix_sort30DeviceSegmentedRadixSortKernelINS1_"
    "5radix10policy_hubIijiE10Policy1000ELb1ELNS0_9SortOrderE0EijPiS9_iNS1_21identity_decomposer_tEEEvPKT2_PSB_"
    "PKT3_PSF_T4_T5_iiT7_"
)
CUB_FILT = (
    "void cub::_V_300200_SM_750_800_900_1000_1100_1200::detail::radix_sort::DeviceSegmentedRadixSortKernel<"
    "cub::_V_300200_SM_750_800_900_1000_1100_1200::detail::radix::policy_hub<int, unsigned int, int>::Policy1000, "
    "true, (cub::_V_300200_SM_750_800_900_1000_1100_1200::SortOrder)0, int, unsigned int, int*, int*, int, "
    "cub::_V_300200_SM_750_800_900_1000_1100_1200::detail::identity_decomposer_t>(int const*, int*, unsigned int "
    "const*, unsigned int*, int*, int*, int, int, cub::_V_300200_SM_750_800_900_1000_1100_1200::detail::identity_"
    "decomposer_t)"
)


def _cxxfilt(names: list[str]) -> list[str]:
    exe = shutil.which("c++filt")
    if exe is None:
        pytest.skip("c++filt (binutils) is not installed")
    out = subprocess.run([exe], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_the_short_form_by_hand():
    # from c++filt's text: the return type, template arguments, parameters and the middle
    # namespaces dropped
    assert kernel_display_name(CUB) == "cub::…::DeviceSegmentedRadixSortKernel<…>"
    assert kernel_display_name("_Z6kernelPfi") == "kernel"
    assert kernel_display_name("_ZN2ns6kernelEv") == "ns::kernel"
    for plain in ("loop_add_fusion", "_fwd_kernel__1", "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n", "_Z"):
        assert kernel_display_name(plain) == plain


# XLA's own delay kernel in the H100 sweep trace; c++filt: "stream_executor::gpu::(anonymous
# namespace)::DelayKernel(stream_executor::gpu::GpuSemaphoreState volatile*, ...)". Its
# "(anonymous namespace)" once read as the parameter list: "stream_executor::…::".
DELAY = ("_ZN15stream_executor3gpu56_GLOBAL__N__0adca48f_23_delay_kernel_cuda_cu_cc_a9426d2111DelayKernelEPV"
         "NS_17GpuSemaphoreStateES2_")


def test_an_anonymous_namespace_or_a_lambda_is_a_scope_not_the_parameters():
    assert kernel_display_name(DELAY) == "stream_executor::…::DelayKernel"
    assert kernel_display_name("x", demangled="(anonymous namespace)::k(int)") == "{anonymous}::k"
    # a lambda's own parentheses are kept whole, with the braces around them
    assert kernel_display_name("x", demangled="void ns::{lambda(float)#2}(float)") == "ns::{lambda(float)#2}"
    assert kernel_display_name("x", demangled="void a::b<int>::{lambda(int)#1}::k<2>(int)") == "a::…::k<…>"


def test_summary_json_carries_each_kernel_demangled_as_cxxfilt_prints_it(tmp_path):
    prof = fpgaprof.load(TRACE)
    report.write_all(prof, str(tmp_path))
    top = json.loads((tmp_path / "summary.json").read_text())["kernels"]["top"]
    names = [r["name"] for r in top]
    assert CUB in names  # the H200 trace's CUB sort, as CUPTI recorded it
    assert [r["demangled"] for r in top] == _cxxfilt(names)
    assert next(r["demangled"] for r in top if r["name"] == CUB) == CUB_FILT
    html = (tmp_path / "report.html").read_text()
    assert "cub::…::DeviceSegmentedRadixSortKernel&lt;…&gt;" in html
    assert 'title="void cub::' in html  # the whole name on hover
    text = prof.summary()
    assert "cub::…::DeviceSegmentedRadixSortKernel<…>" in text and "_ZN3cub" not in text


def test_shorten_keeps_the_end_asked_for():
    from fpgaprof.base.units import shorten

    assert shorten("fusion.1", 40, "ends") == "fusion.1"
    assert shorten("abcdefghij", 5) == "abcd…"
    assert shorten("abcdefghij", 5, "end") == "…ghij"
    assert shorten("abcdefghij", 5, "ends") == "ab…ij"
    assert len(shorten("x" * 100 + ".1", 40, "ends")) == 40
    assert shorten("x" * 100 + ".1", 40, "ends").endswith("x.1")
    with pytest.raises(ValueError):
        shorten("abcdefghij", 5, "middle")


def test_fit_qualified_gives_a_short_module_s_room_to_the_name():
    """A module shorter than the 12 characters a long one keeps leaves the rest to the name:
    'jit_f' (5) in 40 characters leaves 40 - 3 - 5 = 32 for the op ("{n} ({q})"), 40 - 1 - 5
    = 34 ("{q}:{n}"), not 40 - 15 = 25 and 40 - 13 = 27 (each row 7 characters short, more of the
    name's middle cut, more rows alike)."""
    from fpgaprof.base.units import fit_qualified

    name = "loop_gather_select_multiply_add_fusion_long_name.17"  # 51 characters
    got = fit_qualified(name, "jit_f", 40, "{n} ({q})")
    assert len(got) == 40 and got.endswith("_long_name.17 (jit_f)")
    # by hand: 32 = 15 characters + "…" + the last 16 (shorten keep="ends")
    assert got == "loop_gather_sel…ion_long_name.17 (jit_f)"
    got = fit_qualified(name, "jit_f", 40)
    assert len(got) == 40 and got.startswith("jit_f:loop_gather_")
    # a long module still keeps 12 characters, ends kept
    got = fit_qualified(name, "jit__sparse_forward_project_fcn", 40, "{n} ({q})")
    assert len(got) == 40 and got.endswith(" (jit__…ct_fcn)")


def test_a_small_share_is_not_printed_as_zero():
    """834.3 µs busy in 43.787 s of wall (the H200 cone-beam Pallas counters trace) is
    0.0019 %: "<0.1 %", not "0.0 %"; 0 stays "0.0 %", and 0.05 % rounds to "0.1 %"."""
    from fpgaprof.base.units import fmt_pct

    assert fmt_pct(834.3e-6 / 43.787) == "<0.1 %"
    assert fmt_pct(0.0) == "0.0 %"
    assert fmt_pct(0.0005) == "0.1 %"
    assert fmt_pct(None) == "–"
    prof = fpgaprof.load(str(TRACE.parent / "mbirjax073_cone_64_pallas_counters_h200.fpgaprof"))
    (busy,) = [ln for ln in prof.summary().splitlines() if ln.startswith("GPU busy:")]
    assert "(<0.1 % of wall)" in busy, busy
