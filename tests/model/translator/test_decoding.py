"""Decoding as a library: incremental equals recomputing the prefix, sampling is reproducible by seed, beam search,
and heads switched off by argument (switching none off changes nothing)."""
import pytest
import torch

from model.cache import Cache
from model.sampling import Sampling
from model.translator import Translator, load_shipped
from model.translator.decoding import beam_search, generate, words_of
from model.translator.incremental import encode, step
from model.translator.vocabulary import BOS_ID, EOS_ID, PAD_ID
from tests.model.translator.translators import SOURCES, TARGETS, ids, random_translator, sources

MORE = ["我有一只猫", "她有两个孩子", "昨天他们在学校看见了五辆红车", "他不喜欢狗", "昨天你买了三本书吗"]


@pytest.fixture(scope="module")
def shipped() -> Translator:
    return load_shipped()


@pytest.mark.parametrize("which", ["random", "shipped"])
def test_each_incremental_step_equals_the_formula_on_the_whole_prefix(which, shipped):
    model = shipped if which == "shipped" else random_translator(1)
    src, tgt = ids(model, SOURCES, TARGETS)
    with torch.inference_mode():
        full, trace = model(src, tgt, record=True)
        memory, cache = encode(model, src), Cache()
        for layer in range(2):
            torch.testing.assert_close(memory.attentions[layer], trace.encoder.layers[layer].self_attn.probs,
                                       atol=1e-6, rtol=0)
        for t in range(tgt.size(1)):
            logits, cache, self_rows, cross_rows = step(model, memory, cache, tgt[:, t])
            real = tgt[:, t] != PAD_ID  # the first target is shorter: its padded steps are no prediction
            torch.testing.assert_close(logits[real], full[real, t], atol=1e-5, rtol=0)
            for layer in range(2):
                decoder = trace.decoder.layers[layer]
                torch.testing.assert_close(self_rows[layer][real], decoder.self_attn.probs[real, :, t, :t + 1],
                                           atol=1e-6, rtol=0)
                torch.testing.assert_close(cross_rows[layer][real], decoder.cross_attn.probs[real, :, t], atol=1e-6,
                                           rtol=0)
        assert cache.length == tgt.size(1) and cache.self_attn[0].k.shape == (2, 4, tgt.size(1), 16)


def test_greedy_incremental_decoding_equals_recomputing_the_whole_prefix(shipped):
    src = sources(shipped, MORE)
    with torch.inference_mode():
        fast, slow = generate(shipped, src), generate(shipped, src, incremental=False)
    assert torch.equal(fast, slow)
    assert [words_of(shipped, row) for row in fast][:2] == ["I have a cat", "she has two children"]
    assert all(EOS_ID in row.tolist() for row in fast) and fast[0, 4:].tolist() == [EOS_ID] + [PAD_ID] * (
        fast.size(1) - 5)


def test_sampling_is_reproducible_by_seed_and_its_limits_are_greedy(shipped):
    src = sources(shipped, MORE * 4)
    with torch.inference_mode():
        hot = Sampling(temperature=3.0, seed=7)
        first, again = generate(shipped, src, hot), generate(shipped, src, hot)
        other = generate(shipped, src, Sampling(temperature=3.0, seed=8))
        greedy = generate(shipped, src)
        top1 = generate(shipped, src, Sampling(temperature=3.0, top_k=1, seed=1))
        nucleus = generate(shipped, src, Sampling(top_p=1e-6, seed=1))
    assert torch.equal(first, again) and not torch.equal(first, other)
    assert not torch.equal(first, greedy)  # at T = 3 the words are really drawn
    assert torch.equal(top1, greedy) and torch.equal(nucleus, greedy)


def test_sampling_distribution_is_softmax_of_z_over_t_then_top_k_then_top_p():
    z = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    torch.testing.assert_close(Sampling(temperature=2.0).probabilities(z), torch.softmax(z / 2, -1))
    top2 = Sampling(top_k=2).probabilities(z)
    torch.testing.assert_close(top2, torch.tensor([[1, torch.e ** -1, 0, 0]]) / (1 + torch.e ** -1))
    p = torch.softmax(z, -1)[0]
    nucleus = Sampling(top_p=float(p[0] + p[1] / 2)).probabilities(z)  # the first word alone does not reach it
    torch.testing.assert_close(nucleus, torch.tensor([[p[0], p[1], 0, 0]]) / (p[0] + p[1]))
    for bad in ({"temperature": 0}, {"top_k": 0}, {"top_p": 0}, {"top_p": 1.5}):
        with pytest.raises(ValueError):
            Sampling(**bad)


