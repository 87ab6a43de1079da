"""GPT-2 checkpoints as model sources: an operator's directory and the Hugging Face cache, with their own byte-level
BPE tokenizer; the toy GPT's word vocabulary; a directory without a tokenizer is a model but not a source."""
import shutil

import pytest
import torch

from model.family import Reads
from model.gpt import GPT, GPTConfig
from model.gpt.source import LoadedGPT
from model.gpt.toy import save
from model.gpt.vocabulary import WordVocabulary
from model.loading.checkpoint import CheckpointError
from model.loading.footprint import module_bytes
from model.loading.sources import footprint, load
from tests.model.gpt.gpt_checkpoints import gpt2_tokenizer, save_tiny_gpt2
from tests.model.loading.environs import by_key, fake_cache, isolated
from training.toy_language import english_vocabulary


@pytest.fixture
def gpt2_dir(tmp_path):
    directory = save_tiny_gpt2(tmp_path / "tiny-gpt2")  # vocabulary of 50 ids
    return gpt2_tokenizer(directory)


def test_an_operator_gpt2_directory_is_a_source(gpt2_dir, tmp_path):
    source = by_key(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=gpt2_dir))["dir:tiny-gpt2"]
    assert source.available and "2 layers, 4 heads" in source.reason
    loaded = load(source)
    assert isinstance(loaded.model, GPT) and loaded.facts.kind == "gpt"
    encoded = loaded.encode("attention is all")
    assert encoded.tokens and max(encoded.input_ids[0].tolist()) < 50
    with torch.inference_mode():
        out = loaded.model(encoded.input_ids)
    assert out.logits.shape == (1, len(encoded.tokens), 50)
    assert module_bytes(loaded.model) <= footprint(source)


def test_the_hugging_face_cache_lists_gpt2(gpt2_dir, tmp_path):
    cache = tmp_path / "hub"
    fake_cache(cache, "org/tiny-gpt2", gpt2_dir)
    source = by_key({"HF_HUB_CACHE": str(cache)})["hf:org/tiny-gpt2"]
    assert source.available and isinstance(load(source).model, GPT)


def test_without_a_tokenizer_it_loads_as_a_model_but_the_pages_are_told(tmp_path):
    directory = save_tiny_gpt2(tmp_path / "bare")
    assert GPT.from_pretrained(directory).config.n_layer == 2
    source = by_key(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=directory))["dir:bare"]
    assert not source.available and "has no tokenizer" in source.reason
    with pytest.raises(CheckpointError, match="not available"):
        load(source)


def test_an_option_not_implemented_makes_the_source_unavailable(gpt2_dir, tmp_path):
    broken = shutil.copytree(gpt2_dir, tmp_path / "inverse")
    text = (broken / "config.json").read_text().replace('"scale_attn_by_inverse_layer_idx": false',
                                                         '"scale_attn_by_inverse_layer_idx": true')
    (broken / "config.json").write_text(text)
    source = by_key(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=broken))["dir:inverse"]
    assert not source.available and "scale_attn_by_inverse_layer_idx" in source.reason
    assert str(tmp_path) not in source.reason


def test_a_toy_gpt_directory_reads_words(tmp_path):
    vocabulary = WordVocabulary.of(english_vocabulary())
    directory = tmp_path / "toy"
    save(GPT(GPTConfig(len(vocabulary), 16, 32, 2, 4)).eval(), vocabulary, directory)
    loaded = load(by_key(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=directory))["dir:toy"])
    assert isinstance(loaded, LoadedGPT) and loaded.source.reads == Reads.TOY_ENGLISH  # its unknown words named so
    encoded = loaded.encode("The teacher saw a zebra.")
    assert encoded.tokens == ("the", "teacher", "saw", "a", "<unk>", ".") and encoded.unknown == ("zebra",)
    long = loaded.encode(" ".join(["cat"] * 20))
    assert long.truncated and long.total_tokens == 20 and long.input_ids.shape == (1, 16)
    assert loaded.facts.special_tokens.unk == ("<unk>", 0)


def test_a_bert_directory_with_a_stray_words_file_is_still_bert(tiny, tmp_path):
    directory = shutil.copytree(tiny, tmp_path / "bert-words")
    (directory / "words.json").write_text('["<unk>", "."]')
    loaded = load(by_key(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=directory))["dir:bert-words"])
    assert not isinstance(loaded, LoadedGPT) and loaded.facts.kind == "bert"
