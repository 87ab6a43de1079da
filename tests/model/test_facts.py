"""A model's facts (model.facts.ModelFacts) say what the model is: each fact is checked against the modules it
describes, so a page that reads the facts sees what the model computes."""
import pytest
import torch
import torch.nn.functional as F

from model.facts import ModelFacts, SpecialTokens
from model.loading.sources import RANDOM_KEY, RandomConfig, find_source, load, load_encoder_decoder
from model.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from model.text_models import TextConfig, TextEncoder, TextTransformer
from tests.model.conftest import TINY_BERT

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def assert_describes_layers(facts: ModelFacts, layers):
    for layer in layers:
        assert layer.norm_first == facts.norm_first
        assert layer.activation is ACTIVATIONS[facts.activation]
        assert (layer.self_attn.num_heads, layer.self_attn.embed_dim) == (facts.heads, facts.d_model)
        assert layer.self_attn.head_dim == facts.head_dim
        assert layer.linear1.out_features == facts.d_ff


def test_bert_facts_come_from_its_config(tiny_bert):
    facts = tiny_bert.facts
    assert facts.kind == "bert" and facts.decoder_layers == 0
    assert (facts.layers, facts.heads, facts.d_model, facts.d_ff) == (
        TINY_BERT["num_hidden_layers"], TINY_BERT["num_attention_heads"], TINY_BERT["hidden_size"],
        TINY_BERT["intermediate_size"])
    assert (facts.vocab_size, facts.max_positions, facts.token_types) == (
        TINY_BERT["vocab_size"], TINY_BERT["max_position_embeddings"], TINY_BERT["type_vocab_size"])
    assert (facts.positional, facts.norm_first, facts.final_norm, facts.embedding_norm) == (
        "learned", False, False, True)
    assert len(tiny_bert.encoder.layers) == facts.layers and tiny_bert.encoder.norm is None
    assert_describes_layers(facts, tiny_bert.encoder.layers)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_text_encoder_facts_describe_its_modules(norm_first, positional, activation):
    model = TextEncoder(TextConfig(50, 24, 3, 2, 40, activation, norm_first, positional, max_len=20))
    facts = model.facts
    assert (facts.kind, facts.layers, facts.vocab_size, facts.max_positions) == ("encoder", 2, 50, 20)
    assert (facts.norm_first, facts.positional, facts.activation) == (norm_first, positional, activation)
    assert facts.final_norm == (model.encoder.norm is not None)
    assert facts.token_types == 0 and not facts.embedding_norm
    position = {"sinusoidal": SinusoidalPositionalEncoding, "learned": LearnedPositionalEmbedding}[positional]
    assert isinstance(model.embedding.position, position)
    assert model.embedding.token_embedding.num_embeddings == facts.vocab_size
    assert_describes_layers(facts, model.encoder.layers)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_decoder_facts_describe_both_stacks(norm_first):
    model = TextTransformer(TextConfig(50, 24, 3, 2, 40, "relu", norm_first, "learned", max_len=20))
    facts = model.facts
    assert (facts.kind, facts.layers, facts.decoder_layers, facts.final_norm) == ("encoder-decoder", 2, 2, True)
    assert model.transformer.encoder.norm is not None and model.transformer.decoder.norm is not None
    assert_describes_layers(facts, [*model.transformer.encoder.layers, *model.transformer.decoder.layers])


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_position_vectors_are_what_the_embedding_adds(tiny_bert, positional):
    ids = torch.randint(1, 50, (1, 9))
    for model in (tiny_bert, TextEncoder(TextConfig(99, 24, 3, 2, 40, positional=positional, max_len=20)).eval()):
        table = model.position_vectors()
        assert table.shape == (model.facts.max_positions, model.facts.d_model)
        with torch.inference_mode():
            added = model(ids, record=True).trace.embeddings.position[0]
        assert torch.equal(table[:9], added)


def test_a_loaded_model_adds_its_tokenizer_special_tokens():
    loaded = load(find_source("minilm"))
    tokenizer, special = loaded.tokenizer, loaded.facts.special_tokens
    assert special.pad == (tokenizer.pad_token, tokenizer.pad_token_id)
    assert special.cls == ("[CLS]", tokenizer.cls_token_id) and special.sep == ("[SEP]", tokenizer.sep_token_id)
    assert special.unk[0] == "[UNK]" and special.mask[0] == "[MASK]"
    assert loaded.facts.vocab_size == len(tokenizer) == loaded.model.facts.vocab_size
    assert loaded.model.facts.special_tokens == SpecialTokens()  # the model alone has no tokenizer


def test_random_models_facts_are_their_settings():
    config = RandomConfig(d_model=32, nhead=2, num_layers=3, d_ff=64, activation="relu", norm_first=True,
                          positional="learned", max_len=40)
    facts = load(find_source(RANDOM_KEY), config).facts
    assert (facts.kind, facts.d_model, facts.heads, facts.layers, facts.d_ff) == ("encoder", 32, 2, 3, 64)
    assert (facts.activation, facts.norm_first, facts.positional, facts.max_positions) == ("relu", True, "learned", 40)
    assert facts.special_tokens.pad is not None
    seq2seq = load_encoder_decoder(config).facts
    assert (seq2seq.kind, seq2seq.decoder_layers) == ("encoder-decoder", 3)
    assert seq2seq.special_tokens == facts.special_tokens


def test_summary_and_checks():
    facts = ModelFacts("bert", 6, 12, 384, 1536, "gelu", False, False, "learned", 512, 30522, token_types=2)
    assert facts.summary() == ("6 layers, 12 heads, d_model 384, d_ff 1536, GELU, Post-LN, learned positions, "
                               "segment embeddings")
    assert facts.head_dim == 32
    with pytest.raises(ValueError, match="kind"):
        ModelFacts("", 1, 1, 8, 8, "gelu", False, False, "learned", 8, 8)
    assert ModelFacts("rnn", 1, 1, 8, 8, "gelu", False, False, "learned", 8, 8).kind == "rnn"  # a new family's own
    with pytest.raises(ValueError, match="positional"):
        ModelFacts("encoder", 1, 1, 8, 8, "gelu", False, False, "alibi", 8, 8)  # not one of POSITIONAL_KINDS
    with pytest.raises(ValueError, match="multiple of heads"):
        ModelFacts("encoder", 1, 3, 8, 8, "gelu", False, False, "learned", 8, 8)
