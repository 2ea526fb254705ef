"""Hostile input, round 2 (issue #32): what the reports and writers do with deep and long
region names, many warnings, long names in the timeline, NaN in `estimate --json`, forged
staging folders, file names that are not UTF-8, links and special files where outputs go,
failures half-way through a set, escape sequences bound for the terminal and two runs into one
folder. Each case runs in a process of its own (test_hostile's harness: driver.py, the peak RSS
from wait4, the bound of the same action on the valid 62 KB trace + 64 x the input + 64 MiB) and
states its expected result; the figures before the fixes are in the test docstrings."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import tracegen as g  # noqa: E402
from test_hostile import (  # noqa: E402
    BASE,
    BASE_TRACE,
    MIB,
    baseline,  # noqa: F401 - the fixture
    needs_namespaces,
    one_line,
    run,
    run_cmd,
    within_memory,
)

CONV = HERE.parent / "fuzz" / "corpus" / "hlo_parser_fuzzer" / "conv2d.hlo"


def report(trace: Path, out: Path, *extra: str, timeout: float = 120):
    return run("cli", "report", str(trace), "-o", str(out), *extra, timeout=timeout)


def summary_of(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


# --- 6: deep nesting and a long region name ---------------------------------------------------


def traced(tmp_path: Path, body: str, name: str = "t.fpgaprof") -> Path:
    """A trace recorded by fpgaprof.trace() in a process of its own, `body` inside the block
    (regions only where no GPU is traced)."""
    path = tmp_path / name
    code = f"import contextlib\nwith fpgaprof.trace(path={str(path)!r}):\n" + textwrap.indent(
        body, "    "
    )
    r = run("py", code, timeout=300)
    assert r.rc == 0, r.err[-2000:]
    return path


def test_6_regions_nested_10000_deep(tmp_path, baseline):
    """10,000 regions each inside the last. Before: `report` 2.0 GB peak, 37 s (every path
    held the names of all its ancestors: quadratic); now 64 levels of paths, the rest counted
    in the deepest path with a warning."""
    trace = traced(
        tmp_path,
        "with contextlib.ExitStack() as st:\n"
        "    for i in range(10000):\n"
        "        st.enter_context(fpgaprof.region(f'r{i}'))\n",
    )
    r = report(trace, tmp_path / "out")
    assert r.rc == 0, r.err
    within_memory(r, baseline, "report", trace.stat().st_size)
    assert r.seconds < 60
    s = summary_of(tmp_path / "out")
    items = s["regions"]["items"]
    assert max(i["depth"] for i in items) == 63  # 64 levels, the outermost at depth 0
    deepest = max(items, key=lambda i: i["depth"])
    assert deepest["path"].count(" > ") == 63 and deepest["name"] == "r63"
    assert any(
        "9936 region record(s) are nested deeper than 64 levels" in w["message"]
        for w in s["warnings"]
    ), s["warnings"]
    assert (tmp_path / "out" / "report.html").stat().st_size < 4 * MIB


def test_6_region_name_of_10_mb(tmp_path, baseline):
    """One region named by 10 MB (and one inside it). Before: `report` 352 MB peak, 8.3 s,
    86 MB of outputs; now the path shows the first 256 bytes and the length."""
    trace = traced(
        tmp_path,
        "with fpgaprof.region('\u00e9' + 'n' * 9_999_998):\n"
        "    with fpgaprof.region('inner'):\n"
        "        pass\n",
    )
    r = report(trace, tmp_path / "out")
    assert r.rc == 0, r.err
    within_memory(r, baseline, "report", trace.stat().st_size)
    items = {i["path"]: i for i in summary_of(tmp_path / "out")["regions"]["items"]}
    shown = "\u00e9" + "n" * 254 + "... (10000000 bytes)"  # 256 bytes: é is 2
    assert set(items) == {shown, shown + " > inner"}
    total = sum(f.stat().st_size for f in (tmp_path / "out").rglob("*") if f.is_file())
    assert total < 4 * MIB, total


# --- 7: many warnings ---------------------------------------------------------------------------


def test_7_fifty_thousand_warnings_in_meta(tmp_path, baseline):
    """50,000 distinct warnings in META. Before: `report` 22 s (100,000: 90 s), quadratic
    de-duplication; now a set, 1,000 listed and the rest counted."""
    warnings = [f"warning {i}: something to know" for i in range(50_000)]
    data = g.build(
        g.with_meta(g.parse(BASE), lambda m: m["meta"].__setitem__("warnings", warnings))
    )
    trace = tmp_path / "t.fpgaprof"
    trace.write_bytes(data)
    r = report(trace, tmp_path / "out")
    assert r.rc == 0, r.err
    within_memory(r, baseline, "report", len(data))
    assert r.seconds < 15
    ws = [w["message"] for w in summary_of(tmp_path / "out")["warnings"]]
    assert len(ws) == 1001
    assert ws[:3] == warnings[:3]
    # 50,000 from META plus what the report adds (the base trace's own are in META too)
    assert re.fullmatch(r"[\d,]+ more distinct warnings not listed \(([\d,]+) in all.*", ws[-1])
    n_all = int(re.search(r"\(([\d,]+) in all", ws[-1]).group(1).replace(",", ""))
    left = int(ws[-1].split()[0].replace(",", ""))
    assert n_all >= 50_000 and left == n_all - 1000


# --- 10: long names in the timeline -------------------------------------------------------------


def test_10_fifty_names_of_200_kb(tmp_path, baseline):
    """The 50 longest strings (kernel and API names) each made 200 KB longer (random hex, so
    the file is 5.8 MB). Before: timeline.json 362 MB, `report` 1.04 GB peak; now a name in
    timeline.json is cut to 1,024 characters with its length."""
    secs = g.parse(BASE)
    strs = g.section(secs, b"STRS")
    table = g.strings_of(strs)
    longest = sorted(range(1, len(table)), key=lambda i: -len(table[i]))[:50]
    rnd = __import__("random").Random(10)
    for i in longest:
        table[i] += rnd.randbytes(100_000).hex().encode()
    strs.raw = g.strings_section(table)
    data = g.build(secs)
    trace = tmp_path / "t.fpgaprof"
    trace.write_bytes(data)
    r = report(trace, tmp_path / "out")
    assert r.rc == 0, r.err
    within_memory(r, baseline, "report", len(data))
    tl = tmp_path / "out" / "timeline.json"
    assert tl.stat().st_size < 2 * len(data), tl.stat().st_size
    events = json.loads(tl.read_text(encoding="utf-8"))["traceEvents"]
    names = [e["name"] for e in events if e.get("ph") == "X"]
    cut = [n for n in names if n.endswith(" characters)")]
    assert cut and all(len(n) <= 1024 + len("... (200,100 characters)") for n in names)
    assert all(re.search(r"\.\.\. \(2\d\d,\d\d\d characters\)$", n) for n in cut)


# --- 13: NaN and infinities in estimate --json --------------------------------------------------


def test_13_estimate_json_with_nan(tmp_path):
    """A custom call (not estimated: its times are NaN). Before: "internal error: ValueError:
    Out of range float values are not JSON compliant: nan"; now valid JSON with null and the
    fields listed."""
    module = tmp_path / "m.hlo"
    module.write_text(
        "HloModule m\n\nENTRY e {\n  p = f32[1024]{0} parameter(0)\n"
        '  ROOT c = f32[1024]{0} custom-call(p), custom_call_target="my_kernel"\n}\n'
    )
    r = run("cli", "estimate", str(module), "--json")
    assert r.rc == 0, r.err

    def refuse(token: str) -> None:
        raise AssertionError(f"{token} in the JSON")

    doc = json.loads(r.out, parse_constant=refuse)  # strict: no NaN, Infinity
    nf = doc["not_finite"]
    assert "JSON has no NaN or infinity" in nf["reason"]
    assert nf["fields"] and set(nf["fields"].values()) <= {"nan", "inf", "-inf"}
    for path in nf["fields"]:
        node: object = doc
        for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
            node = node[int(part[1:-1])] if part.startswith("[") else node[part]  # type: ignore[index]
        assert node is None, path


# --- 15: a staging folder named with an impossible pid ------------------------------------------


@pytest.mark.parametrize("pid", ["99999999999999999999", "4294967296", "0"])
def test_15_stale_staging_with_an_impossible_pid(tmp_path, pid):
    """Before: OverflowError from os.kill (`internal error`); pid 0 would have signalled the
    process group and been kept for ever. Now removed as stale."""
    out = tmp_path / "out"
    stale = out / f".fpgaprof-staging-{pid}-abc"
    stale.mkdir(parents=True)
    (stale / "summary.json").write_text("half")
    r = report(BASE_TRACE, out)
    assert r.rc == 0, r.err
    assert not stale.exists()
    assert sorted(os.listdir(out)) == ["hlo", "report.html", "summary.json", "timeline.json"]


# --- 17, 22: job folders --------------------------------------------------------------------------


def job_folder(tmp_path: Path, names: list[bytes]) -> bytes:
    folder = os.fsencode(tmp_path / "job")
    for n in names:
        os.makedirs(folder + b"/" + n)
        with open(folder + b"/" + n + b"/trace.fpgaprof", "wb") as f:
            f.write(BASE)
    return folder


def test_17_rank_folder_name_not_utf8(tmp_path):
    """Before: UnicodeEncodeError writing job.html (`internal error`); now written, the
    name's byte escaped."""
    folder = job_folder(tmp_path, [b"node\xff-rank0", b"node-rank1"])
    r = run("cli", "report", os.fsdecode(folder))
    assert r.rc == 0, r.err
    for name in ("job.json", "job.html", "job.txt"):
        text = (tmp_path / "job" / name).read_bytes().decode("utf-8")  # strict
        assert "node\\udcff" in text.replace("\\\\", "\\"), name  # the host, from the name
    json.loads((tmp_path / "job" / "job.json").read_text(encoding="utf-8"))
    assert "node\\udcff" in r.out


