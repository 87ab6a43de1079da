"""Rollout by hand on 3 tokens, attention flow on a graph whose cut is obvious, and gradient x input saliency against
torch.autograd on Hugging Face's BertModel (eager) with the same weights."""
import numpy as np
import pytest
import torch

from model.analysis.rollout import FLOW_MAX_TOKENS, flow_row, rollout, saliency, with_residual
from model.bert import BertModel
from model.llama import Llama, LlamaConfig
from tests.model.bert.bert_checkpoints import reference, save_tiny

# one head per layer, 3 tokens, written out
A0 = np.array([[1.0, 0.0, 0.0],
               [0.5, 0.5, 0.0],
               [0.0, 1.0, 0.0]])
A1 = np.array([[0.0, 0.0, 1.0],
               [1.0, 0.0, 0.0],
               [0.0, 0.0, 1.0]])
MAPS = np.stack([A0, A1])[:, None]  # (2 layers, 1 head, 3, 3)


def test_rollout_by_hand_on_three_tokens():
    # Â = 0.5 A + 0.5 I (rows of A and I each sum to 1, so Â's rows already do)
    hat0 = np.array([[1.0, 0.0, 0.0],
                     [0.25, 0.75, 0.0],
                     [0.0, 0.5, 0.5]])
    hat1 = np.array([[0.5, 0.0, 0.5],
                     [0.5, 0.5, 0.0],
                     [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(with_residual(MAPS), np.stack([hat0, hat1]))
    # layer 1: Â1 · Â0, multiplied out by hand: row 0 = 0.5·[1,0,0] + 0.5·[0,.5,.5]
    expected = np.array([[0.5, 0.25, 0.25],
                         [0.625, 0.375, 0.0],
                         [0.0, 0.5, 0.5]])
    got = rollout(MAPS)
    np.testing.assert_allclose(got[0], hat0, atol=1e-7)
    np.testing.assert_allclose(got[1], expected, atol=1e-7)


def test_rollout_rows_sum_to_one_and_heads_are_averaged():
    rng = np.random.default_rng(1)
    maps = rng.random((4, 3, 7, 7))
    maps /= maps.sum(-1, keepdims=True)
    got = rollout(maps)
    np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(rollout(maps.mean(1, keepdims=True)), got, atol=1e-6)


def test_flow_on_a_graph_whose_min_cut_is_known():
    # one layer: flow from token i at the top to token j at the bottom is the one edge between them, Â[i, j]
    np.testing.assert_allclose(flow_row(MAPS, 1, 0), with_residual(MAPS)[0, 1], atol=1e-6)
    # two layers: from token 0 at the top, every path to input token 2 passes (1,0)->(0,2) [0.5·... ] or
    # (1,2)->(0,2): 0 -> 0 (0.5) then nothing to 2 from 0 at layer 0; 0 -> 2 (0.5) then 2 -> 2 (0.5): min(0.5, 0.5)
    row = flow_row(MAPS, 0, 1)
    assert row[2] == pytest.approx(0.5)
    # to input token 0: 0->0->0 carries min(0.5, 1.0) = 0.5; 0->2->... has no edge to 0 at layer 0
    assert row[0] == pytest.approx(0.5)
    # to input token 1: 0->2->1 carries min(0.5, 0.5) = 0.5
    assert row[1] == pytest.approx(0.5)


def test_flow_is_networkx_maximum_flow_to_float32s_last_place():
    import networkx as nx  # noqa: PLC0415 - the reference: pure Python, torch's own dependency

    rng = np.random.default_rng(4)
    maps = rng.random((3, 2, 9, 9)) ** 4
    maps /= maps.sum(-1, keepdims=True)
    a = with_residual(maps)
    graph = nx.DiGraph()
    for layer, i, j in np.ndindex(a.shape):
        graph.add_edge((layer + 1, i), (layer, j), capacity=float(a[layer, i, j]))
    for query in (0, 4, 8):
        want = [nx.maximum_flow_value(graph, (3, query), (0, j)) for j in range(9)]
        np.testing.assert_allclose(flow_row(maps, query, 2), want, rtol=3e-7, atol=2e-8)


def test_flow_is_bounded():
    n = FLOW_MAX_TOKENS + 1
    with pytest.raises(ValueError, match="at most"):
        flow_row(np.full((1, 1, n, n), 1 / n), 0, 0)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    import transformers  # noqa: PLC0415 - start-up cost: transformers takes seconds to import, and only checkpoints need it

    directory = save_tiny(tmp_path_factory.mktemp("tiny"), transformers.BertModel)
    return BertModel.from_pretrained(directory).eval(), reference(directory)


def hf_saliency(hf, ids, target, token):
    """The same quantity computed on Hugging Face's model: its embeddings' output as a leaf, its encoder, autograd."""
    with torch.enable_grad():
        x = hf.embeddings(input_ids=ids).detach().requires_grad_(True)
        out = hf.encoder(x).last_hidden_state[0]
        y = out.mean(0).norm() if target == "sentence" else out[token].norm()
        y.backward()
    product = (x.grad * x)[0].detach()
    return product.sum(-1).numpy(), product.norm(dim=-1).numpy()


@pytest.mark.parametrize("target, token", [("sentence", 0), ("token", 3)])
def test_saliency_equals_autograd_on_hugging_faces_model(tiny, target, token):
    ours, hf = tiny
    ids = torch.tensor([[2, 17, 5, 40, 9, 61, 3]])
    with torch.inference_mode():  # as the app runs it: on a model thread, under inference_mode
        signed, norm = saliency(ours, ids, target, token)
    want_signed, want_norm = hf_saliency(hf, ids, target, token)
    np.testing.assert_allclose(signed, want_signed, atol=1e-5)
    np.testing.assert_allclose(norm, want_norm, atol=1e-5)
    assert not any(p.grad is not None for p in ours.parameters())  # nothing left on the shared model


@pytest.mark.parametrize("target, token", [("sentence", 0), ("token", 5)])
def test_saliency_a_layer_at_a_time_equals_one_graph_on_a_causal_model(target, token):
    """The gradient goes back layer by layer from kept inputs (gradient checkpointing): on a 4-layer Llama, the same
    numbers as autograd through the whole stack at once."""
    torch.manual_seed(3)
    model = Llama(LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=48, num_hidden_layers=4,
                              num_attention_heads=4, num_key_value_heads=2, head_dim=8)).eval()
    ids = torch.randint(0, 50, (1, 9))
    with torch.inference_mode():
        signed, norm = saliency(model, ids, target, token)
    assert not any(p.grad is not None for p in model.parameters())  # nothing left on the shared model
    with torch.enable_grad():
        x = model.embed(ids, None, False)[0].detach().requires_grad_(True)
        out = model.stack_output(model.layer_outputs(x)[-1])[0]
        y = out.mean(0).norm() if target == "sentence" else out[token].norm()
        y.backward()
    product = (x.grad * x)[0].detach()
    np.testing.assert_allclose(signed, product.sum(-1).numpy(), atol=1e-6)
    np.testing.assert_allclose(norm, product.norm(dim=-1).numpy(), atol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_saliency_from_a_runs_layer_inputs_is_the_one_from_its_own_pass(tiny, causal):
    """The rollout page gives saliency the run's kept layer inputs (made under inference_mode, shared by every
    session) instead of a pass of its own: the same numbers bit for bit, and the run's tensors left as they were."""
    torch.manual_seed(4)
    model = Llama(LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=48, num_hidden_layers=4,
                              num_attention_heads=4, num_key_value_heads=2, head_dim=8)).eval() if causal else tiny[0]
    ids = torch.tensor([[2, 17, 5, 40, 9, 11, 3]])
    with torch.inference_mode():
        inputs = model.inputs_and_attentions(ids)[0][:, 0]  # (layers, T, E), as runtime.runs keeps them
        kept = inputs.clone()
        for target, token in (("sentence", 0), ("token", 3)):
            own = saliency(model, ids, target, token)
            from_run = saliency(model, ids, target, token, inputs)
            for a, b in zip(own, from_run, strict=True):
                np.testing.assert_array_equal(a, b)
    assert torch.equal(inputs, kept) and not inputs.requires_grad
