"""The answer first, and true to the trace (docs/fpga-model.md "Ranking", docs/reports.md
"summary.json"): the ranking by what an op could change, the answer block in summary.json,
report.html and the digest, roofline rows above their roof, the environment from the trace's
META, and the command line's smaller promises.

Expected values come from the trace's raw records (kernel start/end per op through the
attribution), from the trace META by hand, or from the rules the docs state; never from the
ranking code's own output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import fpgaprof
from fpgaprof import report
from fpgaprof.api.fpga import best_rows
from fpgaprof.base.constants import NONE32
from fpgaprof.base.errors import InvalidArgumentError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TRACES = os.path.join(ROOT, "tests", "data", "traces")
PALLAS = os.path.join(TRACES, "mbirjax073_parallel_128_pallas_h200.fpgaprof")
SCHEMA = os.path.join(ROOT, "docs", "summary.schema.json")


@pytest.fixture(scope="module")
def pallas():
    return fpgaprof.load(PALLAS)


@pytest.fixture(scope="module")
def pallas_summary(pallas):
    return json.loads(report.summary_json.dumps(report.collect(pallas, trace_path=PALLAS)))


def kernel_time_by_op(prof) -> dict[tuple[str, str], int]:
    """GPU time per (module, op) from the raw kernel records (end - start), each kernel placed
    by its attribution site; unattributed kernels left out."""
    k = prof.kernels.columns(["start_ns", "end_ns"])
    dur = (k["end_ns"].astype(np.int64) - k["start_ns"].astype(np.int64)).tolist()
    att = prof.attribution.kernels
    sites = att.sites
    out: dict[tuple[str, str], int] = {}
    for s, d in zip(np.asarray(att.site_index).tolist(), dur):
        if s == NONE32 or s >= len(sites) or not sites[s].hlo_op:
            continue
        key = (str(sites[s].module_name), str(sites[s].hlo_op))
        out[key] = out.get(key, 0) + int(d)
    return out


def test_the_ops_holding_the_time_lead_the_ranking(pallas):
    """On the bundled H200 Pallas trace the sort and the Pallas projectors (most of the kernel
    time, no static cost) are among the first five rows, not ranked 38-41 behind 13 us
    fusions."""
    times = kernel_time_by_op(pallas)
    top3 = sorted(times, key=lambda k: -times[k])[:3]
    rows = list(pallas.fpga_candidates())
    first5 = [(r["module"], r["op"]) for r in rows[:5]]
    for key in top3:
        assert key in first5, (key, first5)
    # Each row's GPU time is its kernels' summed durations.
    for r in rows:
        assert r["gpu_time_ns"] == times[(r["module"], r["op"])]
    # Every op of this trace is ruled out on the U55C over PCIe (no gain even at the fast end of
    # its range), so none could change anything and the order is the kernel-time order.
    assert all(r["verdict"] == "no" for r in rows)
    assert all(r["could_save_ns"] == 0 for r in rows)
    expected = sorted(times, key=lambda k: -times[k])
    assert [(r["module"], r["op"]) for r in rows] == expected
    # The ops without a static cost carry their bound and its reason.
    for r in rows[:5]:
        if not r["cost_known"]:
            assert r["estimate_basis"] == "operand bound"
            assert r["estimate_note"].startswith("bound only: no static cost (")


def test_the_same_order_everywhere(pallas, pallas_summary):
    """summary.json, report.html, the printed table and the notebook table keep the C++ order."""
    rows = list(pallas.fpga_candidates())
    names = [r["op"] for r in rows]
    assert [r["op"] for r in pallas_summary["candidates"]["items"]] == names
    text = str(pallas.fpga_candidates()).splitlines()
    assert [ln.split()[1] for ln in text[2 : 2 + 10]] == names[:10]
    html = pallas.fpga_candidates()._repr_html_()
    pos = [html.index(f">{n}<") for n in dict.fromkeys(names[:4])]
    assert pos == sorted(pos)
    page = report.render_html(pallas_summary)
    sec = page[page.index('id="sec-candidates"') :]
    pos = [sec.index(f">{n}<") for n in dict.fromkeys(names[:4])]
    assert pos == sorted(pos)


def test_best_n_never_hides_an_op_holding_more_time():
    rows = [
        {"op": "small_gain", "gpu_time_ns": 10.0},
        {"op": "small_gain2", "gpu_time_ns": 20.0},
        {"op": "big_no", "gpu_time_ns": 500.0},
        {"op": "tiny_no", "gpu_time_ns": 5.0},
        {"op": "mid_no", "gpu_time_ns": 15.0},
    ]
    # best 2 shows 10 and 20 ns: the 500 ns and 15 ns rows hold more than the 10 ns one.
    assert [r["op"] for r in best_rows(rows, 2)] == [
        "small_gain",
        "small_gain2",
        "big_no",
        "mid_no",
    ]
    assert [r["op"] for r in best_rows(rows, 5)] == [r["op"] for r in rows]
    assert best_rows(rows, 0) == []


def test_the_answer_comes_first(pallas, pallas_summary):
    s = pallas_summary
    assert next(iter(s)) == "answer"
    a = s["answer"]
    assert a["available"]
    assert set(a["cards"]) >= {"alveo-u55c", "alveo-u280", "alveo-u250", "alveo-u200", "versal-v80"}
    times = kernel_time_by_op(pallas)
    if a["unit"] == "op":
        top = max(times, key=lambda k: times[k])
        assert a["items"][0]["op"] == top[1]
    for i in a["items"]:
        assert i["verdict"] in (
            "gains",
            "only restructured",
            "no",
            "unknown: bound only",
            "unknown: not estimated",
        )
        assert i["best_card"] in a["cards"]
        assert i["reason"]
    dev = pallas.devices[0].name
    assert dev in a["rests_on"]["text"]
    assert "no hardware counters" in a["rests_on"]["text"]
    # no NVML samples in the saved traces: nothing said of energy
    assert a["rests_on"]["gpu_energy"] is None and "energy" not in a["rests_on"]["text"]
    # the ops move data over the host link (transfer_s > 0): the speedups include it, and say so
    assert any(float(r.get("transfer_s") or 0) > 0 for r in pallas.fpga_candidates())
    assert a["rests_on"]["host_link"] is True
    assert "speedups include the host link" in a["rests_on"]["text"]
    jsonschema = pytest.importorskip("jsonschema")
    with open(SCHEMA, encoding="utf-8") as f:
        jsonschema.validate(s, json.load(f))
    # report.html: the answer is the first section, before the overview
    page = report.render_html(s)
    assert page.index('id="sec-answer"') < page.index('id="sec-overview"')
    assert "rests on" in page
    # the digest: the answer's lines first
    from fpgaprof.report.digest import digest

    lines = digest(s).splitlines()
    assert lines[0].startswith("FPGA answer per ")
    assert lines[2].split()[0] == a["items"][0]["operation"]
    assert any(ln.startswith("  rests on: ") for ln in lines[:12])


def test_rows_above_the_roof_say_why(pallas, pallas_summary):
    rows = list(pallas.roofline())
    above = [r for r in rows if r["percent_of_roof"] > 100]
    assert above, "the bundled trace has a loop_select_fusion at about 212 % of its roof"
    for r in rows:
        assert bool(r.get("roof_note")) == (r["percent_of_roof"] > 100)
        if r.get("roof_note"):
            assert "cache" in r["roof_note"]
    # the printed table marks the row and says why under it
    text = str(pallas.roofline()).splitlines()
    marked = [ln for ln in text if " ⚠ " in ln or ln.endswith(" ⚠")]
    assert len([ln for ln in marked if not ln.startswith("  ⚠")]) == len(
        [r for r in rows[:20] if r.get("roof_note")]
    )
    assert text[-1].startswith(f"  ⚠ {len(above)} row") and "cache" in text[-1]
    pts = pallas_summary["roofline"]["points"]
    assert all(bool(p.get("roof_note")) == ((p.get("roof_fraction") or 0) > 1) for p in pts)
    page = report.render_html(pallas_summary)
    assert page.count('class="pt above"') == sum(
        1
        for p in pts
        if p.get("roof_note") and p.get("intensity") and p.get("achieved_flops_per_s")
    )
    assert "why above" in page


def test_environment_from_the_trace_meta_of_an_old_trace(pallas, pallas_summary):
    env = pallas_summary["environment"]
    meta = pallas.meta
    assert env["source"] == "trace META"
    assert env["devices"] == [d.name for d in pallas.devices]
    drv = int(meta["driver_version"])
    assert env["driver_version"] == f"{drv // 1000}.{drv % 1000 // 10}"
    assert env["cupti_version"] == int(meta["cupti_version"])
    assert env["cupti_path"] == meta["cupti_path"]
    assert env["jax_version"] is None  # this trace was written before META recorded it


def test_a_new_trace_records_jax_in_its_meta(tmp_path):
    code = (
        "import fpgaprof, jax, jax.numpy as jnp, json, sys\n"
        "with fpgaprof.trace(sys.argv[1]):\n"
        "    jax.block_until_ready(jnp.ones(8) + 1)\n"
        "p = fpgaprof.load(sys.argv[1])\n"
        "s = fpgaprof.report.collect(p, trace_path=sys.argv[1])\n"
        "print(json.dumps({'meta': p.meta['environment'], 'env': s['environment'],"
        " 'jax': jax.__version__}))\n"
    )
    path = str(tmp_path / "t.fpgaprof")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    r = subprocess.run(
        [sys.executable, "-c", "import fpgaprof.report\n" + code, path],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["meta"]["jax_version"] == out["jax"]
    assert out["meta"]["python_version"] == sys.version.split()[0]
    assert out["env"]["jax_version"] == out["jax"]
    assert "trace META" in out["env"]["source"]


@pytest.mark.parametrize("name", ["Alveo-U55C", "ALVEO-U55C", "alveo-u55c"])
def test_preset_names_ignore_case(pallas, name):
    assert fpgaprof.fpga.target_spec(name) == "alveo-u55c"
    assert pallas.fpga_candidates(name).meta["target"]["name"] == "alveo-u55c"


@pytest.mark.parametrize(
    "given,close", [("u55c", "alveo-u55c"), ("V80", "versal-v80"), ("alveo-u55", "alveo-u55c")]
)
def test_a_model_name_alone_gets_a_suggestion(given, close):
    with pytest.raises(InvalidArgumentError, match=f"did you mean {close}\\?"):
        fpgaprof.fpga.target_spec(given)


def _cli(*args, cwd=None, env=None, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "fpgaprof", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def test_a_second_report_into_the_same_folder_still_names_the_hlo(tmp_path):
    src = os.path.join(TRACES, "mbirjax073_parallel_128_xla_h200.fpgaprof")
    first = _cli("report", src, "-o", str(tmp_path), "--no-timeline")
    assert first.returncode == 0, first.stderr
    line = [ln for ln in first.stdout.splitlines() if ln.startswith("hlo ")]
    assert line
    second = _cli("report", src, "-o", str(tmp_path), "--no-timeline")
    assert second.returncode == 0, second.stderr
    assert [ln for ln in second.stdout.splitlines() if ln.startswith("hlo ")] == line
    assert second.stdout.splitlines()[0].startswith("FPGA answer per ")


def test_a_folder_with_one_trace_has_no_balance_line(tmp_path):
    rank = tmp_path / "job" / "node1-rank0"
    rank.mkdir(parents=True)
    shutil.copy(PALLAS, rank / "trace.fpgaprof")
    r = _cli("report", str(tmp_path / "job"))
    assert r.returncode == 0, r.stderr
    assert "busiest rank None" not in r.stdout
    assert "balance:" not in r.stdout


def test_a_failed_run_leaves_no_claim_and_no_empty_hlo_folder(tmp_path):
    out = tmp_path / "out"
    r = _cli("run", "-o", str(out), "--", sys.executable, "-c", "import os; os._exit(3)")
    assert r.returncode == 3
    assert "no trace was written" in r.stderr
    assert not (out / ".fpgaprof-claim").exists()
    assert not (out / "hlo").exists() or os.listdir(out / "hlo")


def test_the_run_warning_gives_advice_valid_for_run(tmp_path):
    # no test double: on a machine without a GPU driver tracing starts without GPU data
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("FPGAPROF_FAKE_CUPTI", "FPGAPROF_CUPTI_LIBRARY")
    }
    if os.path.exists("/proc/driver/nvidia/version"):
        pytest.skip("a GPU driver is present: tracing may record GPU activity")
    r = _cli("run", "-o", str(tmp_path / "o"), "--", sys.executable, "-c", "pass", env=env)
    assert "no GPU activity is recorded" in r.stderr
    assert "require_gpu=True" not in r.stderr
    assert "`fpgaprof devices`" in r.stderr


def test_estimate_on_the_cpu_says_what_it_estimated():
    jax = pytest.importorskip("jax")
    if jax.default_backend() == "gpu":
        pytest.skip("compiled for a GPU here")
    est = fpgaprof.fpga.estimate(lambda x: x * 2 + 1, jax.ShapeDtypeStruct((1024,), "float32"))
    assert est.notes[0].startswith("estimated the CPU-compiled program")
    assert "CPU-compiled" in str(est)


def test_the_cli_points_to_its_own_json(tmp_path):
    hlo = tmp_path / "m.hlo"
    hlo.write_text(
        "HloModule m\n\nENTRY e {\n  p = f32[1024]{0} parameter(0)\n"
        "  ROOT a = f32[1024]{0} add(p, p)\n}\n"
    )
    r = _cli("estimate", str(hlo))
    assert r.returncode == 0, r.stderr
    assert ".to_pandas()" not in r.stdout
    assert "--json" in r.stdout


def test_what_a_bound_could_save_is_marked_at_most():
    from fpgaprof.base.columns import bound_mark

    assert (
        bound_mark("could_save_ns", {"could_save_ns": 5e6, "estimate_basis": "operand bound"})
        == "≤ "
    )
    assert (
        bound_mark(
            "could_save_ns", {"could_save_ns": 5e6, "cost_known": False, "estimate_basis": None}
        )
        == "≤ "
    )
    assert bound_mark("could_save_ns", {"could_save_ns": 5e6, "estimated": False}) == "≤ "
    assert (
        bound_mark("could_save_ns", {"could_save_ns": 0.0, "estimate_basis": "operand bound"}) == ""
    )
    assert bound_mark("could_save_ns", {"could_save_ns": 5e6, "estimate_basis": "static"}) == ""


def test_the_answer_lines_stay_one_line_per_operation():
    from fpgaprof.report.digest import answer_lines

    a = {
        "available": True,
        "unit": "region",
        "cards": ["alveo-u55c"],
        "count": 1,
        "items": [
            {
                "operation": "fwd\nproject\x1b[31m",
                "size": 64,
                "gpu_time_s": 1e-3,
                "verdict": "no",
                "best_card": "alveo-u55c",
                "speedup": 0.5,
                "speedup_low": 0.2,
                "speedup_high": 0.9,
                "bound": False,
                "reason": "why\r",
            }
        ],
        "rests_on": {"text": "GPU times measured on X"},
    }
    lines = answer_lines({"answer": a})
    assert len(lines) == 4  # head, columns, the one row, rests on
    # escaped by the command line's one sanitiser (base.text.terminal_safe)
    assert lines[2].split()[:2] == ["fwd\\x0aproject\\x1b[31m", "64³"]


@pytest.mark.parametrize(
    "transfer,card,expect",
    [
        # the times shown add up to the speedup beside the reason: 1 / (0.1 + 3) = 0.32x, and
        # 1 / (2 + 0.1) = 0.48x; the part that decides it is named after them
        (3e-3, 1e-4,
         "card 100.0 µs (memory-bound) + link 3.00 ms vs 1.00 ms on the GPU (the host link alone is slower)"),
        (1e-4, 2e-3,
         "card 2.00 ms (memory-bound) + link 100.0 µs vs 1.00 ms on the GPU (the card alone is slower)"),
        (6e-4, 6e-4, "card 600.0 µs (memory-bound) + link 600.0 µs vs 1.00 ms on the GPU"),
    ],
)
def test_the_deciding_reason_names_what_loses(transfer, card, expect):
    from fpgaprof.api.fpga import deciding_reason

    row = {
        "verdict": "no",
        "gpu_time_ns": 1e6,
        "transfer_s": transfer,
        "card_time_s": card,
        "restructured_card_time_s": card * 1.5,
        "card_limit": "memory",
        "estimate_basis": "static",
    }
    assert deciding_reason(row) == expect


def test_the_command_line_takes_a_preset_in_any_case(tmp_path):
    r = _cli("report", PALLAS, "-o", str(tmp_path), "--no-timeline", "--target", "Alveo-U280")
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["candidates"]["target"] == "alveo-u280"
    bad = _cli("report", PALLAS, "-o", str(tmp_path), "--target", "u280")
    assert bad.returncode == 2 and "did you mean alveo-u280?" in bad.stderr


def test_a_range_whose_slow_end_is_as_compiled_is_marked():
    # The 64³ H100 trace: forward_project runs XLA's scatter projector, a gather + scatter at a
    # density of at most 1e-4, so its best card's region row is marked
    # restructured_structure_dependent and its restructured slow end is as compiled: the
    # answer's low speedup is then exactly the as-compiled one of the same row (same card time
    # at the slow end, same transfers). back_project is not marked. The text and the page mark
    # the range "*" and say why once.
    path = os.path.join(TRACES, "mbirjax_parallel_64_counters_h100.fpgaprof")
    prof = fpgaprof.load(path)
    s = json.loads(report.summary_json.dumps(report.collect(prof, trace_path=path)))
    items = {i["operation"]: i for i in s["answer"]["items"]}
    fwd, back = items["forward_project"], items["back_project"]
    assert fwd["scenario"] == "restructured" and fwd["slow_end_as_compiled"] is True
    assert back["slow_end_as_compiled"] is False
    row = {
        r["region"]: r for r in fpgaprof.fpga.fpga_candidates(prof, fwd["best_card"], by="region")
    }
    fr = row["forward_project"]
    assert fr["restructured_structure_dependent"] is True
    assert fwd["speedup_low"] == pytest.approx(fr["region_speedup_low"], rel=1e-12)
    assert "slow end as compiled" in fr["estimate_note"]
    from fpgaprof.report.digest import digest

    lines = digest(s).splitlines()
    (fwd_line,) = [ln for ln in lines[:6] if ln.split()[:1] == ["forward_project"]]
    (back_line,) = [ln for ln in lines[:6] if ln.split()[:1] == ["back_project"]]
    assert ")*" in fwd_line and ")*" not in back_line
    assert sum(ln.startswith("  * slow end as compiled") for ln in lines) == 1
    page = report.render_html(s)
    assert page.count("* slow end as compiled") == 1
    jsonschema = pytest.importorskip("jsonschema")
    with open(SCHEMA, encoding="utf-8") as f:
        jsonschema.validate(s, json.load(f))


def test_op_answers_keep_apart_ops_that_share_a_module_and_op_name():
    """A function compiled for several sizes gives ops of one module and op name: answered per
    op (a trace without regions answers per op), each op its own best card and speedup. Here
    four input_scatter_fusion.1 ops of jit_sparse_forward_project_fcn, told apart by their GPU
    times; each answer must be the one its best card's row gives for the op of that GPU time
    (looked up by time, not by the answer's own key)."""
    from fpgaprof.api import answer, overview

    prof = fpgaprof.load(os.path.join(TRACES, "mbirjax_sweep_32_64_run_h100.fpgaprof"))
    an, _, _ = overview.analysis_of(prof, "alveo-u55c", [])
    sec = answer.answer_section(
        prof,
        {
            "candidates": {"available": True, "regions": {"available": False}},
            "device": {"name": "H100"},
        },
        an,
        top=1000,
    )
    items = [i for i in sec["items"] if i["op"] == "input_scatter_fusion.1"]
    assert len(items) >= 4
    cards = {
        str(f["target"]["name"]): f["candidates"] for f in [an["fpga"], *an["fpga_other_targets"]]
    }
    for item in items:
        rows = [
            r
            for r in cards[item["best_card"]]
            if r["op"] == "input_scatter_fusion.1"
            and r["gpu_time_ns"] == pytest.approx(item["gpu_time_s"] * 1e9)
        ]
        (row,) = rows
        key = "restructured_op_speedup" if item["scenario"] == "restructured" else "op_speedup"
        assert item["speedup"] == pytest.approx(row[key])
    assert len({round(i["speedup"], 9) for i in items}) == len(items)


def test_a_card_file_named_like_a_preset_answers_with_its_own_figures(tmp_path):
    """A card file may take a preset's name (its own U55C, faster links): the answer compares
    that card, not the preset of that name, and counts each card once."""
    from fpgaprof.api import overview

    card = tmp_path / "fast.json"
    card.write_text(
        json.dumps(
            {
                "base": "alveo-u55c",
                "name": "alveo-u55c",
                "memory_channel_bytes_per_s": 1.4375e12,
                "link_bytes_per_s": 1e11,
                "call_latency_s": 1e-9,
                "call_latency_s_low": 1e-9,
                "call_latency_s_high": 1e-9,
                "transfer_latency_s": 1e-9,
                "transfer_latency_s_low": 1e-9,
                "transfer_latency_s_high": 1e-9,
            }
        )
    )
    opts = overview.report_analysis_options(str(card))
    names = [p["name"] for p in fpgaprof.fpga.presets()]
    assert "alveo-u55c" not in opts["other_targets"]
    assert len(opts["other_targets"]) == len(names) - 1
    assert "alveo-u55c" not in overview.report_analysis_options("Alveo-U55C")["other_targets"]
    prof = fpgaprof.load(os.path.join(TRACES, "mbirjax_parallel_128_h100.fpgaprof"))
    summary = json.loads(report.summary_json.dumps(report.collect(prof, target=str(card))))
    an, _, _ = overview.analysis_of(prof, str(card), [])
    mine = {r["region"]: r for r in an["fpga"]["regions"]}
    for item in summary["answer"]["items"]:
        if item["best_card"] != "alveo-u55c":
            continue
        row = mine[item["region"]] if "region" in item else None
        if row is not None:
            key = (
                "restructured_region_speedup"
                if item["scenario"] == "restructured"
                else "region_speedup"
            )
            assert item["speedup"] == pytest.approx(row[key])
    # the card's own rows beat every preset here (faster memory and links than any of them):
    # the answer names it for the top region
    assert summary["answer"]["items"][0]["best_card"] == "alveo-u55c"


def test_a_region_that_only_encloses_others_is_not_an_operation_of_the_answer():
    """The saved sweep ran under `fpgaprof run` with a trace() per operation: each is a region
    "trace" around "<op>/<n>". Every "<op>/<n>" path is an answer row (all ten, not the first
    50 of a bigger sweep), each with the calls its GPU time sums; "trace" holds nothing but
    them and is left out, said so."""
    prof = fpgaprof.load(os.path.join(TRACES, "mbirjax_sweep_32_64_run_h100.fpgaprof"))
    regions = prof.regions.columns(["start_ns", "end_ns"])
    names = [str(r.name) for r in prof.regions]
    sized = sorted({n for n in names if "/" in n})
    assert len(sized) == 10 and "trace" in names
    summary = json.loads(report.summary_json.dumps(report.collect(prof)))
    a = summary["answer"]
    assert a["unit"] == "region" and a["enclosing_left_out"] == ["trace"]
    assert sorted(i["region"].split(" > ")[-1] for i in a["items"]) == sized
    assert all(i["operation"] != "trace" for i in a["items"])
    # calls: the instances of each "<op>/<n>" region in the records (two timed runs each)
    for i in a["items"]:
        own = i["region"].split(" > ")[-1]
        assert i["calls"] == names.count(own) == 2
    assert len(regions["start_ns"]) == len(names)
    from fpgaprof.report.digest import answer_lines

    text = "\n".join(answer_lines(summary, top=5))
    assert "(2 calls)" in text and "left out: 1 region path(s)" in text and "'trace'" in text


def test_a_row_whose_kernels_have_no_gpu_time_reads_not_timed_and_names_no_card():
    """The H200 XLA counters trace's forward window could not be paired: its 34 kernels have no
    timestamps. Its answer row is not a GPU time of 0 s, and with no card estimating it there is
    no best card (the first card of the list is not one)."""
    from fpgaprof.report.digest import answer_lines

    path = os.path.join(TRACES, "mbirjax073_parallel_128_xla_counters_h200.fpgaprof")
    s = json.loads(report.summary_json.dumps(report.collect(fpgaprof.load(path), trace_path=path)))
    (fwd,) = [i for i in s["answer"]["items"] if i["operation"] == "forward_project"]
    assert fwd["verdict"] == "unknown: not estimated" and fwd["gpu_time_s"] == 0
    assert fwd["best_card"] is None
    (line,) = [ln for ln in answer_lines(s) if ln.split()[:1] == ["forward_project"]]
    assert " 0 s " not in line and "alveo-u55c" not in line
    assert line.split()[2:5] == ["not", "timed", "unknown:"]


def test_the_deciding_reason_holds_at_the_fast_end_and_gives_ranges():
    """H200 cone_forward_project/64 on a V80 (the Pallas counters trace): the restructured card
    takes 531.4 µs nominal but 382.8 µs at its fast end, under the GPU's 447.6 µs, so "card
    531.4 µs vs 447.6 µs" is not what decides "no": the card and the link together are, each
    with its range."""
    from fpgaprof.api.fpga import deciding_reason

    row = {
        "verdict": "no",
        "gpu_time_ns": 447616.0,
        "transfer_s": 4.3662e-4,
        "transfer_low_s": 2.4397e-4,
        "transfer_high_s": 6.3161e-4,
        "card_time_s": 6.5932e-4,
        "card_time_low_s": 4.5015e-4,
        "card_time_high_s": 1.1024e-3,
        "restructured_card_time_s": 5.3136e-4,
        "restructured_card_time_low_s": 3.8276e-4,
        "restructured_card_time_high_s": 9.0473e-4,
        "card_limit": "memory",
        "estimate_basis": "static",
    }
    # card_limit is the as-compiled time's limit: the restructured time shown here has none
    assert deciding_reason(row) == (
        "card 531.4 µs (380-910 µs) + link 436.6 µs (240-640 µs) vs 447.6 µs on the GPU"
    )
    # a host link whose fast end alone is slower than the GPU decides it, with its range
    row.update(transfer_s=1.75e-3, transfer_low_s=1.258e-3, transfer_high_s=2.515e-3)
    assert deciding_reason(row) == (
        "card 531.4 µs (380-910 µs) + link 1.75 ms (1.2-2.6 ms) vs 447.6 µs on the GPU"
        " (the host link alone is slower)"
    )


def test_prof_summary_gives_the_answer_first(pallas):
    """prof.summary(), like `fpgaprof report`, opens with the FPGA answer (the same lines),
    then the trace."""
    from fpgaprof.report.digest import answer_lines

    text = pallas.summary()
    s = json.loads(report.summary_json.dumps(report.collect(pallas, trace_path=PALLAS)))
    first = answer_lines(s)
    assert text.splitlines()[: len(first)] == first
    assert text.splitlines()[0].startswith("FPGA answer per operation (region) and size")
    assert "fpgaprof trace: wall time" in text


def test_an_op_with_copies_and_no_kernel_run_has_no_mean(pallas):
    """copy.10 of the Pallas trace launched copies (15.2 µs) and no kernel: its mean per
    kernel run is "–", not "0 ns" beside a time of 15.2 µs."""
    (line,) = [ln for ln in pallas.summary().splitlines() if "copy.10 (jit_chunk_fn)" in ln]
    assert line.split()[:6] == ["15.2", "µs", "0.0%", "0", "–", "copy.10"]


def test_ops_of_one_name_in_several_modules_are_told_apart_in_the_printed_ranking():
    """The H100 sweep compiles input_scatter_fusion.1 in several modules, and some modules
    several times: the printed op ranking (no module column, a terminal is narrow) named each
    the same. An op name that occurs more than once among the printed rows carries its module,
    and its XLA program id where the module repeats too; no two printed rows read alike."""
    from fpgaprof.report.digest import digest

    path = os.path.join(TRACES, "mbirjax_sweep_32_64_run_h100.fpgaprof")
    s = json.loads(report.summary_json.dumps(report.collect(fpgaprof.load(path), trace_path=path)))
    items = s["candidates"]["items"][:40]
    program = {o["op_index"]: o["program_id"] for o in s["ops"]["items"]}
    names = [i["op"] for i in items]
    pairs = [(i["op"], i["module"]) for i in items]
    assert "input_scatter_fusion.1" in {n for n in names if names.count(n) > 1}
    assert any(pairs.count(p) > 1 for p in pairs)  # one module compiled several times
    lines = digest(s, top=40).splitlines()
    start = next(k for k, ln in enumerate(lines) if "HLO ops (best" in ln)
    header = lines[start + 1]
    a, b = header.index(" op ") + 1, header.index("verdict")  # the op column
    rows = [ln[a:b].strip() for ln in lines[start + 2 :] if ln[:6].strip().isdigit()]
    rows = rows[: len(items)]
    for i, shown in zip(items, rows):
        if names.count(i["op"]) == 1:
            want = i["op"]
        elif pairs.count((i["op"], i["module"])) == 1:
            want = f"{i['op']} ({i['module']})"
        else:
            want = f"{i['op']} #{program[i['op_index']]} ({i['module']})"
        # the table shortens a long cell with "…"
        assert shown == want or (shown.endswith("…") and want.startswith(shown[:-1])), shown
    assert len(set(rows)) == len(rows)  # no two printed rows read alike


def test_an_op_whose_kernel_runs_are_untimed_has_no_mean():
    """The H200 XLA counters trace's forward window could not be paired: its ops ran (1
    execution each) without timestamps. As for a kernel name never timed (kernels.top), their
    mean is '–' / null, not a run of 0 ns."""
    path = os.path.join(TRACES, "mbirjax073_parallel_128_xla_counters_h200.fpgaprof")
    prof = fpgaprof.load(path)
    (line,) = [ln for ln in prof.summary(top=100).splitlines()
               if "input_scatter_fusion.1 (jit__sparse_forward_" in ln]
    assert line.split()[:6] == ["0", "ns", "0.0%", "1", "–", "input_scatter_fusion.1"], line
    s = json.loads(report.summary_json.dumps(report.collect(prof, trace_path=path)))
    (op,) = [o for o in s["ops"]["items"]
             if o["op"] == "input_scatter_fusion.1" and "forward" in str(o["module"])]
    assert op["count"] == 1 and op["total_s"] == 0 and op["mean_s"] is None
    assert op["timed_count"] == 0


def _kernel_runs(prof) -> dict:
    """The kernel durations (ns) of each (module, XLA program id or None, HLO op), from the
    kernel records and their attribution: one kernel per run in the traces used here."""
    att = prof.attribution
    runs: dict = {}
    for i, k in enumerate(prof.kernels):
        a = att.kernels[i]
        key = (a.module_name, a.program_id if a.program_id >= 0 else None, a.hlo_op)
        runs.setdefault(key, []).append(k.end_ns - k.start_ns)
    return runs


def test_an_op_with_some_untimed_runs_has_the_mean_of_its_timed_runs():
    """The same trace's loop_compare_fusion and wrapped_iota (one program each) ran twice, one
    of the two runs without timestamps. The mean per run is that of the timed run, worked out
    here from the kernel records (one kernel per run), not their time over both runs."""
    path = os.path.join(TRACES, "mbirjax073_parallel_128_xla_counters_h200.fpgaprof")
    prof = fpgaprof.load(path)
    runs = _kernel_runs(prof)
    partial = {key: d for key, d in runs.items() if 0 in d and any(d)}
    assert len(partial) == 2  # the two ops named above
    s = json.loads(report.summary_json.dumps(report.collect(prof, trace_path=path)))
    for (module, program, op_name), durations in partial.items():
        timed = [d for d in durations if d > 0]
        (op,) = [o for o in s["ops"]["items"] if (o["op"], o["module"], o["program_id"]) ==
                 (op_name, module, program)]
        assert op["count"] == len(durations) and op["total_s"] == sum(timed) / 1e9
        assert op["mean_s"] == sum(timed) / len(timed) / 1e9
        assert op["timed_count"] == len(timed)
        (row,) = [o for o in prof.ops if (o.hlo_op, o.module_name, o.program_id) ==
                  (op_name, module, program)]
        assert row.timed_executions == len(timed) and row.executions == len(durations)


def test_the_answer_per_op_counts_the_calls_its_gpu_time_sums():
    """Answered per op (regions off, as for a trace without them), an op of the H200 XLA
    counters trace with one of its two runs untimed: its GPU time is that of one run, so its
    calls are 1, not 2 ("(2 calls)" would read as the time of both). Worked out from the
    kernel records."""
    from fpgaprof.api import answer, overview

    path = os.path.join(TRACES, "mbirjax073_parallel_128_xla_counters_h200.fpgaprof")
    prof = fpgaprof.load(path)
    runs = _kernel_runs(prof)
    an, _, _ = overview.analysis_of(prof, "alveo-u55c", [])
    sec = answer.answer_section(
        prof,
        {"candidates": {"available": True, "regions": {"available": False}}, "device": {}},
        an,
        top=1000,
    )
    assert sec["unit"] == "op"
    checked = 0
    for item in sec["items"]:
        durations = runs[(item["module"], item["program_id"], item["op"])]
        timed = [d for d in durations if d > 0]
        if not timed or len(timed) == len(durations):
            continue
        assert item["gpu_time_s"] * 1e9 == pytest.approx(sum(timed))
        assert item["calls"] == len(timed) < len(durations), item
        checked += 1
    assert checked >= 1


def test_untimed_records_of_a_counters_trace_are_blamed_on_kernel_replay():
    """The H200 counters traces' records without timestamps are the launches of the one counter
    window whose ranges could not be paired (135 = 79 kernels + 56 copies; 40 = 34 + 6, counted
    here from the records): kernel replay left them untimed, not a full device timestamp
    buffer. The traces were written with the buffer wording; read back, the one warning names
    replay and the fix that times them (trace again without counters), once in the summary."""
    for name, want in (("pallas", 135), ("xla", 40)):
        prof = fpgaprof.load(
            os.path.join(TRACES, f"mbirjax073_parallel_128_{name}_counters_h200.fpgaprof")
        )
        untimed = sum(1 for k in prof.kernels if k.end_ns == k.start_ns == 0)
        untimed += sum(1 for c in prof.transfers if c.end_ns == c.start_ns == 0)
        assert prof.incomplete_records == untimed == want
        (w,) = [w for w in prof.warnings if "no timestamps" in w]
        assert w.startswith(f"{want} GPU activity records have no timestamps")
        assert "kernel replay" in w and "trace again without counters" in w
        assert "device" not in w.split("Fix:")[1]
        warned = [ln for ln in prof.summary().splitlines() if ln.startswith("  - ")]
        assert sum("have no timestamps" in ln or "had no timestamps" in ln for ln in warned) == 1


def test_the_deciding_reason_of_a_straddling_no_and_of_data_on_the_card_keeps_its_figures():
    """A "no" (nominal card 2 ms against 1 ms on the GPU) whose card range reaches below the
    GPU time (0.5 ms at its fast end): the reason keeps the figures and says the fast end would
    not be slower, not a bare "slower on the card". With the data resident on the card
    (inputs_cross_link=False: transfer 0 s) no "+ link 0 s" is printed."""
    from fpgaprof.api.fpga import deciding_reason

    row = {"verdict": "no", "gpu_time_ns": 1e6, "card_time_s": 2e-3, "card_time_low_s": 0.5e-3,
           "card_time_high_s": 3e-3, "card_limit": "memory", "estimate_basis": "static"}
    want = ("card 2.00 ms (0.50-3.0 ms) (memory-bound) vs 1.00 ms on the GPU (slower at the "
            "nominal figures, not at the fast ends)")
    assert deciding_reason(row) == want
    resident = dict(row, transfer_s=0.0, transfer_low_s=0.0, transfer_high_s=0.0)
    assert deciding_reason(resident) == want
    # the card alone at its fast end is slower: no such remark
    assert deciding_reason(dict(row, card_time_low_s=1.2e-3)) == (
        "card 2.00 ms (1.2-3.0 ms) (memory-bound) vs 1.00 ms on the GPU"
    )


def test_the_deciding_reason_looks_at_the_fast_end_of_both_designs():
    """The restructured design is the faster at the nominal (1.5 ms against 2 ms as compiled)
    and its range (1.4-1.6 ms) stays above the GPU's 1 ms, but the as-compiled range reaches
    0.5 ms: "the card alone is slower" would be false. Both together are slower at the nominal
    figures (1.5 + 0.2 ms), not at the fast ends (0.5 + 0.15 ms), and the reason names the
    design whose fast end that is."""
    from fpgaprof.api.fpga import deciding_reason

    row = {"verdict": "no", "gpu_time_ns": 1e6, "card_time_s": 2e-3, "card_time_low_s": 5e-4,
           "card_time_high_s": 4e-3, "restructured_card_time_s": 1.5e-3,
           "restructured_card_time_low_s": 1.4e-3, "restructured_card_time_high_s": 1.6e-3,
           "transfer_s": 2e-4, "transfer_low_s": 1.5e-4, "transfer_high_s": 3e-4,
           "card_limit": "memory", "estimate_basis": "static"}
    assert deciding_reason(row) == (
        "card 1.50 ms (1.4-1.6 ms) + link 200.0 µs (150-300 µs) vs 1.00 ms on the GPU (slower at"
        " the nominal figures, not at the fast ends; the as-compiled design's fast end 500.0 µs)"
    )
    # with the as-compiled fast end above the GPU time too, the card alone decides it
    assert deciding_reason(dict(row, card_time_low_s=1.1e-3)) == (
        "card 1.50 ms (1.4-1.6 ms) + link 200.0 µs (150-300 µs) vs 1.00 ms on the GPU"
        " (the card alone is slower)"
    )
    # a card time with its range across a unit: one unit for both
    slow = dict(row, restructured_card_time_s=0.98, restructured_card_time_low_s=0.81,
                restructured_card_time_high_s=1.2, card_time_s=2.0, card_time_low_s=1.5,
                card_time_high_s=3.0)
    assert deciding_reason(slow).startswith("card 0.980 s (0.81-1.2 s) + link")
    # no GPU time (a hand-made or old row: the core does not estimate such an op)
    assert deciding_reason(dict(row, gpu_time_ns=0)) == (
        "no GPU time to compare with (its kernels were not timed)"
    )


def test_prof_summary_answer_takes_top_and_points_to_the_api():
    """prof.summary(top=1) shows one answer row, and the others are where a notebook has them
    (prof.fpga_candidates()), not in a summary.json it never wrote."""
    prof = fpgaprof.load(os.path.join(TRACES, "mbirjax073_cone_64_pallas_counters_h200.fpgaprof"))
    lines = prof.summary(top=1).splitlines()
    head = lines.index(next(ln for ln in lines if ln.startswith("FPGA answer per ")))
    assert lines[head + 2].split()[0] in ("cone_forward_project", "cone_back_project")
    assert lines[head + 3] == "  … 1 more in prof.fpga_candidates()"
    assert "summary.json" not in "\n".join(lines[: head + 6])


def test_an_answer_per_hlo_op_tells_one_op_name_in_several_modules_apart():
    """A trace without regions answers per HLO op: "fusion" of jit_a, and "fusion" of jit_b
    compiled twice (programs 7 and 9). The answer's text and page name each apart: the module
    where the op name repeats, the program id where the module does too; a unique name stays
    bare."""
    from fpgaprof.report.html import answer_html
    from fpgaprof.views.answer_text import answer_lines

    def item(op, module, pid, t):
        return {"operation": op, "op": op, "module": module, "program_id": pid, "size": None,
                "gpu_time_s": t, "verdict": "no", "best_card": "alveo-u55c", "speedup": 0.5,
                "speedup_low": 0.4, "speedup_high": 0.6, "reason": "r"}

    items = [item("fusion", "jit_a", 3, 4e-3), item("fusion", "jit_b", 7, 3e-3),
             item("fusion", "jit_b", 9, 2e-3), item("copy.1", "jit_a", 3, 1e-3)]
    s = {"answer": {"available": True, "unit": "op", "cards": ["alveo-u55c"], "count": 4,
                    "items": items, "rests_on": {"text": "t"}}}
    rows = [ln.split("  ")[1] for ln in answer_lines(s, top=4)[2:6]]
    assert rows == ["fusion (jit_a)", "fusion #7 (jit_b)", "fusion #9 (jit_b)", "copy.1"]
    page = answer_html(s)
    for name in ("fusion (jit_a)", "fusion #7 (jit_b)", "fusion #9 (jit_b)"):
        assert f">{name}<" in page


def test_the_summarys_copies_by_hlo_op_name_repeated_ops_apart():
    """The H100 sweep's copies by HLO op: copy.1 of jit_convert_element_type, and copy.1 of
    jit_broadcast_in_dim compiled twice. prof.summary()'s line named all three "copy.1"."""
    prof = fpgaprof.load(os.path.join(TRACES, "mbirjax_sweep_32_64_run_h100.fpgaprof"))
    s = json.loads(report.summary_json.dumps(report.collect(prof)))
    rows = s["transfers"]["by_op"][:5]
    program = {o["op_index"]: o["program_id"] for o in s["ops"]["items"]}
    (line,) = [ln for ln in prof.summary().splitlines() if "by HLO op" in ln]
    shown = [part.rsplit(" in ", 1)[0].rsplit(" ", 2)[0] for part in line.split(": ", 1)[1].split("; ")[:5]]
    want = []
    for r in rows:
        same_op = sum(x["op"] == r["op"] for x in rows)
        same_pair = sum((x["op"], x["module"]) == (r["op"], r["module"]) for x in rows)
        want.append(r["op"] if same_op == 1 else f"{r['op']} ({r['module']})" if same_pair == 1
                    else f"{r['op']} #{program[r['op_index']]} ({r['module']})")
    assert shown == want
    assert len(set(shown)) == len(shown) and sum(r["op"] == "copy.1" for r in rows) >= 3


def test_the_answer_speedup_reads_the_same_in_text_and_html():
    """The speedup cell of the answer in the text and on the page (one speedup_parts): with a
    range its star (the slow end as compiled) follows it; without one there is no star and no
    empty "()"."""
    from fpgaprof.report.html import answer_html
    from fpgaprof.views.answer_text import answer_lines, speedup_parts

    ranged = {"speedup": 0.8, "speedup_low": 0.5, "speedup_high": 1.3, "scenario": "as compiled",
              "slow_end_as_compiled": True}
    bare = dict(ranged, speedup_low=None, speedup_high=None)
    assert speedup_parts(ranged) == ("0.80x", "(0.50-1.3x)* as compiled")
    assert speedup_parts(bare) == ("0.80x", "as compiled")
    assert speedup_parts(dict(ranged, speedup=None)) == ("–", "")
    for item, text, page in (
        (ranged, "0.80x (0.50-1.3x)* as compiled", '<b>0.80x</b> <span class="dim">(0.50-1.3x)* as compiled</span>'),
        (bare, "0.80x as compiled", '<b>0.80x</b> <span class="dim">as compiled</span>'),
    ):
        s = {"answer": {"available": True, "unit": "region", "cards": ["alveo-u55c"],
                        "items": [dict(item, operation="fwd", size=64, gpu_time_s=1e-3, verdict="no",
                                       best_card="alveo-u55c", reason="r")]}}
        assert text in "\n".join(answer_lines(s))
        assert page in answer_html(s)
