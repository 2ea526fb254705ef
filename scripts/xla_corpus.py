#!/usr/bin/env python3
"""XLA's HLO test corpus through fpgaprof and through XLA itself.

Every module of the corpus (FPGAPROF_XLA_HLO_CORPUS, default /work/shared/corpora/xla-hlo: HLO
text from openxla/xla's tests, every one accepted by XLA's parser) is parsed and costed twice,
in worker processes with a time limit per module:

* fpgaprof: ``fpgaprof.hlo.analyze(text)`` (module FLOPs, transcendentals, bytes accessed);
* XLA: ``hlo_module_from_text`` and ``hlo_module_cost_analysis`` on a CPU client (jaxlib), i.e.
  XLA's base ``HloCostAnalysis`` with the CPU shape-size function.

Reports parse failures by cause, and over the modules without custom calls, FLOP and byte
agreement (within 1 %) and the modules differing per opcode (modules differing / modules having
the opcode). The figures of docs/hlo-validation.md come from here; the CI test
(tests/python/test_hlo_xla_corpus.py) runs the same code.

    scripts/xla_corpus.py [--jobs N] [--timeout S] [--json out.json] [--list] [--only NAME...]
"""
from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import pathlib
import re
import sys
import time

DEFAULT_CORPUS = "/work/shared/corpora/xla-hlo"
TOLERANCE = 0.01  # relative, on module FLOPs and on module bytes accessed


def corpus_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("FPGAPROF_XLA_HLO_CORPUS") or DEFAULT_CORPUS)


def corpus_files(root: pathlib.Path | None = None) -> list[pathlib.Path]:
    return sorted((root or corpus_dir()).glob("*.hlo"))


# ---- one module, in a worker ------------------------------------------------------------------

_OPCODE_RE = re.compile(r"^\s*(?:ROOT\s+)?%?[^\s=]+\s*=\s*.*?\b([a-z][a-z0-9-]*)\(", re.M)


def _fpgaprof_side(text: str) -> dict:
    import fpgaprof

    try:
        m = fpgaprof.hlo.analyze(text)
    except fpgaprof.HloParseError as e:
        return {"status": "parse_error", "message": str(e), "line": e.line, "column": e.column}
    except Exception as e:  # an untyped error: a bug
        return {"status": "error", "message": f"{type(e).__name__}: {e}"}
    opcodes = set()
    custom = 0
    for comp in m.computations:
        for i in comp.instructions:
            opcodes.add(i.opcode)
            custom += i.opcode in CUSTOM_CALL_OPCODES
    out = {"status": "ok", "flops": m.flops, "transcendentals": m.transcendentals,
           "bytes": m.bytes_accessed, "custom_calls": custom, "opcodes": sorted(opcodes)}
    if custom:
        out["xla_convention"] = dict(zip(("flops", "transcendentals", "bytes"), xla_convention(m)))
    return out


CUSTOM_CALL_OPCODES = ("custom-call", "custom-call-start")


def xla_convention(m) -> tuple[float, float, float]:
    """fpgaprof's module totals with every custom call charged as XLA's HloCostAnalysis charges
    it (-1 FLOPs, -1 bytes: "unknown"), summed up through loops, calls, branches and fusions as
    XLA sums sub-computations. The one deliberate difference on modules with custom calls is
    that fpgaprof costs them (cuBLAS, cuDNN, the author's figures) or bounds them; with it
    taken out, the totals must be XLA's."""
    comps = {c.name: c for c in m.computations}
    memo: dict = {}
    has_cc: dict = {}

    def contains_cc(name, depth=0):
        if name in has_cc:
            return has_cc[name]
        has_cc[name] = False
        found = False
        for i in comps[name].instructions if name in comps else []:
            if i.opcode in CUSTOM_CALL_OPCODES or (depth < 64 and any(contains_cc(c, depth + 1) for c in i.called_computations)):
                found = True
                break
        has_cc[name] = found
        return found

    def comp_cost(name):
        if name in memo:
            return memo[name]
        memo[name] = (0.0, 0.0, 0.0)
        total = [0.0, 0.0, 0.0]
        for i in comps[name].instructions if name in comps else []:
            for k, v in enumerate(ins_cost(i)):
                total[k] += v
        memo[name] = tuple(total)
        return memo[name]

    def ins_cost(i):
        op = i.opcode
        own = (i.flops, i.transcendentals, i.bytes_accessed)
        if op in CUSTOM_CALL_OPCODES:
            return (-1.0, 0.0, -1.0)
        called = list(i.called_computations)
        if not any(contains_cc(c) for c in called):
            return own
        if op == "conditional":
            costs = [comp_cost(c) for c in called]
            return tuple(max(c[k] for c in costs) for k in range(3))
        if op == "fusion":
            f = comp_cost(called[0])
            return (f[0], f[1], own[2])
        if op in ("while", "call") or op.endswith("-start"):
            total = [0.0, 0.0, 0.0]
            for c in called:
                for k, v in enumerate(comp_cost(c)):
                    total[k] += v
            return tuple(total)
        return own

    return comp_cost(m.entry.name)


