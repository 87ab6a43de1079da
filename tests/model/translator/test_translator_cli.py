"""python -m model.translator: one sentence, a file, sampling and beam options, unknown characters, empty lines,
mistakes said in one line (no traceback)."""
import io
import subprocess
import sys
from pathlib import Path

import pytest

import model.translator.__main__ as translator_cli

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def cli(capsys, monkeypatch):
    """The command in this process (a subprocess costs seconds of start-up): (exit code, stdout, stderr)."""
    def run(*args, stdin=None):
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        code = translator_cli.main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_the_tutorials_sentence_as_the_readme_writes_the_command():
    done = subprocess.run([sys.executable, "-m", "model.translator", "我有一只猫"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "I have a cat\n", "")


def test_a_file_one_line_out_per_line_in_with_empty_lines_kept(cli, tmp_path):
    f = tmp_path / "in.txt"
    f.write_text("我有一只猫\n\n昨天你买了三本书吗？\n 他 不 喜欢 狗 \n", encoding="utf-8")
    code, out, err = cli("--file", str(f))
    assert (code, err) == (0, "")
    assert out == "I have a cat\n\ndid you buy three books yesterday ?\nhe does not like dogs\n"
    assert cli("--file", "-", stdin="她有两个孩子\n")[1] == "she has two children\n"


def test_characters_never_seen_are_named_on_stderr_and_it_still_answers(cli):
    code, out, err = cli("我有一只狮子", "我有一只猫")
    assert code == 0 and len(out.splitlines()) == 2 and out.splitlines()[1] == "I have a cat"
    assert "狮" in err and "never seen" in err and "Traceback" not in err and "子" not in err.split(":")[-1]


def test_sampling_is_reproducible_and_beam_and_ablation_answer(cli):
    hot = ("--sample", "--temperature", "3", "--top-k", "5", "--top-p", "0.9", "--seed", "4")
    sentences = ["明天老师在公园看见三只小鸟吗"] * 6
    first, again = cli(*hot, *sentences), cli(*hot, *sentences)
    assert first == again and first[0] == 0 and len(first[1].splitlines()) == 6
    assert cli("--beam", "3", "我有一只猫")[1] == "I have a cat\n"
    assert cli("--ablate", "decoder.0.0", "我有一只猫")[0] == 0


def test_mistakes_are_one_line_and_exit_2(cli, tmp_path):
    (tmp_path / "config.json").write_text('{"width": 3}')
    for args in (["--temperature", "0.5", "我有一只猫"], ["--sample", "--temperature", "0", "x"],
                 ["--beam", "0", "x"], ["--ablate", "cross.7.0", "x"], ["--file", "/no/such/file"], [],
                 ["--beam", "2", "--sample", "x"], ["--model", str(tmp_path / "none"), "x"],
                 ["--model", str(tmp_path), "x"]):
        code, out, err = cli(*args)
        assert code == 2 and out == "" and err.startswith("error: ") and "Traceback" not in err, args
