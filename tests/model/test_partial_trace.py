"""inputs_and_attentions, trace_layer, trace_embeddings, stack_output: what the app keeps of a recorded pass, and
one layer (or the embeddings, or the stack's output) recomputed alone from the layer's input, equal what
forward(record=True) recorded, bit for bit. The app keeps only each layer's input and recomputes the rest."""
import itertools

import pytest
import torch

from model.masks import CAUSAL_PADDING, NO_MASK, PADDING, attention_mask_of, pads
from model.text_models import TextConfig, TextEncoder
from tests.identical import assert_identical


def text_encoder(norm_first):
    torch.manual_seed(1)
    return TextEncoder(TextConfig(99, 32, 4, 3, 48, norm_first=norm_first, max_len=64)).eval()


def inputs(batch):
    ids = torch.randint(1, 99, (batch, 10), generator=torch.Generator().manual_seed(2))
    attention_mask = torch.ones(batch, 10, dtype=torch.long)
    attention_mask[-1, 7:] = 0  # the last sequence is padded
    return ids, attention_mask


EVERY_CASE = pytest.mark.parametrize("which, batch, masks", list(itertools.product(
    ["bert", "post-LN", "pre-LN"], [1, 3], [NO_MASK, PADDING, CAUSAL_PADDING])))


def recorded(tiny_bert, which, batch, masks):
    """(model, ids, attention_mask, attn_mask, forward(record=True).trace) for one case."""
    model = tiny_bert if which == "bert" else text_encoder(which == "pre-LN")
    ids, attention_mask = inputs(batch)
    attention_mask = attention_mask if pads(masks) else None
    attn_mask = attention_mask_of(masks, 10)
    with torch.inference_mode():
        trace = model(ids, attention_mask, attn_mask=attn_mask, record=True).trace
    return model, ids, attention_mask, attn_mask, trace


@EVERY_CASE
def test_one_layer_recorded_alone_equals_the_full_trace(tiny_bert, which, batch, masks):
    model, ids, attention_mask, attn_mask, trace = recorded(tiny_bert, which, batch, masks)
    with torch.inference_mode():
        assert_identical(model.trace_embeddings(ids), trace.embeddings, "embeddings")
        for i, layer in enumerate(trace.layers):
            alone = model.trace_layer(i, layer.input, attention_mask, attn_mask)
            assert_identical(alone, layer, f"layer {i}")


@EVERY_CASE
def test_inputs_and_attentions_and_the_stack_output_equal_the_full_trace(tiny_bert, which, batch, masks):
    model, ids, attention_mask, attn_mask, trace = recorded(tiny_bert, which, batch, masks)
    with torch.inference_mode():
        layer_inputs, attentions, mask = model.inputs_and_attentions(ids, attention_mask, attn_mask)
        last = model.trace_layer(len(trace.layers) - 1, trace.layers[-1].input, attention_mask, attn_mask)
        output = model.stack_output(last.output)
    assert_identical(layer_inputs, torch.stack([layer.input for layer in trace.layers]), "inputs")
    assert_identical(attentions, torch.stack([layer.self_attn.probs for layer in trace.layers]), "attentions")
    for i, layer in enumerate(trace.layers):
        assert_identical(mask, layer.self_attn.mask, f"layer {i}'s mask")
    assert_identical(output, trace.output, "output")
    if which == "pre-LN":  # the final norm is applied: not the last layer's output as it is
        assert not torch.equal(output, last.output)


def test_a_different_input_gives_a_different_layer(tiny_bert):
    """The recomputation reads its input: not a trace kept from an earlier call."""
    ids, _ = inputs(1)
    with torch.inference_mode():
        trace = tiny_bert(ids, record=True).trace
        other = tiny_bert.trace_layer(1, trace.layers[0].input)  # layer 0's input fed to layer 1
    assert not torch.equal(other.self_attn.probs, trace.layers[1].self_attn.probs)
