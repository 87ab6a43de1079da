"""The sentence-embedding lens (/embeddings) in AppTest: the similarities are the cosines of the model's sentence
vectors, the shares those of the chosen sentence, the sentences bounded and the downloads whole."""
import base64
import csv
import io

import numpy as np
import pytest
import torch

from harness.apptest import charts, open_page
from model.analysis.embeddings import cosines, sentence_vectors
from runtime.models import Choice, loaded_model
from views.pages.embeddings import MAX_SENTENCES
from views.widgets import downloads

SENTENCES = ["I have a cat", "I own a cat", "The weather is nice today"]


def values(value) -> np.ndarray:
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value, dtype=np.float64)


def vectors(sentence: str):
    loaded = loaded_model(Choice("minilm"))
    with torch.inference_mode():
        return sentence_vectors(loaded.model, loaded.encode(sentence).input_ids)


def test_the_similarities_and_shares_are_the_models(offered):
    at = open_page("embeddings", sents="\n".join(SENTENCES), sent="1")
    assert not at.exception
    cos, _map, _paths, shares = (c.figure for c in charts(at))
    expected = cosines(np.stack([vectors(s).embedding for s in SENTENCES]))
    np.testing.assert_allclose(values(cos["data"][0]["z"]).reshape(3, 3), expected, atol=1e-6)
    assert expected[0, 1] > 0.8 > 0.3 > expected[0, 2]  # the paraphrase is near, the weather far
    np.testing.assert_allclose(values(shares["data"][0]["y"]), vectors(SENTENCES[1]).shares, atol=1e-6)
    assert shares["layout"]["title"]["text"] == "Each token's share of the vector of sentence 2"
    arrays = np.load(io.BytesIO(offered["Download the vectors, similarities and shares (NumPy .npz)"][1]()),
                     allow_pickle=False)
    np.testing.assert_allclose(arrays["cosines"], expected, atol=1e-6)
    assert arrays["pooled_per_layer"].shape == (3, 7, 384) and arrays["sentences"].tolist() == SENTENCES
    text = offered["Download the similarities (CSV)"][1]().decode("utf-8")
    rows = list(csv.reader(io.StringIO(text.removeprefix(downloads.BOM))))
    assert text.startswith(downloads.BOM) and rows[0] == ["sentence", *SENTENCES]
    assert float(rows[1][2]) == pytest.approx(expected[0, 1], abs=1e-6)


def test_sentences_are_bounded_and_a_random_model_is_said_to_mean_little():
    at = open_page("embeddings", sents="\n".join(f"sentence {i}" for i in range(MAX_SENTENCES + 3)))
    assert "the first 12 of 15 are shown" in "\n".join(w.value for w in at.warning)
    assert values(charts(at)[0].figure["data"][0]["z"]).size == MAX_SENTENCES ** 2
    at = open_page("embeddings", model="random")
    assert not at.exception and any("say little" in i.value for i in at.info) and len(charts(at)) == 4
    at = open_page("embeddings", sents="  \n ")
    assert not charts(at) and any("one per line" in i.value for i in at.info)
