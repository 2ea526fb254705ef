"""Numbers as people read them, in every report: times, bytes, counts with SI prefixes,
shares, speedups and ranges. One place (as Tracy's TracyPrint): summary(), report.html, the
run digest, printed tables and the docs generators all format through these functions.

Values are rounded before the unit is chosen (``scaled``): 999.6e6 with 3 significant digits
is "1 G", not "1e+03 M". Missing values (None) and NaN/infinities read "–".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from fpgaprof.base.text import utf8_safe

__all__ = [
    "kernel_display_name",
    "scaled",
    "TIME_STEPS",
    "BYTE_STEPS",
    "NUM_PREFIXES",
    "fmt_s",
    "fmt_ns",
    "fmt_bytes",
    "fmt_num",
    "fmt_pct",
    "fmt_speedup",
    "fmt_speedup_range",
    "fmt_s_range",
    "fmt_s_ranged",
    "fmt_s_nominal",
    "is_finite_number",
    "shorten",
]


def scaled(x: float, steps: Iterable[tuple[float, str, str]]) -> str:
    """x in the largest of `steps` ((factor, unit, format spec), largest factor first, the
    last one for anything smaller) that is at most |x|, moved one step up when the value
    rounded as printed reaches the next step: 999.6e6 with 3 significant digits is "1 G",
    not "1e+03 M", 0.99996 ms with 1 decimal in µs is "1.00 ms", not "1000.0 µs", while
    999.4e6 stays "999 M". "–" for NaN and infinities."""
    x = float(x)
    if not math.isfinite(x):
        return "–"
    steps = list(steps)
    i = next((j for j, st in enumerate(steps) if abs(x) >= st[0]), len(steps) - 1)
    k, unit, spec = steps[i]
    text = format(x / k, spec)
    # the next step's factor in this step's units (1000 for SI), a hair under for float error
    if i > 0 and abs(float(text)) >= steps[i - 1][0] / k * (1 - 1e-9):
        k, unit, spec = steps[i - 1]
        text = format(x / k, spec)
    return f"{text} {unit}" if unit else text


# fmt_s: ns as integers, µs with 1 decimal, ms with 2, s with 3 ("10.3 µs", "2.25 ms").
TIME_STEPS = ((1.0, "s", ".3f"), (1e-3, "ms", ".2f"), (1e-6, "µs", ".1f"), (1e-9, "ns", ".0f"))
BYTE_STEPS = ((1e9, "GB", ".2f"), (1e6, "MB", ".2f"), (1e3, "kB", ".2f"), (1.0, "B", ".0f"))
# fmt_num: 3 significant digits under a decimal SI prefix.
NUM_PREFIXES = (
    ("E", 1e18),
    ("P", 1e15),
    ("T", 1e12),
    ("G", 1e9),
    ("M", 1e6),
    ("k", 1e3),
    ("", 1.0),
)
# fmt_ns: 3 significant digits in every unit (the HLO ops section of Profile.summary()).
_NS_STEPS = ((1e9, "s", ".3g"), (1e6, "ms", ".3g"), (1e3, "µs", ".3g"), (1.0, "ns", ".0f"))


def fmt_s(s: float | None) -> str:
    """Seconds auto-scaled ("240 ns", "10.3 µs", "2.25 ms", "1.500 s"); "0 s"; below 1 ns two
    significant digits ("0.15 ns", as fmt_s_range prints the range around it); "–" for None."""
    if s is None:
        return "–"
    if s == 0:
        return "0 s"
    if is_finite_number(s) and abs(float(s)) < 1e-9:
        return f"{float(s) * 1e9:.2g} ns"
    return scaled(s, TIME_STEPS)


def fmt_ns(ns: float) -> str:
    """Nanoseconds to 3 significant digits ("999 µs", "1 ms": rounded before the unit is
    picked)."""
    return scaled(float(ns), _NS_STEPS)


_J_STEPS = (
    (1e6, "MJ", ".3g"),
    (1e3, "kJ", ".3g"),
    (1.0, "J", ".3g"),
    (1e-3, "mJ", ".3g"),
    (1e-6, "µJ", ".3g"),
    (1e-9, "nJ", ".3g"),
)


def fmt_j(j: float | None) -> str:
    """Joules to 3 significant digits ("12.3 J", "450 µJ"); "–" for None and NaN."""
    return "–" if j is None else scaled(j, _J_STEPS)


def fmt_bytes(b: float | None) -> str:
    """Bytes in decimal SI units ("778.24 kB", "1.00 MB"); "–" for None."""
    if b is None:
        return "–"
    return scaled(b, BYTE_STEPS)


def fmt_num(x: float | None, unit: str = "") -> str:
    """A count or rate: integers under 100,000 as they are, else 3 significant digits under an
    SI prefix ("1.02 k", "2.5 GB/s" with unit "B/s"); "yes"/"no" for booleans; "–" for None."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int) and abs(x) < 100000:
        return f"{x}{(' ' + unit) if unit else ''}"
    return scaled(x, ((k, f"{p}{unit}", ".3g") for p, k in NUM_PREFIXES))


