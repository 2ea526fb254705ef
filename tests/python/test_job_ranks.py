"""A real multi-process JAX job on this machine, traced per rank and reported as one.

Three CPU processes on localhost (jax.distributed.initialize with a 127.0.0.1 coordinator on a
free port; CPU collectives through gloo: one process_allgather, checked), each traced through
the libcupti test double's "ranks" scenario (tests/fake_cupti/fake_cupti.hpp), which lets the
process write its own kernels. Two ways of starting them:

  test_run_under_a_launcher: `fpgaprof run -o OUT -- python job.py` per process with Slurm's
    variables (SLURM_PROCID, SLURM_NTASKS) as srun sets them -> OUT/<host>-rank<k>/, then
    `fpgaprof report OUT` and fpgaprof.load(OUT).
  test_killed_rank: `with fpgaprof.trace(OUT)` (a folder) in each process, no launcher
    variables: the rank comes from JAX. Rank 2 is SIGKILLed inside its block once the others
    have saved: their traces load and the report names rank 2 as missing.

Kernels of rank k (ns after the fake's time base; "op" is the XLA thunk range around it):
  loop_fusion_0                              op fusion.0            [0, 100000 (k+1))
  ncclDevKernel_AllReduce_Sum_f32_RING_LL    none                   [50000, 150000)
  xla_collective                             op all-gather-start.1  [500000, 520000)
  loop_fusion_1                              op fusion.1            [510000, 560000)

By hand, per rank k = 0, 1, 2:
  kernels 4; summed time 100000 (k+1) + 100000 + 20000 + 50000 = 270000, 370000, 470000 ns.
  busy (union): [0, max(100000 (k+1), 150000)) + [500000, 560000)
    = 150000 + 60000 = 210000; 200000 + 60000 = 260000; 300000 + 60000 = 360000 ns.
  collectives: 2 kernels (the NCCL one by its name, the other by its op), 120000 ns summed,
    union 100000 + 20000 = 120000 ns; compute (other kernels) union 100000 (k+1) + 50000.
  overlap with compute: [50000, min(100000 (k+1), 150000)) + [510000, 520000)
    = 50000 + 10000 = 60000; 100000 + 10000 = 110000; 110000 ns.
Job: collectives 6 kernels, busy 360000 ns, overlap 280000 ns = 7/9 of it; all-reduce 3 x
  100000 = 300000 ns, all-gather 3 x 20000 = 60000 ns.
  Balance: busy 210000, 260000, 360000 ns; mean 830000/3; busiest/mean = 360000 x 3 / 830000
  = 1.30120; busiest rank 2, least busy rank 0; spread 150000 ns = 150/360 of the busiest.
  FPGA candidate ops over the job: fusion.0 = 100000 + 200000 + 300000 = 600000 ns on 3 ranks
  (rank min 100000, max 300000, slowest rank 2), fusion.1 = 3 x 50000 = 150000 ns,
  all-gather-start.1 = 3 x 20000 = 60000 ns.
  Stragglers: rank k sleeps 0.1 + 0.25 k s inside region "step": rank 2 is the slowest of
  "step", rank 0 the fastest (the gaps, 0.25 s, are far above sleep's jitter).
"""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

fake = pytest.importorskip("_fake_cupti")
pytest.importorskip("jax")

import fpgaprof  # noqa: E402

N = 3
NS = 1e-9

