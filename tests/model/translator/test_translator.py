"""The translator is our Transformer: equal to torch.nn.Transformer with the same embeddings and projection, it says
what it is as data, records traces like the other models, and saves and loads through safetensors only."""
import math

import pytest
import torch
from torch import nn

from model.facts import TRANSLATOR
from model.masks import causal_mask
from model.translator import Translator
from model.translator.vocabulary import PAD_ID
from tests.model.translator.translators import SOURCES, TARGETS, ids, random_translator
from training.toy_language import chinese_vocabulary, english_vocabulary


def sinusoidal(positions: int, d: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...), written again here, independently."""
    pe = torch.zeros(positions, d, dtype=torch.float64)
    for pos in range(positions):
        for i in range(0, d, 2):
            pe[pos, i] = math.sin(pos / 10000 ** (i / d))
            pe[pos, i + 1] = math.cos(pos / 10000 ** (i / d))
    return pe.float()


@pytest.mark.parametrize("seed", [0, 1])
def test_logits_equal_torch_nn_transformer_with_the_same_embeddings_and_projection(seed):
    model = random_translator(seed)
    c = model.config
    reference = nn.Transformer(c.d_model, c.nhead, c.num_layers, c.num_layers, c.d_ff, c.dropout, "relu",
                               batch_first=True).eval()
    reference.load_state_dict(model.transformer.state_dict(), strict=True)
    src_embedding, tgt_embedding = nn.Embedding(len(model.source), c.d_model), nn.Embedding(len(model.target),
                                                                                          c.d_model)
    src_embedding.load_state_dict(model.source_embedding.token_embedding.state_dict())
    tgt_embedding.load_state_dict(model.target_embedding.token_embedding.state_dict())
    projection = nn.Linear(c.d_model, len(model.target))
    projection.load_state_dict(model.generator.state_dict())
    pe = sinusoidal(c.max_len, c.d_model)

    src, tgt = ids(model, SOURCES, TARGETS)
    with torch.inference_mode():
        ours = model(src, tgt)
        s = src_embedding(src) * math.sqrt(c.d_model) + pe[:src.size(1)]
        t = tgt_embedding(tgt) * math.sqrt(c.d_model) + pe[:tgt.size(1)]
        out = reference(s, t, tgt_mask=reference.generate_square_subsequent_mask(tgt.size(1)),
                        src_key_padding_mask=src == PAD_ID, tgt_key_padding_mask=tgt == PAD_ID,
                        memory_key_padding_mask=src == PAD_ID)
        theirs = projection(out)
    real = tgt != PAD_ID  # rows of padding queries are not predictions
    assert ours.shape == (2, tgt.size(1), len(model.target))
    torch.testing.assert_close(ours[real], theirs[real], atol=1e-5, rtol=0)


def test_the_translator_says_what_it_is_as_data():
    model = random_translator()
    f = model.facts
    assert (f.kind, f.layers, f.decoder_layers, f.heads, f.d_model, f.d_ff) == (TRANSLATOR, 2, 2, 4, 64, 256)
    assert (f.activation, f.norm_first, f.positional) == ("relu", False, "sinusoidal")
    assert (f.vocab_size, f.source_vocab_size) == (len(english_vocabulary()) + 4, len(chinese_vocabulary()) + 4)
    sp = f.special_tokens
    assert (sp.pad, sp.cls, sp.sep, sp.unk) == (("<pad>", 0), ("<bos>", 1), ("<eos>", 2), ("<unk>", 3))
    assert model.source.tokens[:4] == model.target.tokens[:4] == ("<pad>", "<bos>", "<eos>", "<unk>")


def test_a_recorded_pass_holds_every_attention_of_encoder_decoder_and_cross():
    model = random_translator()
    src, tgt = ids(model, SOURCES, TARGETS)
    with torch.inference_mode():
        logits, trace = model(src, tgt, record=True)
        torch.testing.assert_close(logits, model(src, tgt), atol=0, rtol=0)
    S, T = src.size(1), tgt.size(1)
    assert len(trace.encoder.layers) == len(trace.decoder.layers) == 2
    assert trace.encoder.layers[0].self_attn.probs.shape == (2, 4, S, S)
    decoder_self = trace.decoder.layers[1].self_attn.probs
    assert decoder_self.shape == (2, 4, T, T)
    assert torch.all(decoder_self.masked_select(causal_mask(T)) == 0)  # no word sees a later word
    cross = trace.decoder.layers[1].cross_attn.probs
    assert cross.shape == (2, 4, T, S)
    assert torch.all(cross[0, :, :, 5:] == 0)  # the first source's padding is never attended to
    assert trace.encoder.embeddings.token.shape == (2, S, 64) and trace.decoder.embeddings.token.shape == (2, T, 64)


def test_saved_and_loaded_through_safetensors_it_is_the_same_model(tmp_path):
    model = random_translator(3)
    model.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "model.safetensors", "source_vocab.json",
                                                          "target_vocab.json"]
    loaded = Translator.from_directory(tmp_path)
    assert loaded.config == model.config and loaded.source == model.source and loaded.target == model.target
    src, tgt = ids(model, SOURCES, TARGETS)
    with torch.inference_mode():
        torch.testing.assert_close(loaded(src, tgt), model(src, tgt), atol=0, rtol=0)
    assert not loaded.training
