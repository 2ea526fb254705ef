"""Notebook HTML (_repr_html_ helpers): escaped, the numbers of the summary, no script."""
import _reports_fixtures as F
from fpgaprof.report import notebook as N


def test_profile_html():
    h = N.profile_html(F.SyntheticProfile(with_ops=True))
    assert "<script" not in h
    assert "NVIDIA H100 80GB HBM3 &lt;test&gt;" in h
    assert "gemm&lt;float&gt;" in h
    # GPU busy 2.81 ms of 10 ms (worked out in test_reports_summary)
    assert "2.81 ms (28.1 %)" in h
    assert "user &lt;script&gt;alert(1)&lt;/script&gt; warning" in h
    assert "top HLO ops" in h and "model.py:12" in h


def test_profile_html_without_gpu():
    h = N.profile_html(F.SyntheticProfile(with_gpu=False))
    assert "no GPU: no CUDA driver found" in h
    assert "top kernels" not in h


def test_table_html_limits_rows():
    t = F.kernels()
    h = N.table_html(t, "kernels", max_rows=2)
    assert "<b>kernels</b>: 4 rows" in h
    assert h.count("<tr>") == 3  # header + 2 rows
    assert "2 more rows" in h
    assert "gemm&lt;float&gt;" in h
    empty = N.table_html(F.Table(), "empty")
    assert "<b>empty</b>: 0 rows" in empty and "<table>" not in empty


def test_table_html_shows_timestamps_as_integers_and_none_as_a_dash():
    # fusion_a starts at T0 + 1.1 ms (the fixture's layout); its region_index is F.NONE32
    t = F.Table(start_ns=[F.ms(1.1)], end_ns=[F.ms(1.6)], duration_ns=[500_000],
                region_index=[F.NONE32], parent=[3])
    h = N.table_html(t, "kernels")
    assert f"<td>{F.T0 + 1_100_000}</td>" in h and f"<td>{F.T0 + 1_600_000}</td>" in h
    assert "<th>start_ns</th>" in h
    assert "<td>–</td>" in h and "4.29 G" not in h
    assert "500.0 µs" in h or "500.00 µs" in h  # a duration is still a duration


def test_rows_html():
    h = N.rows_html([{"op": "a<b", "score": 0.5, "time_s": 0.002}], "candidates")
    assert "a&lt;b" in h and "2.00 ms" in h and "0.5" in h


def test_progress_only_on_a_terminal(monkeypatch, capsys):
    import io
    import sys

    from fpgaprof.report import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    # not a terminal (pytest captures stderr): silent
    p = Progress(2, "x")
    p.step("a")
    p.step("b")
    assert capsys.readouterr().err == ""
    # a terminal, not CI: a bar, ending with a newline
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")  # TERM=dumb (an editor's shell) also means silent
    p = Progress(2, "x")
    p.step("a")
    p.step("b")
    assert "x [" in tty.getvalue() and "2/2" in tty.getvalue() and tty.getvalue().endswith("\n")
    # a terminal in CI: silent
    tty2 = Tty()
    monkeypatch.setattr(sys, "stderr", tty2)
    monkeypatch.setenv("CI", "true")
    Progress(1, "x").step("a")
    assert tty2.getvalue() == ""


def test_rows_print_as_a_text_table():
    rows = N.Rows([{"name": "fusion.3", "total_ns": 1_500_000, "executions": 3, "bytes_accessed": 2.5e6},
                   {"name": "dot.1", "total_ns": 20_000, "executions": 1, "bytes_accessed": 512}])
    rows.title = "HLO ops"
    # Of TEXT_FIRST the rows have name, total_ns, executions (in that order); text left-aligned,
    # numbers right-aligned, *_ns as time (headed without the unit: the cells carry theirs);
    # the column left out is counted.
    assert str(rows) == ("HLO ops: 2 rows\n"
                         "  name        total  executions\n"
                         "  fusion.3  1.50 ms           3\n"
                         "  dot.1     20.0 µs           1\n"
                         "  (1 more column: .to_pandas() or .columns())\n")
