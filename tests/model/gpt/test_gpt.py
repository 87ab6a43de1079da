"""model.gpt.GPT against transformers.GPT2LMHeadModel (eager): logits, attentions and hidden states within 1e-5,
on random checkpoints of several sizes saved by Hugging Face, with and without padding."""
import dataclasses

import pytest
import torch

from model.gpt import GPT, GPTConfig
from model.gpt.toy import save
from model.loading.checkpoint import CheckpointError
from model.masks import is_blocked
from tests.model.bert.bert_checkpoints import as_binary
from tests.model.gpt.gpt_checkpoints import SIZES, edit_config, reference, save_tiny_gpt2


def batch(vocab: int, positions: int, padding: str, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (3, positions), generator=g)
    mask = torch.ones(3, positions, dtype=torch.long)
    if padding == "right":
        mask[1, -3:] = 0
    elif padding == "left":  # the first queries see nothing but padding
        mask[2, :4] = 0
    return ids, (None if padding == "none" else mask)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("padding", ["none", "right", "left"])
def test_equals_hugging_face_gpt2(tmp_path, size, padding, h):
    directory = save_tiny_gpt2(tmp_path / size, size)
    ours, ref = GPT.from_pretrained(directory), reference(directory)
    ids, mask = batch(ref.config.vocab_size, ref.config.n_positions, padding)
    with torch.no_grad():
        want = ref(ids, attention_mask=mask, output_attentions=True, output_hidden_states=True)
        got = ours(ids, mask, output_hidden_states=True)
    assert not ours.training and got.logits.shape == want.logits.shape
    h.close(got.logits, want.logits, 1e-5)
    assert len(got.attentions) == len(want.attentions) == ref.config.n_layer
    for a, b in zip(got.attentions, want.attentions):
        h.close(a, b, 1e-5)
    assert len(got.hidden_states) == len(want.hidden_states) == ref.config.n_layer + 1
    for a, b in zip(got.hidden_states, want.hidden_states):
        h.close(a, b, 1e-5)


def test_pytorch_model_bin_reads_with_weights_only(tmp_path, h):
    directory = save_tiny_gpt2(tmp_path / "st")
    binary = as_binary(directory, tmp_path / "bin")
    ids, _ = batch(50, 16, "none")
    with torch.no_grad():
        h.close(GPT.from_pretrained(binary)(ids).logits, reference(directory)(ids).logits, 1e-5)


def test_the_future_is_never_seen(tmp_path):
    model = GPT.from_pretrained(save_tiny_gpt2(tmp_path / "m"))
    ids, _ = batch(50, 16, "none")
    changed = ids.clone()
    changed[:, 10:] = (changed[:, 10:] + 1) % 50
    with torch.no_grad():
        a, b = model(ids), model(changed)
    assert torch.equal(a.logits[:, :10], b.logits[:, :10])
    assert all(bool((p.triu(1) == 0).all()) for p in a.attentions)


@pytest.mark.parametrize("change, says", [
    ({"model_type": "bert"}, "not GPT-2"),
    ({"scale_attn_by_inverse_layer_idx": True}, "scale_attn_by_inverse_layer_idx"),
    ({"scale_attn_weights": False}, "scale_attn_weights"),
    ({"add_cross_attention": True}, "add_cross_attention"),
    ({"tie_word_embeddings": False}, "tie_word_embeddings"),
    ({"activation_function": "swish"}, "activation_function"),
    ({"n_embd": 30}, "not divisible"),
    ({"n_layer": 10_000}, "limit"),
    ({"n_positions": 0}, "positive integer"),
    ({"layer_norm_epsilon": "x"}, "layer_norm_epsilon"),
])
def test_options_not_implemented_are_refused_with_the_reason(tmp_path, change, says):
    directory = save_tiny_gpt2(tmp_path / "m")
    edit_config(directory, **change)
    with pytest.raises(CheckpointError, match=says):
        GPT.from_pretrained(directory)


