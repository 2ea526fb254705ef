"""summary.json, report.html and timeline.json of every saved trace are byte for byte what they
were before the Python package was re-laid in layers (tests/data/golden, written by
`fpgaprof report` at the commit that added this test; summary.json and report.html rewritten
when the FPGA candidates gained onchip_source and the onchip_*_bytes columns, nothing else
changed). A guard for a refactoring that must not change any output; it goes, with the golden
files, once the refactoring has landed."""
import gzip
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
TRACES = sorted((HERE.parent / "data" / "traces").glob("*.fpgaprof"))
GOLDEN = HERE.parent / "data" / "golden"


@pytest.mark.parametrize("trace", TRACES, ids=[t.stem for t in TRACES])
def test_report_outputs_are_byte_identical(trace, tmp_path):
    out = tmp_path / "out"
    # the trace's path as given is part of the outputs: the same relative path as the golden run
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "report", str(trace.relative_to(REPO)), "-o", str(out)],
                       capture_output=True, text=True, timeout=600, cwd=REPO)
    assert r.returncode == 0, r.stderr
    for name in ("summary.json", "report.html", "timeline.json"):
        want = gzip.decompress((GOLDEN / trace.stem / f"{name}.gz").read_bytes())
        got = (out / name).read_bytes()
        if got != want:
            at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            pytest.fail(f"{trace.stem}/{name} differs from the golden file at byte {at} "
                        f"(sizes {len(got)} / {len(want)}): got {got[max(at - 60, 0):at + 60]!r}, "
                        f"want {want[max(at - 60, 0):at + 60]!r}")
