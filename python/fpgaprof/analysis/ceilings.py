"""The traced GPU's ceilings: peak FLOP/s per precision, DRAM and host-link bandwidth, each with
its source. The C++ table per architecture gives them (docs/roofline.md, "Ceilings"); values
measured by ``fpgaprof calibrate`` on this GPU, stored per GPU, replace table values where
present and are labelled "measured".

Measured ceilings are stored atomically in ``$XDG_CACHE_HOME/fpgaprof/ceilings-<key>.json``
(default ``~/.cache``), key = the GPU's UUID when known, else its name; ``load_measured()``
looks up the UUID first, then the name.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from collections.abc import Mapping
from typing import Any

from fpgaprof.base import result_rows
from fpgaprof.base.atomic import write_text_atomic
from fpgaprof.base.core import core
from fpgaprof.base.errors import FpgaprofIOError, FpgaprofWarning
from fpgaprof.base.text import read_text_file

__all__ = [
    "cache_path",
    "load_measured",
    "check_measured",
    "MEASURED_MAX_BYTES",
    "save_measured",
    "merge_measured",
    "table_ceilings",
    "ceilings",
    "device_uuid",
]


def cache_path(device_name: str, uuid: str = "") -> str:
    """Where the measured ceilings of a device are stored: keyed by uuid when given, else name."""
    key = re.sub(r"[^A-Za-z0-9_.-]+", "_", uuid or device_name or "unknown")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fpgaprof", f"ceilings-{key}.json")


def load_measured(device_name: str, uuid: str = "") -> dict | None:
    """Measured ceilings stored for this device: by uuid first, then by name; None if neither
    exists. A cache file that exists but cannot be used (not a regular file, over
    MEASURED_MAX_BYTES, not UTF-8 JSON, not an object, a rate that is not a finite positive
    number) raises FpgaprofIOError naming it and the fix (never a hang on a FIFO)."""
    paths = [cache_path(device_name, uuid)] if uuid else []
    if device_name:
        paths.append(cache_path(device_name))
    for p in dict.fromkeys(paths):
        if not os.path.lexists(p):
            continue
        return check_measured(p, _read_measured(p))
    return None


# A calibrate result is under a kilobyte; a cache file much larger is not one.
MEASURED_MAX_BYTES = 1 << 20
_FIX = "delete it, or run `fpgaprof calibrate` on this GPU again to rewrite it"


def _read_measured(path: str) -> Any:
    what = "a measured-ceilings file (JSON)"
    try:
        text = read_text_file(path, what, MEASURED_MAX_BYTES)
    except FpgaprofIOError as e:
        reason = (
            str(e).removeprefix(f"{path}: ").split(": give ")[0].removesuffix(": check the path")
        )
        raise FpgaprofIOError(f"measured-ceilings cache {path}: {reason}: {_FIX}") from None
    except UnicodeDecodeError as e:
        raise FpgaprofIOError(
            f"measured-ceilings cache {path} is not UTF-8 text ({e.reason} at byte {e.start}): "
            f"{_FIX}"
        ) from None
    try:
        return json.loads(text)
    except RecursionError:
        raise FpgaprofIOError(
            f"measured-ceilings cache {path} nests JSON too deeply to be one: {_FIX}"
        ) from None
    except ValueError as e:
        raise FpgaprofIOError(
            f"measured-ceilings cache {path} is not valid JSON ({e}): {_FIX}"
        ) from None


def _rate(path: str, key: str, v: Any) -> float:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    x = float(v) if ok and abs(v) < 1e308 else math.nan
    if not (math.isfinite(x) and x > 0):
        shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:40] + "..."
        raise FpgaprofIOError(
            f"measured-ceilings cache {path}: {key} = {shown} is not a positive number: {_FIX}"
        )
    return x


def check_measured(path: str, data: Any) -> dict:
    """The measured ceilings read from `path` with each rate checked (a finite number above 0;
    null or absent: not measured); anything else raises FpgaprofIOError naming the field."""
    if not isinstance(data, dict):
        raise FpgaprofIOError(
            f"measured-ceilings cache {path} holds a JSON {type(data).__name__}, not an "
            f"object: {_FIX}"
        )
    out = dict(data)
    for key in ("dram_bytes_per_s", "link_bytes_per_s"):
        if data.get(key) is not None:
            out[key] = _rate(path, key, data[key])
    flops = data.get("peak_flops_per_s")
    if flops is not None:
        if not isinstance(flops, dict):
            raise FpgaprofIOError(
                f"measured-ceilings cache {path}: peak_flops_per_s is a JSON "
                f"{type(flops).__name__}, not an object of precision: FLOP/s: {_FIX}"
            )
        out["peak_flops_per_s"] = {
            str(k): _rate(path, f"peak_flops_per_s.{k}", v)
            for k, v in flops.items()
            if v is not None
        }
    for key in ("measured_at", "device_name", "device_uuid"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise FpgaprofIOError(
                f"measured-ceilings cache {path}: {key} is a JSON {type(data[key]).__name__}, "
                f"not a string: {_FIX}"
            )
    return out


def save_measured(path: str, data: Mapping) -> None:
    """Writes measured ceilings (a calibrate result) to `path` atomically, as JSON."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True))