_XLA = None


def _xla_side(text: str) -> dict:
    global _XLA
    if _XLA is None:
        import jax
        from jax._src import lib

        parser = getattr(lib, "hlo", None) or lib._jax
        _XLA = (parser, lib._jax, jax.devices("cpu")[0].client)
    parser, jax_lib, client = _XLA
    try:
        module = parser.hlo_module_from_text(text)
    except Exception as e:
        return {"status": "parse_error", "message": f"{type(e).__name__}: {e}"[:500]}
    printed = module.to_string()
    shapes = _shape_check(text, printed)
    # canonical opcode names (HloOpcode's enum names are CamelCase): from the printed text
    names = set(_OPCODE_RE.findall(printed))
    custom = len(re.findall(r" custom-call(?:-start)?\(", printed))
    try:
        cost = jax_lib.hlo_module_cost_analysis(client, module)
    except Exception as e:
        return {"status": "cost_error", "message": f"{type(e).__name__}: {e}"[:500],
                "opcodes": sorted(names), "custom_calls": custom}
    return {"status": "ok", "flops": float(cost.get("flops", 0.0)),
            "transcendentals": float(cost.get("transcendentals", 0.0)),
            "bytes": float(cost.get("bytes accessed", 0.0)), "opcodes": sorted(names),
            "custom_calls": custom, "shapes": shapes}


def _shape_key(s):
    """Element type, dimensions and layout (minor to major; XLA's default where none is given)."""
    if s.tuple:
        return ("tuple", tuple(_shape_key(e) for e in s.tuple))
    dims = tuple(s.dims)
    layout = tuple(s.layout) if len(s.layout) == len(dims) else tuple(range(len(dims) - 1, -1, -1))
    return (s.dtype, dims, layout)


def _shape_check(text: str, printed: str) -> dict:
    """Every instruction's shape as fpgaprof reads (or infers) it from the text against the
    shape XLA printed for it, matched by name, in modules whose instruction names are unique
    across computations (XLA renames clashing names module-wide, which would pair different
    instructions); instructions written in place as operands, which XLA names itself, are
    left out."""
    import fpgaprof

    try:
        ours, theirs = fpgaprof.hlo.analyze(text), fpgaprof.hlo.analyze(printed)
    except Exception as e:  # a parse failure is reported by the other checks
        return {"checked": 0, "differing": [], "error": f"{type(e).__name__}: {e}"[:200]}

    def unique(m):
        seen, dup = {}, set()
        for c in m.computations:
            for i in c.instructions:
                if i.name in seen:
                    dup.add(i.name)
                seen[i.name] = i
        return {n: i for n, i in seen.items() if n not in dup}

    a, b = unique(ours), unique(theirs)
    if len(a) != sum(len(c.instructions) for c in ours.computations):
        return {"checked": 0, "differing": []}
    differing = [f"{n}: {_shape_key(a[n].shape)} vs XLA {_shape_key(b[n].shape)}"
                 for n in a if n in b and _shape_key(a[n].shape) != _shape_key(b[n].shape)]
    return {"checked": sum(1 for n in a if n in b), "differing": differing[:10]}


