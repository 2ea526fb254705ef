"""HLO capture on CPU JAX: XLA_FLAGS merging, the real dump, from_jax, the late-import warning."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from fpgaprof.capture import xla_flags as xf


def _child_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("XLA_FLAGS", "FPGAPROF_XLA_DUMP_DIR", "FPGAPROF_HLO_DUMP_DIR",
                        "JAX_ENABLE_COMPILATION_CACHE", "FPGAPROF_KEEP_COMMAND_BUFFERS")}
    env["JAX_PLATFORMS"] = "cpu"
    env.update(extra)
    return env


def _run(code: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=_child_env(**extra),
                          capture_output=True, text=True, timeout=120)


# --- XLA_FLAGS merging (pure) ------------------------------------------------------------------

def test_prepare_adds_flags_to_empty_env(tmp_path):
    env: dict = {}
    s = xf.prepare(env, dump_dir=str(tmp_path / "d"))
    flags = xf.split_flags(env["XLA_FLAGS"])
    assert flags == [f"--xla_dump_to={tmp_path / 'd'}", "--xla_dump_hlo_as_text",
                     "--xla_gpu_enable_command_buffer="]
    assert s.dump_dir == str(tmp_path / "d") and not s.dump_dir_owned and not s.dump_dir_from_user
    assert s.command_buffers_disabled
    assert env["JAX_ENABLE_COMPILATION_CACHE"] == "false" and s.compilation_cache_disabled


def test_prepare_keeps_user_flags_first_and_untouched(tmp_path):
    user = '--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=2'
    env = {"XLA_FLAGS": user}
    xf.prepare(env, dump_dir=str(tmp_path))
    assert env["XLA_FLAGS"].startswith(user + " ")
    assert xf.flag_value(xf.split_flags(env["XLA_FLAGS"]), "xla_force_host_platform_device_count") == "2"


def test_prepare_uses_users_dump_dir_and_command_buffer_choice(tmp_path):
    env = {"XLA_FLAGS": f"--xla_dump_to={tmp_path} --xla_gpu_enable_command_buffer=FUSION,CUBLAS",
           "JAX_ENABLE_COMPILATION_CACHE": "true"}
    s = xf.prepare(env)
    flags = xf.split_flags(env["XLA_FLAGS"])
    assert [f for f in flags if f.startswith("--xla_dump_to")] == [f"--xla_dump_to={tmp_path}"]
    assert s.dump_dir == str(tmp_path) and s.dump_dir_from_user and not s.dump_dir_owned
    assert flags.count("--xla_gpu_enable_command_buffer=FUSION,CUBLAS") == 1
    assert "--xla_gpu_enable_command_buffer=" not in flags
    assert not s.command_buffers_disabled
    assert env["JAX_ENABLE_COMPILATION_CACHE"] == "true" and not s.compilation_cache_disabled
    assert s.flags_added == ["--xla_dump_hlo_as_text"]


def test_prepare_text_dump_turned_off_by_user_is_reported(tmp_path):
    env = {"XLA_FLAGS": f"--xla_dump_to={tmp_path} --xla_dump_hlo_as_text=false"}
    s = xf.prepare(env)
    assert not s.dump_as_text and s.warnings
    assert "--xla_dump_hlo_as_text=false" in env["XLA_FLAGS"]
    assert env["XLA_FLAGS"].count("xla_dump_hlo_as_text") == 1


def test_prepare_is_idempotent_and_keep_options(tmp_path):
    env: dict = {}
    a = xf.prepare(env, dump_dir=str(tmp_path))
    first = env["XLA_FLAGS"]
    b = xf.prepare(env)  # as a child process would, seeing the marker
    assert env["XLA_FLAGS"] == first and b.flags_added == [] and b.dump_dir == a.dump_dir
    assert not b.dump_dir_from_user and b.command_buffers_disabled

    env2 = {"FPGAPROF_KEEP_COMMAND_BUFFERS": "1", "FPGAPROF_KEEP_COMPILATION_CACHE": "1"}
    c = xf.prepare(env2, dump_dir=str(tmp_path))
    assert "xla_gpu_enable_command_buffer" not in env2["XLA_FLAGS"]
    assert not c.command_buffers_disabled
    assert "JAX_ENABLE_COMPILATION_CACHE" not in env2


def test_prepare_env_dump_dir_override(tmp_path):
    env = {"FPGAPROF_HLO_DUMP_DIR": str(tmp_path / "x")}
    s = xf.prepare(env)
    assert s.dump_dir == str(tmp_path / "x") and os.path.isdir(s.dump_dir) and not s.dump_dir_owned


def test_split_and_flag_value_handle_quotes_and_booleans():
    flags = xf.split_flags('--a="x y" --b  --noc --d=1 --d=2')
    assert flags == ['--a="x y"', "--b", "--noc", "--d=1", "--d=2"]
    assert xf.flag_value(flags, "a") == "x y"
    assert xf.flag_value(flags, "b") == "true"
    assert xf.flag_value(flags, "c") == "false"
    assert xf.flag_value(flags, "d") == "2"
    assert xf.flag_value(flags, "e") is None


# --- real dumps with CPU JAX (subprocess: XLA reads its flags once per process) ----------------

_DUMP_SCRIPT = """
import json, os, sys
import fpgaprof
from fpgaprof.capture import xla_flags as xf
import jax, jax.numpy as jnp

