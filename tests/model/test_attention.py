"""scaled_dot_product_attention vs F.scaled_dot_product_attention; MultiHeadAttention vs nn.MultiheadAttention."""
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from model import MultiHeadAttention, scaled_dot_product_attention
from model.trace import AttentionTrace

NEG_INF = float("-inf")


def close(actual, expected, atol=1e-5):
    torch.testing.assert_close(actual, expected, atol=atol, rtol=1e-5)


def blocked_with_open_key(shape, generator, open_key):
    """Random bool mask (True = blocked) in which key `open_key` is never blocked: no fully blocked row."""
    mask = torch.rand(shape, generator=generator) < 0.4
    mask[..., open_key] = False
    return mask


def as_float(blocked, generator):
    """An additive mask: -inf where blocked, arbitrary finite biases elsewhere."""
    return torch.randn(blocked.shape, generator=generator).masked_fill(blocked, NEG_INF)


# --- scaled dot-product attention -------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.lists(st.integers(1, 3), max_size=2), L=st.integers(1, 6),
       S=st.integers(1, 6), dk=st.integers(1, 8), dv=st.integers(1, 5),
       mask_kind=st.sampled_from([None, "bool", "float", "bool-2d", "float-2d"]),
       scale=st.sampled_from([None, 1.0, 0.1, 2.5]))
def test_sdpa_equals_torch(seed, batch, L, S, dk, dv, mask_kind, scale):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(*batch, n, d, generator=g) for n, d in ((L, dk), (S, dk), (S, dv)))
    blocked = blocked_with_open_key((L, S) if mask_kind and mask_kind.endswith("2d") else (*batch, L, S),
                                    g, open_key=int(torch.randint(S, (1,), generator=g)))
    mask = None if mask_kind is None else blocked if mask_kind.startswith("bool") else as_float(blocked, g)
    torch_mask = None if mask is None else (~mask if mask.dtype == torch.bool else mask)  # torch bool: True = keep

    out, probs = scaled_dot_product_attention(q, k, v, mask, scale=scale)
    close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=torch_mask, scale=scale))
    used_scale = 1 / math.sqrt(dk) if scale is None else scale
    additive = torch.zeros(L, S) if mask is None else mask
    if additive.dtype == torch.bool:
        additive = torch.zeros(mask.shape).masked_fill(mask, NEG_INF)
    close(probs, torch.softmax(q @ k.transpose(-2, -1) * used_scale + additive, dim=-1))
    assert out.shape == (*batch, L, dv) and probs.shape == (*batch, L, S)


def test_sdpa_scale_one_means_unscaled():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 16), torch.randn(2, 4, 16), torch.randn(2, 4, 5)
    _, probs = scaled_dot_product_attention(q, k, v, scale=1.0)
    close(probs, torch.softmax(q @ k.transpose(-2, -1), dim=-1))
    _, default = scaled_dot_product_attention(q, k, v)
    assert not torch.allclose(default, probs)


# --- multi-head attention vs nn.MultiheadAttention ---------------------------------------------

@st.composite
def mha_cases(draw):
    nh, hd = draw(st.sampled_from([1, 2, 4])), draw(st.integers(1, 4))
    E = nh * hd
    kdim, vdim = draw(st.sampled_from([(None, None), (5, 5), (E, 3), (6, 2)]))
    same_dims = kdim in (None, E) and vdim in (None, E)
    modes = ["self", "kv", "distinct"] if same_dims else (["kv", "distinct"] if kdim == vdim else ["distinct"])
    case = dict(
        E=E, nh=nh, kdim=kdim, vdim=vdim, mode=draw(st.sampled_from(modes)),
        batch_first=draw(st.booleans()), bias=draw(st.booleans()), add_bias_kv=draw(st.booleans()),
        add_zero_attn=draw(st.booleans()), unbatched=draw(st.booleans()), B=draw(st.integers(1, 3)),
        L=draw(st.integers(1, 5)), S=draw(st.integers(1, 5)), attn_dims=draw(st.sampled_from([None, 2, 3])),
        padding=draw(st.booleans()), mask_float=draw(st.booleans()), need_weights=draw(st.booleans()),
        average=draw(st.booleans()), no_grad=draw(st.booleans()), seed=draw(st.integers(0, 2**16)),
    )
    if case["mode"] == "self":
        case["S"] = case["L"]
    if case["unbatched"]:
        case["B"] = 1
    return case