JOB = textwrap.dedent("""
    import ctypes, json, os, signal, sys, time
    import jax
    mode, folder, port = sys.argv[1], sys.argv[2], sys.argv[3]
    rank = int(sys.argv[4])
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=%(n)d,
                               process_id=rank, initialization_timeout=120)
    import jax.numpy as jnp
    from jax.experimental import multihost_utils
    import fpgaprof
    got = multihost_utils.process_allgather(jnp.array([rank + 1.0]))
    assert [float(v) for v in got.reshape(-1)] == [1.0, 2.0, 3.0], got
    ids = {d.local_hardware_id: d.id for d in jax.local_devices()}
    with open(os.path.join(folder, f"jax-{rank}.json"), "w") as f:
        json.dump({"process_index": jax.process_index(), "global_ids": ids}, f)
    with open(os.path.join(folder, f"pid-{rank}"), "w") as f:
        f.write(str(os.getpid()))
    fake = ctypes.CDLL(os.environ["FPGAPROF_CUPTI_LIBRARY"])
    fake.fake_cupti_kernel.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.c_uint64, ctypes.c_uint64]

    def work():
        fake.fake_cupti_emit()
        with fpgaprof.region("step"):
            k = fake.fake_cupti_kernel
            k(0, b"loop_fusion_0", b"fusion.0", 0, 100000 * (rank + 1))
            k(0, b"ncclDevKernel_AllReduce_Sum_f32_RING_LL", b"", 50000, 150000)
            k(0, b"xla_collective", b"all-gather-start.1", 500000, 520000)
            k(0, b"loop_fusion_1", b"fusion.1", 510000, 560000)
            time.sleep(0.1 + 0.25 * rank)

    if mode == "run":
        work()
    else:
        with fpgaprof.trace(folder):
            work()
            if rank == %(n)d - 1:
                def saved():
                    return sum(1 for root, _, files in os.walk(folder)
                               for f in files if f == "trace.fpgaprof")
                deadline = time.time() + 120
                while saved() < %(n)d - 1 and time.time() < deadline:
                    time.sleep(0.05)
                os.kill(os.getpid(), signal.SIGKILL)
        print("saved", rank, flush=True)
        open(os.path.join(folder, f"done-{rank}"), "w").close()
        # The coordinator (rank 0) goes last, once rank 2 is dead: when the coordinator is
        # gone, the other ranks abort.
        def last_gone():  # the killed rank has ended (a zombie until the test reaps it)
            try:
                pid = open(os.path.join(folder, f"pid-{%(n)d - 1}")).read()
            except OSError:
                return False
            try:
                with open(f"/proc/{pid}/stat") as f:
                    return f.read().rsplit(")", 1)[1].split()[0] in "ZX"
            except OSError:
                return True

        deadline = time.time() + 120
        while rank == 0 and time.time() < deadline and not (last_gone() and all(
                os.path.exists(os.path.join(folder, f"done-{r}")) for r in range(%(n)d - 1))):
            time.sleep(0.05)
        os._exit(0)  # JAX's shutdown barrier would wait for the killed rank
""") % {"n": N}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_for(extra: dict) -> dict:
    env = dict(os.environ)
    for k in ("FPGAPROF_RUN_DIR", "FPGAPROF_RUN_TRACE", "NVTX_INJECTION64_PATH"):
        env.pop(k, None)
    for var in (
        "SLURM_PROCID",
        "SLURM_NTASKS",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "PMI_RANK",
        "PMI_SIZE",
        "RANK",
        "WORLD_SIZE",
    ):
        env.pop(var, None)
    env.update(
        {
            "FPGAPROF_CUPTI_LIBRARY": fake.need_fake(),
            "FAKE_CUPTI_SCENARIO": "ranks",
            "JAX_PLATFORMS": "cpu",
        }
    )
    env.update(extra)
    return env


def start_job(tmp_path, mode: str, out) -> list:
    script = tmp_path / "job.py"
    script.write_text(JOB)
    port = free_port()
    procs = []
    for k in range(N):
        args = [str(script), mode, str(out), str(port), str(k)]
        if mode == "run":
            cmd = [
                sys.executable,
                "-m",
                "fpgaprof.cli",
                "run",
                "--no-timeline",
                "-o",
                str(out),
                "--",
                sys.executable,
                *args,
            ]
            env = env_for({"SLURM_PROCID": str(k), "SLURM_NTASKS": str(N)})
        else:
            cmd = [sys.executable, *args]
            env = env_for({})
        procs.append(
            subprocess.Popen(
                cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
        )
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=300)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
    return [(p.returncode, o) for p, o in zip(procs, outs)]


def report(folder) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fpgaprof.cli", "report", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env_for({}),
    )


def check_rank_numbers(job: dict, ranks) -> None:
    rows = {r["process_index"]: r for r in job["ranks"]}
    assert sorted(rows) == list(ranks)
    for k in ranks:
        r = rows[k]
        assert r["kernel_count"] == 4
        assert r["kernel_time_s"] == pytest.approx((270000 + 100000 * k) * NS)
        assert r["busy_s"] == pytest.approx([210000, 260000, 360000][k] * NS)
        assert r["collective_s"] == pytest.approx(120000 * NS)
        assert r["collective_overlap_s"] == pytest.approx([60000, 110000, 110000][k] * NS)
    coll = {c["process_index"]: c for c in job["collectives"]["by_rank"]}
    for k in ranks:
        assert coll[k]["kernel_count"] == 2
        assert coll[k]["kernel_s"] == pytest.approx(120000 * NS)


