"""The Docker image recipe (docker/): the invariants that keep docker/install.sh the one place
where install steps live, the user's image settings, the compose services, and the default
command's script run with a stand-in `fpgaprof` on PATH. The image itself is not built here
(no registry access): docs/install.md, "The Docker image"."""

from __future__ import annotations

import os
import re
import shlex
import signal
import stat
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"

# The MBIRJAX profiling image's settings, as the user's image has them.
IMAGE_XLA_FLAGS = (
    "--xla_dump_to=/output/hlo_dumps_xla --xla_dump_hlo_as_text --xla_dump_hlo_as_html=true "
    "--xla_gpu_enable_command_buffer="
)


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of docker/Dockerfile: comments dropped, continued lines joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in (DOCKER / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    assert not pending, "the Dockerfile ends in a continued line"
    return out


def env_of(instructions: list[tuple[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in instructions:
        if word == "ENV":
            for item in shlex.split(rest):
                key, eq, value = item.partition("=")
                assert eq, f"ENV item without '=': {item}"
                env[key] = value
    return env


def args_of(instructions: list[tuple[str, str]]) -> dict[str, str]:
    args: dict[str, str] = {}
    for word, rest in instructions:
        if word == "ARG":
            key, _, value = shlex.split(rest)[0].partition("=")
            args[key] = value
    return args


def test_dockerfile_base_build_args_and_one_install_step():
    ins = dockerfile_instructions()
    args = args_of(ins)
    assert args["BASE_IMAGE"] == "nvidia/cuda:12.8.0-devel-ubuntu22.04"
    assert args["JAX_PACKAGE"] == "jax[cuda12]"
    assert args["JAX_PLATFORMS_DEFAULT"] == "cuda,cpu"
    assert args["PYTHON_VERSION"] == "3.11"
    assert [rest for word, rest in ins if word == "FROM"] == ["${BASE_IMAGE}"]
    runs = [rest for word, rest in ins if word == "RUN"]
    assert len(runs) == 1, runs
    run = shlex.split(runs[0])
    # pip's downloads in BuildKit's cache, outside the image (and no PIP_NO_CACHE_DIR to disable it)
    assert run[0] == "--mount=type=cache,target=/root/.cache/pip"
    assert "PIP_NO_CACHE_DIR" not in env_of(ins)
    run = run[1:]
    assert run[:2] == ["bash", "docker/install.sh"]
    assert "--system-packages" in run and "--check" in run
    assert run[run.index("--jax-package") + 1] == "${JAX_PACKAGE}"
    assert run[run.index("--python-version") + 1] == "${PYTHON_VERSION}"
    assert run[run.index("--venv") + 1] == "/opt/venv"
    # The install steps live in install.sh alone: no RUN calls a package manager itself.
    installer = re.compile(
        r"(?:^|&&|\|\||;)\s*(?:sudo\s+)?(?:pip3?|python[0-9.]*\s+-m\s+pip|apt-get|apt|"
        r"add-apt-repository|conda|uv)\b"
    )
    for rest in runs:
        assert not installer.search(rest), rest
    assert installer.search("apt-get update && pip install x")  # the check can fail
    # The sources the script builds from are copied first, to the folder the RUN runs in.
    copies = [rest for word, rest in ins if word == "COPY"]
    assert copies == [". /opt/fpgaprof"]
    assert [rest for word, rest in ins if word == "WORKDIR"] == ["/opt/fpgaprof"]


def test_dockerfile_keeps_the_image_settings_and_output_volume():
    ins = dockerfile_instructions()
    env = env_of(ins)
    assert env["XLA_FLAGS"] == IMAGE_XLA_FLAGS
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "true"
    assert env["XLA_PYTHON_CLIENT_MEM_FRACTION"] == "0.8"
    assert env["NVIDIA_DRIVER_CAPABILITIES"] == "all"
    assert env["JAX_PLATFORMS"] == "${JAX_PLATFORMS_DEFAULT}"
    assert env["PATH"].startswith("/opt/venv/bin:")
    assert [rest for word, rest in ins if word == "VOLUME"] == ["/output"]
    cmd = [rest for word, rest in ins if word == "CMD"]
    assert cmd == ['["bash", "/opt/fpgaprof/docker/profile-sweep.sh"]']
    script = DOCKER / "profile-sweep.sh"
    assert script.is_file() and script.stat().st_mode & stat.S_IXUSR


def test_dockerignore_keeps_local_builds_out_and_sources_in():
    lines = [ln.strip() for ln in (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    for path in ("/build", "/.venv", ".git"):
        assert path in lines
    for needed in ("docker", "python", "cpp", "cmake", "examples", "pyproject.toml"):
        assert not any(ln.strip("/") == needed for ln in lines), needed


def test_compose_services():
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"gpu", "cpu", "tensorboard"}
    expected_args = {
        "gpu": {"JAX_PACKAGE": "jax[cuda12]", "JAX_PLATFORMS_DEFAULT": "cuda,cpu"},
        "cpu": {"JAX_PACKAGE": "jax", "JAX_PLATFORMS_DEFAULT": "cpu"},
        # the gpu service's image (the same tag and arguments: one build serves both)
        "tensorboard": {"JAX_PACKAGE": "jax[cuda12]", "JAX_PLATFORMS_DEFAULT": "cuda,cpu"},
    }
    for name, svc in services.items():
        build = svc["build"]
        context = (DOCKER / build["context"]).resolve()
        assert context == ROOT and (context / build["dockerfile"]) == DOCKER / "Dockerfile"
        assert build["args"] == expected_args[name]
        vols = svc["volumes"]
        assert len(vols) == 1 and vols[0].endswith(":/output"), vols
    # Only the GPU service asks for GPUs (Compose V2's device reservation).
    devices = services["gpu"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}]
    assert "deploy" not in services["cpu"] and "deploy" not in services["tensorboard"]
    assert services["gpu"]["image"] != services["cpu"]["image"]
    assert services["tensorboard"]["image"] == services["gpu"]["image"]
    # Time after SIGTERM for the trace and the reports (Docker's default is 10 s).
    assert services["gpu"]["stop_grace_period"] == services["cpu"]["stop_grace_period"] == "120s"
    # TensorBoard reads the folder the default command exports the XProf profile to.
    command = services["tensorboard"]["command"]
    assert command[0] == "tensorboard"
    assert command[command.index("--logdir") + 1] == "/output/xprof"
    assert '--format xprof -o "$OUT/xprof"' in (DOCKER / "profile-sweep.sh").read_text()
    for svc in ("gpu", "cpu"):
        assert set(services[svc]["environment"]) == {
            "SWEEP_SIZES", "SWEEP_RUNS", "SWEEP_ARGS", "FPGAPROF_ARGS", "XLA_PYTHON_CLIENT_PREALLOCATE"}


def test_install_script_rejects_bad_options_before_doing_anything(tmp_path):
    script = str(DOCKER / "install.sh")
    r = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cases = [
        (["--jax-package", "numpy"], "is not a jax requirement"),
        (["--python-version", "311"], "is not of the form 3.X"),
        (["--frobnicate"], "unknown option --frobnicate"),
        (["--venv"], "--venv needs a value"),
    ]
    for argv, message in cases:
        r = subprocess.run(["bash", script, "--venv", str(tmp_path / "v"), *argv],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and message in r.stderr, (argv, r.stderr)
    assert not (tmp_path / "v").exists()  # nothing made
    r = subprocess.run(["bash", script, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "--jax-package SPEC" in r.stdout and "pyproject.toml" in r.stdout


# A stand-in for `fpgaprof` (the image's venv on PATH): records each call's arguments and, for
# `run`, writes the trace as `fpgaprof run` would, or waits for a signal (FAKE_WAIT).
FAKE_FPGAPROF = textwrap.dedent("""\
    #!/usr/bin/env bash
    printf '%s\\n' "$*" >> "$CALLS"
    if [ "$1" = run ]; then
      out=$3
      mkdir -p "$out"
      if [ -n "${FAKE_WAIT:-}" ]; then
        trap 'echo TERM >> "$CALLS"; touch "$out/trace.fpgaprof"; exit 143' TERM
        touch "$FAKE_WAIT"
        for _ in $(seq 600); do sleep 0.1; done
        exit 0
      fi
      touch "$out/trace.fpgaprof"
      exit "${FAKE_STATUS:-0}"
    fi
    exit 0
""")


def _fake_env(tmp_path: Path, **extra: str) -> dict:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    fake = bindir / "fpgaprof"
    fake.write_text(FAKE_FPGAPROF)
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if k not in ("SWEEP_SIZES", "SWEEP_RUNS", "SWEEP_ARGS", "FPGAPROF_ARGS")}
    env.update(PATH=f"{bindir}:{env['PATH']}", CALLS=str(tmp_path / "calls"),
               OUTPUT_DIR=str(tmp_path / "output"), **extra)
    return env


def test_default_command_runs_the_sweep_then_exports_for_xprof(tmp_path):
    env = _fake_env(tmp_path)
    r = subprocess.run(["bash", str(DOCKER / "profile-sweep.sh")], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "output"
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == [
        f"run -o {out}/fpgaprof_run -- python {ROOT}/examples/mbirjax_sweep.py --sizes 32 64 128 "
        f"256 --runs 3 --output {out}/mbirjax_sweep",
        f"export {out}/fpgaprof_run/trace.fpgaprof --format xprof -o {out}/xprof",
    ]
    # The settings, and the run's exit status passed through.
    env = _fake_env(tmp_path, SWEEP_SIZES="32 64", SWEEP_RUNS="1",
                    SWEEP_ARGS="--operations parallel_forward_project --no-aot",
                    FPGAPROF_ARGS="--counters", FAKE_STATUS="3")
    (tmp_path / "calls").unlink()
    r = subprocess.run(["bash", str(DOCKER / "profile-sweep.sh")], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 3
    assert (tmp_path / "calls").read_text().splitlines()[0] == (
        f"run -o {out}/fpgaprof_run --counters -- python {ROOT}/examples/mbirjax_sweep.py "
        f"--sizes 32 64 --runs 1 --output {out}/mbirjax_sweep --operations "
        "parallel_forward_project --no-aot")


def test_default_command_arguments_exist_in_the_sweep():
    # Every option profile-sweep.sh passes is one examples/mbirjax_sweep.py defines.
    sweep = (ROOT / "examples" / "mbirjax_sweep.py").read_text()
    defined = set(re.findall(r'add_argument\(\s*"(--[a-z-]+)"', sweep))
    script = (DOCKER / "profile-sweep.sh").read_text()
    line = script[script.index('python "$SRC/examples/mbirjax_sweep.py"'):].split("&\n")[0]
    used = set(re.findall(r"(--[a-z-]+)", line))
    assert used == {"--sizes", "--runs", "--output"} and used <= defined


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_docker_stop_and_ctrl_c_reach_fpgaprof_run(tmp_path, sig):
    # SIGTERM (docker stop) or SIGINT (Ctrl-C) to the container's first process (the script)
    # reaches `fpgaprof run` as SIGTERM (it passes it to the program, saves the trace and
    # writes the reports); the export still runs and the script ends with the run's status.
    ready = tmp_path / "ready"
    env = _fake_env(tmp_path, FAKE_WAIT=str(ready))
    proc = subprocess.Popen(["bash", str(DOCKER / "profile-sweep.sh")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while not ready.exists():
        assert time.time() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[1] == "TERM" and calls[2].startswith("export ")


def _build_requirements(toolkit_cupti: str, toolkit_nvtx: str, cuda12: str) -> list[str]:
    """The build requirements docker/install.sh installs, from its own reader of pyproject.toml
    (the Python between `<<'PYEOF'` and `PYEOF`), run as the script runs it."""
    text = (ROOT / "docker" / "install.sh").read_text()
    code = re.search(r"<<'PYEOF'\n(.*?)\nPYEOF\n", text, re.S)
    assert code, "install.sh's pyproject reader not found"
    r = subprocess.run(
        ["python3", "-", str(ROOT / "pyproject.toml"), toolkit_cupti, toolkit_nvtx, cuda12],
        input=code.group(1), capture_output=True, text=True, timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\n")[:-1]


def test_install_script_takes_cupti_headers_of_the_jax_plugins_major():
    """Without a CUDA toolkit the CUPTI and NVTX headers come from wheels: with jax[cuda12] the
    CUDA 12 ones (the 13 wheel beside JAX's CUDA 12 plugin would be a second libcupti in the
    process), else pyproject's CUDA 13 ones; with a toolkit, none."""
    cu12 = _build_requirements("0", "0", "1")
    assert "nvidia-cuda-cupti-cu12>=12.8,<13" in cu12 and "nvidia-nvtx-cu12>=12.8,<13" in cu12
    assert not [r for r in cu12 if r.startswith(("nvidia-cuda-cupti>", "nvidia-nvtx>"))]
    cu13 = _build_requirements("0", "0", "0")
    assert any(r.startswith("nvidia-cuda-cupti>=13") for r in cu13), cu13
    assert not [r for r in cu13 if "-cu12" in r]
    toolkit = _build_requirements("1", "1", "1")
    assert not [r for r in toolkit if r.startswith("nvidia-")], toolkit
    assert "scikit-build-core>=0.10" in toolkit


def test_measured_ceilings_outlive_the_container():
    # `fpgaprof calibrate` stores measured ceilings in $XDG_CACHE_HOME/fpgaprof (default
    # ~/.cache): in the image that must be under the /output volume, or `docker run --rm ...
    # fpgaprof calibrate` measures for nothing and the next sweep's roofline has table ceilings
    # and (on WSL2, where sysfs has no GPU) no PCIe link.
    env = env_of(dockerfile_instructions())
    assert env.get("XDG_CACHE_HOME", "").startswith("/output/")


def test_system_packages_bring_tkinter_for_mbirjax(tmp_path):
    # `import mbirjax` imports its viewer, which imports easygui, which needs tkinter: on
    # Debian/Ubuntu (and deadsnakes) tkinter is the separate python3.X-tk package, so without it
    # install.sh's own --check (`import fpgaprof, mbirjax, jax`) fails and the image does not build.
    env, log = _apt_stubs(tmp_path)
    # --python names no interpreter: install.sh stops right after the system packages.
    p = subprocess.run(["bash", str(DOCKER / "install.sh"), "--system-packages", "--python-version", "3.11",
                        "--python", str(tmp_path / "no-python")], env=env, capture_output=True, text=True,
                       timeout=60)
    assert "no Python" in p.stderr, p.stderr
    installs = [line for line in log.read_text().splitlines() if " install " in line]
    assert any("python3.11-tk" in line.split() for line in installs), installs


def test_gpu_service_forwards_the_preallocation_setting():
    svc = yaml.safe_load((DOCKER / "compose.yaml").read_text())["services"]["gpu"]
    assert svc["environment"]["XLA_PYTHON_CLIENT_PREALLOCATE"] == "${XLA_PYTHON_CLIENT_PREALLOCATE:-true}"


def test_counters_under_the_images_pool_are_warned_about_before_the_run(tmp_path):
    warning = "WARNING: --counters with XLA_PYTHON_CLIENT_PREALLOCATE=true (JAX's pool)"
    for prealloc, warned in (("true", True), ("false", False), ("0", False)):
        env = _fake_env(tmp_path, FPGAPROF_ARGS="--target alveo-u280 --counters",
                        XLA_PYTHON_CLIENT_PREALLOCATE=prealloc)
        r = subprocess.run(["bash", str(DOCKER / "profile-sweep.sh")], env=env, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert (warning.replace("=true", f"={prealloc}") in r.stderr) == warned, (prealloc, r.stderr)
    env = _fake_env(tmp_path, XLA_PYTHON_CLIENT_PREALLOCATE="true")  # no counters: nothing to say
    r = subprocess.run(["bash", str(DOCKER / "profile-sweep.sh")], env=env, capture_output=True,
                       text=True, timeout=60)
    assert "WARNING" not in r.stderr


def _apt_stubs(tmp_path: Path) -> tuple[dict, Path]:
    """apt and friends as stubs that log their arguments; the release's python3 is 3.10 (Ubuntu
    22.04's); `id` says root."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "apt.log"
    stubs = {
        "apt-get": f'echo "apt-get $*" >> {log}',
        "apt-cache": 'if [ "$1" = show ] && [ "$2" = --no-all-versions ]; then echo "Version: 3.10.6-1~22.04"; fi',
        "update-alternatives": f'echo "update-alternatives $*" >> {log}',
        "add-apt-repository": f'echo "add-apt-repository $*" >> {log}',
        "id": "echo 0",
    }
    for name, body in stubs.items():
        (bin_dir / name).write_text(f"#!/bin/bash\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}"), log


@pytest.mark.parametrize("release", ["ubuntu", "debian"])
def test_system_packages_take_python_from_deadsnakes_on_ubuntu_only(tmp_path, release):
    # The image's path: Ubuntu 22.04, whose python3 is 3.10, and a Python X.Y it does not have
    # (3.99: on no machine, so `command -v python3.99` fails here as python3.11 does there).
    env, log = _apt_stubs(tmp_path)
    os_release = tmp_path / "os-release"
    os_release.write_text(f'ID={release}\nPRETTY_NAME="{release} test release"\n')
    env["FPGAPROF_OS_RELEASE"] = str(os_release)
    p = subprocess.run(["bash", str(DOCKER / "install.sh"), "--system-packages", "--python-version", "3.99"],
                       env=env, capture_output=True, text=True, timeout=60)
    # No python3.99 after the (stubbed) install: the script stops there, naming it.
    assert p.returncode == 2 and "no Python 'python3.99'" in p.stderr, p.stdout + p.stderr
    calls = log.read_text().splitlines()
    ppa = [i for i, c in enumerate(calls) if c == "add-apt-repository -y ppa:deadsnakes/ppa"]
    python_install = [i for i, c in enumerate(calls) if " install " in c and "python3.99-venv" in c.split()]
    assert len(python_install) == 1
    if release == "ubuntu":
        assert "adding the deadsnakes PPA for python3.99 (ubuntu test release's python3 is 3.10)" in p.stdout
        tools = [i for i, c in enumerate(calls)
                 if " install " in c and {"software-properties-common", "gpg-agent"} <= set(c.split())]
        # the PPA's tools, then the PPA and a fresh package list, then the Python packages
        assert len(tools) == 1 and len(ppa) == 1 and tools[0] < ppa[0] < python_install[0]
        assert calls[ppa[0] + 1] == "apt-get update -qq"
    else:
        assert ppa == [] and "deadsnakes" not in p.stdout
    assert {"python3.99", "python3.99-venv", "python3.99-dev", "python3.99-tk"} <= set(calls[python_install[0]].split())
    assert calls[-1] == "update-alternatives --install /usr/bin/python python /usr/bin/python3.99 1"
