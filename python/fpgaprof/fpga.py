"""FPGA offload candidates and the what-if model (docs/fpga-model.md), and HLO export for HLS.

``fpga_candidates(prof, target="alveo-u55c")`` ranks HLO ops (``by="region"``: user regions)
by a documented score and estimates each one's time on the card, the host-link transfer cost
and the end-to-end speedup (Amdahl). Every input of the score is a column of the returned table.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
from typing import Any, Mapping

from fpgaprof import _core
from fpgaprof.base.atomic import write_text_atomic
from fpgaprof.base.units import fmt_s, fmt_s_range, fmt_speedup, fmt_speedup_range
from fpgaprof.base.errors import FpgaprofIOError, InvalidArgumentError, closest_name, did_you_mean
from fpgaprof.roofline import Table, _no_rows_note, _store_of, analyze

__all__ = ["FpgaTarget", "Estimate", "presets", "target_spec", "card_file", "resolve_target", "fpga_candidates",
           "estimate", "estimate_hlo", "export_hlo", "hlo_module_for_op", "CALIBRATED_FIELDS"]


# The card's calibrated quantities: each takes a nominal value and the ends of its measured
# spread as <field>_low / <field>_high (docs/fpga-model.md, "Constants").
CALIBRATED_FIELDS = ("clock_hz", "dsp_utilization", "stream_efficiency", "channel_share", "random_reads_per_s",
                     "rmw_updates_per_s", "cross_channel_factor", "onchip_share", "onchip_lanes", "sort_bytes_per_s",
                     "link_efficiency", "transfer_latency_s", "call_latency_s")


@dataclasses.dataclass(init=False)
class FpgaTarget:
    """A user FPGA card (docs/fpga-model.md, "Your own card"). ``base`` starts from a preset and
    overrides the fields given (the name is then the preset's with " (modified)" unless
    ``name`` is given); without ``base`` the card's figures are required: memory_type ("hbm2",
    "hbm2e" or "ddr4", whose measured calibration it takes), memory_channels,
    memory_channel_bytes_per_s (or memory_bytes_per_s for all channels together),
    memory_capacity_bytes, sram_bytes, link_bytes_per_s and the compute (dsp_count with
    dsps_per_fma_<type>, or <type>_flops_per_s). Each calibrated quantity (CALIBRATED_FIELDS)
    given alone is exact; give <field>_low / <field>_high for a range. Bad values raise
    fpgaprof.InvalidArgumentError naming the field."""

    name: str | None = None
    base: str | None = None
    description: str | None = None
    memory_type: str | None = None
    memory_channels: int | None = None
    memory_channel_bytes_per_s: float | None = None
    memory_bytes_per_s: float | None = None
    hbm_bytes_per_s: float | None = None
    memory_capacity_bytes: float | None = None
    sram_bytes: float | None = None
    dsp_count: int | None = None
    dsps_per_fma_fp64: float | None = None
    dsps_per_fma_fp32: float | None = None
    dsps_per_fma_fp16: float | None = None
    fp64_flops_per_s: float | None = None
    fp32_flops_per_s: float | None = None
    fp16_flops_per_s: float | None = None
    link_bytes_per_s: float | None = None
    random_granule_bytes: float | None = None
    hbm_efficiency: float | None = None
    clock_hz: float | None = None
    clock_hz_low: float | None = None
    clock_hz_high: float | None = None
    dsp_utilization: float | None = None
    dsp_utilization_low: float | None = None
    dsp_utilization_high: float | None = None
    stream_efficiency: float | None = None
    stream_efficiency_low: float | None = None
    stream_efficiency_high: float | None = None
    channel_share: float | None = None
    channel_share_low: float | None = None
    channel_share_high: float | None = None
    random_reads_per_s: float | None = None
    random_reads_per_s_low: float | None = None
    random_reads_per_s_high: float | None = None
    rmw_updates_per_s: float | None = None
    rmw_updates_per_s_low: float | None = None
    rmw_updates_per_s_high: float | None = None
    cross_channel_factor: float | None = None
    cross_channel_factor_low: float | None = None
    cross_channel_factor_high: float | None = None
    onchip_share: float | None = None
    onchip_share_low: float | None = None
    onchip_share_high: float | None = None
    onchip_lanes: float | None = None
    onchip_lanes_low: float | None = None
    onchip_lanes_high: float | None = None
    sort_bytes_per_s: float | None = None
    sort_bytes_per_s_low: float | None = None
    sort_bytes_per_s_high: float | None = None
    link_efficiency: float | None = None
    link_efficiency_low: float | None = None
    link_efficiency_high: float | None = None
    transfer_latency_s: float | None = None
    transfer_latency_s_low: float | None = None
    transfer_latency_s_high: float | None = None
    call_latency_s: float | None = None
    call_latency_s_low: float | None = None
    call_latency_s_high: float | None = None

    def __init__(self, *args: Any, **fields: Any) -> None:
        """Keyword arguments only; a field that does not exist raises InvalidArgumentError
        naming the closest one and listing all (units are in the names: _hz, _bytes_per_s, _s)."""
        names = [f.name for f in dataclasses.fields(self)]
        if "random_access_efficiency" in fields:
            raise InvalidArgumentError(
                "FPGA target field 'random_access_efficiency' is gone: the model now takes data-dependent accesses "
                "from measured rates; give random_reads_per_s (accesses per second per memory channel) instead "
                "(docs/fpga-model.md, \"Random access\")")
        if args:
            raise InvalidArgumentError(f"FpgaTarget takes keyword arguments only, e.g. "
                                       f"FpgaTarget(base={args[0]!r}), not FpgaTarget({args[0]!r})")
        for key in fields:
            if key not in names:
                raise InvalidArgumentError(f"unknown FPGA target field {key!r} ({did_you_mean(key, names)}valid fields are "
                                           f"{', '.join(names)})")
        for name in names:
            setattr(self, name, fields.get(name))


def presets() -> list[dict]:
    """The built-in cards (alveo-u55c, alveo-u280, alveo-u250, alveo-u200, versal-v80): every
    field, each calibrated one with its _low/_high, and the derived rates (card_<type>_flops_per_s,
    memory_bytes_per_s, stream_bytes_per_s)."""
    return _core.analysis.fpga_presets()


def target_spec(target: str | os.PathLike | Mapping | FpgaTarget) -> str | dict:
    """A preset name, or a dict the core accepts (None fields dropped). A string ending in
    ".json" (or a path object) is a card file: a JSON object with FpgaTarget's fields
    (docs/fpga-model.md, "Your own card"). An unknown preset name, an unreadable or malformed
    card file or a value of another type raises InvalidArgumentError (FpgaprofIOError for a
    file that cannot be read); the core checks the dict's fields."""
    if isinstance(target, os.PathLike) or (isinstance(target, str) and target.lower().endswith(".json")):
        return card_file(target)
    if isinstance(target, str):
        names = [p["name"] for p in presets()]
        if target not in names:
            raise InvalidArgumentError(f"unknown FPGA target {target!r} ({_preset_hint(target, names)}use one of "
                                       f"{', '.join(names)}, a card file such as my-card.json, "
                                       "or fpgaprof.fpga.FpgaTarget(...))")
        return target
    if dataclasses.is_dataclass(target) and not isinstance(target, type):
        target = dataclasses.asdict(target)
    if not isinstance(target, Mapping):
        raise InvalidArgumentError(f"target={target!r}: pass a preset name ({', '.join(p['name'] for p in presets())}), "
                                   "a fpgaprof.fpga.FpgaTarget or a dict of its fields")
    return {str(k): v for k, v in dict(target).items() if v is not None}


