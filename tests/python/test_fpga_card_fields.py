"""The Python face of the card field table (card_fields() in the core): FpgaTarget's fields and
CALIBRATED_FIELDS name what the core's card takes, a card file goes through the core's parser
with the same typed errors as a dict, and a card as presets() gives it goes back in unchanged."""

import dataclasses
import json

import pytest

from fpgaprof import errors, fpga

# Names a card takes besides the core's table of a card: the base preset, all channels'
# bandwidth and the earlier names.
_INPUT_ONLY = {"base", "memory_bytes_per_s", "hbm_bytes_per_s", "hbm_efficiency"}
_DERIVED = {"memory_bytes_per_s", "stream_bytes_per_s"}


def _table_fields() -> list[str]:
    return [k for k in fpga.presets()[0] if k not in _DERIVED and not k.startswith("card_")]


def test_fpga_target_names_the_core_table():
    names = [f.name for f in dataclasses.fields(fpga.FpgaTarget)]
    assert sorted(n for n in names if n not in _INPUT_ONLY) == sorted(_table_fields())
    calibrated = [k for k in _table_fields() if f"{k}_low" in _table_fields()]
    assert list(fpga.CALIBRATED_FIELDS) == calibrated


@pytest.mark.parametrize("preset", ["alveo-u55c", "alveo-u250", "versal-v80"])
def test_a_preset_table_goes_back_unchanged(preset):
    table = next(p for p in fpga.presets() if p["name"] == preset)
    assert fpga.resolve_target(dict(table)) == table


def test_a_card_without_dsps_goes_back_unchanged():
    card = {
        "name": "rates",
        "memory_type": "hbm2",
        "memory_channels": 32,
        "memory_channel_bytes_per_s": 14.375e9,
        "memory_capacity_bytes": 2**34,
        "sram_bytes": 44.7e6,
        "fp32_flops_per_s": 1.2e12,
        "link_bytes_per_s": 15.754e9,
    }
    table = fpga.resolve_target(card)
    assert table["dsp_count"] == 0
    assert table["card_fp32_flops_per_s"] == 1.2e12
    assert table["card_fp64_flops_per_s"] == 0.0
    assert fpga.resolve_target(table) == table


def test_card_file_and_dict_share_the_errors(tmp_path):
    card = {"base": "alveo-u55c", "sram_bytes": "big"}
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    for spec in (card, str(path)):
        with pytest.raises(
            errors.InvalidArgumentError,
            match=r"^FPGA target field 'sram_bytes' must be a number, not str$",
        ):
            fpga.resolve_target(spec)
