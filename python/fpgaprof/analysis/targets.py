"""FPGA cards as the model takes them: the presets, card files, ``FpgaTarget`` and the
validation of each (docs/fpga-model.md, "Your own card"). ``fpgaprof.fpga`` re-exports them."""

from __future__ import annotations

import dataclasses
import json
import numbers
import os
import re
from collections.abc import Mapping
from typing import Any

from fpgaprof.base.core import core
from fpgaprof.base.errors import FpgaprofIOError, InvalidArgumentError, closest_name, did_you_mean
from fpgaprof.base.text import read_text_file

__all__ = [
    "CALIBRATED_FIELDS",
    "FpgaTarget",
    "presets",
    "target_spec",
    "preset_hint",
    "card_file",
    "resolve_target",
    "row_imbalance_arg",
    "row_imbalance_given",
]


# A card file is a few hundred bytes of JSON; anything much larger is not one.
CARD_FILE_MAX_BYTES = 1 << 20

# The core's card field table (card_fields(); docs/fpga-model.md, "Card fields") and the names
# a card takes (card_input_names(): the table's inputs, base, all channels' bandwidth and the
# earlier names): FpgaTarget's fields and CALIBRATED_FIELDS come from them.
_CARD_FIELDS = core.analysis.card_fields()
_INPUT_NAMES = core.analysis.card_input_names()
_KIND_TYPES = {"text": "str | None", "whole": "int | None"}

# The card's calibrated quantities: each takes a nominal value and the ends of its measured
# spread as <field>_low / <field>_high (docs/fpga-model.md, "Constants").
CALIBRATED_FIELDS = tuple(f["name"] for f in _CARD_FIELDS if f["kind"] == "calibrated")


def _field_type(name: str) -> str:
    """The annotation of one FpgaTarget field: str or int for text and whole-number fields,
    float for every other number (an input the table does not hold is a bandwidth or a share)."""
    kinds = {f["name"]: f["kind"] for f in _CARD_FIELDS}
    base = name.removesuffix("_low").removesuffix("_high")
    kind = kinds.get(name, kinds.get(base, "text" if name == "base" else "number"))
    return _KIND_TYPES.get(kind, "float | None")


def _with_card_fields(cls: type) -> None:
    """Makes `cls` a dataclass whose fields are the names a card takes, each None by default."""
    cls.__annotations__ = {n: _field_type(n) for n in _INPUT_NAMES}
    for n in _INPUT_NAMES:
        setattr(cls, n, None)
    dataclasses.dataclass(init=False)(cls)


class FpgaTarget:
    """A user FPGA card (docs/fpga-model.md, "Your own card"). ``base`` starts from a preset and
    overrides the fields given (the name is then the preset's with " (modified)" unless
    ``name`` is given); without ``base`` the card's figures are required: memory_type ("hbm2",
    "hbm2e" or "ddr4", whose measured calibration it takes), memory_channels,
    memory_channel_bytes_per_s (or memory_bytes_per_s for all channels together),
    memory_capacity_bytes, sram_bytes, link_bytes_per_s and the compute (dsp_count with
    dsps_per_fma_<type>, or <type>_flops_per_s). Each calibrated quantity (CALIBRATED_FIELDS)
    given alone is exact; give <field>_low / <field>_high for a range. Bad values raise
    fpgaprof.InvalidArgumentError naming the field. Its fields are the names the core's card
    table takes (every one None unless given)."""

    def __init__(self, *args: Any, **fields: Any) -> None:
        """Keyword arguments only; a field that does not exist raises InvalidArgumentError
        naming the closest one and listing all (units are in the names: _hz, _bytes_per_s, _s)."""
        names = _INPUT_NAMES
        if "random_access_efficiency" in fields:
            raise InvalidArgumentError(
                "FPGA target field 'random_access_efficiency' is gone: the model now takes "
                "data-dependent accesses "
                "from measured rates; give random_reads_per_s (accesses per second per memory "
                "channel) instead "
                '(docs/fpga-model.md, "Your own card")'
            )
        if args:
            raise InvalidArgumentError(
                f"FpgaTarget takes keyword arguments only, e.g. "
                f"FpgaTarget(base={args[0]!r}), not FpgaTarget({args[0]!r})"
            )
        for key in fields:
            if key not in names:
                raise InvalidArgumentError(
                    f"unknown FPGA target field {key!r} ({did_you_mean(key, names)}"
                    "valid fields are "
                    f"{', '.join(names)})"
                )
        for name in names:
            setattr(self, name, fields.get(name))


_with_card_fields(FpgaTarget)  # its fields are the core's


def presets() -> list[dict]:
    """The built-in cards (alveo-u55c, alveo-u280, alveo-u250, alveo-u200, versal-v80): every
    field, each calibrated one with its _low/_high, and the derived rates (card_<type>_flops_per_s,
    memory_bytes_per_s, stream_bytes_per_s)."""
    return core.analysis.fpga_presets()


