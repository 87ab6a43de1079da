"""The neuron view (/neurons) in AppTest: the panels hold the run's own q, K, q ∘ K, scores and softmax; past 48 keys
the most attended ones unless every key is asked for; the downloads."""
import base64
import csv
import io

import numpy as np
import pytest

from harness.apptest import charts, open_page
from runtime import models, runs
from views.pages.neurons import KEYS_SHOWN
from views.widgets import downloads

TEXT = "the animal didn't cross the street because it was too tired"


def z(trace: dict) -> np.ndarray:
    value = trace["z"]
    return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).reshape(
        [int(n) for n in str(value["shape"]).split(",")])


def attention(text: str, layer: int):
    return runs.compute_run(models.Choice("minilm"), text).attention(layer)


def test_the_panels_are_the_models_q_and_k_and_the_files_hold_them(offered):
    at = open_page("neurons", text=TEXT, layer="2", head="5", query="3")
    assert not at.exception
    figure, q_figure = (c.figure for c in charts(at))
    trace = attention(TEXT, 2)
    q, k = trace.q[0, 5, 3].numpy(), trace.k[0, 5].numpy()
    np.testing.assert_allclose(z(figure["data"][0]), k, atol=1e-6)
    np.testing.assert_allclose(z(figure["data"][1]), q * k, atol=1e-6)
    np.testing.assert_allclose(z(figure["data"][2])[:, 0], (q * k).sum(-1), atol=1e-5)
    np.testing.assert_allclose(z(figure["data"][3])[:, 0], trace.scores[0, 5, 3].numpy(), atol=1e-5)
    np.testing.assert_allclose(z(figure["data"][4])[:, 0], trace.probs[0, 5, 3].numpy(), atol=1e-6)
    np.testing.assert_allclose(z(q_figure["data"][0])[0], q, atol=1e-6)
    assert figure["layout"]["title"]["text"] == "Layer 2, head 5: query 3: didn against every key"
    arrays = np.load(io.BytesIO(offered["Download q, K, q ∘ K, the scores and the softmax (NumPy .npz)"][1]()),
                     allow_pickle=False)
    np.testing.assert_allclose(arrays["q_times_k"], q * k, atol=1e-6)
    assert (int(arrays["layer"]), int(arrays["head"]), int(arrays["query"])) == (2, 5, 3)
    text = offered["Download the scores and the softmax (CSV)"][1]().decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text.removeprefix(downloads.BOM))))
    assert text.startswith(downloads.BOM) and len(rows) == len(k)
    assert float(rows[4]["probability"]) == pytest.approx(float(trace.probs[0, 5, 3, 4]), abs=1e-7)


def test_a_long_text_draws_the_most_attended_keys_or_every_key():
    long = "word " * 100
    at = open_page("neurons", text=long, layer="0", head="0", query="5")
    probs = attention(long, 0).probs[0, 0, 5].numpy()
    figure = charts(at)[0].figure
    assert z(figure["data"][4]).shape == (KEYS_SHOWN, 1)
    top = np.sort(np.argsort(-probs, kind="stable")[:KEYS_SHOWN])
    np.testing.assert_allclose(z(figure["data"][4])[:, 0], probs[top], atol=1e-6)
    at.toggle(key="all_keys").set_value(True).run()
    assert z(charts(at)[0].figure["data"][4]).shape == (102, 1)


def test_the_translator_and_random_models_have_a_neuron_view():
    for params in ({"model": "translator", "src": "我有一只猫"}, {"model": "random", "text": "a b c"}):
        at = open_page("neurons", **params)
        assert not at.exception and len(charts(at)) == 2