def test_run_under_a_launcher(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    results = start_job(tmp_path, "run", out)
    for code, text in results:
        assert code == 0, text
    host = socket.gethostname()
    folders = sorted(p.name for p in out.iterdir() if p.is_dir())
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in host)
    assert folders == [f"{safe}-rank{k}" for k in range(N)]

    # Each rank's trace carries who it was: JAX's view (initialised before the save).
    for k in range(N):
        prof = fpgaprof.load(out / f"{safe}-rank{k}")
        assert isinstance(prof, fpgaprof.Profile)
        jx = json.loads((out / f"jax-{k}.json").read_text())
        m = prof.meta
        assert (m["process_index"], m["process_count"]) == (k, N)
        assert m["process_source"] == "jax"
        assert m["host_name"] == host
        assert m["global_device_ids"] == [jx["global_ids"]["0"]]
        assert (out / f"{safe}-rank{k}" / "report.html").is_file()  # each run reports itself

    r = report(out)
    assert r.returncode == 0, r.stderr
    for name in ("job.json", "job.html", "job.txt"):
        assert (out / name).is_file()
    job = json.loads((out / "job.json").read_text())
    assert (job["rank_count"], job["process_count"], job["missing"]) == (N, N, [])
    check_rank_numbers(job, range(N))

    jx = [json.loads((out / f"jax-{k}.json").read_text()) for k in range(N)]
    devices = {(d["process_index"], d["device_id"]): d for d in job["devices"]}
    assert sorted(devices) == [(k, 0) for k in range(N)]
    for k in range(N):
        assert devices[(k, 0)]["global_device_id"] == jx[k]["global_ids"]["0"]
        assert devices[(k, 0)]["kernel_count"] == 4

    c = job["collectives"]
    assert c["kernel_count"] == 6
    assert c["busy_s"] == pytest.approx(360000 * NS)
    assert c["overlap_s"] == pytest.approx(280000 * NS)
    assert c["overlap_fraction"] == pytest.approx(7 / 9)
    kinds = {k["kind"]: k for k in c["by_kind"]}
    assert set(kinds) == {"all-reduce", "all-gather"}
    assert (kinds["all-reduce"]["count"], kinds["all-gather"]["count"]) == (3, 3)
    assert kinds["all-reduce"]["total_s"] == pytest.approx(300000 * NS)
    assert kinds["all-gather"]["total_s"] == pytest.approx(60000 * NS)

    b = job["balance"]
    assert (b["slowest_rank"], b["least_busy_rank"]) == (2, 0)
    assert b["imbalance"] == pytest.approx(360000 * 3 / 830000)
    assert b["spread_s"] == pytest.approx(150000 * NS)
    assert b["spread_fraction"] == pytest.approx(150 / 360)

    ops = {(o["op"]): o for o in job["candidates"]["items"]}
    assert ops["fusion.0"]["gpu_s"] == pytest.approx(600000 * NS)
    assert ops["fusion.0"]["ranks"] == 3
    assert ops["fusion.0"]["rank_min_gpu_s"] == pytest.approx(100000 * NS)
    assert ops["fusion.0"]["rank_max_gpu_s"] == pytest.approx(300000 * NS)
    assert ops["fusion.0"]["slowest_rank"] == 2
    assert ops["fusion.1"]["gpu_s"] == pytest.approx(150000 * NS)
    assert ops["all-gather-start.1"]["gpu_s"] == pytest.approx(60000 * NS)
    assert job["candidates"]["items"][0]["op"] == "fusion.0"  # most GPU time first

    step = {s["path"]: s for s in job["stragglers"]["items"]}["step"]
    assert (step["ranks"], step["slowest_rank"], step["fastest_rank"]) == (3, 2, 0)
    assert step["max_wall_s"] - step["min_wall_s"] >= 0.45

    assert job["clock"]["method"] == "same host"
    # The text report names the slowest rank and the collectives' overlap.
    assert "busiest rank 2" in r.stdout
    assert "77.8 % of it overlapped with compute" in r.stdout

    j = fpgaprof.load(out)
    assert isinstance(j, fpgaprof.Job)
    assert j.summary()["collectives"]["kernel_count"] == 6
    assert j.rank(0).meta["process_index"] == 0


def test_killed_rank(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    results = start_job(tmp_path, "trace", out)
    for k in range(N - 1):
        code, text = results[k]
        assert code == 0, text
        assert f"saved {k}" in text
    assert results[N - 1][0] == -signal.SIGKILL

    r = report(out)
    assert r.returncode == 0, r.stderr
    job = json.loads((out / "job.json").read_text())
    assert (job["rank_count"], job["process_count"]) == (N - 1, N)
    check_rank_numbers(job, range(N - 1))
    assert [m["process_index"] for m in job["missing"]] == [N - 1]
    assert "MISSING rank 2" in r.stdout
    assert "rank 2" in (out / "job.html").read_text()