def fmt_pct(x: float | None) -> str:
    """A fraction (0..1) in percent with one decimal ("12.5 %"); "–" for None; a share above 0
    that one decimal would show as 0 is "<0.1 %" (834 µs of 43.8 s is not "0.0 %")."""
    if x is None:
        return "–"
    if 0 < 100 * x < 0.05:
        return "<0.1 %"
    return f"{100 * x:.1f} %"


def fmt_speedup(x: float | None) -> str:
    """A speedup as every report prints it: "1.91x" (two decimals); below 0.1 to two
    significant digits, "0.015x", "0.0049x", as the ends of fmt_speedup_range, so a slowdown
    never reads as 0.00x and a printed nominal never falls outside its printed range."""
    if x is None or isinstance(x, bool) or not math.isfinite(float(x)):
        return "–"
    x = float(x)
    if abs(x) >= 0.1 or x == 0:
        return f"{x:.2f}x"
    # 0.0996 rounds up to 0.10 (_sig2 keeps two significant digits into the next decade): two
    # decimals, as any speedup from 0.1 on
    return f"{_sig2(x)}x"


def is_finite_number(x: Any) -> bool:
    """True for an int or float (not a bool) that is neither NaN nor infinite."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(float(x))


def _sig2(x: float, direction: int = 0) -> str:
    """x to two significant digits without an exponent: 130, 1.3, 0.81, 0.012; rounded down
    (direction -1) or up (+1) for the ends of a range, so the printed range holds the value."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else "–"
    digits = 1 - math.floor(math.log10(abs(x)))
    scale = 10.0**digits
    # a hair of slack so an end that is already round is not moved by float error
    v = (
        math.floor(x * scale * (1 + 1e-12))
        if direction < 0
        else math.ceil(x * scale * (1 - 1e-12))
        if direction > 0
        else round(x * scale)
    ) / scale
    if abs(v) >= 10.0 ** (2 - digits) * (1 - 1e-12):
        digits -= 1  # rounded up into the next decade (0.0996 -> 0.10, not 0.100)
    return f"{v:.{max(digits, 0)}f}"


def fmt_speedup_range(low: float | None, high: float | None) -> str:
    """A speedup range as every report prints it: "1.6-3.2x", "0.0049-0.013x" (two significant
    digits, the low end rounded down and the high end up; "" when either end is missing)."""
    if low is None or high is None or not (is_finite_number(low) and is_finite_number(high)):
        return ""
    lo, hi = float(low), float(high)
    return f"{_sig2(lo, -1)}-{_sig2(hi, +1)}x"


