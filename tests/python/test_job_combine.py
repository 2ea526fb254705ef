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
        # Slurm first, as JAX's cluster detection reads it.
        (
            {"SLURM_PROCID": "2", "SLURM_NTASKS": "4", "RANK": "0", "WORLD_SIZE": "4"},
            (2, 4, "SLURM"),
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


def test_missing_ranks_by_count_and_by_name():
    rows = [row(0, "a", [], busy_s=2.0), row(2, "a", [], busy_s=1.0)]
    s = job.combine(rows, [{"name": "a-rank3", "process_index": 3, "reason": "no trace: x"}])
    # process_count 3: rank 1 has no entry at all; rank 3's folder said why it has none.
    assert [m["process_index"] for m in s["missing"]] == [1, 3]
    assert "no trace of this rank" in s["missing"][0]["reason"]
    b = s["balance"]
    assert (b["slowest_rank"], b["least_busy_rank"]) == (0, 2)
    assert b["imbalance"] == pytest.approx(2.0 / 1.5)


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
    assert "\x1b" not in text and "<script>x</script>?[31m" in text
