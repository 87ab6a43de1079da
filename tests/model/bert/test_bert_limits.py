"""The sizes a BERT checkpoint may have on this server, checked from its config before anything is built."""

import pytest

from model.bert import LIMITS, BertConfig, BertModel, CheckpointError
from model.loading import checkpoint
from tests.model.bert.bert_checkpoints import TINY

BERT_BASE = {"model_type": "bert", "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
             "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 512, "type_vocab_size": 2}
PUBLISHED = {  # every one must load here
    "bert-base-uncased": {},
    "all-MiniLM-L6-v2": {"hidden_size": 384, "num_hidden_layers": 6, "intermediate_size": 1536},
    "bert-large": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096},
    "bert-base-multilingual": {"vocab_size": 119547},
    "LaBSE": {"vocab_size": 501153},
}


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_published_berts_are_within_the_limits(name):
    config = BertConfig.from_dict({**BERT_BASE, **PUBLISHED[name]})
    assert config.float32_bytes <= checkpoint.MAX_MODEL_BYTES


@pytest.mark.parametrize("name", list(LIMITS))
def test_each_size_has_a_limit(name):
    limit = LIMITS[name]
    over = {**BERT_BASE, name: limit + 1}
    if name == "hidden_size":
        over["hidden_size"] = limit + 8  # still divisible by the 12 heads
    if name == "num_attention_heads":
        over["hidden_size"] = 780  # 65 heads of 12
    with pytest.raises(CheckpointError, match=f"config.json: {name} is {over[name]}, above this server's limit "
                                              f"of {limit}"):
        BertConfig.from_dict(over)


def test_the_model_as_a_whole_has_a_limit():
    """Each size within its limit, the model not: 48 layers of hidden 1536 are 1.4 billion parameters."""
    raw = {**BERT_BASE, "num_hidden_layers": 48, "hidden_size": 1536, "intermediate_size": 6144}
    with pytest.raises(CheckpointError) as error:
        BertConfig.from_dict(raw)
    parameters = BertConfig(**{k: v for k, v in raw.items() if k != "model_type"}).parameter_count
    assert 1.4e9 < parameters < 1.5e9
    assert str(error.value) == ("config.json: it describes a model of 5.6 GB as float32; this server loads at "
                                "most 2 GB")


@pytest.mark.parametrize("pooler", [True, False])
@pytest.mark.parametrize("mlm_head", [True, False])
@pytest.mark.parametrize("sizes", [TINY, {**TINY, "num_hidden_layers": 1, "type_vocab_size": 1}])
def test_parameter_shapes_are_the_model_s(sizes, pooler, mlm_head):
    """The shapes a checkpoint is checked against before anything is built are those of the module, in order."""
    config = BertConfig.from_dict({"model_type": "bert", **sizes})
    model = BertModel(config, add_pooler=pooler, add_mlm_head=mlm_head)
    assert list(config.parameter_shapes(pooler, mlm_head).items()) == [
        (name, tuple(t.shape)) for name, t in model.state_dict().items()]


@pytest.mark.parametrize("sizes", [TINY, PUBLISHED["all-MiniLM-L6-v2"]])
def test_parameter_count_is_the_model_s(sizes):
    config = BertConfig.from_dict({**BERT_BASE, **sizes})
    model = BertModel(config, add_pooler=True, add_mlm_head=True)
    model.mlm_head.decoder.weight = model.embeddings.word_embeddings.weight  # tied, as from_pretrained does
    assert config.parameter_count == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name,published", [("bert-base-uncased", 109_482_240), ("bert-large", 335_141_888)])
def test_parameter_count_of_published_berts(name, published):
    """transformers.BertModel's count for bert-base and bert-large (pooler, no head), plus the masked-LM head."""
    config = BertConfig.from_dict({**BERT_BASE, **PUBLISHED[name]})
    H, V = config.hidden_size, config.vocab_size
    assert config.parameter_count == published + (H * H + H) + 2 * H + V