def build_pair(E, nh, seed, **kwargs):
    torch.manual_seed(seed)
    ref = nn.MultiheadAttention(E, nh, **kwargs).eval()
    for p in ref.parameters():  # torch starts biases at 0: make them count
        if p.dim() == 1:
            nn.init.normal_(p)
    ours = MultiHeadAttention(E, nh, **kwargs).eval()
    ours.load_state_dict(ref.state_dict(), strict=True)
    return ours, ref


def make_inputs(c, g):
    """query, key, value (and the masks) in the layout the module expects, avoiding fully blocked rows."""
    B, L, S, E = c["B"], c["L"], c["S"], c["E"]
    query = torch.randn(B, L, E, generator=g)
    key = query if c["mode"] == "self" else torch.randn(B, S, c["kdim"] or E, generator=g)
    value = key if c["mode"] in ("self", "kv") else torch.randn(B, S, c["vdim"] or E, generator=g)
    open_key = int(torch.randint(S, (1,), generator=g))
    attn = None if c["attn_dims"] is None else blocked_with_open_key(
        (L, S) if c["attn_dims"] == 2 else (B * c["nh"], L, S), g, open_key)
    padding = blocked_with_open_key((B, S), g, open_key) if c["padding"] else None
    if c["mask_float"]:
        attn, padding = (None if m is None else as_float(m, g) for m in (attn, padding))
    if c["unbatched"]:
        query, key, value = query[0], key[0], value[0]
        padding = None if padding is None else padding[0]
    elif not c["batch_first"]:
        query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
    if c["mode"] != "distinct":  # keep the identities q is k (is v) that select the packed projection
        key = query if c["mode"] == "self" else key
        value = key
    return query, key, value, attn, padding


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=mha_cases())
def test_mha_equals_torch(c):
    ours, ref = build_pair(c["E"], c["nh"], c["seed"], bias=c["bias"], add_bias_kv=c["add_bias_kv"],
                           add_zero_attn=c["add_zero_attn"], kdim=c["kdim"], vdim=c["vdim"],
                           batch_first=c["batch_first"])
    query, key, value, attn, padding = make_inputs(c, torch.Generator().manual_seed(c["seed"]))
    kwargs = dict(key_padding_mask=padding, attn_mask=attn, need_weights=c["need_weights"],
                  average_attn_weights=c["average"])
    with torch.no_grad() if c["no_grad"] else torch.enable_grad():
        expected, expected_w = ref(query, key, value, **kwargs)
        out, weights = ours(query, key, value, **kwargs)
    close(out, expected)
    if c["need_weights"]:
        close(weights, expected_w)
    else:
        assert weights is None and expected_w is None


def test_mha_parameters_and_init_match_torch():
    for kwargs in ({}, {"bias": False}, {"kdim": 5, "vdim": 3}, {"add_bias_kv": True}):
        torch.manual_seed(3)
        ref = nn.MultiheadAttention(8, 2, **kwargs)
        torch.manual_seed(3)
        ours = MultiHeadAttention(8, 2, **kwargs)
        assert ours.state_dict().keys() == ref.state_dict().keys()
        for (name, p), (ref_name, ref_p) in zip(ours.named_parameters(), ref.named_parameters(), strict=True):
            assert name == ref_name and torch.equal(p, ref_p), name  # same initialisation, same RNG order


def test_is_causal_needs_a_mask_like_torch():
    ours, ref = build_pair(8, 2, 0, batch_first=True)
    x = torch.randn(2, 4, 8)
    for module in (ref, ours):
        with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
            module(x, x, x, is_causal=True)
    causal = nn.Transformer.generate_square_subsequent_mask(4)
    close(ours(x, x, x, attn_mask=causal, is_causal=True)[0], ref(x, x, x, attn_mask=causal, is_causal=True)[0])


@pytest.mark.parametrize("E,nh,message", [(10, 3, r"embed_dim \(10\) must be divisible by num_heads \(3\)"),
                                          (8, 0, "must be > 0"), (0, 2, "must be > 0")])