def fmt_s_range(low: float | None, high: float | None) -> str:
    """A time range: "0.81-2.1 ms", "130-410 ms" (two significant digits, the low end rounded
    down and the high end up, both in the unit of the upper one), "" when either end is
    missing."""
    if low is None or high is None or not (is_finite_number(low) and is_finite_number(high)):
        return ""
    lo, hi = float(low), float(high)
    k, unit, _ = _range_step(hi)
    return f"{_sig2(lo / k, -1)}-{_sig2(hi / k, +1)} {unit}"


def _range_step(high: float) -> tuple[float, str, str]:
    """The TIME_STEPS step a time range ending at `high` is printed in: that of `high`, one up
    when `high` rounded up as printed reaches it (999.96 µs is "1.0 ms", not "1000 µs")."""
    i = next((j for j, st in enumerate(TIME_STEPS) if abs(high) >= st[0]), len(TIME_STEPS) - 1)
    if i > 0 and abs(float(_sig2(high / TIME_STEPS[i][0], +1))) >= 1000:
        i -= 1
    return TIME_STEPS[i]


def fmt_s_ranged(nominal: float | None, low: float | None, high: float | None) -> str:
    """A time with its range, both in the range's unit: "0.980 s (0.81-1.2 s)", not
    "980.00 ms (0.81-1.2 s)". The nominal as fmt_s prints it where the range does not hold it
    (or it is under a nanosecond); the nominal alone where there is no range."""
    rng = fmt_s_range(low, high)
    return fmt_s_nominal(nominal, low, high) + (f" ({rng})" if rng else "")


def fmt_s_nominal(nominal: float | None, low: float | None, high: float | None) -> str:
    """The nominal of fmt_s_ranged alone: in the unit fmt_s_range prints `low`-`high` in, with
    fmt_s's decimals for that unit, or three significant digits below 1 of it ("0.541 ms" beside
    "0.22-1.7 ms"); as fmt_s prints it without a range, outside it or under a nanosecond."""
    if not (is_finite_number(nominal) and is_finite_number(low) and is_finite_number(high)):
        return fmt_s(nominal)
    x, lo, hi = float(nominal), float(low), float(high)  # type: ignore[arg-type]
    k, unit, spec = _range_step(hi)
    if abs(x) < 1e-9 or not lo * (1 - 1e-9) <= x <= hi * (1 + 1e-9):
        return fmt_s(x)
    v = x / k
    return f"{format(v, spec if abs(v) >= 1 else '#.3g')} {unit}"


