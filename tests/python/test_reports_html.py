"""report.html: self-contained, escaped, and rendering without script errors in headless
Chromium with the network blocked. The screenshot is kept as an artifact: copied into
$FPGAPROF_ARTIFACTS_DIR when set (the test prints its path)."""
import os
import re
import shutil
import subprocess

import _reports_fixtures as F
import pytest
from fpgaprof.report import html as H
from fpgaprof.report import model

URL_IN_MARKUP = re.compile(r"""(?:src|href|action|xlink:href)\s*=\s*["']?\s*(?:https?:)?//|"""
                           r"""url\(\s*["']?\s*(?:https?:)?//|@import""", re.I)


def page(**kw):
    return H.render(model.collect(F.SyntheticProfile(**kw)), "report <test>")


def test_no_external_resources():
    for kw in ({}, {"with_ops": True}, {"with_gpu": False}):
        doc = page(**kw)
        assert not URL_IN_MARKUP.search(doc)
        # only the schema id of the embedded data may look like a URL; there is none in the page
        assert "http://" not in doc and "https://" not in doc
        assert "default-src 'none'" in doc  # the CSP forbids any fetch from the page itself


def test_user_strings_are_escaped():
    doc = page(with_ops=True)
    # warning text, kernel name and device name carry markup; none survives unescaped
    assert "<script>alert(1)</script>" not in doc
    assert "user &lt;script&gt;alert(1)&lt;/script&gt; warning" in doc
    assert "gemm&lt;float&gt;" in doc and "gemm<float>" not in doc
    assert "H100 80GB HBM3 &lt;test&gt;" in doc
    assert "<title>report &lt;test&gt;</title>" in doc
    # the only script elements are ours: the JSON data block and the page script
    assert doc.count("<script") == 2


def test_sections_present_and_not_available_reasons():
    doc = page(with_gpu=False)
    for sec in ("overview", "warnings", "roofline", "ops", "kernels", "transfers", "memory",
                "regions", "candidates", "measurements"):
        assert f'id="sec-{sec}"' in doc
    assert "not available: no kernels in this trace" in doc
    # the answer, ops, roofline and both candidate tables: the one no-GPU reason, once each, and
    # none of the reasons that blame the attribution
    note = "not available: the trace has no GPU kernels: trace on a machine with an NVIDIA GPU"
    assert doc.count(note) == 5
    assert "attributed" not in doc.split('id="sec-warnings"')[1].split('id="sec-measurements"')[0]
    # no GPU data: no copy was recorded, which is not "no copies"
    assert "not available: no GPU data in this trace (the trace has no GPU kernels" in doc
    assert "no memory copies" not in doc
    assert "install the NVIDIA driver" in doc
    # nothing measured on a GPU: busy and idle are not 0 s and the whole wall time
    assert '<div class="label">GPU busy</div><div class="value">n/a (no GPU)</div>' in doc
    assert "idle" not in doc.split('id="sec-overview"')[1].split('id="sec-warnings"')[0]


def test_roofline_points_and_sortable_tables():
    doc = page(with_ops=True)
    assert doc.count('class="pt"') == 2
    assert "fusion.1 | unknown-bound | time 1.00 ms | 0.25 FLOP/B" in doc
    assert "model.py:12" in doc
    assert doc.count('<table class="sortable') >= 6


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def _run_chromium(exe, args, timeout=90):
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--disable-extensions", "--disable-background-networking",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
            "--virtual-time-budget=3000"]
    return subprocess.run(base + args, capture_output=True, text=True, timeout=timeout)


def _transfers_memory_profile():
    """Nested regions with a host wait and a known PCIe link, memory on two devices (the
    profiles of test_reports_summary, numbers worked out there)."""
    from test_reports_summary import _nested_profile_with_sync, _two_device_allocations
    prof = _nested_profile_with_sync()
    prof.allocations = _two_device_allocations()
    return prof


