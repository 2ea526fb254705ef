"""The temp HLO dump dir of `import fpgaprof` (fpgaprof-hlo-<pid>-*) does not leak (trial 6,
item 8): a trace saved on SIGTERM removes it although atexit is skipped, and the next import
removes the ones of processes that are gone (killed), never another live process's or a
folder fpgaprof did not name."""
import os
import signal
import subprocess
import sys
import textwrap

from fpgaprof.capture import xla_flags


def _dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid  # reaped: no such process (unless the pid is reused within the test)


def _env(tmp_dir):
    env = dict(os.environ)
    for k in ("XLA_FLAGS", "FPGAPROF_XLA_DUMP_DIR", "FPGAPROF_HLO_DUMP_DIR", "FPGAPROF_RUN_DIR",
              "FPGAPROF_RUN_TRACE"):
        env.pop(k, None)
    env["TMPDIR"] = str(tmp_dir)
    return env


def test_prune_removes_only_dead_owners_folders(tmp_path):
    dead = _dead_pid()
    stale = tmp_path / f"fpgaprof-hlo-{dead}-abc123"
    alive = tmp_path / f"fpgaprof-hlo-{os.getppid()}-def456"  # pytest's parent runs
    legacy = tmp_path / "fpgaprof-hlo-k2j3h4"  # an older fpgaprof's name: no pid, left alone
    other = tmp_path / f"someone-{dead}-x"
    for d in (stale, alive, legacy, other):
        d.mkdir()
        (d / "module_0000.x.txt").write_text("HloModule x")
    assert xla_flags.prune_stale_dump_dirs(str(tmp_path)) == 1
    assert not stale.exists()
    assert alive.exists() and legacy.exists() and other.exists()


def test_a_live_owner_in_another_pid_namespace_keeps_its_folder(tmp_path):
    """A process in another pid namespace sharing /tmp (a container) has a pid kill(pid, 0)
    cannot see here: its folder looks dead by pid, but its owner lock is held, so it stays.
    Once the lock is free (the owner died), the folder goes."""
    import fcntl
    dead = _dead_pid()  # stands for the other namespace's pid: no such process here
    folder = tmp_path / f"fpgaprof-hlo-{dead}-ns1"
    folder.mkdir()
    fd = os.open(folder / xla_flags.OWNER_LOCK_NAME, os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the live owner's lock
    try:
        assert xla_flags.prune_stale_dump_dirs(str(tmp_path)) == 0
        assert folder.exists()
    finally:
        os.close(fd)  # the owner ends: the kernel drops its lock
    assert xla_flags.prune_stale_dump_dirs(str(tmp_path)) == 1
    assert not folder.exists()


def test_import_prunes_a_killed_processs_folder(tmp_path):
    # A process that imported fpgaprof and was SIGKILLed: its folder stays behind ...
    code = "import fpgaprof, os, time; print(fpgaprof.capture.xla_flags.current().dump_dir, flush=True); time.sleep(60)"
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         env=_env(tmp_path))
    left = p.stdout.readline().strip()
    p.kill()
    p.wait()
    assert os.path.basename(left).startswith(f"fpgaprof-hlo-{p.pid}-") and os.path.isdir(left)
    # ... until the next import of fpgaprof.
    r = subprocess.run([sys.executable, "-c", "import fpgaprof; print(fpgaprof.capture.xla_flags.current().dump_dir)"],
                       capture_output=True, text=True, env=_env(tmp_path), timeout=120)
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(left)
    # The new process's own folder was removed at its normal exit.
    assert [n for n in os.listdir(tmp_path) if n.startswith("fpgaprof-hlo-")] == []


def test_a_trace_saved_on_sigterm_removes_its_dump_dir(tmp_path):
    code = textwrap.dedent(f"""
        import os, signal, time, warnings
        import fpgaprof
        warnings.simplefilter("ignore")
        print(fpgaprof.capture.xla_flags.current().dump_dir, flush=True)
        with fpgaprof.trace({str(tmp_path / "t.fpgaprof")!r}):
            with fpgaprof.region("r"):
                pass
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(60)
        print("still running")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env(tmp_path), timeout=120)
    assert r.returncode == -signal.SIGTERM, r.stderr[-1500:]
    dump = r.stdout.splitlines()[0]
    assert "still running" not in r.stdout
    assert (tmp_path / "t.fpgaprof").is_file()
    assert os.path.basename(dump).startswith("fpgaprof-hlo-") and not os.path.exists(dump)


def test_a_forked_child_ending_normally_keeps_the_parents_dump_dir(tmp_path):
    code = textwrap.dedent("""
        import os, sys
        import fpgaprof
        d = fpgaprof.capture.xla_flags.current().dump_dir
        pid = os.fork()
        if pid == 0:
            sys.exit(0)  # a normal exit runs the atexit callbacks inherited from the parent
        os.waitpid(pid, 0)
        print("kept" if os.path.isdir(d) else "removed by the child")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env(tmp_path), timeout=120)
    assert r.returncode == 0, r.stderr[-1500:]
    assert r.stdout.strip() == "kept"


def test_module_range_ids_take_ascii_program_ids_only():
    """An NVTX range `XlaModule:#...,program_id=²#` (str.isdigit() holds, int() refuses) is a
    range without a program id, not a ValueError that loses every module of the trace."""
    pids, names = xla_flags.module_range_ids(
        [
            "XlaModule:#hlo_module=jit_a,program_id=\u00b2#",
            "XlaModule:#hlo_module=jit_b,program_id=7#",
        ]
    )
    assert pids == {7} and names == {"jit_a"}