def _preset_hint(given: str, names: list[str]) -> str:
    """did_you_mean, except between names of one length that differ only in digits: those are
    other models (alveo-u250 is a DDR4 card, not a misspelt alveo-u280; versal-v8 is a typo)."""
    close = closest_name(given, names)
    if close and re.sub(r"\d", "#", close.lower()) == re.sub(r"\d", "#", given.lower()):
        return f"{given} is not a preset: describe it in a card file; "
    return did_you_mean(given, names)


def card_file(path: str | os.PathLike) -> dict:
    """The fields of a card file (a JSON object with FpgaTarget's fields, e.g. {"base":
    "alveo-u55c", "clock_hz": 250e6} or a whole card), None fields dropped. Unreadable:
    FpgaprofIOError; not JSON or not an object: InvalidArgumentError (the core then checks the
    fields themselves)."""
    import json
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise FpgaprofIOError(f"FPGA card file {os.fspath(path)!r} cannot be read ({e.strerror or e}): "
                              "check the path") from None
    except UnicodeDecodeError as e:
        raise InvalidArgumentError(f"FPGA card file {os.fspath(path)!r} is not UTF-8 text ({e.reason} at byte "
                                   f"{e.start}): save it as UTF-8") from None
    try:
        data = json.loads(text)
    except ValueError as e:
        raise InvalidArgumentError(f"FPGA card file {os.fspath(path)!r} is not valid JSON ({e}): write one JSON "
                                   "object with FpgaTarget's fields, e.g. {\"base\": \"alveo-u55c\", \"clock_hz\": 250e6}"
                                   ) from None
    if not isinstance(data, dict):
        raise InvalidArgumentError(f"FPGA card file {os.fspath(path)!r} holds a JSON {type(data).__name__}, not an "
                                   "object: write {\"field\": value, ...} with FpgaTarget's fields")
    return {str(k): v for k, v in data.items() if v is not None}


