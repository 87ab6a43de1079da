"""TextEncoder and TextTransformer: token embeddings and positions on the hand-written stacks, and their traces."""
import math

import pytest
import torch
from torch import nn

from model import TextConfig, TextEncoder, TextTransformer
from model.positional import sinusoidal_table
from model.trace import ModelOutput

VOCAB, D, HEADS = 50, 16, 4


def text_encoder(seed=0, **kwargs):
    torch.manual_seed(seed)
    return TextEncoder(TextConfig(VOCAB, d_model=D, nhead=HEADS, num_layers=3, d_ff=32, max_len=20, **kwargs)).eval()


def ids_and_mask():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(VOCAB, (2, 7), generator=g)
    attention_mask = torch.ones(2, 7, dtype=torch.long)
    attention_mask[1, 4:] = 0
    return ids, attention_mask


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_text_encoder(positional, norm_first, h):
    model = text_encoder(positional=positional, norm_first=norm_first)
    ids, attention_mask = ids_and_mask()
    out = model(ids, attention_mask)
    assert isinstance(out, ModelOutput) and out.trace is None and out.pooler_output is None
    assert out.last_hidden_state.shape == (2, 7, D)
    assert len(out.attentions) == 3 and all(a.shape == (2, HEADS, 7, 7) for a in out.attentions)
    for probs in out.attentions:
        assert torch.all(probs[1, :, :, 4:] == 0.0)  # padded keys
        h.close(probs.sum(-1), torch.ones(2, HEADS, 7))

    recorded = model(ids, attention_mask, record=True)
    emb, trace = recorded.trace.embeddings, recorded.trace
    h.close(emb.token, model.embedding.token_embedding(ids) * math.sqrt(D))
    expected_position = sinusoidal_table(7, D) if positional == "sinusoidal" else model.embedding.position.weight[:7]
    assert emb.position.shape == (1, 7, D)
    h.close(emb.position[0], expected_position)
    h.close(emb.summed, emb.token + emb.position)
    h.close(emb.output, emb.summed)  # dropout is off in eval
    assert emb.token_type is None
    h.check_stack(trace, 3)
    assert trace.attentions == recorded.attentions
    h.close(recorded.last_hidden_state, out.last_hidden_state)
    h.close(trace.output, out.last_hidden_state)
    assert isinstance(model.encoder.norm, nn.LayerNorm) == norm_first
    final = model.encoder.norm(trace.layers[-1].output) if norm_first else trace.layers[-1].output
    h.close(out.last_hidden_state, final)

    ref = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, HEADS, 32, activation="gelu", batch_first=True,
                                                           norm_first=norm_first),
                                3, nn.LayerNorm(D) if norm_first else None, enable_nested_tensor=False).eval()
    ref.load_state_dict(model.encoder.state_dict(), strict=True)
    h.close(out.last_hidden_state, ref(emb.output, src_key_padding_mask=attention_mask == 0))


def test_text_encoder_options_and_errors(h):
    model = text_encoder()
    ids, _ = ids_and_mask()
    assert model(ids, output_attentions=False).attentions is None
    h.close(model(ids).last_hidden_state, model(ids, torch.ones_like(ids)).last_hidden_state)
    with pytest.raises(ValueError, match="longer than max_len"):
        model(torch.zeros(1, 21, dtype=torch.long))
    with pytest.raises(ValueError, match="positional must be"):
        text_encoder(positional="rotary")
    before = h.module_state(model)
    model(ids, record=True)
    assert h.module_state(model) == before


def test_text_encoder_takes_an_attention_mask_on_top_of_padding():
    model = text_encoder()
    ids, attention_mask = ids_and_mask()
    out = model(ids, attention_mask, attn_mask=torch.ones(7, 7, dtype=torch.bool).triu(1))
    for probs in out.attentions:
        assert torch.all(probs.triu(1) == 0.0)  # causal
        assert torch.all(probs[1, :, :, 4:] == 0.0)  # and padded keys


def test_text_transformer_records_both_stacks_with_embeddings(h):
    torch.manual_seed(0)
    model = TextTransformer(TextConfig(VOCAB, d_model=D, nhead=HEADS, num_layers=2, d_ff=32, max_len=20)).eval()
    src, tgt = torch.randint(VOCAB, (1, 6)), torch.randint(VOCAB, (1, 4))
    out, none = model(src, tgt)
    assert none is None and out.shape == (1, 4, D)
    recorded, trace = model(src, tgt, record=True)
    h.close(recorded, out)
    assert trace.encoder.embeddings.token.shape == (1, 6, D) and trace.decoder.embeddings.token.shape == (1, 4, D)
    for layer in trace.decoder.layers:
        assert layer.self_attn.probs.shape == (1, HEADS, 4, 4)
        assert torch.all(layer.self_attn.probs.triu(1) == 0.0)  # the target cannot see its future
        assert layer.cross_attn.probs.shape == (1, HEADS, 4, 6)
        h.close(layer.cross_attn.probs.sum(-1), torch.ones(1, HEADS, 4))
