"""EncoderLayer / DecoderLayer vs nn.TransformerEncoderLayer / nn.TransformerDecoderLayer, and their traces."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from model import DecoderLayer, EncoderLayer
from model.trace import AttentionTrace, LayerTrace, ResidualTrace

E, NH, FF = 8, 2, 16
B, T, S = 3, 5, 4


def swish(x):
    return F.silu(x)


CONFIGS = [dict(batch_first=bf, norm_first=nf, activation=act, bias=bias)
           for bf in (True, False) for nf in (False, True) for act in ("relu", "gelu", swish) for bias in (True, False)]


def config_id(c):
    act = c["activation"] if isinstance(c["activation"], str) else "callable"
    return f"{'bf' if c['batch_first'] else 'sf'}-{'pre' if c['norm_first'] else 'post'}-{act}-bias{int(c['bias'])}"


def grad_mode(grad: bool):
    return torch.enable_grad() if grad else torch.no_grad()


def layer_pair(ours_cls, ref_cls, h, seed=0, **kwargs):
    torch.manual_seed(seed)
    ref = h.randomize(ref_cls(E, NH, FF, **kwargs), seed).eval()
    ours = ours_cls(E, NH, FF, **kwargs).eval()
    ours.load_state_dict(ref.state_dict(), strict=True)
    return ours, ref


def to_layout(x, batch_first):
    """(B, T, E) -> the layout a module with this batch_first expects."""
    return x if batch_first else x.transpose(0, 1)


def decoder_masks(h, case, seed=0):
    return h.decoder_masks(case, B, T, S, seed)


# --- equal to torch ----------------------------------------------------------------------------

@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_encoder_layer_equals_torch(config, self_mask_case, grad, h):
    ours, ref = layer_pair(EncoderLayer, nn.TransformerEncoderLayer, h, **config)
    mask, padding, is_causal = h.self_masks(self_mask_case, B, T)
    src = to_layout(torch.randn(B, T, E), config["batch_first"])
    with grad_mode(grad):
        expected = ref(src, src_mask=mask, src_key_padding_mask=padding, is_causal=is_causal)
        h.close(ours(src, src_mask=mask, src_key_padding_mask=padding, is_causal=is_causal), expected)


@pytest.mark.parametrize("config", CONFIGS[:12], ids=config_id)
def test_encoder_layer_arbitrary_float_mask(config, h):
    """A float mask is added to the scores, whatever its values: compared with torch's math path
    (its no_grad fast path returns NaN for finite non-zero biases, a PyTorch quirk we do not copy)."""
    ours, ref = layer_pair(EncoderLayer, nn.TransformerEncoderLayer, h, **config)
    mask = h.additive(h.blocked((T, T), 0), seed=1)  # random biases and -inf
    src = to_layout(torch.randn(B, T, E), config["batch_first"])
    with torch.enable_grad():
        expected = ref(src, src_mask=mask)
    for mode in (torch.no_grad(), torch.enable_grad()):
        with mode:
            h.close(ours(src, src_mask=mask), expected)


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_decoder_layer_equals_torch(config, decoder_mask_case, grad, h):
    ours, ref = layer_pair(DecoderLayer, nn.TransformerDecoderLayer, h, **config)
    tgt, memory = (to_layout(torch.randn(B, n, E), config["batch_first"]) for n in (T, S))
    masks = decoder_masks(h, decoder_mask_case)
    with grad_mode(grad):
        h.close(ours(tgt, memory, **masks), ref(tgt, memory, **masks))


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("config", CONFIGS[::5], ids=config_id)
def test_unbatched_layers_equal_torch(config, masked, h):
    enc, enc_ref = layer_pair(EncoderLayer, nn.TransformerEncoderLayer, h, **config)
    dec, dec_ref = layer_pair(DecoderLayer, nn.TransformerDecoderLayer, h, **config)
    src, tgt = torch.randn(T, E), torch.randn(S, E)
    enc_masks = dict(src_mask=h.attention_mask("bool", T, T, 0),
                     src_key_padding_mask=h.padding_mask("bool", 1, T, 1)[0]) if masked else {}
    dec_masks = dict(tgt_mask=h.attention_mask("causal-float", S, S, 0), memory_mask=h.attention_mask("float", S, T, 2),
                     memory_key_padding_mask=h.padding_mask("float", 1, T, 3)[0]) if masked else {}
    memory = enc(src, **enc_masks)
    assert memory.shape == (T, E)
    h.close(memory, enc_ref(src, **enc_masks))
    h.close(dec(tgt, memory, **dec_masks), dec_ref(tgt, memory, **dec_masks))


@pytest.mark.parametrize("cls,ref_cls", [(EncoderLayer, nn.TransformerEncoderLayer),
                                         (DecoderLayer, nn.TransformerDecoderLayer)])
@pytest.mark.parametrize("bias", [True, False])
def test_state_dict_loads_both_ways(cls, ref_cls, bias, h):
    torch.manual_seed(0)
    ours = h.randomize(cls(E, NH, FF, bias=bias, batch_first=True), 1).eval()
    ref = ref_cls(E, NH, FF, bias=bias, batch_first=True).eval()
    assert {n for n, _ in ours.named_parameters()} == {n for n, _ in ref.named_parameters()}
    assert ours.state_dict().keys() == ref.state_dict().keys()
    ref.load_state_dict(ours.state_dict(), strict=True)
    x, mem = torch.randn(B, T, E), torch.randn(B, S, E)
    args = (x,) if cls is EncoderLayer else (x, mem)
    h.close(ours(*args), ref(*args))


def test_causal_hint_without_mask_means_causal(h):
    """PyTorch's layers raise on is_causal without a mask; ours apply the causal mask."""
    ours, ref = layer_pair(EncoderLayer, nn.TransformerEncoderLayer, h, batch_first=True)
    x = torch.randn(B, T, E)
    causal = nn.Transformer.generate_square_subsequent_mask(T)
    h.close(ours(x, is_causal=True), ref(x, src_mask=causal, is_causal=True))
    dec, dec_ref = layer_pair(DecoderLayer, nn.TransformerDecoderLayer, h, batch_first=True)
    mem = torch.randn(B, S, E)
    h.close(dec(x, mem, tgt_is_causal=True), dec_ref(x, mem, tgt_mask=causal, tgt_is_causal=True))


