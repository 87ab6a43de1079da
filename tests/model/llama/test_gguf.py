"""A Llama GGUF file, converted by model.llama.gguf, against transformers' own reading of the same file: equal
logits, attentions and hidden states (both de-quantize the same blocks), the same tokens and chat template. A wrong
un-permutation of W_Q and W_K keeps every shape and is caught. Tiny files written in the test (gguf_files.py)."""
import json

import numpy as np
import pytest
import torch
import transformers
from gguf import GGMLQuantizationType, GGUFReader
from gguf.quants import dequantize
from safetensors.torch import load_file

from model.llama import Llama, UnsupportedLlama, gguf_tensors
from model.llama.gguf import FILES, PREPARED, complete, convert, hf_name, prepare
from tests.model.llama.gguf_files import hf_llama, permute, write_gguf

TEXTS = ("the cat", "In 2024, 12345 cats sat on the mat.", "  spaces\n\nand\ttabs ", "héllo wörld 猫",
         "<|im_start|>user\nhi<|im_end|>")


def theirs(gguf_file):
    return transformers.AutoModelForCausalLM.from_pretrained(
        str(gguf_file.parent), gguf_file=gguf_file.name, attn_implementation="eager", dtype=torch.float32).eval()


@pytest.fixture(scope="module", params=[("tied", GGMLQuantizationType.Q4_1), ("untied", GGMLQuantizationType.Q8_0)],
                ids=["tied-q4_1", "untied-q8_0"])
def converted(request, tmp_path_factory):
    tied, matrices = request.param
    folder = tmp_path_factory.mktemp(f"gguf-{tied}")
    gguf_file = write_gguf(hf_llama(tied=tied == "tied"), folder / "tiny.gguf", matrices)
    convert(gguf_file, folder / "hf")
    return gguf_file, folder / "hf"


def test_the_conversion_writes_a_hugging_face_llama_directory(converted):
    gguf_file, directory = converted
    assert all((directory / f).is_file() for f in FILES)
    config = json.loads((directory / "config.json").read_text())
    assert (config["model_type"], config["num_attention_heads"], config["num_key_value_heads"]) == ("llama", 4, 2)
    assert config["rope_parameters"]["rope_theta"] == 100000.0
    assert not list(directory.parent.glob("*.part-*"))  # the temporary sibling is gone


def test_logits_attentions_and_hidden_states_equal_transformers_reading_of_the_gguf(converted):
    gguf_file, directory = converted
    ids = torch.randint(3, 267, (2, 19), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = theirs(gguf_file)(ids, output_attentions=True, output_hidden_states=True)
        got = Llama.from_pretrained(directory)(ids, output_hidden_states=True)
    torch.testing.assert_close(got.logits, expected.logits, atol=1e-5, rtol=1e-5)
    for a, b in zip(got.attentions, expected.attentions, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    for a, b in zip(got.hidden_states, expected.hidden_states, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_a_wrong_unpermutation_keeps_every_shape_and_changes_the_answers(converted, tmp_path, monkeypatch):
    gguf_file, _ = converted
    monkeypatch.setattr(gguf_tensors, "unpermuted", lambda w, heads: w)  # W_Q, W_K left in llama.cpp's order
    convert(gguf_file, tmp_path / "wrong")
    ids = torch.randint(3, 267, (1, 19), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        wrong = Llama.from_pretrained(tmp_path / "wrong")(ids).logits  # loads: every shape is right
        expected = theirs(gguf_file)(ids).logits
    assert (wrong - expected).abs().max() > 1e-2


def test_the_tokenizer_and_chat_template_equal_transformers_reading_of_the_gguf(converted):
    gguf_file, directory = converted
    expected = transformers.AutoTokenizer.from_pretrained(str(gguf_file.parent), gguf_file=gguf_file.name)
    ours = transformers.AutoTokenizer.from_pretrained(directory)
    for text in TEXTS:
        assert ours(text)["input_ids"] == expected(text)["input_ids"], text
        assert ours.decode(ours(text)["input_ids"]) == text
    assert ours("<|im_start|>")["input_ids"] == [1]  # a special token is one token
    chat = [{"role": "user", "content": "What is attention?"}]
    assert ours.apply_chat_template(chat, add_generation_prompt=True, tokenize=False) == \
        expected.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    assert (ours.eos_token, ours.bos_token) == ("<|im_end|>", "<|im_start|>")


def test_a_tokenizer_split_not_known_here_is_refused_not_guessed(tmp_path):
    gguf_file = write_gguf(hf_llama(), tmp_path / "other.gguf", pre="some-new-split")
    with pytest.raises(UnsupportedLlama, match="some-new-split"):
        convert(gguf_file, tmp_path / "hf")
    assert not (tmp_path / "hf").exists()
    assert not list(tmp_path.glob("*.part-*"))


def test_a_prepared_folder_reads_the_weights_from_the_gguf_bit_for_bit(converted, tmp_path):
    """prepare + gguf_tensors.read (torch, at every start) give exactly the gguf package's numpy de-quantization,
    W_Q and W_K in Hugging Face's order (llama.cpp's permute of them gives the file's rows back), and convert wrote
    those same tensors, without prepare writing any."""
    gguf_file, directory = converted
    prepare(gguf_file, tmp_path / "prepared")
    assert complete(tmp_path / "prepared", PREPARED) and not (tmp_path / "prepared" / "model.safetensors").exists()
    assert (tmp_path / "prepared" / "tokenizer.json").read_text() == (directory / "tokenizer.json").read_text()
    read = gguf_tensors.read(gguf_file, gguf_tensors.read_index(tmp_path / "prepared" / gguf_tensors.INDEX))
    heads = {".attn_q.": 4, ".attn_k.": 2}
    for t in GGUFReader(str(gguf_file)).tensors:
        expected = np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32).reshape(
            tuple(reversed(t.shape.tolist())))
        ours = read[hf_name(t.name)].numpy()
        n = next((n for k, n in heads.items() if k in t.name), 0)
        assert np.array_equal(permute(ours, n) if n else ours, expected), t.name
    written = load_file(directory / "model.safetensors")
    assert read.keys() == written.keys()
    for name, tensor in written.items():
        assert torch.equal(read[name], tensor), name


def test_an_index_refuses_another_file(converted, tmp_path):
    gguf_file, _ = converted
    prepare(gguf_file, tmp_path / "prepared")
    index = gguf_tensors.read_index(tmp_path / "prepared" / gguf_tensors.INDEX)
    other = tmp_path / "other.gguf"
    other.write_bytes(gguf_file.read_bytes() + b"\0" * 32)
    with pytest.raises(ValueError, match="index says"):
        gguf_tensors.read(other, index)
