"""Which process of a job this is (launcher variables), rank folder names, the clock alignment
of several hosts and missing ranks, on hand-made rows: no trace, no JAX needed. The whole path
through traces is test_job_ranks.py."""

import pytest

from fpgaprof.api import job
from fpgaprof.capture import job_process


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"SLURM_PROCID": "3", "SLURM_NTASKS": "8"}, (3, 8, "SLURM")),
        ({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"}, (1, 2, "OMPI")),
        ({"PMI_RANK": "0", "PMI_SIZE": "4"}, (0, 4, "PMI")),
        ({"RANK": "5", "WORLD_SIZE": "6"}, (5, 6, "RANK")),
        # A launcher inside a Slurm step inherits the step's SLURM_*: the inner one is the
        # process' own. mpirun in an sbatch script (every process sees SLURM_PROCID=0):
        (
            {"SLURM_PROCID": "0", "SLURM_NTASKS": "3", "OMPI_COMM_WORLD_RANK": "2",
             "OMPI_COMM_WORLD_SIZE": "3"},
            (2, 3, "OMPI"),
        ),
        # torchrun per node under `srun --ntasks-per-node=1` (SLURM_PROCID is the node):
        (
            {"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "RANK": "6", "WORLD_SIZE": "8"},
            (6, 8, "RANK"),
        ),
        # torchrun in a one-task step: Slurm's count of 1 does not hide torchrun's job.
        (
            {"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "RANK": "2", "WORLD_SIZE": "4"},
            (2, 4, "RANK"),
        ),
    ],
)
def test_launcher_variables(env, expected):
    p = job_process.from_environment(env)
    assert (p.index, p.count, p.source) == expected
    assert p.meta()["process_index"] == expected[0]


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"SLURM_PROCID": "0", "SLURM_NTASKS": "1"},  # a one-task allocation: one process
        {"RANK": "4", "WORLD_SIZE": "4"},  # an index outside the job
        {"RANK": "x", "WORLD_SIZE": "2"},
        {"RANK": "1"},
        # digits str.isdigit() accepts and int() refuses: not a job, never a ValueError
        {"RANK": "\u00b2", "WORLD_SIZE": "4"},
        {"SLURM_PROCID": "0", "SLURM_NTASKS": "\u00b9\u2076"},
    ],
)
def test_not_a_job(env):
    assert job_process.from_environment(env) is None


def test_rank_folder_names():
    assert job_process.rank_folder_name("node-7.cluster", 12) == "node-7.cluster-rank12"
    assert job_process.rank_folder_name("a/b c", 0) == "a_b_c-rank0"
    assert job_process.rank_folder_name("", 1) == "host-rank1"
    m = job_process.RANK_FOLDER_RE.match("node-7-rank3")
    assert (m.group("host"), m.group("index")) == ("node-7", "3")


def row(index, host, ends, busy_s=1.0, start_ns=0):
    return {
        "name": f"{host}-rank{index}",
        "process_index": index,
        "process_count": 3,
        "host": host,
        "start_ns": start_ns,
        "end_ns": start_ns + 10,
        "wall_time_s": 1.0,
        "kernel_count": 1,
        "kernel_time_s": busy_s,
        "busy_s": busy_s,
        "copy_count": 0,
        "copy_bytes": 0,
        "memory_peak_bytes": None,
        "warning_count": 0,
        "devices": [],
        "regions": [],
        "collectives": {
            "kernel_count": len(ends),
            "kernel_s": 0.0,
            "busy_s": 0.0,
            "overlap_s": 0.0,
            "by_kind": [],
            "first_end_ns": ends,
        },
        "candidates": [],
    }


