"""`fpgaprof run` end to end on this machine (no GPU: a host-only trace with regions), then
`report`, `export` and `compare` on what it wrote. The script is unmodified in the sense that
it never starts tracing itself; it only marks regions."""
import csv
import io
import json
import os
import subprocess
import sys
import textwrap

import fpgaprof
import pytest

jsonschema = pytest.importorskip("jsonschema")
SCHEMA = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "summary.schema.json")

SCRIPT = textwrap.dedent("""
    import sys, time
    import fpgaprof
    mode = sys.argv[1]
    for size in (8, 16):
        with fpgaprof.region(f"work/{size}"):
            time.sleep(0.02)
    with fpgaprof.region("tail <b>"):
        time.sleep(0.01)
    print("script ran", sys.argv[1:])
    if mode == "exit3":
        sys.exit(3)
    if mode == "raise":
        raise ValueError("boom from the script")
    if mode == "term":  # a scheduler's time limit, sent to the program itself
        import os, signal
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(60)
        print("still running after SIGTERM")
    if mode == "wait":  # until the test signals `fpgaprof run`
        open(sys.argv[2], "w").close()
        time.sleep(60)
        print("still running after SIGTERM")
    if mode == "own-handler":  # the program's own SIGTERM handling is left alone
        import os, signal
        def handler(signum, frame):
            print("user handler ran")
            sys.exit(5)
        signal.signal(signal.SIGTERM, handler)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(60)
""")


