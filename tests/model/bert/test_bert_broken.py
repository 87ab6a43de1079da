"""Every way a BERT checkpoint directory can be broken, and errors while reading one: each said plainly."""
import json
import os
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from model.bert import BertModel, CheckpointError

# --- broken checkpoints ------------------------------------------------------------------------

def edit_config(**changes):
    def edit(directory):
        config = json.loads((directory / "config.json").read_text())
        config.update(changes)
        (directory / "config.json").write_text(json.dumps(config))
    return edit


def drop_tensor(name):
    def edit(directory):
        state = load_file(directory / "model.safetensors")
        del state[name]
        save_file(state, directory / "model.safetensors")
    return edit


def truncate(filename):
    def edit(directory):
        data = (directory / filename).read_bytes()
        (directory / filename).write_bytes(data[: len(data) // 2])
    return edit


def write(filename, text):
    return lambda directory: (directory / filename).write_text(text)


def to_binary(content, **save_options):
    def edit(directory):
        (directory / "model.safetensors").unlink()
        torch.save(content, directory / "pytorch_model.bin", **save_options)
    return edit


def reshape(name, shape):
    def edit(directory):
        state = load_file(directory / "model.safetensors")
        state[name] = torch.zeros(shape)
        save_file(state, directory / "model.safetensors")
    return edit


class Exploit:
    def __reduce__(self):
        return os.system, ("echo this must never run",)


BROKEN = {
    "no config.json": (lambda d: (d / "config.json").unlink(), "has no config.json"),
    "gpt2 config": (edit_config(model_type="gpt2"), "describes a 'gpt2' model, not BERT"),
    "invalid JSON": (write("config.json", '{"model_type": "bert",'), "is not valid JSON"),
    "JSON list": (write("config.json", "[1, 2]"), "does not hold a JSON object"),
    "unknown option": (edit_config(position_embedding_type="relative_key"), "position_embedding_type 'relative_key'"),
    "unknown activation": (edit_config(hidden_act="swish"), "hidden_act 'swish' is not supported"),
    "heads do not divide": (edit_config(num_attention_heads=5),
                            "hidden_size 32 is not divisible by num_attention_heads 5"),
    "zero heads": (edit_config(num_attention_heads=0), "num_attention_heads"),
    "size as text": (edit_config(vocab_size="99"), "vocab_size"),
    "no weights": (lambda d: (d / "model.safetensors").unlink(), "has no weights"),
    "truncated safetensors": (truncate("model.safetensors"), "model.safetensors could not be read"),
    "missing tensor": (drop_tensor("embeddings.LayerNorm.weight"), "no tensor for 'embeddings.LayerNorm.weight'"),
    "missing key projection": (drop_tensor("encoder.layer.1.attention.self.key.weight"),
                               "no tensor for 'encoder.layer.1.attention.self.query/key/value.weight'"),
    "hidden size mismatch": (edit_config(hidden_size=48), "config.json implies"),
    "intermediate size mismatch": (edit_config(intermediate_size=40),
                                   "'encoder.layer.0.intermediate.dense.weight' has shape (37, 32), "
                                   "but config.json implies (40, 32)"),
    "more layers than tensors": (edit_config(num_hidden_layers=3), "no tensor for 'encoder.layer.2."),
    "truncated bin": (lambda d: (to_binary(load_file(d / "model.safetensors"))(d), truncate("pytorch_model.bin")(d)),
                      "pytorch_model.bin could not be read"),
    "bin holding a list": (to_binary([1, 2, 3]), "does not hold a state dict"),
    "bin with a number for a tensor": (to_binary({"embeddings.word_embeddings.weight": 3}),
                                       "does not hold a state dict"),
    "bin with code": (to_binary({"x": Exploit()}), "pytorch_model.bin is not a safe checkpoint"),
    "legacy bin": (lambda d: to_binary(load_file(d / "model.safetensors"), _use_new_zipfile_serialization=False)(d),
                   "pytorch_model.bin is in torch's legacy format (torch < 1.6)"),
    "too many layers": (edit_config(num_hidden_layers=49), "num_hidden_layers is 49, above this server's limit of 48"),
    "absurd config": (edit_config(num_hidden_layers=100000, hidden_size=4096),
                      ("config.json: num_hidden_layers is 100000, above this server's limit of 48; it describes a "
                       "model of 26,9")),
    "q, k, v of different shapes": (reshape("encoder.layer.0.attention.self.key.weight", (16, 32)),
                                    ("'encoder.layer.0.attention.self.key.weight' has shape (16, 32), but "
                                     "'encoder.layer.0.attention.self.query.weight' has (32, 32)")),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_checkpoint(checkpoints, tmp_path, case, capfd):
    directory = shutil.copytree(checkpoints["base"], tmp_path / "broken")
    edit, message = BROKEN[case]
    edit(directory)
    with pytest.raises(CheckpointError) as error:
        BertModel.from_pretrained(directory)
    assert isinstance(error.value, ValueError)
    assert message in str(error.value)
    assert "must never run" not in capfd.readouterr().out  # weights_only: a pickle's code is never called


def test_missing_directory(tmp_path):
    with pytest.raises(CheckpointError, match="is not a directory"):
        BertModel.from_pretrained(tmp_path / "nowhere")
    (tmp_path / "file").write_text("x")
    with pytest.raises(CheckpointError, match="is not a directory"):
        BertModel.from_pretrained(tmp_path / "file")


# --- errors while reading -----------------------------------------------------------------------

ALLOCATOR = ("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried "
             "to allocate 838860800 bytes. Error code 12 (Cannot allocate memory)")


@pytest.mark.parametrize("error,message", [
    (RuntimeError(ALLOCATOR), "not enough memory: the server cannot hold this model now"),
    (MemoryError(), "not enough memory: the server cannot hold this model now"),
    (RuntimeError("Error(s) in loading state_dict for BertModel: size mismatch"),
     "its weights do not match its config (RuntimeError while reading them)"),
])
def test_errors_while_reading_are_said_plainly(checkpoints, monkeypatch, error, message):
    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(BertModel, "load_state_dict", fail)
    with pytest.raises(CheckpointError) as raised:
        BertModel.from_pretrained(checkpoints["base"])
    assert str(raised.value) == message