def test_clock_alignment_on_collectives():
    # Host b's clock runs 500 ns behind a's; its collectives end 480, 510, 500 ns "earlier":
    # offset = median(480, 510, 500) = 500; uncertainty = max |d - 500| = 20 ns.
    a0 = row(0, "a", [1000, 2000, 3000])
    a1 = row(1, "a", [990, 2005, 3001])  # same host: same clock, not compared
    b2 = row(2, "b", [520, 1490, 2500], start_ns=-300)
    c = job.align_clocks([a0, a1, b2])
    hosts = {h["host"]: h for h in c["hosts"]}
    assert hosts["a"]["offset_ns"] == 0
    assert (hosts["b"]["offset_ns"], hosts["b"]["uncertainty_ns"], hosts["b"]["anchors"]) == (
        500,
        20,
        3,
    )
    assert c["method"] == "collectives"
    assert c["text"] == "2 hosts aligned on the first common collectives (uncertainty up to 20 ns)"
    # Rank 2 started at -300 on b's clock = 200 on a's; the job starts at 0 (ranks 0, 1).
    s = job.combine([b2, a1, a0], [])
    starts = {r["process_index"]: r["start_s"] for r in s["ranks"]}
    assert starts == {0: 0.0, 1: 0.0, 2: pytest.approx(200e-9)}


def test_clock_alignment_without_collectives_and_with_one():
    c = job.align_clocks([row(0, "a", []), row(1, "b", [])])
    assert c["hosts"][1]["method"] == "wall clock"
    assert c["hosts"][1]["uncertainty_ns"] is None
    assert "uncertainty unknown" in c["text"]
    one = job.align_clocks([row(0, "a", [100]), row(1, "b", [60])])
    assert (one["hosts"][1]["offset_ns"], one["hosts"][1]["uncertainty_ns"]) == (40, None)
    # The reference host's own exact 0 is no measure of b's alignment on one collective.
    assert "up to 0 s" not in one["text"]
    assert one["text"] == (
        "2 hosts aligned on the first common collectives (uncertainty unknown for b: one "
        "common collective)"
    )


def test_missing_ranks_by_count_and_by_name():
    rows = [row(0, "a", [], busy_s=2.0), row(2, "a", [], busy_s=1.0)]
    s = job.combine(rows, [{"name": "a-rank3", "process_index": 3, "reason": "no trace: x"}])
    # process_count 3: rank 1 has no entry at all; rank 3's folder said why it has none.
    assert [m["process_index"] for m in s["missing"]] == [1, 3]
    assert "no trace of this rank" in s["missing"][0]["reason"]
    b = s["balance"]
    assert (b["slowest_rank"], b["least_busy_rank"]) == (0, 2)
    assert b["imbalance"] == pytest.approx(2.0 / 1.5)


def test_ranks_of_two_runs_in_one_folder_are_a_conflict():
    # A rerun of 2 ranks into the folder of an earlier 4-rank run on other nodes: the folder
    # holds a-rank0..3 (count 4) and c-rank0, c-rank1 (count 2).
    old = [row(k, "a", []) | {"process_count": 4} for k in range(4)]
    new = [row(k, "c", []) | {"process_count": 2} for k in range(2)]
    s = job.combine(old + new, [])
    reasons = [c["reason"] for c in s["conflicts"]]
    assert any("claim rank 0" in r for r in reasons)
    assert any("claim rank 1" in r for r in reasons)
    assert any("2-process job beside ranks of a 4-process job" in r for r in reasons)
    assert job.combine([row(k, "a", []) for k in range(3)], [])["conflicts"] == []


