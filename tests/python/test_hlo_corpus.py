"""fpgaprof.hlo against XLA's own cost analysis on a corpus of real JAX / MBIRJAX programs (CPU).

Expected numbers come from XLA (`compiled.cost_analysis()`), never from fpgaprof. Tolerances:
flops within 5 % and bytes accessed within 20 % for at least 90 % of the corpus; each
disagreement is explained in docs/cost-model.md.
"""
import os

import pytest

jax = pytest.importorskip("jax")

import fpgaprof  # noqa: E402
import hlo_corpus  # noqa: E402

MBIRJAX_DIR = None
try:
    import importlib.util

    _spec = importlib.util.find_spec("mbirjax")
    if _spec is not None and _spec.submodule_search_locations:
        MBIRJAX_DIR = os.path.realpath(list(_spec.submodule_search_locations)[0])
except Exception:  # pragma: no cover - mbirjax import machinery failing is a skip, not an error
    MBIRJAX_DIR = None


@pytest.fixture(scope="module")
def corpus():
    return hlo_corpus.build_corpus(include_mbirjax=MBIRJAX_DIR is not None)


def within(ours, xla, rel):
    return abs(ours - xla) <= rel * max(abs(xla), 1.0)


def test_corpus_is_large_enough(corpus):
    assert len(corpus) >= 30
    if MBIRJAX_DIR is not None:
        assert sum(c.program.source == "mbirjax" for c in corpus) >= 6


def test_totals_match_xla_cost_analysis(corpus):
    rows, agree = [], 0
    for c in corpus:
        m = fpgaprof.hlo.analyze(c.hlo_text)
        xf = float(c.xla_cost.get("flops", 0.0))
        xb = float(c.xla_cost.get("bytes accessed", 0.0))
        ok = within(m.flops, xf, 0.05) and within(m.bytes_accessed, xb, 0.20)
        agree += ok
        rows.append((c.program.name, ok, xf, m.flops, xb, m.bytes_accessed))
    failing = [r for r in rows if not r[1]]
    assert agree >= 0.9 * len(rows), f"only {agree}/{len(rows)} agree; failing: {failing}"


def test_transcendentals_match_where_xla_reports_them(corpus):
    checked = 0
    for c in corpus:
        if c.xla_cost.get("flops", 0.0) < 0:
            continue  # XLA reports -1 for modules with a custom call it cannot cost
        xt = c.xla_cost.get("transcendentals", 0.0)  # XLA leaves the key out when it is 0
        m = fpgaprof.hlo.analyze(c.hlo_text)
        assert within(m.transcendentals, float(xt), 0.05), c.program.name
        checked += 1
    assert checked >= 20


def test_every_instruction_with_metadata_points_at_its_source(corpus):
    corpus_file = os.path.realpath(hlo_corpus.CORPUS_FILE)
    for c in corpus:
        m = fpgaprof.hlo.analyze(c.hlo_text)
        with_source = 0
        for ins in m.all_instructions():
            if ins.stack_frame_id <= 0 and not ins.source_file:
                continue  # no source metadata printed (parameters, compiler-made copies)
            with_source += 1
            path = os.path.realpath(ins.source_file)
            where = (f"{c.program.name}: {ins.computation}/{ins.name} -> "
                     f"{ins.source_file}:{ins.source_line}")
            if c.program.source == "corpus":
                assert path == corpus_file, where
                lo, hi = c.program.line_range
                assert lo <= ins.source_line <= hi, where
            else:
                assert MBIRJAX_DIR is not None and path.startswith(MBIRJAX_DIR + os.sep), where
                assert ins.source_line > 0, where
        assert with_source > 0, f"{c.program.name}: no instruction carried source metadata"
