"""The dumped HLO modules a trace needs, copied into its store when the trace ends.

``attach_hlo_modules(store)`` reads the optimized HLO modules XLA dumped, with their buffer
assignments and live ranges where XLA wrote them, (those the trace's
XlaModule ranges or kernel names refer to; fpgaprof.capture.xla_flags) and adds them to the
store, so that the trace file carries them and the analysis can attribute kernels to HLO ops.
"""

from __future__ import annotations

from typing import Any

from fpgaprof.capture import xla_flags

__all__ = ["attach_hlo_modules"]


def _names(table: Any, column: str = "name") -> list[str]:
    """String column of a store table (api engineer's binding), tolerant of its shape."""
    if table is None:
        return []
    cols = getattr(table, "columns", None)
    if callable(cols):
        try:
            c = cols([column])
            return [str(x) for x in c[column]]
        except Exception:  # noqa: BLE001 - fall back to row access
            pass
    out = []
    for row in table:
        v = row.get(column) if isinstance(row, dict) else getattr(row, column, None)
        if v is not None:
            out.append(str(v))
    return out


def _kernels_outside_module_ranges(store: Any, markers: list[str], names: list[str]) -> list[str]:
    """Of the kernels' ``names``, those no XlaModule NVTX range encloses (their launch's
    innermost range on its thread, up through the ranges' parents, is no ``XlaModule:#...#``):
    the modules their names are found in are added. A kernel inside a module range has its
    module named by the range; looking its name up too added modules that merely share a
    fusion name (on the H100/H200 traces, 2-14 modules to which no kernel was attributed)."""
    # ranges that name no module (neither a program id nor a name) say nothing of any kernel's
    if not any(xla_flags.module_range_ids(markers)):
        return names
    try:
        kc = store.kernels.columns(["marker_index"])
        parents = [int(x) for x in store.markers.columns(["parent"])["parent"]]
        marker_of = [int(x) for x in kc["marker_index"]]
    except Exception:  # noqa: BLE001 - an older store: every kernel, as before
        return names
    in_module: dict[int, bool] = {}  # marker index -> inside an XlaModule range

    def inside(m: int) -> bool:
        chain: list[int] = []
        while 0 <= m < len(markers) and m not in in_module and len(chain) <= len(markers):
            chain.append(m)
            if markers[m].startswith("XlaModule:#"):
                break
            m = parents[m]
        found = in_module.get(m, False) or (
            0 <= m < len(markers) and markers[m].startswith("XlaModule:#")
        )
        for c in chain:
            in_module[c] = found
        return found

    return [n for n, m in zip(names, marker_of) if not inside(m)]


def attach_hlo_modules(store: Any, setup: xla_flags.XlaSetup | None = None) -> int:
    """Adds the dumped HLO modules this trace uses to ``store`` (skipping ones it already has).

    Returns how many were added. Warnings (no dump, jax started first) go to the store's
    warnings. Never raises for I/O problems: a module that cannot be read is skipped.
    """
    setup = setup or xla_flags.current()
    for w in setup.warnings:
        _add_warning(store, w, "capture.process_setup")
    # Our flag only took effect if XLA had not parsed its flags before fpgaprof set them.
    ours_too_late = (
        setup.backend_already_started and "--xla_gpu_enable_command_buffer=" in setup.flags_added
    )
    set_meta = getattr(store, "set_meta", None)
    if callable(set_meta):
        set_meta(
            command_buffers_disabled=bool(setup.command_buffers_disabled and not ours_too_late)
        )
    markers = _names(getattr(store, "markers", None))
    all_kernels = _names(getattr(store, "kernels", None))
    kernels = _kernels_outside_module_ranges(store, markers, all_kernels)
    have = {(m.name, m.program_id) for m in (getattr(store, "hlo_modules", None) or [])}
    added = 0
    for mod in xla_flags.modules_for_trace(markers, kernels, setup):
        if (mod.name, mod.program_id) in have:
            continue
        store.add_hlo_module(
            mod.name,
            mod.program_id,
            mod.text,
            buffer_assignment=mod.buffer_assignment,
            live_ranges=mod.live_ranges,
        )
        have.add((mod.name, mod.program_id))
        added += 1
    if all_kernels and added == 0 and not have and setup.dump_as_text:
        _add_warning(
            store,
            (
                "no optimized HLO was found for the traced kernels in "
                + (setup.dump_dir or "?")
                + ": kernels get HLO op names from XLA's NVTX ranges only, without costs or source "
                "lines. Import fpgaprof before JAX starts (or use `fpgaprof run`), and keep "
                "JAX's persistent compilation cache off while profiling."
            ),
            "capture.hlo_dump",
        )
    elif setup.dump_as_text and (
        missing := _modules_missing(ranges := xla_flags.module_ranges(markers), markers, have)
    ):
        # Some modules were found, not all: the others' kernels get no HLO costs either.
        _add_warning(store, _missing_modules_text(missing, len(ranges), setup), "capture.hlo_dump")
    xla_flags.prune_dump_dir(setup)
    return added


MISSING_NAMED = 5  # modules named in the partial-miss warning; the rest counted


def _modules_missing(
    ranges: list[tuple[str, Any]], markers: list[str], have: set[tuple[str, int]]
) -> list[tuple[str, Any]]:
    """The modules the trace's XlaModule ranges name (`ranges`, xla_flags.module_ranges of
    `markers`) that the store has not got: matched by program id where the range gives one,
    else by name."""
    pids = {p for _, p in have}
    names = {n for n, _ in have}
    # XLA's autotuner times a fusion alone in a module named after it, which XLA neither
    # numbers (no program id) nor dumps (attribution.cpp: "XLA autotuning"): not missing.
    thunk_ops = xla_flags.thunk_ops(markers)
    return [
        (n, p)
        for n, p in ranges
        if (p not in pids if p is not None else n not in names and n not in thunk_ops)
    ]


def _missing_modules_text(missing: list[tuple[str, Any]], named: int, setup: Any) -> str:
    """The partial-miss warning: `missing` of the `named` modules the ranges name."""
    shown = ", ".join(
        (f"{n or '?'} (program id {p})" if p is not None else n) for n, p in missing[:MISSING_NAMED]
    )
    if len(missing) > MISSING_NAMED:
        shown += f" and {len(missing) - MISSING_NAMED} more"
    return (
        f"{len(missing)} of the {named} HLO modules the trace's XlaModule ranges name "
        f"{'was' if len(missing) == 1 else 'were'} not found in {setup.dump_dir or '?'}: "
        f"{shown}. Their kernels get HLO op names from XLA's NVTX ranges only, without costs or "
        "source lines. Check that XLA dumps every module there (no --xla_dump_hlo_module_re "
        "in XLA_FLAGS, the dump folder not cleaned while the program runs) and that fpgaprof "
        "is imported before JAX starts (or use `fpgaprof run`)."
    )


def _add_warning(store: Any, text: str, code: str) -> None:
    """Adds `text` under `code` (base.diagnostics) unless the store has it already."""
    meta = getattr(store, "meta", None)
    if isinstance(meta, dict):
        existing = list(meta.get("warnings") or [])
    else:
        existing = list(getattr(meta, "warnings", []) or []) if meta is not None else []
    if text in existing:
        return
    add = getattr(store, "add_warning", None)
    if callable(add):
        add(text, code)