@pytest.mark.parametrize("variant", ["full", "no_gpu", "transfers_memory"])
def test_headless_chromium_renders(tmp_path, variant):
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium not installed (apt-get install chromium); the page was not "
                    "rendered in a browser")
    if variant == "transfers_memory":
        prof = _transfers_memory_profile()
    else:
        prof = F.SyntheticProfile(**({"with_ops": True} if variant == "full" else
                                     {"with_gpu": False}))
    path = tmp_path / "report.html"
    H.write_html(str(path), model.collect(prof), "fpgaprof report (test)")
    url = path.as_uri()
    r = _run_chromium(exe, ["--dump-dom", url])
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'<div id="fpgaprof-status" data-status="(\w+)">([^<]*)</div>', r.stdout)
    assert m, "status marker missing from the rendered DOM"
    assert m.group(1) == "ok", f"page script: {m.group(2)}"
    if variant == "full":
        assert "2 roofline points" in m.group(2)
    shot = tmp_path / f"report-{variant}.png"
    r = _run_chromium(exe, [f"--screenshot={shot}", "--window-size=1200,2600", url])
    assert r.returncode == 0 and shot.exists() and shot.stat().st_size > 10_000, r.stderr[-2000:]
    with open(shot, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    dest = os.environ.get("FPGAPROF_ARTIFACTS_DIR")
    if dest:
        os.makedirs(dest, exist_ok=True)
        shutil.copy(shot, dest)
        shutil.copy(path, os.path.join(dest, f"report-{variant}.html"))
    print(f"screenshot: {shot}")


def test_sorting_script_sorts(tmp_path):
    """Clicks the 'total' header of the kernels table in Chromium and reads the order back."""
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium not installed (apt-get install chromium)")
    s = model.collect(F.SyntheticProfile())
    doc = H.render(s)
    # after the page script: click "count" in the kernels table (sorts descending first),
    # then write the first kernel name into the status marker
    probe = ("<script>(function(){var t=document.querySelector('#sec-kernels table');"
             "var th=t.tHead.rows[0].cells[1];th.click();"
             "var first=t.tBodies[0].rows[0].cells[0].textContent;"
             "document.getElementById('fpgaprof-status').setAttribute('data-first',first);})();"
             "</script></body>")
    path = tmp_path / "sort.html"
    path.write_text(doc.replace("</body>", probe), encoding="utf-8")
    r = _run_chromium(exe, ["--dump-dom", path.as_uri()])
    m = re.search(r'data-first="([^"]*)"', r.stdout)
    assert m, r.stderr[-2000:]
    # fusion_a is the only kernel that ran twice
    assert m.group(1) == "fusion_a"


def test_extra_tables_escaped():
    s = model.collect(F.SyntheticProfile())
    doc = H.render(s, extra_tables=[("sweep <results>", [
        {"operation": "fbp<recon>", "volume_size": 64, "median_s": 0.0125},
        {"operation": "direct_filter", "volume_size": 32, "median_s": 0.5, "note": "x"}])])
    assert "<h2>sweep &lt;results&gt;</h2>" in doc
    assert "fbp&lt;recon&gt;" in doc and "fbp<recon>" not in doc
    assert "12.50 ms" in doc and "500.00 ms" in doc
    assert ">note</th>" in doc


def test_roofline_ceilings_drawn():
    doc = H.render(model.collect(F.SyntheticProfile(with_ops=True, with_ceilings=True)))
    # fp64 and fp32 share one roof (same rate); fp8 (0 = no such pipe) is not drawn
    assert "fp64/fp32 67 TFLOP/s" in doc
    chart = doc.split('id="roofline"')[1].split("</svg>")[0]
    assert "fp16_tensor 989 TFLOP/s" in doc and "fp8_tensor" not in chart
    assert "DRAM 3.35 TB/s" in doc
    assert "ceilings: sm_90 (H100 SXM) (table)" in doc
    assert doc.count('class="roof"') == 3  # DRAM slope + two compute roofs


def test_transfers_section_link_overlap_and_wait():
    # the fixture's GPU has no PCIe generation/width: link % is "n/a", never "0.0 %"
    doc = page()
    sec = doc.split('id="sec-transfers"')[1].split("</section>")[0]
    assert "host link peak unknown (link % n/a)" in sec
    assert sec.count(">n/a</td>") == 2 and "0.0 %" not in sec
    doc = H.render(model.collect(_transfers_memory_profile()))
    sec = doc.split('id="sec-transfers"')[1].split("</section>")[0]
    # HtoD 10 GB/s of 31.508 GB/s = 31.7 %; DtoH 5 GB/s = 15.9 %; DtoH overlaps fusion_b 0.1 ms
    assert ">31.7 %</td>" in sec and ">15.9 %</td>" in sec
    assert "500.0 µs, of which 100.0 µs overlap kernels" in sec
    assert "the host waited 100.0 µs in 1 synchronization calls" in sec
    # the link %'s peak names the link it is (gen4 x16 from the device record)
    assert "host link peak 31.5 GB/s (table: PCIe gen4 x16)" in sec
    assert "outer &gt; forward_project/64" in sec and "inclusive" in sec


def test_memory_section_per_device():
    doc = H.render(model.collect(_transfers_memory_profile()))
    sec = doc.split('id="sec-memory"')[1].split("</section>")[0]
    assert "peak 200 B at 2.00 ms (all devices together)" in sec
    assert "200 B still allocated at the end" in sec
    assert "1 frees of buffers allocated before the trace (50 B) left out" in sec
    # one row per device: dev0 peak 100 B, end 30 B; dev1 peak 170 B, end 170 B
    assert ">100 B</td>" in sec and ">30 B</td>" in sec and ">170 B</td>" in sec
    assert "-" not in "".join(re.findall(r'<path d="([^"]*)"', sec))  # no step below zero