def resolve_target(target: str | os.PathLike | Mapping | FpgaTarget) -> dict:
    """The card as the model sees it (every field, with fp64/fp32/fp16_flops_per_s), after the
    same validation fpga_candidates applies: a quick check of a target before a long run."""
    return dict(_core.analysis.fpga_target(target_spec(target)))


def fpga_candidates(prof: Any, target: str | Mapping | FpgaTarget = "alveo-u55c", *,
                    by: str = "op", inputs_cross_link: bool = True, workload_s: float | None = None,
                    **kwargs: Any) -> Table:
    """HLO ops (``by="op"``, default) or user regions (``by="region"``) ranked by FPGA offload
    score, best first.

    ``by="region"``: one row per fpgaprof.region() path ("outer > inner", nested regions
    included, instances summed), the region's ops moved to the card together and data crossing
    the host link at the jitted calls inside it (docs/fpga-model.md, "Regions"). Columns: rank,
    region, name, depth, instances, kernel_count, op_count, top_op, estimate_note, gpu_time_ns,
    time_share, estimated_share, intensity, memory_boundness, pattern_affinity,
    working_set_bytes, sram_bytes, fits_on_chip, onchip_factor, host_bytes_per_instance,
    link_factor, score, module_calls, module_calls_counted, flops, bytes, random_access_bytes
    (bytes of its gather/scatter ops), memory_efficiency (the share of the card's memory peak its
    bytes got, the ops' efficiencies weighted by their bytes), card_compute_s,
    card_memory_s, card_latency_s, kept_gpu_s, card_time_s, transfer_bytes, transfer_s,
    fpga_total_s, region_speedup, workload_speedup. Nested paths overlap, so region savings
    are not combined.

    ``by="op"``: columns rank, op, module, source,
    pattern, precision, executions, cost_known, estimate_basis, measured_coverage,
    estimate_note, gpu_time_ns, time_share, intensity, ridge, memory_boundness,
    pattern_affinity, working_set_bytes, sram_bytes, fits_on_chip, onchip_factor,
    host_bytes_per_call, link_factor, score, and the what-if (docs/fpga-model.md): flops,
    bytes, stream_bytes, random_bytes, memory_efficiency (the share of the card's memory peak
    its traffic gets), card_limit, card_compute_s, card_memory_s, card_latency_s, card_time_s,
    transfer_bytes, transfer_s, fpga_total_s, op_speedup, workload_speedup (each time and
    speedup with its _low/_high range), the restructured_* columns and scenario.

    ``estimate_basis`` says what a row's what-if rests on: "static" (the cost model's rule),
    "author" (a custom kernel's own figures), or, for ops whose static cost is unknown
    (``cost_known`` False: a custom call the cost model has no rule for), a bound: "measured
    bound" (counters over ``measured_coverage`` of its time) or "operand bound" (its operands
    and results alone), where every card time is a lower bound and every speedup an upper
    bound; None when not even that is known (every field built on FLOPs or bytes NaN). Such ops
    have no score (NaN, ``fits_on_chip`` None), ``estimate_note`` says why, they come after the
    scored ops and stay out of the combined speedup; ``scenario`` is "neither" when even their
    upper bounds stay under 1 at the fast ends, else "". ``Table.meta`` holds the target, the
    combined speedup, ``not_estimated_count`` / ``not_estimated_gpu_ns``, ``bounded_count`` and
    ``ruled_out_count`` / ``ruled_out_gpu_ns``."""
    key = {"op": "candidates", "ops": "candidates", "region": "regions", "regions": "regions"}.get(by)
    if key is None:
        raise InvalidArgumentError(f"by={by!r}: use 'op' (HLO ops) or 'region' (fpgaprof.region paths)")
    res = analyze(prof, target=target, inputs_cross_link=inputs_cross_link, workload_s=workload_s, **kwargs)
    f = res["fpga"]
    t = Table(f.get(key, []))
    card = (f.get("target") or {}).get("name") or "the card"
    if key == "regions":
        t.meta = {k: f[k] for k in ("target", "workload_ns", "gpu_kernel_ns") if k in f}  # type: ignore[attr-defined]
        t.title = f"FPGA offload candidates on {card}: region paths as whole units"
        t.display = REGION_TEXT_COLUMNS
        t.empty_note = _no_rows_note(prof, "no fpgaprof.region() with GPU kernels inside", regions=True)
    else:
        t.meta = {k: v for k, v in f.items() if k not in ("candidates", "regions")}  # type: ignore[attr-defined]
        t.title = f"FPGA offload candidates on {card}: HLO ops"
        t.display = OP_TEXT_COLUMNS
        t.empty_note = _no_rows_note(prof, "no kernel was attributed to an HLO op")
        if t:
            line = combined_speedup_text(f, card)
            t.footer = f"  {line}" if line else ""
    return t


