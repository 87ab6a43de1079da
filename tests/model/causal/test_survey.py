"""The induction survey (model.causal.survey) on the shipped toy GPT: its scores are the probes' own, its strongest
induction head sits in the second layer and copying breaks without the strongest ones, and every ablation is the copy
accuracy of the model with those heads off."""
import numpy as np
import pytest
import torch

from model.causal.ablation import probe_accuracy
from model.causal.probes import PROBE_SEED, induction_scores, previous_token_scores, repeat_probes
from model.causal.survey import CONTROLS, survey
from model.gpt.toy import load


@pytest.fixture(scope="module")
def toy():
    return load()


@pytest.fixture(scope="module")
def measured(toy):
    model, vocabulary = toy
    probes = repeat_probes(len(vocabulary.words), 64, PROBE_SEED)
    with torch.inference_mode():
        return probes, survey(model, probes)


def test_the_scores_are_the_probes_own(toy, measured):
    model, _vocabulary = toy
    probes, s = measured
    with torch.inference_mode():
        maps = model(probes).attentions
    np.testing.assert_allclose(s.induction, induction_scores(maps).numpy(), atol=1e-6)
    np.testing.assert_allclose(s.previous, previous_token_scores(maps).numpy(), atol=1e-6)
    assert s.probes == 64 and s.accuracy > 0.95 and s.second_loss < 0.5 < s.first_loss


def test_the_strongest_induction_heads_break_copying_and_every_ablation_is_measured(toy, measured):
    model, _vocabulary = toy
    probes, s = measured
    induction = [a for a in s.ablations if a.what == "induction"]
    assert [len(a.heads) for a in induction] == [1, 3, 5]  # 10 is more than the toy's 8 heads
    assert all(layer == 1 for layer, _head in induction[1].heads)  # induction reads what layer 0 wrote
    assert induction[-1].accuracy < 0.1 < s.accuracy
    assert [a.what for a in s.ablations[-2:]] == ["previous", "random"]
    assert all(len(a.heads) == CONTROLS for a in s.ablations[-2:])
    with torch.inference_mode():
        for a in s.ablations:
            assert abs(a.accuracy - probe_accuracy(model, probes, a.heads)) < 1e-6