def test_22_job_report_written_as_a_set(tmp_path):
    """job.txt's place taken by a folder: the set fails before any file moves. Before:
    job.json and job.html were written, then the failure (a mixed set)."""
    folder = job_folder(tmp_path, [b"node-rank0", b"node-rank1"])
    job = tmp_path / "job"
    (job / "job.json").write_text("old json")
    (job / "job.txt").mkdir()
    r = run("cli", "report", os.fsdecode(folder))
    assert r.rc == 1, r.err
    one_line(r.err)
    assert "job.txt: is a folder, not a regular file" in r.err
    assert (job / "job.json").read_text() == "old json"
    assert not (job / "job.html").exists()
    assert not [n for n in os.listdir(job) if n.startswith(".fpgaprof-staging")]


# --- 20, 21: links and special files where outputs go --------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "json", "perfetto"])
@pytest.mark.parametrize("kind", ["symlink_to_file", "symlink_to_dev_null", "fifo"])
def test_20_output_is_a_link_or_special_file(tmp_path, fmt, kind):
    """Before: os.replace put a regular file in place of the link or FIFO (as root, `-o
    /dev/stdout` replaced /dev/stdout). Now refused before anything is written."""
    target = tmp_path / "target.txt"
    target.write_text("keep")
    o = tmp_path / "o"
    if kind == "symlink_to_file":
        o.symlink_to(target)
        what = "a symbolic link"
    elif kind == "symlink_to_dev_null":
        o.symlink_to("/dev/null")
        what = "a symbolic link"
    else:
        os.mkfifo(o)
        what = "a FIFO"
    r = run("cli", "export", str(BASE_TRACE), "--format", fmt, "-o", str(o), timeout=30)
    assert r.rc == 1, r.err
    one_line(r.err)
    assert f"{o}: is {what}, not a regular file" in r.err
    assert o.is_symlink() if kind != "fifo" else o.is_fifo()
    assert target.read_text() == "keep"
    assert [n for n in os.listdir(tmp_path) if n.startswith(".tmp-")] == []


