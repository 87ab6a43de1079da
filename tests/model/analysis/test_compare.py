"""The comparison's alignment and difference, by hand."""
import numpy as np

from model.analysis.compare import align, difference


def test_equal_tokens_match_everywhere_and_the_difference_is_b_minus_a():
    alignment = align(["[CLS]", "a", "b", "[SEP]"], ["[CLS]", "a", "b", "[SEP]"])
    assert alignment.a.tolist() == alignment.b.tolist() == [0, 1, 2, 3]
    a = np.eye(4, dtype=np.float32)
    b = np.full((4, 4), 0.25, dtype=np.float32)
    np.testing.assert_allclose(difference(a, b, alignment), b - a)


def test_two_sentences_compare_on_the_tokens_they_share():
    # "the cat sat" vs "the dog sat": cat and dog do not match; [CLS] the ... sat [SEP] do
    a_tokens = ["[CLS]", "the", "cat", "sat", "[SEP]"]
    b_tokens = ["[CLS]", "the", "big", "dog", "sat", "[SEP]"]
    alignment = align(a_tokens, b_tokens)
    assert alignment.a.tolist() == [0, 1, 3, 4] and alignment.b.tolist() == [0, 1, 4, 5]
    a = np.arange(25, dtype=np.float32).reshape(5, 5)
    b = np.arange(36, dtype=np.float32).reshape(6, 6) * 10
    diff = difference(a, b, alignment)
    assert diff.shape == (4, 4)
    assert diff[2, 3] == b[4, 5] - a[3, 4]  # sat -> [SEP] in both
    assert diff[0, 1] == b[0, 1] - a[0, 1]