def measure_one(path: str, with_xla: bool = True, progress=None) -> dict:
    """One module through fpgaprof, then XLA. `progress(partial)` is told the result so far
    once fpgaprof is done (so that a hang in XLA is not taken for one in fpgaprof)."""
    text = pathlib.Path(path).read_text(encoding="utf-8")
    out = {"name": pathlib.Path(path).name, "size": len(text.encode())}
    t0 = time.perf_counter()
    out["fpgaprof"] = _fpgaprof_side(text)
    out["fpgaprof_s"] = time.perf_counter() - t0
    if with_xla:
        if progress is not None:
            progress(out)
        t0 = time.perf_counter()
        out["xla"] = _xla_side(text)
        out["xla_s"] = time.perf_counter() - t0
    return out


def _worker(conn, with_xla: bool, work) -> None:
    while True:
        try:
            path = conn.recv()
        except EOFError:
            return
        if path is None:
            return
        if work is None:
            result = measure_one(path, with_xla, progress=lambda partial: conn.send(("partial", partial)))
        else:
            result = work(path, with_xla)
        conn.send(("done", result))


def _failed(path: str, partial: dict | None, status: str, message: str) -> dict:
    """A module whose worker crashed or ran out of time: fpgaprof's failure, or XLA's when
    fpgaprof had answered."""
    if partial is not None:
        return dict(partial, xla={"status": status, "message": message})
    return {"name": pathlib.Path(path).name, "fpgaprof": {"status": status, "message": message}}


def measure(paths: list[pathlib.Path], jobs: int | None = None, timeout: float = 60.0,
            with_xla: bool = True, work=None) -> list[dict]:
    """Every module in worker processes, each with `timeout` seconds; a worker that dies
    (crash) or overruns (hang) is replaced and the module recorded as such. `work(path,
    with_xla) -> dict` replaces measure_one (a module-level function: workers are spawned)."""
    jobs = max(1, jobs or os.cpu_count() or 1)
    ctx = mp.get_context("spawn")  # jax and threads: a fresh interpreter per worker
    pending = [str(p) for p in paths]
    pending.reverse()
    results: list[dict] = []
    workers: dict = {}  # conn -> (process, path, started)
    partial: dict = {}  # path -> fpgaprof's result, XLA's still to come

    def start():
        parent, child = ctx.Pipe()
        p = ctx.Process(target=_worker, args=(child, with_xla, work), daemon=True)
        p.start()
        child.close()
        return parent, p

    idle = [start() for _ in range(min(jobs, len(pending)))]
    from multiprocessing.connection import wait

    while pending or workers:
        while idle and pending:
            conn, proc = idle.pop()
            path = pending.pop()
            conn.send(path)
            workers[conn] = (proc, path, time.monotonic())
        now = time.monotonic()
        first_deadline = min(s for _, _, s in workers.values()) + timeout
        ready = wait(list(workers), timeout=max(0.0, first_deadline - now) + 0.05)
        for conn in ready:
            proc, path, started = workers.pop(conn)
            try:
                kind, result = conn.recv()
            except (EOFError, OSError):
                proc.join(5)
                results.append(_failed(path, partial.pop(path, None), "crash",
                                       f"worker died (exit code {proc.exitcode})"))
                idle.append(start())
                continue
            if kind == "partial":
                partial[path] = result
                workers[conn] = (proc, path, started)
            else:
                partial.pop(path, None)
                results.append(result)
                idle.append((conn, proc))
        now = time.monotonic()
        for conn, (proc, path, started) in list(workers.items()):
            if now - started > timeout:
                proc.kill()
                proc.join(5)
                conn.close()
                del workers[conn]
                results.append(_failed(path, partial.pop(path, None), "timeout", f"no answer within {timeout:g} s"))
                if pending:
                    idle.append(start())
    for conn, proc in idle:
        try:
            conn.send(None)
        except OSError:
            pass
        proc.join(5)
    results.sort(key=lambda r: r["name"])
    return results