def test_constructor_errors(E, nh, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadAttention(E, nh)


# --- the recorded trace -----------------------------------------------------------------------

def projections(module, query, key, value):
    """Q, K, V from the module's weights, computed independently, batch-first (B, *, E)."""
    E = module.embed_dim
    bq, bk, bv = (None,) * 3 if module.in_proj_bias is None else module.in_proj_bias.split(E)
    if module.in_proj_weight is not None:
        wq, wk, wv = module.in_proj_weight.split(E)
    else:
        wq, wk, wv = module.q_proj_weight, module.k_proj_weight, module.v_proj_weight
    return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)


def heads(x, nh):  # (B, T, E) -> (B, nh, T, hd)
    return x.view(x.size(0), x.size(1), nh, -1).transpose(1, 2)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("kwargs", [{}, {"kdim": 5, "vdim": 3}, {"bias": False}])
@pytest.mark.parametrize("masks", [False, True])
@pytest.mark.parametrize("scale", [None, 1.0])
def test_record_trace(batch_first, kwargs, masks, scale):
    B, L, S, E, nh = 2, 3, 5, 8, 2
    ours, _ = build_pair(E, nh, 0, batch_first=batch_first, **kwargs)
    g = torch.Generator().manual_seed(1)
    query, key, value = torch.randn(B, L, E, generator=g), torch.randn(B, S, ours.kdim, generator=g), \
        torch.randn(B, S, ours.vdim, generator=g)
    attn = blocked_with_open_key((L, S), g, 0) if masks else None
    padding = as_float(blocked_with_open_key((B, S), g, 0), g) if masks else None
    layout = (lambda t: t) if batch_first else (lambda t: t.transpose(0, 1))
    result = ours(layout(query), layout(key), layout(value), key_padding_mask=padding, attn_mask=attn, record=True,
                  scale=scale)
    assert len(result) == 3
    out, weights, trace = result
    assert isinstance(trace, AttentionTrace)

    hd = E // nh
    assert trace.q.shape == (B, nh, L, hd) and trace.context.shape == (B, nh, L, hd)
    assert trace.k.shape == trace.v.shape == (B, nh, S, hd)
    assert trace.scores.shape == trace.probs.shape == (B, nh, L, S)
    assert trace.output.shape == (B, L, E)
    assert trace.scale == (1 / math.sqrt(hd) if scale is None else scale)
    for got, want in zip((trace.q, trace.k, trace.v), projections(ours, query, key, value)):
        close(got, heads(want, nh))
    close(trace.scores, trace.q @ trace.k.transpose(-2, -1) * trace.scale)
    close(trace.raw_scores * trace.scale, trace.scores)
    if masks:
        close(trace.mask.expand(B, nh, L, S), ours_merge(attn, padding, B, nh))
    else:
        assert trace.mask is None
    close(trace.probs, torch.softmax(trace.scores + (0 if trace.mask is None else trace.mask), dim=-1))
    close(trace.context, trace.probs @ trace.v)
    close(trace.output, layout(out))
    close(weights, trace.probs.mean(1))
    close(trace.output, ours.out_proj(trace.context.transpose(1, 2).reshape(B, L, E)))

    plain = ours(layout(query), layout(key), layout(value), key_padding_mask=padding, attn_mask=attn, scale=scale)
    assert len(plain) == 2
    close(plain[0], out)


def ours_merge(attn, padding, B, nh):
    """The additive mask the trace should hold, built by hand."""
    attn_add = torch.zeros(attn.shape).masked_fill(attn, NEG_INF)  # (L, S) bool
    return (attn_add.view(1, 1, *attn.shape) + padding.view(B, 1, 1, -1)).expand(B, nh, *attn.shape)


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("record", [False, True])
def test_gradients_equal_torch(need_weights, record):
    """The in-place score arithmetic of the explicit path must not break autograd."""
    ours, ref = build_pair(8, 2, 0, batch_first=True)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 4, 8, generator=g)
    padding = blocked_with_open_key((2, 4), g, 0)
    grads = []
    for module in (ours, ref):
        xi = x.clone().requires_grad_()
        kwargs = dict(key_padding_mask=padding, attn_mask=torch.ones(4, 4, dtype=torch.bool).triu(1),
                      need_weights=need_weights)
        if module is ours and record:
            kwargs["record"] = True
        out = module(xi, xi, xi, **kwargs)[0]
        (out * torch.linspace(-1, 1, 8)).sum().backward()
        grads.append([xi.grad] + [p.grad for p in module.parameters()])
        module.zero_grad()
    for got, want in zip(*grads, strict=True):
        close(got, want)
