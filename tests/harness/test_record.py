"""harness.record: a benchmark's printed tables kept in bench/results/<script>.md, replacing the last run's block and
keeping the notes written around it."""
import sys

from harness.record import BEGIN, END, keep, recorded, run


def test_a_run_is_appended_once_then_replaced_and_the_notes_stay(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench/forward.py", "--lengths", "16"])
    (tmp_path / "forward.md").write_text("# notes\n\nWhat the figures mean.\n", encoding="utf-8")
    keep("bench/forward.py", "| a | b |\n|---|---|\n| 1 | 2 |\n", 3.2, tmp_path)
    first = (tmp_path / "forward.md").read_text(encoding="utf-8")
    assert first.startswith("# notes\n\nWhat the figures mean.\n\n" + BEGIN)
    assert "`python bench/forward.py --lengths 16`" in first and "| 1 | 2 |" in first and first.count(BEGIN) == 1
    keep("bench/forward.py", "| a | b |\n|---|---|\n| 3 | 4 |\n", 1.0, tmp_path)
    second = (tmp_path / "forward.md").read_text(encoding="utf-8")
    assert second.count(BEGIN) == second.count(END) == 1 and "| 3 | 4 |" in second and "| 1 | 2 |" not in second
    assert second.startswith("# notes\n\nWhat the figures mean.\n")


def test_recorded_prints_and_keeps_and_a_failed_run_keeps_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("harness.record.RESULTS", tmp_path)
    with recorded("bench/gil.py"):
        print("| x |")
    assert "| x |" in capsys.readouterr().out and "| x |" in (tmp_path / "gil.md").read_text(encoding="utf-8")
    try:
        with recorded("bench/coldstart.py"):
            print("half a table")
            raise RuntimeError("the server did not start")
    except RuntimeError:
        pass
    assert not (tmp_path / "coldstart.md").exists()


def test_run_returns_what_main_returns_and_keeps_its_output(tmp_path, monkeypatch):
    monkeypatch.setattr("harness.record.RESULTS", tmp_path)
    assert run("bench/load.py", lambda: print("| errors 0 |") or 1) == 1
    assert "| errors 0 |" in (tmp_path / "load.md").read_text(encoding="utf-8")