def shorten(text: str, width: int, keep: str = "start") -> str:
    """`text` cut to `width` characters with a "…" where it was cut, when it was longer: its
    start kept (keep="start", the "…" last), its end (keep="end", "…/parallel_beam.py:450"),
    or both ends (keep="ends": "jit__sparse_forw…input_scatter_fusion.1", so names that differ
    only at the end, as XLA's numbered ops do, still differ)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    if keep == "end":
        return "…" + text[-(width - 1) :]
    if keep == "ends":
        head = (width - 1) // 2
        return text[:head] + "…" + text[len(text) - (width - 1 - head) :]
    if keep != "start":
        raise ValueError(f"keep={keep!r}: give 'start', 'end' or 'ends'")
    return text[: width - 1] + "…"


def fit_qualified(name: str, qualifier: str, width: int, form: str = "{q}:{n}") -> str:
    """`name` with its `qualifier` (an op's module) in `form`, in `width` characters at most:
    a long one loses its qualifier's middle first (12 characters kept), then its name's
    (shorten keep="ends"), so the ends that tell names apart stay: `fusion.3` and `fusion.4`,
    `jit_a` and `jit_b`. No qualifier: the name alone."""
    if not qualifier:
        return shorten(name, width, "ends")
    whole = form.format(q=qualifier, n=name)
    if len(whole) <= width:
        return whole
    extra = len(whole) - len(qualifier) - len(name)  # the form's own characters
    room = width - extra - len(name)
    if room >= 12:
        return form.format(q=shorten(qualifier, room, "ends"), n=name)
    # the qualifier keeps 12 characters, or all of a shorter one: the name has the rest
    q = shorten(qualifier, 12, "ends")
    return form.format(q=q, n=shorten(name, width - extra - len(q), "ends"))


def distinct_shortened(
    count: int, fit: Callable[[int, int], str], width: int
) -> tuple[list[str], dict[int, int]]:
    """The texts of `count` rows in `width` characters at most and no two alike: row i's text
    is fit(i, w) (w: the characters it may take); rows that still read alike, shortened or
    even whole (two instances of one C++ template both show as
    `cub::…::DeviceSegmentedRadixSortKernel<…>`), end in " #1", " #2", …. Returns the texts
    and row -> mark, for a line per mark that gives the row's whole name."""
    shown = [fit(i, width) for i in range(count)]
    alike: dict[str, list[int]] = {}
    for i, text in enumerate(shown):
        alike.setdefault(text, []).append(i)
    # Each mark is a number no other row has, at the end: marked names never read alike. A
    # marked name that reads as a row not marked (a name that itself ends in " #3") marks that
    # row too. Every row is marked once at most: count fits, not count rounds of them.
    single = {ix[0]: text for text, ix in alike.items() if len(ix) == 1}
    owner = {text: i for i, text in single.items()}  # the shown texts that are taken, by row
    queue = [i for ix in alike.values() if len(ix) > 1 for i in ix]
    queued = set(queue)
    marks: dict[int, int] = {}
    n = 0
    for i in queue:  # grows while it is walked
        n += 1
        marks[i] = n
        tag = f" #{n}"
        shown[i] = fit(i, width - len(tag)) + tag
        j = owner.get(shown[i])
        if j is not None and j not in queued:
            queue.append(j)
            queued.add(j)
        owner[shown[i]] = i
    return shown, marks


def mark_lines(marks: dict[int, int], whole: Callable[[int], str]) -> list[str]:
    """A line per mark of distinct_shortened, in mark order: "  #k: " and row i's whole name
    (whole(i)), under the table that shows the marked rows."""
    return [f"  #{k}: {whole(i)}" for i, k in sorted(marks.items(), key=lambda x: x[1])]


def kernel_display_name(name: str, demangled: str | None = None) -> str:
    """A kernel name for tables: a mangled C++ symbol ("_ZN3cub...", as CUPTI reports it)
    demangled (``demangled``, or the core's demangle_kernel_name) and cut to its qualified name
    with template arguments and parameters elided, its middle namespaces too
    ("cub::…::DeviceSegmentedRadixSortKernel<…>"); XLA's and Triton's plain names unchanged."""
    if demangled is None:
        from fpgaprof.base.core import core

        # the core takes UTF-8 only: a name with a lone surrogate (a hand-written
        # summary.json's "\ud800") goes escaped, as no C++ symbol holds one
        safe = utf8_safe(name)
        demangled = str(core.attribution.demangle_kernel_name(safe))
        if demangled == safe:
            return name
    if demangled == name:
        return name
    # "(anonymous namespace)" is a scope, not the parameter list: kept as one word. Braces
    # ("{lambda(int)#1}") are kept whole, their parentheses not read as parameters either.
    demangled = demangled.replace("(anonymous namespace)", "{anonymous}")
    head, depth, braces = [], 0, 0
    for ch in demangled:
        if depth == 0 and (braces or ch == "{"):
            braces += {"{": 1, "}": -1}.get(ch, 0)
            head.append(ch)
            continue
        if ch == "(" and depth == 0:
            break  # the parameter list
        if ch in "<(":
            if depth == 0:
                head.append("<…>")
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            head.append(ch)
    text = "".join(head).strip()
    text = text.rsplit(" ", 1)[-1] if " " in text else text  # the return type
    parts = text.split("::")
    return "::".join([parts[0], "…", parts[-1]]) if len(parts) > 2 else text
