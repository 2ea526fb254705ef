"""timeline.json's size cap and --no-timeline (trial 6, item 11: 1 M kernels + 375 k transfers
gave an 878 MB timeline.json, written by every `fpgaprof run`). With more records than the cap
only the first ones by start time are written, every category cut at the same time, the count
left out is said (otherData, a marker event, summary.json's warnings), and the file stays
valid trace-event JSON (flows in pairs)."""
import json
import os
import subprocess
import sys
import warnings
from collections import Counter

import _reports_fixtures as F
import fpgaprof
from fpgaprof import report
from fpgaprof.cli import parser as cli_parser
from fpgaprof.report import timeline as timeline_json

CATS = {"kernel": "kernels", "memcpy": "transfers", "memset": "memsets",
        "cuda_api": "api_calls", "nvtx": "markers", "region": "regions"}


# Kineto's event categories → the record categories of the counts
RECORD_CATEGORY = {"gpu_memcpy": "memcpy", "gpu_memset": "memset", "cuda_runtime": "cuda_api",
                   "cuda_driver": "cuda_api"}


def _records(prof):
    """(start_ns, category) of every record, independently of the writer."""
    return [(int(r.start_ns), cat) for cat, table in CATS.items() for r in getattr(prof, table)]


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_the_cap_keeps_the_first_records_by_start_time(tmp_path):
    prof = F.SyntheticProfile()
    recs = _records(prof)
    keep = len(recs) - 5
    # Independently: the 5 latest starts are left out (no tie at the cut in this fixture).
    ordered = sorted(recs)
    assert ordered[keep - 1][0] < ordered[keep][0], "the fixture has a tie at the cut"
    expected_out = Counter(cat for _, cat in ordered[keep:])

    counts = report.write_timeline(prof, tmp_path / "t.json", max_events=keep)
    doc = _load(tmp_path / "t.json")
    assert counts["omitted"] == 5
    assert {c: counts[f"omitted_{c}"] for c in CATS if counts[f"omitted_{c}"]} == dict(expected_out)
    other = doc["otherData"]
    assert other["omitted_records"] == 5 and other["cut_ns"] == ordered[keep - 1][0]
    assert {c: n for c, n in other["omitted_by_category"].items() if n} == dict(expected_out)

    shown = Counter(RECORD_CATEGORY.get(e["cat"], e["cat"]) for e in doc["traceEvents"]
                    if e["ph"] in ("X", "i") and e["cat"] != "fpgaprof")
    total = Counter(cat for _, cat in recs)
    assert shown == total - expected_out
    # the marker at the cut, on every track (global instant event)
    mark = [e for e in doc["traceEvents"] if e.get("cat") == "fpgaprof"]
    assert len(mark) == 1 and mark[0]["ph"] == "i" and mark[0]["s"] == "g"
    assert "5 later ones are left out" in mark[0]["name"]
    t0 = other["t0_ns"]
    assert round(mark[0]["ts"] * 1000) == ordered[keep - 1][0] - t0
    # no slice starts after the cut
    assert max(e["ts"] for e in doc["traceEvents"] if e["ph"] == "X") <= mark[0]["ts"]
    # flows still come in pairs: a launch whose kernel was cut has no arrow
    outs = Counter(e["bind_id"] for e in doc["traceEvents"] if e.get("flow_out"))
    ins = Counter(e["bind_id"] for e in doc["traceEvents"] if e.get("flow_in"))
    assert outs == ins and counts["flow"] == len(ins)


def test_no_cut_below_the_cap(tmp_path):
    prof = F.SyntheticProfile()
    counts = report.write_timeline(prof, tmp_path / "t.json", max_events=len(_records(prof)))
    doc = _load(tmp_path / "t.json")
    assert "omitted" not in counts and "omitted_records" not in doc["otherData"]
    assert not [e for e in doc["traceEvents"] if e.get("cat") == "fpgaprof"]
    assert report.write_timeline(prof, tmp_path / "u.json", max_events=None).get("omitted") is None


def test_the_cli_default_is_the_writers(tmp_path):
    assert cli_parser.TIMELINE_EVENTS == timeline_json.MAX_EVENTS == report.TIMELINE_MAX_EVENTS


def _saved_trace(tmp_path, n_regions):
    path = tmp_path / "trace.fpgaprof"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fpgaprof.FpgaprofWarning)
        with fpgaprof.trace(str(path)):
            for i in range(n_regions):
                with fpgaprof.region(f"r{i}"):
                    pass
    return path


def fp(*args):
    env = dict(os.environ)
    env.pop("FPGAPROF_RUN_DIR", None)
    return subprocess.run([sys.executable, "-m", "fpgaprof", *args], capture_output=True,
                          text=True, timeout=300, env=env)


def test_report_with_a_cap_and_without_a_timeline(tmp_path):
    trace = _saved_trace(tmp_path, 6)
    out = tmp_path / "capped"
    r = fp("report", str(trace), "-o", str(out), "--timeline-events", "4")
    assert r.returncode == 0, r.stderr
    doc = _load(out / "timeline.json")
    assert doc["otherData"]["omitted_records"] == 2
    assert [e["name"] for e in doc["traceEvents"] if e.get("cat") == "region"] == ["r0", "r1", "r2", "r3"]
    with open(out / "summary.json", encoding="utf-8") as f:
        ws = json.load(f)["warnings"]
    (cut,) = [w for w in ws if w["message"].startswith("timeline.json shows the first 4 of 6 records")]
    assert cut["code"] == "report.timeline_cut"
    assert "timeline  " in r.stdout and "(first 4 records" in r.stdout

    r = fp("report", str(trace), "-o", str(out), "--no-timeline")
    assert r.returncode == 0, r.stderr
    assert not (out / "timeline.json").exists()  # the capped one above is removed, not left stale
    assert "timeline  " not in r.stdout
    with open(out / "summary.json", encoding="utf-8") as f:
        assert not any("timeline.json" in w["message"] for w in json.load(f)["warnings"])

    r = fp("report", str(trace), "-o", str(out), "--timeline-events", "0")
    assert r.returncode == 0, r.stderr
    assert "omitted_records" not in _load(out / "timeline.json")["otherData"]

    r = fp("report", str(trace), "--timeline-events", "-3")
    assert r.returncode == 2 and "negative" in r.stderr and "\n" not in r.stderr.strip()


def test_run_no_timeline(tmp_path):
    out = tmp_path / "out"
    r = fp("run", "-o", str(out), "--no-timeline", "--", sys.executable, "-c", "print('hi')")
    assert r.returncode == 0, r.stderr
    assert (out / "summary.json").is_file() and (out / "report.html").is_file()
    assert not (out / "timeline.json").exists()
    assert "· timeline" not in r.stderr


def test_write_all_without_timeline(tmp_path):
    (tmp_path / "timeline.json").write_text("stale")
    paths = report.write_all(F.SyntheticProfile(), tmp_path, timeline=False)
    assert paths["timeline"] == "" and not (tmp_path / "timeline.json").exists()
    assert (tmp_path / "summary.json").is_file()
