"""The reports show what the analysis computes: per-op copies, transfer flags, link use,
device memory per region, the roofline of the trace and of each region, and one meaning for
"warnings" and "GPU busy" in summary.json, report.html, prof.summary() and the run digest.

Expected values are worked out by hand in tests/python/_constructed_trace.py (the trace's
docstring); a few are recomputed here where the arithmetic is short."""
from __future__ import annotations

import json
import os
import re

import pytest

import _constructed_trace as C
from fpgaprof import report
from fpgaprof.report import model, summary_json
from fpgaprof.report.digest import digest

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "summary.schema.json")

GIB, MIB = 1 << 30, 1 << 20
HTOD_BYTES = (64 << 20) + 1_000_000 + 1200 * 4096   # 73,024,064
HTOD_PCT = 100 * (HTOD_BYTES / 2.1e-3) / C.LINK_BYTES_PER_S  # 55.18 %
DTOH_PCT = 100 * (8e6 / 0.4e-3) / C.LINK_BYTES_PER_S          # 31.74 %


@pytest.fixture(scope="module")
def prof():
    return C.profile()


@pytest.fixture(scope="module")
def s(prof):
    # through JSON, as the file is read
    return json.loads(summary_json.dumps(model.collect(prof, environment={})))


def test_hand_figures():
    assert HTOD_BYTES == 73_024_064
    assert HTOD_PCT == pytest.approx(55.18, abs=0.005)
    assert DTOH_PCT == pytest.approx(31.74, abs=0.005)


def test_summary_validates(s):
    jsonschema = pytest.importorskip("jsonschema")
    with open(SCHEMA, encoding="utf-8") as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(s)


def test_busy_is_the_union(s):
    t = s["totals"]
    assert t["gpu_busy_s"] == pytest.approx(4.3e-3, abs=1e-12)     # union, not 2 + 2.9 ms
    assert t["gpu_idle_s"] == pytest.approx(5.7e-3, abs=1e-12)
    assert t["kernel_time_s"] == pytest.approx(2e-3, abs=1e-12)    # summed, labelled so
    assert t["transfer_busy_s"] == pytest.approx(2.9e-3, abs=1e-12)


def test_transfers_per_direction_link_and_waits(s):
    t = s["transfers"]
    assert (t["count"], t["bytes"]) == (1206, 192_024_064)
    assert t["host_wait_s"] == pytest.approx(0.9e-3, abs=1e-12) and t["sync_calls"] == 2
    assert t["link_bytes_per_s"] == pytest.approx(C.LINK_BYTES_PER_S, rel=1e-12)
    d = {r["direction"]: r for r in t["by_direction"]}
    assert (d["HtoD"]["count"], d["HtoD"]["bytes"]) == (1202, HTOD_BYTES)
    assert d["HtoD"]["busy_s"] == pytest.approx(2.1e-3, abs=1e-12)
    assert d["HtoD"]["gbps"] == pytest.approx(34.773, abs=5e-4)
    assert d["HtoD"]["link_percent"] == pytest.approx(HTOD_PCT, rel=1e-9)
    assert d["DtoH"]["link_percent"] == pytest.approx(DTOH_PCT, rel=1e-9)
    assert d["DtoD"]["link_percent"] is None  # does not cross the host link


def test_transfers_per_op(s):
    rows = s["transfers"]["by_op"]
    assert s["transfers"]["by_op_left_out"] == 0
    # most busy time first: copy-start.1 0.5 ms, copy-start.2 0.4 ms
    assert [(r["op"], r["module"]) for r in rows] == [("copy-start.1", "jit_step"),
                                                      ("copy-start.2", "jit_step")]
    a, b = rows
    assert (a["count"], a["bytes"], a["pageable_count"], a["sync_count"]) == (1, 1_000_000, 1, 1)
    assert a["busy_s"] == pytest.approx(0.5e-3, abs=1e-12) and a["gbps"] == pytest.approx(2.0)
    assert [d["direction"] for d in a["directions"]] == ["HtoD"]
    assert a["directions"][0]["link_percent"] == pytest.approx(100 * 2e9 / C.LINK_BYTES_PER_S)
    assert (b["count"], b["bytes"], b["pinned_count"]) == (1, 8_000_000, 1)
    assert b["directions"][0]["link_percent"] == pytest.approx(DTOH_PCT, rel=1e-9)