def test_unknown_activation():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        EncoderLayer(E, NH, FF, activation="tanh")


# --- traces ------------------------------------------------------------------------------------

def check_residual(block: ResidualTrace, norm: nn.LayerNorm, norm_first: bool, h):
    """Post-LN: out = norm(x + f(x)); Pre-LN: out = residual = x + f(norm(x))."""
    assert isinstance(block, ResidualTrace)
    h.close(block.residual, block.input + block.sublayer_out)
    if norm_first:
        h.close(block.sublayer_in, norm(block.input))
        h.close(block.output, block.residual)
    else:
        h.close(block.sublayer_in, block.input)
        h.close(block.output, norm(block.input + block.sublayer_out))


def check_ffn(trace: LayerTrace, layer, h):
    hidden = layer.activation(layer.linear1(trace.ffn_block.sublayer_in))
    assert trace.ffn_hidden.shape == (*trace.ffn_block.input.shape[:2], FF)
    h.close(trace.ffn_hidden, hidden)
    h.close(trace.ffn_block.sublayer_out, layer.linear2(hidden))


def heads(x):  # (B, T, E) -> (B, nh, T, hd)
    return x.view(x.size(0), x.size(1), NH, -1).transpose(1, 2)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_trace(batch_first, norm_first, h):
    layer, _ = layer_pair(EncoderLayer, nn.TransformerEncoderLayer, h, batch_first=batch_first,
                          norm_first=norm_first, activation="gelu")
    x = torch.randn(B, T, E)
    padding = h.padding_mask("bool", B, T, 0)
    out, trace = layer(to_layout(x, batch_first), src_key_padding_mask=padding, record=True)
    h.close(out, layer(to_layout(x, batch_first), src_key_padding_mask=padding))
    assert isinstance(trace, LayerTrace) and isinstance(trace.self_attn, AttentionTrace)
    assert trace.cross_attn is None and trace.cross_attn_block is None
    h.close(trace.input, x)
    h.close(trace.output, to_layout(out, batch_first))
    check_residual(trace.self_attn_block, layer.norm1, norm_first, h)
    check_residual(trace.ffn_block, layer.norm2, norm_first, h)
    h.close(trace.self_attn_block.sublayer_out, trace.self_attn.output)
    h.close(trace.self_attn.q, heads(F.linear(trace.self_attn_block.sublayer_in, layer.self_attn.in_proj_weight[:E],
                                              layer.self_attn.in_proj_bias[:E])))
    h.close(trace.ffn_block.input, trace.self_attn_block.output)
    check_ffn(trace, layer, h)
    assert torch.all(trace.self_attn.probs[padding.view(B, 1, 1, T).expand(B, NH, T, T)] == 0.0)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_trace(batch_first, norm_first, h):
    layer, _ = layer_pair(DecoderLayer, nn.TransformerDecoderLayer, h, batch_first=batch_first, norm_first=norm_first)
    x, memory = torch.randn(B, T, E), torch.randn(B, S, E)
    masks = decoder_masks(h, "all-bool")
    out, trace = layer(to_layout(x, batch_first), to_layout(memory, batch_first), **masks, record=True)
    h.close(out, layer(to_layout(x, batch_first), to_layout(memory, batch_first), **masks))
    h.close(trace.input, x)
    h.close(trace.output, to_layout(out, batch_first))
    assert trace.self_attn.probs.shape == (B, NH, T, T)
    assert trace.cross_attn.probs.shape == (B, NH, T, S)
    assert torch.all(trace.self_attn.probs[..., masks["tgt_mask"]] == 0.0)  # causal
    assert torch.all(trace.cross_attn.probs[..., masks["memory_mask"]] == 0.0)
    cross = layer.multihead_attn
    h.close(trace.cross_attn.k, heads(F.linear(memory, cross.in_proj_weight[E:2 * E], cross.in_proj_bias[E:2 * E])))
    for block, norm in ((trace.self_attn_block, layer.norm1), (trace.cross_attn_block, layer.norm2),
                        (trace.ffn_block, layer.norm3)):
        check_residual(block, norm, norm_first, h)
    h.close(trace.cross_attn_block.input, trace.self_attn_block.output)
    h.close(trace.cross_attn_block.sublayer_out, trace.cross_attn.output)
    h.close(trace.ffn_block.input, trace.cross_attn_block.output)
    check_ffn(trace, layer, h)


def test_layers_without_record_return_a_tensor(h):
    enc, _ = layer_pair(EncoderLayer, nn.TransformerEncoderLayer, h, batch_first=True)
    dec, _ = layer_pair(DecoderLayer, nn.TransformerDecoderLayer, h, batch_first=True)
    x = torch.randn(B, T, E)
    assert isinstance(enc(x), torch.Tensor) and isinstance(dec(x, x), torch.Tensor)
