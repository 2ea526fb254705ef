"""`fpgaprof compare A B`: two traces or summaries side by side, per op, region, kernel and
copy direction (time, runs, mean per run, bytes, bound), largest change first."""

from __future__ import annotations

import argparse
import json
import math
import os
from typing import Any

from fpgaprof import report
from fpgaprof.api import job
from fpgaprof.base.text import read_text_file, terminal_safe
from fpgaprof.base.units import (
    distinct_shortened,
    fit_qualified,
    fmt_bytes,
    fmt_s,
    fmt_speedup,
    kernel_display_name,
    mark_lines,
)
from fpgaprof.cli.common import PROG, failure, load_trace, out, trace_in

__all__ = ["SummaryFormatError", "summary_of", "compare_summaries", "cmd_compare"]


# summary.json's lists are capped (docs/reports.md): a few MB; far more is not a summary.
SUMMARY_MAX_BYTES = 256 << 20


class SummaryFormatError(Exception):
    """A summary.json that is not what fpgaprof writes (exit status 1, one line)."""


def _line(text: object) -> str:
    """Text from a trace or summary as one line of the table: every control character, the
    newline and carriage return too, shown escaped (base.text.terminal_safe)."""
    return terminal_safe(str(text), keep="")


# The name column: as wide as the longest name shown, from 40 to 60 characters (the width of
# prof.summary()'s kernel column); a longer name is shortened in its middle.
NAME_WIDTH = 40
NAME_WIDTH_MAX = 60


def _fit_name(r: dict, width: int) -> str:
    """A row's name as its table shows it, in `width` characters at most: escaped (_line),
    a kernel's display name, an op as module:op (base.units.fit_qualified)."""
    # escaped before the cut: a newline or CR in a name would start a line of its own (a
    # forged row)
    name = _line(r.get("display_name") or r["name"])
    return fit_qualified(name, _line(r["module"]) if r.get("module") else "", width)


def _full_name(r: dict) -> str:
    """A row's whole name as recorded (a kernel's mangled symbol too: --json's `name`),
    escaped."""
    return _line(f"{r['module']}:{r['name']}" if r.get("module") else r["name"])


def _distinct_names(rows: list[dict], width: int = NAME_WIDTH_MAX) -> tuple[list[str], list[str]]:
    """The names `rows` show, `width` characters at most and no two alike
    (base.units.distinct_shortened), and a line per mark giving that row's whole name as
    recorded."""
    shown, marks = distinct_shortened(len(rows), lambda i, w: _fit_name(rows[i], w), width)
    return shown, mark_lines(marks, lambda i: _full_name(rows[i]))


def summary_of(path: str, target: str | None) -> dict:
    """A summary dict from summary.json, a run folder or a trace file."""
    if os.path.isdir(path):
        job.refuse_trace_beside_rank_folders(path)  # the old run's summary would hide the job
        cand = os.path.join(path, "summary.json")
        if os.path.exists(cand):
            path = cand
        else:
            path = trace_in(path)
    if path.endswith(".json"):
        try:
            s = json.loads(read_text_file(path, "a summary.json", SUMMARY_MAX_BYTES))
        except RecursionError:
            raise failure(
                f"{path}: JSON nested too deeply to be a summary; give a summary.json or a trace "
                "file"
            ) from None
        except ValueError as e:
            raise failure(f"{path}: not valid JSON ({e}); give a summary.json or a trace file")
        if not isinstance(s, dict) or "schema_version" not in s:
            raise failure(f"{path}: not an fpgaprof summary.json (no schema_version)")
        return s
    return report.collect(load_trace(path), target=target, trace_path=path)


