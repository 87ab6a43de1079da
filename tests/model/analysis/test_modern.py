"""What changed since 2017, measured (model.analysis.modern) on a tiny random Llama: RoPE's score of a pair at
shifted positions is the model's own and stays put to float32 rounding, the table added does not keep it; the
key/value cache from each config's own fields; LayerNorm against RMSNorm."""
import numpy as np
import pytest
import torch

from model.analysis.modern import cache_shape, norms_of, reference_config, shifted_scores
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
    gpt2 = cache_shape("GPT-2 small", reference_config("gpt2"))
    llama3 = cache_shape("Llama-3-8B", reference_config("llama-3-8b"))
    bert = cache_shape("BERT", {"num_hidden_layers": 6, "num_attention_heads": 12, "hidden_size": 384})
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
