"""An unknown field of a card given as a dict or a card file names the closest field, as
FpgaTarget(...) does (docs/fpga-model.md, "Your own card": "an unknown field (with the closest
name)")."""

from __future__ import annotations

import json

import pytest

import fpgaprof
from fpgaprof.cli import main


def test_dict_unknown_field_names_the_closest():
    with pytest.raises(fpgaprof.InvalidArgumentError, match=r"did you mean clock_hz\?"):
        fpgaprof.fpga.resolve_target({"base": "alveo-u55c", "clok_hz": 3e8})


def test_card_file_unknown_field_names_the_closest(tmp_path, capsys):
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"base": "alveo-u55c", "clok_hz": 3e8}))
    with pytest.raises(fpgaprof.InvalidArgumentError, match=r"did you mean clock_hz\?"):
        fpgaprof.fpga.resolve_target(str(card))
    assert main(["estimate", str(tmp_path / "none.hlo"), "--target", str(card)]) == 2
    assert "did you mean clock_hz?" in capsys.readouterr().err


def test_a_resolved_card_and_earlier_names_still_go_back_in():
    card = fpgaprof.fpga.resolve_target("alveo-u55c")  # with its derived rates
    assert fpgaprof.fpga.resolve_target(card)["name"] == "alveo-u55c"
    assert fpgaprof.fpga.resolve_target(fpgaprof.fpga.presets()[0])["name"] == "alveo-u55c"
    old = {"base": "alveo-u55c", "hbm_efficiency": 0.8}
    assert fpgaprof.fpga.resolve_target(old)["name"] == "alveo-u55c (modified)"
    with pytest.raises(fpgaprof.InvalidArgumentError, match="random_reads_per_s"):
        fpgaprof.fpga.resolve_target({"base": "alveo-u55c", "random_access_efficiency": 0.5})