def test_flags_are_warnings(s):
    flags = s["transfers"]["flags"]
    got = sorted((f["kind"], f["scope"], f["region"] or "", f["count"]) for f in flags)
    # The pageable HtoD (1 MB, in "step > load"); the HtoH copy from pageable memory moves
    # between host buffers (no link, no staging): no flag. "step" then holds the same one
    # pageable copy as its child "step > load": flagged once, at the child.
    assert got == [("pageable", "region", "step > load", 1), ("pageable", "trace", "", 1),
                   ("tiny_transfers", "region", "step", 1200), ("tiny_transfers", "trace", "", 1200)]
    pageable_trace = next(f for f in flags if f["kind"] == "pageable" and f["scope"] == "trace")
    assert pageable_trace["bytes"] == 1_000_000
    # one definition: every flag is a warning, and this trace has no other warning
    assert [w["message"] for w in s["warnings"]] == [f["message"] for f in flags]
    assert {(w["code"], w["severity"], w["source"]) for w in s["warnings"]} == {
        ("report.transfer_flag", "warning", "transfers")
    }


def test_memory_peak_per_region(s):
    m = s["memory"]
    assert m["peak_bytes"] == GIB + 512 * MIB == 1_610_612_736
    assert m["peak_time_s"] == pytest.approx(5e-3, abs=1e-12)
    assert m["by_region_left_out"] == 0
    rows = {r["region"]: r for r in m["by_region"]}
    assert [r["region"] for r in m["by_region"]] == ["step", "step > load"]  # highest first
    assert rows["step"]["peak_bytes"] == 1_610_612_736
    assert rows["step > load"]["peak_bytes"] == GIB + 256 * MIB == 1_342_177_280
    # inside step (load included): A, B, C allocated; B and A freed
    assert rows["step"]["allocated_bytes"] == GIB + 256 * MIB + 512 * MIB
    assert (rows["step"]["allocations"], rows["step"]["frees"]) == (3, 2)
    assert rows["step > load"]["freed_bytes"] == 256 * MIB
    assert (rows["step > load"]["allocations"], rows["step > load"]["frees"]) == (2, 1)


def test_roofline_of_trace_and_regions(s, prof):
    r = s["roofline"]
    assert r["trace"]["kernel_count"] == 2
    assert r["trace"]["time_s"] == pytest.approx(2e-3, abs=1e-12)
    assert r["trace"]["cost_coverage"] == 0.0  # no HLO module: no static cost
    br = r["by_region"]
    assert br["available"] and br["items_left_out"] == 0
    got = [(x["region"], x["kernel_count"], x["time_s"]) for x in br["items"]]
    assert got == [("step", 2, pytest.approx(2e-3)), ("step > load", 1, pytest.approx(1e-3))]
    # the same rows as prof.roofline(by="region")
    api = {x["region"]: x for x in prof.roofline(by="region")}
    for x in br["items"]:
        assert x["flops"] == api[x["region"]]["flops"] and x["bound"] == api[x["region"]]["bound"]


def test_printed_summary_says_what_summary_json_says(prof, s):
    text = prof.summary()
    lines = text.splitlines()
    assert "GPU busy: 4.30 ms (43.0 % of wall), idle 5.70 ms (busy = union" in text
    assert "Kernels: 2 launches, 2 distinct, 2.00 ms summed kernel time" in text
    row = {ln.split()[0]: ln.split()[1:] for ln in lines if ln.startswith("  ") and ln.split()}
    # direction count bytes busy GB/s %link pageable
    assert row["HtoD"] == ["1202", "73.02", "MB", "2.10", "ms", "34.77", "55.2", "1"]
    assert row["DtoH"] == ["1", "8.00", "MB", "400.0", "µs", "20.00", "31.7", "0"]
    assert row["DtoD"][-2:] == ["n/a", "0"]
    assert ("Transfers: 1206 copies, 192.02 MB, busy 2.90 ms (600.0 µs of it overlapping "
            "kernels); the host waited 900.0 µs in 2 synchronization calls") in text
    assert "  host link peak 63.02 GB/s (table" in text
    assert "  Flags: 4 (pageable 2, tiny_transfers 2); each is listed" in text
    assert ("Device memory: peak 1.61 GB at 5.00 ms (all devices), 536.87 MB still allocated "
            "at the end; 3 allocations, 2 frees") in text
    # region path, count, wall, GPU (summed: kernels + copies + memsets), memory peak
    head = next(ln for ln in lines if ln.split()[:2] == ["region", "count"])
    assert head.split()[2:] == ["wall", "GPU", "time", "(kernels", "+", "copies", "+", "memsets)",
                                "mem", "peak"]
    regions = lines[lines.index(head):]  # the answer above names "step" too
    step = next(ln for ln in regions if ln.startswith("  step ") and "load" not in ln)
    load = next(ln for ln in regions if ln.startswith("  step > load"))
    assert step.split() == ["step", "1", "10.00", "ms", "4.90", "ms", "1.61", "GB"]
    assert load.split()[3:] == ["1", "3.00", "ms", "2.50", "ms", "1.34", "GB"]
    # the warnings are summary.json's (4 transfer flags), not "0 (none)"
    assert f"Warnings: {len(s['warnings'])} (4 of them transfer flags)" in text
    for w in s["warnings"]:
        assert f"  - {w['message']}" in lines


