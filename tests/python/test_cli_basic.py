"""The fpgaprof command: help, usage errors (exit 2, one line), failures (exit 1, one line, no
traceback), compare on summaries, and the environment `fpgaprof run` gives the child."""
import json
import os
import subprocess
import sys

import _reports_fixtures as F
import pytest
from fpgaprof import cli
from fpgaprof.cli import commands as cli_commands
from fpgaprof.cli import common as cli_common
from fpgaprof.cli import compare
from fpgaprof.cli import run as cli_run
from fpgaprof.report import model, summary_json

COMMANDS = ["run", "report", "export", "compare", "calibrate", "devices", "counters"]


def fp(*args, env=None, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "fpgaprof.cli", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=timeout)


def test_help_top_level():
    r = fp("--help")
    assert r.returncode == 0
    for c in COMMANDS:
        assert c in r.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_help_every_command(command):
    r = fp(command, "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: fpgaprof {command}")


@pytest.mark.parametrize("args", [
    [], ["bogus"], ["report"], ["export", "x.fpgaprof"],
    ["export", "x.fpgaprof", "--format", "svg"], ["compare", "a"], ["run"], ["run", "--"],
    ["compare", "a", "b", "--limit", "many"],
])
def test_bad_usage_is_exit_2_one_line(args):
    r = fp(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "fpgaprof" in lines[0] and "Traceback" not in r.stderr


def test_missing_trace_is_exit_1_one_line(tmp_path):
    for args in (["report", str(tmp_path / "nope.fpgaprof")],
                 ["export", str(tmp_path / "nope.fpgaprof"), "--format", "csv"],
                 ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")],
                 ["report", str(tmp_path)]):
        r = fp(*args)
        assert r.returncode == 1, (args, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("fpgaprof: error: "), r.stderr
        assert "Traceback" not in r.stderr


def test_not_a_summary_is_exit_1(tmp_path):
    (tmp_path / "a.json").write_text("[1, 2")
    (tmp_path / "b.json").write_text('{"no": "schema"}')
    r = fp("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert r.returncode == 1 and "not valid JSON" in r.stderr
    (tmp_path / "a.json").write_text("{}")
    r = fp("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert r.returncode == 1 and "no schema_version" in r.stderr


def _slower(prof):
    """The same profile with gemm<float> 3x longer (1 ms → 3 ms) and the second
    forward_project region 1 ms longer (2 → 3 ms), started 1 ms earlier: ending later, it would
    enclose back_project's start and become its parent, as correlate() nests regions."""
    c = prof.kernels.columns()
    c["end_ns"] = c["end_ns"].copy()
    c["end_ns"][1] += 2 * F.MS
    prof.kernels = F.Table(**c)
    r = prof.regions.columns()
    r["start_ns"] = r["start_ns"].copy()
    r["start_ns"][1] -= 1 * F.MS
    prof.regions = F.Table(**r)
    return prof


def test_compare_summaries(tmp_path):
    a = model.collect(F.SyntheticProfile(with_ops=True))
    b = model.collect(_slower(F.SyntheticProfile(with_ops=True)))
    rows = compare.compare_summaries(a, b)
    # the biggest change first: gemm<float> +2 ms (kernel), then the region +1 ms
    assert (rows[0]["kind"], rows[0]["name"]) == ("kernel", "gemm<float>")
    assert rows[0]["change_s"] == pytest.approx(2e-3)
    assert rows[0]["change_ratio"] == pytest.approx(3.0)
    assert (rows[1]["kind"], rows[1]["name"]) == ("region", "forward_project/64")
    assert rows[1]["change_s"] == pytest.approx(1e-3)
    assert all(r["change_s"] == 0 for r in rows[2:])
    # through the command, from summary.json files and a run folder
    summary_json.write_summary(tmp_path / "a.json", a)
    (tmp_path / "run_b").mkdir()
    summary_json.write_summary(tmp_path / "run_b" / "summary.json", b)
    r = fp("compare", str(tmp_path / "a.json"), str(tmp_path / "run_b"))
    assert r.returncode == 0, r.stderr
    assert "per HLO op" in r.stdout and "per region" in r.stdout
    kernel_part = r.stdout.split("per kernel")[1]
    first = kernel_part.splitlines()[2]
    assert first.split()[0] == "gemm<float>" and "+2.00 ms" in first and "3.00x" in first
    r = fp("compare", str(tmp_path / "a.json"), str(tmp_path / "run_b"), "--json")
    doc = json.loads(r.stdout)
    assert doc["rows"][0]["name"] == "gemm<float>"


def test_compare_ops_missing_on_one_side():
    """B has no op table at all (no op attributed): its ops are unknown, not gone."""
    a = model.collect(F.SyntheticProfile(with_ops=True))
    b = model.collect(F.SyntheticProfile(with_ops=False))
    ops = [r for r in compare.compare_summaries(a, b) if r["kind"] == "op"]
    assert {(r["module"], r["name"]) for r in ops} == {("jit_f", "fusion.1"), ("jit_f", "dot.2")}
    assert all(r["time_after_s"] is None and r["change_s"] is None for r in ops)
    # B has 4 kernels (the fixture's) and no HLO module to attribute them to
    assert all(r["unknown"] == "B: the trace has GPU kernels but none of its 4 kernels could "
               "be attributed to an HLO op: prof.attribution.unattributed says why" for r in ops)


def _summary_with_ops(ops, left_out=0):
    s = model.collect(F.SyntheticProfile())
    s["ops"] = {"available": True, "count": len(ops) + left_out, "rows_left_out": left_out,
                "items": [{"op": op, "module": mod, "count": 1, "total_s": t, "mean_s": t,
                           "flops": None, "bytes": None, "source": None, "bound": bound}
                          for mod, op, t, bound in ops]}
    return s


def test_compare_keys_ops_by_module_and_op():
    # fusion.3 is in both modules: two rows, each compared with its own module's op
    a = _summary_with_ops([("jit_a", "fusion.3", 1e-3, "memory"),
                           ("jit_b", "fusion.3", 4e-3, "compute")])
    b = _summary_with_ops([("jit_a", "fusion.3", 2e-3, "memory"),
                           ("jit_b", "fusion.3", 1e-3, "latency")])
    ops = {(r["module"], r["name"]): r for r in compare.compare_summaries(a, b)
           if r["kind"] == "op"}
    assert set(ops) == {("jit_a", "fusion.3"), ("jit_b", "fusion.3")}
    assert ops[("jit_a", "fusion.3")]["change_s"] == pytest.approx(1e-3)
    assert ops[("jit_b", "fusion.3")]["change_s"] == pytest.approx(-3e-3)
    assert (ops[("jit_b", "fusion.3")]["bound_before"],
            ops[("jit_b", "fusion.3")]["bound_after"]) == ("compute", "latency")


def test_compare_gone_vs_beyond_the_table():
    # B's table is complete: op x.2 is gone (change -2 ms). C's table was cut after its first
    # row (rows_left_out 1): x.2 is unknown there, not gone, and sorts after every known change.
    a = _summary_with_ops([("m", "x.1", 5e-3, None), ("m", "x.2", 2e-3, None)])
    b = _summary_with_ops([("m", "x.1", 5.5e-3, None)])
    c = _summary_with_ops([("m", "x.1", 5.5e-3, None)], left_out=1)
    ops = {r["name"]: r for r in compare.compare_summaries(a, b) if r["kind"] == "op"}
    assert ops["x.2"]["time_after_s"] is None and ops["x.2"]["change_s"] == pytest.approx(-2e-3)
    assert ops["x.2"]["unknown"] is None
    rows = [r for r in compare.compare_summaries(a, c) if r["kind"] == "op"]
    assert [r["name"] for r in rows] == ["x.1", "x.2"]
    assert rows[1]["change_s"] is None and rows[1]["unknown"] == "B: not among its top rows"
    every = compare.compare_summaries(a, c)
    assert every[-1]["name"] == "x.2"  # unknowns last, after all known changes


@pytest.mark.parametrize("breakage,says", [
    (lambda s: s["ops"].update(items="many"), "'ops.items' is a str, not a list"),
    (lambda s: s["ops"]["items"][0].pop("op"), "ops.items[0] has no 'op'"),
    (lambda s: s["ops"]["items"][0].update(total_s="1 ms"), "ops.items[0].total_s is '1 ms'"),
    (lambda s: s.update(regions=[1, 2]), "'regions' is a list, not an object"),
    (lambda s: s["kernels"]["top"].append({"count": 3}), "has no 'name'"),
])
def test_compare_malformed_summary_is_one_line(tmp_path, breakage, says):
    a = model.collect(F.SyntheticProfile(with_ops=True))
    summary_json.write_summary(tmp_path / "a.json", a)
    bad = json.loads((tmp_path / "a.json").read_text())
    breakage(bad)
    (tmp_path / "b.json").write_text(json.dumps(bad))
    r = fp("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("fpgaprof: error: ") and "malformed summary.json (B: " in lines[0]
    assert says in lines[0]


def test_internal_error_is_one_line(monkeypatch, capsys):
    def boom(args):
        raise KeyError("x")
    monkeypatch.setattr(cli_commands, "cmd_devices", boom)
    monkeypatch.delenv("FPGAPROF_DEBUG", raising=False)
    assert cli.main(["devices"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["fpgaprof: internal error: KeyError: 'x' (rerun with FPGAPROF_DEBUG=1 for "
                   "the traceback and report it)"]


@pytest.mark.parametrize("argv", [["run", "-o", "", "--", "true"], ["report", "t.fpgaprof", "-o", " "],
                                  ["export", "t.fpgaprof", "--format", "json", "-o", ""]])
def test_an_empty_output_path_is_refused(argv, tmp_path):
    # `-o "$OUT"` with OUT unset: the current folder would be written into (its reports replaced).
    r = fp(*argv, cwd=tmp_path)
    assert r.returncode == 2 and os.listdir(tmp_path) == []
    (line,) = r.stderr.strip().splitlines()
    assert "argument -o/--output: is empty (an unset variable?): it would write into the current folder" in line


def test_run_says_how_to_fix_an_output_folder_it_cannot_make(tmp_path):
    (tmp_path / "afile").write_text("x")
    r = fp("run", "-o", str(tmp_path / "afile" / "sub"), "--", "true")
    assert r.returncode == 1
    (line,) = r.stderr.strip().splitlines()
    assert line == (f"fpgaprof: error: {tmp_path / 'afile' / 'sub'}: Not a directory (give -o a folder "
                    "this user can create and write)")


def test_run_keeps_the_commands_status_when_its_own_work_after_fails(monkeypatch, tmp_path, capsys):
    # The command exits 5; what run does after it (finding the trace, tidying the folder) fails:
    # run still exits 5 and says what failed (it exited 1 with a bare error).
    def refuse(out_dir):
        raise PermissionError(1, "Operation not permitted", out_dir)

    monkeypatch.setattr(cli_run.runner, "untraced_processes", refuse)
    code = cli.main(["run", "-o", str(tmp_path / "out"), "--", sys.executable, "-c", "import sys; sys.exit(5)"])
    assert code == 5
    err = capsys.readouterr().err
    assert "after the command ended: " in err and "Operation not permitted" in err
    assert "its exit status 5 is kept" in err


def test_run_buffer_size_reaches_the_traced_process(tmp_path, monkeypatch):
    env = cli_run.child_environment(str(tmp_path), keep_command_buffers=False, counters=False,
                                    target=None, base={"PATH": os.environ.get("PATH", "")},
                                    buffer_size=65536, device_buffer_size=1 << 20)
    assert env["FPGAPROF_RUN_BUFFER_SIZE"] == "65536"
    assert env["FPGAPROF_RUN_DEVICE_BUFFER_SIZE"] == str(1 << 20)
    # The traced process starts trace(buffer_size=65536, device_buffer_size=1 MiB) from it.
    from fpgaprof.capture import runner

    seen = {}

    class Stop(Exception):
        pass

    def trace(path, buffer_size=8 << 20, device_buffer_size=0, counters=False):
        seen.update(buffer_size=buffer_size, device_buffer_size=device_buffer_size)
        raise Stop  # nothing to start here: the arguments are what is checked

    monkeypatch.setenv("FPGAPROF_RUN_TRACE", str(tmp_path / "t.fpgaprof"))
    for var, value in env.items():
        if var.startswith("FPGAPROF_RUN_") and "BUFFER" in var:
            monkeypatch.setenv(var, value)
    runner.start_from_environment(trace)
    assert seen == {"buffer_size": 65536, "device_buffer_size": 1 << 20}
    for flag in ("--buffer-size", "--device-buffer-size"):
        r = fp("run", flag, "100", "--", "true")
        assert r.returncode == 2 and f"argument {flag}: 100 is below 4096 bytes" in r.stderr
    # not given: not passed on
    env = cli_run.child_environment(str(tmp_path), keep_command_buffers=False, counters=False,
                                    target=None, base={"PATH": "/bin",
                                                       "FPGAPROF_RUN_DEVICE_BUFFER_SIZE": "9"})
    assert "FPGAPROF_RUN_DEVICE_BUFFER_SIZE" not in env


def test_child_environment(tmp_path):
    from fpgaprof.capture import xla_flags
    base = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": "/user/path",
            "XLA_FLAGS": "--xla_cpu_enable_fast_math=false"}
    env = cli_run.child_environment(str(tmp_path), keep_command_buffers=False, counters=True,
                                target="alveo-u280", base=base)
    flags = xla_flags.split_flags(env["XLA_FLAGS"])
    assert flags[0] == "--xla_cpu_enable_fast_math=false"  # the user's flag is kept, first
    assert xla_flags.flag_value(flags, "xla_dump_to") == str(tmp_path / "hlo")
    assert xla_flags.flag_value(flags, "xla_gpu_enable_command_buffer") == ""
    pp = env["PYTHONPATH"].split(os.pathsep)
    assert pp[0].endswith(os.path.join("fpgaprof", "_bootstrap")) and pp[1] == "/user/path"
    assert os.path.isfile(os.path.join(pp[0], "sitecustomize.py"))
    assert env["FPGAPROF_RUN_TRACE"] == str(tmp_path / cli_common.TRACE_NAME)
    assert env["FPGAPROF_RUN_COUNTERS"] == "1"
    # the card is run's, for its reports: nothing in the traced program reads it
    assert not any(k.startswith("FPGAPROF_RUN_TARGET") for k in env)
    # --counters: JAX's pool grows on demand (kernel replay would save and restore a 75 % pool
    # around every kernel); a setting of the user's is kept.
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    for user in ({"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}, {"XLA_PYTHON_CLIENT_ALLOCATOR": "platform"}):
        mine = cli_run.child_environment(str(tmp_path), keep_command_buffers=False, counters=True,
                                     target=None, base={**base, **user})
        assert {k: mine.get(k) for k in user} == user
        assert mine.get("XLA_PYTHON_CLIENT_PREALLOCATE") == user.get("XLA_PYTHON_CLIENT_PREALLOCATE")
    keep = cli_run.child_environment(str(tmp_path), keep_command_buffers=True, counters=False,
                                 target=None, base=base)
    assert xla_flags.flag_value(xla_flags.split_flags(keep["XLA_FLAGS"]),
                                 "xla_gpu_enable_command_buffer") is None
    assert keep["FPGAPROF_KEEP_COMMAND_BUFFERS"] == "1"
    assert "XLA_PYTHON_CLIENT_PREALLOCATE" not in keep  # without --counters: untouched


def test_child_environment_replaces_parent_dump_dir(tmp_path):
    """A parent that prepared its own environment (temp dump dir removed at its exit) must not
    hand that dir to the child."""
    from fpgaprof.capture import xla_flags
    parent = {"PATH": os.environ.get("PATH", ""), "XLA_FLAGS": "--xla_foo=1"}
    xla_flags.prepare(parent, dump_dir=str(tmp_path / "parent_dump"))
    env = cli_run.child_environment(str(tmp_path / "out"), keep_command_buffers=False,
                                counters=False, target=None, base=parent)
    flags = xla_flags.split_flags(env["XLA_FLAGS"])
    assert xla_flags.flag_value(flags, "xla_dump_to") == str(tmp_path / "out" / "hlo")
    assert "--xla_foo=1" in flags
    assert sum(f.startswith("--xla_dump_to") for f in flags) == 1


def test_run_missing_command_is_exit_127_not_executable_126(tmp_path):
    # the shell's statuses (and env's, timeout's): a wrapper tells them from the program's own
    r = fp("run", "-o", str(tmp_path / "a"), "--", "no-such-program-fpgaprof")
    assert r.returncode == 127, r.stderr
    assert r.stderr.strip().startswith("fpgaprof: error: no-such-program-fpgaprof")
    plain = tmp_path / "plain.sh"
    plain.write_text("echo hi\n")  # 0644: not executable
    for cmd, rc in (([str(plain)], 126), ([str(tmp_path)], 126), ([str(tmp_path / "none")], 127)):
        r = fp("run", "-o", str(tmp_path / "a"), "--", *cmd)
        assert r.returncode == rc, (cmd, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and cmd[0] in r.stderr
    assert not (tmp_path / "a").exists()


def test_unknown_target_is_usage_error(tmp_path):
    from fpgaprof import fpga
    try:
        names = [p["name"] for p in fpga.presets()]
    except Exception as e:  # the FPGA model is not in this build: nothing to check against
        pytest.skip(f"no FPGA presets in this build: {e}")
    r = fp("report", str(tmp_path / "x.fpgaprof"), "--target", "no-such-card")
    assert r.returncode == 2
    assert "unknown FPGA target 'no-such-card'" in r.stderr and names[0] in r.stderr
    # the card listing names every preset, the Intel cards among them
    for name in ("intel-pac-a10", "bittware-520n-s10gx", "intel-pac-d5005", "intel-s10mx-2100"):
        assert name in names and name in r.stderr


def test_child_environment_ancestor_marker(tmp_path):
    """The marker of an ancestor (this process added nothing itself): its dump dir is
    replaced all the same."""
    from fpgaprof.capture import xla_flags
    grand = {"PATH": os.environ.get("PATH", "")}
    xla_flags.prepare(grand, dump_dir=str(tmp_path / "grandparent"))
    parent = dict(grand)
    xla_flags.prepare(parent)  # idempotent: adds nothing, as in a child process
    env = cli_run.child_environment(str(tmp_path / "out"), keep_command_buffers=True,
                                counters=False, target=None, base=parent)
    flags = xla_flags.split_flags(env["XLA_FLAGS"])
    assert xla_flags.flag_value(flags, "xla_dump_to") == str(tmp_path / "out" / "hlo")
    assert xla_flags.flag_value(flags, "xla_gpu_enable_command_buffer") is None


def test_devices_command():
    r = fp("devices")
    assert r.returncode == 0, r.stderr
    assert "CUPTI" in r.stdout and "GPUs:" in r.stdout


def test_calibrate_without_gpu_is_one_line():
    import fpgaprof
    try:
        import jax
        has_gpu = any(d.platform in ("gpu", "cuda") for d in jax.devices())
    except Exception:
        has_gpu = False
    if has_gpu:
        pytest.skip("a GPU is present: calibrate would run for real")
    r = fp("calibrate")
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fpgaprof: error: ") and "GPU" in lines[0]
    assert fpgaprof.__version__


def test_console_script_when_installed():
    """`fpgaprof` (pyproject's console script) exists when the package is pip-installed."""
    exe = os.path.join(os.path.dirname(sys.executable), "fpgaprof")
    import fpgaprof
    installed = "site-packages" in os.path.realpath(fpgaprof.__file__)
    if not installed:
        pytest.skip("fpgaprof runs from a source/build tree here (PYTHONPATH), not installed")
    assert os.path.isfile(exe), "console script missing from the environment"
    r = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "compare" in r.stdout


def test_run_counters_warns_when_the_user_keeps_jax_s_pool(tmp_path):
    # `true` runs no Python, so no trace: exit 1 after the warning
    base = {k: v for k, v in os.environ.items() if not k.startswith("XLA_PYTHON_CLIENT_")}
    kept = fp("run", "-o", str(tmp_path), "--counters", "--", "true",
              env={**base, "XLA_PYTHON_CLIENT_PREALLOCATE": "true"})
    assert kept.returncode == 1
    assert ("fpgaprof run: warning: --counters with JAX's preallocated pool (kept by your "
            "XLA_PYTHON_CLIENT_PREALLOCATE='true'") in kept.stderr
    default = fp("run", "-o", str(tmp_path), "--counters", "--", "true", env=base)
    assert default.returncode == 1 and "warning: --counters" not in default.stderr  # set to false
    platform = fp("run", "-o", str(tmp_path), "--counters", "--", "true",
                  env={**base, "XLA_PYTHON_CLIENT_ALLOCATOR": "platform"})
    assert "warning: --counters" not in platform.stderr


def test_xla_flags_carry_a_folder_with_spaces_quotes_and_backslashes(tmp_path):
    """XLA splits XLA_FLAGS at whitespace outside quotes and reads `--flag="..."` with
    backslash escapes (parse_flags_from_env.cc): a dump folder under `~/My Projects` must be
    quoted, or XLA dumps into `~/My`. What fpgaprof writes reads back as the folder, in
    fpgaprof's parser and in the bootstrap's standard-library twin."""
    import importlib.util

    import fpgaprof
    from fpgaprof.capture import xla_flags
    path = os.path.join(os.path.dirname(fpgaprof.__file__), "_bootstrap", "_fpgaprof_untraced.py")
    spec = importlib.util.spec_from_file_location("_fpgaprof_untraced_flags", path)
    boot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(boot)
    for folder in ("/plain/hlo", "/My Projects/out x/hlo", '/a"b/hlo', "/back\\slash/hlo",
                   "/it's/hlo", "/new\nline/hlo", "/tab\there/hlo"):
        env = {"XLA_FLAGS": "--xla_foo=1"}
        xla_flags.prepare(env, dump_dir=str(tmp_path / "d") + folder)
        want = str(tmp_path / "d") + folder
        flags = xla_flags.split_flags(env["XLA_FLAGS"])
        assert flags[0] == "--xla_foo=1" and len(flags) == 4, flags  # nothing split off
        assert xla_flags.flag_value(flags, "xla_dump_to") == want
        assert boot._flags(env["XLA_FLAGS"]) == flags
        assert boot._dump_to(flags[1]) == want
        assert boot._dump_flag(want) == flags[1] == xla_flags.quoted_flag("xla_dump_to", want)
    # written by hand, as XLA reads them
    assert xla_flags.flag_value(xla_flags.split_flags('--xla_dump_to="/a b/\\"q\\\\" --x'),
                                "xla_dump_to") == '/a b/"q\\'
    assert xla_flags.flag_value(["--xla_dump_to='/a\\b c'"], "xla_dump_to") == "/a\\b c"
    assert xla_flags.flag_value(["--xla_dump_to=/plain/"], "xla_dump_to") == "/plain/"


def test_child_environment_replaces_a_quoted_parent_dump_dir(tmp_path):
    """The parent's dump dir, quoted in XLA_FLAGS because of its space, is still recognised as
    the parent's and replaced."""
    from fpgaprof.capture import xla_flags
    grand = {"PATH": os.environ.get("PATH", "")}
    xla_flags.prepare(grand, dump_dir=str(tmp_path / "grand parent"))
    env = cli_run.child_environment(str(tmp_path / "o ut"), keep_command_buffers=True,
                                    counters=False, target=None, base=dict(grand))
    flags = xla_flags.split_flags(env["XLA_FLAGS"])
    assert [f for f in flags if f.startswith("--xla_dump_to")] == [
        f'--xla_dump_to="{tmp_path / "o ut" / "hlo"}"']
