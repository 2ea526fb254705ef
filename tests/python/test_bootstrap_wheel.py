"""scripts/bootstrap.sh builds the fpgaprof wheel only when its sources changed, and installs it
only into a venv that does not have that build (a rerun of scripts/demo.sh with nothing
changed took 2:02 on two busy cores, most of it `pip wheel`).

The script runs for real in a scratch tree whose `.venv/bin/python` is a stand-in that logs
each call and makes an empty wheel for `pip wheel`: what is checked is the script's own
decisions, without building anything.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

STAND_IN = textwrap.dedent(
    """\
    #!/bin/sh
    # logs its arguments; `-m pip wheel ... -w DIR .` leaves a wheel in DIR
    echo "$*" >> "$LOG"
    if [ "$1 $2 $3" = "-m pip wheel" ]; then
      while [ $# -gt 0 ]; do
        if [ "$1" = "-w" ]; then mkdir -p "$2" && : > "$2/fpgaprof-0.1.0-cp311-cp311-linux_x86_64.whl"; fi
        shift
      done
    fi
    """
)


def _tree(tmp: Path) -> Path:
    root = tmp / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", root / "scripts" / "bootstrap.sh")
    for d in ("cmake", "cpp", "proto", "python"):
        (root / d).mkdir()
        (root / d / "a.txt").write_text(f"{d}\n")
    (root / "python" / "__pycache__").mkdir()
    (root / "CMakeLists.txt").write_text("project(x)\n")
    (root / "pyproject.toml").write_text("[project]\n")
    venv = root / ".venv" / "bin"
    venv.mkdir(parents=True)
    py = venv / "python"
    py.write_text(STAND_IN)
    py.chmod(py.stat().st_mode | stat.S_IXUSR)
    # build dependencies and extras already installed (their stamps newer than pyproject.toml)
    for stamp in (".fpgaprof-build-deps", ".fpgaprof-deps-test"):
        p = root / ".venv" / stamp
        p.write_text("")
        os.utime(p, (2e9, 2e9))
    return root


def _run(root: Path) -> list[str]:
    log = root / "calls.log"
    log.unlink(missing_ok=True)
    r = subprocess.run(
        ["bash", "scripts/bootstrap.sh", "--no-apt", "--no-mbirjax06", "--extras", "test"],
        cwd=root,
        env={**os.environ, "LOG": str(log)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="needs coreutils' sha256sum")
def test_an_unchanged_tree_skips_the_wheel_build_and_the_reinstall(tmp_path):
    root = _tree(tmp_path)
    first = _run(root)
    assert any(c.startswith("-m pip wheel") for c in first)
    assert any(c.startswith("-m pip install -q --force-reinstall --no-deps") for c in first)
    # nothing changed: neither built nor installed again
    assert _run(root) == []
    # a cache file is not a source
    (root / "python" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert _run(root) == []
    # a changed source file: built and installed again
    (root / "python" / "a.txt").write_text("python, changed\n")
    again = _run(root)
    assert any(c.startswith("-m pip wheel") for c in again)
    assert any(c.startswith("-m pip install -q --force-reinstall --no-deps") for c in again)
    assert _run(root) == []


APT_CACHE = textwrap.dedent(
    """\
    #!/bin/sh
    # `apt-cache policy PKG` as apt writes it: the candidate first, then (a moment later) the
    # version table, so that a reader that stops at the candidate line makes the second write fail
    [ "$1" = policy ] || exit 1
    if [ "$2" = chromium ]; then cand="(none)"; else cand="1.0-1"; fi
    printf '%s:\\n  Installed: (none)\\n  Candidate: %s\\n' "$2" "$cand"
    sleep 0.3
    printf '  Version table:\\n     1.0-1 500\\n        500 http://deb.debian.org/debian bookworm/main\\n'
    """
)


def test_apt_packages_with_a_candidate_are_installed_on_a_fresh_machine(tmp_path):
    # On a fresh Debian machine (no package installed) every package with an install candidate
    # is installed: `apt-cache policy | grep -q` under pipefail read them all as absent (grep
    # stops at the candidate line, apt-cache's next write dies of SIGPIPE, the pipeline fails).
    root = _tree(tmp_path)
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    apt_log = tmp_path / "apt.log"

    def stub(name: str, text: str) -> None:
        f = stubs / name
        f.write_text(text)
        f.chmod(0o755)

    stub("apt-cache", APT_CACHE)
    stub("dpkg", "#!/bin/sh\nexit 1\n")  # nothing installed
    stub("apt-get", f'#!/bin/sh\necho "$*" >> "{apt_log}"\n')
    stub("sudo", '#!/bin/sh\nexec "$@"\n')
    r = subprocess.run(
        ["bash", "scripts/bootstrap.sh", "--no-mbirjax06", "--extras", "test"],
        cwd=root,
        env={**os.environ, "LOG": str(root / "calls.log"), "PATH": f"{stubs}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    calls = apt_log.read_text().splitlines()
    installs = [line.split() for line in calls if line.startswith("install ")]
    assert len(installs) == 1, apt_log.read_text()
    pkgs = set(installs[0]) - {"install", "-y", "-qq", "--no-install-recommends"}
    assert {"catch2", "nlohmann-json3-dev", "ccache", "cmake", "graphviz", "clang-14"} <= pkgs
    assert "chromium" not in pkgs
    assert "left out: chromium\n" in r.stdout
