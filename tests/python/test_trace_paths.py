"""Bad trace paths fail early and typed (trial 6, items 4 and 9): fpgaprof.trace(path) checks
the path before the body runs; a save that fails at exit says the Profile still holds the
records; fpgaprof.load accepts a `fpgaprof run` folder and raises FpgaprofIOError (not a
builtin RuntimeError from the C++ stream) for a folder without a trace."""
import os
import shutil
import warnings

import fpgaprof
import pytest
from fpgaprof.base.core import core


@pytest.fixture(autouse=True)
def _no_gpu_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fpgaprof.FpgaprofWarning)
        yield


def test_missing_folder_is_refused_before_the_body_runs(tmp_path):
    ran = []
    path = tmp_path / "nonexistent" / "dir" / "x.fpgaprof"
    with pytest.raises(fpgaprof.FpgaprofIOError) as e:
        with fpgaprof.trace(str(path)):
            ran.append(1)
    assert ran == []
    msg = str(e.value)
    assert "\n" not in msg and "does not exist" in msg and "os.makedirs" in msg
    assert not fpgaprof.api.trace.active()  # nothing left running: a next trace works
    with fpgaprof.trace(str(tmp_path / "ok.fpgaprof")):
        pass
    assert (tmp_path / "ok.fpgaprof").is_file()


def test_a_folder_as_the_path_is_refused_before_the_body_runs(tmp_path):
    ran = []
    with pytest.raises(fpgaprof.InvalidArgumentError) as e:
        with fpgaprof.trace(str(tmp_path)):
            ran.append(1)
    assert ran == [] and "is a folder" in str(e.value)
    assert os.path.join(str(tmp_path), "trace.fpgaprof") in str(e.value)  # the fix, spelled out


def test_a_file_in_place_of_the_folder_is_refused(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    with pytest.raises(fpgaprof.FpgaprofIOError, match="is a file, not a folder"):
        with fpgaprof.trace(str(blocker / "x.fpgaprof")):
            pass


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root writes into read-only folders")
def test_a_read_only_folder_is_refused(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        with pytest.raises(fpgaprof.FpgaprofIOError, match="cannot write into"):
            with fpgaprof.trace(str(ro / "x.fpgaprof")):
                pass
    finally:
        os.chmod(ro, 0o700)


def test_a_save_failing_at_exit_says_the_profile_still_has_the_records(tmp_path):
    folder = tmp_path / "goes-away"
    folder.mkdir()
    with pytest.raises(fpgaprof.FpgaprofIOError) as e:
        with fpgaprof.trace(str(folder / "x.fpgaprof")) as prof:
            with fpgaprof.region("kept"):
                pass
            shutil.rmtree(folder)  # the folder vanishes while the body runs
    assert "prof.save(other_path)" in str(e.value) and "\n" not in str(e.value)
    other = prof.save(str(tmp_path / "other.fpgaprof"))
    assert "kept" in {r.name for r in fpgaprof.load(other).regions}


def test_load_accepts_a_run_folder(tmp_path):
    with fpgaprof.trace(str(tmp_path / "trace.fpgaprof")):
        with fpgaprof.region("in-folder"):
            pass
    prof = fpgaprof.load(str(tmp_path))
    assert "in-folder" in {r.name for r in prof.regions}


def test_load_of_a_folder_without_a_trace_is_an_io_error(tmp_path):
    with pytest.raises(fpgaprof.FpgaprofIOError, match="without trace.fpgaprof"):
        fpgaprof.load(str(tmp_path))
    with pytest.raises(fpgaprof.FpgaprofIOError):
        fpgaprof.load(str(tmp_path / "missing.fpgaprof"))


def test_the_cpp_reader_types_a_folder_as_an_io_error(tmp_path):
    # Before: libstdc++'s "basic_filebuf::underflow error reading the file: Is a directory"
    # came through as builtins.RuntimeError.
    with pytest.raises(fpgaprof.FpgaprofIOError, match="is a folder, not a trace file"):
        core.TraceStore.load(str(tmp_path))
