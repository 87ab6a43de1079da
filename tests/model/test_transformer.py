"""Encoder / Decoder / Transformer vs nn.TransformerEncoder / TransformerDecoder / Transformer; traces."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from model import Decoder, DecoderLayer, Encoder, EncoderLayer, Transformer
from model.trace import TransformerTrace

E, NH, FF, LAYERS = 8, 2, 16, 2
B, T, S = 3, 5, 6

pytestmark = [pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
              pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")]


def swish(x):
    return F.silu(x)


STACKS = [dict(batch_first=bf, norm_first=nf) for bf in (True, False) for nf in (False, True)]
TRANSFORMERS = [dict(batch_first=bf, norm_first=nf, activation=act, bias=bias) for bf in (True, False)
                for nf in (False, True) for act in ("relu", "gelu", swish) for bias in (True, False)]


def config_id(c):
    act = c.get("activation", "relu")
    parts = ["bf" if c["batch_first"] else "sf", "pre" if c["norm_first"] else "post",
             act if isinstance(act, str) else "callable"]
    return "-".join(parts + ([] if c.get("bias", True) else ["nobias"]))


def grad_mode(grad: bool):
    return torch.enable_grad() if grad else torch.no_grad()


def to_layout(x, batch_first):
    return x if batch_first else x.transpose(0, 1)


def encoder_pair(h, final_norm=True, enable_nested_tensor=True, **config):
    torch.manual_seed(0)
    norm = nn.LayerNorm(E) if final_norm else None
    ref = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, NH, FF, **config), LAYERS, norm,
                                enable_nested_tensor=enable_nested_tensor)
    ref = h.randomize(ref, 1).eval()
    ours = Encoder(EncoderLayer(E, NH, FF, **config), LAYERS, nn.LayerNorm(E) if final_norm else None,
                   enable_nested_tensor=enable_nested_tensor).eval()
    ours.load_state_dict(ref.state_dict(), strict=True)
    return ours, ref


def decoder_pair(h, final_norm=True, **config):
    torch.manual_seed(0)
    norm = nn.LayerNorm(E) if final_norm else None
    ref = h.randomize(nn.TransformerDecoder(nn.TransformerDecoderLayer(E, NH, FF, **config), LAYERS, norm), 1).eval()
    ours = Decoder(DecoderLayer(E, NH, FF, **config), LAYERS, nn.LayerNorm(E) if final_norm else None).eval()
    ours.load_state_dict(ref.state_dict(), strict=True)
    return ours, ref


def transformer_pair(h, **config):
    kwargs = dict(d_model=E, nhead=NH, num_encoder_layers=LAYERS, num_decoder_layers=LAYERS, dim_feedforward=FF)
    torch.manual_seed(0)
    ref = h.randomize(nn.Transformer(**kwargs, **config), 1).eval()
    ours = Transformer(**kwargs, **config).eval()
    ours.load_state_dict(ref.state_dict(), strict=True)
    return ours, ref


# --- stacks equal to torch ---------------------------------------------------------------------

@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("final_norm", [True, False], ids=["norm", "no-norm"])
@pytest.mark.parametrize("config", STACKS, ids=config_id)
def test_encoder_equals_torch(config, final_norm, self_mask_case, grad, h):
    ours, ref = encoder_pair(h, final_norm, **config)
    mask, padding, is_causal = h.self_masks(self_mask_case, B, T)
    src = to_layout(torch.randn(B, T, E), config["batch_first"])
    with grad_mode(grad):
        expected = ref(src, mask=mask, src_key_padding_mask=padding, is_causal=is_causal)
        h.close(ours(src, mask=mask, src_key_padding_mask=padding, is_causal=is_causal), expected)


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("final_norm", [True, False], ids=["norm", "no-norm"])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_encoder_reproduces_torch_nested_tensor_zeros(kind, final_norm, grad, h):
    """Under no_grad, batch_first and a left-aligned padding mask, torch's TransformerEncoder runs on a
    nested tensor and returns 0 at padded positions (before the final norm); with grad it does not."""
    ours, ref = encoder_pair(h, final_norm, batch_first=True)
    padding = h.padding_mask(kind, B, T, 0, left_aligned=True)
    padded = padding if kind == "bool" else padding.isneginf()
    x = torch.randn(B, T, E)
    with grad_mode(grad):
        expected = ref(x, src_key_padding_mask=padding)
        out = ours(x, src_key_padding_mask=padding)
    h.close(out, expected)
    zeros = torch.zeros(int(padded.sum()), E)
    at_padding = ref.norm(zeros) if final_norm else zeros
    assert torch.allclose(expected[padded], at_padding) == (not grad)  # the premise: torch's paths differ
    h.close(out[~padded], expected[~padded])


@pytest.mark.parametrize("setup", ["padding-in-the-middle", "nested-disabled", "odd-heads", "pre-ln", "eval-mask"])
def test_encoder_keeps_padded_positions_when_torch_does(setup, h):
    """Where torch's no_grad path does not run on nested tensors, nothing is zeroed, in either model."""
    kwargs = dict(batch_first=True, norm_first=setup == "pre-ln")
    torch.manual_seed(0)
    if setup == "odd-heads":
        ref = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, 1, FF, **kwargs), LAYERS).eval()
        ours = Encoder(EncoderLayer(E, 1, FF, **kwargs), LAYERS).eval()
        ours.load_state_dict(ref.state_dict())
    else:
        ours, ref = encoder_pair(h, False, enable_nested_tensor=setup != "nested-disabled", **kwargs)
    padding = h.padding_mask("bool", B, T, 0, left_aligned=True)
    if setup == "padding-in-the-middle":
        padding[0] = torch.tensor([False, True, False, False, True])
    mask = h.attention_mask("bool", T, T, 0) if setup == "eval-mask" else None
    x = torch.randn(B, T, E)
    with torch.no_grad():
        expected = ref(x, mask=mask, src_key_padding_mask=padding)
        out = ours(x, mask=mask, src_key_padding_mask=padding)
    h.close(out, expected)
    assert not torch.allclose(out[padding], torch.zeros(int(padding.sum()), E))


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("final_norm", [True, False], ids=["norm", "no-norm"])
@pytest.mark.parametrize("config", STACKS, ids=config_id)
def test_decoder_equals_torch(config, final_norm, decoder_mask_case, grad, h):
    ours, ref = decoder_pair(h, final_norm, **config)
    tgt, memory = (to_layout(torch.randn(B, n, E), config["batch_first"]) for n in (T, S))
    masks = h.decoder_masks(decoder_mask_case, B, T, S)
    with grad_mode(grad):
        h.close(ours(tgt, memory, **masks), ref(tgt, memory, **masks))


