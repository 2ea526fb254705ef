#!/usr/bin/env python3
"""Regenerates the generated part of docs/mbirjax-findings.md from the MBIRJAX traces saved in
tests/data/traces (every *.fpgaprof there whose README line names mbirjax), through fpgaprof's
public API: fpgaprof.load, prof.roofline(by="region"), prof.transfer_report(by="region"),
prof.fpga_candidates(card, by="region", inputs_cross_link=...), the record tables and their
attribution.

Per MBIRJAX operation and size (one fpgaprof.region path of a trace; the sweep's regions are
"operation/size", examples/mbirjax_forward.py's "forward_project" and "back_project"): where each
call's wall time goes (GPU kernels, copies by direction, the rest: host work and waits while the
GPU is idle), the set-up and compilation before the timed calls where the trace shows them, the
HLO ops, jitted modules and kernels that take the GPU time, the roofline (static HLO costs, and
the counters' DRAM bytes where the trace has counters), and the FPGA what-if per card: as
compiled and restructured, each with its range, over PCIe and with the data resident on the card.

The part between <!-- findings:start --> and <!-- findings:end --> is written here; the rest of
the document is written by hand. tests/python/test_mbirjax_findings.py checks the document holds
what this script writes, and that its figures are the API's.
Usage: .venv/bin/python scripts/mbirjax_findings.py [--check]
"""
from __future__ import annotations

import collections
import dataclasses
import math
import os
import pathlib
import re
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
TRACE_DIR = ROOT / "tests" / "data" / "traces"
DOC = ROOT / "docs" / "mbirjax-findings.md"
BLOCK = "findings"


def _preset_cards() -> tuple[str, ...]:
    """Every preset card, in fpgaprof.fpga.presets()'s order: the cards every report's "best of
    N cards" takes."""
    from fpgaprof import fpga

    return tuple(p["name"] for p in fpga.presets())


CARDS = _preset_cards()
TOP = 3
NONE32 = 0xFFFFFFFF
DIRECTIONS = ("HtoD", "DtoH", "DtoD", "HtoH", "PtoP")


# ----------------------------------------------------------------------------------- traces