def test_job_folder_names_ranks_without_a_readable_trace(tmp_path):
    import _constructed_trace

    import fpgaprof

    out = tmp_path / "out"
    (out / "h-rank0").mkdir(parents=True)
    s = _constructed_trace.store()
    s.set_meta(process_index=0, process_count=3, process_source="SLURM", host_name="h")
    s.save(str(out / "h-rank0" / "trace.fpgaprof"))
    # Rank 1 was traced under `fpgaprof run` and killed: its folder has the claim, no trace.
    (out / "h-rank1").mkdir()
    (out / "h-rank1" / ".fpgaprof-claim").write_text("4242\ntracing\n")
    # Rank 2 left a damaged file.
    (out / "h-rank2.fpgaprof").write_bytes(b"FPGAPROF but not a trace")

    j = fpgaprof.load(out)
    assert isinstance(j, fpgaprof.Job)
    assert [e.index for e in j.ranks] == [0, 1, 2]
    s = j.summary()
    assert (s["rank_count"], s["process_count"]) == (1, 3)
    assert [r["process_index"] for r in s["ranks"]] == [0]
    missing = {m["process_index"]: m for m in s["missing"]}
    assert sorted(missing) == [1, 2]
    assert "killed" in missing[1]["reason"] and missing[1]["name"] == "h-rank1"
    assert "h-rank2.fpgaprof" in missing[2]["reason"]  # the TraceFormatError, naming the file
    with pytest.raises(fpgaprof.FpgaprofIOError, match="killed"):
        j.rank(1)
    # A run folder or trace file still loads as one Profile.
    assert isinstance(fpgaprof.load(out / "h-rank0"), fpgaprof.Profile)
    # `fpgaprof report` on a job none of whose traces can be read writes the job report (each
    # rank MISSING, with why) and fails: exit 1 with one line (it exited 0).
    import shutil
    import subprocess
    import sys

    shutil.rmtree(out / "h-rank0")
    r = subprocess.run([sys.executable, "-m", "fpgaprof.cli", "report", str(out)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1
    assert "fpgaprof report: error: no rank trace in" in r.stderr and "job.txt says why" in r.stderr
    assert (out / "job.txt").exists()


def test_the_balance_line_is_the_same_in_job_html_and_job_txt():
    # Two ranks, 2 s and 1 s busy: busiest/mean 2 / 1.5 = 1.33, in both renderers, with each
    # rank's own time (the HTML gave the least busy's time to the busiest); a rank whose index is
    # unknown says so (the HTML left it blank); one trace has nothing to balance against.
    from fpgaprof.report import job_html, job_text

    model = job.combine([row(0, "a", [], busy_s=2.0), row(1, "a", [], busy_s=1.0)], [])
    line = "busiest rank 0 2.000 s, least busy rank 1 1.000 s, busiest/mean 1.33, spread 50.0 % of the busiest"
    assert line in job_text.render(model) and line in job_html.render(model)
    model["balance"]["slowest_rank"] = None
    assert "busiest rank (index unknown) 2.000 s" in job_html.render(model)
    one = job.combine([row(0, "a", [], busy_s=2.0)], [])
    assert "balance" not in job_text.render(one) and "Load balance" not in job_html.render(one)


def test_names_from_traces_are_escaped_in_job_html_and_cleaned_in_job_txt():
    from fpgaprof.report import job_html, job_text

    bad = "<script>x</script>\x1b[31m"
    rows = [row(0, bad, []), row(1, bad, [])]
    for r in rows:
        r["regions"] = [{"path": bad, "count": 1, "wall_s": 0.5 + r["process_index"], "gpu_s": 0.0}]
        r["candidates"] = [{"module": bad, "op": bad, "gpu_s": 1.0, "fpga_s": None, "kernel_count": 1}]
    model = job.combine(rows, [{"name": bad, "process_index": 2, "reason": bad}])
    model["folder"] = bad
    page = job_html.render(model)
    assert "<script>" not in page and "&lt;script&gt;" in page
    text = job_text.render(model)
    # shown escaped as every other text output shows it (before: "?[31m")
    assert "\x1b" not in text and "<script>x</script>\\x1b[31m" in text


# ---- The FPGA answer of a job: each rank's verdicts in time and energy, and over the job ----
#
# Three rank traces (built through the store's public bindings, then saved, loaded and reported
# by `fpgaprof.load(folder)` and report.write_job: the whole job path) of one module jit_step
# with one loop fusion, fusion.1 = p x p over f32[1024]: 1024 FLOP, 4096 + 4096 bytes. Rank k
# runs it once for GPU_MS[k] ms; the board draws 300 W throughout (energy counter +300 mJ per
# ms), except on rank 2, whose trace has no power samples (no NVML). Every rank also runs an op
# named "<b>x</b>" (1 ms, no HLO: not estimated) and rank 1's host is an HTML tag: both must
# reach job.html escaped.
#
# The card (from alveo-u55c, every constant a verdict depends on given): one 8.192 GB/s channel
# at full efficiency (8192 B: 1 us; the 1 ns of compute hides under it), a launch of 0.1 s
# (0.05-0.2 s), a host link of 8.192 GB/s at full efficiency and no per-buffer latency (8192 B:
# 1 us), 50 W loaded (25-100 W). By hand:
#   card time 1 us + launch = 0.050001 / 0.100001 / 0.200001 s (low, nominal, high);
#   card + link = 0.050002 / 0.100002 / 0.200002 s;
#   card energy = card time x power: 0.050001 x 25 = 1.250025, 0.100001 x 50 = 5.00005,
#   0.200001 x 100 = 20.0001 J.
#   rank 0, 400 ms, 120 J: speedup 0.4 / 0.100002 = 3.99992 (0.4 / 0.200002 = 1.99998 to
#     0.4 / 0.050002 = 7.99968): gains; energy ratio 5.00005 / 120 = 0.0416671 (0.0104169 to
#     0.1666675): faster across the range -> "gains".
#   rank 1, 80 ms, 24 J: speedup 0.79998 (0.399996 to 1.59994): time verdict "no"; ratio
#     0.208335 (0.0520844 to 0.833338 < 1): -> "wins only on energy".
#   rank 2, 300 ms, no energy: speedup 2.99994 (1.49999 to 5.99976): gains;
#     -> "unknown: no GPU energy".
#   The job: fusion.1 on 3 ranks, 0.78 s of GPU time; speedups span 0.399996 (rank 1's low
#   end) to 7.99968 (rank 0's high end); energy ratios over ranks 0 and 1 span 0.0104169 to
#   0.833338. Restructured: the same (elementwise: every byte is compulsory either way).

JOB_MODULE = """HloModule jit_step, entry_computation_layout={(f32[1024]{0})->f32[1024]{0}}

%fused_computation.1 (param_0.1: f32[1024]) -> f32[1024] {
  %param_0.1 = f32[1024]{0} parameter(0)
  ROOT %multiply.1 = f32[1024]{0} multiply(f32[1024]{0} %param_0.1, f32[1024]{0} %param_0.1)
}

ENTRY %main (p: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0} parameter(0)
  ROOT %fusion.1 = f32[1024]{0} fusion(f32[1024]{0} %p), kind=kLoop, calls=%fused_computation.1
}
"""
JOB_CARD = {
    "base": "alveo-u55c",
    "name": "job-test-card",
    "memory_channels": 1,
    "memory_channel_bytes_per_s": 8.192e9,
    "channel_share": 1.0,
    "stream_efficiency": 1.0,
    "fp32_flops_per_s": 1.024e12,
    "call_latency_s": 0.1,
    "call_latency_s_low": 0.05,
    "call_latency_s_high": 0.2,
    "link_bytes_per_s": 8.192e9,
    "link_efficiency": 1.0,
    "transfer_latency_s": 0.0,
    "loaded_w": 50.0,
    "loaded_w_low": 25.0,
    "loaded_w_high": 100.0,
}
MS = 1_000_000
GPU_MS = (400, 80, 300)
BAD_OP = "<b>x</b>"
BAD_HOST = "<img src=x onerror=alert(1)>"


def _rank_store(k):
    from fpgaprof.base.core import core

    s = core.TraceStore()
    s.set_meta(start_ns=0, end_ns=1000 * MS, gpu_available=True, command_buffers_disabled=True,
               process_index=k, process_count=3, process_source="SLURM",
               host_name=BAD_HOST if k == 1 else "h")
    d = core.DeviceInfo()
    for a, v in {"name": "H100 (constructed)", "compute_capability_major": 9, "sm_count": 132,
                 "pcie_generation": 5, "pcie_link_width": 16}.items():
        setattr(d, a, v)
    s.add_device(d)
    s.add_hlo_module("jit_step", 5, JOB_MODULE)
    s.append("markers", name="XlaModule:#hlo_module=jit_step,program_id=5#", domain="TSL",
             start_ns=1 * MS, end_ns=3 * MS, thread_id=1)
    for cid, op, kernel, start, end in [
        (1, "fusion.1", "loop_fusion_1", 10 * MS, (10 + GPU_MS[k]) * MS),
        (2, BAD_OP, "k_x", 700 * MS, 701 * MS),
    ]:
        launch = 2 * MS + cid * 10_000
        s.append("markers", name=f"Thunk:#hlo_op={op}#", domain="TSL", start_ns=launch - 100,
                 end_ns=launch + 1000, thread_id=1)
        s.append("api_calls", correlation_id=cid, thread_id=1, start_ns=launch,
                 end_ns=launch + 100, name="cuLaunchKernel")
        s.append("kernels", correlation_id=cid, name=kernel, start_ns=start, end_ns=end,
                 grid_x=1, stream_id=7)
    if k != 2:  # rank 2 ran without NVML: no power samples
        for t in range(0, 1001):
            s.append("power_samples", time_ns=t * MS, energy_mj=1_000_000 + 300 * t,
                     device_id=0, power_mw=300_000)
    s.correlate()
    return s


def _job_folder(root):
    """The three ranks' traces as `fpgaprof run` lays them out under root/out, and the job's
    card file: (the job folder, the card file)."""
    import json

    out = root / "out"
    for k in range(3):
        (out / f"h-rank{k}").mkdir(parents=True)
        _rank_store(k).save(str(out / f"h-rank{k}" / "trace.fpgaprof"))
    card = root / "job-card.json"
    card.write_text(json.dumps(JOB_CARD))
    return out, card


@pytest.fixture(scope="module")
def job_report(tmp_path_factory):
    import json

    import fpgaprof
    from fpgaprof import report

    d = tmp_path_factory.mktemp("job_answer")
    out, card = _job_folder(d)
    paths = report.write_job(fpgaprof.load(out), out, target=str(card))
    with open(paths["json"], encoding="utf-8") as f:
        text = f.read()
    with open(paths["html"], encoding="utf-8") as f:
        page = f.read()
    return {"model": json.loads(text), "json_text": text, "page": page, "text": paths["text"]}


def _item(items, op):
    (got,) = [i for i in items if i["op"] == op]
    return got


def test_job_answer_per_rank_carries_the_cores_verdicts(job_report):
    a = job_report["model"]["answer"]
    assert [r["process_index"] for r in a["ranks"]] == [0, 1, 2]
    assert [r["energy_measured"] for r in a["ranks"]] == [True, True, False]
    assert a["energy"] == {"measured_ranks": [0, 1], "unmeasured_ranks": [2]}
    f = [_item(r["items"], "fusion.1") for r in a["ranks"]]
    total = (0.100002, 0.050002, 0.200002)  # card + link: nominal, low, high
    for k, row in enumerate(f):
        gpu = GPU_MS[k] / 1e3
        for scen in ("", "restructured_"):
            assert row[f"{scen}op_speedup"] == pytest.approx(gpu / total[0], rel=1e-9)
            assert row[f"{scen}op_speedup_low"] == pytest.approx(gpu / total[2], rel=1e-9)
            assert row[f"{scen}op_speedup_high"] == pytest.approx(gpu / total[1], rel=1e-9)
    assert [r["verdict"] for r in f] == ["gains", "no", "gains"]
    card_j = (5.00005, 1.250025, 20.0001)
    for k, gpu_j in ((0, 120.0), (1, 24.0)):
        for scen in ("", "restructured_"):
            assert f[k][f"{scen}energy_ratio"] == pytest.approx(card_j[0] / gpu_j, rel=1e-6)
            assert f[k][f"{scen}energy_ratio_low"] == pytest.approx(card_j[1] / gpu_j, rel=1e-6)
            assert f[k][f"{scen}energy_ratio_high"] == pytest.approx(card_j[2] / gpu_j, rel=1e-6)
    assert f[2]["energy_ratio"] is None and f[2]["gpu_energy_j"] is None
    for scen in ("", "restructured_"):
        assert [r[f"{scen}energy_verdict"] for r in f] == [
            "gains",
            "wins only on energy",
            "unknown: no GPU energy",
        ]
    bad = _item(a["ranks"][0]["items"], BAD_OP)
    assert bad["verdict"] == "unknown: not estimated" and bad["op_speedup"] is None
    assert "NaN" not in job_report["json_text"]  # not-estimated speedups are null in job.json


def test_job_answer_over_the_job_says_which_rank_gives_what(job_report):
    a = job_report["model"]["answer"]
    i = _item(a["items"], "fusion.1")
    assert i["ranks"] == [0, 1, 2]
    assert i["gpu_s"] == pytest.approx(0.78)
    assert i["verdicts"] == [{"value": "gains", "ranks": [0, 2]}, {"value": "no", "ranks": [1]}]
    assert [sc["scenario"] for sc in i["scenarios"]] == ["as compiled", "restructured"]
    for sc in i["scenarios"]:
        assert sc["speedup_low"] == pytest.approx(0.08 / 0.200002, rel=1e-9)
        assert sc["speedup_high"] == pytest.approx(0.4 / 0.050002, rel=1e-9)
        assert sc["energy_verdicts"] == [
            {"value": "gains", "ranks": [0]},
            {"value": "wins only on energy", "ranks": [1]},
            {"value": "unknown: no GPU energy", "ranks": [2]},
        ]
        assert sc["energy_ranks"] == [0, 1]
        assert sc["energy_ratio_low"] == pytest.approx(1.250025 / 120.0, rel=1e-6)
        assert sc["energy_ratio_high"] == pytest.approx(20.0001 / 24.0, rel=1e-6)
    assert _item(a["items"], BAD_OP)["verdicts"] == [
        {"value": "unknown: not estimated", "ranks": [0, 1, 2]}
    ]


def test_job_html_shows_the_answer_and_escapes_trace_names(job_report):
    page = job_report["page"]
    assert "The answer: FPGA offload over the job" in page
    assert "The answer per rank" in page
    # The job's row of fusion.1: the spans (two significant digits, low end down, high end
    # up: 0.399996 -> 0.39, 7.99968 -> 8.0; 0.0104169 -> 0.010, 0.833338 -> 0.84), the ranks
    # behind the energy span, and each verdict with its ranks, in both scenarios.
    assert page.count("0.39-8.0x") >= 2
    assert page.count("0.010-0.84x") >= 2 and "(ranks 0, 1)" in page
    assert page.count('<span class="v-energy">wins only on energy</span> (rank 1)') >= 2
    assert page.count("unknown: no GPU energy</span> (rank 2)") >= 2
    assert "GPU energy not measured on rank 2" in page
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    # Each rank's own table: both scenarios' speedup and energy ratio, each with its range.
    assert page.count("Rank ") >= 3 and "GPU energy not measured (no NVML power samples)" in page


def test_job_txt_gives_the_answer_over_the_job(job_report):
    lines = job_report["text"].splitlines()
    head = [ln for ln in lines if ln.startswith("FPGA answer over the job (target ")]
    assert len(head) == 1
    at = lines.index(head[0])
    assert lines[at + 1] == (
        "  GPU energy not measured on rank 2 (no NVML power samples): energy verdicts there "
        "are unknown"
    )
    assert lines[at + 2] == (
        "  fusion.1 (jit_step), 780.00 ms on ranks 0, 1, 2: gains (ranks 0, 2), no (rank 1)"
    )
    for k, scen in ((3, "as compiled"), (4, "restructured")):
        assert lines[at + k] == (
            f"    {scen}: speedup 0.39-8.0x, card / GPU energy 0.010-0.84x (ranks 0, 1); gains "
            "(rank 0), wins only on energy (rank 1), unknown: no GPU energy (rank 2)"
        )


def test_job_answer_marks_a_restructured_span_whose_slow_end_is_as_compiled(job_report):
    # Two ranks run one SpMV-like op; on rank 1 its restructured range is widened to the
    # as-compiled slow end (restructured_structure_dependent). The span over the job carries
    # the mark, in job.json, job.txt and job.html, with the one note; the as-compiled span does
    # not, and an op marked on no rank is not.
    from fpgaprof.api.job import job_answer
    from fpgaprof.report import job_html, job_text
    from fpgaprof.views.ranking import SLOW_END_AS_COMPILED_NOTE

    def row(op, marked, lo, hi):
        return {"op": op, "module": "jit_spmv", "gpu_time_ns": 5e6, "gpu_s": 5e-3,
                "verdict": "only restructured", "op_speedup": 0.1, "op_speedup_low": 0.05,
                "op_speedup_high": 0.2, "restructured_op_speedup": 2.0,
                "restructured_op_speedup_low": lo, "restructured_op_speedup_high": hi,
                "restructured_structure_dependent": marked}

    ranks = [
        {"process_index": k, "host": "h", "name": f"h-rank{k}", "energy_measured": False,
         "candidates": [row("scatter.3", k == 1, 0.04 if k else 0.9, 3.0),
                        row("fusion.9", False, 0.5, 1.5)]}
        for k in range(2)
    ]
    a = job_answer(ranks, [("jit_spmv", "scatter.3"), ("jit_spmv", "fusion.9")], "alveo-u280")
    spmv, dense = _item(a["items"], "scatter.3"), _item(a["items"], "fusion.9")
    assert [sc["slow_end_as_compiled"] for sc in spmv["scenarios"]] == [False, True]
    assert [sc["slow_end_as_compiled"] for sc in dense["scenarios"]] == [False, False]
    assert spmv["scenarios"][1]["speedup_low"] == 0.04  # the marked rank's slow end
    assert a["ranks"][1]["items"][0]["restructured_structure_dependent"] is True
    lines = job_text.answer_lines(a)
    assert lines.count(f"  {SLOW_END_AS_COMPILED_NOTE}") == 1
    (restructured,) = [ln for ln in lines if "restructured: speedup 0.04" in ln]
    assert "3x*" in restructured or "3.0x*" in restructured
    assert not [ln for ln in lines if "as compiled: speedup" in ln and "*" in ln]
    def answer_html(answer):  # job.html's answer section, the rest of the job's page as built
        page = job_html.render({**job_report["model"], "answer": answer})
        start = page.index("<h2>The answer: FPGA offload over the job</h2>")
        return page[start : page.index("<h2>The answer per rank</h2>")]

    page = answer_html(a)
    assert page.count("*") == 2  # the marked span and the note's own
    from fpgaprof.base.markup import esc

    assert esc(SLOW_END_AS_COMPILED_NOTE) in page
    for r in ranks:
        r["candidates"][0]["restructured_structure_dependent"] = False
    plain = job_answer(ranks, [("jit_spmv", "scatter.3")], "alveo-u280")
    assert SLOW_END_AS_COMPILED_NOTE not in "\n".join(job_text.answer_lines(plain))
    assert "*" not in answer_html(plain)


def test_the_job_report_takes_the_users_row_imbalance(tmp_path):
    # `fpgaprof report JOB --row-imbalance DELTA`: every rank's rankings take it, job.json says
    # which, job.txt and job.html print it under the answer; a bad ratio fails before a rank is
    # read.
    import json

    import fpgaprof
    from fpgaprof import report
    from fpgaprof.base.markup import esc

    out, card = _job_folder(tmp_path)
    paths = report.write_job(fpgaprof.load(out), tmp_path / "job", target=str(card),
                             row_imbalance=2.5)
    model = json.loads(open(paths["json"], encoding="utf-8").read())
    assert model["row_imbalance"] == 2.5
    line = "row imbalance given: 2.5 (HiSpMV's delta), applied to every restructured scatter on every rank"
    assert line in paths["text"]
    assert esc(line) in open(paths["html"], encoding="utf-8").read()
    for none in (None, 0, -0.0):  # 0: the API's "not known"
        plain = report.write_job(fpgaprof.load(out), tmp_path / f"plain{none}", target=str(card),
                                 row_imbalance=none)
        assert json.loads(open(plain["json"], encoding="utf-8").read())["row_imbalance"] is None
        assert "row imbalance" not in plain["text"]
    with pytest.raises(fpgaprof.InvalidArgumentError, match="row_imbalance 0.5"):
        report.write_job(fpgaprof.load(out), tmp_path / "bad", row_imbalance=0.5)
    assert not (tmp_path / "bad").exists()


def test_a_rank_killed_under_run_is_named_killed_not_never_started(tmp_path):
    # `fpgaprof run` outlives its SIGKILLed program (an OOM kill, a segfault): the job report
    # gives the reason run saw, not "no process of this rank started fpgaprof's bootstrap".
    import json
    import os
    import subprocess
    import sys

    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "OMPI_", "PMI_"))}
    for k in ("RANK", "WORLD_SIZE", "FPGAPROF_RUN_DIR", "FPGAPROF_RUN_TRACE"):
        env.pop(k, None)
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    for k in range(2):
        subprocess.run(
            [sys.executable, "-m", "fpgaprof.cli", "run", "--no-timeline", "-o", str(out), "--",
             sys.executable, "-c", code if k == 1 else "pass"],
            env=env | {"SLURM_PROCID": str(k), "SLURM_NTASKS": "2"},
            capture_output=True, text=True, timeout=300,
        )
    j = job.Job(out).summary()
    reasons = {m["process_index"]: m["reason"] for m in j["missing"]}
    assert "without a normal interpreter exit" in reasons[1], reasons
    assert "signal 9" in reasons[1]


