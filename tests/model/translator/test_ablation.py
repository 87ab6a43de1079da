"""Heads switched off, scored on the fixed held-out sentences: the whole model is the shipped one's 100 %, every
cross-attention head off breaks it, a set off is the formula's path on a copy with those W_O columns zeroed, and the
ranking puts the set it misses most first."""
import numpy as np
import pytest
import torch

from model.cache import Cache
from model.heads import parse_head
from model.translator import BLOCKS, Translator, ablation, load_shipped
from model.translator.ablation import (
    HeadSet,
    decoding_bytes,
    head_sets,
    rank,
    score,
    sources_of,
    steps_to_check,
    translations,
)
from model.translator.decoding import generate, words_of
from model.translator.incremental import encode, step
from model.translator.vocabulary import BOS_ID, EOS_ID, same_translation
from training import toy_language
from training.train import exact_match

EVERY_CROSS_HEAD = tuple(("cross", layer, head) for layer in range(2) for head in range(4))


@pytest.fixture(scope="module")
def shipped() -> Translator:
    return load_shipped()


@pytest.fixture(scope="module")
def held_out():
    sentences = toy_language.sample(ablation.SENTENCES, ablation.SEED, held_out=True)
    return sentences, [s.english() for s in sentences]


def test_no_head_off_is_the_shipped_models_exact_match(shipped, held_out):
    sentences, expected = held_out
    whole = score(shipped, sources_of(shipped, [s.chinese() for s in sentences]), expected)
    assert whole.heads == () and whole.right.shape == (200,)
    assert whole.exact_match == exact_match(shipped, sentences)[0] == 1.0
    shipped.eval()  # training's exact_match leaves the model in training mode (dropout on), as training needs
    assert translations(shipped, whole)[:3] == expected[:3]


def test_every_cross_head_off_breaks_the_translation_and_the_exact_match(shipped, held_out):
    sentences, expected = held_out
    cat = sources_of(shipped, ["我有一只猫"])
    assert translations(shipped, score(shipped, cat, ["I have a cat"]))[0] == "I have a cat"
    broken = score(shipped, cat, ["I have a cat"], EVERY_CROSS_HEAD)
    assert broken.exact_match == 0.0 and translations(shipped, broken)[0] != "I have a cat"
    everything = score(shipped, sources_of(shipped, [s.chinese() for s in sentences]), expected, EVERY_CROSS_HEAD)
    assert everything.exact_match < 0.1  # far below 50 %: the decoder no longer sees the Chinese
    # it writes (almost) one sentence whatever the source: the decoder alone, as a language model
    assert len(set(translations(shipped, everything))) < 10


def test_scoring_stops_after_the_longest_correct_translation_where_no_sentence_can_still_be_right(shipped, held_out):
    sentences, expected = held_out
    src = sources_of(shipped, [s.chinese() for s in sentences])
    every_decoder_head = [("decoder", layer, head) for layer in range(2) for head in range(4)]
    cut = score(shipped, src, expected, every_decoder_head)  # some sentences then write on without <eos>
    with torch.inference_mode():
        to_the_limit = generate(shipped, src, heads_off=every_decoder_head)
    assert cut.written.shape[1] == steps_to_check(expected) < to_the_limit.size(1)
    assert cut.right.tolist() == [same_translation(words_of(shipped, row), want)
                                  for row, want in zip(to_the_limit, expected)]
    assert 0 < cut.exact_match < 1
    written = translations(shipped, cut)
    still_writing = [i for i, row in enumerate(cut.written) if EOS_ID not in row]
    assert still_writing and all(written[i].endswith(" …") for i in still_writing)
    assert not any(w.endswith("…") for i, w in enumerate(written) if i not in still_writing)