def test_a_wrong_shape_is_named_by_its_hugging_face_name(tmp_path):
    directory = save_tiny_gpt2(tmp_path / "m")
    edit_config(directory, n_inner=70)
    with pytest.raises(CheckpointError, match=r"transformer\.h\.0\.mlp\.c_fc\.weight"):
        GPT.from_pretrained(directory)


def test_parameter_shapes_and_count_are_the_module_s():
    config = GPTConfig(vocab_size=73, n_positions=64, n_embd=64, n_layer=2, n_head=4)
    model = GPT(config)
    assert config.parameter_shapes() == {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert config.parameter_count == sum(p.numel() for p in model.parameters())


def test_facts_say_a_causal_language_model():
    facts = GPT(GPTConfig(vocab_size=10, n_positions=8, n_embd=16, n_layer=2, n_head=2)).facts
    assert (facts.kind, facts.norm_first, facts.final_norm, facts.positional) == ("gpt", True, True, "learned")
    assert (facts.layers, facts.heads, facts.d_model, facts.d_ff) == (2, 2, 16, 64)


def test_recorded_trace_and_partial_trace(tmp_path, h):
    model = GPT.from_pretrained(save_tiny_gpt2(tmp_path / "m", "wide-ffn"))
    ids, mask = batch(97, 12, "right")
    with torch.inference_mode():
        out = model(ids, mask)
        traced = model(ids, mask, record=True)
        partial = model(ids, mask, record=True, until=1)
    trace = traced.trace
    assert len(trace.layers) == 3 and len(partial.trace.layers) == 2 and partial.logits is None
    for a, b in zip(out.attentions, trace.attentions):
        assert torch.equal(a, b)
    first = trace.layers[0].self_attn
    assert bool(is_blocked(first.mask[..., 0, 1]).all())  # the causal mask is in the trace
    h.close(torch.softmax(first.scores + first.mask, -1), first.probs, 1e-6)
    h.close(trace.output, out.last_hidden_state, 0)
    for a, b in zip(partial.trace.layers, trace.layers[:2]):
        assert torch.equal(a.output, b.output)
    with torch.inference_mode():
        inputs, attentions, _ = model.inputs_and_attentions(ids, mask)
        again = [model.trace_layer(i, layer.input, mask) for i, layer in enumerate(trace.layers)]
    for i, layer in enumerate(trace.layers):
        assert torch.equal(inputs[i], layer.input) and torch.equal(attentions[i], layer.self_attn.probs)
        assert torch.equal(again[i].output, layer.output)


def test_an_extra_mask_adds_to_the_causal_one():
    model = GPT(GPTConfig(vocab_size=10, n_positions=8, n_embd=16, n_layer=1, n_head=2)).eval()
    ids = torch.arange(6)[None]
    extra = torch.zeros(6, 6, dtype=torch.bool)
    extra[:, 0] = True
    extra[0, 0] = False
    with torch.no_grad():
        probs = model(ids, attn_mask=extra).attentions[0][0]
    assert bool((probs[:, 1:, 0] == 0).all()) and bool((probs.triu(1) == 0).all())


def test_the_config_is_one_small_dataclass():
    assert {f.name for f in dataclasses.fields(GPTConfig)} == {
        "vocab_size", "n_positions", "n_embd", "n_layer", "n_head", "n_inner", "activation_function",
        "layer_norm_epsilon", "dropout"}


def test_a_gpt_saved_as_gpt2_reads_back_the_same_in_both_libraries(tmp_path, h):
    torch.manual_seed(2)
    model = GPT(GPTConfig(vocab_size=30, n_positions=12, n_embd=24, n_layer=2, n_head=3, n_inner=40)).eval()
    save(model, None, tmp_path)
    ids, _ = batch(30, 12, "none")
    with torch.no_grad():
        want = model(ids).logits
        h.close(GPT.from_pretrained(tmp_path)(ids).logits, want, 0)
        h.close(reference(tmp_path)(ids).logits, want, 1e-5)