def transformer_masks(h, case):
    if case == "none":
        return {}
    kind = "bool" if case == "bool" else "float"
    masks = h.decoder_masks(f"all-{kind}", B, T, S)
    return dict(src_mask=h.attention_mask(kind, S, S, 7), src_key_padding_mask=h.padding_mask(kind, B, S, 8),
                **masks)


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("case", ["none", "bool", "float"])
@pytest.mark.parametrize("config", TRANSFORMERS, ids=config_id)
def test_transformer_equals_torch(config, case, grad, h):
    ours, ref = transformer_pair(h, **config)
    src, tgt = (to_layout(torch.randn(B, n, E), config["batch_first"]) for n in (S, T))
    masks = transformer_masks(h, case)
    with grad_mode(grad):
        h.close(ours(src, tgt, **masks), ref(src, tgt, **masks))


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("config", TRANSFORMERS[::4], ids=config_id)
def test_unbatched_stacks_equal_torch(config, grad, h):
    ours, ref = transformer_pair(h, **config)
    src, tgt = torch.randn(S, E), torch.randn(T, E)
    padding = h.padding_mask("bool", 1, S, 0)[0]
    masks = dict(src_key_padding_mask=padding, tgt_mask=h.attention_mask("causal-bool", T, T, 0),
                 memory_key_padding_mask=padding)
    with grad_mode(grad):
        out = ours(src, tgt, **masks)
        assert out.shape == (T, E)
        h.close(out, ref(src, tgt, **masks))
        h.close(ours.encoder(src, src_key_padding_mask=masks["src_key_padding_mask"]),
                ref.encoder(src, src_key_padding_mask=masks["src_key_padding_mask"]))


def test_transformer_input_errors(h):
    ours, _ = transformer_pair(h, batch_first=True)
    with pytest.raises(RuntimeError, match="batch number of src and tgt must be equal"):
        ours(torch.randn(2, S, E), torch.randn(3, T, E))
    with pytest.raises(RuntimeError, match="feature number of src and tgt must be equal to d_model"):
        ours(torch.randn(2, S, E + 1), torch.randn(2, T, E + 1))


# --- parameters --------------------------------------------------------------------------------

def test_default_parameter_count():
    count = sum(p.numel() for p in Transformer().parameters())
    assert count == 44140544
    assert count == sum(p.numel() for p in nn.Transformer().parameters())