def readme_rows() -> dict[str, dict[str, str]]:
    """tests/data/traces/README.md's table: file -> {gpu, cupti, versions, fpgaprof, command,
    counters}. Every saved trace needs its line there."""
    rows: dict[str, dict[str, str]] = {}
    prev: dict[str, str] = {}
    text = (TRACE_DIR / "README.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        m = re.match(r"\|\s*`([^`]+\.fpgaprof)`[^|]*\|(.*)\|\s*$", line)
        if not m:
            continue
        cells = [c.strip() for c in m.group(2).split("|")]
        if len(cells) < 6:
            continue
        row = dict(zip(("gpu", "cupti", "versions", "fpgaprof", "command", "counters"), cells))
        row = {k: prev.get(k, v) if v.lower() == "same" else v for k, v in row.items()}  # "same" as above
        rows[m.group(1)] = prev = row
    return rows


def mbirjax_traces() -> list[tuple[pathlib.Path, dict[str, str]]]:
    """The saved traces of MBIRJAX programs, by file name, with their README line."""
    rows = readme_rows()
    out = []
    for path in sorted(TRACE_DIR.glob("*.fpgaprof")):
        row = rows.get(path.name)
        if row is None:
            raise SystemExit(f"{path.name} has no line in tests/data/traces/README.md: add one")
        if "mbirjax" in row["versions"].lower():
            out.append((path, row))
    return out


def mbirjax_version(row: dict[str, str]) -> str:
    m = re.search(r"mbirjax\s+([0-9][0-9.]*[0-9])", row["versions"], re.I)
    return m.group(1) if m else "?"


def operation_and_size(region: str, row: dict[str, str]) -> tuple[str, int | None]:
    """("parallel_forward_project", 64) from a sweep region "parallel_forward_project/64"; a
    region of examples/mbirjax_forward.py ("forward_project", parallel beam) takes the size of
    the command's --size."""
    from fpgaprof.api.answer import operation_and_size as named  # the answer's own reading

    op, n = named(region)
    # examples/mbirjax_forward.py's regions ("forward_project", from now "forward_project/<n>")
    if "mbirjax_forward.py" in row["command"] and not op.startswith(("parallel_", "cone_")):
        op = "parallel_" + op
    if n is not None:
        return op, n
    size = re.search(r"--size\s+(\d+)", row["command"])
    return op, int(size.group(1)) if size else None


# --------------------------------------------------------------------------------- analysis


@dataclasses.dataclass
class Unit:
    """One operation at one size in one trace: a leaf region path."""

    trace: str
    op: str
    size: int | None
    path: str
    calls: int
    wall_ns: int
    busy_ns: int                      # union of its kernels and copies
    kernel_ns: float                  # sum of kernel durations (the roofline's time)
    kernels: int
    copies: dict[str, dict[str, float]]
    before_ns: int | None             # from the previous timed block to this one's start
    modules: list[tuple[str, float]]  # jitted modules (HLO modules) by kernel time
    top_ops: list[dict[str, Any]]
    top_kernels: list[tuple[str, float, int]]
    roofline: dict[str, Any]
    fpga: dict[tuple[str, bool], dict[str, Any]]  # (card, inputs_cross_link) -> region row
    replayed: bool = False            # counters: kernels replayed, wall times are not timings


def _paths(prof: Any) -> tuple[list[str], list[Any]]:
    """Each region record's path ("outer > inner") and the records."""
    recs = list(prof.regions)
    paths: list[str] = []
    for r in recs:
        paths.append(r.name if r.parent == NONE32 else paths[r.parent] + " > " + r.name)
    return paths, recs


def _union_ns(intervals: list[tuple[int, int]]) -> int:
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def analyse(path: pathlib.Path, row: dict[str, str]) -> tuple[dict[str, Any], list[Unit]]:
    import numpy as np

    import fpgaprof

    prof = fpgaprof.load(str(path))
    name = path.name.removesuffix(".fpgaprof")
    paths, recs = _paths(prof)
    leaf_paths = [p for p in dict.fromkeys(paths) if not any(q.startswith(p + " > ") for q in paths)]

    k = prof.kernels.columns(["start_ns", "end_ns", "region_index", "name"])
    t = prof.transfers.columns(["start_ns", "end_ns", "region_index"])
    kpath = np.array([paths[i] if i != NONE32 else "" for i in k["region_index"]], dtype=object)
    tpath = np.array([paths[i] if i != NONE32 else "" for i in t["region_index"]], dtype=object)
    dur = (k["end_ns"] - k["start_ns"]).astype(np.int64)
    att = prof.attribution.kernels
    site = np.asarray(att.site_index)
    sites = att.sites
    op_info = {(o.module_name, o.hlo_op): o for o in prof.ops}

    roof = {r["region"]: dict(r) for r in prof.roofline(by="region")}
    groups = {g["region"]: g for g in prof.transfer_report(by="region")["groups"] if g["kind"] == "region_path"}
    fpga: dict[tuple[str, bool], dict[str, dict[str, Any]]] = {}
    for card in CARDS:
        for cross in (True, False):
            rows = prof.fpga_candidates(card, by="region", inputs_cross_link=cross)
            fpga[(card, cross)] = {r["region"]: dict(r) for r in rows}

    # Time before each timed block: the sweep's blocks are its per-operation trace() regions,
    # one after the other; the gap before one holds set-up, the warm-up call (compilation) and
    # the sweep's own work. Without such wrappers the warm-up ran before the trace started.
    meta = prof.meta
    tops = sorted((r.start_ns, r.end_ns, i) for i, r in enumerate(recs) if r.parent == NONE32)
    before_top: dict[int, int] = {}
    prev_end = int(meta["start_ns"])
    for s, e, i in tops:
        before_top[i] = int(s) - prev_end
        prev_end = int(e)
    wrapped = any(p.count(" > ") >= 1 for p in leaf_paths)

    units: list[Unit] = []
    for lp in leaf_paths:
        inst = [i for i, p in enumerate(paths) if p == lp]
        if lp not in roof:  # no kernel in it
            continue
        wall = sum(int(recs[i].end_ns) - int(recs[i].start_ns) for i in inst)
        km = kpath == lp
        tm = tpath == lp
        busy = _union_ns(list(zip(k["start_ns"][km].tolist(), k["end_ns"][km].tolist()))
                         + list(zip(t["start_ns"][tm].tolist(), t["end_ns"][tm].tolist())))
        by_op: dict[tuple[str, str], float] = collections.defaultdict(float)
        by_mod: dict[str, float] = collections.defaultdict(float)
        by_name: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
        for s_i, d, kn in zip(site[km].tolist(), dur[km].tolist(), k["name"][km].tolist()):
            st = sites[s_i] if s_i < len(sites) else None
            key = (st.module_name, st.hlo_op) if st is not None and st.hlo_op else ("", f"(not attributed: {kn})")
            by_op[key] += d
            by_mod[key[0] or "(not attributed)"] += d
            by_name[kn][0] += d
            by_name[kn][1] += 1
        ktotal = float(dur[km].sum())
        top_ops = []
        for (mod, op), ns in sorted(by_op.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]:
            info = op_info.get((mod, op))
            top_ops.append({"op": op, "module": mod, "ns": ns, "share": ns / ktotal if ktotal else 0.0,
                            "opcode": getattr(info, "opcode", ""), "pattern": getattr(info, "pattern", "")})
        g = groups.get(lp, {})
        copies = {d: dict(g.get("directions", {}).get(d, {})) for d in DIRECTIONS if d in g.get("directions", {})}
        op, size = operation_and_size(lp.split(" > ")[-1], row)
        before = None
        if wrapped and " > " in lp:
            parent = recs[inst[0]].parent
            while recs[parent].parent != NONE32:
                parent = recs[parent].parent
            before = before_top.get(parent)
        units.append(Unit(
            trace=name, op=op, size=size, path=lp, calls=len(inst), wall_ns=wall, busy_ns=busy,
            kernel_ns=float(roof[lp]["time_ns"]), kernels=int(km.sum()), copies=copies, before_ns=before,
            modules=sorted(by_mod.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP],
            top_ops=top_ops,
            top_kernels=[(n, v[0], int(v[1])) for n, v in sorted(by_name.items(), key=lambda kv: (-kv[1][0], kv[0]))[:TOP]],
            roofline=roof[lp],
            fpga={key: rows[lp] for key, rows in fpga.items() if lp in rows},
            replayed=len(prof.counters) > 0,
        ))
    dev = prof.devices[0] if prof.devices else None
    facts = {
        "name": name,
        "file": path.name,
        "bytes": path.stat().st_size,
        "gpu": dev.name if dev else row["gpu"],
        "mbirjax": mbirjax_version(row),
        "versions": row["versions"],
        "command": row["command"],
        "counters": row["counters"],
        "wall_ns": int(meta["end_ns"]) - int(meta["start_ns"]),
        "kernels": len(prof.kernels),
        "copies": len(prof.transfers),
        "in_units_wall_ns": sum(u.wall_ns for u in units),
        # NVML power samples (docs/energy.md): without them no GPU joules, no energy ratio.
        "gpu_energy": bool(prof.energy_report().meta.get("measured")),
    }
    units.sort(key=lambda u: (u.op, u.size or 0))
    return facts, units


# ---------------------------------------------------------------------------------- writing


def kernel_display_name(name: str) -> str:
    """A kernel's name as the reports show it (a mangled C++ symbol demangled and shortened)."""
    from fpgaprof.base.units import kernel_display_name as show

    return show(name)


def _fmt():
    from fpgaprof.base.units import fmt_bytes, fmt_s, fmt_speedup, fmt_speedup_range

    return fmt_s, fmt_bytes, fmt_speedup, fmt_speedup_range


def sp(r: dict[str, Any] | None, key: str) -> str:
    """"0.41x (0.22-0.72x)": a speedup and its range, as every report prints them."""
    _s, _b, fmt_speedup, fmt_speedup_range = _fmt()
    if r is None or not r.get("estimated", True) or not isinstance(r.get(key), (int, float)):
        return "not estimated"
    rng = fmt_speedup_range(r.get(key + "_low"), r.get(key + "_high"))
    return f"{fmt_speedup(r[key])} ({rng})" if rng else fmt_speedup(r[key])


def best(u: Unit, key: str, cross: bool) -> tuple[str, dict[str, Any]] | None:
    rows = [(c, u.fpga[(c, cross)]) for c in CARDS if (c, cross) in u.fpga and u.fpga[(c, cross)].get("estimated", True)
            and isinstance(u.fpga[(c, cross)].get(key), (int, float)) and math.isfinite(u.fpga[(c, cross)][key])]
    return max(rows, key=lambda cr: (cr[1][key], cr[1].get(key + "_high", 0.0))) if rows else None


def verdict(u: Unit, short: bool = False) -> str:
    """The FPGA answer over every preset card, for the person deciding what to hand over."""
    _s, _b, fmt_speedup, _r = _fmt()
    compiled = best(u, "region_speedup", True)
    if compiled and compiled[1]["region_speedup"] > 1:
        return (("yes, as compiled" if short else "offload as compiled")
                + f": {compiled[0]} {fmt_speedup(compiled[1]['region_speedup'])} over PCIe")
    resident = best(u, "restructured_region_speedup", False)
    if resident is None:
        if untimed(u):
            return "not estimated (no GPU time)" if short else (
                "not estimated: its kernels have no GPU time (kernel replay whose counter window could not be "
                "paired; the trace's warnings say so)")
        return "not estimated (no HLO costs)"
    card, r = resident
    if r["restructured_region_speedup"] > 1:
        return ("only restructured, data on the card" if short else
                f"only as a restructured design with the data on the card ({card} "
                f"{fmt_speedup(r['restructured_region_speedup'])})")
    if r.get("restructured_region_speedup_high", 0) > 1:
        return ("no (only the range's fast end passes 1x)" if short else
                f"no, except at the fast end of the range: {card} restructured, data on the card "
                f"{sp(r, 'restructured_region_speedup')}")
    if short:
        return "no"
    return ("no: the GPU is faster on every card, even restructured with the data on the card (best "
            f"{card} {fmt_speedup(r['restructured_region_speedup'])})")


def untimed(u: Unit) -> bool:
    """Kernels without GPU time: a replayed window whose counter ranges could not be paired."""
    return u.kernels > 0 and u.kernel_ns == 0


def _per_call(ns: float, calls: int) -> str:
    fmt_s = _fmt()[0]
    return fmt_s(ns / max(calls, 1) * 1e-9)


def _size(u: Unit) -> str:
    return f"{u.size}³" if u.size else "?"


def render(traces: list[tuple[dict[str, Any], list[Unit]]]) -> str:
    fmt_s, fmt_bytes, fmt_speedup, _r = _fmt()
    out: list[str] = []
    out.append("### Traces\n")
    out.append("| trace | GPU | JAX / MBIRJAX | what ran | counters | GPU energy | wall time traced | in the timed calls "
               "| kernels | copies |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for f, _units in traces:
        share = f["in_units_wall_ns"] / f["wall_ns"] if f["wall_ns"] else 0.0
        out.append(f"| `{f['file']}` ({fmt_bytes(f['bytes'])}) | {f['gpu']} | {f['versions']} | {f['command']} | "
                   f"{f['counters']} | {'measured' if f['gpu_energy'] else 'not measured (no NVML samples)'} | "
                   f"{fmt_s(f['wall_ns'] * 1e-9)} | {fmt_s(f['in_units_wall_ns'] * 1e-9)} "
                   f"({100 * share:.1f} %) | {f['kernels']:,} | {f['copies']:,} |")
    out.append("")
    out.append("### At a glance\n")
    out.append("Per call of each operation (the timed calls after the warm-up; instances averaged). *GPU idle* "
               "is the share of the call's wall time with neither a kernel nor a copy of it running. *FPGA, "
               f"best case* is the best of the {len(CARDS)} preset cards for the most favourable scenario the model "
               "has: "
               "a restructured design with the data resident on the card.\n")
    out.append("| operation | size | trace | calls | wall / call | GPU kernels / call | GPU idle | bound (static) | "
               "costliest HLO op (share of kernel time) | FPGA, best case | verdict |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for f, units in traces:
        for u in units:
            idle = f"{100 * (1 - u.busy_ns / u.wall_ns):.0f} %" if u.wall_ns and not u.replayed else "–"
            wall = "– (replay)" if u.replayed else _per_call(u.wall_ns, u.calls)
            top = u.top_ops[0] if u.top_ops else None
            # without kernel times no op is the costliest: "(0 %)" would rank a trivial one first
            topt = "– (no kernel times)" if untimed(u) else f"`{top['op']}` ({100 * top['share']:.0f} %)" if top else "–"
            b = best(u, "restructured_region_speedup", False)
            bt = f"{b[0]} {sp(b[1], 'restructured_region_speedup')}" if b else "not estimated"
            gpu = "no GPU time" if untimed(u) else _per_call(u.kernel_ns, u.calls)
            out.append(f"| {u.op} | {_size(u)} | {f['name']} | {u.calls} | {wall} | "
                       f"{gpu} ({u.kernels // max(u.calls, 1)} kernels) | {idle} | "
                       f"{u.roofline.get('bound', '–')} | {topt} | {bt} | {verdict(u, short=True)} |")
    out.append("")
    out.append("### Per operation and size\n")
    for f, units in traces:
        for u in units:
            out.extend(render_unit(f, u))
    return "\n".join(out).rstrip("\n") + "\n"


def render_unit(f: dict[str, Any], u: Unit) -> list[str]:
    fmt_s, fmt_bytes, fmt_speedup, _r = _fmt()
    c = max(u.calls, 1)
    out = [f"#### {u.op}, {_size(u)} ({f['name']}, region `{u.path}`)\n"]
    idle = u.wall_ns - u.busy_ns
    copy_ns = sum(d.get("busy_ns", 0) for d in u.copies.values())
    calls = f"{u.calls} call{'s' if u.calls != 1 else ''}"
    if u.replayed and untimed(u):
        out.append(f"- **Where the time goes**: not known. Its {u.kernels / c:.0f} kernels per call ran under kernel "
                   "replay for the counters, and the counter ranges of its window could not be paired with them "
                   "(the trace's warnings say how many of each): they have neither timestamps nor counter values. "
                   "The trace of the same calls without counters has the times.")
    elif u.replayed:
        out.append(f"- **Where the time goes**, per call ({calls}): GPU kernels {_per_call(u.kernel_ns, c)} "
                   f"({u.kernels / c:.0f} kernels; times from the counters' gpu__time_duration); copies "
                   f"{_per_call(copy_ns, c)}. The wall time ({_per_call(u.wall_ns, c)}) is kernel replay for the "
                   "counters, not a timing.")
    else:
        out.append(f"- **Where the time goes**, per call ({calls}): wall {_per_call(u.wall_ns, c)}; GPU kernels "
                   f"{_per_call(u.kernel_ns, c)} ({u.kernels / c:.0f} kernels); copies {_per_call(copy_ns, c)}; "
                   f"GPU idle {_per_call(idle, c)} ({100 * idle / u.wall_ns if u.wall_ns else 0:.0f} % of the wall "
                   "time: host work, launches, waits).")
    if u.copies:
        parts = [f"{d} {v.get('count', 0) / c:.0f} × {fmt_bytes(v.get('bytes', 0) / c / max(v.get('count', 0) / c, 1))} "
                 f"({fmt_bytes(v.get('bytes', 0) / c)}, {_per_call(v.get('busy_ns', 0), c)})"
                 for d, v in u.copies.items() if v.get("count")]
        if parts:
            out.append("- **Copies** per call: " + "; ".join(parts) + ".")
    if u.before_ns is not None:
        out.append(f"- **Before the timed calls**: {fmt_s(u.before_ns * 1e-9)} between the previous timed block and "
                   "this one (model set-up, the warm-up call with its XLA compilation, the sweep's own bookkeeping).")
    else:
        out.append("- **Before the timed calls**: the warm-up call (with its compilation) ran before the trace started.")
    if untimed(u):
        out.append("- **HLO ops, jitted modules and kernels** by kernel time: not ranked (no kernel times).")
    if u.top_ops and not untimed(u):
        out.append("- **HLO ops** by kernel time: " + "; ".join(
            f"`{o['op']}` in `{o['module']}` {100 * o['share']:.0f} %"
            + (f" ({o['opcode']}, {o['pattern']})" if o["opcode"] else "") for o in u.top_ops) + ".")
    if u.modules and not untimed(u):
        total = u.kernel_ns or 1.0
        out.append("- **Jitted modules** by kernel time: " + "; ".join(
            f"`{m}` {100 * ns / total:.0f} %" for m, ns in u.modules) + ".")
    if u.top_kernels and not untimed(u):
        total = u.kernel_ns or 1.0
        out.append("- **Kernels**: " + "; ".join(
            f"`{kernel_display_name(n)}` {100 * ns / total:.0f} % ({cnt / c:.0f} per call)"
            for n, ns, cnt in u.top_kernels) + ".")
    r = u.roofline
    line = (f"- **Roofline** (XLA's static costs): {fmt_bytes(r['bytes'] / c)} and {r['flops'] / c / 1e6:.3g} MFLOP per call, "
            f"intensity {r['intensity']:.2g} FLOP/B, **{r['bound']}**-bound, "
            + ("share of the roof unknown" if untimed(u) else f"{r['percent_of_roof']:.1f} % of the roof"))
    if r.get("has_measured"):
        ratio = r["bytes"] / r["measured_bytes"] if r.get("measured_bytes") else float("nan")
        line += (f". Counters: DRAM {fmt_bytes(r['measured_bytes'] / c)} per call, measured intensity "
                 f"{r['measured_intensity']:.2g} FLOP/B, {r['measured_bound']}-bound; XLA's byte count is {ratio:.2f}x "
                 "the DRAM traffic (above 1: caches served the rest; L2 traffic itself is not in the counter set yet)")
    elif untimed(u):
        line += (". Its counter values could not be paired with its kernels: DRAM traffic not measured, and "
                 "without kernel times the roofline has no rates")
    else:
        line += ". No counters in this trace: DRAM and L2 traffic not measured"
    out.append(line + ".")
    out.append("")
    out.append("| card | as compiled, over PCIe | restructured, over PCIe | as compiled, data on the card | "
               "restructured, data on the card | scenario (over PCIe / on the card) |")
    out.append("|---|---|---|---|---|---|")
    for card in CARDS:
        pc = u.fpga.get((card, True))
        res = u.fpga.get((card, False))
        out.append(f"| {card} | {sp(pc, 'region_speedup')} | {sp(pc, 'restructured_region_speedup')} | "
                   f"{sp(res, 'region_speedup')} | {sp(res, 'restructured_region_speedup')} | "
                   f"{(pc or {}).get('scenario', '–')} / {(res or {}).get('scenario', '–')} |")
    out.append("")
    out.append(f"Verdict: {verdict(u)}.\n")
    out.append(energy_line(f, u) + "\n")
    return out


def energy_line(f: dict[str, Any], u: Unit) -> str:
    """The energy beside the verdict: the card's joules per call of the best case (restructured,
    data on the card), the GPU's when the trace measured them, and the ratio and label the
    analysis gives; nothing is estimated for the GPU."""
    from fpgaprof.base.units import fmt_j, fmt_s, fmt_speedup, fmt_speedup_range

    c = max(u.calls, 1)
    b = best(u, "restructured_region_speedup", False)
    if b is None:
        card_text = "card energy not estimated (no card time)"
    else:
        card, r = b
        j, lo, hi = (r.get("restructured_card_energy" + k) for k in ("_j", "_low_j", "_high_j"))
        if not isinstance(j, (int, float)):
            card_text = f"card energy on {card} unknown (no loaded_w)"
        else:
            card_text = (f"card energy per call estimated at {card}'s loaded_w for its restructured design with the "
                         f"data on the card: {fmt_j(j / c)} ({fmt_j(lo / c)}-{fmt_j(hi / c)})")
            kept = r.get("kept_gpu_s")
            if isinstance(kept, (int, float)) and kept > 0:
                card_text += (f", the card's own design only: the {fmt_s(kept / c)} per call the model keeps on the "
                              "GPU would still spend the GPU's energy there")
    if not f["gpu_energy"]:
        return (f"Energy: GPU energy not measured (this trace has no NVML power samples); {card_text}; the energy "
                "ratio card / GPU is unknown.")
    r = b[1] if b else {}
    gpu = r.get("gpu_energy_j")
    ratio = r.get("restructured_energy_ratio")
    if not isinstance(gpu, (int, float)) or not isinstance(ratio, (int, float)):
        return f"Energy: {card_text}; GPU energy of the region not covered by the samples; ratio unknown."
    rng = fmt_speedup_range(r.get("restructured_energy_ratio_low"), r.get("restructured_energy_ratio_high"))
    return (f"Energy: GPU {fmt_j(gpu / c)} per call, attributed to the region's kernels; {card_text}; energy ratio "
            "(the region with the offload / now) "
            f"{fmt_speedup(ratio)} ({rng}): {r.get('restructured_energy_verdict')}.")


def generate() -> str:
    return render([analyse(p, row) for p, row in mbirjax_traces()])


def replace(text: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- {BLOCK}:start -->\n).*?(<!-- {BLOCK}:end -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"{DOC} has no <!-- {BLOCK}:start --> ... <!-- {BLOCK}:end --> block")
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), text)


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (argv if argv is not None else sys.argv[1:])
    os.environ.setdefault("MPLBACKEND", "Agg")
    old = DOC.read_text(encoding="utf-8")
    new = replace(old, generate())
    if new == old:
        print("up to date")
        return 0
    if check:
        print(f"out of date: {DOC.relative_to(ROOT)} (run scripts/mbirjax_findings.py)")
        return 1
    DOC.write_text(new, encoding="utf-8")
    print(f"rewrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
