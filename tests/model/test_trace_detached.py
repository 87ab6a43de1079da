"""A recorded trace is plain data: no tensor in it takes part in autograd, so every one converts to NumPy.

The learned positions were the exception: a slice of an nn.Parameter keeps requires_grad even under
torch.inference_mode(), and the app's whole-trace .npz download failed on it (issue 16)."""
import dataclasses

import pytest
import torch

from model.text_models import TextConfig, TextEncoder, TextTransformer

IDS = torch.tensor([[5, 17, 3, 42, 8, 1]])  # (1, T) token ids, T = 6, below every vocabulary size here


def tensors(obj, path: str = "trace"):
    """(path, tensor) for every tensor in a trace: dataclass fields, tuples, nested traces."""
    if isinstance(obj, torch.Tensor):
        yield path, obj
    elif dataclasses.is_dataclass(obj):
        for field in dataclasses.fields(obj):
            yield from tensors(getattr(obj, field.name), f"{path}.{field.name}")
    elif isinstance(obj, (tuple, list)):
        for i, item in enumerate(obj):
            yield from tensors(item, f"{path}[{i}]")


def encoder(kind: str, tiny_bert):
    if kind == "bert":
        return tiny_bert
    return TextEncoder(TextConfig(99, 32, 4, 2, 37, positional=kind.removeprefix("random-"))).eval()


def recorded(model):
    """Everything the app records of a pass: the whole trace, the embeddings alone, one layer alone."""
    out = model(IDS, record=True)
    return out, {"forward": out.trace, "trace_embeddings": model.trace_embeddings(IDS),
                 "trace_layer": model.trace_layer(1, out.trace.layers[1].input)}


def assert_detached(traces: dict) -> int:
    found = [(f"{name}:{path}", t) for name, trace in traces.items() for path, t in tensors(trace)]
    assert [path for path, t in found if t.requires_grad] == []
    for path, t in found:
        t.numpy()  # what trace_npz does with each; raised on the learned positions
    return len(found)


NO_AUTOGRAD = {"inference_mode": torch.inference_mode, "no_grad": torch.no_grad}


@pytest.mark.parametrize("mode", list(NO_AUTOGRAD))
@pytest.mark.parametrize("kind", ["bert", "random-learned", "random-sinusoidal"])
def test_trace_without_autograd_holds_no_tensor_requiring_grad(kind, mode, tiny_bert):
    model = encoder(kind, tiny_bert)  # built outside, as the app does: built inside, its weights need no grad
    with NO_AUTOGRAD[mode]():
        _, traces = recorded(model)
    count = assert_detached(traces)
    assert count > 30  # the walk reached the layers, not only the top level
    assert traces["forward"].embeddings.position.shape == (1, IDS.shape[1], 32)


@pytest.mark.parametrize("kind", ["bert", "random-learned"])
def test_trace_with_autograd_stays_in_the_graph(kind, tiny_bert):
    """Recorded with autograd on, nothing is detached: the trace's attentions are the output's, and gradients
    reach the learned positions."""
    model = encoder(kind, tiny_bert)
    out, traces = recorded(model)
    assert traces["forward"].attentions == out.attentions  # the same tensors
    assert traces["forward"].embeddings.position.requires_grad
    (out.last_hidden_state * torch.linspace(-1, 1, 32)).sum().backward()  # a plain sum of a LayerNorm is flat
    position_grad = (model.embeddings.position_embeddings if kind == "bert" else model.embedding.position).weight.grad
    assert position_grad is not None and position_grad[:IDS.shape[1]].abs().sum() > 0
    model.zero_grad()


def test_encoder_decoder_trace_without_autograd_is_detached():
    model = TextTransformer(TextConfig(99, 32, 4, 2, 37, positional="learned")).eval()  # as above: built outside
    with torch.inference_mode():
        _, trace = model(IDS, IDS[:, :4], record=True)
    assert_detached({"encoder": trace.encoder, "decoder": trace.decoder})