def combined_speedup_text(what_if: Mapping, card: str) -> str:
    """The Amdahl line under an op ranking (the table's footer, report.html, the run digest):
    every op that gains (op_speedup > 1) moved to `card` together, with its range, and what
    restructured designs would give; "" when the analysis has no combined figure. `what_if`:
    the FPGA result (``combined_speedup``, ``combined_count``, ``combined_speedup_low/high``,
    ``restructured_combined_speedup``, ``restructured_combined_count``)."""
    combined, count = what_if.get("combined_speedup"), what_if.get("combined_count")
    if not isinstance(combined, (int, float)) or not math.isfinite(combined):
        return ""
    rcount = what_if.get("restructured_combined_count") or 0
    restructured = what_if.get("restructured_combined_speedup")
    tail = ""
    if rcount and isinstance(restructured, (int, float)):
        tail = (f"; restructured designs: {rcount} op{'s' if rcount != 1 else ''} gain, "
                f"workload {fmt_speedup(restructured)}")
    if not count:
        return f"no op gains from offloading to {card} as compiled{tail}"
    rng = fmt_speedup_range(what_if.get("combined_speedup_low"), what_if.get("combined_speedup_high"))
    return (f"offloading the {count} op{'s' if count != 1 else ''} that gain to {card}: "
            f"workload speedup {fmt_speedup(combined)}{f' ({rng})' if rng else ''} (Amdahl){tail}")


# The columns print(prof.fpga_candidates(...)) shows (every column stays in the rows); a
# column with _low/_high companions prints its range beside it ("2.41x (1.6-3.1x)").
OP_TEXT_COLUMNS = ("rank", "op", "module", "score", "scenario", "op_speedup", "restructured_op_speedup",
                   "workload_speedup", "time_share", "gpu_time_ns", "fpga_total_s", "pattern", "card_limit",
                   "estimate_note")
REGION_TEXT_COLUMNS = ("rank", "region", "score", "scenario", "region_speedup", "restructured_region_speedup",
                       "workload_speedup", "time_share", "gpu_time_ns", "fpga_total_s", "instances",
                       "estimate_note")
# And print(fpgaprof.fpga.estimate(...)).
ESTIMATE_TEXT_COLUMNS = ("op", "opcode", "pattern", "precision", "executions", "card_time_s",
                         "restructured_card_time_s", "card_limit", "memory_efficiency", "flops", "bytes",
                         "estimate_note")