def _section(s: dict, name: str, rows_key: str) -> tuple[list, int | None, str | None]:
    """(rows, rows left out, why the section is unavailable) of one summary section."""
    sec = s.get(name)
    if sec is None:
        return [], 0, f"no {name} section"
    if not isinstance(sec, dict):
        raise SummaryFormatError(f"'{name}' is a {type(sec).__name__}, not an object")
    if sec.get("available") is False:
        return [], 0, str(sec.get("reason") or "not available")
    rows = sec.get(rows_key)
    if rows is None:
        rows = []
    if not isinstance(rows, list):
        raise SummaryFormatError(f"'{name}.{rows_key}' is a {type(rows).__name__}, not a list")
    left = sec.get("rows_left_out", 0) or 0
    if not isinstance(left, int) or isinstance(left, bool) or left < 0:
        raise SummaryFormatError(f"'{name}.rows_left_out' is not a whole number of 0 or more")
    return rows, left, None


INT64_MAX = 2**63 - 1


def _shown(v: Any) -> str:
    """A value quoted in a message: its repr, cut to 40 characters."""
    if isinstance(v, int) and v.bit_length() > 130:  # repr of a 5,000-digit int raises
        return f"an integer of about {int(v.bit_length() * 0.30103) + 1} digits"
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _number(v: Any, where: str) -> float:
    if v is None:
        return 0.0
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SummaryFormatError(f"{where} is {_shown(v)}, not a number")
    try:
        f = float(v)
    except OverflowError:
        raise SummaryFormatError(f"{where} is {_shown(v)}, beyond a float") from None
    if not math.isfinite(f):  # NaN, Infinity, 1e400: no JSON writer may pass them on
        raise SummaryFormatError(f"{where} is {_shown(v)}, not a finite number")
    return f


def _time(v: Any, where: str) -> float:
    """A time in seconds: a finite number of 0 or more (a negative time is no measurement)."""
    t = _number(v, where)
    if t < 0:
        raise SummaryFormatError(f"{where} is {_shown(v)}, not a time of 0 s or more")
    return t


def _ratio(num: float | None, den: float | None) -> float | None:
    """num / den, or None (shown as "–", null in --json) where den is 0 or unknown or the
    quotient is beyond a float (1e308 s over 9e-5 s): --json writes strict JSON."""
    if num is None or not den:
        return None
    r = num / den
    return r if math.isfinite(r) else None


def _bytes(v: Any, where: str) -> int | float | None:
    """A byte count of a row as the summary has it (None: not known), once it is known to be a
    number a float can hold."""
    if v is not None:
        _number(v, where)
    return v


def _bound(v: Any, where: str) -> str | None:
    if v is None or isinstance(v, str):
        return v
    raise SummaryFormatError(f"{where} is {_shown(v)}, not a string")


