"""Diagnostics as records (docs/reports.md, "Warnings"): one table of codes in the C++ core,
used by C++ and Python alike, listed in the docs; de-duplication by code and message in linear
time; summary.json's warnings as records; older traces' prose kept."""

from __future__ import annotations

import html
import importlib.util
import json
import pathlib
import re
import time

import pytest

import fpgaprof
from fpgaprof import report
from fpgaprof.analysis import sections
from fpgaprof.base import diagnostics as diag
from fpgaprof.base.core import core
from fpgaprof.report import write_all

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRACES = ROOT / "tests" / "data" / "traces"


def _sources(*globs: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for g in globs for p in sorted(ROOT.glob(g)))


def test_the_table_is_well_formed():
    codes = core.diagnostic_codes()
    names = [c["code"] for c in codes]
    assert len(names) == len(set(names)), "a code twice"
    for c in codes:
        assert re.fullmatch(r"[a-z]+\.[a-z_]+", c["code"]), c
        # the code names its source (trace.*, capture.*, ...), except the transfer flags
        assert c["code"].split(".")[0] == c["source"] or c["code"] == "report.transfer_flag", c
        assert c["severity"] in ("info", "warning", "error"), c
        assert c["description"].endswith("."), c
    assert diag.CODES["trace.older_warning"]["source"] == "trace"


def test_every_code_emitted_is_in_the_table_and_every_code_is_emitted():
    """The codes the sources name (C++ and Python) are exactly the table's: no unknown code
    anywhere (it would throw when emitted) and no dead row."""
    cpp = _sources("cpp/src/**/*.cpp", "cpp/src/**/*.hpp", "cpp/include/**/*.hpp")
    py = _sources("python/fpgaprof/**/*.py")
    table = set(diag.CODES)
    # ("trace." is left out: file names and keys start so; its one code is kOlderTraceCode)
    sources = "|".join(sorted({c["source"] for c in diag.CODES.values()} - {"trace"} | {"report"}))
    literal = re.compile(r'"((?:' + sources + r')\.[a-z_]+)"')
    table_rows = set(re.findall(r'DiagnosticCode\{"([a-z_.]+)"', cpp))
    assert table_rows | {"trace.older_warning"} == table
    emitted = set(literal.findall(re.sub(r'DiagnosticCode\{"[a-z_.]+"', "", cpp))) | set(
        literal.findall(py)
    )
    emitted = {c for c in emitted if not c.endswith((".py", ".json", ".html", ".txt"))}
    assert emitted - table == set(), "codes emitted but not in the table"
    assert table - emitted - {"trace.older_warning"} == set(), "rows of the table nothing emits"


def test_docs_list_the_table():
    """docs/reports.md "Warnings" is written from the table (scripts/gen_diagnostic_codes.py)."""
    spec = importlib.util.spec_from_file_location(
        "gen", ROOT / "scripts" / "gen_diagnostic_codes.py"
    )
    gen = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(gen)
    doc = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    assert gen.with_table(doc, list(core.diagnostic_codes())) == doc, (
        "docs/reports.md's codes differ from the table: run scripts/gen_diagnostic_codes.py"
    )
    # and the rows really are there (one per code)
    rows = re.findall(r"^\| `([a-z_.]+)` \| (info|warning|error) \| ([a-z]+) \|", doc, re.M)
    assert [r[0] for r in rows] == [c["code"] for c in core.diagnostic_codes()]


def test_a_record_and_its_checks():
    d = diag.diagnostic("capture.records_dropped", "12 dropped", [12])
    assert d == {
        "code": "capture.records_dropped",
        "severity": "warning",
        "source": "capture",
        "count": 1,
        "numbers": [12.0],
        "message": "12 dropped",
    }
    with pytest.raises(KeyError, match="unknown diagnostic code 'capture.nope'"):
        diag.diagnostic("capture.nope", "x")
    assert diag.as_diagnostic("plain")["code"] == "trace.older_warning"
    assert (
        diag.as_diagnostic({"code": "future.kind", "message": "m"})["code"] == "trace.older_warning"
    )
    assert diag.warning_text({**d, "count": 3}) == "12 dropped (3 times)"
    assert diag.warning_text(d) == "12 dropped"