class Estimate(Table):
    """The static what-if of a whole function or HLO module on one card (``estimate()``,
    ``estimate_hlo()``): one row per op (as ``fpga_candidates()``' rows, without GPU time:
    op, computation, opcode, pattern, precision, executions, flops, bytes, stream_bytes,
    random_bytes, compulsory_bytes, card_compute_s, card_memory_s, card_latency_s (0: one
    launch for the whole function, below), card_time_s, restructured_card_time_s, each time
    with its _low_s/_high_s, memory_efficiency, card_limit, scenario, estimate_note, source)
    and the whole function as attributes, each a nominal value with its (low, high) range:
    ``card_time_s`` / ``card_time_range_s`` (everything on the card, data resident in card
    memory, one launch), ``restructured_card_time_s`` / ``restructured_card_time_range_s``,
    ``transfer_s`` / ``transfer_range_s`` (arguments to the card and results back over the host
    link, with the per-transfer latency), ``total_s`` / ``total_range_s`` (card + transfer),
    ``restructured_total_s`` / ``restructured_total_range_s``; ``transfer_bytes``,
    ``not_estimated_count``, ``notes``, ``target`` (the card as the model saw it),
    ``module``."""

    card_time_s = math.nan
    card_time_range_s: tuple = (math.nan, math.nan)
    restructured_card_time_s = math.nan
    restructured_card_time_range_s: tuple = (math.nan, math.nan)
    transfer_s = math.nan
    transfer_range_s: tuple = (math.nan, math.nan)
    total_s = math.nan
    total_range_s: tuple = (math.nan, math.nan)
    restructured_total_s = math.nan
    restructured_total_range_s: tuple = (math.nan, math.nan)
    transfer_bytes = 0.0
    not_estimated_count = 0
    notes: list = []
    target: dict = {}
    module = ""

    def summary(self) -> dict:
        """The whole-function figures as one dict (what summary.json and the CLI's --json hold)."""
        keys = ("module", "card_time_s", "card_time_range_s", "restructured_card_time_s",
                "restructured_card_time_range_s", "transfer_bytes", "transfer_s", "transfer_range_s",
                "total_s", "total_range_s", "restructured_total_s", "restructured_total_range_s",
                "not_estimated_count", "notes")
        out = {k: getattr(self, k) for k in keys}
        out["target"] = self.target.get("name")
        return out


def _static_scenario(row: Mapping) -> str:
    a, b = row.get("card_time_s"), row.get("restructured_card_time_s")
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or not (a > 0 and b > 0):
        return ""
    if not math.isfinite(a) or not math.isfinite(b):
        return ""
    return "as compiled" if a <= b * 1.01 else f"restructured {a / b:.1f}x faster"


def _estimate_table(res: Mapping) -> Estimate:
    rows = []
    for r in res["ops"]:
        r = dict(r)
        r["scenario"] = _static_scenario(r)
        rows.append(r)
    t = Estimate(rows)
    for key in ("card_time", "restructured_card_time", "transfer", "total", "restructured_total"):
        setattr(t, f"{key}_s", res[f"{key}_s"])
        setattr(t, f"{key}_range_s", (res[f"{key}_low_s"], res[f"{key}_high_s"]))
    t.transfer_bytes = res["transfer_bytes"]
    t.not_estimated_count = res["not_estimated_count"]
    t.notes = list(res["notes"])
    t.target = dict(res["target"])
    t.module = res["module"]
    card = t.target.get("name") or "the card"
    t.title = f"FPGA estimate of {res['module'] or 'the module'} on {card}: ops"
    t.display = ESTIMATE_TEXT_COLUMNS
    t.empty_note = "the module computes nothing (only parameters, constants and tuples)"

    def line(label: str, key: str) -> str:
        nominal, (lo, hi) = getattr(t, f"{key}_s"), getattr(t, f"{key}_range_s")
        return f"{label} {fmt_s(nominal)} ({fmt_s_range(lo, hi)})"

    footer = [f"  whole function on {card}: " + ", ".join([
        line("card", "card_time"), line("restructured", "restructured_card_time")]),
        "  " + ", ".join([line("host link", "transfer"), line("total", "total"),
                          line("restructured total", "restructured_total")])]
    footer += [f"  note: {n}" for n in t.notes]
    t.footer = "\n".join(footer)
    return t


def estimate_hlo(text: str, target: str | os.PathLike | Mapping | FpgaTarget = "alveo-u55c") -> Estimate:
    """The static FPGA what-if of an HLO module (XLA's text, optimized or not): every op of its
    entry computation and of the loops and calls it runs (a while body multiplied by XLA's
    known_trip_count; unknown trip counts counted once and named in ``notes``), on ``target``
    (a preset name, card file, dict or FpgaTarget), with data resident in card memory, plus the
    function's transfers over the host link. No GPU needed. Text fpgaprof cannot parse raises
    fpgaprof.HloParseError; a bad target InvalidArgumentError. docs/fpga-model.md, "Static
    estimate"."""
    if not isinstance(text, str):
        raise InvalidArgumentError(f"estimate_hlo takes HLO text (a str), not {type(text).__name__}: read the "
                                   "file first, or use fpgaprof.fpga.estimate(fn, *args) for a JAX function")
    return _estimate_table(_core.analysis.estimate_hlo(text, target_spec(target)))


