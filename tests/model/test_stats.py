"""The textbook's parameter and FLOP formulas against PyTorch's own counts."""
import pytest
import torch
import transformers
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from model import EncoderLayer, MultiHeadAttention, TextConfig, TextEncoder, Transformer
from model.bert import BertConfig, BertModel
from model.stats import FORMULAS, DecoderShape, Shape, attention_flops, ffn_flops, flops, kv_cache_bytes, param_counts

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")

TRANSFORMER_SHAPES = [  # d_model, nhead, d_ff, encoder layers, decoder layers, bias
    (16, 2, 32, 1, 1, True), (24, 4, 40, 2, 3, True), (32, 4, 128, 3, 1, True), (16, 2, 48, 2, 2, False),
]
TINY_BERT = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                 max_position_embeddings=64, type_vocab_size=2)


def n_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())  # shared (tied) parameters counted once


def transformer_kwargs(d, nh, f, enc, dec, bias):
    return dict(d_model=d, nhead=nh, dim_feedforward=f, num_encoder_layers=enc, num_decoder_layers=dec, bias=bias)


def count_flops(fn) -> int:
    """Forward FLOPs as torch counts them (grad-enabled: FlopCounterMode's module tracker rejects the
    grad_fn-less views that slicing a parameter under no_grad makes)."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


# --- parameters --------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", TRANSFORMER_SHAPES, ids=str)
def test_transformer_parameters(shape):
    d, _, f, enc, dec, bias = shape
    expected = sum(param_counts(Shape.from_transformer(d, f, enc, dec, bias)).values())
    assert n_params(Transformer(**transformer_kwargs(*shape))) == expected
    assert n_params(nn.Transformer(**transformer_kwargs(*shape))) == expected


def test_default_transformer_parameters():
    assert sum(param_counts(Shape.from_transformer()).values()) == 44140544


@pytest.mark.parametrize("pooler", [True, False])
def test_bert_parameters(pooler):
    config = BertConfig(**TINY_BERT)
    expected = sum(param_counts(Shape.from_bert(config, pooler=pooler)).values())
    assert n_params(BertModel(config, add_pooler=pooler)) == expected
    hf = transformers.BertModel(transformers.BertConfig(**TINY_BERT), add_pooling_layer=pooler)
    assert n_params(hf) == expected


def test_bert_with_tied_masked_lm_head_parameters(tmp_path):
    hf = transformers.BertForMaskedLM(transformers.BertConfig(**TINY_BERT))
    hf.save_pretrained(tmp_path)
    ours = BertModel.from_pretrained(tmp_path)
    counts = param_counts(Shape.from_bert(ours.config, pooler=False, mlm_head=True))
    assert n_params(ours) == n_params(hf) == sum(counts.values())
    assert counts["output"] > 0


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("dims", [(16, 2, 32, 1), (24, 4, 96, 3)])
def test_text_encoder_parameters(positional, norm_first, dims):
    d, nh, f, layers = dims
    model = TextEncoder(TextConfig(50, d, nh, layers, f, norm_first=norm_first, positional=positional, max_len=20))
    counts = param_counts(Shape.from_text_encoder(50, d, f, layers, norm_first, positional, 20))
    assert n_params(model) == sum(counts.values())


def test_per_kind_counts_match_the_modules():
    d, f = 24, 40
    counts = param_counts(Shape.from_transformer(d, f, 1, 1))
    model = Transformer(d, 4, 1, 1, f)
    attention = n_params(model.encoder.layers[0].self_attn) + n_params(model.decoder.layers[0].self_attn) \
        + n_params(model.decoder.layers[0].multihead_attn)
    ffn = sum(n_params(m) for m in model.modules() if isinstance(m, nn.Linear) and m not in
              [a.out_proj for a in model.modules() if isinstance(a, MultiHeadAttention)])
    norms = sum(n_params(m) for m in model.modules() if isinstance(m, nn.LayerNorm))
    assert (counts["attention"], counts["ffn"], counts["layernorm"]) == (attention, ffn, norms)
    assert set(FORMULAS) >= {"attention params", "ffn params", "attention flops"}


# --- FLOPs -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", TRANSFORMER_SHAPES, ids=str)
@pytest.mark.parametrize("src_len,tgt_len,batch", [(7, 7, 1), (9, 4, 2), (3, 11, 3)])
def test_transformer_flops(shape, src_len, tgt_len, batch):
    d, _, f, enc, dec, bias = shape
    model = Transformer(**transformer_kwargs(*shape), batch_first=True).eval()
    src, tgt = torch.randn(batch, src_len, d), torch.randn(batch, tgt_len, d)
    measured = count_flops(lambda: model(src, tgt, record=True))
    predicted = sum(flops(Shape.from_transformer(d, f, enc, dec, bias), src_len, batch, tgt_len).values())
    assert predicted == pytest.approx(measured, rel=0.02)


@pytest.mark.parametrize("seq_len,batch", [(5, 1), (12, 3)])
@pytest.mark.parametrize("positional,norm_first", [("sinusoidal", False), ("learned", True)])
def test_text_encoder_flops(seq_len, batch, positional, norm_first):
    model = TextEncoder(TextConfig(50, 32, 4, 2, 80, norm_first=norm_first, positional=positional, max_len=20)).eval()
    ids = torch.randint(50, (batch, seq_len))
    measured = count_flops(lambda: model(ids, record=True))
    shape = Shape.from_text_encoder(50, 32, 80, 2, norm_first, positional, 20)
    assert sum(flops(shape, seq_len, batch).values()) == pytest.approx(measured, rel=0.02)


@pytest.mark.parametrize("seq_len,batch", [(6, 1), (10, 2)])
def test_bert_flops_with_pooler_and_masked_lm_head(seq_len, batch):
    config = BertConfig(**TINY_BERT)
    ids = torch.randint(TINY_BERT["vocab_size"], (batch, seq_len))
    with_pooler = BertModel(config).eval()
    measured = count_flops(lambda: with_pooler(ids, record=True))
    assert sum(flops(Shape.from_bert(config), seq_len, batch).values()) == pytest.approx(measured, rel=0.02)
    with_head = BertModel(config, add_pooler=False, add_mlm_head=True).eval()
    measured = count_flops(lambda: with_head.mlm_logits(with_head(ids, record=True).last_hidden_state))
    predicted = sum(flops(Shape.from_bert(config, pooler=False, mlm_head=True), seq_len, batch).values())
    assert predicted == pytest.approx(measured, rel=0.02)


@pytest.mark.parametrize("h,nh,l,b", [(16, 2, 5, 1), (32, 4, 12, 3), (24, 3, 1, 2)])
def test_attention_and_ffn_formulas(h, nh, l, b):
    attn = MultiHeadAttention(h, nh, batch_first=True).eval()
    x = torch.randn(b, l, h)
    measured = count_flops(lambda: attn(x, x, x, record=True))
    assert measured == attention_flops(h, l, l, b) == 4 * l * b * h * (2 * h + l)
    memory = torch.randn(b, l + 3, h)
    measured = count_flops(lambda: attn(x, memory, memory, record=True))
    assert measured == attention_flops(h, l, l + 3, b) == 2 * b * h * (2 * l * h + 2 * (l + 3) * h + 2 * l * (l + 3))
    layer = EncoderLayer(h, nh, 4 * h, batch_first=True).eval()
    measured = count_flops(lambda: layer(x, record=True))
    assert measured == attention_flops(h, l, l, b) + ffn_flops(h, 4 * h, l, b)
    assert ffn_flops(h, 4 * h, l, b) == 16 * l * b * h * h


# --- today's LLM block (Llama's) -------------------------------------------------------------

LLAMA_SHAPES = [  # hidden, intermediate, layers, heads, kv heads, head_dim, vocab, tied
    (32, 48, 2, 4, 2, 8, 50, True), (48, 80, 3, 6, 1, 8, 61, False), (64, 96, 2, 4, 4, 16, 40, True)]


def tiny_llama(hidden, intermediate, layers, heads, kv_heads, head_dim, vocab, tied):
    from model.llama import Llama, LlamaConfig  # noqa: PLC0415 - only these tests build one

    torch.manual_seed(0)
    return Llama(LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=intermediate,
                             num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
                             head_dim=head_dim, tie_word_embeddings=tied)).eval()


@pytest.mark.parametrize("shape", LLAMA_SHAPES, ids=str)
def test_a_llama_s_parameters_and_flops_are_the_formulas(shape):
    from viz.architecture import decoder_module_costs  # noqa: PLC0415 - the rows the architecture page shows

    model = tiny_llama(*shape)
    s = DecoderShape.from_llama(model.config)
    costs = decoder_module_costs(s, 7)
    assert sum(c.params for c in costs) == n_params(model)
    ids = torch.randint(0, s.vocab_size, (1, 7))
    assert sum(c.flops for c in costs) == count_flops(lambda: model(ids))


def test_smollm2_s_key_value_cache_is_a_third_of_full_multi_head_attention():
    """30 layers x 3 key/value heads x 64 dimensions, a key and a value: 46,080 bytes a token in float32, where 9
    heads each with its own K and V would hold 138,240."""
    assert kv_cache_bytes(30, 3, 64) == 46_080 and kv_cache_bytes(30, 9, 64) == 3 * 46_080
    assert kv_cache_bytes(30, 3, 64, tokens=8192, dtype_bytes=2) == 188_743_680  # bfloat16 at 8,192 tokens: 180 MiB
