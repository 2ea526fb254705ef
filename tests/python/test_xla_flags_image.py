"""fpgaprof's XLA flags merged into the environment of the user's Docker image (docker/,
docs/install.md): its XLA_FLAGS string exactly as that image sets it, with
XLA_PYTHON_CLIENT_PREALLOCATE=true. The user's dump dir is kept and read, nothing of theirs is
replaced, and one line says what was added and kept. Expected values worked out by hand from
the string below."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from fpgaprof.capture import xla_flags as xf
from fpgaprof.cli import run as cli_run

# The image's XLA_FLAGS, character for character (docker/Dockerfile; the user's own image).
IMAGE_XLA_FLAGS = (
    "--xla_dump_to=/output/hlo_dumps_xla --xla_dump_hlo_as_text --xla_dump_hlo_as_html=true "
    "--xla_gpu_enable_command_buffer="
)
IMAGE_ENV = {
    "XLA_FLAGS": IMAGE_XLA_FLAGS,
    "XLA_PYTHON_CLIENT_PREALLOCATE": "true",
    "XLA_PYTHON_CLIENT_MEM_FRACTION": "0.8",
    "JAX_PLATFORMS": "cuda,cpu",
}


def _line(dump_to: str) -> str:
    # The three flags fpgaprof reads are all the user's: nothing to add; the persistent
    # compilation cache is the one setting fpgaprof changes.
    return (
        "XLA flags: added none; kept yours: "
        f"--xla_dump_to={dump_to} (HLO is read from there and left in place), "
        "--xla_dump_hlo_as_text, --xla_gpu_enable_command_buffer=; "
        "set JAX_ENABLE_COMPILATION_CACHE=false (every module compiled, and dumped whole, in the run)"
    )


def test_split_of_the_image_string():
    flags = xf.split_flags(IMAGE_XLA_FLAGS)
    assert flags == [
        "--xla_dump_to=/output/hlo_dumps_xla",
        "--xla_dump_hlo_as_text",
        "--xla_dump_hlo_as_html=true",
        "--xla_gpu_enable_command_buffer=",
    ]
    assert xf.flag_value(flags, "xla_dump_to") == "/output/hlo_dumps_xla"
    assert xf.flag_value(flags, "xla_dump_hlo_as_text") == "true"  # bare flag
    assert xf.flag_value(flags, "xla_dump_hlo_as_html") == "true"
    assert xf.flag_value(flags, "xla_gpu_enable_command_buffer") == ""  # empty list: off


def test_prepare_keeps_the_image_flags_byte_for_byte():
    existed = os.path.exists("/output/hlo_dumps_xla")
    env = dict(IMAGE_ENV)
    s = xf.prepare(env)
    assert env["XLA_FLAGS"] == IMAGE_XLA_FLAGS  # nothing appended, nothing reordered
    assert s.flags_added == []
    assert s.flags_kept == [
        "--xla_dump_to=/output/hlo_dumps_xla",
        "--xla_dump_hlo_as_text",
        "--xla_gpu_enable_command_buffer=",
    ]
    assert s.dump_dir == "/output/hlo_dumps_xla"
    assert s.dump_dir_from_user and not s.dump_dir_owned and not s.prepared_before
    assert s.dump_as_text and s.command_buffers_disabled
    assert s.warnings == []
    # The allocator settings and platforms are the user's and stay so.
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "true"
    assert env["XLA_PYTHON_CLIENT_MEM_FRACTION"] == "0.8"
    assert env["JAX_PLATFORMS"] == "cuda,cpu"
    assert env["JAX_ENABLE_COMPILATION_CACHE"] == "false"
    assert s.env_set == {"JAX_ENABLE_COMPILATION_CACHE": "false"}
    assert xf.MARKER_ENV not in env  # the dir is the user's, not fpgaprof's
    assert os.path.exists("/output/hlo_dumps_xla") == existed  # XLA makes it, not prepare()
    assert xf.describe(s) == _line("/output/hlo_dumps_xla")
    # A second preparation (the traced child of `fpgaprof run` imports fpgaprof again) sees
    # the same user flags and changes nothing.
    again = xf.prepare(env)
    assert env["XLA_FLAGS"] == IMAGE_XLA_FLAGS and again.flags_added == []
    assert again.flags_kept == s.flags_kept and again.dump_dir == "/output/hlo_dumps_xla"
    assert again.env_set == {}  # JAX_ENABLE_COMPILATION_CACHE is set now: not set again
    assert xf.describe(again) == (
        "XLA flags: added none; kept yours: --xla_dump_to=/output/hlo_dumps_xla (HLO is read "
        "from there and left in place), --xla_dump_hlo_as_text, --xla_gpu_enable_command_buffer="
    )


def test_run_child_environment_keeps_the_image_flags(tmp_path):
    for counters in (False, True):
        env, s = cli_run.child_environment_and_setup(
            str(tmp_path / "out"), keep_command_buffers=False, counters=counters, target=None,
            base=dict(IMAGE_ENV),
        )
        assert env["XLA_FLAGS"] == IMAGE_XLA_FLAGS
        assert s.dump_dir == "/output/hlo_dumps_xla"  # not the run's out/hlo
        # The user's XLA_PYTHON_CLIENT_PREALLOCATE=true is kept, with --counters too (then
        # `fpgaprof run` warns about it): fpgaprof sets it only where it is unset.
        assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "true"
        assert xf.describe(s) == _line("/output/hlo_dumps_xla")


def test_what_is_added_where_the_image_string_lacks_it(tmp_path):
    # Without the command-buffer flag: only that one is added, after the user's flags.
    user = "--xla_dump_to=/output/hlo_dumps_xla --xla_dump_hlo_as_text --xla_dump_hlo_as_html=true"
    env = {"XLA_FLAGS": user}
    s = xf.prepare(env)
    assert env["XLA_FLAGS"] == user + " --xla_gpu_enable_command_buffer="
    assert xf.describe(s) == (
        "XLA flags: added --xla_gpu_enable_command_buffer=; kept yours: "
        "--xla_dump_to=/output/hlo_dumps_xla (HLO is read from there and left in place), "
        "--xla_dump_hlo_as_text; "
        "set JAX_ENABLE_COMPILATION_CACHE=false (every module compiled, and dumped whole, in the run)"
    )
    # Command buffers left on by the user, cache kept, and `run --counters` without an
    # allocator setting: the pool setting fpgaprof chose is named too.
    env, s = cli_run.child_environment_and_setup(
        str(tmp_path / "out"), keep_command_buffers=False, counters=True, target=None,
        base={"XLA_FLAGS": "--xla_gpu_enable_command_buffer=FUSION",
              "JAX_ENABLE_COMPILATION_CACHE": "true"},
    )
    hlo = str(tmp_path / "out" / "hlo")
    assert env["XLA_FLAGS"] == (
        f"--xla_gpu_enable_command_buffer=FUSION --xla_dump_to={hlo} --xla_dump_hlo_as_text"
    )
    assert xf.describe(s) == (
        f"XLA flags: added --xla_dump_to={hlo} --xla_dump_hlo_as_text; kept yours: "
        "--xla_gpu_enable_command_buffer=FUSION (command buffers stay on: their kernels get "
        "no HLO op ranges); set XLA_PYTHON_CLIENT_PREALLOCATE=false (kernel replay with a "
        "preallocated pool is slow)"
    )


SCRIPT = textwrap.dedent("""
    import fpgaprof, jax, jax.numpy as jnp

    @jax.jit
    def affine(x, y):
        return jnp.sin(x) * y + 1.0

    with fpgaprof.region("affine"):
        x = jnp.ones((64,), jnp.float32)
        affine(x, x).block_until_ready()
