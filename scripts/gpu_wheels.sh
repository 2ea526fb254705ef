#!/usr/bin/env bash
# Downloads into .whl/ the Python wheels that the CUDA validation machine's image lacks for
# tests/gpu/run_on_gpu.sh (that machine has no network; .whl/ goes along with the checkout):
#   .whl/           mbirjax==0.7.3 (the current line) and every dependency of it, walked
#                   recursively through the wheels' Requires-Dist (extras skipped, markers
#                   evaluated for CPython 3.12 on Linux x86_64), that is not in the image's
#                   package list (IMAGE_PACKAGES below, as read on the image on 2026-11-17);
#                   nlohmann-json (our CMake falls back to the pip package's headers when no
#                   nlohmann_json CMake package or Debian header is found)
#   .whl/mbirjax06/ mbirjax==0.6.17.1 alone (the earlier line, which the saved H100 traces ran;
#                   run_on_gpu.sh installs it into its own folder, used with MBIRJAX_LINE=0.6):
#                   its dependencies are a subset of 0.7.3's, checked here
#   .whl/deb/       Debian's zlib1g-dev, used by run_on_gpu.sh only if the image has no zlib.h
#   .whl/cupti12/   nvidia-cuda-cupti-cu12==12.8.* (CUDA 12.8's libcupti, what jax[cuda12] brings):
#                   run_on_gpu.sh's cupti12 step traces through it and compares with CUDA 13's
# Which are needed: on the image as found on 2026-11-22 (Python 3.12.3, JAX 0.11.2 with the
# CUDA 13 plugin, nvidia-cuda-cupti, pybind11, scikit-build-core, cmake, ninja; zlib.h and
# nlohmann/json.hpp present) only mbirjax and the dependencies listed as downloaded; the
# nlohmann-json wheel and the zlib1g-dev .deb are fallbacks that were not used there.
# Wheels are cp312 manylinux x86_64 (or pure). Versions: the one this machine's .venv has when it
# satisfies the requirement, else pip's newest match.
# Idempotent: a package that already has a wheel in .whl/ is not downloaded again (its METADATA
# is still walked); one version per package per folder. Prints the list and the total size; the
# whole .whl/ should stay a few MiB (it travels with the checkout).
# Usage: scripts/gpu_wheels.sh            (env: PYTHON = a Python with pip, default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
DEST=.whl
mkdir -p "$DEST/deb" "$DEST/mbirjax06" "$DEST/cupti12"
# An older layout kept 0.6.17.1 in .whl/ itself: one mbirjax per folder.
for w in "$DEST"/mbirjax-0.6.*.whl; do [ -f "$w" ] && mv "$w" "$DEST/mbirjax06/"; done

"$PY" - "$DEST" <<'PYEOF'
import email.parser
import glob
import importlib.metadata as md
import os
import subprocess
import sys
import tempfile
import zipfile

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

dest = sys.argv[1]
ROOTS = ["mbirjax==0.7.3", "nlohmann-json==3.12.0"]
SECOND_LINE = ("mbirjax==0.6.17.1", os.path.join(dest, "mbirjax06"))  # its own folder, own deps checked

# The CUDA validation image's Python packages (H100 and H200 machines, read on 2026-11-17).
IMAGE_PACKAGES = """
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch
build certifi charset-normalizer chex click cloudpickle cmake colorama contourpy coverage
cuda-bindings cuda-core cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn
einops equinox etils execnet filelock flatbuffers flax fonttools formulaic frozenlist fsspec
gpytorch grpcio h11 h5py hf-xet httpcore httpx huggingface-hub humanize hypothesis idna imageio
iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib
kiwisolver lazy-loader lightning lightning-utilities linear-operator lineax llvmlite lxml
markdown markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack
multidict multipledispatch mypy-extensions nanobind narwhals networkx ninja numba numba-cuda
numpy numpyro nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime
nvidia-cudnn-cu13 nvidia-cufft nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse
nvidia-cusparselt-cu13 nvidia-ml-py nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13
nvidia-nvtx onnx onnx-ir onnxruntime onnxscript opencv-python-headless optax opt-einsum
opt-einsum-fx optimistix orbax-checkpoint packaging pandas pathspec patsy peft pillow pip pluggy
portalocker prometheus-client propcache protobuf psutil pyarrow pybind11 py-cpuinfo pygments
pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock
pytest-timeout pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests rich
sacrebleu safetensors scikit-build-core scikit-image scikit-learn scipy seaborn sentencepiece
sentence-transformers setuptools shellingham simplejson six sortedcontainers statsmodels sympy
tabulate tensorboard tensorboard-data-server tensorstore threadpoolctl tifffile tiktoken timm
tokenizers toolz torch torchaudio torchdiffeq torch-geometric torchmetrics torchvision tqdm
transformers treescope triton typer typing-extensions typing-inspect urllib3 uvloop
wadler-lindig werkzeug wheel wrapt xarray xxhash yarl zipp
"""
IMAGE = {canonicalize_name(n) for n in IMAGE_PACKAGES.split()}
# Same import name, other distribution: opencv-python (about 60 MB) and the image's headless
# build both provide cv2; mbirjax needs no GUI from it.
PROVIDED_BY = {"opencv-python": "opencv-python-headless"}
for alias, real in PROVIDED_BY.items():
    assert real in IMAGE, real

