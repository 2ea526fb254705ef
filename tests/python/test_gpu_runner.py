"""tests/gpu/run_on_gpu.sh, the parts that run without a GPU: how a step's leftover processes are
ended (a step's `timeout` signals only its own process group and returns once the step's shell has
gone, so a traced program that caught SIGTERM, or a tool in a session of its own, would otherwise
hold the GPU for the next step), and the order the first sweep takes the operations in."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "tests" / "gpu" / "run_on_gpu.sh"
SWEEP = ROOT / "examples" / "mbirjax_sweep.py"

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")


def _functions(*names: str) -> str:
    """The named shell functions, as the runner defines them (from `name() {` to the first `}` line)."""
    text = RUNNER.read_text()
    out = []
    for name in names:
        m = re.search(rf"^{name}\(\) \{{\n.*?^\}}\n", text, re.S | re.M)
        assert m, f"{name} not found in {RUNNER}"
        out.append(m.group(0))
    return "\n".join(out)


def _bash(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)


def test_reap_ends_the_steps_processes_and_no_others(tmp_path):
    script = _functions("tagged_pids", "reap") + r"""
WORK=$PWD; mkdir -p "$WORK/notes"
# What a step can leave behind: a traced program that ignores SIGTERM (as fpgaprof's handler delays
# it), in a session of its own; a plain process in another session; and another step's process.
setsid env GPUVAL_STEP_TAG=tag-a python3 -c 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)' &
setsid env GPUVAL_STEP_TAG=tag-a sleep 120 &
setsid env GPUVAL_STEP_TAG=tag-ab sleep 120 &
for _ in $(seq 100); do [ "$(tagged_pids tag-a | wc -l)" = 2 ] && break; sleep 0.05; done
echo "before: $(tagged_pids tag-a | wc -l) $(tagged_pids tag-ab | wc -l)"
GPUVAL_REAP_GRACE_S=2 reap tag-a stepA
echo "after: $(tagged_pids tag-a | wc -l) $(tagged_pids tag-ab | wc -l)"
other=$(tagged_pids tag-ab); kill -KILL $other
reap tag-none stepB; echo "nothing to end: rc $?"
"""
    proc = _bash(script, tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "before: 2 1" in out and "after: 0 1" in out, out
    assert "nothing to end: rc 0" in out
    notes = (tmp_path / "notes" / "stepA").read_text().splitlines()
    # the plain one ends on SIGTERM; the one ignoring it is named again when SIGKILL ends it
    assert len(notes) == 2, notes
    assert "left running by the step, sent SIGTERM:" in notes[0] and notes[0].count("(") == 2
    assert "(python3)" in notes[0] and "(sleep)" in notes[0]
    assert "still running after 2 s, sent SIGKILL:" in notes[1]
    assert not (tmp_path / "notes" / "stepB").exists()


def _runner_lists() -> dict[str, list[str]]:
    text = RUNNER.read_text()
    block = text[text.index("ALL_OPS=") : text.index("\ndone\n", text.index("RANKED_OPS=")) + 6]
    names = ("ALL_OPS", "PROJECTOR_OPS", "BIG_OPS", "RANKED_OPS")
    proc = subprocess.run(["bash", "-c", block + "".join(f'\necho "{n}: ${n}"' for n in names)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    lists = {}
    for line in proc.stdout.replace("\n  ", " ").splitlines():
        name, _, ops = line.partition(": ")
        lists[name] = ops.split()
    return lists


def test_the_first_sweep_takes_every_operation_once_the_users_ranking_first():
    lists = _runner_lists()
    all_ops, ranked = lists["ALL_OPS"], lists["RANKED_OPS"]
    assert sorted(ranked) == sorted(all_ops) and len(ranked) == 28
    # The user's ranking at 256^3 (CPU backend): cone recon 85.0 s, median_filter3d 25.0, cone
    # hessian diagonal 19.6, cone back projection 17.1, cone FDK recon 16.2, cone forward
    # projection 15.9, parallel recon 6.5, parallel forward 2.1, back 1.0, FBP recon 0.8.
    assert ranked[:10] == [
        "cone_recon", "median_filter3d", "cone_compute_hessian_diagonal", "cone_back_project",
        "cone_fdk_recon", "cone_forward_project", "parallel_recon", "parallel_forward_project",
        "parallel_back_project", "parallel_fbp_recon",
    ]
    assert ranked[10:] == [o for o in all_ops if o not in ranked[:10]]


@pytest.mark.skipif(importlib.util.find_spec("mbirjax") is None, reason="mbirjax not installed")
def test_the_runners_operations_are_the_sweeps():
    lists = _runner_lists()
    proc = subprocess.run([sys.executable, str(SWEEP), "--list-operations"], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, MPLBACKEND="Agg"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    sweep_ops = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
    assert lists["ALL_OPS"] == sweep_ops
    assert set(lists["PROJECTOR_OPS"]) <= set(sweep_ops) and set(lists["BIG_OPS"]) <= set(sweep_ops)