def test_a_set_off_equals_the_formulas_path_on_a_copy_with_its_w_o_columns_zeroed(shipped, held_out):
    sentences, expected = held_out
    heads = [("cross", 1, 3), ("cross", 1, 0), ("decoder", 0, 2), ("encoder", 1, 1)]
    src = sources_of(shipped, [s.chinese() for s in sentences])
    off = score(shipped, src, expected, heads)
    copy = Translator.from_directory()
    hd = copy.config.d_model // copy.config.nhead
    for block, layer, head in heads:
        mha = {"encoder": lambda: copy.transformer.encoder.layers[layer].self_attn,
               "decoder": lambda: copy.transformer.decoder.layers[layer].self_attn,
               "cross": lambda: copy.transformer.decoder.layers[layer].multihead_attn}[block]()
        with torch.no_grad():
            mha.out_proj.weight[:, head * hd:(head + 1) * hd] = 0
    with torch.inference_mode():
        formula = generate(copy, src, incremental=False, steps=steps_to_check(expected))
    assert np.array_equal(off.written, formula.numpy())
    assert off.right.tolist() == [words_of(copy, row) == want for row, want in zip(formula, expected)]
    assert off.exact_match < 1.0  # the set matters: the comparison is not of two unchanged models
    assert off.heads == tuple(sorted(heads))


def test_head_sets_are_every_head_then_each_block_and_layer_then_each_block():
    sets = head_sets(2, 4)
    assert len(sets) == 24 + 6 + 3 and len({s.name for s in sets}) == 33
    assert sets[0] == HeadSet("encoder.0.0", (("encoder", 0, 0),))
    assert [parse_head(s.name, BLOCKS) for s in sets[:24]] == [s.heads[0] for s in sets[:24]]
    by_name = {s.name: s.heads for s in sets}
    assert by_name["cross.1.*"] == (("cross", 1, 0), ("cross", 1, 1), ("cross", 1, 2), ("cross", 1, 3))
    assert by_name["cross.*.*"] == EVERY_CROSS_HEAD
    assert len(by_name["decoder.*.*"]) == 8 and {b for b, _, _ in by_name["encoder.*.*"]} == {"encoder"}


def test_the_ranking_puts_what_the_translator_misses_most_first_and_keeps_ties_in_order(shipped, held_out):
    sentences, expected = held_out
    src = sources_of(shipped, [s.chinese() for s in sentences[:40]])
    sets = [HeadSet("encoder.0.0", (("encoder", 0, 0),)), HeadSet("cross.*.*", EVERY_CROSS_HEAD),
            HeadSet("decoder.1.3", (("decoder", 1, 3),)), HeadSet("cross.1.*", EVERY_CROSS_HEAD[4:])]
    seen = []
    ranked = rank(sets, lambda heads: score(shipped, src, expected[:40], heads).exact_match,
                  lambda i, s: seen.append((i, s.name)))
    assert seen == list(enumerate(s.name for s in sets))
    scores = [m for _, m in ranked]
    assert scores == sorted(scores) and ranked[0][0].name == "cross.*.*" and scores[0] < 0.1
    assert {s.name for s, _ in ranked} == {s.name for s in sets}
    same = [s.name for s, m in ranked if m == scores[-1]]
    assert same == [s.name for s in sets if s.name in same]  # ties: in the given order


def test_the_decoding_estimate_covers_what_a_decoding_keeps(shipped, held_out):
    sentences, _ = held_out
    src = sources_of(shipped, [s.chinese() for s in sentences])
    steps = 12
    with torch.inference_mode():
        memory, cache = encode(shipped, src), Cache()
        ids = torch.full((src.size(0),), BOS_ID)
        for _ in range(steps):
            logits, cache, _, _ = step(shipped, memory, cache, ids)
            ids = logits.argmax(-1)
    kept = sum(t.untyped_storage().nbytes() for pair in (*memory.cross_kv, *cache.self_attn) for t in pair)
    kept += memory.attentions.untyped_storage().nbytes() + memory.output.untyped_storage().nbytes()
    estimate = decoding_bytes(shipped.config, src.size(0), src.size(1), steps, len(shipped.target))
    assert kept < estimate < 4 * kept + 8 * 2**20