def estimate(fn: Any, *args: Any, target: str | os.PathLike | Mapping | FpgaTarget = "alveo-u55c",
             **kwargs: Any) -> Estimate:
    """The static FPGA what-if of a JAX function: ``fn`` (plain or jitted) is lowered and
    compiled by XLA for the backend at hand (the CPU is fine) with ``args`` / ``kwargs``
    (arrays or ``jax.ShapeDtypeStruct``: nothing is allocated or run, so multi-GB shapes
    work), and its optimized HLO estimated as estimate_hlo() does. ``target`` is keyword-only
    (a function of your own with a ``target`` argument: pass it through functools.partial)."""
    try:
        import jax
    except ImportError:
        raise InvalidArgumentError("fpgaprof.fpga.estimate needs JAX: pip install 'fpgaprof[jax]' "
                                   "(or estimate_hlo(text) on HLO text)") from None
    if not callable(fn):
        raise InvalidArgumentError(f"estimate takes a function, not {type(fn).__name__}: "
                                   "fpgaprof.fpga.estimate(fn, *args, target=...)")
    spec = target_spec(target)  # a bad card fails before the compilation
    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
    text = jitted.lower(*args, **kwargs).compile().as_text()
    return _estimate_table(_core.analysis.estimate_hlo(text, spec))


# --- HLO export --------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*(ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*")
_CONTROL_PREDECESSORS = re.compile(r",\s*control-predecessors=\{[^}]*\}")


def _split_computations(text: str) -> dict[str, str]:
    """Computation name -> its text (header line to closing brace), as XLA prints them."""
    comps: dict[str, str] = {}
    cur: list[str] | None = None
    name = ""
    for line in text.splitlines():
        if cur is None:
            m = _HEADER.match(line)
            if m:
                name = m.group(2)
                cur = [line]
        else:
            cur.append(line)
            if line.strip() == "}":
                comps[name] = "\n".join(cur)
                cur = None
    return comps


def _preamble(text: str) -> list[str]:
    """The lines between the HloModule line and the first computation: newer XLA's stack-frame
    tables (FileNames, FunctionNames, FileLocations, StackFrames) that metadata's
    stack_frame_id refers to; copied so the exported module keeps its source lines."""
    lines = text.splitlines()
    out: list[str] = []
    for line in lines[1:]:
        if _HEADER.match(line):
            break
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    while out and not out[0].strip():
        out.pop(0)
    return out + [""] if out else []


def _balanced_end(s: str, start: int) -> int:
    """Index just past the bracket group opening at s[start] ("(", "[" or "{")."""
    depth = 0
    quoted = False
    i = start
    while i < len(s):
        ch = s[i]
        if quoted:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise InvalidArgumentError(f"unbalanced brackets in HLO text: {s[start:start + 120]!r}")


