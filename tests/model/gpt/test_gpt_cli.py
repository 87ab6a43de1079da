"""python -m model.gpt: the next words, generation, --file --predict / --score, --ablate, --model, and mistakes."""
import math
import subprocess
import sys

import pytest
import torch

from model.causal.decoding import logits_of
from model.gpt import GPT, GPTConfig
from model.gpt.__main__ import main
from model.gpt.reading import WordReader
from model.gpt.toy import load, save
from model.gpt.vocabulary import WordVocabulary
from tests.model.gpt.gpt_checkpoints import gpt2_tokenizer, save_tiny_gpt2
from training.toy_language import english_vocabulary


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    """A random toy GPT written as the training command writes one."""
    vocabulary = WordVocabulary.of(english_vocabulary())
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=len(vocabulary), n_positions=16, n_embd=32, n_layer=2, n_head=4))
    out = tmp_path_factory.mktemp("gpt")
    save(model.eval(), vocabulary, out)
    return out


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_prompt_prints_the_ten_most_likely_next_words(directory, capsys):
    code, out, err = run(capsys, "the teacher saw", "--model", directory)
    rows = [line.split("\t") for line in out.splitlines()]
    model, vocabulary = load(directory)
    with torch.inference_mode():
        probs = torch.softmax(model(torch.tensor([vocabulary.ids(["the", "teacher", "saw"])])).logits[0, -1], -1)
    top = probs.topk(10)
    assert code == 0 and err == ""
    assert [w for w, _ in rows] == [vocabulary.tokens[i] for i in top.indices.tolist()]
    assert [float(p) for _, p in rows] == pytest.approx(top.values.tolist(), abs=1e-4)


def test_unknown_words_are_named_on_stderr_and_read_as_unk(directory, capsys):
    code, out, err = run(capsys, "The teacher zebra saw", "--model", directory)
    assert code == 0 and len(out.splitlines()) == 10
    assert err.endswith("read as <unk>: zebra\n")  # "The" reads as "the"


def test_generate_greedy_and_sampled(directory, capsys):
    code, out, _ = run(capsys, "I have", "--generate", 5, "--model", directory)
    assert code == 0 and len(out.split()) == 5
    sampled = [run(capsys, "I have", "--generate", 5, "--sample", "--temperature", 2, "--top-k", 20, "--top-p", 0.9,
                   "--seed", s, "--model", directory)[1] for s in (1, 1, 2)]
    assert sampled[0] == sampled[1] and len(sampled[0].split()) == 5


def test_predict_and_score_a_file(directory, tmp_path, capsys):
    lines = ["the teacher saw a cat", "I", "", "do you like dogs ?"]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n")
    code, predicted, _ = run(capsys, "--file", tmp_path / "in.txt", "--predict", "--model", directory)
    assert code == 0 and [len(p.split()) for p in predicted.split("\n")[:-1]] == [5, 1, 0, 5]
    code, scored, _ = run(capsys, "--file", tmp_path / "in.txt", "--score", "--model", directory)
    values = scored.split("\n")[:-1]
    assert code == 0 and values[1] == values[2] == "nan"
    model, vocabulary = load(directory)
    ids = torch.tensor([vocabulary.ids(lines[0].split())])
    with torch.inference_mode():
        logits = model(ids).logits[0]
    want = torch.nn.functional.cross_entropy(logits[:-1], ids[0, 1:])
    assert float(values[0]) == pytest.approx(float(want), abs=1e-4)
    assert predicted.split("\n")[0] == vocabulary.text(logits.argmax(-1).tolist())


def test_ablate_switches_heads_off(directory, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("the teacher saw a cat\n")
    plain = run(capsys, "--file", tmp_path / "in.txt", "--score", "--model", directory)[1]
    off = run(capsys, "--file", tmp_path / "in.txt", "--score", "--ablate", "1.2,0.3", "--model", directory)[1]
    model, vocabulary = load(directory)
    ids = torch.tensor([vocabulary.ids("the teacher saw a cat".split())])
    with torch.inference_mode():
        want = torch.nn.functional.cross_entropy(logits_of(model, ids, [(1, 2), (0, 3)])[0, :-1], ids[0, 1:])
    assert plain != off and float(off) == pytest.approx(float(want), abs=1e-4)


@pytest.mark.parametrize("argv, says", [
    ([], "give a prompt"),
    (["x", "--file", "f", "--score"], "not both"),
    (["--file", "f"], "one of --predict and --score"),
    (["x", "--predict"], "read --file"),
    (["x", "--generate", "-1"], "--generate"),
    (["x", "--top-k", "3"], "add --sample"),
    (["x", "--sample"], "--generate"),
    (["x", "--ablate", "7.0"], "no head 7.0"),
    (["x", "--ablate", "one"], "layer.head"),
    (["x", "--generate", "3", "--sample", "--temperature", "0"], "temperature"),
    (["--file", "/no/such/file", "--score"], "No such file"),
])
def test_a_mistake_prints_one_error_line_and_exits_2(directory, capsys, argv, says):
    code, out, err = run(capsys, *argv, "--model", directory)
    assert code == 2 and out == "" and err.startswith("error: ") and says in err and err.count("\n") == 1


def test_a_directory_that_is_not_a_gpt_is_a_mistake(tmp_path, capsys):
    code, _, err = run(capsys, "x", "--model", tmp_path)
    assert code == 2 and err.startswith("error: ") and str(tmp_path) not in err


def test_runs_as_a_module(directory):
    done = subprocess.run([sys.executable, "-m", "model.gpt", "I have", "--model", str(directory)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 10
    assert all(0 <= float(p) <= 1 and not math.isnan(float(p)) for p in (r.split("\t")[1] for r in
                                                                       done.stdout.splitlines()))


def test_a_hugging_face_gpt2_directory_reads_its_own_tokenizer(tmp_path, capsys):
    directory = gpt2_tokenizer(save_tiny_gpt2(tmp_path / "gpt2", "wide-ffn"))
    capsys.readouterr()  # what saving it printed
    code, out, err = run(capsys, "attention is", "--model", directory)
    assert code == 0 and err == "" and len(out.splitlines()) == 10
    code, out, _ = run(capsys, "attention is", "--generate", 3, "--model", directory)
    assert code == 0 and len(out) > 1 and out.count("\n") == 1  # one line, even when a token decodes to a newline
    (tmp_path / "in.txt").write_text("attention is all you need\n")
    code, out, _ = run(capsys, "--file", tmp_path / "in.txt", "--score", "--model", directory)
    assert code == 0 and float(out) > 0


def test_a_token_that_is_a_control_character_prints_as_its_picture(capsys, monkeypatch):
    """A byte-level BPE token can be a line feed or a carriage return: each word of the listing stays on its line."""
    monkeypatch.setattr(WordReader, "token", lambda self, i: "\r" if i % 2 else "\n")
    code, out, _ = run(capsys, "the teacher saw")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 10 and {line.split("\t")[0] for line in lines} <= {"\u240d", "\u240a"}