@pytest.mark.parametrize(
    "argv",
    [
        ["report", str(BASE_TRACE)],
        ["export", str(BASE_TRACE), "--format", "parquet"],
        ["export", str(BASE_TRACE), "--format", "xprof"],
        ["run", "--", sys.executable, "-c", "pass"],
    ],
    ids=["report", "parquet", "xprof", "run"],
)
@pytest.mark.parametrize("kind", ["fifo", "dev_null"])
def test_20_output_folder_is_a_special_file(tmp_path, argv, kind):
    """-o naming a FIFO or /dev/null where a folder is written. Before: "File exists"; now
    what is there, in one line."""
    if kind == "fifo":
        o, what = tmp_path / "o", "a FIFO"
        os.mkfifo(o)
    else:
        o, what = Path("/dev/null"), "a character device"
    cmd = ["run", "-o", str(o), *argv[1:]] if argv[0] == "run" else [*argv, "-o", str(o)]
    r = run("cli", *cmd, timeout=30)
    assert r.rc == 1, r.err
    one_line(r.err)
    assert f"{o}: is {what}, not a folder" in r.err
    assert o.is_fifo() if kind == "fifo" else o.is_char_device()


def test_21_hlo_folder_a_link_elsewhere(tmp_path):
    """OUT/hlo a symbolic link to another folder. Before: the 49 module files were written
    through it; now refused, nothing written anywhere."""
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "hlo").symlink_to(elsewhere)
    r = report(BASE_TRACE, out)
    assert r.rc == 1, r.err
    one_line(r.err)
    assert f"{out}/hlo: is a symbolic link, not a folder" in r.err
    assert os.listdir(elsewhere) == []
    assert sorted(os.listdir(out)) == ["hlo"]


