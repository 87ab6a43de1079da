"""Where a token's representation comes from: attention rollout, attention flow (Abnar & Zuidema 2020, "Quantifying
Attention Flow in Transformers") and gradient x input saliency.

Rollout and flow read the attention maps alone. Each layer's map is first given the residual connection: the layer's
output is the attention's output plus its input, so Â = 0.5·A + 0.5·I (A the mean of the layer's heads), rows
renormalised. Rollout multiplies these through the layers; flow treats them as capacities of a graph and asks how
much can flow from a token at the top to each token at the bottom.
"""
import numpy as np
import torch
from torch import Tensor

FLOW_MAX_TOKENS = 48  # a query row's max-flows at 48 tokens: 29 ms for SmolLM2's 30 layers (bench/attention_flow.py)
FLOW_UNIT = 2.0**-30  # flow_row's capacities in whole units of this


def with_residual(attentions: np.ndarray) -> np.ndarray:
    """attentions (layers, heads, T, T) -> (layers, T, T): Â = 0.5 · mean over heads + 0.5 · I, rows summing to 1.
    Read a layer at a time (attentions may be any sequence of (heads, T, T) maps)."""
    mean = np.stack([np.asarray(layer, dtype=np.float64).mean(axis=0) for layer in attentions])  # (L, T, T)
    t = mean.shape[-1]
    a = 0.5 * mean + 0.5 * np.eye(t)
    return a / a.sum(-1, keepdims=True)


def rollout(attentions: np.ndarray) -> np.ndarray:
    """(layers, heads, T, T) -> (layers, T, T): entry l is Â_l · Â_{l-1} ··· Â_0, row i how much token i after layer
    l draws on each input token j (each row sums to 1)."""
    a = with_residual(attentions)
    out = np.empty_like(a)
    product = np.eye(a.shape[-1])
    for layer in range(a.shape[0]):
        product = a[layer] @ product  # (T, T)
        out[layer] = product
    return out.astype(np.float32)


def flow_row(attentions: np.ndarray, query: int, upto: int) -> np.ndarray:
    """(T,) attention flow from token `query` after layer `upto` to each input token: the value of a maximum flow
    through the graph whose nodes are (layer boundary, token) and whose edges (l+1, i) -> (l, j) have capacity
    Â_l[i, j]. At most FLOW_MAX_TOKENS tokens (ValueError beyond: max-flow grows as T^4 per row).

    SciPy's maximum flow (Dinic's algorithm, compiled) takes whole-number capacities: each is Â_l[i, j] in units of
    FLOW_UNIT (2^-30), so a flow is exact to a few units, 1e-8 at most here (float32's own step at 0.1 is 7e-9): the
    flows networkx computes in pure Python (tests/model/analysis/test_rollout.py), 35-280 times faster on real maps
    (bench/attention_flow.py: 24 tokens x 6 layers 7 ms against 1.2 s, which held the GIL throughout)."""
    from scipy.sparse import csr_array  # noqa: PLC0415 - start-up cost: only the attention flow needs it
    from scipy.sparse.csgraph import maximum_flow  # noqa: PLC0415

    t = attentions.shape[-1]
    if t > FLOW_MAX_TOKENS:
        raise ValueError(f"attention flow is computed for at most {FLOW_MAX_TOKENS} tokens, not {t}")
    a = with_residual(attentions[:upto + 1])  # (layers, T, T)
    layers = a.shape[0]
    node = np.arange((layers + 1) * t).reshape(layers + 1, t)  # node[l, i]: token i at layer boundary l
    sources = np.broadcast_to(node[1:, :, None], a.shape).ravel()  # (l + 1, i) ...
    targets = np.broadcast_to(node[:-1, None, :], a.shape).ravel()  # ... -> (l, j)
    capacity = np.rint(a.ravel() / FLOW_UNIT).astype(np.int32)
    graph = csr_array((capacity, (sources, targets)), shape=(node.size, node.size))
    graph.sort_indices()
    flows = [maximum_flow(graph, int(node[layers, query]), int(node[0, j])).flow_value for j in range(t)]
    return (np.array(flows, dtype=np.float64) * FLOW_UNIT).astype(np.float32)


