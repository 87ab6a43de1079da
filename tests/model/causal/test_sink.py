"""The attention sink experiment (model.causal.sink) on a tiny random Llama: the masks block what they say, the loss
is the cross-entropy of the answer under them, a writing with a token evicted from the cache writes what full passes
under the same mask would, and the first token's share is read from the maps."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model.causal.sink import answer_loss, evicting, first_token_share, greedy_evicting, hiding
from model.llama import Llama, LlamaConfig


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return Llama(config).eval()


def test_the_masks_block_one_column_for_the_queries_they_say():
    m = evicting(5, 0, 3)
    assert m.shape == (5, 5) and m[3:, 0].all() and not m[:3].any() and m.sum() == 2
    assert evicting(1, 2, 7, past=7).tolist() == [[False, False, True, False, False, False, False, False]]
    h = hiding(4, 1)
    assert h[:, 1].tolist() == [True, False, True, True] and h.sum() == 3


def test_an_evicted_key_gets_no_attention_from_the_queries_after(model):
    ids = torch.randint(0, 97, (12,))
    with torch.inference_mode():
        loss, maps = answer_loss(model, ids, 8, evicting(12, 0, 7))
        plain, plain_maps = answer_loss(model, ids, 8)
        logits = model(ids[None]).logits[0]
    assert maps.shape == (2, 4, 12, 12)
    assert float(maps[:, :, 7:, 0].abs().max()) == 0 and float(maps[:, :, :7, 0].min()) > 0  # earlier rows still see it
    np.testing.assert_allclose(maps[:, :, 7:].sum(-1), 1, atol=1e-5)
    assert abs(plain - float(F.cross_entropy(logits[7:-1], ids[8:]))) < 1e-5 and loss != plain


def test_hidden_from_every_query_the_token_still_sees_itself(model):
    ids = torch.randint(0, 97, (9,))
    with torch.inference_mode():
        _loss, maps = answer_loss(model, ids, 5, hiding(9, 0))
    assert float(maps[:, :, 0, 0].min()) == 1.0 and float(maps[:, :, 1:, 0].abs().max()) == 0


@pytest.mark.parametrize("token", [0, 3])
def test_a_writing_with_a_token_evicted_is_what_full_passes_under_the_mask_write(model, token):
    prompt = torch.randint(0, 97, (10,))
    with torch.inference_mode():
        written = greedy_evicting(model, prompt, 8, token)
        ids = torch.cat([prompt, torch.tensor(written)])
        logits = model(ids[None], attn_mask=evicting(ids.numel(), token, 9)).logits[0]
        plain = model(ids[None]).logits[0]
    assert len(written) == 8 and logits[9:-1].argmax(-1).tolist() == written
    assert not torch.allclose(logits[9:], plain[9:])  # the eviction changed what it read
    assert torch.equal(logits[:9], plain[:9])  # and nothing before the writing


def test_a_writing_stops_at_its_end_of_turn(model):
    prompt = torch.randint(0, 97, (6,))
    with torch.inference_mode():
        first = greedy_evicting(model, prompt, 5, 0)
        stopped = greedy_evicting(model, prompt, 5, 0, stop={first[0]})
    assert len(first) == 5 and stopped == first[:1]


def test_the_first_tokens_share_is_the_mean_over_the_rows():
    maps = np.random.default_rng(0).random((3, 2, 6, 6))
    share = first_token_share(maps, range(2, 5))
    assert share.shape == (3, 2) and np.allclose(share, maps[:, :, 2:5, 0].mean(-1))