# ---- classification ---------------------------------------------------------------------------

def within(ours: float, xla: float, rel: float = TOLERANCE) -> bool:
    return abs(ours - xla) <= rel * max(abs(xla), 1.0)


def parse_failure_cause(message: str) -> str:
    """A parse error's message reduced to its cause (what fpgaprof expected)."""
    m = re.search(r"expected (.*?), found", message)
    cause = m.group(1) if m else message
    cause = re.sub(r"'[^']*'", "'…'", cause)
    cause = re.sub(r"\(fpgaprof infers it only for.*", "(shape not inferred)", cause)
    return cause[:120]


def compared(r: dict) -> bool:
    """Modules compared on cost: both parsed and costed, no custom call."""
    f, x = r.get("fpgaprof", {}), r.get("xla", {})
    return f.get("status") == "ok" and x.get("status") == "ok" and x.get("custom_calls", 0) == 0


def with_custom_calls(r: dict) -> bool:
    f, x = r.get("fpgaprof", {}), r.get("xla", {})
    return f.get("status") == "ok" and x.get("status") == "ok" and x.get("custom_calls", 0) > 0


def agrees(r: dict, rel: float = TOLERANCE) -> bool:
    """FLOPs and bytes within `rel` of XLA's; on a module with custom calls, once each is
    charged XLA's -1 (fpgaprof's custom-call rules are its deliberate difference there)."""
    f, x = r["fpgaprof"], r["xla"]
    if x.get("custom_calls", 0) > 0:
        f = f.get("xla_convention", f)
    return within(f["flops"], x["flops"], rel) and within(f["bytes"], x["bytes"], rel)


def summarize(results: list[dict]) -> dict:
    status = collections.Counter(r["fpgaprof"]["status"] for r in results)
    causes = collections.Counter(parse_failure_cause(r["fpgaprof"]["message"])
                                 for r in results if r["fpgaprof"]["status"] == "parse_error")
    xla_status = collections.Counter(r.get("xla", {}).get("status", "-") for r in results)
    comp = [r for r in results if compared(r)]
    flops_ok = [r for r in comp if within(r["fpgaprof"]["flops"], r["xla"]["flops"])]
    bytes_ok = [r for r in comp if within(r["fpgaprof"]["bytes"], r["xla"]["bytes"])]
    both_ok = [r for r in comp if within(r["fpgaprof"]["flops"], r["xla"]["flops"])
               and within(r["fpgaprof"]["bytes"], r["xla"]["bytes"])]
    trans_ok = [r for r in comp if within(r["fpgaprof"]["transcendentals"], r["xla"]["transcendentals"])]
    cc = [r for r in results if with_custom_calls(r)]
    cc_ok = [r for r in cc if agrees(r)]
    exact = [r for r in comp if r["fpgaprof"]["flops"] == r["xla"]["flops"]
             and r["fpgaprof"]["bytes"] == r["xla"]["bytes"]
             and r["fpgaprof"]["transcendentals"] == r["xla"]["transcendentals"]]
    close = [r for r in comp if agrees(r, 1e-5)]
    having = collections.Counter()
    differing = collections.Counter()
    ok_names = {r["name"] for r in both_ok}
    for r in comp:
        for op in r["xla"]["opcodes"]:
            having[op] += 1
            if r["name"] not in ok_names:
                differing[op] += 1
    return {
        "modules": len(results), "fpgaprof_status": dict(status), "parse_failure_causes": dict(causes),
        "xla_status": dict(xla_status), "compared": len(comp), "flops_within": len(flops_ok),
        "bytes_within": len(bytes_ok), "both_within": len(both_ok), "transcendentals_within": len(trans_ok),
        "opcodes": {op: [differing[op], having[op]] for op in having},
        "differing": sorted(r["name"] for r in comp if r["name"] not in ok_names),
        "exact": len(exact), "within_1e-5": len(close),
        "with_custom_calls": len(cc), "custom_call_modules_agreeing": len(cc_ok),
        "custom_call_modules_differing": sorted(r["name"] for r in cc if not agrees(r)),
        "shapes_checked": sum(r.get("xla", {}).get("shapes", {}).get("checked", 0) for r in results),
        "shape_differences": {r["name"]: r["xla"]["shapes"]["differing"] for r in results
                              if r.get("xla", {}).get("shapes", {}).get("differing")},
    }