@pytest.mark.parametrize("config", [{}, {"bias": False}, {"norm_first": True, "batch_first": True}], ids=str)
def test_names_and_strict_loading_both_ways(config, h):
    kwargs = dict(d_model=E, nhead=NH, num_encoder_layers=LAYERS, num_decoder_layers=3, dim_feedforward=FF, **config)
    torch.manual_seed(0)
    ref = nn.Transformer(**kwargs).eval()
    torch.manual_seed(0)
    ours = Transformer(**kwargs).eval()
    assert {n for n, _ in ours.named_parameters()} == {n for n, _ in ref.named_parameters()}
    assert ours.state_dict().keys() == ref.state_dict().keys()
    for (name, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters(), strict=True):
        assert torch.equal(p, q), name  # same initialisation as torch, seed for seed
    h.randomize(ours, 2)
    ref.load_state_dict(ours.state_dict(), strict=True)  # ours -> torch
    src, tgt = torch.randn(S, B, E), torch.randn(T, B, E)
    if config.get("batch_first"):
        src, tgt = src.transpose(0, 1), tgt.transpose(0, 1)
    h.close(ours(src, tgt), ref(src, tgt))
    h.randomize(ref, 3)
    ours.load_state_dict(ref.state_dict(), strict=True)  # torch -> ours
    h.close(ours(src, tgt), ref(src, tgt))


# --- traces ------------------------------------------------------------------------------------

@pytest.mark.parametrize("config", STACKS, ids=config_id)
def test_encoder_trace(config, h):
    ours, ref = encoder_pair(h, **config)
    x = torch.randn(B, T, E)
    padding = h.padding_mask("bool", B, T, 0)
    out, trace = ours(to_layout(x, config["batch_first"]), src_key_padding_mask=padding, record=True)
    h.check_stack(trace, LAYERS)
    h.close(out, ref(to_layout(x, config["batch_first"]), src_key_padding_mask=padding))
    h.close(trace.output, to_layout(out, config["batch_first"]))
    h.close(trace.output, ours.norm(trace.layers[-1].output))
    h.close(trace.layers[0].input, x)
    assert trace.embeddings is None


@pytest.mark.parametrize("config", STACKS, ids=config_id)
def test_transformer_trace(config, h):
    ours, ref = transformer_pair(h, **config)
    src, tgt = torch.randn(B, S, E), torch.randn(B, T, E)
    masks = transformer_masks(h, "bool")
    out, trace = ours(to_layout(src, config["batch_first"]), to_layout(tgt, config["batch_first"]), **masks,
                      record=True)
    assert isinstance(trace, TransformerTrace)
    h.close(out, ref(to_layout(src, config["batch_first"]), to_layout(tgt, config["batch_first"]), **masks))
    h.check_stack(trace.encoder, LAYERS)
    h.check_stack(trace.decoder, LAYERS)
    memory = to_layout(ref.encoder(to_layout(src, config["batch_first"]), mask=masks["src_mask"],
                                   src_key_padding_mask=masks["src_key_padding_mask"]), config["batch_first"])
    h.close(trace.encoder.output, memory)
    h.close(trace.decoder.output, to_layout(out, config["batch_first"]))
    h.close(trace.decoder.layers[0].input, tgt)
    for i, layer in enumerate(trace.decoder.layers):
        assert layer.cross_attn.probs.shape == (B, NH, T, S)
        attn = ours.decoder.layers[i].multihead_attn
        k = F.linear(memory, attn.in_proj_weight[E:2 * E], attn.in_proj_bias[E:2 * E])
        h.close(layer.cross_attn.k, k.view(B, S, NH, -1).transpose(1, 2))
        assert torch.all(layer.self_attn.probs[..., masks["tgt_mask"]] == 0.0)


def test_record_false_returns_no_trace_and_stores_nothing(h):
    ours, _ = transformer_pair(h, batch_first=True)
    src, tgt = torch.randn(B, S, E), torch.randn(B, T, E)
    before = h.module_state(ours)
    weights = {k: v.clone() for k, v in ours.state_dict().items()}
    out = ours(src, tgt)
    assert isinstance(out, torch.Tensor)
    assert isinstance(ours.encoder(src), torch.Tensor) and isinstance(ours.decoder(tgt, src), torch.Tensor)
    ours(src, tgt, record=True)
    ours.encoder(src, record=True)
    ours.decoder(tgt, src, record=True)
    assert h.module_state(ours) == before
    assert all(torch.equal(v, weights[k]) for k, v in ours.state_dict().items())


def test_module_state_snapshot_sees_a_stored_attribute(h):
    """The check above can fail: a module that keeps something from its forward is noticed."""
    ours, _ = transformer_pair(h, batch_first=True)
    before = h.module_state(ours)
    ours.encoder.layers[1].self_attn.last_probs = torch.zeros(1)
    assert h.module_state(ours) != before
