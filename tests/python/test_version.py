"""One version source: CMakeLists.txt's `project(fpgaprof VERSION x.y.z)`. The C++ core is built
with it (fpgaprof._core.__version__ = fpgaprof.__version__, summary.json's generated_by) and
the wheel's metadata takes it through scikit-build-core's regex provider (pyproject.toml has
no version of its own)."""
import importlib.metadata
import os
import pathlib
import re

import fpgaprof
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib")


def _cmake_version() -> str:
    text = (REPO / "CMakeLists.txt").read_text(encoding="utf-8")
    return re.search(r"project\(fpgaprof\s+VERSION\s+([0-9][0-9A-Za-z.+-]*)", text).group(1)


def test_the_package_reports_the_cmake_version():
    assert fpgaprof.__version__ == _cmake_version()


def test_pyproject_takes_its_version_from_cmakelists():
    with open(REPO / "pyproject.toml", "rb") as f:
        conf = tomllib.load(f)
    assert "version" not in conf["project"] and "version" in conf["project"]["dynamic"]
    meta = conf["tool"]["scikit-build"]["metadata"]["version"]
    assert meta["provider"] == "scikit_build_core.metadata.regex"
    assert meta["input"] == "CMakeLists.txt"
    text = (REPO / meta["input"]).read_text(encoding="utf-8")
    assert re.search(meta["regex"], text).group("value") == _cmake_version()


def test_an_installed_package_carries_the_same_version():
    if "site-packages" not in os.path.realpath(fpgaprof.__file__):
        pytest.skip("fpgaprof runs from a source/build tree here (PYTHONPATH), not installed")
    assert importlib.metadata.version("fpgaprof") == fpgaprof.__version__
