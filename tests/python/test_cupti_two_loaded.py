"""Two libcupti in one process: JAX's CUDA 12 plugin also maps the nvidia-cuda-cupti 13 wheel's
libcupti.so.13 when that wheel is installed beside jax[cuda12] (its _load_nvidia_libraries loads
"cuda_cupti" and "cu13" alike). fpgaprof must take the one of JAX's major, which `import
fpgaprof` records in FPGAPROF_JAX_CUDA_MAJOR, or the file FPGAPROF_CUPTI_LIBRARY names; before,
it always took libcupti.so.13, and the variable that said otherwise had no effect. Real
libraries: the CUDA 12.8 wheel's libcupti.so.12 (scripts/test.sh unpacks it under
build/cupti-cu12-12.8) and the CUDA 13 one of the venv's wheel or the toolkit. No GPU needed:
only which file is adopted is checked."""
import glob
import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def _one(patterns):
    for p in patterns:
        hits = sorted(glob.glob(p))
        if hits:
            return os.path.realpath(hits[0])
    return None


SO12 = _one([os.path.join(ROOT, "build", "cupti-cu12-12.8", "nvidia", "cuda_cupti", "lib", "libcupti.so.12")])
SO13 = _one([os.path.join(os.path.dirname(os.__file__), "site-packages", "nvidia", "cu13", "lib", "libcupti.so.13"),
             os.path.join(sys.prefix, "lib", "python3*", "site-packages", "nvidia", "cu13", "lib", "libcupti.so.13"),
             "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/lib/libcupti.so.13"])

pytestmark = pytest.mark.skipif(not (SO12 and SO13), reason="needs libcupti.so.12 (build/cupti-cu12-12.8) "
                                "and libcupti.so.13 (the nvidia-cuda-cupti wheel or the CUDA 13 toolkit)")

# As JAX's plugin does: fpgaprof imported first (it sets the environment), then both loaded.
PROBE = """
import ctypes, os, sys
import fpgaprof
for path in sys.argv[1:]:
    ctypes.CDLL(path, mode=os.RTLD_GLOBAL if hasattr(os, "RTLD_GLOBAL") else 0)
from fpgaprof.api.devices import status
s = status()
print(s.library_path)
print(s.how_found)
"""


def _adopted(env_updates):
    env = {k: v for k, v in os.environ.items()
           if k not in ("FPGAPROF_CUPTI_LIBRARY", "FPGAPROF_JAX_CUDA_MAJOR", "FPGAPROF_FAKE_CUPTI")}
    env.update(env_updates)
    r = subprocess.run([sys.executable, "-c", PROBE, SO13, SO12], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    path, how = r.stdout.strip().splitlines()[-2:]
    return os.path.realpath(path) if os.path.isabs(path) else path, how


def test_jax_cuda12_plugin_major_picks_libcupti_12():
    path, how = _adopted({"FPGAPROF_JAX_CUDA_MAJOR": "12"})
    assert how == "already loaded"
    assert path.endswith("libcupti.so.12") or "so.12" in path, path


def test_without_a_known_major_the_newest_is_taken():
    # "0": no major (set, so that `import fpgaprof` does not read it from an installed plugin)
    path, _how = _adopted({"FPGAPROF_JAX_CUDA_MAJOR": "0"})
    assert "so.13" in path, path


def test_the_file_fpgaprof_cupti_library_names_wins_when_loaded():
    path, how = _adopted({"FPGAPROF_JAX_CUDA_MAJOR": "13", "FPGAPROF_CUPTI_LIBRARY": SO12})
    assert how == "already loaded"
    assert os.path.realpath(path) == SO12, path
