"""XLA's own HLO test corpus through fpgaprof and through XLA.

Every module of the corpus (FPGAPROF_XLA_HLO_CORPUS, default ../shared/corpora/xla-hlo beside the
repository, else /work/shared/corpora/xla-hlo: 2,638
modules from openxla/xla's tests, each accepted by XLA's parser) is parsed and costed by
fpgaprof.hlo.analyze and by XLA (jaxlib: hlo_module_from_text, hlo_module_cost_analysis on a
CPU client), in worker processes with a time limit per module (scripts/xla_corpus.py). Fails on
any crash, hang, untyped error or parse failure, and on any cost difference beyond XLA's float32
sums that is not in the documented list (tests/data/hlo/xla_corpus_differences.tsv, each reason
explained in docs/cost-model.md). On modules with custom calls the one deliberate difference,
fpgaprof's custom-call rules, is taken out first: each call is charged XLA's -1.
"""
import csv
import importlib
import os
import pathlib
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# beside the repository (../shared, as the development machines and CI have it), else /work/shared
CORPUS = pathlib.Path(
    os.environ.get("FPGAPROF_XLA_HLO_CORPUS")
    or next((str(p) for p in (ROOT.parent / "shared" / "corpora" / "xla-hlo",) if p.is_dir()),
            "/work/shared/corpora/xla-hlo"))
DIFFERENCES = ROOT / "tests" / "data" / "hlo" / "xla_corpus_differences.tsv"
HEADERLESS = ROOT / "tests" / "data" / "hlo" / "xla_headerless"
TIMEOUT_S = 30.0       # per module, both sides: the slowest takes well under a second
REL = 1e-4             # XLA sums its properties in float32: its totals differ by up to ~2e-6


def _script():
    # Imported by name from scripts/: the worker processes (spawned) import it the same way.
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    return importlib.import_module("xla_corpus")


def _need_xla():
    pytest.importorskip("jax")
    lib = pytest.importorskip("jax._src.lib")
    if not hasattr(lib._jax, "hlo_module_cost_analysis"):
        pytest.skip("this jaxlib has no hlo_module_cost_analysis")


def _documented() -> dict:
    with DIFFERENCES.open(encoding="utf-8") as f:
        rows = [r for r in csv.reader(f, delimiter="\t") if r and not r[0].startswith("#")]
    return {r[0]: r[1] for r in rows[1:]}


@pytest.fixture(scope="module")
def corpus_run():
    if not CORPUS.is_dir():
        pytest.skip(f"XLA HLO corpus not found at {CORPUS} (set FPGAPROF_XLA_HLO_CORPUS)")
    _need_xla()
    xc = _script()
    paths = xc.corpus_files(CORPUS)
    t0 = time.monotonic()
    results = xc.measure(paths, jobs=os.cpu_count(), timeout=TIMEOUT_S)
    wall = time.monotonic() - t0
    summary = xc.summarize(results)
    print(f"\nXLA corpus: {len(results)} modules in {wall:.1f} s; fpgaprof {summary['fpgaprof_status']}; "
          f"without custom calls {summary['compared']} (within 1 %: {summary['both_within']}, equal: "
          f"{summary['exact']}); with custom calls {summary['with_custom_calls']} (agreeing: "
          f"{summary['custom_call_modules_agreeing']})")
    return xc, results, summary


def test_corpus_is_there_and_xla_reads_it_all(corpus_run):
    _, results, _ = corpus_run
    assert len(results) >= 2638
    assert not [(r["name"], r.get("xla")) for r in results if r.get("xla", {}).get("status") != "ok"]


def test_no_crash_hang_or_untyped_error(corpus_run):
    _, results, _ = corpus_run
    bad = [(r["name"], r["fpgaprof"]["status"], r["fpgaprof"]["message"][:200]) for r in results
           if r["fpgaprof"]["status"] in ("crash", "timeout", "error")]
    assert not bad


def test_every_module_xla_parses_fpgaprof_parses(corpus_run):
    _, results, _ = corpus_run
    failed = [(r["name"], r["fpgaprof"]["message"][:200]) for r in results
              if r["fpgaprof"]["status"] == "parse_error" and r.get("xla", {}).get("status") == "ok"]
    assert not failed