def test_21_run_with_hlo_a_link_elsewhere(tmp_path):
    """`fpgaprof run -o out` with out/hlo a link to another folder. Before: the old modules
    there (module_*) were removed through the link and XLA's dump went there; now refused
    before the program starts, the other folder untouched."""
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / "module_0001.mine.txt").write_text("keep")
    (out / "hlo").symlink_to(elsewhere)
    marker = tmp_path / "ran"
    r = run("cli", "run", "-o", str(out), "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')")
    assert r.rc == 1, r.err
    one_line(r.err)
    assert f"{out}/hlo: is a symbolic link, not a folder" in r.err
    assert os.listdir(elsewhere) == ["module_0001.mine.txt"]
    assert not marker.exists()


# --- 23: a full disk in the exports ---------------------------------------------------------------


@needs_namespaces
@pytest.mark.parametrize("fmt", ["parquet", "xprof"])
def test_23_export_on_a_full_disk_leaves_nothing(tmp_path, fmt):
    """A 64 KiB tmpfs. Before: Parquet tables without index.json, or an empty
    plugins/profile/<run> tree; now nothing (the output folder, made by the export, removed
    again). The tmpfs is listed in the same namespace after the export."""
    pytest.importorskip("pyarrow" if fmt == "parquet" else "google.protobuf")
    small = tmp_path / "small"
    small.mkdir()
    script = (
        f'mount -t tmpfs -o size=64k tmpfs {small} || exit 99; "$@" >/dev/null; rc=$?; '
        f"echo listing:; ls -A {small}; exit $rc"
    )
    cmd = ["unshare", "-rm", "sh", "-c", script, "sh", sys.executable, str(HERE / "driver.py")]
    r = run_cmd([*cmd, "cli", "export", str(BASE_TRACE), "--format", fmt, "-o", str(small / "x")])
    assert r.rc == 1, r.err
    one_line(r.err)
    assert "No space left on device" in r.err
    assert r.out.split("listing:")[-1].split() == [], r.out


@pytest.mark.parametrize("fmt", ["parquet", "xprof"])
def test_23_export_failing_half_way_leaves_nothing(tmp_path, fmt):
    """The same without namespaces: the third fsync of the export fails with ENOSPC."""
    pytest.importorskip("pyarrow" if fmt == "parquet" else "google.protobuf")
    out = tmp_path / "x"
    code = textwrap.dedent(f"""
        import errno, os
        from fpgaprof import report
        from fpgaprof.base import atomic
        calls = []
        real = os.fsync
        def fsync(fd):
            calls.append(fd)
            if len(calls) == {3 if fmt == "parquet" else 1}:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(fd)
        atomic.os.fsync = fsync
        prof = fpgaprof.load({str(BASE_TRACE)!r})
        try:
            if {fmt!r} == "parquet":
                report.write_parquet(prof, {str(out)!r})
            else:
                report.write_xspace(prof, {str(out)!r})
        except OSError as e:
            results.append([e.errno, str(e.filename)])
    """)
    r = run("py", code, timeout=120)
    (res,) = r.results()
    assert res[0] == 28, res  # ENOSPC
    assert not out.exists(), os.listdir(out)


