"""`fpgaprof compare` on summary.json files built by hand: an op with a row per compiled
instance of its module (summary.json keeps them apart) is one row with the instances' times
and runs added (before, the last row replaced the others); non-finite numbers and negative
counts are refused as malformed; `--json` is strict JSON with the wall times the text shows."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fpgaprof.report.model import SCHEMA_VERSION


def _summary(ops, wall=1.0):
    return {
        "schema_version": SCHEMA_VERSION,
        "trace": {"wall_time_s": wall},
        "ops": {"available": True, "items": ops, "rows_left_out": 0},
        "regions": {"available": True, "items": [], "rows_left_out": 0},
        "kernels": {"available": True, "items": [], "rows_left_out": 0},
        "transfers": {"available": True, "directions": []},
    }


def _op(module, op, total_s, count, nbytes, bound="memory"):
    return {"module": module, "op": op, "total_s": total_s, "count": count,
            "mean_s": total_s / count, "bytes": nbytes, "bound": bound}


def _compare(tmp_path, a, b, *extra):
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b) if not isinstance(b, str) else b)
    return subprocess.run([sys.executable, "-m", "fpgaprof", "compare", str(pa), str(pb), *extra],
                          capture_output=True, text=True, timeout=300)


def test_rows_of_one_op_in_two_instances_of_its_module_are_one(tmp_path):
    # A: jit_gather:wrapped_gather twice (5.0 us, 1 run; 3.6 us, 1 run) -> 8.6 us, 2 runs,
    # mean 4.3 us, bytes 100 on both. B: one row, 4.3 us in 1 run.
    a = _summary([_op("jit_gather", "wrapped_gather", 5.0e-6, 1, 100),
                  _op("jit_gather", "wrapped_gather", 3.6e-6, 1, 100)])
    b = _summary([_op("jit_gather", "wrapped_gather", 4.3e-6, 1, 100)])
    r = _compare(tmp_path, a, b, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    row = [x for x in doc["rows"] if x["kind"] == "op"]
    assert len(row) == 1
    row = row[0]
    assert row["time_before_s"] == pytest.approx(8.6e-6)
    assert row["count_before"] == 2
    assert row["mean_before_s"] == pytest.approx(4.3e-6)
    assert row["bytes_before"] == 100 and row["bytes_after"] == 100
    assert doc["a_wall_time_s"] == 1.0 and doc["b_wall_time_s"] == 1.0
    # instances of different sizes: bytes unknown rather than one instance's
    a2 = _summary([_op("jit_b", "copy.1", 1e-6, 1, 12_950_000), _op("jit_b", "copy.1", 1e-6, 1, 1_020)])
    r = _compare(tmp_path, a2, b, "--json")
    row = [x for x in json.loads(r.stdout)["rows"] if x["name"] == "copy.1"][0]
    assert row["bytes_before"] is None and row["count_before"] == 2


@pytest.mark.parametrize("bad,why", [
    ('{"schema_version": 2, "trace": {}, "ops": {"items": [{"module": "m", "op": "o", "total_s": NaN, "count": 1}]}}',
     "not a finite number"),
    ('{"schema_version": 2, "trace": {}, "ops": {"items": [{"module": "m", "op": "o", "total_s": Infinity, "count": 1}]}}',
     "not a finite number"),
    ('{"schema_version": 2, "trace": {}, "ops": {"items": [{"module": "m", "op": "o", "total_s": 1e-6, "count": -3}]}}',
     "not a whole number from 0 to"),
    ('{"schema_version": 2, "trace": {}, "ops": {"items": [], "rows_left_out": -1}}', "rows_left_out"),
    ('{"schema_version": 2, "trace": {}, "ops": {"items": []}, "roofline": {"points": [{"module": {"x": 1}, "op": "o"}]}}',
     None),
])
def test_malformed_numbers_are_refused_in_one_line(tmp_path, bad, why):
    r = _compare(tmp_path, _summary([]), bad)
    if why is None:  # a module that is an object: compared as text, no internal error
        assert r.returncode == 0, r.stderr
        return
    assert r.returncode == 1, r.stdout
    assert "malformed summary.json" in r.stderr and why in r.stderr, r.stderr
    assert "internal error" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
