"""The logit lens: its words are the greedy decoding's, its last layer is the decoder's own distribution, and each
earlier layer equals the decoder layers run by hand on the teacher-forced words (Translator.forward's trace)."""
import pytest
import torch

from model.translator import load_shipped
from model.translator.decoding import generate
from model.translator.logit_lens import logit_lens
from model.translator.vocabulary import BOS_ID


@pytest.fixture(scope="module")
def translator():
    return load_shipped().eval()


@pytest.mark.parametrize("heads_off", [(), (("cross", 1, 0), ("decoder", 0, 2))])
def test_the_last_layer_is_the_decoders_own_distribution(translator, heads_off):
    src_ids = translator.encode_source("我有一只猫")[1]
    src = torch.tensor([src_ids])
    with torch.inference_mode():
        lens = logit_lens(translator, src, heads_off)
        decoding = generate(translator, src, heads_off=heads_off, record=True)
    assert lens.chosen.tolist() == decoding.ids[0].tolist()
    torch.testing.assert_close(lens.probs[-1], torch.softmax(decoding.logits[0], -1), atol=1e-6, rtol=0)
    assert (lens.chosen_rank[-1] == 1).all()
    assert torch.allclose(lens.top_p.sum(-1), lens.top_p.sum(-1).clamp(max=1.0))


def test_every_layer_equals_the_recorded_teacher_forced_pass(translator):
    src = torch.tensor([translator.encode_source("昨天我买了一本书")[1]])
    with torch.inference_mode():
        lens = logit_lens(translator, src)
        inputs = torch.tensor([[BOS_ID, *lens.chosen[:-1].tolist()]])
        _logits, trace = translator(src, inputs, record=True)
        norm = translator.transformer.decoder.norm
        for layer, recorded in enumerate(trace.decoder.layers):
            hidden = recorded.output[0]  # (T, E) this layer's output at every step
            expected = torch.softmax(translator.generator(hidden if norm is None else norm(hidden)), -1)
            torch.testing.assert_close(lens.probs[layer], expected, atol=1e-5, rtol=0)
    ranks = (lens.probs > lens.chosen_p[..., None]).sum(-1) + 1
    assert torch.equal(ranks, lens.chosen_rank)
