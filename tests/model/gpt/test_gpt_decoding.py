"""The GPT read incrementally (a prompt, then a word at a time, keys and values cached: GPT.forward's cache) equals
the formula on the whole text; heads switched off zero their context before W_O; generation is greedy or sampled by
seed."""
import pytest
import torch

from model import lens
from model.cache import Cache
from model.causal import ablation
from model.causal.ablation import probe_accuracy, sentence_loss
from model.causal.decoding import generate, logits_of, next_word
from model.causal.logit_lens import logit_lens
from model.causal.probes import repeat_probes
from model.gpt import GPT, GPTConfig
from model.sampling import Sampling


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=23, n_positions=32, n_embd=32, n_layer=2, n_head=4)).eval()


def test_a_chunk_then_words_equal_the_formula(model, h):
    ids = torch.randint(0, 23, (2, 20), generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        whole = model(ids)
        out = model(ids[:, :7], use_cache=True)
        parts, attention = [out.logits], [out.attentions]
        for t in range(7, 20):
            out = model(ids[:, t:t + 1], cache=out.cache)
            parts.append(out.logits)
            attention.append(out.attentions)
    h.close(torch.cat(parts, 1), whole.logits, 1e-5)
    assert out.cache.length == 20
    for layer in range(2):
        full = whole.attentions[layer]
        h.close(attention[0][layer], full[:, :, :7, :7], 1e-6)
        for step, rows in enumerate(attention[1:]):
            t = 7 + step
            h.close(rows[layer][:, :, 0], full[:, :, t, :t + 1], 1e-6)


def test_a_head_switched_off_equals_zeroing_its_columns_of_w_o(model, h):
    ids = torch.randint(0, 23, (2, 16), generator=torch.Generator().manual_seed(2))
    copy = GPT(model.config).eval()
    copy.load_state_dict(model.state_dict())
    hd = model.config.head_dim
    with torch.no_grad():
        copy.blocks[1].self_attn.out_proj.weight[:, 2 * hd:3 * hd] = 0
        want = copy(ids).logits
    with torch.inference_mode():
        got = logits_of(model, ids, [(1, 2)])
        untouched = logits_of(model, ids)
    h.close(got, want, 1e-5)
    assert not torch.allclose(untouched, want, atol=1e-4)


def test_a_gpt_checks_the_heads_it_is_asked_to_switch_off(model):
    with pytest.raises(ValueError, match="no head 2.0"):
        model.heads_off([(2, 0)])
    assert model.heads_off([]) is None


def test_greedy_generation_is_the_argmax_of_the_whole_text_each_time(model):
    prompt = torch.tensor([3, 5, 7])
    with torch.inference_mode():
        made = generate(model, prompt, 6)
        ids = prompt
        for _ in range(6):
            ids = torch.cat([ids, model(ids[None]).logits[0, -1].argmax()[None]])
    assert torch.equal(made.ids, ids) and made.logits.shape == (6, 23)
    assert [a.shape for a in made.attentions] == [(4, 8, 8)] * 2
    with torch.inference_mode():
        full = model(made.ids[None, :-1]).attentions
    for a, b in zip(made.attentions, full):
        assert torch.allclose(a, b[0], atol=1e-6)


def test_sampling_is_reproduced_by_its_seed_and_bounded_by_the_context(model):
    prompt = torch.tensor([1, 2])
    with torch.inference_mode():
        a = generate(model, prompt, 10, Sampling(1.5, top_k=5, seed=3)).written
        b = generate(model, prompt, 10, Sampling(1.5, top_k=5, seed=3)).written
        c = generate(model, prompt, 10, Sampling(1.5, top_k=5, seed=4)).written
        long = generate(model, prompt, 100)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert long.ids.numel() == model.max_positions


def test_next_word_is_a_distribution_and_the_context_is_bounded(model):
    with torch.inference_mode():
        p = next_word(model, torch.tensor([4, 4, 4]))
        assert p.shape == (23,) and abs(float(p.sum()) - 1) < 1e-5
        with pytest.raises(ValueError, match="positions"):
            model(torch.zeros(1, 33, dtype=torch.long), cache=Cache())
        with pytest.raises(ValueError, match="positions"):
            model(torch.zeros(1, 1, dtype=torch.long),
                  cache=model(torch.zeros(1, 32, dtype=torch.long), use_cache=True).cache)


def test_the_logit_lens_s_last_layer_is_the_model_s_own_distribution(model, h):
    ids = torch.randint(0, 23, (12,), generator=torch.Generator().manual_seed(5))
    with torch.inference_mode():
        lens = logit_lens(model, ids)
        own = torch.softmax(model(ids[None]).logits[0], -1)
    assert lens.probs.shape == (2, 12, 23) and lens.predicted.shape == (2, 12)
    h.close(lens.probs[-1], own, 1e-6)
    assert torch.equal(lens.chosen, own.argmax(-1)) and torch.equal(lens.predicted[-1], lens.chosen)
    h.close(lens.chosen_p[-1], own.max(-1).values, 1e-6)
    assert bool((lens.chosen_rank[-1] == 1).all())
    assert bool((lens.probs.sum(-1) - 1).abs().max() < 1e-5)


def test_the_logit_lens_with_heads_off_ends_in_the_ablated_model_s_distribution(model, h):
    ids = torch.randint(0, 23, (12,), generator=torch.Generator().manual_seed(6))
    with torch.inference_mode():
        lens = logit_lens(model, ids, ((1, 2), (0, 1)))
        ablated = torch.softmax(logits_of(model, ids[None], ((1, 2), (0, 1)))[0], -1)
        whole = logit_lens(model, ids)
    h.close(lens.probs[-1], ablated, 1e-6)
    assert (lens.probs[-1] - whole.probs[-1]).abs().max() > 1e-3  # the heads made a difference
    h.close(logit_lens(model, ids, ((1, 2),)).probs[0], whole.probs[0], 1e-6)  # a layer-1 head leaves layer 0 alone


def test_the_logit_lens_without_its_probabilities_reads_the_same(model, monkeypatch):
    """keep_probs=False (SmolLM2's (layers, T, V) probabilities would be 1.45 GB) keeps what is read of them alike, and
    reading a few positions at a time (lens.CHUNK_VALUES) finds the same."""
    ids = torch.randint(0, model.config.vocab_size, (30,))
    with torch.inference_mode():
        kept = logit_lens(model, ids)
        monkeypatch.setattr(lens, "CHUNK_VALUES", 4 * model.config.vocab_size)  # 4 positions at a time
        light = logit_lens(model, ids, keep_probs=False)
    assert light.probs is None and kept.probs.shape == (model.config.n_layer, 30, model.config.vocab_size)
    for name in ("chosen", "top_ids", "top_p", "chosen_p", "chosen_rank"):
        torch.testing.assert_close(getattr(light, name), getattr(kept, name), atol=1e-6, rtol=0, msg=name)


def test_probes_and_sentences_read_in_batches_within_the_logits_bound(model, monkeypatch):
    """A big vocabulary's logits are read a few rows at a time (ablation.LOGITS_BYTES): the same scores."""
    probes = repeat_probes(model.config.vocab_size - 2, 37, 5)  # (37, 24)
    rows = [torch.randint(0, model.config.vocab_size, (n,)).tolist() for n in range(2, 30)]
    whole = probe_accuracy(model, probes), sentence_loss(model, rows)
    monkeypatch.setattr(ablation, "LOGITS_BYTES", 4 * 2 * probes.size(1) * model.config.vocab_size)  # 2 rows
    assert ablation.rows_per_batch(model, probes.size(1), 100) == 2
    batched = probe_accuracy(model, probes), sentence_loss(model, rows)
    assert batched[0] == pytest.approx(whole[0], abs=1e-6) and batched[1] == pytest.approx(whole[1], rel=1e-6)