def target_spec(target: str | os.PathLike | Mapping | FpgaTarget) -> str | dict:
    """A preset name, or a dict the core accepts (None fields dropped). A string ending in
    ".json" (or a path object) is a card file: a JSON object with FpgaTarget's fields
    (docs/fpga-model.md, "Your own card"). An unknown preset name, an unreadable or malformed
    card file or a value of another type raises InvalidArgumentError (FpgaprofIOError for a
    file that cannot be read); the core checks the dict's fields."""
    if isinstance(target, os.PathLike) or (
        isinstance(target, str) and target.lower().endswith(".json")
    ):
        return card_file(target)
    if isinstance(target, str):
        names = [p["name"] for p in presets()]
        # Preset names are matched without regard to case ("Alveo-U55C" is alveo-u55c).
        by_lower = {n.lower(): n for n in names}
        name: str = by_lower.get(target.lower(), target)
        if name not in names:
            raise InvalidArgumentError(
                f"unknown FPGA target {target!r} ({preset_hint(target, names)}use one of "
                f"{', '.join(names)}, a card file such as my-card.json, "
                "or fpgaprof.fpga.FpgaTarget(...))"
            )
        return name
    if dataclasses.is_dataclass(target) and not isinstance(target, type):
        target = dataclasses.asdict(target)
    if not isinstance(target, Mapping):
        raise InvalidArgumentError(
            f"target={target!r}: pass a preset name ({', '.join(p['name'] for p in presets())}), "
            "a fpgaprof.fpga.FpgaTarget or a dict of its fields"
        )
    return {str(k): v for k, v in dict(target).items() if v is not None}


def preset_hint(given: str, names: list[str]) -> str:
    """did_you_mean, except between names of one length that differ only in digits: those are
    other models (alveo-u250 is a DDR4 card, not a misspelt alveo-u280; versal-v8 is a typo)."""
    low = given.lower()
    if low in names:  # another case of a preset's name
        return f"did you mean {low}? "
    # The model alone ("u55c", "V80"): the one preset whose name ends in "-<model>".
    by_model = [n for n in names if n.lower().split("-", 1)[-1] == low]
    if len(by_model) == 1:
        return f"did you mean {by_model[0]}? "
    close = closest_name(low, names)  # preset names are lower case
    if close and re.sub(r"\d", "#", close.lower()) == re.sub(r"\d", "#", low):
        return f"{given} is not a preset: describe it in a card file; "
    return did_you_mean(low, names)


def card_file(path: str | os.PathLike) -> dict:
    """The fields of a card file (a JSON object with FpgaTarget's fields, e.g. {"base":
    "alveo-u55c", "clock_hz": 250e6} or a whole card), None fields dropped. Unreadable:
    FpgaprofIOError; not JSON or not an object: InvalidArgumentError (the core then checks the
    fields themselves)."""
    try:
        text = read_text_file(path, "an FPGA card file (JSON)", CARD_FILE_MAX_BYTES)
    except FpgaprofIOError as e:
        reason = str(e).removeprefix(f"{os.fspath(path)}: ")
        raise FpgaprofIOError(
            f"FPGA card file {os.fspath(path)!r} cannot be read: {reason}"
        ) from None
    except UnicodeDecodeError as e:
        raise InvalidArgumentError(
            f"FPGA card file {os.fspath(path)!r} is not UTF-8 text ({e.reason} at byte "
            f"{e.start}): save it as UTF-8"
        ) from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise InvalidArgumentError(
            f"FPGA card file {os.fspath(path)!r} nests JSON too deeply to be a card: write one "
            'JSON object with FpgaTarget\'s fields, e.g. {"base": "alveo-u55c", "clock_hz": 250e6}'
        ) from None
    except ValueError as e:
        raise InvalidArgumentError(
            f"FPGA card file {os.fspath(path)!r} is not valid JSON ({e}): write one JSON "
            'object with FpgaTarget\'s fields, e.g. {"base": "alveo-u55c", "clock_hz": 250e6}'
        ) from None
    if not isinstance(data, dict):
        raise InvalidArgumentError(
            f"FPGA card file {os.fspath(path)!r} holds a JSON {type(data).__name__}, not an "
            'object: write {"field": value, ...} with FpgaTarget\'s fields'
        )
    return {str(k): v for k, v in data.items() if v is not None}


def resolve_target(target: str | os.PathLike | Mapping | FpgaTarget) -> dict:
    """The card as the model sees it (every field, with fp64/fp32/fp16_flops_per_s), after the
    same validation fpga_candidates applies: a quick check of a target before a long run."""
    return dict(core.analysis.fpga_target(target_spec(target)))


def row_imbalance_arg(value: Any) -> float:
    """A ``row_imbalance`` argument (the static estimate's, the trace ranking's and the
    report's) as the core takes it: 0.0 for None (not known), else the number, its range
    checked by the core (InvalidArgumentError) before any analysis runs."""
    import numpy as np

    if value is None:
        return 0.0
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidArgumentError(
            "row_imbalance must be a number >= 1 (HiSpMV's delta) or None, not "
            f"{type(value).__name__}: fpgaprof.fpga.row_imbalance(row_lengths) computes it"
        )
    core.analysis.validate_row_imbalance(float(value))
    return float(value)


def row_imbalance_given(value: Any) -> float | None:
    """A ``row_imbalance`` argument as the reports keep it: the checked ratio (row_imbalance_arg),
    or None when none is given (None, or 0: the core's "not known")."""
    return row_imbalance_arg(value) or None