# The device: CPython 3.12.3 (/opt/torch/.venv), Linux x86_64, glibc 2.39 (Ubuntu 24.04).
ENV = default_environment()
ENV.update(python_version="3.12", python_full_version="3.12.3", implementation_name="cpython",
           implementation_version="3.12.3", platform_python_implementation="CPython",
           sys_platform="linux", platform_system="Linux", platform_machine="x86_64",
           os_name="posix", extra="")
PLATFORMS = ["manylinux1_x86_64", "manylinux2010_x86_64", "manylinux2014_x86_64"] + [
    f"manylinux_2_{n}_x86_64" for n in range(5, 40)]


def have(folder: str = dest) -> dict[str, str]:
    """canonical name -> wheel path, for the wheels already in `folder`."""
    got: dict[str, str] = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.whl"))):
        name = canonicalize_name(parse_wheel_filename(os.path.basename(path))[0])
        if name in got:
            sys.exit(f"gpu_wheels: two wheels of {name} in {folder} ({got[name]}, {path}): remove "
                     "one (pip installs neither)")
        got[name] = path
    return got


def local_version(name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def download(req: Requirement, folder: str = dest) -> str:
    spec = str(req.specifier)
    pinned = local_version(req.name)
    want = f"{req.name}=={pinned}" if pinned and (not spec or req.specifier.contains(
        pinned, prereleases=True)) else f"{req.name}{spec}"
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
               "--python-version", "3.12", "--implementation", "cp", "--abi", "cp312", "--abi",
               "abi3", "--abi", "none", "-d", tmp]
        for p in PLATFORMS:
            cmd += ["--platform", p]
        p = subprocess.run(cmd + [want], capture_output=True, text=True)
        if p.returncode != 0 and want != f"{req.name}{spec}":
            # the .venv's version may have no cp312 wheel: any version the requirement allows
            p = subprocess.run(cmd + [f"{req.name}{spec}"], capture_output=True, text=True)
        files = glob.glob(os.path.join(tmp, "*.whl"))
        if p.returncode != 0 or len(files) != 1:
            sys.exit(f"gpu_wheels: no cp312 manylinux x86_64 wheel for {want}:\n{p.stderr[-2000:]}")
        target = os.path.join(folder, os.path.basename(files[0]))
        os.replace(files[0], target)
        return target


def requires(wheel: str) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        meta = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        msg = email.parser.Parser().parsestr(z.read(meta[0]).decode("utf-8", "replace"))
    return msg.get_all("Requires-Dist") or []


wheels = have()
queue = [(r, "(root)") for r in ROOTS]
seen: dict[str, str] = {}
skipped: dict[str, str] = {}
notes: list[str] = []
while queue:
    text, parent = queue.pop(0)
    req = Requirement(text)
    if req.marker is not None and not req.marker.evaluate(ENV):
        continue  # extras, other platforms / Pythons
    name = canonicalize_name(req.name)
    if name in IMAGE or name in PROVIDED_BY:
        why = "in the image" if name in IMAGE else f"the image's {PROVIDED_BY[name]} provides it"
        skipped.setdefault(name, f"{why} (needed by {parent})")
        continue
    if name in seen:
        continue
    if name not in wheels:
        wheels[name] = download(req)
        print(f"gpu_wheels: downloaded {os.path.basename(wheels[name])}")
    version = parse_wheel_filename(os.path.basename(wheels[name]))[1]
    if req.specifier and not req.specifier.contains(version, prereleases=True):
        notes.append(f"{name} {version} does not satisfy {parent}'s '{text}'")
    seen[name] = parent
    queue += [(r, name) for r in requires(wheels[name])]

