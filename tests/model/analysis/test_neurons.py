"""The neuron view's numbers: equal to the recorded trace, and to the queries and keys Hugging Face's BertModel
(eager) computes with the same weights, whose attention probabilities it returns."""
import numpy as np
import pytest
import torch
import transformers

from model.analysis.neurons import neuron_view, of_trace
from model.bert import BertModel
from tests.model.bert.bert_checkpoints import reference, save_tiny


def test_by_hand_on_two_keys():
    view = neuron_view(q=[1.0, 2.0], k=[[3.0, 0.5], [-1.0, 1.0]], scale=0.5, mask=[0.0, float("-inf")])
    np.testing.assert_allclose(view.product, [[3.0, 1.0], [-1.0, 2.0]])
    np.testing.assert_allclose(view.dot, [4.0, 1.0])
    np.testing.assert_allclose(view.scaled, [2.0, 0.5])
    np.testing.assert_allclose(view.probs, [1.0, 0.0])  # the second key is blocked
    open_view = neuron_view(q=[1.0, 2.0], k=[[3.0, 0.5], [-1.0, 1.0]], scale=0.5)
    np.testing.assert_allclose(open_view.probs, np.exp([2.0, 0.5]) / np.exp([2.0, 0.5]).sum())


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    directory = save_tiny(tmp_path_factory.mktemp("tiny"), transformers.BertModel)
    return BertModel.from_pretrained(directory).eval(), reference(directory)


@pytest.mark.parametrize("layer, head, query", [(0, 0, 0), (1, 3, 4)])
def test_equal_to_the_trace_and_to_hugging_faces_queries_and_keys(tiny, layer, head, query):
    ours, hf = tiny
    ids = torch.tensor([[2, 17, 5, 40, 9, 61, 3]])
    with torch.inference_mode():
        trace = ours.record(ids)
        expected = hf(ids, output_attentions=True, output_hidden_states=True)
    attention = trace.layers[layer].self_attn
    view = of_trace(attention, head, query)
    np.testing.assert_allclose(view.scaled, attention.scores[0, head, query].numpy(), atol=1e-5)
    np.testing.assert_allclose(view.probs, attention.probs[0, head, query].numpy(), atol=1e-6)
    np.testing.assert_allclose(view.probs, expected.attentions[layer][0, head, query].numpy(), atol=1e-5)
    # q and k of Hugging Face's layer, from its own projections of that layer's input
    self_attention = hf.encoder.layer[layer].attention.self
    hidden = expected.hidden_states[layer][0]  # (T, E)
    size = hf.config.hidden_size // hf.config.num_attention_heads
    with torch.no_grad():
        q = self_attention.query(hidden)[query, head * size:(head + 1) * size].numpy()
        k = self_attention.key(hidden)[:, head * size:(head + 1) * size].numpy()
    np.testing.assert_allclose(view.q, q, atol=1e-5)
    np.testing.assert_allclose(view.k, k, atol=1e-5)
    np.testing.assert_allclose(view.product.sum(-1), q @ k.T, atol=1e-5)