def affine(x, y):
    return jnp.sin(x) * y + 1.0

x = jnp.ones((256,), jnp.float32)
jax.jit(affine)(x, x).block_until_ready()
s = xf.current()
mods = xf.read_dumped_modules()
picked = xf.modules_for_trace([], ["broadcast_add_fusion"])
freed = xf.prune_dump_dir()
print(json.dumps({
    "dump_dir": s.dump_dir, "owned": s.dump_dir_owned, "xla_flags": os.environ["XLA_FLAGS"],
    "names": [m.name for m in mods], "ids": [m.program_id for m in mods],
    "affine_text": [m.text for m in mods if m.name == "jit_affine"],
    "affine_ba": [m.buffer_assignment for m in mods if m.name == "jit_affine"],
    "affine_lr": [m.live_ranges for m in mods if m.name == "jit_affine"],
    "picked": [m.name for m in picked], "freed": freed,
    "left": sorted(os.listdir(s.dump_dir)),
}))
"""


def test_import_dumps_optimized_hlo_on_cpu_and_cleans_up():
    r = _run(_DUMP_SCRIPT, XLA_FLAGS="--xla_cpu_enable_fast_math=false")
    assert r.returncode == 0, r.stderr  # XLA aborts on an unknown flag: all ours are accepted
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["xla_flags"].startswith("--xla_cpu_enable_fast_math=false ")
    assert "jit_affine" in out["names"]
    assert out["ids"] == sorted(out["ids"])
    text = out["affine_text"][0]
    assert text.startswith("HloModule jit_affine")
    assert "fusion(" in text  # after optimizations: fused
    # only the module holding the kernel's fusion is picked for a trace naming that kernel
    assert out["picked"] == ["jit_affine"]
    # each module brings XLA's buffer assignment and live ranges
    assert "BufferAssignment:" in out["affine_ba"][0]
    assert out["affine_lr"][0].startswith("HloLiveRange (max ")
    # pruning keeps exactly the *after_optimizations.txt files, their buffer assignments and
    # live ranges
    assert out["freed"] > 0
    kept = ("after_optimizations.txt", "-buffer-assignment.txt", "-live-range.txt")
    assert out["left"] and all(n.endswith(kept) for n in out["left"])
    assert not any(n.endswith("-buffer-assignment-values.txt") for n in out["left"])
    assert any(n.endswith("after_optimizations-live-range.txt") for n in out["left"])
    assert out["owned"]
    assert not os.path.exists(out["dump_dir"]), "the temp dump dir must be removed at exit"


def test_users_dump_dir_is_used_and_kept(tmp_path):
    user_dir = tmp_path / "mine"
    r = _run(_DUMP_SCRIPT, XLA_FLAGS=f"--xla_dump_to={user_dir}")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["dump_dir"] == str(user_dir) and not out["owned"]
    assert out["freed"] == 0  # never prunes the user's dir
    assert any(n.endswith("before_optimizations.txt") for n in os.listdir(user_dir))
    assert "jit_affine" in out["names"]


def test_flags_alone_are_accepted_by_cpu_xla(tmp_path):
    # Each flag fpgaprof may add, given to XLA directly (no fpgaprof import). Text dumping
    # without --xla_dump_to would go to stdout, so it is checked with a dump dir.
    for flag in ("--xla_gpu_enable_command_buffer=", f"--xla_dump_to={tmp_path / 'a'}",
                 f"--xla_dump_to={tmp_path / 'b'} --xla_dump_hlo_as_text"):
        r = _run("import jax.numpy as jnp; print(float(jnp.ones(3).sum()))", XLA_FLAGS=flag)
        assert r.returncode == 0 and r.stdout.strip() == "3.0", (flag, r.stderr[-500:])
    r = _run("import jax.numpy as jnp; jnp.ones(3)", XLA_FLAGS="--xla_not_a_real_flag_zz=1")
    assert r.returncode != 0  # the check above can fail: unknown flags do abort


def test_warning_when_jax_started_before_import():
    code = """
    import warnings, jax.numpy as jnp
    jnp.ones(3).block_until_ready()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        import fpgaprof
        from fpgaprof.capture import xla_flags as xf
        xf.warn_if_backend_started(xf.current())   # a second check: still one warning
    msgs = [str(x.message) for x in w if "fpgaprof was imported after JAX" in str(x.message)]
    print(len(msgs), xf.current().backend_already_started, len(xf.current().warnings))
    print(msgs[0])
    """
    r = _run(code)
    assert r.returncode == 0, r.stderr
    first, msg = r.stdout.strip().splitlines()[:2]
    assert first == "1 True 1"
    assert "import fpgaprof` before" in msg and "fpgaprof run" in msg  # the fix
    assert "restart the kernel" in msg  # the fix in a notebook, where the import came late
    assert "no HLO is dumped" in msg  # what is lost


def test_trace_records_the_late_import_once():
    code = """
    import warnings, jax.numpy as jnp
    jnp.ones(3).block_until_ready()
    warnings.simplefilter("ignore")
    import fpgaprof
    with fpgaprof.trace() as prof:
        pass
    late = [w for w in prof.warnings if "imported after JAX" in w]
    print(len(late))
    print(late[0])
    """
    r = _run(code)
    assert r.returncode == 0, r.stderr
    count, msg = r.stdout.strip().splitlines()[:2]
    assert count == "1"
    assert "NVTX" in msg and "XLA_FLAGS" in msg  # one message names both things that came too late


def test_no_warning_when_imported_first():
    code = """
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        import fpgaprof
        import jax.numpy as jnp
        jnp.ones(3).block_until_ready()
    from fpgaprof.capture import xla_flags as xf
    print(sum("fpgaprof was imported after JAX" in str(x.message) for x in w),
          xf.current().backend_already_started)
    """
    r = _run(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0 False"


# --- from_jax ----------------------------------------------------------------------------------

def test_from_jax_matches_xla_cost_analysis():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    import fpgaprof.hlo

    def f(a, b):
        return jnp.tanh(a @ b).sum(axis=0)

    a = jnp.ones((32, 48), jnp.float32)
    b = jnp.ones((48, 16), jnp.float32)
    m = fpgaprof.hlo.from_jax(f, a, b)
    ca = jax.jit(f).lower(a, b).compile().cost_analysis()
    if isinstance(ca, (list, tuple)):
        ca = ca[0]
    assert m.name.startswith("jit_f")
    assert m.flops == pytest.approx(ca["flops"])
    assert m.transcendentals == pytest.approx(ca["transcendentals"])
    # same module through an already jitted function and ShapeDtypeStructs
    spec = jax.ShapeDtypeStruct((32, 48), jnp.float32)
    m2 = fpgaprof.hlo.from_jax(jax.jit(f), spec, jax.ShapeDtypeStruct((48, 16), jnp.float32))
    assert m2.flops == m.flops


def test_read_dumped_modules_file_names(tmp_path):
    body = "HloModule {name}, is_scheduled=true\n\nENTRY %main () -> f32[] {{\n  ROOT %c = f32[] constant(1)\n}}\n"
    files = {
        "module_0003.jit_f.sm_9.0_gpu_after_optimizations.txt": "jit_f",   # GPU (XLA prints the cc)
        "module_0012.jit_g.cpu_after_optimizations.txt": "jit_g",           # CPU
        "module_0020.jit_h.after_optimizations.txt": "jit_h",               # no platform prefix
        "module_0003.jit_f.sm_9.0_gpu_after_optimizations-buffer-assignment.txt": None,
        "module_0003.jit_f.before_optimizations.txt": None,
        "module_0003.jit_f.sm_9.0_gpu_after_optimizations.ptx": None,
        "notes.txt": None,
    }
    for fname, name in files.items():
        (tmp_path / fname).write_text(body.format(name=name or "x"))
    setup = xf.XlaSetup(dump_dir=str(tmp_path), prepared_ns=0)
    got = [(d.name, d.program_id) for d in xf.read_dumped_modules(setup)]
    assert got == [("jit_f", 3), ("jit_g", 12), ("jit_h", 20)]
    assert [d.name for d in xf.read_dumped_modules(setup, program_ids=[12])] == ["jit_g"]
    assert [d.name for d in xf.read_dumped_modules(setup, names=["jit_h"])] == ["jit_h"]
    # by the sanitized kernel name of an instruction (the constant %c -> kernel "c")
    assert len(xf.read_dumped_modules(setup, kernel_names=["c"])) == 3
    assert xf.read_dumped_modules(setup, kernel_names=["zz"]) == []
    # files older than the setup are another run's
    future = xf.XlaSetup(dump_dir=str(tmp_path), prepared_ns=time.time_ns() + 10**12)
    assert xf.read_dumped_modules(future) == []
    ranges = ["XlaModule:#prefix=jit(f)/a,b,hlo_module=jit_f,program_id=3#", "Thunk:#hlo_op=c#"]
    assert [d.name for d in xf.modules_for_trace(ranges, [], setup)] == ["jit_f"]
    assert [d.name for d in xf.modules_for_trace(["XlaModule:#hlo_module=jit_g#"], [], setup)] == ["jit_g"]
    assert len(xf.modules_for_trace([], [], setup)) == 3


def test_a_persistent_cache_hit_on_cpu_still_dumps_the_hlo_text(tmp_path):
    """What docs/attribution.md says of JAX's persistent cache, as observed on the CPU backend
    (the GPU backend is not checked here): with the cache kept on (FPGAPROF_KEEP_COMPILATION_
    CACHE=1), a second process loads the module from the cache (a cache-hit event, no miss)
    and XLA still dumps its optimized HLO text, named without the platform prefix, which
    fpgaprof reads, identical to the compiled one; the buffer assignment is not dumped."""
    code = f"""
    import json, os, sys
    import fpgaprof
    import jax, jax.numpy as jnp
    from fpgaprof.capture import xla_flags as xf
    events = []
    jax.monitoring.register_event_listener(lambda name, **kw: events.append(name))
    jax.config.update("jax_compilation_cache_dir", {str(tmp_path / 'cache')!r})
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    jax.jit(lambda v: jnp.sin(v) @ v + 1.0, inline=False)(jnp.ones((16, 16))).block_until_ready()
    mods = [m for m in xf.read_dumped_modules() if "lambda" in m.name]
    print(json.dumps({{
        "cache": jax.config.jax_enable_compilation_cache,
        "hits": events.count("/jax/compilation_cache/cache_hits"),
        "misses": events.count("/jax/compilation_cache/cache_misses"),
        "files": [os.path.basename(m.path) for m in mods],
        "text": [m.text.split("\\n", 1)[1] for m in mods],
        "buffer_assignment": [bool(m.buffer_assignment) for m in mods],
    }}))
    """
    runs = []
    for i in range(2):
        r = _run(code, FPGAPROF_KEEP_COMPILATION_CACHE="1",
                 FPGAPROF_HLO_DUMP_DIR=str(tmp_path / f"dump{i}"))
        assert r.returncode == 0, r.stderr
        runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["cache"] and first["misses"] >= 1 and first["hits"] == 0, first
    assert second["hits"] >= 1 and second["misses"] == 0, second
    assert len(first["files"]) == 1 and "cpu_after_optimizations" in first["files"][0], first
    assert len(second["files"]) == 1, second  # dumped on the hit, and read
    assert second["files"][0].endswith(".after_optimizations.txt"), second
    assert "cpu_after" not in second["files"][0]
    assert second["text"] == first["text"]
    assert first["buffer_assignment"] == [True] and second["buffer_assignment"] == [False]


def test_persistent_cache_off_even_when_jax_was_imported_first(tmp_path):
    # jax imported (backend not started) before fpgaprof: the env variable alone is too late,
    # so fpgaprof turns the option off in jax's config; a cache dir set like mbirjax does it
    # then stays unused, and the module is compiled (and dumped) again in a second process.
    code = f"""
    import jax, jax.numpy as jnp
    jax.config.update("jax_compilation_cache_dir", {str(tmp_path / 'cache')!r})
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    import fpgaprof
    from fpgaprof.capture import xla_flags as xf
    jax.jit(lambda v: jnp.cos(v) * 3.0)(jnp.ones(8)).block_until_ready()
    print(jax.config.jax_enable_compilation_cache, len(xf.read_dumped_modules()))
    """
    for _ in range(2):
        r = _run(code)
        assert r.returncode == 0, r.stderr
        enabled, n = r.stdout.split()
        assert enabled == "False" and int(n) >= 1
    assert not (tmp_path / "cache").exists() or not os.listdir(tmp_path / "cache")


def test_users_dump_dir_modules_from_before_the_import_are_read(tmp_path):
    # JAX started (and compiled jit_early) before fpgaprof was imported, with the user's own
    # dump dir: that module belongs to this run, an older file from another run does not.
    user_dir = tmp_path / "dumps"
    user_dir.mkdir()
    old = user_dir / "module_0099.jit_old.cpu_after_optimizations.txt"
    old.write_text("HloModule jit_old\n\nENTRY %m () -> f32[] {\n  ROOT %c = f32[] constant(1)\n}\n")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    code = """
    import warnings
    warnings.simplefilter("ignore")
    import jax, jax.numpy as jnp
    def early(v):
        return v * 2.0
    jax.jit(early)(jnp.ones(4)).block_until_ready()
    import fpgaprof
    from fpgaprof.capture import xla_flags as xf
    print(sorted({m.name for m in xf.read_dumped_modules()}))
    """
    r = _run(code, XLA_FLAGS=f"--xla_dump_to={user_dir} --xla_dump_hlo_as_text")
    assert r.returncode == 0, r.stderr
    names = eval(r.stdout.strip().splitlines()[-1])
    assert "jit_early" in names and "jit_old" not in names


def test_kernels_inside_module_ranges_do_not_pull_in_modules_by_name(tmp_path):
    """A kernel inside an XlaModule range has its module named by the range; looking its name
    up in every dumped module as well added modules that merely share a fusion name (2-14 on
    the H100/H200 traces, none of them any kernel's). The name lookup stays for kernels no
    module range encloses."""
    from fpgaprof.base.core import core
    from fpgaprof.capture import hlo_dump

    body = "HloModule {name}, is_scheduled=true\n\nENTRY %main () -> f32[] {{\n  ROOT %c = f32[] constant(1)\n}}\n"
    for pid, name in ((3, "jit_f"), (12, "jit_g"), (20, "jit_h")):
        (tmp_path / f"module_{pid:04d}.{name}.sm_9.0_gpu_after_optimizations.txt").write_text(body.format(name=name))
    setup = xf.XlaSetup(dump_dir=str(tmp_path), prepared_ns=0)

    def store(outside: bool):
        s = core.TraceStore()
        s.append("markers", start_ns=0, end_ns=100, thread_id=1,
                 name="XlaModule:#hlo_module=jit_f,program_id=3#", parent=0xFFFFFFFF)
        s.append("markers", start_ns=10, end_ns=90, thread_id=1, name="Thunk:#hlo_op=c#", parent=0)
        s.append("kernels", start_ns=20, end_ns=30, name="c", marker_index=1)  # in jit_f's range
        if outside:
            s.append("kernels", start_ns=200, end_ns=300, name="c", marker_index=0xFFFFFFFF)
        return s

    inside = store(outside=False)
    hlo_dump.attach_hlo_modules(inside, setup)
    assert sorted(m.name for m in inside.hlo_modules) == ["jit_f"]
    both = store(outside=True)
    hlo_dump.attach_hlo_modules(both, setup)
    assert sorted(m.name for m in both.hlo_modules) == ["jit_f", "jit_g", "jit_h"]


def _store_running(modules):
    """A TraceStore (built directly, no CUPTI) whose kernels run inside one XlaModule range per
    (name, program id) of ``modules``."""
    from fpgaprof.base.core import core

    s = core.TraceStore()
    for i, (name, pid) in enumerate(modules):
        s.append("markers", start_ns=1000 * i, end_ns=1000 * i + 100, thread_id=1,
                 name=f"XlaModule:#hlo_module={name},program_id={pid}#", parent=0xFFFFFFFF)
        s.append("kernels", start_ns=1000 * i + 10, end_ns=1000 * i + 20, name="c",
                 marker_index=i)
    return s


def _hlo_warnings(store):
    meta = store.meta
    return list(meta["warnings"] if isinstance(meta, dict) else meta.warnings)


def test_modules_missing_from_the_dump_are_named_when_some_were_found(tmp_path):
    """The trace's XlaModule ranges name jit_f (3), jit_g (7) and jit_h (9); only jit_f was
    dumped. Without a warning the other two modules' kernels silently had no HLO costs (the
    warning came only when no module at all was found): it says how many and which are
    missing. All found: no warning; none found: the one no-HLO warning, not both."""
    from fpgaprof.capture import hlo_dump

    body = "HloModule {name}, is_scheduled=true\n\nENTRY %main () -> f32[] {{\n  ROOT %c = f32[] constant(1)\n}}\n"
    (tmp_path / "module_0003.jit_f.sm_9.0_gpu_after_optimizations.txt").write_text(body.format(name="jit_f"))
    setup = xf.XlaSetup(dump_dir=str(tmp_path), prepared_ns=0)

    partial = _store_running([("jit_f", 3), ("jit_g", 7), ("jit_h", 9), ("jit_g", 7)])
    assert hlo_dump.attach_hlo_modules(partial, setup) == 1
    assert [m.name for m in partial.hlo_modules] == ["jit_f"]
    warns = [w for w in _hlo_warnings(partial) if "not found" in w]
    assert len(warns) == 1, _hlo_warnings(partial)
    assert warns[0].startswith(f"2 of the 3 HLO modules the trace's XlaModule ranges name were "
                               f"not found in {tmp_path}: jit_g (program id 7), jit_h (program id 9).")
    assert "without costs" in warns[0]
    hlo_dump.attach_hlo_modules(partial, setup)  # again (a checkpoint, then the end): said once
    assert len([w for w in _hlo_warnings(partial) if "not found" in w]) == 1

    whole = _store_running([("jit_f", 3)])
    hlo_dump.attach_hlo_modules(whole, setup)
    assert _hlo_warnings(whole) == []

    none = _store_running([("jit_g", 7), ("jit_h", 9)])
    hlo_dump.attach_hlo_modules(none, setup)
    warns = _hlo_warnings(none)
    assert len(warns) == 1 and warns[0].startswith("no optimized HLO was found"), warns

    many = _store_running([("jit_f", 3)] + [(f"jit_m{k}", 100 + k) for k in range(7)])
    hlo_dump.attach_hlo_modules(many, setup)
    (w,) = [w for w in _hlo_warnings(many) if "not found" in w]
    assert w.startswith("7 of the 8 HLO modules") and "jit_m4 (program id 104) and 2 more." in w
    assert "jit_m5" not in w


def test_module_whose_long_name_xla_leaves_out_of_the_file_name_is_read(tmp_path):
    # XLA drops the module name from the file name when it would make the name too long
    # (dump.cc FilenameFor): module_0004.cpu_after_optimizations.txt, the name only in the text.
    body = "HloModule {name}, is_scheduled=true\n\nENTRY %main () -> f32[] {{\n  ROOT %c = f32[] constant(1)\n}}\n"
    long_name = "jit_projector_" + "x" * 300
    (tmp_path / "module_0004.cpu_after_optimizations.txt").write_text(body.format(name=long_name))
    (tmp_path / "module_0004.cpu_after_optimizations-buffer-assignment.txt").write_text("BA")
    (tmp_path / "module_0006.sm_9.0_gpu_after_optimizations.txt").write_text(body.format(name="jit_g"))
    setup = xf.XlaSetup(dump_dir=str(tmp_path), prepared_ns=0, dump_dir_owned=True)
    got = [(d.name, d.program_id, d.buffer_assignment) for d in xf.read_dumped_modules(setup)]
    assert got == [(long_name, 4, "BA"), ("jit_g", 6, "")]
    xf.prune_dump_dir(setup)  # kept, not deleted as "not HLO text"
    assert (tmp_path / "module_0004.cpu_after_optimizations.txt").exists()
    assert (tmp_path / "module_0004.cpu_after_optimizations-buffer-assignment.txt").exists()


def test_jitted_function_with_a_long_name_is_captured_on_cpu():
    r = _run("""
        import fpgaprof, jax, jax.numpy as jnp
        def f(a):
            return jnp.sin(a) @ a
        f.__name__ = "projector_" + "x" * 300
        with fpgaprof.trace() as prof:
            jax.jit(f)(jnp.ones((8, 8))).block_until_ready()
        print(sorted(m.name[:20] for m in prof.hlo_modules))
    """)
    assert r.returncode == 0, r.stderr
    assert "jit_projector_xxxxxx" in r.stdout, r.stdout


def test_users_relative_dump_dir_survives_a_chdir(tmp_path):
    # XLA resolves --xla_dump_to=reldump when it writes; fpgaprof read it at trace end against
    # the cwd of that moment: a script that changes directory lost every module, silently.
    (tmp_path / "elsewhere").mkdir()
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            import os, fpgaprof, jax, jax.numpy as jnp
            with fpgaprof.trace() as prof:
                jax.jit(lambda a: jnp.sin(a))(jnp.ones(4)).block_until_ready()
                os.chdir("elsewhere")
            print(sorted(m.name for m in prof.hlo_modules))
        """)],
        env=_child_env(XLA_FLAGS="--xla_dump_to=reldump"), cwd=str(tmp_path),
        capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "jit__lambda" in r.stdout, r.stdout
    assert (tmp_path / "reldump").is_dir()