# --- 24: escape sequences bound for the terminal, NUL in report.html ------------------------------

ESC = b"\x1b]0;pwned\x07\x1b[2J\x00nul\xc2\x9b"


def escaped_trace(tmp_path: Path) -> Path:
    secs = g.parse(BASE)
    strs = g.section(secs, b"STRS")
    table = g.strings_of(strs)
    strs.raw = g.strings_section([table[0]] + [ESC + b"#" + t for t in table[1:]])
    p = tmp_path / "t.fpgaprof"
    p.write_bytes(g.build(secs))
    return p


def no_controls(text: str) -> None:
    bad = re.findall(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
    assert not bad, sorted(set(bad))


def test_24_report_digest_and_html(tmp_path):
    """Before: the digest wrote ESC]0; (window title) and ESC[2J (clear screen) raw, and
    report.html held NUL bytes; now escaped in both."""
    trace = escaped_trace(tmp_path)
    r = report(trace, tmp_path / "out")
    assert r.rc == 0, r.err
    no_controls(r.out)
    no_controls(r.err)
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\x00nul\\x9b" in r.out
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "\x00" not in html and "\x1b" not in html
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\x00nul" in html


def test_24_text_tables(tmp_path):
    """The text table print() shows (here the estimate's, from Python, no command line)."""
    module = tmp_path / "m.hlo"
    module.write_bytes(CUSTOM_CALL)
    code = f"results.append(str(fpgaprof.fpga.estimate_hlo(open({str(module)!r}).read())))"
    r = run("py", code)
    (text,) = r.results()
    no_controls(text)
    assert "\\x1b]0;" in text
    # prof.summary(), repr(prof) and a report dict's text, of a trace whose names hold them
    trace = escaped_trace(tmp_path)
    code = (
        f"p = fpgaprof.load({str(trace)!r})\n"
        "results.append(p.summary() + repr(p) + str(p.transfer_report()) + str(p.ops))\n"
    )
    (text,) = run("py", code).results()
    no_controls(text)
    assert "\\x1b]0;pwned" in text


CUSTOM_CALL = (
    b"HloModule m\n\nENTRY e {\n  p = f32[1024]{0} parameter(0)\n"
    b'  ROOT c = f32[1024]{0} custom-call(p), custom_call_target="\x1b]0;pwned\x07\x1b[2J"\n}\n'
)


def test_24_estimate_custom_call_target(tmp_path):
    """Before: the table's estimate_note wrote ESC]0;pwned BEL ESC[2J raw."""
    module = tmp_path / "m.hlo"
    module.write_bytes(CUSTOM_CALL)
    r = run("cli", "estimate", str(module))
    assert r.rc == 0, r.err
    no_controls(r.out)
    assert "\\x1b]0;" in r.out
    js = run("cli", "estimate", str(module), "--json")
    assert js.rc == 0 and "\x1b" not in js.out
    assert "\\u001b]0;pwned\\u0007\\u001b[2J" in js.out  # JSON's own escape: the data kept


def test_24_export_to_stdout_keeps_the_data(tmp_path):
    """`export --format csv` to stdout is data: the name's bytes as they are."""
    trace = escaped_trace(tmp_path)
    r = run("cli", "export", str(trace), "--format", "csv", "--table", "kernels")
    assert r.rc == 0, r.err
    assert "\x1b]0;pwned" in r.out


# --- 25: two runs into one folder at once -------------------------------------------------


def test_25_two_runs_into_one_folder(tmp_path):
    """Two `fpgaprof run -o out` started together (no launcher variables). Before: one trace
    replaced the other and one run warned of an untraced process; now the second writes to
    out/<host>-pid<pid> and both traces are kept, each with its own region."""
    script = tmp_path / "s.py"
    script.write_text(
        "import sys, time, fpgaprof\nwith fpgaprof.region(sys.argv[1]):\n    time.sleep(4)\n"
    )
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "FPGAPROF_RUN_DIR"}
    procs = []
    for name in ("first", "second"):
        cmd = [
            sys.executable,
            str(HERE / "driver.py"),
            "cli",
            "run",
            "-o",
            str(out),
            "--",
            sys.executable,
            str(script),
            name,
        ]
        procs.append(
            subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
            )
        )
        time.sleep(0.5)
    errs = []
    for p in procs:
        _o, e = p.communicate(timeout=240)
        assert p.returncode == 0, e
        errs.append(e)
    assert "ran untraced" not in "".join(errs)
    moved = [e for e in errs if "is in use by another fpgaprof run" in e]
    assert len(moved) == 1, errs
    own = re.search(r"this run writes to (\S+)", moved[0]).group(1)
    assert re.fullmatch(re.escape(str(out)) + r"/[\w.-]+-pid\d+", own)
    traces = [str(out / "trace.fpgaprof"), os.path.join(own, "trace.fpgaprof")]
    r = run_cmd([sys.executable, "-c", DRIVER_ARGS, *traces])
    assert r.rc == 0, r.err
    first, second = json.loads(r.out.strip().splitlines()[-1])
    assert {first[0], second[0]} == {"first", "second"}, (first, second)
    # each run removed its own lock file as it ended
    assert not (out / ".fpgaprof-run.lock").exists()
    assert not os.path.exists(os.path.join(own, ".fpgaprof-run.lock"))


