"""Reports of traces with many fpgaprof.region() instances stay bounded (docs/reports.md,
"Sizes"): summary.json and report.html carry aggregates per region path and per (operation,
size), lists cut to a fixed number of rows with the rest counted — never one row per instance.

The profile: N instances of a loop body (one path, or nested paths, or many distinct names),
each instance i lasting (10 + i % 7) µs and holding one kernel (2 µs), one DtoH copy of 8 bytes
and a 1 MB buffer allocated and freed. Expected counts below are worked out from that rule.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import _reports_fixtures as F
from fpgaprof.report import html, model, summary_json
from fpgaprof.analysis import sections
from fpgaprof.base import constants

US = 1_000
STEP_NS = 40 * US  # instance i starts at T0 + i * STEP_NS


def body_ns(i: int) -> int:
    return (10 + i % 7) * US


def loop_profile(n: int, names: list[str], nested: bool = False) -> F.SyntheticProfile:
    """n instances; instance i is named names[i % len(names)]. nested: each instance is the
    chain names[0] > names[1] > ... (one record per level, inner ones 1 µs shorter per level),
    and the kernel, copy and buffer belong to the innermost."""
    levels = len(names) if nested else 1
    starts = F.T0 + np.arange(n, dtype=np.int64) * STEP_NS
    ends = starts + np.array([body_ns(i) for i in range(n)], dtype=np.int64)
    r_name, r_start, r_end, r_parent, r_depth = [], [], [], [], []
    inner = np.zeros(n, dtype=np.int64)  # region index holding instance i's GPU work
    for i in range(n):
        for d in range(levels):
            r_name.append(names[d] if nested else names[i % len(names)])
            r_start.append(starts[i] + d * US // 4)
            r_end.append(ends[i] - d * US)
            r_parent.append(len(r_name) - 2 if d else F.NONE32)
            r_depth.append(d)
        inner[i] = len(r_name) - 1
    u32 = np.uint32
    k_start = starts + US
    prof = F.SyntheticProfile()
    prof.regions = F.Table(
        name=np.array(r_name, dtype=object), start_ns=np.array(r_start, np.uint64),
        end_ns=np.array(r_end, np.uint64), thread_id=np.full(len(r_name), 101, u32),
        parent=np.array(r_parent, u32), depth=np.array(r_depth, np.uint16))
    prof.kernels = F.Table(
        name=np.full(n, "loop_fusion", dtype=object), start_ns=k_start.astype(np.uint64),
        end_ns=(k_start + 2 * US).astype(np.uint64),
        correlation_id=np.arange(1, n + 1, dtype=u32), thread_id=np.full(n, 101, u32),
        device_id=np.zeros(n, u32), stream_id=np.full(n, 7, u32),
        region_index=inner.astype(u32))
    c_start = k_start + 3 * US
    prof.transfers = F.Table(
        start_ns=c_start.astype(np.uint64), end_ns=(c_start + US).astype(np.uint64),
        bytes=np.full(n, 8, np.uint64), correlation_id=np.arange(n + 1, 2 * n + 1, dtype=u32),
        thread_id=np.full(n, 101, u32), device_id=np.zeros(n, u32),
        stream_id=np.full(n, 7, u32), copy_kind=np.full(n, 2, np.uint8),
        src_kind=np.full(n, 3, np.uint8), dst_kind=np.full(n, 2, np.uint8),
        is_async=np.ones(n, bool), region_index=inner.astype(u32))
    ts = np.empty(2 * n, dtype=np.int64)
    ts[0::2], ts[1::2] = starts + US // 2, starts + 8 * US
    prof.allocations = F.Table(
        timestamp_ns=ts.astype(np.uint64), address=np.full(2 * n, 0x7F0000000000, np.uint64),
        bytes=np.full(2 * n, 1 << 20, np.uint64), is_alloc=np.tile([True, False], n),
        device_id=np.zeros(2 * n, u32))
    prof.memsets = F.Table()
    prof.api_calls = F.Table()
    end = int(ends[-1]) + 10 * US
    prof.meta["end_ns"] = end
    prof.wall_time_ns = end - F.T0
    return prof


def list_lengths(obj, path="") -> dict[str, int]:
    """Length of every list in a JSON-like object, by its path (list items share a path)."""
    out: dict[str, int] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            for p, n in list_lengths(v, f"{path}.{k}").items():
                out[p] = max(out.get(p, 0), n)
    elif isinstance(obj, list):
        out[path] = len(obj)
        for v in obj:
            for p, n in list_lengths(v, f"{path}[]").items():
                out[p] = max(out.get(p, 0), n)
    return out


N = 1200  # > every cap below, so a list with one row per instance cannot hide under one


@pytest.fixture(scope="module")
def one_path():
    return model.collect(loop_profile(N, ["iteration"]))


def test_no_list_grows_with_instances(one_path):
    s = one_path
    assert s["regions"]["count"] == N and s["totals"]["region_count"] == N
    # the longest list may be the memory timeline: <= 200 buckets x (first, highest) + last
    longest = max(list_lengths(s).items(), key=lambda kv: kv[1])
    assert longest[1] <= 2 * (sections.MEMORY_POINTS // 2) + 1, longest
    assert s["memory"]["timeline_points"] == 2 * N  # 2 events per instance, all counted


def test_measurements_first_runs_and_the_rest_counted(one_path):
    s = one_path
    runs = model.MEASUREMENT_RUNS
    assert [(m["operation"], m["volume_size"], m["run"]) for m in s["measurements"]] == \
        [("iteration", None, r) for r in range(runs)]
    assert [m["time"] for m in s["measurements"]] == \
        pytest.approx([body_ns(i) / 1e9 for i in range(runs)])
    assert s["measurements_left_out"] == N - runs
    st = s["measurement_stats"]
    assert (st["runs"], st["count"], st["items_left_out"]) == (N, 1, 0)
    row = st["items"][0]
    # durations (10 + i % 7) µs: 1200 = 171 x 7 + 3, so sum = 171 x (10+...+16) + 10+11+12
    assert row["runs"] == N
    assert row["total"] == pytest.approx((171 * 91 + 33) * 1e-6)
    assert (row["min"], row["max"], row["first"]) == pytest.approx((10e-6, 16e-6, 10e-6))
    # the median of 1200 values: 172 of 10 µs, 172 of 11, 172 of 12, 171 each of 13..16,
    # so the 600th and 601st values are both 13 µs
    assert row["median"] == pytest.approx(13e-6)
    assert row["mean"] == pytest.approx(row["total"] / N)


def test_one_row_per_path_in_regions_and_transfers(one_path):
    s = one_path
    assert [(r["path"], r["count"]) for r in s["regions"]["items"]] == [("iteration", N)]
    assert s["regions"]["items"][0]["gpu_s"] == pytest.approx(N * 3e-6)  # kernel 2 + copy 1
    by_region = s["transfers"]["by_region"]
    assert [(r["region"], r["instances"], r["count"], r["bytes"]) for r in by_region] == \
        [("iteration", N, N, 8 * N)]


def test_nested_paths_aggregate():
    n = 400
    s = model.collect(loop_profile(n, ["iteration", "forward", "project"], nested=True))
    paths = {r["path"]: r["count"] for r in s["regions"]["items"]}
    assert paths == {"iteration": n, "iteration > forward": n,
                     "iteration > forward > project": n}
    runs = model.MEASUREMENT_RUNS
    assert len(s["measurements"]) == 3 * runs
    assert s["measurements_left_out"] == 3 * (n - runs)
    assert {r["operation"]: r["runs"] for r in s["measurement_stats"]["items"]} == \
        {"iteration": n, "forward": n, "project": n}
    # a copy in the innermost region counts for its ancestors too (inclusive)
    assert {r["region"]: r["count"] for r in s["transfers"]["by_region"]} == \
        {p: n for p in paths}


def test_many_distinct_names_cut_with_counts():
    k = constants.TOP_ROWS + 12  # distinct names, 3 instances each
    s = model.collect(loop_profile(3 * k, [f"op{j}/64" for j in range(k)]))
    st = s["measurement_stats"]
    assert (st["runs"], st["count"], st["items_left_out"]) == (3 * k, k, 0)
    assert all(r["runs"] == 3 and r["volume_size"] == 64 for r in st["items"])
    assert len(s["measurements"]) == 3 * k and s["measurements_left_out"] == 0
    assert len(s["transfers"]["by_region"]) == constants.TOP_ROWS
    assert s["transfers"]["by_region_left_out"] == k - constants.TOP_ROWS
    page = html.render(s)
    sec = re.search(r'<section id="sec-measurements">(.*?)</section>', page, re.S).group(1)
    assert sec.count("<tr>") == constants.TOP_ROWS + 1  # header + the first TOP_ROWS pairs
    assert f"{k - constants.TOP_ROWS} more (operation, volume size) pairs not shown" in sec
    assert f"{3 * k} runs in {k} (operation, volume size) pairs" in sec  # 62 pairs, 3 runs each


def test_cap_limits_all_rows_and_counts_the_rest():
    ms = [{"operation": f"op{i % 30}", "volume_size": 8, "run": i // 30, "time": 1.0}
          for i in range(3000)]  # 30 pairs x 100 runs
    kept, left = model.cap_measurements(ms, runs=5, limit=100)
    assert len(kept) == 100 and left == 2900
    assert {m["run"] for m in kept} == {0, 1, 2, 3}  # 30 x 3 = 90, then 10 of run 3
    st = model.measurement_stats(ms, limit=7)
    assert (st["runs"], st["count"], len(st["items"]), st["items_left_out"]) == (3000, 30, 7, 23)


def test_html_tables_bounded(one_path):
    page = html.render(one_path)
    for table in re.findall(r"<table.*?</table>", page, re.S):
        assert table.count("<tr>") <= constants.TOP_ROWS + 1
    sec = re.search(r'<section id="sec-measurements">(.*?)</section>', page, re.S).group(1)
    assert sec.count("<tr>") == 2  # header + one (operation, volume size) pair
    assert f"the other {N - model.MEASUREMENT_RUNS} only in these figures" in sec


def test_summary_json_size_does_not_grow_with_instances():
    # the same loop 4x longer: the file differs only by numbers (same structure, same rows)
    small = summary_json.dumps(model.collect(loop_profile(N // 4, ["iteration"])))
    large = summary_json.dumps(model.collect(loop_profile(N, ["iteration"])))
    assert list_lengths(json.loads(small)).keys() == list_lengths(json.loads(large)).keys()
    assert len(large) < 1.2 * len(small)


def test_write_all_releases_only_the_analysis_cache_it_made(tmp_path):
    import fpgaprof
    from fpgaprof import report, roofline
    prof = fpgaprof.Profile(loop_profile(50, ["iteration"]).store)  # a Profile: it has the cache
    report.write_all(prof, tmp_path / "a")
    assert len(prof.analyses) == 0  # made for the report: released
    mine = roofline.analyze(prof)  # the user's own call: kept across write_all
    report.write_all(prof, tmp_path / "b")
    assert len(prof.analyses) == 1 and roofline.analyze(prof) is mine
    with open(tmp_path / "b" / "summary.json", encoding="utf-8") as f:
        s = json.load(f)
    assert s["measurements_left_out"] == 50 - model.MEASUREMENT_RUNS


def test_html_of_a_summary_without_stats_sums_the_listed_runs():
    # a summary.json written before measurement_stats existed: the page sums what it lists
    s = model.collect(loop_profile(30, ["op/8"]))
    for k in ("measurement_stats", "measurements_left_out"):
        del s[k]
    sec = re.search(r'<section id="sec-measurements">(.*?)</section>', html.render(s),
                    re.S).group(1)
    assert "20 runs in 1 (operation, volume size) pair<" in sec  # the 20 listed runs
    assert sec.count("<tr>") == 2 and 'data-v="20"' in sec