def test_printed_ops_table_explains_copy_only_ops(prof):
    """copy-start.1 launched a 1 MB copy (500 us) and no kernel: its row shows the copy time,
    0 % of kernel time and 0 runs, labelled "copies only", under a legend saying what the time,
    % and runs count."""
    lines = prof.summary().splitlines()
    row = next(ln for ln in lines if "copy-start.1 (jit_step)" in ln)
    assert row.split()[:4] == ["500", "µs", "0.0%", "0"] and "copies only" in row
    assert any(ln.strip().startswith("(time = the op's kernels + the copies it launched") for ln in lines)


def test_digest_has_link_memory_and_warnings(s):
    # after the answer block (its lines end with "rests on"), the trace line, then the facts
    lines = digest(s).splitlines()
    facts = next(ln for ln in lines if ln.startswith("  host link use: "))
    assert lines[lines.index(facts) - 1].startswith("fpgaprof: ")
    assert facts.startswith("  host link use: HtoD 55.2 %, DtoH 31.7 % of 63 GB/s (table")
    assert "; device memory peak 1.61 GB at 5.00 ms; " in facts
    assert facts.endswith("; 4 warnings (4 transfer flags) in report.html")


def test_html_shows_the_new_tables(s):
    page = report.render_html(s)
    assert "<h3>By HLO op</h3>" in page and 'data-v="copy-start.1"' in page
    assert "3.2 % of link" in page            # copy-start.1's HtoD
    assert "<h3>Flags</h3>" in page and 'data-v="tiny_transfers"' in page
    i = page.index("<h3>By region</h3><p class=\"dim\">peak:")
    mem = page[i:page.index("</table>", i)]
    assert mem.count("<tr>") == 3 and "1.61 GB" in mem and "1.34 GB" in mem
    assert "(whole trace)" in page and "<h3>Whole trace and regions</h3>" in page
    # what each GPU time holds: a region's its kernels, copies and memsets; the answer's (one
    # row per region) its kernels only (docs/reports.md, "Sums and unions")
    assert "GPU time (kernels + copies + memsets; summed, nested incl.)</th>" in page
    assert "GPU time (kernels)</th>" in page
    assert ">device memory peak<" in page and ">warnings<" in page
    assert "4 of them transfer flags" in page


def _many_paths_profile(n: int):
    """n region paths one after the other on thread 1, each 100 us: a kernel and a copy
    launched inside its own XLA thunk (op copy.<i>), and one allocation freed in it."""
    import fpgaprof
    from fpgaprof.base.core import core
    st = core.TraceStore()
    st.set_meta(start_ns=0, end_ns=n * 100_000 + 1000, gpu_available=True,
                command_buffers_disabled=True)
    cid = 0
    for i in range(n):
        t = i * 100_000
        st.append("regions", name=f"r{i:03d}", start_ns=t, end_ns=t + 90_000, thread_id=1)
        st.append("markers", name="XlaModule:#hlo_module=jit_m,program_id=1#", domain="TSL",
                  start_ns=t + 1000, end_ns=t + 80_000, thread_id=1)
        st.append("markers", name=f"Thunk:#hlo_op=copy.{i}#", domain="TSL",
                  start_ns=t + 2000, end_ns=t + 3000, thread_id=1)
        for table, extra in (("memcpys", {"copy_kind": "HtoD", "bytes": 1000 + i,
                                          "src_kind": "pinned", "dst_kind": "device",
                                          "is_async": True}),
                             ("kernels", {"name": f"k{i}"})):
            cid += 1
            st.append("api_calls", correlation_id=cid, thread_id=1, start_ns=t + 2500,
                      end_ns=t + 2600, name="cuLaunchKernel")
            st.append(table, correlation_id=cid, start_ns=t + 10_000, end_ns=t + 11_000 + i,
                      **extra)
        for ts, alloc in ((t + 20_000, True), (t + 30_000, False)):
            cid += 1
            st.append("api_calls", correlation_id=cid, thread_id=1, start_ns=ts, end_ns=ts + 1,
                      name="cuMemAlloc")
            st.append("allocations", correlation_id=cid, timestamp_ns=ts, address=0x1000 + i,
                      bytes=(i + 1) * 4096, is_alloc=alloc)
    st.correlate()
    return fpgaprof.Profile(st)