DRIVER_ARGS = (
    "import json, sys, fpgaprof\n"
    "print(json.dumps([sorted(set(fpgaprof.load(t).regions.columns()['name'].tolist())) "
    "for t in sys.argv[1:]]))\n"
)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_25_jax_job_started_by_hand(tmp_path):
    """Two processes of one jax.distributed job (process_id given by hand, no launcher
    variables), each under `fpgaprof run -o out`: each trace goes to out/<host>-rank<k>, the
    rank JAX gives once initialised, and `fpgaprof report out` reads them as one job."""
    pytest.importorskip("jax")
    script = tmp_path / "job.py"
    script.write_text(
        "import sys, time, jax, fpgaprof\n"
        "k = int(sys.argv[2])\n"
        "jax.distributed.initialize(coordinator_address=sys.argv[1], num_processes=2,"
        " process_id=k)\n"
        "with fpgaprof.region(f'rank{k}-work'):\n"
        "    time.sleep(1)\n"
    )
    out = tmp_path / "out"
    address = f"127.0.0.1:{free_port()}"
    env = {
        k: v for k, v in os.environ.items() if k not in ("FPGAPROF_RUN_DIR", "RANK", "WORLD_SIZE")
    }
    procs = []
    for k in (0, 1):
        cmd = [
            sys.executable,
            str(HERE / "driver.py"),
            "cli",
            "run",
            "-o",
            str(out),
            "--",
            sys.executable,
            str(script),
            address,
            str(k),
        ]
        procs.append(
            subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
            )
        )
    errs = []
    for p in procs:
        _o, e = p.communicate(timeout=300)
        assert p.returncode == 0, e
        errs.append(e)
    assert all("one process of a jax.distributed job" in e for e in errs), errs
    ranks = sorted(n for n in os.listdir(out) if re.fullmatch(r"[\w.-]+-rank[01]", n))
    assert len(ranks) == 2, os.listdir(out)
    r = run_cmd(
        [sys.executable, "-c", DRIVER_ARGS] + [str(out / n / "trace.fpgaprof") for n in ranks]
    )
    assert r.rc == 0, r.err
    assert json.loads(r.out.strip().splitlines()[-1]) == [["rank0-work"], ["rank1-work"]]
    for n in ranks:
        assert (out / n / "summary.json").exists() and (out / n / "report.html").exists()
    job = run("cli", "report", str(out))
    assert job.rc == 0, job.err
    model = json.loads((out / "job.json").read_text(encoding="utf-8"))
    assert sorted(x["process_index"] for x in model["ranks"]) == [0, 1], model.get("ranks")