def test_traces_of_runs_that_found_their_folder_taken_are_read(tmp_path):
    # `fpgaprof run` writes into <folder>/<host>-pid<pid>/ when its folder is another run's
    # (two runs of one rank folder; a rank given the wrong index by its launcher). Those traces
    # were never read: the job said rank 1 was "never traced" while its trace sat in
    # h-rank0/h-pid42/. Now each is an entry placed by its own process index, and a rank held
    # twice is a conflict.
    import _constructed_trace

    import fpgaprof

    def save(folder, k):
        folder.mkdir(parents=True)
        s = _constructed_trace.store()
        s.set_meta(process_index=k, process_count=3, process_source="SLURM", host_name="h")
        s.save(str(folder / "trace.fpgaprof"))

    out = tmp_path / "out"
    save(out / "h-rank0", 0)
    save(out / "h-rank0" / "h-pid42", 1)  # rank 1, given rank 0's folder
    save(out / "h-pid43", 2)  # rank 2, its folder taken, beside the rank folders
    (out / "h-pid44").mkdir()  # no trace: not an entry
    j = fpgaprof.load(out)
    assert [e.name for e in j.ranks] == ["h-rank0", "h-rank0/h-pid42", "h-pid43"]
    s = j.summary()
    assert sorted(r["process_index"] for r in s["ranks"]) == [0, 1, 2]
    assert not s["missing"] and not s["conflicts"]
    # the same rank in two traces: a conflict, not a silent pick
    save(out / "h-rank0" / "h-pid45", 0)
    s = fpgaprof.load(out).summary()
    assert [c["process_index"] for c in s["conflicts"]] == [0]