def test_store_warnings_are_records_counted_not_repeated(tmp_path):
    s = core.TraceStore()
    s.set_meta(start_ns=0, end_ns=10, warnings=["older prose"])
    s.add_warning("3 kernels could not be attributed", "attribution.unattributed_kernels", [3])
    s.add_warning("3 kernels could not be attributed", "attribution.unattributed_kernels", [3])
    with pytest.raises(fpgaprof.errors.InvalidArgumentError, match="unknown diagnostic code 'x.y'"):
        s.add_warning("m", "x.y")
    assert s.meta["warnings"] == ["older prose", "3 kernels could not be attributed"]
    ds = s.diagnostics
    assert [(d["code"], d["count"], d["numbers"]) for d in ds] == [
        ("trace.older_warning", 1, []),
        ("attribution.unattributed_kernels", 2, [3.0]),
    ]
    # the trace file keeps codes, counts and figures
    path = str(tmp_path / "t.fpgaprof")
    s.save(path)
    back = fpgaprof.load(path)
    assert back.diagnostics == ds
    assert back.warnings == s.meta["warnings"]


def test_older_traces_keep_every_warning_as_prose():
    """The saved traces predate the codes: each META warning reads as trace.older_warning (or,
    the one exact wording, capture.records_incomplete), message whole, none lost."""
    seen = 0
    for path in sorted(TRACES.glob("*.fpgaprof")):
        prof = fpgaprof.load(str(path))
        for d in prof.diagnostics:
            assert d["code"] in (
                "trace.older_warning",
                "capture.records_incomplete",
                "correlate.unmatched_records",
            )
            assert d["message"] in prof.warnings
            seen += 1
    assert seen > 0


class _Stand:
    def __init__(self, ws):
        self.meta = {"warnings": ws}
        self.warnings = ws


FACTS = {
    "dropped_records": 0,
    "incomplete_records": 0,
    "gpu_available": True,
    "unavailable_reason": "",
    "command_buffers_disabled": True,
}


def test_dedup_by_code_and_message_counts_and_caps():
    ws = ["a", "b", "a"]
    extra = [
        diag.diagnostic("report.transfer_flag", "a"),
        diag.diagnostic("report.transfer_flag", "a"),
    ]
    out = sections.warnings_of(_Stand(ws), FACTS, extra)
    # "a" as prose and "a" as a transfer flag are two records (two codes); each counted
    assert [(w["code"], w["message"], w["count"]) for w in out] == [
        ("trace.older_warning", "a", 2),
        ("trace.older_warning", "b", 1),
        ("report.transfer_flag", "a", 2),
    ]


@pytest.mark.parametrize("n", [50_000, 100_000])
def test_dedup_is_linear(n):
    """#32 defect 7: 50,000 distinct warnings took ~22 s in `report`. Each distinct one once,
    1,000 listed and the rest counted in one record; time grows linearly (a bound of 2 s for
    100,000 leaves room for a loaded machine; measured 0.2-0.4 s)."""
    ws = [f"warning {i}: something to know" for i in range(n)]
    t = time.perf_counter()
    out = sections.warnings_of(_Stand(ws + ws[: n // 2]), FACTS, ws[: n // 4])
    dt = time.perf_counter() - t
    assert len(out) == 1001
    assert [w["message"] for w in out[:3]] == ws[:3]
    assert out[0]["count"] == 3  # in META twice, in the extras once
    last = out[-1]
    assert last["code"] == "report.warnings_left_out"
    assert last["numbers"] == [n - 1000, n, 1000]
    assert dt < 2.0 * n / 100_000 + 0.5, dt


def test_html_escapes_and_counts():
    w = diag.diagnostic("trace.older_warning", "<script>alert(1)</script> & more", count=2)
    s = report.collect(fpgaprof.load(str(TRACES / "mbirjax_parallel_128_h100.fpgaprof")))
    s["warnings"] = [w]
    page = report.render_html(s, "t")
    assert "<script>alert(1)" not in page
    assert html.escape("<script>alert(1)</script> & more (2 times)", quote=True) in page


def test_summary_json_carries_records(tmp_path):
    trace = TRACES / "mbirjax073_parallel_128_pallas_counters_h200.fpgaprof"
    prof = fpgaprof.load(str(trace))
    out = tmp_path / "out"
    write_all(prof, out, trace_path=str(trace), timeline=False)
    s = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert s["schema_version"] == 2
    assert s["warnings"], "this trace has warnings"
    for w in s["warnings"]:
        assert set(w) == {"code", "severity", "source", "count", "numbers", "message"}
        assert w["code"] in diag.CODES
        assert (w["severity"], w["source"]) == (
            diag.CODES[w["code"]]["severity"],
            diag.CODES[w["code"]]["source"],
        )
