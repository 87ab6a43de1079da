"""model.recording: one mechanism records every model. A partial trace up to layer L is the whole trace's first
L + 1 layers, bit for bit; the decoder keeps each layer's input and both of its attention maps as its recorded
pass computes them; and a decoding step t sees what row t of the full pass shows (its self-attention is causal)."""
import pytest
import torch

from model import Decoder, DecoderLayer
from model.masks import attention_mask_of, causal_mask, pads
from model.text_models import TextConfig, TextEncoder, TextTransformer
from tests.identical import assert_identical

IDS = torch.randint(1, 99, (2, 10), generator=torch.Generator().manual_seed(3))


def assert_layers_identical(ours, recorded):
    assert len(ours) == len(recorded)
    for i, (a, b) in enumerate(zip(ours, recorded)):
        assert_identical(a, b, f"layer {i}")


def model_of(which, tiny_bert):
    if which == "bert":
        return tiny_bert
    torch.manual_seed(1)
    return TextEncoder(TextConfig(99, 32, 4, 3, 48, norm_first=which == "pre-LN", max_len=64)).eval()


def masks_of(kind):
    attention_mask = torch.ones(2, 10, dtype=torch.long)
    attention_mask[-1, 7:] = 0
    return (attention_mask if pads(kind) else None), attention_mask_of(kind, 10)


@pytest.mark.parametrize("which", ["bert", "post-LN", "pre-LN"])
@pytest.mark.parametrize("kind", ["none", "causal+padding"])
@pytest.mark.parametrize("until", [0, 1, 2])
def test_a_partial_trace_is_the_start_of_the_whole_trace(tiny_bert, which, kind, until):
    model = model_of(which, tiny_bert)
    attention_mask, attn_mask = masks_of(kind)
    with torch.inference_mode():
        whole = model(IDS, attention_mask, attn_mask=attn_mask, record=True)
        part = model(IDS, attention_mask, attn_mask=attn_mask, record=True, until=until)
        recorded = model.record(IDS, attention_mask, attn_mask, until=until)
    assert len(part.trace.layers) == until + 1 == len(part.attentions)
    assert_identical(part.trace.embeddings, whole.trace.embeddings, "embeddings")
    for i in range(until + 1):
        assert_identical(part.trace.layers[i], whole.trace.layers[i], f"layer {i}")
        assert torch.equal(part.attentions[i], whole.attentions[i])
    assert torch.equal(part.last_hidden_state, whole.trace.layers[until].output)
    assert part.pooler_output is None and torch.equal(part.trace.output, part.last_hidden_state)
    assert_identical(recorded.embeddings, part.trace.embeddings, "record()")
    assert_layers_identical(recorded.layers, part.trace.layers)


def test_a_layer_past_the_stack_is_refused(tiny_bert):
    with pytest.raises(IndexError, match="layer 3 of a stack of 3 layers"):
        tiny_bert(IDS, record=True, until=3)


def decoder_and_inputs(norm_first, padded):
    torch.manual_seed(4)
    layer = DecoderLayer(32, 4, 48, dropout=0.0, batch_first=True, norm_first=norm_first)
    decoder = Decoder(layer, 3, torch.nn.LayerNorm(32)).eval()
    x, memory = torch.randn(2, 6, 32), torch.randn(2, 9, 32)
    memory_padding = torch.zeros(2, 9, dtype=torch.bool)
    if padded:
        memory_padding[1, 6:] = True
    masks = (causal_mask(6), None, None, memory_padding if padded else None)
    return decoder, x, memory, masks


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("padded", [False, True])
def test_the_decoder_keeps_inputs_and_both_maps_as_recorded(norm_first, padded):
    decoder, x, memory, masks = decoder_and_inputs(norm_first, padded)
    with torch.inference_mode():
        out, trace, _ = decoder.decode(x, memory, *masks, record=True)
        inputs, self_maps, cross_maps, self_mask, cross_mask = decoder.inputs_and_attentions(x, memory, *masks)
        part_out, part, _ = decoder.decode(x, memory, *masks, record=True, until=1)
        tgt_mask, memory_mask, tgt_padding, memory_padding = masks
        alone = decoder.layers[2].run(trace.layers[2].input, memory, mask=tgt_mask, memory_mask=memory_mask,
                                      padding=tgt_padding, memory_padding=memory_padding, record=True, ffn=False).trace
    assert_identical(inputs, torch.stack([layer.input for layer in trace.layers]), "inputs")
    assert_identical(self_maps, torch.stack([layer.self_attn.probs for layer in trace.layers]), "self-attention")
    assert_identical(cross_maps, torch.stack([layer.cross_attn.probs for layer in trace.layers]), "cross-attention")
    assert cross_maps.shape == (3, 2, 4, 6, 9)
    assert_identical(self_mask, trace.layers[-1].self_attn.mask, "self mask")
    assert_identical(cross_mask, trace.layers[-1].cross_attn.mask, "cross mask")
    assert_layers_identical(part.layers, trace.layers[:2])
    assert torch.equal(part_out, trace.layers[1].output)  # no final norm on a partial pass
    assert torch.equal(out, trace.output) and not torch.equal(out, trace.layers[-1].output)  # the final norm
    assert_identical(alone.self_attn, trace.layers[2].self_attn, "self-attention block alone")
    assert_identical(alone.cross_attn, trace.layers[2].cross_attn, "cross-attention block alone")
    assert alone.ffn_block is None


def test_a_decoding_step_is_one_row_of_the_full_pass():
    """What a translator's decoder computes at step t (the target so far, one more token each step) is row t of
    the pass over the whole target: the causal mask hides the later tokens."""
    torch.manual_seed(5)
    model = TextTransformer(TextConfig(99, 32, 4, 2, 48, max_len=32)).eval()
    src, tgt = torch.randint(1, 99, (1, 8)), torch.randint(1, 99, (1, 7))
    with torch.inference_mode():
        _, whole = model(src, tgt, record=True)
        for t in range(tgt.size(1)):
            _, step = model(src, tgt[:, :t + 1], record=True)
            for full, now in zip(whole.decoder.layers, step.decoder.layers):
                torch.testing.assert_close(now.self_attn.probs[..., t, :], full.self_attn.probs[..., t, :t + 1],
                                           atol=1e-6, rtol=0)
                torch.testing.assert_close(now.cross_attn.probs[..., t, :], full.cross_attn.probs[..., t, :],
                                           atol=1e-6, rtol=0)
                assert not full.self_attn.probs[..., t, t + 1:].any()  # the future gets nothing
