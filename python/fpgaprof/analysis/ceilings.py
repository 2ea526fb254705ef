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
import os
import re
from collections.abc import Mapping
from typing import Any

from fpgaprof.base.atomic import write_text_atomic
from fpgaprof.base.core import core

__all__ = [
    "cache_path",
    "load_measured",
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
    """Measured ceilings stored for this device: by uuid first, then by name; None if neither."""
    paths = [cache_path(device_name, uuid)] if uuid else []
    if device_name:
        paths.append(cache_path(device_name))
    for p in dict.fromkeys(paths):
        try:
            with open(p, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            continue
    return None


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


def table_ceilings(store: Any, device: int = 0) -> dict | None:
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
    replacing table values where present (each value carries its source). None without a
    device."""
    table = table_ceilings(store, device)
    if table is None:
        return None
    if use_measured:
        measured = load_measured(table.get("device_name", ""), device_uuid(store, device))
        if measured:
            table = merge_measured(table, measured)
    return table
