"""What changed since 2017, measured (model.analysis.modern) on a tiny random Llama: RoPE's score of a pair at
shifted positions is the model's own and stays put to float32 rounding, the table added does not keep it; the
key/value cache from each config's own fields; LayerNorm against RMSNorm; SwiGLU's halves are the block's own; each
architecture's parameters are Hugging Face's count of the same config, its FLOPs torch's count of a block."""
import dataclasses

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from model.analysis.modern import architecture, gates_of, norms_of, reference_config, shifted_scores, translator_config
from model.llama import Llama, LlamaConfig


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(1)
    config = LlamaConfig(vocab_size=101, hidden_size=48, intermediate_size=96, num_hidden_layers=3,
                         num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=512, rope_theta=1e4)
    return Llama(config).eval()


@pytest.mark.parametrize(("layer", "head", "query", "key"), [(0, 0, 5, 2), (2, 5, 9, 0), (1, 3, 7, 7)])
def test_a_pair_moved_along_keeps_its_rope_score_and_it_is_the_models_own(model, layer, head, query, key):
    ids = torch.randint(0, 101, (12,))
    with torch.inference_mode():
        s = shifted_scores(model, ids, layer, head, query, key, 200)
        own = model(ids[None], record=True).trace.layers[layer].self_attn.scores[0, head, query, key]
    assert abs(float(s.rotated[0]) - float(own)) < 1e-5
    assert np.ptp(s.rotated) < 1e-4 < 0.1 < np.ptp(s.added)
    assert s.shifts.tolist() == list(range(200))


def test_the_cache_is_computed_from_each_configs_fields():
    gpt2 = architecture("GPT-2 small", reference_config("gpt2"))
    llama3 = architecture("Llama-3-8B", reference_config("llama-3-8b"))
    bert = architecture("BERT", {"num_hidden_layers": 6, "num_attention_heads": 12, "hidden_size": 384,
                                 "intermediate_size": 1536, "vocab_size": 30522})
    assert (gpt2.layers, gpt2.kv_heads, gpt2.head_dim, gpt2.bytes(1)) == (12, 12, 64, 2 * 12 * 12 * 64 * 2)
    assert (llama3.heads, llama3.kv_heads, llama3.head_dim) == (32, 8, 128)
    assert llama3.bytes(8192) == 2**30 and llama3.bytes(8192, heads=32) == 4 * 2**30  # 1 GiB, 4 GiB full MHA
    assert bert.bytes(1, dtype_bytes=4) == 2 * 6 * 12 * 32 * 4


def test_layernorm_centres_and_rmsnorm_keeps_the_mean():
    x = torch.tensor([3.0, -1.0, 2.0, 4.0])
    n = norms_of(x, eps=0.0)
    assert abs(n.layer_norm.mean()) < 1e-6 and abs(n.layer_norm.std() - 1) < 1e-5
    rms = float(x.pow(2).mean().sqrt())
    np.testing.assert_allclose(n.rms_norm, x.numpy() / rms, rtol=1e-6)
    assert n.rms_norm.mean() > 0 and (n.mean, n.rms) == pytest.approx((2.0, rms))


def _counted(model) -> int:
    return sum(p.numel() for p in model.parameters())


def test_an_architectures_parameters_are_hugging_faces_count_of_its_config():
    """GPT-2 small, Llama-3-8B and a BERT of MiniLM's shape, built by transformers on the meta device (no memory)."""
    transformers = pytest.importorskip("transformers")
    minilm = {"architectures": ["BertModel"], "hidden_size": 384, "intermediate_size": 1536, "num_attention_heads": 12,
              "num_hidden_layers": 6, "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2,
              "hidden_act": "gelu"}
    with torch.device("meta"):
        gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(**reference_config("gpt2")))
        llama3 = transformers.LlamaForCausalLM(transformers.LlamaConfig(**reference_config("llama-3-8b")))
        bert = transformers.BertModel(transformers.BertConfig(**minilm))
    for name, config, model in (("gpt2", reference_config("gpt2"), gpt2),
                                ("llama", reference_config("llama-3-8b"), llama3), ("bert", minilm, bert)):
        a = architecture(name, config)
        assert sum(a.params().values()) == _counted(model), name
    assert _counted(gpt2) == 124_439_808 and _counted(llama3) == 8_030_261_248  # as published


def test_the_2017_block_is_the_translators_own():
    from model.translator import load_shipped  # noqa: PLC0415

    layer = load_shipped().transformer.encoder.layers[0]
    a = architecture("2017", translator_config())
    assert sum(a.block_params().values()) == sum(p.numel() for p in layer.parameters())
    assert (a.ffn, a.norm, a.position, a.pre_norm, a.heads) == ("relu", "layer", "sinusoidal", False, 4)


def test_a_blocks_flops_for_a_token_are_torchs_count(model):
    """A block's forward over T tokens computes every query against every key (the causal mask skips none): T times
    the FLOPs of one token attending to T keys."""
    a = architecture("tiny", dataclasses.asdict(model.config))  # a Llama's config has Hugging Face's names
    assert sum(a.block_params().values()) == sum(p.numel() for p in model.blocks[0].parameters())
    T = 17
    x = torch.randn(1, T, 48)
    with torch.inference_mode(), FlopCounterMode(display=False) as counter:
        model.blocks[0].run(x, mask=model.causal_attention_mask(T))
    assert counter.get_total_flops() == T * sum(a.block_flops(T).values())


def test_swiglus_halves_are_the_blocks_own(model):
    ids = torch.randint(0, 101, (10,))
    layer = 1
    with torch.inference_mode():
        g = gates_of(model, ids, layer)
        block = model.blocks[layer]
        x = model.embed(ids[None].clone(), None, False)[0]
        x = model.layer_output(0, x)
        mid = block.run(x, mask=model.causal_attention_mask(10), ffn=False).x
        out = mid + block.mlp.down_proj(torch.from_numpy(g.product))
        np.testing.assert_allclose(out[0].numpy(), model.layer_output(layer, x)[0].numpy(), rtol=1e-5, atol=1e-5)
    edges, shares = g.histogram()
    assert shares.sum() == pytest.approx(1.0) and len(edges) == len(shares) + 1
    peak = np.abs(g.product).max(axis=0)
    strongest = g.strongest(5)
    assert list(peak[strongest]) == sorted(peak, reverse=True)[:5]
    measured = g.shares()
    assert measured["below_zero"] == pytest.approx(float((g.gate < 0).mean()))
    assert 0 < measured["negative_product"] < 1
