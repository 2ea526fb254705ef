"""Hostile names and folders: a kernel name with a lone surrogate in a
summary.json, region paths that read alike once cut, names made to mimic the ' #k' marks,
invisible characters, and an HLO dump folder whose files cannot be removed."""

import errno
import json
import os
import time

from fpgaprof.base.text import terminal_safe
from fpgaprof.base.units import distinct_shortened, kernel_display_name, shorten
from fpgaprof.capture import xla_flags
from fpgaprof import cli
from fpgaprof.cli import compare


def _summary(kernels=(), regions=()):
    return {
        "schema_version": 1,
        "trace": {"wall_time_s": 1.0},
        "kernels": {"available": True, "top": list(kernels)},
        "regions": {"available": True, "items": list(regions)},
    }


def test_compare_kernel_name_with_a_lone_surrogate_is_compared_not_an_internal_error(
    tmp_path, capsys
):
    # json.loads gives "\ud800" as a lone surrogate, which the core (UTF-8 only) refused with
    # a TypeError that `fpgaprof compare` printed as an internal error
    s = json.loads(json.dumps(_summary(kernels=[{"name": "k\ud800", "total_s": 1.0, "count": 1}])))
    rows = compare.compare_summaries(s, s)
    assert [r["name"] for r in rows if r["kind"] == "kernel"] == ["k\ud800"]
    assert kernel_display_name("k\ud800") == "k\ud800"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(s))  # ensure_ascii: the surrogate as the escape \ud800
    assert cli.main(["compare", str(path), str(path)]) == 0
    (row,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  k")]
    assert row.split()[0] == "k\\ud800"  # shown escaped, as every name


def test_compare_keeps_both_region_paths_that_read_alike():
    # names over 256 bytes are shown cut with their length: two that differ past the cut are
    # two rows of summary.json with one path; compare kept only the last one
    cut = "step_" + "p" * 251 + "... (306 bytes)"
    s = _summary(
        regions=[
            {"path": cut, "wall_s": 0.0006, "count": 1},
            {"path": cut, "wall_s": 0.0003, "count": 2},
        ]
    )
    (row,) = [r for r in compare.compare_summaries(s, s) if r["kind"] == "region"]
    assert row["time_before_s"] == row["time_after_s"] == 0.0006 + 0.0003
    assert row["count_before"] == 3
    assert row["mean_before_s"] == (0.0006 + 0.0003) / 3


def test_marks_stay_distinct_and_fast_when_names_mimic_them():
    # "x #1", "x #3", ...: each reads as the mark the row before it gets; every round of the
    # old marking loop re-marked one row and rebuilt the whole table (seconds at 8,000 rows)
    p0, p1 = "a" * 30 + "1" + "b" * 40, "a" * 30 + "2" + "b" * 40
    names = [p0, p1] + [
        shorten(p0, 60 - len(f" #{2 * k + 1}"), "ends") + f" #{2 * k + 1}" for k in range(8000)
    ]
    t0 = time.perf_counter()
    shown, marks = distinct_shortened(len(names), lambda i, w: shorten(names[i], w, "ends"), 60)
    assert time.perf_counter() - t0 < 3.0
    assert len(set(shown)) == len(shown)
    assert all(len(x) <= 60 for x in shown)
    assert len(set(marks.values())) == len(marks)
    # the row whose name reads as row 0's mark is marked too: it does not pass as a mark
    assert 2 in marks and shown[2].endswith(f" #{marks[2]}")


def test_marks_of_plain_collisions_are_numbered_in_order():
    names = ["a", "b", "a", "b", "c"]
    shown, marks = distinct_shortened(len(names), lambda i, w: names[i][:w], 60)
    assert shown == ["a #1", "b #3", "a #2", "b #4", "c"]
    assert marks == {0: 1, 2: 2, 1: 3, 3: 4}


def test_invisible_characters_and_the_arabic_letter_mark_are_shown_escaped():
    # U+061C is a bidi control as U+200E/U+200F are; zero-width characters made "a\u200b"
    # read as the row "a" and shifted the columns after it
    for ch in "\u061c\u200b\u2060\u2063\ufeff":
        assert terminal_safe("a" + ch) == f"a\\u{ord(ch):04x}"
    assert terminal_safe("caf\u00e9 \u4e2d") == "caf\u00e9 \u4e2d"  # printable text unchanged


def _takes_dump(folder) -> bool:
    """Whether xla_flags.prepare (what `import fpgaprof` and `fpgaprof run` call) takes `folder`
    as XLA's dump folder: it probes that a file can be created there."""
    setup = xla_flags.prepare({}, dump_dir=str(folder))
    return setup.dump_dir == os.path.abspath(folder) and not setup.warnings


def test_dump_folder_probe_leaves_nothing_even_when_its_file_cannot_be_removed(
    tmp_path, monkeypatch
):
    # An append-only folder (chattr +a) takes new files but removes none: the probe's unlink
    # failed, the folder was refused as "cannot hold XLA's HLO dump" and the probe stayed
    def no_unlink(path, *a, **k):
        raise PermissionError(errno.EPERM, "Operation not permitted", path)

    assert _takes_dump(tmp_path)
    assert os.listdir(tmp_path) == []
    monkeypatch.setattr(os, "unlink", no_unlink)
    assert _takes_dump(tmp_path)  # creating works: the folder is usable
    assert os.listdir(tmp_path) == []


def test_dump_folder_probe_without_unnamed_files_falls_back_to_a_named_one(tmp_path, monkeypatch):
    real_open = os.open
    tmpfile = getattr(os, "O_TMPFILE", 0)

    def open_no_tmpfile(path, flags, *a, **k):
        if tmpfile and flags & tmpfile == tmpfile:
            raise OSError(errno.EOPNOTSUPP, "Operation not supported", path)
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(os, "open", open_no_tmpfile)
    assert _takes_dump(tmp_path)
    assert os.listdir(tmp_path) == []
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "x").write_text("")
    monkeypatch.setattr(os, "unlink", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.EPERM, "no")))
    assert _takes_dump(ro)  # created, not removed: still a usable folder