def test_long_lists_are_cut_and_counted():
    n = 60  # more than the 50 rows of a list section
    s = model.collect(_many_paths_profile(n), environment={})
    m, t, br = s["memory"], s["transfers"], s["roofline"]["by_region"]
    assert len(m["by_region"]) == 50 and m["by_region_left_out"] == n - 50
    # highest peak first: region i allocated (i + 1) x 4096 B, nothing else was in use
    assert [r["peak_bytes"] for r in m["by_region"]] == [(n - k) * 4096 for k in range(50)]
    assert len(t["by_op"]) == 50 and t["by_op_left_out"] == n - 50
    # busy 1000 + i ns: the longest first
    assert [r["op"] for r in t["by_op"][:2]] == [f"copy.{n - 1}", f"copy.{n - 2}"]
    assert br["count"] == n and len(br["items"]) == n and br["items_left_out"] == 0
    page = report.render_html(s)
    assert f"{n - 50} more ops with copies not shown" in page
    assert f"{n - 50} more regions not shown (prof.memory_report() has all)" in page
    # roofline: the trace's row and 49 of the 60 paths (no HTML table has more than 50 rows)
    assert f"{n - 49} more region paths not shown" in page
    for table in re.findall(r"<table.*?</table>", page, re.S):
        assert table.count("<tr>") <= 50 + 1  # + the header


def test_page_with_the_new_tables_renders_in_chromium(s, tmp_path):
    """The page's script runs without error over the new tables (status marker "ok")."""
    from test_reports_html import _chromium, _run_chromium
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium not installed (apt-get install chromium)")
    path = tmp_path / "report.html"
    report.write_html(str(path), s, "constructed")
    r = _run_chromium(exe, ["--dump-dom", path.as_uri()])
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'<div id="fpgaprof-status" data-status="(\w+)">([^<]*)</div>', r.stdout)
    assert m and m.group(1) == "ok", m and m.group(2)
    shot = tmp_path / "constructed.png"
    r = _run_chromium(exe, [f"--screenshot={shot}", "--window-size=1200,5200", path.as_uri()])
    assert r.returncode == 0 and shot.stat().st_size > 10_000
    dest = os.environ.get("FPGAPROF_ARTIFACTS_DIR")
    if dest:
        import shutil
        os.makedirs(dest, exist_ok=True)
        shutil.copy(shot, dest)


def test_notebook_overview_has_memory_peak_and_warnings(prof):
    from fpgaprof.api.overview import trace_overview
    from fpgaprof.views.profile import profile_html
    page = profile_html(trace_overview(prof).data)
    assert "<tr><th>device memory peak</th><td style='text-align:left'>1.61 GB</td></tr>" in page
    assert "<tr><th>warnings</th><td style='text-align:left'>4</td></tr>" in page
    assert "2.00 ms summed" in page  # kernel time is a sum, said so


def test_transfer_report_text_keeps_a_name_with_a_line_break_on_one_line():
    """prof.transfer_report()'s text listed each flag's message as the analysis wrote it: a
    region named "lo\\nad" broke the flag's line in two (only the whole text went through
    terminal_safe(keep="\\n")), and summary()'s Warnings list, which repeats every transfer
    flag, did the same, while their tables show names escaped. Both now escape every control
    character of the flag's line, a line break too, as the tables do."""
    import fpgaprof

    prof = fpgaprof.Profile(C.store(step="st\x1b[31mep", load="lo\nad"))
    for text in (str(prof.transfer_report()), str(prof.summary())):
        flagged = [ln for ln in text.splitlines() if "in region 'st" in ln]
        assert flagged, text
        assert any("'st\\x1b[31mep > lo\\x0aad' (1 instance) uses pageable" in ln
                   for ln in flagged), flagged
        assert "lo\nad" not in text and "\x1b" not in text
        # no line is the tail of a name cut by a raw line break
        assert not [ln for ln in text.splitlines() if ln.startswith("ad'")], text
