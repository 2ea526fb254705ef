"""Reports from a real trace: captured through the libcupti test double (tests/fake_cupti),
saved, loaded with fpgaprof.load, then summary.json / timeline.json / report.html.

Expected numbers follow the fake's documented generation rule (tests/fake_cupti/fake_cupti.hpp)
for N = 16 kernels on one simulated thread (id 4200000):
  kernels 16: loop_fusion_0..3, 4 each
  HtoD where i % 4 == 0 (i = 0, 4, 8, 12): 4 copies, 4096 x (1 + 5 + 9 + 13) = 114688 bytes
  DtoH where i % 8 == 0 (i = 0, 8): 2 copies, 1024 x (1 + 9) = 10240 bytes
  memset where i % 16 == 0: 1; allocation: 1 (1 MiB)
  driver API calls: 16 launches + 4 + 2 copies + 1 memset + 1 cuStreamSynchronize = 24
  NVTX: XlaModule range + 16 Thunk ranges + "still_open" range + 1 instant "fake_mark" = 19
  flows (activities with their launching call): 16 + 6 + 1 = 23
  regions: the one the test opens around emit() (on the Python thread).
"""
import json
import re
import subprocess
from collections import Counter

import pytest

jsonschema = pytest.importorskip("jsonschema")
fake = pytest.importorskip("_fake_cupti")

import fpgaprof  # noqa: E402
from fpgaprof import report  # noqa: E402

N = 16
CODE = """
import time
path = sys.argv[1] if len(sys.argv) > 1 else os.environ["TRACE_OUT"]
with fpgaprof.trace(path) as prof:
    with fpgaprof.region("fake/16"):
        emit()
        time.sleep(0.2)
done({"kernels": len(prof.kernels)})
"""


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    fake.need_fake()
    d = tmp_path_factory.mktemp("fake")
    path = d / "trace.fpgaprof"
    out = fake.run_traced(CODE, kernels=N, threads=1, extra_env={"TRACE_OUT": str(path)})
    assert out["kernels"] == N, out
    prof = fpgaprof.load(str(path))
    paths = report.write_all(prof, d / "out", trace_path=str(path))
    return prof, paths


def test_summary_from_real_trace(traced):
    prof, paths = traced
    with open(paths["summary"], encoding="utf-8") as f:
        s = json.load(f)
    import os
    schema_path = os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                               "summary.schema.json")
    with open(schema_path, encoding="utf-8") as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(s)
    assert s["trace"]["gpu_available"] is True
    assert s["device"]["name"] == "Fake H100"
    assert s["totals"]["kernel_count"] == 16
    assert {r["name"]: r["count"] for r in s["kernels"]["top"]} == \
        {f"loop_fusion_{k}": 4 for k in range(4)}
    dirs = {r["direction"]: r for r in s["transfers"]["by_direction"]}
    assert (dirs["HtoD"]["count"], dirs["HtoD"]["bytes"]) == (4, 114688)
    assert (dirs["DtoH"]["count"], dirs["DtoH"]["bytes"]) == (2, 10240)
    assert s["totals"]["memset_count"] == 1
    assert s["totals"]["api_call_count"] == 24
    assert s["totals"]["marker_count"] == 19
    assert s["memory"]["available"] and s["memory"]["peak_bytes"] == 1 << 20
    assert [(m["operation"], m["volume_size"], m["run"]) for m in s["measurements"]] == \
        [("fake", 16, 0)]
    assert s["measurements"][0]["time"] >= 0.2
    # attribution through the Thunk ranges: fusion.<i % 4>, 4 executions each
    assert s["ops"]["available"], s["ops"]
    assert {(r["op"], r["count"], r["module"]) for r in s["ops"]["items"]} == \
        {(f"fusion.{k}", 4, "jit_f") for k in range(4)}
    # busy time is a union: never more than the summed durations, never more than wall time
    assert 0 < s["totals"]["gpu_busy_s"] <= s["totals"]["kernel_time_s"] + \
        s["totals"]["transfer_busy_s"] + 1e-3
    assert s["totals"]["gpu_busy_s"] <= s["trace"]["wall_time_s"]


def test_timeline_from_real_trace(traced):
    prof, paths = traced
    with open(paths["timeline"], encoding="utf-8") as f:
        doc = json.load(f)
    cats = Counter(e["cat"] for e in doc["traceEvents"] if e["ph"] in ("X", "i"))
    assert dict(cats) == {"kernel": 16, "gpu_memcpy": 6, "gpu_memset": 1, "cuda_driver": 24,
                          "nvtx": 19, "region": 1}
    # the same counts as the loaded tables (records = slices)
    assert cats["kernel"] == len(prof.kernels) and cats["cuda_driver"] == len(prof.api_calls)
    outs = {e["bind_id"] for e in doc["traceEvents"] if e.get("flow_out")}
    ins = [e["bind_id"] for e in doc["traceEvents"] if e.get("flow_in")]
    assert len(outs) == len(ins) == len(set(ins)) == 23 and outs == set(ins)
    # every kernel carries the HLO op it was attributed to: loop_fusion_<k> ran in fusion.<k>
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel":
            assert e["args"]["hlo_op"] == "fusion." + e["name"].rsplit("_", 1)[1]
            assert e["args"]["module"] == "jit_f"
    # the launching thread of the fake is 4200000; slices on each track nest
    assert any(e["tid"] == 4200000 for e in doc["traceEvents"] if e.get("cat") == "cuda_driver")
    tracks = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for evs in tracks.values():
        evs.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, end in evs:
            while stack and stack[-1] <= s:
                stack.pop()
            assert not stack or end <= stack[-1] + 1e-9
            stack.append(end)


