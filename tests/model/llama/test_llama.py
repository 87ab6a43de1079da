"""The Llama family against transformers.LlamaForCausalLM (eager) with the same weights, saved offline with
save_pretrained: logits, every layer's attention and hidden states within 1e-5, for several sizes, one key/value head
(multi-query), a divisor of the heads and as many as the heads, two RoPE bases, tied and untied outputs, no padding,
right and left padding; the key/value cache writes what a full pass writes; an option not implemented is refused."""
import json

import pytest
import torch
import transformers

from model.llama import Llama, LlamaConfig, UnsupportedLlama
from model.llama import model as llama_model
from model.llama.attention import GROUPED_ROWS, grouped_context, grouped_scores, inverse_frequencies, rotate, rotation

CASES = {  # hidden, layers, heads, kv heads, head_dim, rope_theta, tied
    "multi-query": (64, 2, 4, 1, 16, 10000.0, True),
    "grouped": (48, 3, 6, 2, 8, 100000.0, False),
    "every-head": (32, 2, 4, 4, 8, 10000.0, False),
    "smollm2-shape": (36, 2, 9, 3, 4, 100000.0, True),  # SmolLM2's 9 query heads over 3, narrower
}


def hf_model(case: str, seed: int = 0) -> transformers.LlamaForCausalLM:
    hidden, layers, heads, kv, head_dim, theta, tied = CASES[case]
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(vocab_size=97, hidden_size=hidden, intermediate_size=2 * hidden + 8,
                                      num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv,
                                      head_dim=head_dim, rope_theta=theta, max_position_embeddings=128,
                                      tie_word_embeddings=tied, rms_norm_eps=1e-5, attn_implementation="eager")
    model = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():  # norms start at 1: make them matter
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(0.3 * torch.randn(p.shape))
    return model


@pytest.fixture(scope="module", params=list(CASES))
def pair(request, tmp_path_factory):
    theirs = hf_model(request.param)
    directory = tmp_path_factory.mktemp(request.param)
    theirs.save_pretrained(directory)
    return theirs, Llama.from_pretrained(directory), request.param


def close(a, b, atol=1e-5):
    torch.testing.assert_close(a, b, atol=atol, rtol=1e-5)