def print_summary(s: dict, results: list[dict], show_list: bool = False) -> None:
    print(f"modules: {s['modules']}; fpgaprof: {s['fpgaprof_status']}; XLA: {s['xla_status']}")
    if s["parse_failure_causes"]:
        print("parse failures by cause:")
        for cause, n in sorted(s["parse_failure_causes"].items(), key=lambda kv: -kv[1]):
            print(f"  {n:5d}  {cause}")
    for r in results:
        st = r["fpgaprof"]["status"]
        if st in ("error", "crash", "timeout"):
            print(f"  {st}: {r['name']}: {r['fpgaprof']['message'][:200]}")
    c = s["compared"]
    pct = lambda n: f"{n}/{c} ({100.0 * n / max(c, 1):.1f} %)"
    print(f"modules without custom calls, both parsed: {c}")
    print(f"  FLOPs within 1 %: {pct(s['flops_within'])}; bytes within 1 %: {pct(s['bytes_within'])}; "
          f"both: {pct(s['both_within'])}; transcendentals: {pct(s['transcendentals_within'])}")
    print(f"  equal: {pct(s['exact'])}; within 1e-5 (XLA sums in float32): {pct(s['within_1e-5'])}")
    print(f"modules with custom calls, both parsed: {s['with_custom_calls']}; agreeing once each custom call is "
          f"charged XLA's -1: {s['custom_call_modules_agreeing']}")
    for n in s["custom_call_modules_differing"][:20]:
        print(f"  differs with custom calls charged as XLA does: {n}")
    print(f"instruction shapes read or inferred against XLA's: {s['shapes_checked']} checked, "
          f"{len(s['shape_differences'])} modules with a difference")
    for n, d in list(s["shape_differences"].items())[:10]:
        print(f"  {n}: {d[:3]}")
    rows = [(op, d, h) for op, (d, h) in s["opcodes"].items() if d]
    rows.sort(key=lambda t: (-t[1] / t[2], -t[1]))
    print("opcodes of differing modules (differing / having), by share:")
    for op, d, h in rows[:60]:
        print(f"  {op:32s} {d:4d} / {h:4d}")
    if show_list:
        by_name = {r["name"]: r for r in results}
        for n in s["differing"]:
            f, x = by_name[n]["fpgaprof"], by_name[n]["xla"]
            print(f"  {n}: flops {f['flops']:g} vs {x['flops']:g}; bytes {f['bytes']:g} vs {x['bytes']:g}")


BEGIN_MARK = "<!-- xla-corpus:begin (scripts/xla_corpus.py --markdown writes this section) -->"
END_MARK = "<!-- xla-corpus:end -->"


