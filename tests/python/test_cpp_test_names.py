"""ctest runs each Catch2 test by name (catch_discover_tests); a name with ';' is split into two
entries that match no test, so ctest reports them passed while they never run."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_no_catch2_test_name_holds_a_semicolon():
    bad = []
    for path in sorted((ROOT / "tests" / "cpp").glob("*.cpp")):
        for name in re.findall(r'TEST_CASE\("((?:[^"\\]|\\.)*)"', path.read_text(encoding="utf-8")):
            if ";" in name:
                bad.append(f"{path.name}: {name}")
    assert not bad, "rename (ctest would skip them): " + "; ".join(bad)