# The earlier line in its own folder: its wheel only; every need met by the image or the above.
text, folder = SECOND_LINE
req = Requirement(text)
second = have(folder).get(canonicalize_name(req.name))
if second is None or not req.specifier.contains(parse_wheel_filename(os.path.basename(second))[1]):
    if second:
        os.remove(second)
    second = download(req, folder)
    print(f"gpu_wheels: downloaded {os.path.relpath(second, dest)}")
for r in requires(second):
    rq = Requirement(r)
    if rq.marker is not None and not rq.marker.evaluate(ENV):
        continue
    n = canonicalize_name(rq.name)
    if n in IMAGE or n in PROVIDED_BY:
        continue
    if n not in seen:
        notes.append(f"{text} needs {r}, which neither the image nor .whl/ has: add it to ROOTS")
    else:
        v = parse_wheel_filename(os.path.basename(wheels[n]))[1]
        if rq.specifier and not rq.specifier.contains(v, prereleases=True):
            notes.append(f"{text} needs {r}; .whl/ has {n} {v}")

extra = sorted(set(wheels) - set(seen))
if extra:
    notes.append("wheels in .whl/ that nothing here needs (kept; remove by hand if stale): "
                 + ", ".join(extra))
total = 0
print("\ngpu_wheels: wheels for the GPU machine (.whl/):")
for name in sorted(seen):
    size = os.path.getsize(wheels[name])
    total += size
    print(f"  {os.path.basename(wheels[name]):70s} {size / 2**20:7.2f} MiB  (for {seen[name]})")
size = os.path.getsize(second)
total += size
print(f"  {os.path.relpath(second, dest):70s} {size / 2**20:7.2f} MiB  (the 0.6 line, MBIRJAX_LINE=0.6)")
print("gpu_wheels: not carried (the image has them): " + ", ".join(
    f"{n} [{w.split(' (')[0]}]" if "provides" in w else n for n, w in sorted(skipped.items())))
for n in notes:
    print("gpu_wheels: NOTE: " + n)
print(f"gpu_wheels: {len(seen) + 1} wheels, {total / 2**20:.2f} MiB")
PYEOF

# zlib.h for the build, only used when the image has none (run_on_gpu.sh checks).
if ! ls "$DEST"/deb/zlib1g-dev_*_amd64.deb >/dev/null 2>&1; then
  if command -v apt-get >/dev/null; then
    o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64'
    # shellcheck disable=SC2086
    (cd "$DEST/deb" && apt-get $o download zlib1g-dev >/dev/null 2>&1) \
      || echo "gpu_wheels: could not download zlib1g-dev (apt-get update first?); the GPU build needs the image's zlib.h then"
  else
    echo "gpu_wheels: no apt-get here: zlib1g-dev not fetched; the GPU build needs the image's zlib.h then"
  fi
fi
# CUDA 12.8's libcupti for the cupti12 step (platform wheel: manylinux x86_64, any Python).
if ! ls "$DEST"/cupti12/nvidia_cuda_cupti_cu12-12.8.*.whl >/dev/null 2>&1; then
  "$PY" -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    -d "$DEST/cupti12" "nvidia-cuda-cupti-cu12==12.8.*" \
    || echo "gpu_wheels: could not download nvidia-cuda-cupti-cu12 12.8; the cupti12 step will be skipped"
fi
# du fails on a pattern that matched nothing (no .deb, no cupti12 wheel: both allowed above) but
# still totals the rest.
{ du -cb "$DEST"/*.whl "$DEST"/mbirjax06/*.whl "$DEST"/cupti12/*.whl "$DEST"/deb/*.deb 2>/dev/null || true; } \
  | tail -n 1 | awk '{printf "gpu_wheels: .whl/ total %.2f MiB (wheels and the .deb)\n", $1 / 1048576}'
