"""The committed type stubs of fpgaprof._core (python/fpgaprof/_core/*.pyi) are what
pybind11-stubgen generates from the built module: a binding changed without its stubs fails
here, with the diff and how to regenerate them (scripts/gen_stubs.sh)."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_core_stubs_match_the_built_module():
    r = subprocess.run(["bash", str(ROOT / "scripts" / "gen_stubs.sh"), "--check"], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "PYTHON": sys.executable})
    assert r.returncode == 0, (r.stdout[-6000:] + r.stderr[-2000:]).strip()