@pytest.mark.parametrize("padding", ["none", "right", "left"])
def test_logits_attentions_and_hidden_states_equal_hugging_face(pair, padding):
    theirs, ours, case = pair
    ids = torch.randint(0, 97, (3, 11), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(3, 11, dtype=torch.long)
    if padding == "right":
        mask[1, 7:] = 0
        mask[2, 9:] = 0
    elif padding == "left":
        mask[1, :4] = 0
        mask[2, :2] = 0
    with torch.no_grad():
        expected = theirs(ids, attention_mask=mask, output_attentions=True, output_hidden_states=True)
        got = ours(ids, attention_mask=mask, output_hidden_states=True)
    real = mask.bool()  # padding positions are compared nowhere: neither model's output there means anything
    close(got.logits[real], expected.logits[real])
    assert len(got.attentions) == len(expected.attentions) == ours.config.num_hidden_layers
    for a, b in zip(got.attentions, expected.attentions):
        assert a.shape == b.shape == (3, ours.config.num_attention_heads, 11, 11)
        close(a.permute(0, 2, 1, 3)[real], b.permute(0, 2, 1, 3)[real])
    assert len(got.hidden_states) == len(expected.hidden_states)
    for a, b in zip(got.hidden_states, expected.hidden_states):
        close(a[real], b[real], atol=2e-5)


def test_the_cache_writes_what_a_full_pass_writes(pair):
    _, ours, _ = pair
    ids = torch.randint(0, 97, (2, 9), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        full = ours(ids)
        first = ours(ids[:, :5], use_cache=True)
        logits = [first.logits]
        cache = first.cache
        for t in range(5, 9):
            step = ours(ids[:, t:t + 1], cache=cache)
            logits.append(step.logits)
            cache = step.cache
    close(torch.cat(logits, dim=1), full.logits)
    kv = ours.config.num_key_value_heads
    assert cache.self_attn[0].k.shape == (2, kv, 9, ours.config.head_dim)  # the cache keeps kv heads, not nh


def test_a_head_switched_off_changes_only_through_its_output(pair):
    _, ours, _ = pair
    ids = torch.randint(0, 97, (1, 8), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        whole = ours(ids)
        off = ours(ids, off=ours.heads_off([(0, 1)]))
    close(off.attentions[0], whole.attentions[0])  # its attention is still computed
    assert not torch.allclose(off.logits, whole.logits)


@pytest.mark.parametrize(("option", "value", "said"), [
    ("rope_scaling", {"rope_type": "linear", "factor": 2.0}, "rope_type"),
    ("attention_bias", True, "attention_bias"),
    ("mlp_bias", True, "mlp_bias"),
    ("sliding_window", 64, "sliding_window"),
    ("hidden_act", "gelu", "hidden_act"),
])
def test_an_option_not_implemented_makes_the_checkpoint_unavailable(tmp_path, option, value, said):
    theirs = hf_model("grouped")
    theirs.save_pretrained(tmp_path)
    raw = json.loads((tmp_path / "config.json").read_text())
    raw[option] = value
    if option == "rope_scaling":
        raw["rope_parameters"] = {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}
    (tmp_path / "config.json").write_text(json.dumps(raw))
    with pytest.raises(UnsupportedLlama, match=said):
        Llama.from_pretrained(tmp_path)


def test_the_config_reads_the_sizes_it_needs():
    config = LlamaConfig.from_hf({"model_type": "llama", "vocab_size": 10, "hidden_size": 8, "intermediate_size": 16,
                                  "num_hidden_layers": 1, "num_attention_heads": 2, "rope_theta": 500.0})
    assert (config.num_key_value_heads, config.head_dim, config.rope_theta) == (2, 4, 500.0)
    assert (config.n_layer, config.n_head, config.group) == (1, 2, 1)
    with pytest.raises(UnsupportedLlama, match="does not divide"):
        LlamaConfig(num_attention_heads=9, num_key_value_heads=2)


def test_the_trace_holds_swiglu_s_gate_and_up_as_hugging_face_computes_them(pair):
    """record=True: each layer's gate(x) before the SiLU and up(x), and their product, equal to Hugging Face's
    mlp.gate_proj and mlp.up_proj on the same normed input (captured with a forward hook)."""
    theirs, ours, _case = pair
    ids = torch.tensor([[3, 17, 5, 29, 8, 11]])
    seen = {}
    hooks = [layer.mlp.register_forward_hook(lambda m, args, out, i=i: seen.__setitem__(i, args[0]))
             for i, layer in enumerate(theirs.model.layers)]
    with torch.inference_mode():
        trace = ours(ids, record=True).trace
        theirs(ids)
    for hook in hooks:
        hook.remove()
    for i, (layer, hf) in enumerate(zip(trace.layers, theirs.model.layers, strict=True)):
        with torch.inference_mode():
            gate, up = hf.mlp.gate_proj(seen[i]), hf.mlp.up_proj(seen[i])
        close(layer.ffn_gate, gate)
        close(layer.ffn_up, up)
        close(layer.ffn_hidden, torch.nn.functional.silu(gate) * up)


@pytest.mark.parametrize("queries", [1, 7, GROUPED_ROWS + 1])
def test_grouped_key_heads_give_what_repeating_them_gives(queries):
    """Each key/value head serves its group of consecutive query heads (Hugging Face's repeat_kv), whether the
    product is grouped (a few queries) or the heads repeated (many)."""
    g = torch.Generator().manual_seed(5)
    q, probs = torch.randn(2, 6, queries, 8, generator=g), torch.rand(2, 6, queries, queries + 3, generator=g)
    k, v = (torch.randn(2, 2, queries + 3, 8, generator=g) for _ in range(2))
    close(grouped_scores(q, k), q @ k.repeat_interleave(3, dim=1).transpose(-2, -1))
    close(grouped_context(probs, v), probs @ v.repeat_interleave(3, dim=1))


def test_the_rotation_is_the_formula_s_bit_for_bit():
    """x cos + rotate_half(x) sin, rotate_half([a, b]) = [-b, a]: the sign moved into sin changes no bit."""
    x = torch.randn(2, 3, 5, 16, generator=torch.Generator().manual_seed(6))
    cos, signed_sin = rotation(4, 5, 16, 10000.0)
    half = torch.cat((-x[..., 8:], x[..., :8]), dim=-1)
    angles = torch.arange(4, 9).float()[:, None] * inverse_frequencies(16, 10000.0)
    sin = torch.cat((angles, angles), dim=-1).sin()
    assert torch.equal(rotate(x, cos, signed_sin), x * cos + half * sin)


@pytest.mark.parametrize("rows", [1, 8, 30, 300])
def test_the_output_layer_read_in_parts_gives_one_product_s_numbers(pair, monkeypatch, rows):
    """A few rows (a batch's step, a step's logit lens) are read against OUT_WORDS words of the output at a time: the
    same dot products, whether the output is tied to the embedding or its own matrix (bit for bit on SmolLM2's
    shapes, bench/output_layer.py; in general the kernel may add up in another order: float32's last place)."""
    _, ours, _ = pair
    monkeypatch.setattr(llama_model, "OUT_WORDS", 10)  # 97 words: ten parts
    weight = ours.embed_tokens.weight if ours.lm_head is None else ours.lm_head.weight
    hidden = torch.randn(rows, weight.size(1), generator=torch.Generator().manual_seed(rows))
    with torch.inference_mode():
        for h in (hidden, hidden[None]):
            close(ours.lm_logits(h), torch.nn.functional.linear(h, weight), atol=1e-6)
