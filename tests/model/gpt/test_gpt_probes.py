"""Repeat probes, copy accuracy, induction and previous-token scores, the ablation's circuit, the toy vocabulary."""
import numpy as np
import torch

from model.causal.ablation import Ablated, circuit
from model.causal.probes import (
    copy_accuracy,
    copy_losses,
    induction_scores,
    previous_token_scores,
    repeat_probes,
    sink_scores,
    text_induction_scores,
)
from model.gpt.vocabulary import UNK_ID, WordVocabulary, words_of

L = 12


def test_a_repeat_probe_is_l_words_then_the_same_l():
    probes = repeat_probes(71, 50, 3)
    assert probes.shape == (50, 2 * L) and torch.equal(probes[:, :L], probes[:, L:])
    assert int(probes.min()) >= 2 and int(probes.max()) <= 72
    assert torch.equal(probes, repeat_probes(71, 50, 3)) and not torch.equal(probes, repeat_probes(71, 50, 4))


def perfect_copier(probes, vocab=73):
    """Logits that predict, at every position of the second copy, the word after its first occurrence."""
    B, T = probes.shape
    logits = torch.zeros(B, T, vocab)
    for t in range(L, T - 1):
        logits[torch.arange(B), t, probes[:, t + 1]] = 10.0
    return logits


def test_copy_accuracy_counts_the_second_copy_after_its_first_word():
    probes = repeat_probes(71, 20, 0)
    logits = perfect_copier(probes)
    assert copy_accuracy(logits, probes) == 1.0
    logits[:, L] = 0  # the copy's second word wrong everywhere: 1 of L - 1 predictions
    assert abs(copy_accuracy(logits, probes) - (L - 2) / (L - 1)) < 1e-6
    first, second = copy_losses(perfect_copier(probes), probes)
    assert first > 3 and second < 0.01


def test_induction_and_previous_token_scores_read_the_right_cells():
    T = 2 * L
    induction, previous = torch.zeros(1, 1, T, T), torch.zeros(1, 1, T, T)
    for i in range(T):
        induction[0, 0, i, i - L + 1 if i >= L else 0] = 1
        previous[0, 0, i, max(i - 1, 0)] = 1
    scores = induction_scores([induction, previous])
    assert scores.shape == (2, 1) and scores[:, 0].tolist() == [1.0, 0.0]
    prev = previous_token_scores([induction, previous])
    assert prev[1, 0] == 1.0 and prev[0, 0] < 0.5
    ids = repeat_probes(71, 1, 9)[0]
    on_text = text_induction_scores([induction], ids)
    assert on_text is not None and on_text.shape == (1, 1)
    assert text_induction_scores([induction], torch.arange(T)) is None  # nothing repeats


def test_a_sink_score_is_the_attention_left_on_the_first_token():
    T = 6
    sink, spread = torch.zeros(2, 3, T, T), torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]
    sink[:, :, :, 0] = 1
    sink[:, 1, 3] = torch.tensor([0.5, 0, 0, 0.5, 0, 0])  # head 1 leaves half of one row elsewhere
    scores = sink_scores([sink, spread.expand(2, 3, T, T)])
    assert scores.shape == (2, 3)
    torch.testing.assert_close(scores[0], torch.tensor([1.0, 1 - 0.5 / (T - 1), 1.0]))  # row 0 (itself) not counted
    torch.testing.assert_close(scores[1], torch.full((3,), float(np.mean([1 / (i + 1) for i in range(1, T)]))))


def test_the_circuit_is_the_smallest_cheapest_set_per_layer_that_breaks_copying():
    found = [Ablated((), 0.97, 1.30),
             Ablated(((0, 1),), 0.80, 1.50), Ablated(((1, 0),), 0.82, 1.31), Ablated(((1, 1),), 0.83, 1.32),
             Ablated(((1, 3),), 0.96, 1.85), Ablated(((0, 1), (0, 2)), 0.10, 1.63),
             Ablated(((1, 0), (1, 1)), 0.135, 1.39), Ablated(((1, 0), (1, 3)), 0.2, 1.9)]
    found_circuit = circuit(found)
    assert found_circuit[1].name == "1.0+1.1" and found_circuit[0].name == "0.1+0.2"
    alone = [Ablated((), 0.97, 1.3), Ablated(((1, 2),), 0.05, 1.35), Ablated(((1, 2), (1, 3)), 0.01, 1.6)]
    assert circuit(alone)[1].name == "1.2" and 0 not in circuit(alone)
    assert circuit([Ablated((), 0.05, 1.4), Ablated(((1, 2),), 0.01, 1.5)]) == {}  # no copying to break
    assert Ablated(((1, 0), (1, 1)), 0.135, 1.39).as_dict() == {"heads": "1.0+1.1", "copy_accuracy": 0.135,
                                                                "loss": 1.39}


def test_the_toy_vocabulary_reads_words():
    vocabulary = WordVocabulary.of(["I", "have", "a", "cat", "?"])
    assert vocabulary.tokens[:2] == ("<unk>", ".") and len(vocabulary) == 7
    assert words_of("I have a cat. Have I?") == ["I", "have", "a", "cat", ".", "Have", "I", "?"]
    assert vocabulary.ids(["i", "Have", "zebra"]) == [2, 3, UNK_ID]
    assert vocabulary.unknown(["zebra", "I", "zebra", "okapi"]) == ["zebra", "okapi"]
    assert vocabulary.text([2, 3, 1]) == "I have ."
    assert np.array_equal(vocabulary.words, ("I", "have", "a", "cat", "?"))