TARGETS = ("sentence", "token")  # the scalar whose gradient is taken: the pooled sentence vector's norm, or a token's


def saliency(model, input_ids: torch.Tensor, target: str = "sentence", token: int = 0,
             inputs: Tensor | None = None) -> tuple[np.ndarray, ...]:
    """Gradient x input of a scalar output y with respect to the embeddings' output x (1, T, E), the vector each
    token enters the first layer with (token + position (+ segment) embeddings, after their LayerNorm).

    y is the norm of the mean over tokens of the model's final hidden states (target "sentence": the mean-pooled
    sentence embedding of a sentence-transformer) or of one token's final hidden state (target "token").
    Returns (signed, norm), each (T,): Σ_d x·∂y/∂x over the E dimensions, and the L2 norm of x·∂y/∂x.
    Autograd on a fresh input: nothing is kept on the shared model (its parameters are not asked for grads).

    The gradient goes back a layer at a time, from each layer's input kept by a pass without autograd (gradient
    checkpointing): at once autograd would keep every layer's scores and probabilities, 1.35 GB for SmolLM2 at 512
    tokens; so it keeps one layer's, for the cost of a second forward pass. inputs (layers, T, E): each layer's input
    from a pass of this model over input_ids with no mask (a runtime.runs.Run's `hidden`), read instead of that
    pass: SmolLM2 at 32 tokens, 448 -> 305 ms, the same numbers (bench/saliency.py)."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, not {target!r}")

    def scalar(last: Tensor) -> Tensor:
        out = model.stack_output(last)[0]  # (T, E)
        return out.mean(0).norm() if target == "sentence" else out[token].norm()

    product = _gradient_x_input(model, input_ids, scalar, inputs)
    return product.sum(-1).numpy(), product.norm(dim=-1).numpy()


def word_saliency(model, input_ids: torch.Tensor, position: int, word: int) -> tuple[np.ndarray, ...]:
    """saliency() for a causal LM's writing: y = log p(word | the tokens up to `position`), the log-probability the
    model gives at `position` to the word it wrote next. input_ids (1, T). Returns (signed, norm), each (T,); the
    tokens after `position` get 0 (the causal mask keeps them out)."""
    def scalar(last: Tensor) -> Tensor:
        return torch.log_softmax(model.read_out(last[0, position]), -1)[word]

    product = _gradient_x_input(model, input_ids, scalar)
    return product.sum(-1).numpy(), product.norm(dim=-1).numpy()


def _gradient_x_input(model, input_ids: torch.Tensor, scalar, kept: Tensor | None = None) -> Tensor:
    """(T, E) x * dy/dx, y = scalar(the last block's output (1, T, E)), x the embeddings' output; kept (layers, T, E):
    each layer's input already computed (else computed here, without autograd)."""
    with torch.inference_mode(False):
        if kept is not None:  # a copy of each (a run's are shared, and made under inference_mode)
            inputs = [layer[None].clone() for layer in kept]
        else:
            x, _ = model.embed(input_ids.clone(), None, False)
            inputs = [x.detach().clone()]  # (1, T, E) each layer's input
            with torch.no_grad():
                for index in range(model.facts.layers - 1):
                    inputs.append(model.layer_output(index, inputs[-1]))
        with torch.enable_grad():
            last = inputs[-1].requires_grad_(True)
            y = scalar(model.layer_output(len(inputs) - 1, last))
            (grad,) = torch.autograd.grad(y, last)
            for index in reversed(range(len(inputs) - 1)):
                x = inputs[index].requires_grad_(True)
                (grad,) = torch.autograd.grad(model.layer_output(index, x), x, grad)
        return (grad * inputs[0])[0].detach()  # (T, E)