def test_beam_search_of_one_is_greedy_and_a_wider_beam_finds_a_sentence_at_least_as_likely(shipped):
    src = sources(shipped, MORE)
    with torch.inference_mode():
        greedy = generate(shipped, src)
        one = beam_search(shipped, src, 1)
        four = beam_search(shipped, src, 4)
    for row, (g, b1, b4) in enumerate(zip(greedy, one, four)):
        assert words_of(shipped, b1) == words_of(shipped, g)
        assert log_probability(shipped, src[row:row + 1], b4) >= log_probability(shipped, src[row:row + 1], g) - 1e-5
    with pytest.raises(ValueError):
        beam_search(shipped, src, 0)


def log_probability(model, src, out) -> float:
    out = out[:out.tolist().index(EOS_ID) + 1]
    tgt = torch.cat([torch.tensor([BOS_ID]), out[:-1]])[None]
    with torch.inference_mode():
        logp = torch.log_softmax(model(src, tgt), -1)[0]
    return float(logp.gather(-1, out[:, None]).sum())


def test_switching_no_head_off_changes_nothing_and_a_head_off_is_its_context_zeroed(shipped):
    src = sources(shipped, MORE)
    with torch.inference_mode():
        plain = generate(shipped, src)
        assert torch.equal(generate(shipped, src, heads_off=[]), plain)
        assert shipped.heads_off([]) is None
        memory = encode(shipped, src, shipped.heads_off([]))
        torch.testing.assert_close(memory.output, encode(shipped, src).output, atol=0, rtol=0)

        # cross.1.2 off == the same model with W_O's columns of head 2 zeroed in a copy (the shared one untouched)
        off = shipped.heads_off([("cross", 1, 2), ("encoder", 0, 1)])
        copy = Translator.from_directory()
        for mha, head in ((copy.transformer.decoder.layers[1].multihead_attn, 2),
                          (copy.transformer.encoder.layers[0].self_attn, 1)):
            mha.out_proj.weight[:, head * 16:(head + 1) * 16] = 0
        bos = torch.full((len(MORE),), BOS_ID)
        ablated = step(shipped, encode(shipped, src, off), Cache(), bos, off)[0]
        zeroed = step(copy, encode(copy, src), Cache(), bos)[0]
        torch.testing.assert_close(ablated, zeroed, atol=1e-5, rtol=0)
        assert (ablated - step(shipped, encode(shipped, src), Cache(), bos)[0]).abs().max() > 1e-3


def test_the_translator_checks_its_heads():
    with pytest.raises(ValueError, match="no head decoder.2.0"):
        random_translator().heads_off([("decoder", 2, 0)])
    with pytest.raises(ValueError, match="incremental"):
        generate(random_translator(), torch.tensor([[4, 5]]), heads_off=[("cross", 0, 0)], incremental=False)


def test_a_recorded_decoding_holds_every_attention_and_equals_the_formulas_trace_of_its_words(shipped):
    src = sources(shipped, MORE)
    with torch.inference_mode():
        decoding = generate(shipped, src, record=True)
        assert torch.equal(decoding.ids, generate(shipped, src))
        tgt = torch.cat([torch.full((len(MORE), 1), BOS_ID), decoding.ids[:, :-1]], 1)  # what each step read
        logits, trace = shipped(src, tgt.masked_fill(tgt == EOS_ID, PAD_ID), record=True)
    T, S = decoding.ids.size(1), src.size(1)
    assert decoding.decoder.shape == (2, len(MORE), 4, T, T) and decoding.cross.shape == (2, len(MORE), 4, T, S)
    for row, words in enumerate(decoding.ids.tolist()):
        n = words.index(EOS_ID) + 1  # the steps this sentence really took
        torch.testing.assert_close(decoding.logits[row, :n], logits[row, :n], atol=1e-5, rtol=0)
        for layer in range(2):
            torch.testing.assert_close(decoding.encoder[layer, row], trace.encoder.layers[layer].self_attn.probs[row],
                                       atol=1e-6, rtol=0)
            ours, theirs = decoding.decoder[layer, row, :, :n, :n], trace.decoder.layers[layer].self_attn.probs
            torch.testing.assert_close(ours, theirs[row, :, :n, :n], atol=1e-6, rtol=0)
            torch.testing.assert_close(decoding.cross[layer, row, :, :n], trace.decoder.layers[layer].cross_attn.probs[
                row, :, :n], atol=1e-6, rtol=0)
    off = generate(shipped, src, heads_off=[("cross", 1, 3)], record=True)
    assert torch.all(off.cross.sum(-1)[:, 0] > 0.999)  # a head switched off still attends; only its output is gone