def test_prepare_names_a_relative_user_dump_dir_absolutely(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {"XLA_FLAGS": "--xla_foo=1 --xla_dump_to=my_dumps"}
    s = xf.prepare(env)
    assert s.dump_dir == str(tmp_path / "my_dumps") and s.dump_dir_from_user
    flags = xf.split_flags(env["XLA_FLAGS"])
    assert flags[0] == "--xla_foo=1"
    assert xf.flag_value(flags, "xla_dump_to") == str(tmp_path / "my_dumps")


@pytest.mark.parametrize("formats,text", [("", True), ("--xla_dump_hlo_as_text", True),
                                          ("--xla_dump_hlo_as_proto", False),
                                          ("--xla_dump_hlo_as_html", False)])
def test_late_import_warning_says_whether_the_users_dump_holds_text(tmp_path, formats, text):
    # JAX started first: only the user's own flags count. With another format and no text
    # flag XLA dumps no text, and the warning must not say the HLO is still read.
    r = _run("""
        import jax, jax.numpy as jnp
        jax.jit(lambda a: a + 1)(jnp.ones(3)).block_until_ready()
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            import fpgaprof
            with fpgaprof.trace() as prof:
                jax.jit(lambda a: jnp.sin(a))(jnp.ones(4)).block_until_ready()
        said = any("still read from your own" in str(x.message) for x in w)
        print(said, bool(prof.hlo_modules))
    """, XLA_FLAGS=f"--xla_dump_to={tmp_path} {formats}")
    assert r.returncode == 0, r.stderr
    said, read = r.stdout.split()[-2:]
    assert read == str(text)          # what XLA really dumped as text
    assert said == read, r.stdout     # the warning says what happened


def test_the_autotuners_modules_of_their_own_are_not_missing_from_the_dump(tmp_path):
    """XLA's autotuner times a fusion alone in a module named after it (an XlaModule range with
    no program id around a Thunk range of that op), which XLA never dumps: the H100 sweep trace
    has 102 such ranges (input_reduce_fusion, ...). They are compile-time work the analysis
    already calls "XLA autotuning", not modules missing from the dump."""
    from fpgaprof.base.core import core
    from fpgaprof.capture import hlo_dump

    body = "HloModule jit_f, is_scheduled=true\n\nENTRY %main () -> f32[] {\n  ROOT %c = f32[] constant(1)\n}\n"
    (tmp_path / "module_0003.jit_f.sm_9.0_gpu_after_optimizations.txt").write_text(body)
    setup = xf.XlaSetup(dump_dir=str(tmp_path), prepared_ns=0)
    s = core.TraceStore()
    for i, (module, op) in enumerate([("hlo_module=jit_f,program_id=3", "c"),
                                      ("hlo_module=input_reduce_fusion", "input_reduce_fusion")]):
        s.append("markers", start_ns=1000 * i, end_ns=1000 * i + 100, thread_id=1,
                 name=f"XlaModule:#{module}#", parent=0xFFFFFFFF)
        s.append("markers", start_ns=1000 * i + 5, end_ns=1000 * i + 50, thread_id=1,
                 name=f"Thunk:#hlo_op={op},unique_hlo_op_id={i + 1}#", parent=2 * i)
        s.append("kernels", start_ns=1000 * i + 10, end_ns=1000 * i + 20, name=op,
                 marker_index=2 * i + 1)
    assert hlo_dump.attach_hlo_modules(s, setup) == 1
    assert [w for w in _hlo_warnings(s) if "not found" in w] == []
