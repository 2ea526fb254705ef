"""XProf profiles read by fpgaprof.load / `fpgaprof report`: a round trip through fpgaprof's own
XProf export of every real trace (the same kernels, ops and FPGA ranking as the trace itself),
the same XSpace stripped to what XLA's own tracer writes (no NVTX ranges, no fpgaprof stats: the
attribution from XLA's hlo_op stats alone), and a real jax.profiler.trace of CPU JAX made here
(no GPU plane: a Profile without GPU data that says so, with the HLO modules XLA stored).

The expected values are the original trace's own records and analysis, and, for the CPU profile,
the jitted function run in the test. Kernels and copies without GPU timestamps (two H200 traces
whose counter window was not paired) are not in the XSpace: there the expected values are the
original's timed records, and the ops and FPGA rows of those records' time.
"""

from __future__ import annotations

import glob
import json
import math
import os
import subprocess
import sys

import pytest

import fpgaprof
from fpgaprof.analysis import attribution
from fpgaprof.base.errors import TraceFormatError

pytest.importorskip("google.protobuf")

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data", "traces")
REAL = sorted(glob.glob(os.path.join(TRACE_DIR, "*.fpgaprof")))
TABLES = ("kernels", "transfers", "memsets", "api_calls", "markers", "regions")


def _cli(*args, check=True):
    r = subprocess.run(
        [sys.executable, "-m", "fpgaprof", *args], capture_output=True, text=True, timeout=600
    )
    if check:
        assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module", params=REAL, ids=[os.path.basename(p) for p in REAL])
def round_trip(request, tmp_path_factory):
    path = request.param
    out = tmp_path_factory.mktemp("xp")
    _cli("export", path, "--format", "xprof", "-o", str(out))
    return fpgaprof.load(path), fpgaprof.load(str(out)), out


def _rows(table, keys, timed_only=False):
    c = table.columns()
    rows = zip(*(list(map(str, c[k])) for k in keys), c["start_ns"], c["end_ns"])
    return sorted(r[:-2] for r in rows if not timed_only or r[-2] or r[-1])


def _timed(table) -> int:
    c = table.columns()
    return sum(1 for s, e in zip(c["start_ns"], c["end_ns"]) if s or e)


def _untimed(p) -> int:
    return len(p.kernels) + len(p.transfers) - _timed(p.kernels) - _timed(p.transfers)


def test_round_trip_keeps_every_record(round_trip):
    a, b, _ = round_trip
    for t in TABLES:
        want = (
            _timed(getattr(a, t))
            if t in ("kernels", "transfers", "memsets")
            else len(getattr(a, t))
        )
        assert len(getattr(b, t)) == want, t
    keys = (
        "name",
        "start_ns",
        "end_ns",
        "device_id",
        "stream_id",
        "correlation_id",
        "grid_x",
        "block_x",
        "registers_per_thread",
        "static_shared_bytes",
        "dynamic_shared_bytes",
    )
    assert _rows(b.kernels, keys) == _rows(a.kernels, keys, timed_only=True)
    keys = ("start_ns", "end_ns", "bytes", "copy_kind", "src_kind", "dst_kind", "is_async")
    assert _rows(b.transfers, keys) == _rows(a.transfers, keys, timed_only=True)
    # the hardware counter values of every kernel and copy the XSpace holds come back
    assert len(b.counters) == sum(
        1
        for k, m in zip(
            *(a.counters.columns([c])[c].tolist() for c in ("kernel_index", "memcpy_index"))
        )
        if (k != 0xFFFFFFFF and (a.kernels[k].start_ns or a.kernels[k].end_ns))
        or (m != 0xFFFFFFFF and (a.transfers[m].start_ns or a.transfers[m].end_ns))
    )
    assert _rows(b.api_calls, ("name", "start_ns", "correlation_id", "thread_id", "kind")) == _rows(
        a.api_calls, ("name", "start_ns", "correlation_id", "thread_id", "kind")
    )
    assert [d.name for d in b.devices] == [d.name for d in a.devices]
    assert sorted((m.name, m.program_id) for m in b.hlo_modules) == sorted(
        (m.name, m.program_id) for m in a.hlo_modules
    )