def test_html_from_real_trace(traced, tmp_path):
    _, paths = traced
    with open(paths["html"], encoding="utf-8") as f:
        doc = f.read()
    assert "Fake H100" in doc and "loop_fusion_0" in doc
    import shutil
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium not installed (apt-get install chromium)")
    r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu",
                        "--host-resolver-rules=MAP * ~NOTFOUND", "--dump-dom",
                        "file://" + paths["html"]], capture_output=True, text=True, timeout=90)
    m = re.search(r'data-status="(\w+)">([^<]*)<', r.stdout)
    assert m and m.group(1) == "ok", (m.group(2) if m else r.stderr[-1000:])


def test_cli_report_and_export_csv(traced, tmp_path):
    prof, paths = traced
    import os
    import sys
    trace = os.path.join(os.path.dirname(os.path.dirname(paths["summary"])), "trace.fpgaprof")
    r = subprocess.run([sys.executable, "-m", "fpgaprof", "export", trace, "--format", "csv",
                        "--table", "transfers"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    import csv
    import io
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == 6
    assert sum(int(x["bytes"]) for x in rows) == 114688 + 10240


def test_notebook_reprs_and_pandas(traced):
    pd = pytest.importorskip("pandas")
    prof, _ = traced
    h = prof._repr_html_()
    assert "Fake H100" in h and "loop_fusion_0" in h and "<script" not in h
    k = prof.kernels.to_pandas()
    assert isinstance(k, pd.DataFrame) and len(k) == 16
    assert set(k["name"]) == {f"loop_fusion_{i}" for i in range(4)}
    t = prof.transfers.to_pandas()
    assert int(t["bytes"].sum()) == 114688 + 10240
    assert "<b>Kernel records</b>: 16 rows" in prof.kernels._repr_html_()
    ops = prof.ops.to_pandas()
    assert sorted(ops["hlo_op"]) == [f"fusion.{i}" for i in range(4)]
    assert "fusion.0" in prof.ops._repr_html_()
    cands = prof.fpga_candidates("alveo-u55c")
    assert len(cands.to_pandas()) == 4
    assert "fusion.0" in cands._repr_html_()


@pytest.fixture(scope="module")
def traced_with_hlo(tmp_path_factory):
    """The attribution test's scenario (a real optimized HLO module jit_f whose fusion.0-3 the
    fake's Thunk ranges name), saved and loaded."""
    att = pytest.importorskip("test_attribution")
    fake.need_fake()
    d = tmp_path_factory.mktemp("fakehlo")
    dump = d / "hlo"
    dump.mkdir()
    code = (f"MODULE = {att._FAKE_MODULE!r}\n" + att._FAKE_CODE.replace(
        "with fpgaprof.trace() as prof:", "with fpgaprof.trace(os.environ['TRACE_OUT']) as prof:"))
    fake.run_traced(code, kernels=40, extra_env={"FPGAPROF_HLO_DUMP_DIR": str(dump),
                                                 "XLA_FLAGS": "",
                                                 "TRACE_OUT": str(d / "t.fpgaprof")})
    prof = fpgaprof.load(str(d / "t.fpgaprof"))
    return prof, report.write_all(prof, d / "out", trace_path=str(d / "t.fpgaprof"))


def test_roofline_and_candidates_from_real_analysis(traced_with_hlo):
    prof, paths = traced_with_hlo
    with open(paths["summary"], encoding="utf-8") as f:
        s = json.load(f)
    import os
    schema_path = os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                               "summary.schema.json")
    with open(schema_path, encoding="utf-8") as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(s)  # real candidates, points
    ops = {r["op"]: r for r in s["ops"]["items"]}
    # static cost of one execution (the HLO's cost model) and 10 executions each
    assert ops["fusion.0"]["flops"] == 1024 and ops["fusion.0"]["bytes"] == 8192
    assert ops["fusion.0"]["count"] == 10 and ops["fusion.0"]["source"] == "/src/model.py:10"
    roof = s["roofline"]
    assert roof["available"] and roof["points_from"] == "analysis"
    pts = {p["op"]: p for p in roof["points"]}
    # intensity = 1024 FLOP / 8192 B per execution
    assert pts["fusion.0"]["intensity"] == pytest.approx(0.125)
    # achieved FLOP/s = 10 x 1024 FLOP / the op's measured time
    t = ops["fusion.0"]["total_s"]
    assert pts["fusion.0"]["achieved_flops_per_s"] == pytest.approx(10 * 1024 / t, rel=1e-6)
    assert pts["fusion.0"]["bound"] in ("memory", "latency")
    # Fake H100: 132 SMs x 1.98 GHz x 256 FP32 FLOP/cycle/SM (128 FMA lanes) = 66.908 TFLOP/s;
    # its device record has no memory clock, so no DRAM roof
    assert roof["ceilings"]["peak_flops_per_s"]["fp32"] == pytest.approx(132 * 1.98e9 * 256)
    assert roof["ceilings"]["dram_bytes_per_s"] == 0
    cands = s["candidates"]
    assert cands["available"] and {c["op"] for c in cands["items"]} == \
        {f"fusion.{k}" for k in range(4)}
    with open(paths["html"], encoding="utf-8") as f:
        doc = f.read()
    # fusion.2 has no FLOPs (exp is counted as transcendentals): 3 points on the log-log chart
    assert doc.count('class="pt"') == 3
    assert "/src/model.py:10" in doc
    # the ops run in fp32: only that roof is drawn, flat, and the missing DRAM roof is said
    assert "fp32 66.9 TFLOP/s" in doc and "fp16_tensor" not in doc
    assert "DRAM roof not drawn" in doc