def _count(v: Any, where: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= INT64_MAX:
        # a count past int64 is no count a trace holds (and time / count raised OverflowError)
        raise SummaryFormatError(
            f"{where} is {_shown(v)}, not a whole number from 0 to {INT64_MAX:,}"
        )
    return v


def _per_run(time_s: float, count: int | None, row: dict, where: str) -> float | None:
    """Mean time of one run: the row's mean_s where it has the field (null: none of its runs
    has a duration, as in a counter replay, so the mean is unknown, not 0 s), else (an older
    summary, a region) time / count."""
    if "mean_s" in row:
        return None if row["mean_s"] is None else _time(row["mean_s"], where)
    return time_s / count if count else None


def _timed_runs(
    row: dict, time_s: float, count: int | None, mean_s: float | None, where: str
) -> int | None:
    """How many of an op row's runs have a duration: the row's timed_count, else (an older
    summary) its time over its mean (mean_s is over the timed executions), none where the mean
    is unknown, every run where the mean is 0."""
    if mean_s is None:
        return 0
    if "timed_count" in row:
        return _count(row["timed_count"], where)
    q = time_s / mean_s if mean_s > 0 else math.inf
    return round(q) if math.isfinite(q) else count


def _merged(a: dict, b: dict) -> dict:
    """Two rows of one key as one (an op's two compiled instances of its module; two region
    paths that read alike once cut): times and runs added, the mean per timed run recomputed;
    bytes and bound kept where both say the same, else None."""
    runs = (
        (a["count"] or 0) + (b["count"] or 0)
        if a["count"] is not None or b["count"] is not None
        else None
    )
    time_s = a["time_s"] + b["time_s"]
    if not math.isfinite(time_s):
        raise SummaryFormatError(f"the times of {a['name']!r} add up to more than a float holds")
    # the mean over the runs with a duration, each row's mean weighted by its timed runs: an
    # instance whose runs were not timed (a counter replay) adds runs but no time, and must not
    # halve the other's mean; a run only partly timed adds time to time_s but not to a mean
    ta, tb = a["timed"] or 0, b["timed"] or 0  # 0 where the row's mean is unknown
    timed = ta + tb
    return {
        **a,
        "time_s": time_s,
        "count": runs,
        "timed": timed,
        # as weights (a convex sum of two finite means stays finite)
        "mean_s": (a["mean_s"] or 0.0) * (ta / timed) + (b["mean_s"] or 0.0) * (tb / timed)
        if timed
        else None,
        "bytes": a["bytes"] if a["bytes"] == b["bytes"] else None,
        "bound": a["bound"] if a["bound"] == b["bound"] else None,
        "files": a.get("files", set()) | b.get("files", set()),
    }


def _source_file(v: Any) -> set[str]:
    """The file name (no folder: two installs of one package agree) of an op row's `source`
    ("/site/mbirjax/projectors.py:267"), as a set of none or one."""
    if not isinstance(v, str) or not v:
        return set()
    return {os.path.basename(v.rsplit(":", 1)[0] if ":" in v else v)}


def _kernel_modules(v: Any, where: str) -> dict[str | None, int] | None:
    """{module: launches} of a kernel row's `modules` (summary.json: the XLA modules whose ops
    launched kernels of that name; None for launches in no module); None where the summary
    does not say (an older one)."""
    if v is None:
        return None
    if not isinstance(v, list):
        raise SummaryFormatError(f"{where} is {_shown(v)}, not a list")
    out: dict[str | None, int] = {}
    for i, m in enumerate(v):
        if not isinstance(m, dict):
            raise SummaryFormatError(f"{where}[{i}] is {_shown(m)}, not an object")
        name = m.get("module")
        key = None if name is None else str(name)
        out[key] = out.get(key, 0) + (_count(m.get("count"), f"{where}[{i}].count") or 0)
    return out


def _modules_text(m: dict[str | None, int]) -> str:
    """ "jit_init 100, jit_step 10": a kernel's modules with their launches, most first."""
    parts = sorted(m.items(), key=lambda kv: (-kv[1], kv[0] or ""))
    return ", ".join(f"{k or '(no module)'} {n:,}" for k, n in parts)


def _kernel_note(x: dict | None, y: dict | None) -> str | None:
    """Why a kernel row's mean B/A is no per-launch change: its name is the kernels of several
    modules on a side (XLA names a kernel after its fusion: loop_add_fusion), or of other
    modules on each side; None where each side's launches come from one and the same module
    (or the summaries do not say)."""
    ma, mb = (x or {}).get("modules"), (y or {}).get("modules")
    parts = [
        f"in {label} {_modules_text(m)}" for label, m in (("A", ma), ("B", mb)) if m and len(m) > 1
    ]
    if parts:
        return (
            "launched by several modules, so its mean mixes their kernels ("
            + "; ".join(parts)
            + "): the op table compares each module's op"
        )
    if ma and mb and set(ma) != set(mb):
        return (
            f"other modules' kernels of one name (in A {_modules_text(ma)}; in B "
            f"{_modules_text(mb)}): the op table compares each module's op"
        )
    return None


def _entries(s: dict, kind: str) -> tuple[dict, bool, str | None]:
    """{key: entry} of one kind of row, whether the table is complete (nothing left out), and
    why it is missing. Keys: (module, op) for ops, the region path, the kernel name, the copy
    direction. Each entry: time_s (the whole trace's), count (runs: executions of the op,
    instances of the region, kernel launches, copies) and mean_s (time per run; None for
    copy directions, whose busy time is a union, not a sum of runs); a kernel's also
    display_name (kernel_display_name: demangled and shortened, as the reports show it)."""
    out: dict = {}
    key: tuple[str, str] | str
    if kind == "op":
        rows, left, why = _section(s, "ops", "items")
        bounds = {}
        roof = s.get("roofline")
        if isinstance(roof, dict) and isinstance(roof.get("points"), list):
            bounds = {
                (str(p.get("module") or ""), str(p.get("op"))): p.get("bound")
                for p in roof["points"]
                if isinstance(p, dict)
            }
        for i, r in enumerate(rows):
            where = f"ops.items[{i}]"
            if not isinstance(r, dict) or "op" not in r:
                raise SummaryFormatError(f"{where} has no 'op'")
            key = (str(r.get("module") or ""), str(r["op"]))
            t = _time(r.get("total_s"), f"{where}.total_s")
            n = _count(r.get("count"), f"{where}.count")
            mean = _per_run(t, n, r, f"{where}.mean_s")
            entry = {
                "name": key[1],
                "module": key[0] or None,
                "time_s": t,
                "count": n,
                "timed": _timed_runs(r, t, n, mean, f"{where}.timed_count"),
                "mean_s": mean,
                "bytes": _bytes(r.get("bytes"), f"{where}.bytes"),
                "bound": _bound(
                    r.get("bound") if "bound" in r else bounds.get(key), f"{where}.bound"
                ),
                # where the op comes from: XLA names ops per module by kind and order
                # (loop_add_fusion.1), so after a change of the code or of the problem size
                # one name can be another op
                "files": _source_file(r.get("source")),
            }
            if key in out:
                # The same op of another compiled instance of its module (summary.json has a
                # row per instance): one row, their times and runs added; bytes and bound
                # only where the instances agree.
                entry = _merged(out[key], entry)
            out[key] = entry
    elif kind == "region":
        rows, left, why = _section(s, "regions", "items")
        for i, r in enumerate(rows):
            where = f"regions.items[{i}]"
            if not isinstance(r, dict) or not ("path" in r or "name" in r):
                raise SummaryFormatError(f"{where} has no 'path' or 'name'")
            key = str(r.get("path") or r.get("name"))
            t = _time(r.get("wall_s"), f"{where}.wall_s")
            n = _count(r.get("count"), f"{where}.count")
            entry = {
                "name": key,
                "module": None,
                "time_s": t,
                "count": n,
                "timed": n,  # a wall time covers every instance
                "mean_s": _per_run(t, n, {}, f"{where}.mean_s"),
                "bytes": None,
                "bound": None,
            }
            # Two paths that read alike (names longer than 256 bytes are shown cut, with their
            # length: docs/reports.md, "Limits"): one row, wall times and instances added, so
            # neither is lost
            out[key] = _merged(out[key], entry) if key in out else entry
    elif kind == "kernel":
        rows, left, why = _section(s, "kernels", "top")
        for i, r in enumerate(rows):
            where = f"kernels.top[{i}]"
            if not isinstance(r, dict) or "name" not in r:
                raise SummaryFormatError(f"{where} has no 'name'")
            t = _time(r.get("total_s"), f"{where}.total_s")
            n = _count(r.get("count"), f"{where}.count")
            out[str(r["name"])] = {
                "name": str(r["name"]),
                # as report.html and prof.summary() show it: a mangled C++ symbol demangled
                # (the summary's `demangled`, else the core's) and shortened
                "display_name": kernel_display_name(
                    str(r["name"]),
                    str(r["demangled"]) if isinstance(r.get("demangled"), str) else None,
                ),
                "module": None,
                "time_s": t,
                "count": n,
                # a summary with timed_count has the mean over the launches with a duration
                # (null when none has one); an older one's is time / count
                "mean_s": _per_run(
                    t,
                    _count(r["timed_count"], f"{where}.timed_count") if "timed_count" in r else n,
                    r,
                    f"{where}.mean_s",
                ),
                "bytes": None,
                "bound": None,
                "modules": _kernel_modules(r.get("modules"), f"{where}.modules"),
            }
    else:
        rows, _, why = _section(s, "transfers", "by_direction")
        left = 0
        for i, r in enumerate(rows):
            where = f"transfers.by_direction[{i}]"
            if not isinstance(r, dict) or "direction" not in r:
                raise SummaryFormatError(f"{where} has no 'direction'")
            out[str(r["direction"])] = {
                "name": str(r["direction"]),
                "module": None,
                "time_s": _time(r.get("busy_s"), f"{where}.busy_s"),
                "count": _count(r.get("count"), f"{where}.count"),
                "mean_s": None,
                "bytes": _bytes(r.get("bytes"), f"{where}.bytes"),
                "bound": None,
            }
    return out, left == 0 and why is None, why


def compare_summaries(a: dict, b: dict) -> list[dict]:
    """Rows (kind, name, module, before/after time, runs (count_before/after: executions,
    instances, launches, copies) and mean time per run, bytes, bound, change; change_ratio is
    the whole time's B/A, mean_ratio the per-run time's), largest |change| first. Ops are
    keyed by (module, op), regions by their path. A row missing on a side whose table is
    complete is new or gone (time there: None, change against 0); missing on a side
    whose table is cut (kernels beyond the top rows, a section not available) it is unknown:
    change None, `unknown` says why, sorted last; so is an op or kernel none of whose runs on a
    side was timed (a counter replay). SummaryFormatError for a malformed input."""
    rows = []
    for kind in ("op", "region", "kernel", "transfer"):
        sides = []
        for label, s in (("A", a), ("B", b)):
            if not isinstance(s, dict):
                raise SummaryFormatError(f"{label} is not a JSON object")
            try:
                sides.append(_entries(s, kind))
            except SummaryFormatError as e:
                raise SummaryFormatError(f"{label}: {e}") from None
        (ea, full_a, why_a), (eb, full_b, why_b) = sides
        for key in sorted(set(ea) | set(eb), key=str):
            x, y = ea.get(key), eb.get(key)
            unknown = None
            if x is None and not full_a:
                unknown = f"A: {why_a}" if why_a else "A: not among its top rows"
            if y is None and not full_b:
                unknown = f"B: {why_b}" if why_b else "B: not among its top rows"
            fa: set[str] = (x or {}).get("files") or set()
            fb: set[str] = (y or {}).get("files") or set()
            same = not (fa and fb and fa.isdisjoint(fb))
            if not same:
                # one name, two ops: their times are no change of one op
                unknown = (
                    f"not the same op: A's comes from {', '.join(sorted(fa))}, B's from "
                    f"{', '.join(sorted(fb))} (XLA numbers ops of one kind in order, so a name "
                    "can be another op after a change)"
                )
            for label, side in (("A", x), ("B", y)):
                # runs without a duration (a counter replay): its time is unknown, not 0 s
                if kind in ("op", "kernel") and side and side["count"] and side["mean_s"] is None:
                    unknown = (
                        f"{label}: none of its {side['count']} runs was timed (a counter replay "
                        "leaves runs without timestamps)"
                    )
            note = _kernel_note(x, y) if kind == "kernel" else None
            ta = x["time_s"] if x else 0.0
            tb = y["time_s"] if y else 0.0
            either = x if x is not None else y
            assert either is not None  # key is in ea or eb
            rows.append(
                {
                    "kind": kind,
                    "name": either["name"],
                    # kernels only: the name as the reports show it (name: as recorded)
                    **(
                        {"display_name": either["display_name"]} if "display_name" in either else {}
                    ),
                    "module": either["module"],
                    "time_before_s": ta if x else None,
                    "time_after_s": tb if y else None,
                    "change_s": None if unknown else tb - ta,
                    "change_ratio": _ratio(tb, ta) if x and y and same else None,
                    "count_before": x["count"] if x else None,
                    "count_after": y["count"] if y else None,
                    "mean_before_s": x["mean_s"] if x else None,
                    "mean_after_s": y["mean_s"] if y else None,
                    "mean_ratio": _ratio(y["mean_s"], x["mean_s"])
                    if x and y and same and not note
                    else None,
                    "bytes_before": x["bytes"] if x else None,
                    "bytes_after": y["bytes"] if y else None,
                    "bound_before": x["bound"] if x else None,
                    "bound_after": y["bound"] if y else None,
                    "unknown": unknown,
                    # kernels: why the row is not one kernel's (several modules' launches)
                    "note": note,
                }
            )
    rows.sort(
        key=lambda r: (
            r["change_s"] is None,
            -abs(r["change_s"] or 0.0),
            r["kind"],
            r["module"] or "",
            r["name"],
        )
    )
    return rows


def _lost_records(label: str, s: dict) -> str | None:
    """The records a side's trace lost (summary.json's trace.dropped_records: CUPTI dropped
    them; trace.incomplete_records: no timestamps), which make its times lower bounds; None
    when it lost none (or does not say)."""
    t = s.get("trace")
    t = t if isinstance(t, dict) else {}
    parts = []
    for key, what in (
        ("dropped_records", "CUPTI records were dropped"),
        ("incomplete_records", "records had no timestamps"),
    ):
        n = t.get(key)
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            parts.append(f"{n:,} {what}")
    if not parts:
        return None
    return (
        f"{label}: {' and '.join(parts)}: its times are lower bounds, so a change against it "
        "may be the loss, not the program (its report's warnings say how to trace it whole)"
    )


def section_totals(rows: list[dict], a: dict, b: dict) -> dict:
    """Per kind of row, what its table adds up to, so that it reconciles with the traces: the
    times of all its rows on each side (time_before_s / time_after_s), how many rows are on
    both sides (matched), on one side only (a_only, b_only, with their times) or unknown; for
    ops also the kernel time in no op (each side's totals.kernel_time_s less its ops' times:
    kernels no HLO op launched, autotuning's among them), which no op row shows. Transfer
    directions' busy times are unions, so their sum is no total of the trace's copies."""
    out: dict = {}
    for kind in ("op", "region", "kernel", "transfer"):
        sel = [r for r in rows if r["kind"] == kind]
        if not sel:
            continue
        # one partition of the rows: a row whose change is unknown (not the same op, untimed
        # runs, the other side's table cut) is counted as unknown only, not as matched too
        known = [r for r in sel if r["change_s"] is not None]
        both = [
            r for r in known if r["time_before_s"] is not None and r["time_after_s"] is not None
        ]
        a_only = [r for r in known if r["time_after_s"] is None]
        b_only = [r for r in known if r["time_before_s"] is None]
        t = {
            "time_before_s": sum(r["time_before_s"] or 0.0 for r in sel),
            "time_after_s": sum(r["time_after_s"] or 0.0 for r in sel),
            "matched": len(both),
            "a_only": len(a_only),
            "a_only_s": sum(r["time_before_s"] for r in a_only),
            "b_only": len(b_only),
            "b_only_s": sum(r["time_after_s"] for r in b_only),
            "unknown": sum(1 for r in sel if r["change_s"] is None),
        }
        if kind == "op":
            for side, s, key in (("before", a, "time_before_s"), ("after", b, "time_after_s")):
                tot = s.get("totals")
                k = tot.get("kernel_time_s") if isinstance(tot, dict) else None
                ok = isinstance(k, (int, float)) and not isinstance(k, bool) and math.isfinite(k)
                # only where the op table is whole (rows_left_out 0): else the rest is unknown
                ops = s.get("ops")
                whole = (
                    isinstance(ops, dict)
                    and ops.get("available") is not False
                    and not ops.get("rows_left_out")
                )
                # to the ns the traces have (no float residue of the sum)
                t[f"not_in_an_op_{side}_s"] = (
                    max(round((k - t[key]) * 1e9), 0) / 1e9 if ok and whole else None
                )
        out[kind] = t
    return out


def cmd_compare(args: argparse.Namespace) -> int:
    a = summary_of(args.a, args.target)
    b = summary_of(args.b, args.target)
    try:
        rows = compare_summaries(a, b)
    except SummaryFormatError as e:
        raise failure(
            f"{args.a} vs {args.b}: malformed summary.json ({e}); regenerate it with "
            f"`{PROG} report TRACE` or compare the traces themselves"
        )

    def wall(s: dict) -> Any:
        t = s.get("trace")
        v = t.get("wall_time_s") if isinstance(t, dict) else None
        try:
            return _number(v, "trace.wall_time_s") if v is not None else None
        except SummaryFormatError:
            return None  # shown as unknown: the comparison does not need it

    wa, wb = wall(a), wall(b)
    lost = [w for w in (_lost_records("A", a), _lost_records("B", b)) if w]
    if args.json:
        doc = {
            "a": args.a,
            "b": args.b,
            "a_wall_time_s": wa,
            "b_wall_time_s": wb,
            "warnings": lost,
            "rows": rows,
            "totals": section_totals(rows, a, b),
        }
        out(json.dumps(doc, indent=1, allow_nan=False))
        return 0
    # The traces' own wall times are the whole programs' (a bigger problem, more setup): the
    # sections compare parts, and per run, so more runs do not read as slower runs.
    # the paths escaped as names are (_line): a line break in a file name would print a
    # header line of its own (a forged "B: ..." with its own wall time)
    out(
        f"A: {_line(args.a)}  whole-program wall time "
        f"{fmt_s(wa if isinstance(wa, (int, float)) else None)}\n"
        f"B: {_line(args.b)}  whole-program wall time "
        f"{fmt_s(wb if isinstance(wb, (int, float)) else None)}\n"
        "(runs: executions of an op, instances of a region, launches of a kernel, copies in a "
        "direction; mean: time per run; B/A: whole time, mean B/A: per run)"
    )
    for w in lost:
        out(f"warning: {w}")
    # What the times and bytes of each section are: ops and kernels GPU time summed over the
    # trace, regions wall time, transfer directions busy time; op bytes are one execution's
    # (the cost model's), transfer bytes all copies'. Transfer directions have no mean: their
    # busy time is a union of copies, not a sum of runs.
    heads = {
        "op": ("GPU", "bytes/exec", "runs"),
        "region": ("wall", "", "runs"),
        "kernel": ("GPU", "", "runs"),
        "transfer": ("busy", "bytes", "copies"),
    }
    totals = section_totals(rows, a, b)
    for kind, note in (
        ("op", "per HLO op (module:op), GPU time"),
        ("region", "per region (path), wall time"),
        ("kernel", "per kernel (top kernels only), GPU time"),
        ("transfer", "per transfer direction, busy time"),
    ):
        sel = [r for r in rows if r["kind"] == kind]
        if not sel:
            why = []
            for label, s in (("A", a), ("B", b)):
                try:
                    reason = _entries(s, kind)[2]
                except SummaryFormatError:
                    reason = None
                why.append(f"{label}: {_line(reason or 'no rows')}")
            out(f"\n{note}: not available in either input ({'; '.join(why)})")
            continue
        out(f"\n{note}, sorted by |change|:")
        t_head, b_head, n_head = heads[kind]
        means = kind != "transfer"
        shown_rows = sel[: args.limit]
        names, name_notes = _distinct_names(shown_rows)
        width = max(NAME_WIDTH, *(len(x) for x in names))
        header = (
            f"  {'name':{width}s} {n_head + ' A':>8s} {n_head + ' B':>8s} {t_head + ' A':>11s} "
            f"{t_head + ' B':>11s} {'change':>11s} {'B/A':>7s} "
            + (f"{'mean A':>10s} {'mean B':>10s} {'mean B/A':>8s} " if means else "")
            + f"{(b_head + ' A') if b_head else '':>12s} "
            f"{(b_head + ' B') if b_head else '':>12s}"
            # only ops have a bound (regions, kernels and transfer directions none)
             + ("  bound A→B" if kind == "op" else "")
        )
        out(header.rstrip())
        for r, name in zip(shown_rows, names):
            # fmt_speedup: a ratio below 0.1 to two significant digits, never "0.00x"
            ratio = fmt_speedup(r["change_ratio"])
            runs = [str(r[k]) if r[k] is not None else "–" for k in ("count_before", "count_after")]
            mean = ""
            if means:
                m_ratio = fmt_speedup(r["mean_ratio"])
                mean = (
                    f"{fmt_s(r['mean_before_s']):>10s} {fmt_s(r['mean_after_s']):>10s} "
                    f"{m_ratio:>8s} "
                )
            bound = ""
            if r["bound_before"] or r["bound_after"]:
                bound = _line(f"{r['bound_before'] or '–'}→{r['bound_after'] or '–'}")
            if r.get("note"):
                bound = (bound + "  " if bound else "") + f"({_line(r['note'])})"
            if r["change_s"] is None:
                change = "?"
                bound = (bound + "  " if bound else "") + f"(unknown: {_line(r['unknown'])})"
            else:
                sign = "+" if r["change_s"] > 0 else ("-" if r["change_s"] < 0 else " ")
                change = sign + fmt_s(abs(r["change_s"]))
            before = fmt_s(r["time_before_s"]) if r["time_before_s"] is not None else "absent"
            after = fmt_s(r["time_after_s"]) if r["time_after_s"] is not None else "absent"
            ba = fmt_bytes(r["bytes_before"]) if b_head else ""
            bb = fmt_bytes(r["bytes_after"]) if b_head else ""
            out(
                f"  {name:{width}s} {runs[0]:>8s} {runs[1]:>8s} {before:>11s} {after:>11s} "
                f"{change:>11s} {ratio:>7s} {mean}{ba:>12s} {bb:>12s}  {bound}".rstrip()
            )
        if len(sel) > args.limit:
            out(f"  ... {len(sel) - args.limit} more rows (--limit N, or --json for all)")
        t = totals[kind]
        # what the table adds up to: the rows left out by --limit too, and what matched
        # sums only of GPU times: nested region paths overlap, and a direction's busy time is
        # a union of its copies
        summed = kind in ("op", "kernel")
        out(
            f"  all {len(sel)} rows"
            + (f": A {fmt_s(t['time_before_s'])}, B {fmt_s(t['time_after_s'])};" if summed else ":")
            + f" on both sides {t['matched']}, A only {t['a_only']}"
            + (f" ({fmt_s(t['a_only_s'])})" if summed else "")
            + f", B only {t['b_only']}"
            + (f" ({fmt_s(t['b_only_s'])})" if summed else "")
            + (f", unknown {t['unknown']}" if t["unknown"] else "")
        )
        if kind == "op" and (t["not_in_an_op_before_s"] or t["not_in_an_op_after_s"]):
            out(
                f"  kernel time in no HLO op (not in the rows above; see the kernel table): "
                f"A {fmt_s(t['not_in_an_op_before_s'])}, B {fmt_s(t['not_in_an_op_after_s'])}"
            )
        if name_notes:
            out("  (#N: rows whose shown names would read alike; their whole names:)")
            for line in name_notes:
                out(line)
    return 0