def test_costs_are_xlas_or_documented(corpus_run):
    xc, results, _ = corpus_run
    documented = _documented()
    differing = {}
    for r in results:
        if not (xc.compared(r) or xc.with_custom_calls(r)):
            continue
        f = r["fpgaprof"].get("xla_convention", r["fpgaprof"]) if xc.with_custom_calls(r) else r["fpgaprof"]
        x = r["xla"]
        if not (xc.within(f["flops"], x["flops"], REL) and xc.within(f["bytes"], x["bytes"], REL)
                and xc.within(r["fpgaprof"]["transcendentals"], x["transcendentals"], REL)):
            differing[r["name"]] = (f["flops"], x["flops"], f["bytes"], x["bytes"])
    undocumented = {n: v for n, v in differing.items() if n not in documented}
    assert not undocumented, f"cost differences not in {DIFFERENCES.name} (fpgaprof vs XLA flops, bytes): {undocumented}"
    stale = sorted(set(documented) - set(differing))
    assert not stale, f"listed in {DIFFERENCES.name} but now equal to XLA: {stale}"


def test_shapes_are_xlas(corpus_run):
    """Every instruction's shape, read or inferred (XLA's shape inference), is the one XLA
    gives it: checked on each instruction whose name is unique in the module and in XLA's
    printed form of it."""
    _, _, s = corpus_run
    assert s["shapes_checked"] > 60000
    assert not s["shape_differences"]


def test_at_least_99_percent_within_one_percent(corpus_run):
    _, _, s = corpus_run
    assert s["both_within"] >= 0.99 * s["compared"]
    assert s["custom_call_modules_agreeing"] >= 0.99 * s["with_custom_calls"]


def test_documented_reasons_are_in_the_docs():
    text = (ROOT / "docs" / "cost-model.md").read_text(encoding="utf-8")
    for name, reason in _documented().items():
        assert reason in text, f"{name}: reason {reason!r} not explained in docs/cost-model.md"


def test_headerless_lit_splits():
    """XLA's lit tests split on `// -----` into computations without the HloModule line (a
    sample kept in tests/data): fpgaprof parses them as XLA does and costs them as XLA does."""
    _need_xla()
    xc = _script()
    paths = sorted(HEADERLESS.glob("*.hlo"))
    assert len(paths) >= 8
    results = xc.measure(paths, jobs=min(2, os.cpu_count() or 1), timeout=TIMEOUT_S)
    for r in results:
        assert r["xla"]["status"] == "ok", r["name"]
        assert r["fpgaprof"]["status"] == "ok", (r["name"], r["fpgaprof"].get("message"))
        assert xc.agrees(r, REL), (r["name"], r["fpgaprof"], r["xla"])


def _misbehave(path, with_xla):
    """A stand-in for measure_one: hangs, crashes or answers, by the file's name."""
    name = pathlib.Path(path).name
    if "hang" in name:
        time.sleep(60)
    if "crash" in name:
        os._exit(3)
    return {"name": name, "fpgaprof": {"status": "ok"}, "xla": {"status": "ok"}}


def test_workers_report_hangs_and_crashes_and_go_on(tmp_path):
    """The harness itself: a module that hangs is stopped at its time limit, one that kills
    its worker is reported, and the modules after them are still measured."""
    xc = _script()
    names = ["a.hlo", "b_hang.hlo", "c_crash.hlo", "d.hlo", "e.hlo"]
    for n in names:
        (tmp_path / n).write_text("HloModule m\n")
    t0 = time.monotonic()
    results = xc.measure(sorted(tmp_path.glob("*.hlo")), jobs=2, timeout=2.0, work=_misbehave)
    assert time.monotonic() - t0 < 30
    status = {r["name"]: r["fpgaprof"]["status"] for r in results}
    assert status == {"a.hlo": "ok", "b_hang.hlo": "timeout", "c_crash.hlo": "crash", "d.hlo": "ok", "e.hlo": "ok"}
