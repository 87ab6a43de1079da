"""The head atlas's measurements against hand computations on small maps written out."""
import math

import numpy as np
import pytest

from model.analysis.head_stats import PROPERTIES, head_properties, induction_pairs, special_shares

# 4 tokens: [CLS] a a [SEP]; two heads: head 0 looks at the previous token (the first row at itself), head 1 is uniform
IDS = [101, 7, 7, 102]
SPECIAL = np.array([True, False, False, True])
PREVIOUS = np.array([[1, 0, 0, 0],
                     [1, 0, 0, 0],
                     [0, 1, 0, 0],
                     [0, 0, 1, 0]], dtype=np.float32)
UNIFORM = np.full((4, 4), 0.25, dtype=np.float32)
MAPS = np.stack([PREVIOUS, UNIFORM])[None]  # (1 layer, 2 heads, 4, 4)


def test_a_previous_token_head_and_a_uniform_head_by_hand():
    props = head_properties(MAPS, IDS, SPECIAL)
    assert set(props) == set(PROPERTIES) and all(v.shape == (1, 2) for v in props.values())
    # previous-token head: rows are one-hot, so entropy 0; p(i, i-1) = 1 for the 3 queries that have one
    assert props["entropy"][0, 0] == pytest.approx(0.0)
    assert props["previous"][0, 0] == pytest.approx(1.0)
    assert props["next"][0, 0] == pytest.approx(0.0)
    assert props["self"][0, 0] == pytest.approx(1 / 4)  # only row 0 on itself
    assert props["special"][0, 0] == pytest.approx(2 / 4)  # rows 0 and 1 put everything on [CLS]
    assert props["same"][0, 0] == pytest.approx((0 + 1) / 2)  # query 1 ("a") looks at 0, query 2 at the other "a"
    assert props["distance"][0, 0] == pytest.approx((0 + 1 + 1 + 1) / 4)
    assert props["first"][0, 0] == pytest.approx(1 / 3)  # of queries 1..3, query 1 looks at the first token
    # uniform head: ln 4 nats, 1/4 everywhere, distance (mean |i-j| over the 16 cells)
    assert props["entropy"][0, 1] == pytest.approx(math.log(4), abs=1e-6)
    for name in ("previous", "next", "self"):
        assert props[name][0, 1] == pytest.approx(0.25)
    assert props["special"][0, 1] == pytest.approx(0.5)
    assert props["same"][0, 1] == pytest.approx(0.25)
    distances = [abs(i - j) for i in range(4) for j in range(4)]
    assert props["distance"][0, 1] == pytest.approx(sum(distances) / 16)


def test_same_token_is_empty_when_no_token_repeats_and_one_token_has_no_neighbours():
    props = head_properties(MAPS, [101, 7, 8, 102], SPECIAL)
    assert np.isnan(props["same"]).all()
    one = head_properties(np.ones((2, 3, 1, 1), dtype=np.float32), [5], np.array([False]))
    assert np.isnan(one["previous"]).all() and np.isnan(one["next"]).all()
    assert (one["self"] == 1).all() and (one["entropy"] == 0).all() and (one["special"] == 0).all()
    assert np.isnan(one["first"]).all()  # the first token alone: no query after it


def test_properties_match_a_per_head_loop_on_random_maps():
    rng = np.random.default_rng(0)
    maps = rng.random((3, 4, 9, 9), dtype=np.float32)
    maps /= maps.sum(-1, keepdims=True)
    ids = rng.integers(0, 4, 9)
    special = np.zeros(9, dtype=bool)
    special[[0, 8]] = True
    props = head_properties(maps, ids, special)
    for layer in range(3):
        for head in range(4):
            p = maps[layer, head].astype(np.float64)
            rows = range(9)
            assert props["entropy"][layer, head] == pytest.approx(np.mean([-(r * np.log(r)).sum() for r in p]))
            assert props["previous"][layer, head] == pytest.approx(np.mean([p[i, i - 1] for i in rows if i > 0]))
            assert props["next"][layer, head] == pytest.approx(np.mean([p[i, i + 1] for i in rows if i < 8]))
            assert props["distance"][layer, head] == pytest.approx(
                np.mean([sum(p[i, j] * abs(i - j) for j in rows) for i in rows]))
            same = [sum(p[i, j] for j in rows if j != i and ids[j] == ids[i]) for i in rows
                    if any(ids[j] == ids[i] for j in rows if j != i)]
            assert props["same"][layer, head] == pytest.approx(np.mean(same))
            assert props["special"][layer, head] == pytest.approx(np.mean(p[:, [0, 8]].sum(1)))
            assert props["first"][layer, head] == pytest.approx(np.mean([p[i, 0] for i in rows if i > 0]))


def test_special_shares_name_each_special_token_present():
    shares = special_shares(MAPS, IDS, {"[CLS]": 101, "[SEP]": 102, "[PAD]": 0})
    assert set(shares) == {"[CLS]", "[SEP]"}  # no [PAD] in the text
    assert shares["[CLS]"][0].tolist() == pytest.approx([0.5, 0.25])
    assert shares["[SEP]"][0].tolist() == pytest.approx([0.0, 0.25])


def test_induction_is_attention_to_the_token_after_the_previous_occurrence():
    ids = [7, 8, 9, 7, 8, 9]  # a text written twice: 7 8 9 | 7 8 9
    t = len(ids)
    induction = np.zeros((1, 2, t, t), dtype=np.float32)
    induction[0, 0, 0, 0] = induction[0, 0, 1, 0] = induction[0, 0, 2, 0] = 1
    for i, j in ((3, 1), (4, 2), (5, 3)):  # each word of the second copy -> the word after its first occurrence
        induction[0, 0, i, j] = 1
    induction[0, 1] = np.eye(t)  # a head that looks at itself only
    props = head_properties(induction, ids, np.zeros(t, dtype=bool))
    assert props["induction"][0].tolist() == [1.0, 0.0]
    assert np.isnan(head_properties(induction, [1, 2, 3, 4, 5, 6], np.zeros(t, dtype=bool))["induction"]).all()
    rows, cols = induction_pairs([5, 1, 5, 2, 5])  # the latest earlier occurrence, never the token just before
    assert rows.tolist() == [2, 4] and cols.tolist() == [1, 3]