""")


def test_fpgaprof_run_under_the_image_flags_reads_the_users_dump(tmp_path):
    """`fpgaprof run` with the image's environment on CPU JAX (the image's /output is
    tmp_path/output here): the HLO comes from the user's dump dir, which keeps everything
    XLA wrote (text and HTML), and the line naming the merge is printed once."""
    pytest.importorskip("jax")
    output = tmp_path / "output"
    dump = output / "hlo_dumps_xla"
    script = tmp_path / "affine.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items()
           if k not in ("FPGAPROF_RUN_DIR", xf.MARKER_ENV, "FPGAPROF_HLO_DUMP_DIR",
                        "JAX_ENABLE_COMPILATION_CACHE", "FPGAPROF_KEEP_COMMAND_BUFFERS")}
    env.update(IMAGE_ENV)
    env["XLA_FLAGS"] = IMAGE_XLA_FLAGS.replace("/output", str(output))
    env["JAX_PLATFORMS"] = "cpu"  # the image's CPU variant; no CUDA plugin here
    run_dir = output / "fpgaprof_run"
    r = subprocess.run(
        [sys.executable, "-m", "fpgaprof.cli", "run", "-o", str(run_dir), "--",
         sys.executable, str(script)],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "XLA flags:" in ln]
    assert lines == [f"fpgaprof run: {_line(str(dump))}"]
    files = os.listdir(dump)
    after = [f for f in files if "jit_affine" in f and f.endswith("after_optimizations.txt")]
    assert len(after) == 1, files
    # The user's dir is left whole: XLA's other dumps (HTML, pre-optimization HLO) stay.
    assert any(f.endswith(".html") and "jit_affine" in f for f in files), files
    assert any(f.endswith("before_optimizations.txt") and "jit_affine" in f for f in files)
    # The trace holds the module read from there, and the run's hlo/ gets it from the trace.
    import fpgaprof

    prof = fpgaprof.load(str(run_dir / "trace.fpgaprof"))
    mods = {m.name: m.text for m in prof.hlo_modules}
    assert mods.get("jit_affine") == (dump / after[0]).read_text()
    assert any("jit_affine" in f for f in os.listdir(run_dir / "hlo"))
