"""The capture layer's process setup (fpgaprof.capture.process_env): run in fresh interpreters, since it acts
at import time."""
import json
import os
import subprocess
import sys

import pytest

PROBE = (
    "import json, os, fpgaprof; "
    "print(json.dumps({k: os.environ.get(k) for k in "
    "('NVTX_INJECTION64_PATH', 'FPGAPROF_WHEEL_LIB_DIRS')}))"
)


def _run(env_updates, extra_path=None):
    env = dict(os.environ)
    env.pop("NVTX_INJECTION64_PATH", None)
    env.pop("FPGAPROF_WHEEL_LIB_DIRS", None)
    env.update(env_updates)
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join([extra_path, env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_nvtx_injection_points_at_the_packaged_library():
    got = _run({})
    path = got["NVTX_INJECTION64_PATH"]
    assert path is not None and os.path.basename(path) == "libfpgaprof.so"
    assert os.path.isfile(path)


def test_a_users_nvtx_injection_is_left_alone():
    got = _run({"NVTX_INJECTION64_PATH": "/opt/nsight/libToolsInjection64.so"})
    assert got["NVTX_INJECTION64_PATH"] == "/opt/nsight/libToolsInjection64.so"


def test_wheel_lib_dirs_lists_nvidia_lib_folders_with_libcupti(tmp_path):
    with_cupti = tmp_path / "nvidia" / "cu13" / "lib"
    with_cupti.mkdir(parents=True)
    (with_cupti / "libcupti.so.13").write_bytes(b"")
    without = tmp_path / "nvidia" / "nvtx" / "lib"
    without.mkdir(parents=True)
    (without / "libnvToolsExt.so.1").write_bytes(b"")
    got = _run({}, extra_path=str(tmp_path))
    dirs = (got["FPGAPROF_WHEEL_LIB_DIRS"] or "").split(os.pathsep)
    assert str(with_cupti) in dirs
    assert str(without) not in dirs


def test_wheel_lib_dirs_put_the_libcupti_of_jaxs_cuda_plugin_first(tmp_path):
    """With jax[cuda12] (jax_cuda12_plugin) beside both CUPTI wheels, CUDA 12's libcupti
    folder comes first (alphabetically nvidia/cu13 would); without a plugin the order stays."""
    import importlib.util

    if importlib.util.find_spec("jax_cuda13_plugin") or importlib.util.find_spec(
        "jax_cuda12_plugin"
    ):
        pytest.skip("a real JAX CUDA plugin is installed: the case needs exactly the fake one")
    cu13 = tmp_path / "nvidia" / "cu13" / "lib"
    cu12 = tmp_path / "nvidia" / "cuda_cupti" / "lib"
    for d, so in ((cu13, "libcupti.so.13"), (cu12, "libcupti.so.12")):
        d.mkdir(parents=True)
        (d / so).write_bytes(b"")
    plain = (_run({}, extra_path=str(tmp_path))["FPGAPROF_WHEEL_LIB_DIRS"] or "").split(os.pathsep)
    assert plain.index(str(cu13)) < plain.index(str(cu12))
    (tmp_path / "jax_cuda12_plugin").mkdir()
    (tmp_path / "jax_cuda12_plugin" / "__init__.py").write_text("")
    got = (_run({}, extra_path=str(tmp_path))["FPGAPROF_WHEEL_LIB_DIRS"] or "").split(os.pathsep)
    assert got.index(str(cu12)) < got.index(str(cu13))
