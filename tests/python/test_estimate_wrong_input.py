"""`fpgaprof estimate` given what a user has at hand instead of an HLO module (a trace, a run
folder, a summary.json) says what it is and what to give instead (docs/reports.md: errors are
`<cause> (<fix>)`), rather than a UTF-8 or HLO parse error that asks to report unsupported
syntax."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fpgaprof.cli import main

TRACE = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "traces"
    / "mbirjax073_parallel_128_pallas_h200.fpgaprof"
)


@pytest.mark.parametrize("kind", ["trace", "run folder", "summary.json"])
def test_estimate_names_what_it_was_given(tmp_path, capsys, kind):
    if kind == "trace":
        path = tmp_path / "t.fpgaprof"
        shutil.copy(TRACE, path)
        want = "is an fpgaprof trace, not an HLO module: `fpgaprof report"
    elif kind == "run folder":
        path = tmp_path / "out"
        path.mkdir()
        shutil.copy(TRACE, path / "trace.fpgaprof")
        want = "is a run folder, not an HLO module"
    else:
        path = tmp_path / "summary.json"
        path.write_text('{"answer": {}}')
        want = "is JSON, not an HLO module"
    assert main(["estimate", str(path)]) == 2
    err = capsys.readouterr().err
    assert want in err and "report unsupported syntax" not in err and "UTF-8" not in err