# --- round 3: JSON files read beside a trace or in an output folder ----------------------------

DEEP_JSON = "[" * 100_000 + "]" * 100_000


def _side_file(path: Path, kind: str) -> None:
    if kind == "deep":
        path.write_text(DEEP_JSON)
    elif kind == "fifo":
        os.mkfifo(path)
    else:  # a link to /dev/zero: endless bytes
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize("kind", ["deep", "fifo", "dev_zero"])
def test_environment_json_beside_the_trace_is_only_a_hint(tmp_path, kind):
    """A run folder's environment.json (written by `fpgaprof run`, read by `report`) that is
    nested 100,000 deep, a FIFO or a link to /dev/zero. Before: "internal error:
    RecursionError", a hang (open() of the FIFO waits for a writer), and a read of /dev/zero
    until memory ran out. Now the environment is unknown and the report is written."""
    runs = []
    for case in ("valid", kind):  # the same report of a run folder without the odd file first
        run_dir = tmp_path / case / "run"
        run_dir.mkdir(parents=True)
        trace = run_dir / "trace.fpgaprof"
        trace.write_bytes(BASE)
        if case != "valid":
            _side_file(run_dir / "environment.json", kind)
        runs.append(report(trace, tmp_path / case / "out", "--no-timeline", timeout=60))
        assert runs[-1].rc == 0, runs[-1].err
        assert (tmp_path / case / "out" / "summary.json").is_file()
    # the peak RSS (wait4) of the same report plus 256 MiB: /dev/zero read whole is unbounded
    valid, odd = runs
    assert odd.peak_bytes < valid.peak_bytes + 256 * MIB, (odd.peak_bytes, valid.peak_bytes)


@pytest.mark.parametrize("kind", ["deep", "fifo"])
@pytest.mark.parametrize(
    "name, argv",
    [
        ("summary.json", ["report", str(BASE_TRACE), "--no-timeline"]),
        ("index.json", ["export", str(BASE_TRACE), "--format", "parquet"]),
    ],
)
def test_old_json_in_the_output_folder(tmp_path, kind, name, argv):
    """The output folder already holds summary.json (report) or index.json (export parquet),
    read to learn what an earlier run wrote there. Before: a FIFO hung the command; JSON nested
    100,000 deep ended in "internal error: RecursionError". Now a FIFO is refused by name
    (as any special file where an output goes) and deep JSON is no earlier output."""
    if name == "index.json":
        pytest.importorskip("pyarrow")
    out = tmp_path / "out"
    out.mkdir()
    _side_file(out / name, kind)
    r = run("cli", *argv, "-o", str(out), timeout=60)
    if kind == "fifo":
        assert r.rc == 1, r.err
        one_line(r.err)
        assert f"{name}: is a FIFO, not a regular file" in r.err, r.err
    else:
        assert r.rc == 0, r.err
        assert "internal error" not in r.err


@pytest.mark.parametrize(
    "name", [".fpgaprof-exit-status", ".fpgaprof-no-trace", ".fpgaprof-run.lock"]
)
def test_run_marks_that_are_fifos_do_not_hang_the_job_report(tmp_path, name):
    """`fpgaprof run`'s small mark files in a rank folder (its exit status, why it left no
    trace, its lock), read by the job report: a FIFO in their place was opened waiting for a
    writer, and `report` hung. Now such a mark is unknown (or the folder not in use)."""
    job = tmp_path / "job"
    for k in (0, 1):
        (job / f"vm-rank{k}").mkdir(parents=True)
    (job / "vm-rank0" / "trace.fpgaprof").write_bytes(BASE)
    if name == ".fpgaprof-exit-status":  # read beside a trace; the others for a rank without
        (job / "vm-rank1" / "trace.fpgaprof").write_bytes(BASE)
    os.mkfifo(job / "vm-rank1" / name)
    r = run("cli", "report", str(job), "-o", str(tmp_path / "out"), timeout=120)
    assert r.rc in (0, 1), r.err
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err
