"""`fpgaprof run` traces the first Python process only: the further Python processes the
program starts (multiprocessing spawn workers, a subprocess of another Python, forked
children) must be reported as untraced, with whether they compiled XLA modules, in the run's
output, summary.json and the trace file, and their HLO must stay out of the run's hlo/.
Before this was added nothing said so (trial 6, item 1)."""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import fpgaprof
import pytest

from _fake_cupti import fake_cupti_path


def run(tmp_path, code, *args, env_extra=None, timeout=240):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(code))
    out = tmp_path / "out"
    env = dict(os.environ)
    for k in ("FPGAPROF_RUN_DIR", "FPGAPROF_RUN_TRACE"):
        env.pop(k, None)
    env.update(env_extra or {})
    if env.get("PYTHONPATH"):  # the program runs in tmp_path: a relative entry would miss
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in
                                            env["PYTHONPATH"].split(os.pathsep) if p)
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "run", "-o", str(out), "--",
                        sys.executable, "prog.py", *args], capture_output=True, text=True,
                       timeout=timeout, env=env, cwd=str(tmp_path))
    return out, r


def warning_line(stderr):
    lines = [ln for ln in stderr.splitlines() if "ran untraced" in ln]
    assert len(lines) == 1, stderr[-2000:]
    return lines[0]


def summary_warnings(out):
    with open(out / "summary.json", encoding="utf-8") as f:
        return [w["message"] for w in json.load(f)["warnings"]]


def test_spawn_workers_are_reported(tmp_path):
    out, r = run(tmp_path, """
        import multiprocessing as mp
        def work(i):
            return i * 2
        if __name__ == "__main__":
            with mp.get_context("spawn").Pool(2) as p:
                print(p.map(work, range(4)))
                # close + join: the pool's exit alone terminates a worker that got no task
                # yet, maybe before its start-up wrote the marker
                p.close()
                p.join()
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "[0, 2, 4, 6]" in r.stdout
    line = warning_line(r.stderr)
    # Two pool workers; multiprocessing's resource tracker runs no user code and is not listed.
    assert "2 further Python processes ran untraced" in line
    assert "2 × multiprocessing spawn worker (0 XLA modules compiled)" in line
    assert any(w.startswith("2 further Python processes ran untraced")
               for w in summary_warnings(out))
    # Kept in the trace, so a later `fpgaprof report` says it too.
    assert any("ran untraced" in w for w in fpgaprof.load(str(out / "trace.fpgaprof")).meta["warnings"])
    assert not (out / ".fpgaprof-untraced").exists()


def test_a_python_subprocess_with_jax_is_reported_with_its_compiles(tmp_path):
    (tmp_path / "child.py").write_text(textwrap.dedent("""
        import jax, jax.numpy as jnp
        def untraced_child_fn(x):
            return x * 3 + 1
        print(float(jax.jit(untraced_child_fn)(jnp.ones(4)).sum()))
    """))
    out, r = run(tmp_path, """
        import subprocess, sys
        subprocess.run([sys.executable, "child.py", "--size", "8"], check=True)
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "16.0" in r.stdout
    line = warning_line(r.stderr)
    assert "1 further Python process ran untraced" in line
    assert "python child.py --size 8 (" in line
    # jit of untraced_child_fn compiles at least that module (XLA may add more: casts, sums).
    n = int(line.split("python child.py --size 8 (")[1].split(" XLA module")[0])
    assert n >= 1
    # The child's HLO is not the traced program's: it stays out of the run's hlo/.
    hlo = os.listdir(out / "hlo") if (out / "hlo").is_dir() else []
    assert not [f for f in hlo if "untraced_child_fn" in f], hlo


def test_a_forked_child_is_reported(tmp_path):
    out, r = run(tmp_path, """
        import os
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        print("parent done")
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    line = warning_line(r.stderr)
    assert "1 further Python process ran untraced" in line
    assert "forked child of `python prog.py`" in line


def test_a_single_process_program_has_no_untraced_warning(tmp_path):
    out, r = run(tmp_path, "print('alone')\n")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "untraced" not in r.stderr
    assert not any("untraced" in w for w in summary_warnings(out))


def test_launched_nothing_is_not_claimed_for_untraced_processes(tmp_path):
    lib = fake_cupti_path()
    if lib is None:
        pytest.skip("libfake_cupti.so not built (the GPU-traced-but-no-kernel case needs it)")
    code = """
        import subprocess, sys
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    """
    out, r = run(tmp_path, code, env_extra={"FPGAPROF_CUPTI_LIBRARY": lib})
    assert r.returncode == 0, r.stderr[-2000:]
    with open(out / "summary.json", encoding="utf-8") as f:
        s = json.load(f)
    assert s["trace"]["gpu_available"], "the fake CUPTI should give a GPU trace"
    reason = s["candidates"]["reason"]
    assert "launched nothing" in reason and "1 further Python process ran untraced and may have" in reason
    assert "the traced code launched nothing" not in r.stderr
    # Without untraced processes the usual wording stays.
    out2, r2 = run(tmp_path, "print('alone')\n", env_extra={"FPGAPROF_CUPTI_LIBRARY": lib})
    assert "the traced code launched nothing on the GPU" in r2.stderr, r2.stderr[-1500:]


def _untraced_module():
    path = os.path.join(os.path.dirname(fpgaprof.__file__), "_bootstrap", "_fpgaprof_untraced.py")
    spec = importlib.util.spec_from_file_location("_fpgaprof_untraced_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_marker_tolerates_a_vanished_or_read_only_folder(tmp_path):
    mod = _untraced_module()
    mod.note(str(tmp_path / "gone"), "started")  # the run folder vanished: no error
    assert not (tmp_path / "gone").exists()  # and it is not made again
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder should be (unwritable, also for root)")
    mod.note(str(blocked), "started")
    assert blocked.is_file()
    ok = tmp_path / "ok"
    ok.mkdir()
    mod.note(str(ok), "started")
    with open(ok / ".fpgaprof-untraced" / f"{os.getpid()}.json", encoding="utf-8") as f:
        info = json.load(f)
    assert info["pid"] == os.getpid() and info["ppid"] == os.getppid()
    assert info["how"] == "started" and info["argv"]
    assert [n for n in os.listdir(ok / ".fpgaprof-untraced") if n.endswith(".tmp")] == []