def markdown(s: dict, results: list[dict], wall: float, jobs: int) -> str:
    """The corpus figures as the generated section of docs/hlo-validation.md."""
    import platform

    try:
        import jax
        import jaxlib

        versions = f"JAX {jax.__version__}, jaxlib {jaxlib.__version__}"
    except Exception:  # pragma: no cover - the XLA side needs jax anyway
        versions = "jaxlib unknown"
    c, cc = s["compared"], s["with_custom_calls"]
    pct = lambda n, d: f"{n} of {d} ({100.0 * n / max(d, 1):.1f} %)"
    slowest_fp = max((r.get("fpgaprof_s", 0.0) for r in results), default=0.0)
    slowest_xla = max((r.get("xla_s", 0.0) for r in results), default=0.0)
    status = ", ".join(f"{k} {v}" for k, v in sorted(s["fpgaprof_status"].items()))
    causes = s["parse_failure_causes"]
    lines = [
        BEGIN_MARK,
        "",
        f"{s['modules']} modules, {versions} (XLA on a CPU client), Python {platform.python_version()}; "
        f"{wall:.1f} s with {jobs} worker processes (slowest module: fpgaprof {slowest_fp * 1000:.0f} ms, "
        f"XLA {slowest_xla * 1000:.0f} ms).",
        "",
        "| | modules |",
        "|---|---:|",
        f"| fpgaprof: {status} | {s['modules']} |",
        f"| parse failures | {sum(causes.values())} |",
        f"| without custom calls, compared | {c} |",
        f"| — FLOPs within 1 % of XLA's | {pct(s['flops_within'], c)} |",
        f"| — bytes accessed within 1 % | {pct(s['bytes_within'], c)} |",
        f"| — both within 1 % | {pct(s['both_within'], c)} |",
        f"| — FLOPs, transcendentals and bytes equal | {pct(s['exact'], c)} |",
        f"| — all within 10⁻⁵ (XLA sums in float32) | {pct(s['within_1e-5'], c)} |",
        f"| with custom calls, agreeing within 1 % once each call is charged XLA's −1 | "
        f"{pct(s['custom_call_modules_agreeing'], cc)} |",
        f"| instruction shapes read or inferred, checked against XLA's | {s['shapes_checked']} instructions, "
        f"{len(s['shape_differences'])} modules differing |",
        "",
    ]
    if causes:
        lines += ["Parse failures by cause:", ""]
        lines += [f"- {n}: {cause}" for cause, n in sorted(causes.items(), key=lambda kv: -kv[1])]
        lines.append("")
    differing = [(op, d, h) for op, (d, h) in s["opcodes"].items() if d]
    if differing:
        lines += ["Modules differing by more than 1 % (no custom call), by opcode they contain "
                  "(differing / having):", ""]
        lines += [f"- `{op}`: {d} / {h}" for op, d, h in sorted(differing, key=lambda t: -t[1])[:30]]
        lines.append("")
    else:
        lines += ["No module without custom calls differs by more than 1 %; "
                  "none differs beyond XLA's float32 rounding.", ""]
    lines.append(END_MARK)
    return "\n".join(lines)


def write_markdown(path: str, section: str) -> None:
    p = pathlib.Path(path)
    text = p.read_text(encoding="utf-8")
    if BEGIN_MARK in text and END_MARK in text:
        head = text[:text.index(BEGIN_MARK)]
        tail = text[text.index(END_MARK) + len(END_MARK):]
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    p.write_text(text, encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--json", help="write every module's result here")
    ap.add_argument("--list", action="store_true", help="list the differing modules")
    ap.add_argument("--only", nargs="*", help="module file names (or substrings)")
    ap.add_argument("--no-xla", action="store_true", help="fpgaprof only (parse figures)")
    ap.add_argument("--markdown", metavar="DOC", help="write the figures into DOC's generated section "
                    "(docs/hlo-validation.md)")
    a = ap.parse_args(argv)
    root = corpus_dir()
    if not root.is_dir():
        print(f"corpus not found at {root} (set FPGAPROF_XLA_HLO_CORPUS)")
        return 2
    paths = corpus_files(root)
    if a.only:
        paths = [p for p in paths if any(o in p.name for o in a.only)]
    t0 = time.monotonic()
    results = measure(paths, a.jobs, a.timeout, with_xla=not a.no_xla)
    wall = time.monotonic() - t0
    s = summarize(results) if not a.no_xla else None
    if s:
        print_summary(s, results, a.list)
    else:
        status = collections.Counter(r["fpgaprof"]["status"] for r in results)
        print(f"modules: {len(results)}; fpgaprof: {dict(status)}")
        causes = collections.Counter(parse_failure_cause(r["fpgaprof"]["message"])
                                     for r in results if r["fpgaprof"]["status"] == "parse_error")
        for cause, n in sorted(causes.items(), key=lambda kv: -kv[1]):
            print(f"  {n:5d}  {cause}")
    print(f"wall time {wall:.1f} s with {a.jobs} worker processes")
    if a.markdown and s:
        write_markdown(a.markdown, markdown(s, results, wall, a.jobs))
        print(f"wrote the corpus section of {a.markdown}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"summary": s, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
