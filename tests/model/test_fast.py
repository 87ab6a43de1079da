"""model.fast: the block's kernels written over their input. accelerate(model) gives its attention and blocks these
kernels in place; the outputs equal the formula's (and so PyTorch's and Hugging Face's), with or without masks,
padding and fully blocked rows; a trace, training and autograd take the formula unchanged."""
import copy

import pytest
import torch
import transformers
from torch import nn

from model import DecoderLayer, EncoderLayer, MultiHeadAttention, Transformer
from model.attention import FORMULA
from model.fast import FAST, accelerate
from model.text_models import TextConfig, TextEncoder
from tests.identical import assert_identical
from tests.model.conftest import TINY_BERT

IDS = torch.randint(1, 99, (3, 12), generator=torch.Generator().manual_seed(7))
PADDED = torch.ones(3, 12, dtype=torch.long)
PADDED[1, 8:] = 0
PADDED[2, :] = 0  # a sequence of nothing but padding: every key blocked


def close(a, b, atol=1e-6):
    torch.testing.assert_close(a, b, atol=atol, rtol=1e-5)


def kernels(model) -> set:
    return {m.kernels for m in model.modules() if isinstance(m, (MultiHeadAttention, EncoderLayer, DecoderLayer))}


def test_accelerate_gives_the_fast_kernels_in_place_and_keeps_the_weights(tiny_bert):
    formula = tiny_bert
    fast = accelerate(copy.deepcopy(formula))
    assert kernels(fast) == {FAST} and kernels(formula) == {FORMULA}
    for (name, a), (_, b) in zip(formula.state_dict().items(), fast.state_dict().items()):
        assert torch.equal(a, b), name
    same = accelerate(fast)
    assert same is fast


@pytest.mark.parametrize("attention_mask", [None, PADDED], ids=["plain", "padded"])
@pytest.mark.parametrize("causal", [False, True])
def test_fast_bert_equals_the_formula_and_hugging_face(tiny_bert, tmp_path_factory, attention_mask, causal):
    fast = accelerate(copy.deepcopy(tiny_bert))
    attn_mask = torch.ones(12, 12, dtype=torch.bool).triu(1) if causal else None
    with torch.inference_mode():
        ours = tiny_bert(IDS, attention_mask, attn_mask=attn_mask)
        quick = fast(IDS, attention_mask, attn_mask=attn_mask)
    close(quick.last_hidden_state, ours.last_hidden_state)
    close(quick.pooler_output, ours.pooler_output)
    for a, b in zip(quick.attentions, ours.attentions):
        close(a, b)
    if not causal:  # Hugging Face's BertModel takes no (T, T) mask
        torch.manual_seed(0)
        directory = tmp_path_factory.mktemp("hf")
        transformers.BertModel(transformers.BertConfig(**TINY_BERT)).save_pretrained(directory)
        hf = transformers.BertModel.from_pretrained(directory, attn_implementation="eager").eval()
        fast_hf = accelerate(type(tiny_bert).from_pretrained(directory))
        with torch.inference_mode():
            expected = hf(IDS, attention_mask=attention_mask, output_attentions=True)
            got = fast_hf(IDS, attention_mask)
        close(got.last_hidden_state, expected.last_hidden_state, atol=1e-5)
        for a, b in zip(got.attentions, expected.attentions):
            close(a, b, atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_a_recorded_pass_is_the_formulas_bit_for_bit(norm_first, activation):
    torch.manual_seed(2)
    formula = TextEncoder(TextConfig(99, 32, 4, 2, 48, activation, norm_first, max_len=16)).eval()
    fast = accelerate(copy.deepcopy(formula))
    with torch.inference_mode():
        ours, quick = formula(IDS, PADDED, record=True), fast(IDS, PADDED, record=True)
        inputs = formula.inputs_and_attentions(IDS, PADDED), fast.inputs_and_attentions(IDS, PADDED)
        plain, plain_fast = formula(IDS, PADDED), fast(IDS, PADDED)
    assert_identical(quick.trace.embeddings, ours.trace.embeddings)
    for a, b in zip(quick.trace.layers, ours.trace.layers):
        assert_identical(a, b)
    for a, b in zip(*inputs):
        assert_identical(a, b)
    close(plain_fast.last_hidden_state, plain.last_hidden_state)


def test_autograd_and_training_take_the_formula():
    torch.manual_seed(3)
    formula = TextEncoder(TextConfig(99, 32, 4, 2, 48, max_len=16))
    fast = accelerate(copy.deepcopy(formula))
    for model in (formula, fast):
        model.eval()
        model.zero_grad()
        model(IDS[:2], PADDED[:2]).last_hidden_state.square().sum().backward()  # in-place ops would break the graph
    for (name, a), (_, b) in zip(formula.named_parameters(), fast.named_parameters()):
        close(b.grad, a.grad, atol=1e-5)
    fast.train()
    torch.manual_seed(4)
    trained = fast(IDS, PADDED).last_hidden_state
    formula.train()
    torch.manual_seed(4)
    assert torch.equal(trained, formula(IDS, PADDED).last_hidden_state)  # the same dropout draws, the same ops


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("norm_first", [False, True])
def test_a_fast_transformer_equals_torch(batch_first, norm_first):
    torch.manual_seed(5)
    ref = nn.Transformer(16, 2, 2, 2, 32, dropout=0.0, batch_first=batch_first, norm_first=norm_first).eval()
    ours = Transformer(16, 2, 2, 2, 32, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    ours.load_state_dict(ref.state_dict(), strict=True)
    accelerate(ours.eval())
    assert kernels(ours) == {FAST}
    src, tgt = torch.randn(2, 7, 16), torch.randn(2, 5, 16)
    if not batch_first:
        src, tgt = src.transpose(0, 1), tgt.transpose(0, 1)
    masks = {"tgt_mask": ref.generate_square_subsequent_mask(5),
             "src_key_padding_mask": torch.tensor([[False] * 7, [False] * 5 + [True] * 2])}
    masks["memory_key_padding_mask"] = masks["src_key_padding_mask"]
    with torch.inference_mode():
        close(ours(src, tgt, **masks), ref(src, tgt, **masks), atol=1e-5)
