"""A folder of separate traces (no process index: not ranks of one job) given to `fpgaprof
report`: the job report says what it is, names each trace in its rows and does not claim one
host's clock (docs/reports.md, "Jobs of several processes")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from fpgaprof.cli import main

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"
NAMES = (
    "mbirjax073_parallel_128_pallas_h200.fpgaprof",
    "mbirjax073_parallel_128_xla_h200.fpgaprof",
)


def test_a_folder_of_separate_runs_is_named_as_such(tmp_path, capsys):
    for n in NAMES:
        shutil.copy(TRACES / n, tmp_path / n)
    assert main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "name no process of a job" in out and f"fpgaprof report {tmp_path / NAMES[0]}" in out
    assert "one host" not in out
    # the busiest trace is named (it was "(index unknown)"), and so is each rank row
    assert "busiest rank mbirjax073_parallel_128_xla_h200.fpgaprof" in out
    ranks = out.split("\nranks\n", 1)[1].split("\n\n", 1)[0]
    assert all(n in ranks for n in NAMES)
    model = json.loads((tmp_path / "job.json").read_text())
    assert model["unindexed"] == list(NAMES)
    assert model["stragglers"]["items"][0]["slowest_rank"] in NAMES
    html = (tmp_path / "job.html").read_text()
    assert "name no process of a job" in html and NAMES[1] in html


def test_the_suggested_command_quotes_a_folder_with_a_space(tmp_path, capsys):
    # The note's `fpgaprof report PATH` is a command to paste: a folder name with a space is
    # quoted, as the other commands fpgaprof prints are.
    folder = tmp_path / "sep runs"
    folder.mkdir()
    for n in NAMES:
        shutil.copy(TRACES / n, folder / n)
    assert main(["report", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"`fpgaprof report '{folder / NAMES[0]}'`" in out