def _split_top(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _instruction_parts(text: str) -> tuple[str, str, str, str]:
    """(shape, opcode, operand list, attributes) of "%name = shape opcode(operands), attrs"."""
    m = _INSTRUCTION.match(text)
    if not m:
        raise InvalidArgumentError(f"cannot read the HLO instruction {text[:120]!r}")
    rest = text[m.end():]
    if rest.startswith("("):
        end = _balanced_end(rest, 0)
    else:
        end = len(rest.split(None, 1)[0])
    shape, rest = rest[:end], rest[end:].lstrip()
    om = re.match(r"[\w\-]+", rest)
    if not om or om.end() >= len(rest) or rest[om.end()] != "(":
        raise InvalidArgumentError(f"cannot read the HLO instruction {text[:120]!r}")
    close = _balanced_end(rest, om.end())
    return shape, om.group(0), rest[om.end() + 1:close - 1], rest[close:]


def _instruction_texts(module_text: str, mod: Any) -> dict[tuple[int, str], str]:
    """(computation index, instruction name) -> its full text (attribute lines continued on the
    following lines joined), located by the parser's line numbers."""
    lines = module_text.splitlines()
    out: dict[tuple[int, str], str] = {}
    for ci, comp in enumerate(mod.computations):
        for ins in comp.instructions:
            k = ins.line - 1
            if not (0 <= k < len(lines)) or not _INSTRUCTION.match(lines[k]):
                continue
            parts = [lines[k].strip()]
            j = k + 1
            while j < len(lines) and lines[j].strip() != "}" and not _INSTRUCTION.match(lines[j]) \
                    and not _HEADER.match(lines[j]):
                parts.append(lines[j].strip())
                j += 1
            out[(ci, ins.name)] = " ".join(parts)
    return out


def hlo_module_for_op(module_text: str, op: str) -> str:
    """A standalone HLO module computing one instruction of ``module_text`` (XLA's optimized
    HLO, any version): a fusion's fused computation becomes the ENTRY (its parameters kept); any
    other instruction gets an ENTRY whose parameters are its operands, each with the shape of
    the instruction that produced it. Every computation it calls (loop body and condition,
    reducers, comparators, nested fusions) is copied along, transitively. Raises
    InvalidArgumentError when ``op`` is not in the module or cannot stand alone."""
    mod = _core.hlo.analyze(module_text)
    hits = [(ci, ins) for ci, c in enumerate(mod.computations) for ins in c.instructions if ins.name == op]
    if not hits:
        raise InvalidArgumentError(f"instruction {op!r} is not in the module: pass an HLO op name from prof.ops")
    ci, ins = hits[0]
    comp = mod.computations[ci]
    if ins.opcode == "parameter":
        raise InvalidArgumentError(f"{op!r} is a parameter of computation {comp.name!r}: export an "
                                   "instruction that computes something")
    comp_index = {c.name: i for i, c in enumerate(mod.computations)}
    texts = _split_computations(module_text)
    root_comp = ins.called_computations[0] if ins.opcode == "fusion" and ins.called_computations else None
    needed: set[str] = set()
    stack = [root_comp] if root_comp else list(ins.called_computations)
    while stack:
        c = stack.pop()
        if c in needed:
            continue
        if c not in comp_index or c not in texts:
            raise InvalidArgumentError(f"{op!r} calls computation {c!r}, which is not in the module text")
        needed.add(c)
        for i in mod.computations[comp_index[c]].instructions:
            stack.extend(i.called_computations)
    # XLA prints callees before their callers: keep the module's order.
    ordered = sorted((c for c in needed if c != root_comp), key=comp_index.__getitem__)
    parts = [f"HloModule {re.sub(r'[^A-Za-z0-9_.-]', '_', op)}_export", ""] + _preamble(module_text)
    for c in ordered:
        parts += [re.sub(r"^(\s*)ENTRY\s+", r"\1", texts[c], count=1), ""]
    if root_comp is not None:
        first, rest = texts[root_comp].split("\n", 1)
        parts.append("ENTRY " + re.sub(r"^\s*(ENTRY\s+)?", "", first) + "\n" + rest)
    else:
        taken = set(needed) | {i.name for c in needed for i in mod.computations[comp_index[c]].instructions}
        parts.append(_entry_for_instruction(module_text, mod, ci, ins, taken))
    return "\n".join(parts) + "\n"


def _entry_for_instruction(module_text: str, mod: Any, ci: int, ins: Any, taken: set[str]) -> str:
    # XLA prints operands with their shapes ("add(f32[4]{0} %a, ...)") in older versions and
    # without ("add(%a, %b)", "add(a, b)") in current ones: each parameter takes the shape of
    # the operand's producer in the same computation, printed as XLA printed it.
    texts = _instruction_texts(module_text, mod)
    op = ins.name
    line = texts.get((ci, op))
    if line is None:
        raise InvalidArgumentError(f"cannot find the text of instruction {op!r} in the module")
    shape, opcode, operand_text, tail = _instruction_parts(line)
    operands = list(ins.operands)
    items = _split_top(operand_text)
    if operands and len(items) != len(operands):
        raise InvalidArgumentError(f"cannot match the operands of {op!r} ({operand_text[:120]!r}) to "
                                   f"{len(operands)} parsed operands")

    def fresh(base: str) -> str:
        name, k = base, 0
        while name in taken or name == op:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        return name

    params: list[tuple[str, str]] = []
    for k, (name, item) in enumerate(zip(operands, items)):
        producer = texts.get((ci, name))
        base, hash_, index = name.partition("#")
        if producer is None and hash_ and index.isdigit() and (ci, base) in texts:
            # XLA's tuple-element shorthand "%t#N": element N of the shape %t was printed with.
            tuple_shape = _instruction_parts(texts[(ci, base)])[0].strip()
            elements = _split_top(tuple_shape[1:-1]) if tuple_shape.startswith("(") else []
            if int(index) >= len(elements):
                raise InvalidArgumentError(f"operand {name!r} of {op!r}: {base!r} has shape {tuple_shape!r}, "
                                           f"which has no element {index}")
            pshape = re.sub(r"^/\*index=\d+\*/\s*", "", elements[int(index)])
        elif producer is not None:
            pshape = _instruction_parts(producer)[0]
        else:
            im = re.match(r"^(.*\S)\s+%?[\w.\-]+$", item)
            if not im:
                raise InvalidArgumentError(f"operand {name!r} of {op!r} has no producer in computation "
                                           f"{mod.computations[ci].name!r} and no printed shape")
            pshape = im.group(1)
        params.append((fresh(f"p{k}"), pshape))
    args = ", ".join(f"%{n}" for n, _ in params) if operands else operand_text
    entry = fresh("main")
    sig = ", ".join(f"{n}: {s}" for n, s in params)
    body = [f"  %{n} = {s} parameter({k})" for k, (n, s) in enumerate(params)]
    body.append(f"  ROOT %{op} = {shape} {opcode}({args}){_CONTROL_PREDECESSORS.sub('', tail)}")
    return f"ENTRY %{entry} ({sig}) -> {shape} {{\n" + "\n".join(body) + "\n}"


def _holds_instruction(text: str, op: str) -> bool:
    return re.search(r"^\s*(?:ROOT\s+)?%?" + re.escape(op) + r"\s*=", text, re.M) is not None


class HloText(str):
    """The exported module's text (a str), shown in a REPL as one line: what was written where."""

    path = ""
    op = ""

    def __repr__(self) -> str:
        return (f"<HLO module for op {self.op!r}: {self.count(chr(10)) + 1} lines, "
                f"{len(self)} characters, written to {self.path}>")


_INSTRUCTION_NAME = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=", re.M)


def _near_names(texts: list, op: str) -> list[str]:
    import difflib

    names = sorted({m.group(1) for _n, _p, t in texts for m in _INSTRUCTION_NAME.finditer(t)})
    return difflib.get_close_matches(op, names, n=3, cutoff=0.6)


def export_hlo(prof: Any, op: str, path: str | os.PathLike, module: str | int | None = None) -> str:
    """Writes the HLO of op ``op`` (from the trace's optimized modules) as a standalone module to
    ``path`` (atomically) and returns the text (an ``HloText``: a str whose repr is one line
    saying what was written where). When several different modules hold an instruction of that
    name, ``module`` (a module name or program id) picks one; without it that raises
    InvalidArgumentError listing them."""
    texts = _core.analysis.hlo_module_texts(_store_of(prof))
    if not texts:
        raise InvalidArgumentError("this trace holds no HLO modules: trace a jitted JAX function "
                                   "(fpgaprof enables the XLA dump)")
    names = sorted({name for name, _pid, _t in texts})
    if module is not None:
        chosen = [t for t in texts if t[0] == module or str(t[1]) == str(module)]
        if not chosen:
            raise InvalidArgumentError(f"module={module!r} is not in the trace: use one of {', '.join(names)} "
                                       "or a program id")
    else:
        chosen = list(texts)
    holders = [t for t in chosen if _holds_instruction(t[2], op)]
    if not holders:
        where = f"module {module!r}" if module is not None else "the trace's HLO modules"
        near = _near_names(chosen, op)
        hint = f"did you mean {', '.join(repr(n) for n in near)}? " if near else ""
        listed = ", ".join(names[:8]) + (f", ... ({len(names)} in all)" if len(names) > 8 else "")
        raise InvalidArgumentError(
            f"op {op!r} is not in {where}: {hint}pass an instruction name from prof.ops (ops "
            f"with GPU time) or from the modules in prof.hlo_modules ({listed})")
    outs: dict[str, list[str]] = {}
    for name, pid, text in holders:
        outs.setdefault(hlo_module_for_op(text, op), []).append(f"{name} (program id {pid})")
    if len(outs) > 1:
        listed = "; ".join(", ".join(v) for v in outs.values())
        raise InvalidArgumentError(f"op {op!r} is in {len(outs)} different modules ({listed}): pass "
                                   "module=<name or program id>")
    out = HloText(next(iter(outs)))
    write_text_atomic(path, out)
    out.path, out.op = os.fspath(path), op
    return out