def fp(*args, cwd=None, timeout=300):
    env = dict(os.environ)
    env.pop("FPGAPROF_RUN_DIR", None)
    return subprocess.run([sys.executable, "-m", "fpgaprof.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    p = tmp_path_factory.mktemp("script") / "user_script.py"
    p.write_text(SCRIPT)
    return p


@pytest.fixture(scope="module")
def run_exit3(script, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    r = fp("run", "-o", str(out), "--", sys.executable, str(script), "exit3", "--flag")
    return out, r


def test_exit_code_passes_through(run_exit3):
    out, r = run_exit3
    assert r.returncode == 3, r.stderr
    assert "script ran ['exit3', '--flag']" in r.stdout
    # The run's digest goes to stderr (stdout is the program's), before the report paths.
    err = r.stderr.splitlines()
    first = next(i for i, ln in enumerate(err) if ln.startswith("fpgaprof: "))
    assert any(ln.startswith("FPGA offload on alveo-u55c, regions as whole units") for ln in err[first:])
    assert err[-1].startswith("fpgaprof run: report ")


def test_outputs_written(run_exit3):
    out, r = run_exit3
    for name in ("trace.fpgaprof", "report.html", "summary.json", "timeline.json",
                 "environment.json"):
        assert (out / name).is_file(), (name, r.stderr)
    assert not (out / ".tmp-summary.json").exists()
    assert not (out / ".fpgaprof-claim").exists()
    assert not (out / ".fpgaprof-run.lock").exists()  # the run removed its lock as it ended
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    s = json.loads((out / "summary.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(s)
    ms = [(m["operation"], m["volume_size"], m["run"]) for m in s["measurements"]]
    assert ms == [("work", 8, 0), ("work", 16, 0), ("tail <b>", None, 0)]
    # each region slept 20 ms (10 ms for the last): wall time at least that
    times = [m["time"] for m in s["measurements"]]
    assert times[0] >= 0.02 and times[1] >= 0.02 and times[2] >= 0.01
    assert all(t < 5 for t in times)
    env = json.loads((out / "environment.json").read_text())
    assert set(env) == {"backend", "devices", "jax_version", "mbirjax_version"}
    # the run's environment.json wins; what it does not know comes from the trace's META
    # (recorded at capture: the Python version at least)
    assert {k: s["environment"][k] for k in env} == env
    assert s["environment"]["python_version"] == sys.version.split()[0]
    html = (out / "report.html").read_text()
    assert "tail &lt;b&gt;" in html and "tail <b>" not in html


def test_run_lock_taken_on_a_file_removed_meanwhile_is_taken_again(tmp_path, monkeypatch):
    """A run that ends removes its lock file while holding it. A run that opened the file just
    before (and locks it once the first lets go) holds a lock on a removed file, which a third
    run would not see: it must notice and lock the path's new file."""
    from fpgaprof.cli import run as run_cli

    folder = str(tmp_path)
    path = tmp_path / ".fpgaprof-run.lock"
    real_flock = run_cli.fcntl.flock
    calls = []

    def flock_after_the_other_run_ended(fd, how):
        if not calls:  # the file this run opened is removed before it locks it
            os.unlink(path)
        calls.append(fd)
        return real_flock(fd, how)

    monkeypatch.setattr(run_cli.fcntl, "flock", flock_after_the_other_run_ended)
    where, fd = run_cli.claim_folder(folder)
    monkeypatch.undo()
    try:
        assert where == folder
        assert len(calls) == 2  # locked the removed file, saw it gone, locked the new one
        assert os.fstat(fd).st_ino == os.stat(path).st_ino
        # held: a second claim goes to a folder of its own, whose lock it then releases
        own, fd2 = run_cli.claim_folder(folder)
        assert own.startswith(folder + os.sep) and "-pid" in own
        run_cli.release_folder(own, fd2)
        assert not os.path.exists(os.path.join(own, ".fpgaprof-run.lock"))
    finally:
        run_cli.release_folder(folder, fd)
    assert not path.exists()
    where, fd = run_cli.claim_folder(folder)  # free again once released
    run_cli.release_folder(where, fd)
    assert where == folder


def test_exception_still_saves(script, tmp_path):
    out = tmp_path / "out"
    r = fp("run", "-o", str(out), "--", sys.executable, str(script), "raise")
    assert r.returncode == 1
    assert "ValueError: boom from the script" in r.stderr  # the user's traceback, unchanged
    s = json.loads((out / "summary.json").read_text())
    assert len(s["measurements"]) == 3


def test_report_regenerates(run_exit3, tmp_path):
    out, _ = run_exit3
    dest = tmp_path / "again"
    r = fp("report", str(out / "trace.fpgaprof"), "-o", str(dest))
    assert r.returncode == 0, r.stderr
    # The digest first (report/digest.py: the answer, then the trace), then the files written.
    assert r.stdout.startswith("FPGA answer")
    assert "\nfpgaprof: " in r.stdout
    assert "FPGA offload on alveo-u55c, regions as whole units" in r.stdout
    assert r.stdout.splitlines()[-3].startswith("html ")
    a = json.loads((out / "summary.json").read_text())
    b = json.loads((dest / "summary.json").read_text())
    assert a["measurements"] == b["measurements"]
    assert a["environment"] == b["environment"]  # environment.json beside the trace is used
    assert (dest / "report.html").is_file() and (dest / "timeline.json").is_file()


def test_run_takes_the_row_imbalance_and_checks_it_before_the_command(script, tmp_path):
    # A good --row-imbalance runs the command and writes the report (what the report does with
    # it: test_analysis_fpga.py, test_the_report_takes_the_users_row_imbalance); a bad one is a
    # one-line error before the command runs: no trace, no folder.
    out = tmp_path / "out"
    r = fp("run", "-o", str(out), "--row-imbalance", "3", "--", sys.executable, str(script), "exit3")
    assert r.returncode == 3, r.stderr
    assert (out / "summary.json").is_file() and (out / "trace.fpgaprof").is_file()
    bad = tmp_path / "bad"
    marker = tmp_path / "ran"
    # exit 2 as every bad option value, in the command line's words (not the Python
    # argument's, whose "or 0 when not known" the option refuses)
    for value in ("0.5", "-1", "nan", "inf", "2e9"):
        r = fp("run", "-o", str(bad), "--row-imbalance", value, "--", sys.executable, "-c",
               f"open({str(marker)!r}, 'w').close()")
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert (f"fpgaprof run: error: --row-imbalance {float(value):g}: give HiSpMV's delta, a "
                "number from 1 (balanced) to 1e9, or leave the option out") in r.stderr, r.stderr
        assert "row_imbalance " not in r.stderr and "or 0 when" not in r.stderr
        assert not marker.exists() and not bad.exists()
    r = fp("report", str(out / "trace.fpgaprof"), "--row-imbalance", "0.9")
    assert r.returncode == 2 and "--row-imbalance 0.9: give" in r.stderr


def test_report_with_a_card_file(run_exit3, tmp_path):
    """--target takes a card file: a JSON object with FpgaTarget's fields (here a DDR4 card
    described whole: 4 channels of 19.25 GB/s, 64 GiB, 54 MB on-chip, 12,288 DSPs, PCIe gen3
    x16). The card's name is what the reports show; a bad file is a usage error naming the
    problem."""
    out, _ = run_exit3
    card = tmp_path / "u250.json"
    card.write_text(json.dumps({"name": "my-u250", "memory_type": "ddr4", "memory_channels": 4,
                                "memory_bytes_per_s": 77e9, "memory_capacity_bytes": 68719476736,
                                "sram_bytes": 54e6, "dsp_count": 12288, "dsps_per_fma_fp32": 5,
                                "link_bytes_per_s": 15.75e9}))
    dest = tmp_path / "u250"
    r = fp("report", str(out / "trace.fpgaprof"), "-o", str(dest), "--target", str(card))
    assert r.returncode == 0, r.stderr
    assert "FPGA offload on my-u250" in r.stdout
    s = json.loads((dest / "summary.json").read_text())
    assert s["candidates"]["target"] == "my-u250"
    # Wrong unit in the file, malformed JSON, a missing file: exit 2, one line each.
    card.write_text(json.dumps({"base": "alveo-u55c", "clock_hz": 250}))
    r = fp("report", str(out / "trace.fpgaprof"), "-o", str(dest), "--target", str(card))
    assert r.returncode == 2 and "clock_hz = 250 is below 1 MHz" in r.stderr
    card.write_text("{base: alveo-u55c}")
    r = fp("report", str(out / "trace.fpgaprof"), "-o", str(dest), "--target", str(card))
    assert r.returncode == 2 and "is not valid JSON" in r.stderr
    r = fp("report", str(out / "trace.fpgaprof"), "--target", str(tmp_path / "none.json"))
    assert r.returncode == 2 and "cannot be read" in r.stderr
    card.write_text('{"base": "alveo-u55c"}', encoding="utf-16")  # Windows Notepad / Out-File
    r = fp("report", str(out / "trace.fpgaprof"), "--target", str(card))
    assert r.returncode == 2 and "is not UTF-8 text" in r.stderr, r.stderr
    for res in (r,):
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    # A real card that is not a preset is not "corrected" to a preset with another number.
    r = fp("report", str(out / "trace.fpgaprof"), "--target", "versal-v70")
    assert r.returncode == 2 and "did you mean" not in r.stderr and "card file" in r.stderr


def test_export_formats(run_exit3, tmp_path):
    out, _ = run_exit3
    trace = str(out / "trace.fpgaprof")
    r = fp("export", trace, "--format", "csv", "--table", "regions")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [x["name"] for x in rows] == ["work/8", "work/16", "tail <b>"]
    r = fp("export", trace, "--format", "json", "-o", str(tmp_path / "s.json"))
    assert r.returncode == 0
    assert json.loads((tmp_path / "s.json").read_text())["schema_version"] == 2
    r = fp("export", trace, "--format", "perfetto", "-o", str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "t.json").read_text())
    assert sum(1 for e in doc["traceEvents"] if e.get("cat") == "region") == 3


def test_perfetto_to_stdout(run_exit3, tmp_path):
    """`-o -` writes the timeline to stdout as for json and csv (before: a file named "-");
    what it holds goes to stderr. The folder exports refuse `-o -` as a usage error."""
    out, _ = run_exit3
    trace = str(out / "trace.fpgaprof")
    r = fp("export", trace, "--format", "perfetto", "-o", "-", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [e["name"] for e in doc["traceEvents"] if e.get("cat") == "region"] == [
        "work/8", "work/16", "tail <b>"]
    assert r.stderr.startswith("timeline on stdout: ") and "3 region" in r.stderr
    assert os.listdir(tmp_path) == []
    for fmt in ("parquet", "xprof"):
        r = fp("export", trace, "--format", fmt, "-o", "-", cwd=tmp_path)
        assert r.returncode == 2 and "give -o DIR" in r.stderr, r.stderr
        assert os.listdir(tmp_path) == []


def test_compare_escapes_line_breaks_in_names(run_exit3, tmp_path):
    """A name holding CR or LF would start a line of its own in compare's table, one that can
    read as any row: shown escaped, as report's tables show it."""
    out, _ = run_exit3
    s = json.loads((out / "summary.json").read_text())
    forged = "\rFORGED\nwork/8"
    n = 0
    for item in s["regions"]["items"]:
        if item.get("name") == "work/8" or item.get("path") == "work/8":
            item["name"] = item["path"] = forged
            n += 1
    assert n
    a = tmp_path / "summary.json"
    a.write_text(json.dumps(s))
    r = fp("compare", str(a), str(a))
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stdout and not any(ln.startswith("FORGED") for ln in r.stdout.splitlines())
    assert "\\x0dFORGED\\x0awork/8" in r.stdout, r.stdout


def test_compare_runs(run_exit3):
    out, _ = run_exit3
    r = fp("compare", str(out), str(out / "trace.fpgaprof"))
    assert r.returncode == 0, r.stderr
    assert "work/8" in r.stdout


def test_corrupt_trace_is_one_line(tmp_path):
    bad = tmp_path / "bad.fpgaprof"
    bad.write_bytes(b"not a trace at all")
    r = fp("report", str(bad))
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "Traceback" not in r.stderr


def test_python_dash_m_fpgaprof():
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "--help"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and "compare" in r.stdout, r.stderr
    assert hasattr(fpgaprof, "__version__")


def test_hlo_dump_pruned(tmp_path):
    """`run` keeps each module's optimized HLO text and drops XLA's other dump files."""
    from fpgaprof.cli import run as cli_run
    hlo = tmp_path / "hlo"
    (hlo / "module_0001.jit_f").mkdir(parents=True)
    for name in ("module_0001.jit_f.cpu_after_optimizations.txt",
                 "module_0001.jit_f.before_optimizations.txt",
                 "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt",
                 "module_0001.jit_f.debug_options", "notes.txt"):
        (hlo / name).write_text("x")
    assert cli_run.prune_hlo_dump(str(hlo)) == 1
    assert sorted(os.listdir(hlo)) == ["module_0001.jit_f.cpu_after_optimizations.txt",
                                       "notes.txt"]


def test_run_with_jax_keeps_optimized_hlo(tmp_path):
    """A jitted function under `run` on CPU JAX: the optimized HLO XLA compiled is in hlo/."""
    pytest.importorskip("jax")
    script = tmp_path / "jx.py"
    script.write_text(textwrap.dedent("""
        import fpgaprof, jax, jax.numpy as jnp
        @jax.jit
        def scaled_sine(x):
            return jnp.sin(x) * 3.0
        with fpgaprof.region("sine/16"):
            scaled_sine(jnp.ones((16, 16))).block_until_ready()
    """))
    out = tmp_path / "out"
    r = fp("run", "-o", str(out), "--", sys.executable, str(script))
    assert r.returncode == 0, r.stderr
    files = os.listdir(out / "hlo")
    mine = [f for f in files if "scaled_sine" in f]
    assert mine and all(f.endswith("after_optimizations.txt") for f in files), files
    text = (out / "hlo" / mine[0]).read_text()
    assert "HloModule" in text and "sine" in text
    # `report` into the same folder does not duplicate the modules already there
    r = fp("report", str(out))
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(out / "hlo")) == sorted(files)
    # into a new folder it writes them from the trace
    r = fp("report", str(out), "-o", str(tmp_path / "again"))
    assert r.returncode == 0, r.stderr
    again = os.listdir(tmp_path / "again" / "hlo")
    assert any("scaled_sine" in f for f in again)
    s = json.loads((out / "summary.json").read_text())
    assert s["environment"]["backend"] == "cpu" and s["environment"]["jax_version"]
    assert [m["operation"] for m in s["measurements"]] == ["sine"]


def test_rerun_replaces_old_outputs(script, tmp_path):
    """A second run into the same folder leaves nothing of the first one behind, also when
    the second command writes no trace."""
    out = tmp_path / "out"
    r = fp("run", "-o", str(out), "--", sys.executable, str(script), "ok")
    assert r.returncode == 0 and (out / "report.html").exists()
    (out / "hlo").mkdir(exist_ok=True)
    (out / "hlo" / "module_0099.old.cpu_after_optimizations.txt").write_text("old")
    r = fp("run", "-o", str(out), "--", sys.executable, "-S", "-c", "raise SystemExit(4)")
    assert r.returncode == 4  # -S: no site, so no bootstrap and no trace
    assert "no trace was written" in r.stderr
    for name in ("trace.fpgaprof", "report.html", "summary.json", "timeline.json",
                 "environment.json"):
        assert not (out / name).exists(), name
    assert not (out / "hlo" / "module_0099.old.cpu_after_optimizations.txt").exists()


def _regions_in(out):
    with open(out / "summary.json", encoding="utf-8") as f:
        return {r["name"] for r in json.load(f)["regions"]["items"]}


def test_sigterm_saves_the_trace_and_ends_as_sigterm(script, tmp_path):
    out = tmp_path / "out"
    r = fp("run", "-o", str(out), "--", sys.executable, str(script), "term")
    assert r.returncode == 128 + 15, r.stderr  # the status SIGTERM gives, passed through
    assert "still running" not in r.stdout
    assert "SIGTERM received: saving the trace" in r.stderr
    assert (out / "trace.fpgaprof").exists() and (out / "report.html").exists()
    assert {"work/8", "work/16", "tail <b>"} <= _regions_in(out)
    prof = fpgaprof.load(str(out / "trace.fpgaprof"))
    assert any("ended by SIGTERM" in w for w in prof.meta["warnings"])


def test_sigterm_to_fpgaprof_run_is_passed_on(script, tmp_path):
    import signal
    import time

    out, ready = tmp_path / "out", tmp_path / "ready"
    env = dict(os.environ)
    env.pop("FPGAPROF_RUN_DIR", None)
    proc = subprocess.Popen([sys.executable, "-m", "fpgaprof.cli", "run", "-o", str(out), "--",
                             sys.executable, str(script), "wait", str(ready)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 120
    while not ready.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert ready.exists(), proc.communicate()
    proc.send_signal(signal.SIGTERM)  # to `fpgaprof run` only, as `kill <pid>` would
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + 15, stderr
    assert "still running" not in stdout
    assert (out / "trace.fpgaprof").exists() and (out / "summary.json").exists(), stderr
    assert {"work/8", "work/16"} <= _regions_in(out)


def test_the_programs_own_sigterm_handler_is_kept(script, tmp_path):
    out = tmp_path / "out"
    r = fp("run", "-o", str(out), "--", sys.executable, str(script), "own-handler")
    assert r.returncode == 5, r.stderr
    assert "user handler ran" in r.stdout
    assert "SIGTERM received" not in r.stderr
    assert (out / "trace.fpgaprof").exists()  # saved by the normal exit path


RUN_FILES = ("trace.fpgaprof", "report.html", "summary.json", "timeline.json", "environment.json")


def _contents(folder):
    """Every file under folder (relative path -> bytes)."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            p = os.path.join(root, name)
            with open(p, "rb") as f:
                found[os.path.relpath(p, folder)] = f.read()
    return found


def test_a_command_that_cannot_start_leaves_the_earlier_run_alone(script, tmp_path):
    out = tmp_path / "out"
    r = fp("run", "-o", str(out), "--", sys.executable, str(script), "ok")
    assert r.returncode == 0, r.stderr
    (out / "hlo").mkdir(exist_ok=True)
    (out / "hlo" / "module_0001.jit_f.cpu_after_optimizations.txt").write_text("HloModule f")
    before = _contents(out)
    assert set(RUN_FILES) <= set(before)
    for cmd, rc in ((["pyhton-no-such-command", str(script)], 127),
                    ([str(tmp_path / "no" / "prog")], 127),
                    ([str(script)], 126)):  # not found on PATH, no such file, not executable
        r = fp("run", "-o", str(out), "--", *cmd)
        assert r.returncode == rc, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and cmd[0] in r.stderr, r.stderr
        assert _contents(out) == before  # byte for byte, nothing added
    # a new folder is not even created
    r = fp("run", "-o", str(tmp_path / "new"), "--", "pyhton-no-such-command")
    assert r.returncode != 0 and not (tmp_path / "new").exists()


def test_run_refuses_a_folder_of_someone_elses_files(script, tmp_path):
    """`-o .` in a project folder holding its own summary.json, report.html or hlo/ dump:
    fpgaprof did not write them, so it neither removes nor replaces them, and the command does
    not run."""
    proj = tmp_path / "proj"
    (proj / "hlo").mkdir(parents=True)
    (proj / "summary.json").write_text('{"my": "results"}')
    (proj / "report.html").write_text("<h1>my paper</h1>")
    (proj / "hlo" / "module_0001.mine.txt").write_text("keep")
    (proj / "notes.txt").write_text("mine")
    before = _contents(proj)
    marker = tmp_path / "ran"
    r = fp("run", "-o", ".", "--", sys.executable, "-c", f"open({str(marker)!r}, 'w').close()",
           cwd=proj)
    assert r.returncode == 1, r.stderr
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "fpgaprof did not write" in err[0], r.stderr
    assert "summary.json" in err[0] and "report.html" in err[0]
    assert "hlo/module_0001.mine.txt" in err[0]
    assert not marker.exists()
    assert _contents(proj) == before and sorted(os.listdir(proj)) == sorted(
        ["hlo", "notes.txt", "report.html", "summary.json"])
    # A folder of the user's with other files only is fine: the run writes beside them.
    (proj / "summary.json").unlink()
    (proj / "report.html").unlink()
    (proj / "hlo" / "module_0001.mine.txt").unlink()
    r = fp("run", "-o", ".", "--", sys.executable, str(script), "ok", cwd=proj)
    assert r.returncode == 0, r.stderr
    assert (proj / "notes.txt").read_text() == "mine" and (proj / "summary.json").is_file()


def test_a_failed_run_leaves_its_folder_reusable(tmp_path):
    """A run that wrote no trace removes XLA's dump of its modules with its other marks, so
    the folder does not read as someone else's files to the next run."""
    out = tmp_path / "out"
    dump = ("import os; d = os.path.join(os.environ['FPGAPROF_RUN_DIR'], 'hlo'); "
            "os.makedirs(d, exist_ok=True); "
            "open(os.path.join(d, 'module_0001.jit_f.cpu_after_optimizations.txt'), 'w').close()")
    r = fp("run", "-o", str(out), "--", sys.executable, "-S", "-c", dump + "; raise SystemExit(4)")
    assert r.returncode == 4 and "no trace was written" in r.stderr, r.stderr
    assert not (out / "hlo").exists()
    r = fp("run", "-o", str(out), "--", sys.executable, "-S", "-c", "raise SystemExit(5)")
    assert r.returncode == 5 and "fpgaprof did not write" not in r.stderr, r.stderr


def test_the_program_gets_the_descriptors_run_was_given(tmp_path):
    """An MPI process manager hands the rank its connection as an inherited descriptor
    (PMI_FD); a shell's `3>log` does the same. `run` passes them to the program as a direct
    start would, and none of its own (the run folder's lock)."""
    log = tmp_path / "fd.log"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.set_inheritable(fd, True)
    prog = textwrap.dedent(f"""
        import os, sys
        os.write({fd}, b"under run ok\\n")
        theirs = sorted(int(n) for n in os.listdir("/proc/self/fd") if int(n) > 2)
        links = [os.readlink(f"/proc/self/fd/{{n}}") for n in theirs if os.path.exists(f"/proc/self/fd/{{n}}")]
        print("LOCKS", [p for p in links if p.endswith(".fpgaprof-run.lock")])
    """)
    env = dict(os.environ)
    env.pop("FPGAPROF_RUN_DIR", None)
    try:
        r = subprocess.run([sys.executable, "-m", "fpgaprof.cli", "run", "-o", str(tmp_path / "out"),
                            "--", sys.executable, "-c", prog], capture_output=True, text=True,
                           env=env, timeout=300, pass_fds=(fd,))
    finally:
        os.close(fd)
    assert r.returncode == 0, r.stderr
    assert log.read_text() == "under run ok\n"
    assert "LOCKS []" in r.stdout


def test_run_into_a_folder_with_a_space_dumps_there(tmp_path):
    """`run -o "out x"` from a working folder `sp ace`: XLA's dump goes to `out x/hlo`, not to
    a sibling folder named by the path's first word."""
    pytest.importorskip("jax")
    cwd = tmp_path / "sp ace"
    cwd.mkdir()
    (cwd / "j.py").write_text("import jax, jax.numpy as jnp\n"
                              "jax.jit(lambda x: jnp.sin(x) * 2)(jnp.ones(4)).block_until_ready()\n")
    r = fp("run", "-o", "out x", "--", sys.executable, "j.py", cwd=cwd)
    assert r.returncode == 0, r.stderr
    dumped = os.listdir(cwd / "out x" / "hlo")
    assert any(n.endswith("after_optimizations.txt") and "lambda" in n for n in dumped), dumped
    assert sorted(os.listdir(tmp_path)) == ["sp ace"]  # no /tmp/.../sp
    assert sorted(os.listdir(cwd)) == ["j.py", "out x"]  # no "out"


JN = textwrap.dedent("""
    import sys
    import jax, jax.numpy as jnp
    n = int(sys.argv[1])
    jax.jit(lambda x: (x * 2.0).sum())(jnp.ones(n, jnp.float32)).block_until_ready()
""")


def test_report_into_another_runs_folder_replaces_its_hlo(tmp_path):
    """Two runs of one script at different sizes dump modules of the same names (XLA numbers
    programs per process). Reporting the second trace into the first run's folder leaves
    that folder's hlo/ holding the second trace's modules only: f32[1000], no f32[8]. A file
    of the user's in hlo/ that is not a module stays; in a folder that is not fpgaprof's, a
    module file of that name is the user's and is left alone."""
    pytest.importorskip("jax")
    script = tmp_path / "jn.py"
    script.write_text(JN)
    ra, rb = tmp_path / "ra", tmp_path / "rb"
    for out, n in ((ra, "8"), (rb, "1000")):
        r = fp("run", "-o", str(out), "--", sys.executable, str(script), n)
        assert r.returncode == 0, r.stderr
    lam_a = [f for f in os.listdir(ra / "hlo") if "lambda" in f]
    assert lam_a and "f32[8]" in (ra / "hlo" / lam_a[0]).read_text()
    (ra / "hlo" / "notes.txt").write_text("mine")
    r = fp("report", str(rb / "trace.fpgaprof"), "-o", str(ra))
    assert r.returncode == 0, r.stderr
    texts = {f: (ra / "hlo" / f).read_text() for f in os.listdir(ra / "hlo") if f != "notes.txt"}
    lam = [t for f, t in texts.items() if "lambda" in f]
    assert lam and all("f32[1000]" in t and "f32[8]" not in t for t in lam), texts.keys()
    # every module file there is one of rb's modules, by text
    b_texts = {(rb / "hlo" / f).read_text().rstrip("\n") for f in os.listdir(rb / "hlo")}
    assert {t.rstrip("\n") for t in texts.values()} == b_texts
    assert (ra / "hlo" / "notes.txt").read_text() == "mine"
    shown = [ln for ln in r.stdout.splitlines() if ln.startswith("hlo ")]
    assert shown and shown[0].split()[1] == str(len(b_texts)), r.stdout
    # not fpgaprof's folder: the user's module file of the same name is kept as it was
    user = tmp_path / "user"
    (user / "hlo").mkdir(parents=True)
    mine = user / "hlo" / lam_a[0]
    mine.write_text("HloModule mine")
    r = fp("report", str(rb / "trace.fpgaprof"), "-o", str(user))
    assert r.returncode == 0, r.stderr
    assert mine.read_text() == "HloModule mine"


def test_parquet_export_over_an_earlier_one_leaves_only_its_own_tables(run_exit3, tmp_path):
    """A trace without GPU kernels has no ops, roofline or fpga_candidates rows: an earlier
    export's tables of those names in the folder would be read as this trace's."""
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    gpu = os.path.join(os.path.dirname(__file__), "..", "data", "traces",
                       "mbirjax073_parallel_128_xla_h200.fpgaprof")
    pq = tmp_path / "pq"
    r = fp("export", gpu, "--format", "parquet", "-o", str(pq))
    assert r.returncode == 0, r.stderr
    assert (pq / "ops.parquet").is_file()
    (pq / "mine.parquet").write_bytes(b"the user's own")
    out, _ = run_exit3
    r = fp("export", str(out / "trace.fpgaprof"), "--format", "parquet", "-o", str(pq))
    assert r.returncode == 0, r.stderr
    index = json.loads((pq / "index.json").read_text())
    listed = {t["file"] for t in index["tables"].values()}
    assert "ops" in index["missing"] and not (pq / "ops.parquet").exists()
    assert {f for f in os.listdir(pq) if f.endswith(".parquet")} == listed | {"mine.parquet"}
    # the host-only trace's regions, as the run wrote them
    rows = duckdb.connect().execute(f"select name from '{pq / 'regions.parquet'}'").fetchall()
    assert [x[0] for x in rows] == ["work/8", "work/16", "tail <b>"]


def _rank_env(rank, size=2):
    env = dict(os.environ)
    for k in ("FPGAPROF_RUN_DIR", "SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_RANK",
              "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK"):
        env.pop(k, None)
    env.update({"RANK": str(rank), "WORLD_SIZE": str(size)})
    return env


def _rank_run(out, rank, *cmd, **kw):
    return subprocess.run([sys.executable, "-m", "fpgaprof.cli", "run", "-o", str(out), "--", *cmd],
                          capture_output=True, text=True, timeout=300, env=_rank_env(rank), **kw)


def test_job_report_says_a_rank_still_runs(script, tmp_path):
    """A rank whose `fpgaprof run` is still going has no trace yet: the job report says it is
    running (not crashed) and the command fails, so a script does not take the report for the
    job's. Once the rank ends, the report is whole."""
    import signal
    import time

    job = tmp_path / "job"
    r = _rank_run(job, 0, sys.executable, str(script), "ok")
    assert r.returncode == 0, r.stderr
    ready = tmp_path / "ready"
    live = subprocess.Popen([sys.executable, "-m", "fpgaprof.cli", "run", "-o", str(job), "--",
                             sys.executable, str(script), "wait", str(ready)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_rank_env(1))
    try:
        deadline = time.time() + 120
        while not ready.exists() and time.time() < deadline and live.poll() is None:
            time.sleep(0.05)
        assert ready.exists(), live.communicate()
        r = fp("report", str(job))
        assert r.returncode == 1, r.stdout + r.stderr
        rank1 = [ln for ln in r.stdout.splitlines() if "rank 1" in ln and "-rank1" in ln]
        assert rank1 and rank1[0].startswith("RUNNING rank 1") and "still running" in rank1[0]
        assert "crashed" not in r.stdout, r.stdout
        assert "the job is still running (1 rank without a trace yet" in r.stderr, r.stderr
        js = json.loads((job / "job.json").read_text())
        assert [m.get("running") for m in js["missing"]] == [True]
    finally:
        live.send_signal(signal.SIGTERM)  # the rank saves its trace and run writes its reports
        live.communicate(timeout=120)
    r = fp("report", str(job))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "RUNNING" not in r.stdout and "MISSING" not in r.stdout


def test_job_report_names_a_rank_that_failed_after_saving_its_trace(script, tmp_path):
    """A rank whose program exited 3 after saving its trace (sys.exit(3) at its end): `run`
    exits 3 and records the status in the rank folder (the trace holds none), and the job
    report names the rank FAILED with that status while reading its trace like the others. As
    with a killed (MISSING) rank, the report itself succeeds. A rerun of the rank that exits 0
    leaves no stale status behind."""
    job = tmp_path / "job"
    r = _rank_run(job, 0, sys.executable, str(script), "ok")
    assert r.returncode == 0, r.stderr
    r = _rank_run(job, 1, sys.executable, str(script), "exit3")
    assert r.returncode == 3, r.stderr
    rank1 = next(p for p in job.iterdir() if p.name.endswith("-rank1"))
    assert (rank1 / "trace.fpgaprof").is_file()
    r = fp("report", str(job))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 rank traces of 2 processes" in r.stdout, r.stdout
    failed = [ln for ln in r.stdout.splitlines() if ln.startswith("FAILED")]
    assert len(failed) == 1 and failed[0].startswith(f"FAILED rank 1 ({rank1.name}): "), failed
    assert "exit status 3" in failed[0] and "MISSING" not in r.stdout, r.stdout
    js = json.loads((job / "job.json").read_text())
    assert [(e["process_index"], e["exit_status"]) for e in js["exited"]] == [(1, 3)]
    assert [x["exit_status"] for x in js["ranks"]] == [None, 3]
    assert f"Failed rank 1 ({rank1.name})" in (job / "job.html").read_text()
    r = _rank_run(job, 1, sys.executable, str(script), "ok")
    assert r.returncode == 0, r.stderr
    r = fp("report", str(job))
    assert r.returncode == 0 and "FAILED" not in r.stdout, r.stdout + r.stderr
    assert json.loads((job / "job.json").read_text())["exited"] == []


def test_report_of_a_run_folder_names_the_traces_of_runs_that_found_it_taken(script, tmp_path):
    """Two `fpgaprof run -o out` at once: the second writes out/<host>-pid<p>/ (claim_folder).
    `fpgaprof report out` reports out/trace.fpgaprof and says where the other trace is and how
    to report it; with no trace of its own the folder's error names it too."""
    import signal
    import time

    out = tmp_path / "out"
    ready = tmp_path / "ready"
    env = dict(os.environ)
    env.pop("FPGAPROF_RUN_DIR", None)
    first = subprocess.Popen([sys.executable, "-m", "fpgaprof.cli", "run", "-o", str(out), "--",
                              sys.executable, str(script), "wait", str(ready)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.time() + 120
        while not ready.exists() and time.time() < deadline and first.poll() is None:
            time.sleep(0.05)
        assert ready.exists(), first.communicate()
        r = fp("run", "-o", str(out), "--", sys.executable, str(script), "ok")
        assert r.returncode == 0 and "is in use by another fpgaprof run" in r.stderr, r.stderr
    finally:
        first.send_signal(signal.SIGTERM)  # it saves its trace and writes its reports
        first.communicate(timeout=120)
    pid_dirs = [p for p in out.iterdir() if p.is_dir() and "-pid" in p.name]
    assert len(pid_dirs) == 1 and (pid_dirs[0] / "trace.fpgaprof").is_file()
    other = str(pid_dirs[0])
    r = fp("report", str(out))
    assert r.returncode == 0, r.stderr
    note = [ln for ln in r.stderr.splitlines() if "note:" in ln]
    assert len(note) == 1 and other in note[0], r.stderr
    assert f"`fpgaprof report {other}`" in note[0] and "not read here" in note[0], note
    os.unlink(out / "trace.fpgaprof")
    r = fp("report", str(out))
    assert r.returncode == 1 and f"`fpgaprof report {other}`" in r.stderr, r.stderr


def test_a_job_beside_an_earlier_single_trace_is_not_reported_as_it(script, tmp_path):
    """`fpgaprof run -o out` then `srun -n 2 fpgaprof run -o out`: out holds the single run's
    trace.fpgaprof and the job's rank folders. Reading the old trace alone would hide the job:
    report, compare, export and fpgaprof.load refuse and say how to choose."""
    out = tmp_path / "jo"
    r = fp("run", "-o", str(out), "--", sys.executable, str(script), "ok")
    assert r.returncode == 0, r.stderr
    for k in (0, 1):
        r = _rank_run(out, k, sys.executable, str(script), "ok")
        assert r.returncode == 0, r.stderr
    names = sorted(os.listdir(out))
    assert "trace.fpgaprof" in names and sum(n.endswith(("-rank0", "-rank1")) for n in names) == 2
    before = (out / "report.html").stat().st_mtime_ns
    for cmd in (["report", str(out)], ["compare", str(out), str(out)],
                ["export", str(out), "--format", "json"]):
        r = fp(*cmd)
        assert r.returncode == 1, (cmd, r.stderr)
        err = r.stderr.strip().splitlines()
        assert len(err) == 1 and "holds a single-process trace.fpgaprof and 2 rank folders" in err[0]
        assert str(out / "trace.fpgaprof") in err[0] and "move it out" in err[0]
    assert (out / "report.html").stat().st_mtime_ns == before  # not rewritten from the old trace
    with pytest.raises(fpgaprof.FpgaprofError, match="2 rank folders"):
        fpgaprof.load(str(out))
    # the single trace by its file name, and the job once the old trace is moved away
    assert fp("report", str(out / "trace.fpgaprof"), "-o", str(tmp_path / "single")).returncode == 0
    os.rename(out / "trace.fpgaprof", tmp_path / "old.fpgaprof")
    r = fp("report", str(out))
    assert r.returncode == 0 and "2 rank traces of 2 processes" in r.stdout, r.stdout + r.stderr
    # compare and export take one trace: a job folder is named as such, with both ways on
    os.unlink(out / "summary.json")  # compare reads a run folder's summary.json first
    for cmd in (["compare", str(out), str(out)], ["export", str(out), "--format", "json"]):
        r = fp(*cmd)
        assert r.returncode == 1, (cmd, r.stderr)
        err = r.stderr.strip().splitlines()
        assert len(err) == 1 and f"{out} is a job folder of 2 rank traces: give one rank's trace" \
            in err[0] and f"`fpgaprof report {out}` for the job" in err[0], err
        assert "-rank0" in err[0] and "trace.fpgaprof" in err[0]