def test_round_trip_keeps_ops_and_fpga_ranking(round_trip):
    a, b, _ = round_trip

    def ops(p):
        return sorted(
            (
                str(o.module_name),
                int(o.program_id),
                str(o.hlo_op),
                int(o.kernel_count),
                int(o.total_ns),
            )
            for o in p.ops
        )

    if _untimed(a):
        # ops whose kernels all lack times are gone; the others keep their time
        def timed_ops(p):
            return [o[:3] + o[4:] for o in ops(p) if o[4] > 0]

        assert timed_ops(b) == timed_ops(a)
        rows_a = {(r["op"], r["module"]): r for r in a.fpga_candidates() if r["gpu_time_ns"] > 0}
        rows_b = {(r["op"], r["module"]): r for r in b.fpga_candidates()}
        assert rows_a.keys() == rows_b.keys()
        for k, r in rows_a.items():
            assert (r["estimate_basis"], r["cost_known"]) == (
                rows_b[k]["estimate_basis"],
                rows_b[k]["cost_known"],
            ), k
        return
    assert ops(b) == ops(a)
    assert b.attribution.unattributed_count == a.attribution.unattributed_count

    def ranking(p):
        c = p.fpga_candidates().columns()

        def plain(v):  # NaN (no estimate) compares equal to NaN here
            return None if isinstance(v, float) and math.isnan(v) else v

        return [
            tuple(plain(v) for v in row)
            for row in zip(*(list(c[k]) for k in ("rank", "op", "module", "score", "op_speedup")))
        ]

    assert ranking(b) == ranking(a) and ranking(a)


def test_report_reads_the_folder(round_trip):
    a, _, out = round_trip
    _cli("report", str(out))
    s = json.loads((out / "summary.json").read_text())
    assert s["totals"]["kernel_count"] == _timed(a.kernels)
    assert any("imported from the XProf profile" in w["message"] for w in s["warnings"])


def test_an_xspace_in_xlas_own_form_is_attributed_from_the_hlo_op_stats(round_trip, tmp_path):
    """Without NVTX ranges and fpgaprof's stats, as XLA's GPU tracer writes it: the op and
    module of each kernel come from its hlo_op / hlo_module / program_id stats."""
    from fpgaprof import xplane_pb2 as pb

    a, _, out = round_trip
    src = glob.glob(str(out / "plugins" / "profile" / "*" / "*.xplane.pb"))[0]
    space = pb.XSpace()
    space.ParseFromString(open(src, "rb").read())
    keep = [p for p in space.planes if p.name != "/host:CPU"]
    del space.planes[:]
    for p in keep:
        ours = {i for i, m in p.stat_metadata.items() if m.name.startswith("fpgaprof_")}
        for md in p.event_metadata.values():
            kept = [s for s in md.stats if s.metadata_id not in ours]
            del md.stats[:]
            md.stats.extend(kept)
        for line in p.lines:
            for ev in line.events:
                kept = [s for s in ev.stats if s.metadata_id not in ours]
                del ev.stats[:]
                ev.stats.extend(kept)
        kept = [s for s in p.stats if s.metadata_id not in ours]
        del p.stats[:]
        p.stats.extend(kept)
        space.planes.add().CopyFrom(p)
    path = tmp_path / "host.xplane.pb"
    path.write_bytes(space.SerializeToString())
    b = fpgaprof.load(str(path))
    assert len(b.kernels) == _timed(a.kernels) and len(b.markers) > 0
    with_proto = {m.program_id for m in b.hlo_modules}
    assert with_proto

    def per_kernel(p):
        cols = attribution.kernel_columns(p.attribution)
        k = p.kernels.columns()
        return {
            (int(c), int(t)): (int(pid), str(op))
            for c, t, e, pid, op in zip(
                k["correlation_id"], k["start_ns"], k["end_ns"], cols["program_id"], cols["hlo_op"]
            )
            if t or e
        }

    got, want = per_kernel(b), per_kernel(a)
    assert got.keys() == want.keys()
    # every kernel of a module the XSpace holds goes to the same op of the same program
    same = [k for k, (pid, _) in want.items() if pid in with_proto]
    assert same and all(got[k] == want[k] for k in same)