def merge_measured(table: Mapping, measured: Mapping) -> dict:
    """Table ceilings with measured values replacing them (sources set to "measured")."""
    out = json.loads(json.dumps(dict(table)))
    for prec, v in (measured.get("peak_flops_per_s") or {}).items():
        if v and prec in out["peak_flops_per_s"]:
            out["peak_flops_per_s"][prec] = float(v)
            out["flops_source"][prec] = "measured"
    if measured.get("dram_bytes_per_s"):
        out["dram_bytes_per_s"] = float(measured["dram_bytes_per_s"])
        out["dram_source"] = "measured"
    if measured.get("link_bytes_per_s"):
        out["link_bytes_per_s"] = float(measured["link_bytes_per_s"])
        out["link_source"] = "measured"
        day = str(measured.get("measured_at") or "")[:10]  # "2026-11-22T..." -> the date
        out["link_description"] = (
            "measured by fpgaprof calibrate"
            + (f" on {day}" if day else "")
            + (f" ({out['link_description']})" if out.get("link_description") else "")
        )
    return out


def table_ceilings(store: Any, device: int = 0) -> result_rows.Ceilings | None:
    """The architecture table's ceilings of GPU `device` of the store (None without one)."""
    return core.analysis.table_ceilings(store, device)


def device_uuid(store: Any, device: int) -> str:
    """The UUID of GPU `device` of the store ("" when unknown)."""
    try:
        devs = store.devices
        devs = devs() if callable(devs) else devs
        d = devs[device]
        return str((d.get("uuid") if isinstance(d, Mapping) else getattr(d, "uuid", "")) or "")
    except Exception:  # noqa: BLE001 - no device record: look the measurement up by name
        return ""


def ceilings(store: Any, device: int = 0, *, use_measured: bool = True) -> dict | None:
    """Peak FLOP/s per precision, DRAM and host-link bandwidth of GPU `device` of the store: the
    per-architecture table, with values measured by ``fpgaprof.calibrate.run()`` on this GPU
    replacing table values where present (each value carries its source). A cache file that
    cannot be used (load_measured) is named in a FpgaprofWarning and the table's values are
    used. None without a device."""
    found = table_ceilings(store, device)
    if found is None:
        return None
    table: dict = dict(found)
    if use_measured:
        try:
            measured = load_measured(table.get("device_name", ""), device_uuid(store, device))
        except FpgaprofIOError as e:
            # a damaged cache costs its measurements, not the analysis: said, table values used
            warnings.warn(f"{e} (the table's ceilings are used)", FpgaprofWarning, stacklevel=2)
            measured = None
        if measured:
            table = merge_measured(table, measured)
    return table
