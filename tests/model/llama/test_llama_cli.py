"""python -m model.gpt serves every causal language model: a Llama directory (a tiny chat model converted from a GGUF
written in the test) and SmolLM2 (--model smollm2, slow), with --chat, the next tokens, --generate, --score,
--ablate, and the mistakes said in one line."""
import pytest
import torch
import transformers

from model.causal.decoding import generate
from model.gpt.__main__ import main
from model.llama import Llama
from model.llama.gguf import convert
from tests.model.llama.gguf_files import hf_llama, write_gguf


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chat")
    convert(write_gguf(hf_llama(), folder / "tiny.gguf"), folder / "hf")
    return folder / "hf"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_chat_applies_the_template_and_prints_the_answer_up_to_the_end_of_turn(directory, capsys):
    code, out, err = run(capsys, "--model", directory, "--chat", "the cat?", "--generate", "7")
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    ids = tokenizer.apply_chat_template([{"role": "user", "content": "the cat?"}], add_generation_prompt=True,
                                        return_dict=True)["input_ids"]
    assert tokenizer.decode(ids).endswith("<|im_start|>assistant\n")
    with torch.inference_mode():
        written = generate(Llama.from_pretrained(directory), torch.tensor(ids), 7, stop={2}).written.tolist()
    expected = tokenizer.decode([i for i in written if i != 2])
    assert (code, err) == (0, "")
    assert out == expected.replace("\n", "␊") + "\n"  # one line: a newline shown as its picture


def test_a_llama_directory_reads_by_its_tokenizer(directory, capsys):
    code, out, _ = run(capsys, "the cat", "--model", directory)
    assert code == 0 and len(out.splitlines()) == 10
    assert abs(sum(float(line.rsplit("\t", 1)[1]) for line in out.splitlines()) - 1) < 1  # probabilities
    code, out, _ = run(capsys, "the cat", "--model", directory, "--generate", "4", "--ablate", "1.3")
    assert code == 0 and out.endswith("\n")


def test_mistakes_are_one_line(directory, capsys):
    assert run(capsys, "the", "--model", directory, "--ablate", "2.0")[2] == \
        "error: no head 2.0 in a model of 2 layers x 4 heads\n"
    assert run(capsys, "the", "--model", directory, "--chat", "hi")[2].startswith("error: --chat QUESTION is")


@pytest.mark.slow
def test_smollm2_answers_a_question_and_knows_paris(capsys):
    code, out, err = run(capsys, "--model", "smollm2", "--chat",
                         "What is attention in a Transformer? Answer in one sentence.")
    assert code == 0, err
    assert out.startswith("Attention is") and "focus" in out
    code, out, _ = run(capsys, "The capital of France is", "--model", "smollm2")
    assert out.splitlines()[0].split("\t")[0] == " Paris"