def test_a_cpu_jax_profile_has_no_gpu_plane_and_says_so(tmp_path):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    f = jax.jit(lambda x: jnp.sin(x) @ x.T + 1.0)
    x = jnp.ones((64, 64))
    f(x).block_until_ready()
    with jax.profiler.trace(str(tmp_path / "jt")):
        f(x).block_until_ready()
    prof = fpgaprof.load(str(tmp_path / "jt"))
    assert len(prof.kernels) == 0 and len(prof.transfers) == 0
    assert prof.meta["gpu_available"] is False
    assert "no GPU plane" in prof.meta["unavailable_reason"]
    assert any("no GPU plane" in w for w in prof.warnings)
    # XLA stored the jitted module: its HLO text comes back through XLA's printer
    names = [m.name for m in prof.hlo_modules]
    assert "jit__lambda" in names
    text = [m.text for m in prof.hlo_modules if m.name == "jit__lambda"][0]
    assert "sine" in text and "dot" in text
    r = _cli("report", str(tmp_path / "jt"))
    s = json.loads((tmp_path / "jt" / "summary.json").read_text())
    assert s["totals"]["gpu_busy_s"] is None
    assert "no GPU plane" in json.dumps(s["warnings"])
    assert "no GPU plane" in r.stdout + r.stderr


def test_a_file_that_is_not_an_xspace(tmp_path):
    bad = tmp_path / "x.xplane.pb"
    bad.write_bytes(b"\xff\xff\xff not a protobuf")
    with pytest.raises(TraceFormatError, match="not an XProf profile"):
        fpgaprof.load(str(bad))
    r = _cli("report", str(bad), check=False)
    assert r.returncode == 1 and "not an XProf profile" in r.stderr


def test_an_export_into_a_folder_of_another_export_is_the_one_read(tmp_path):
    """`fpgaprof export B --format xprof -o DIR` into a DIR that holds A's export: the run is
    named by the trace's start time, so where A started later its run sorted after B's and
    fpgaprof.load(DIR) / `fpgaprof report DIR` read A. The export leaves one fpgaprof run."""
    by_start = sorted(REAL, key=lambda p: fpgaprof.load(p).meta["start_ns"])
    older, newer = by_start[0], by_start[-1]
    out = tmp_path / "xp"
    _cli("export", newer, "--format", "xprof", "-o", str(out))
    _cli("export", older, "--format", "xprof", "-o", str(out))
    got = fpgaprof.load(str(out))
    want = fpgaprof.load(older)
    assert len(got.kernels) == _timed(want.kernels)
    assert [d.name for d in got.devices] == [d.name for d in want.devices]
    assert len(list(out.glob("plugins/profile/*/fpgaprof.xplane.pb"))) == 1


def test_a_killed_export_leaves_no_run_xprof_would_list(tmp_path):
    """An export SIGKILLed before its files move into place leaves its staging folder (the
    next output into the folder removes it). Staged as DIR/.fpgaprof-staging-*/plugins/profile/
    <run>/, XProf (which finds runs as plugins/profile/<run> anywhere under the log dir) listed
    it as a run; the staging folder now holds no plugins/profile tree."""
    out = tmp_path / "xp"
    code = (
        "import os, sys\n"
        "import fpgaprof\n"
        "from fpgaprof import report\n"
        "from fpgaprof.base import atomic\n"
        "def killed(*a, **k):\n"
        "    os._exit(137)  # as SIGKILL: no finally, no cleanup\n"
        "atomic.OutputSet.commit = killed\n"
        f"report.write_xspace(fpgaprof.load({REAL[0]!r}), {str(out)!r})\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 137, r.stderr
    staged = [p for p in out.rglob("*") if p.is_file()]
    assert [p.name for p in staged] == ["fpgaprof.xplane.pb"]  # written, never moved
    assert not list(out.rglob("plugins")), [str(p) for p in out.rglob("*")]
