"""The encoder-decoder page in Streamlit's AppTest with the random encoder-decoder: masked self-attention,
cross-attention, bad input."""

import numpy as np
from streamlit.testing.v1 import AppTest

from harness import apptest
from harness.apptest import figures, plotly_array
from model.text_models import TextTransformer


def open_page(**params) -> AppTest:
    """The page with the random encoder-decoder (the translator, its default: test_translator_pages.py)."""
    return apptest.open_page("encoder-decoder", "Encoder-decoder", **{"model": "random", **params})


def heat_z(figure: dict) -> np.ndarray:
    """The heatmap's z as sent to the browser (plotly's binary float32 encoding)."""
    z = figure["data"][0]["z"]
    assert z["dtype"] == "f4"
    return plotly_array(z)


def titles(at: AppTest) -> list[str]:
    return [f["layout"]["title"]["text"] for f in figures(at)]


def test_default_page_shows_masked_self_cross_and_encoder_attention():
    at = open_page()
    assert not at.exception
    assert titles(at) == ["Decoder masked self-attention, layer 0, head 0", "Cross-attention, layer 0, head 0",
                          "Encoder self-attention, layer 0, head 0"]
    assert any("weights are random" in i.value for i in at.info)
    decoder, cross, encoder = figures(at)
    T, S = len(decoder["data"][0]["y"]), len(cross["data"][0]["x"])
    masked = heat_z(decoder)
    assert masked.shape == (T, T)
    assert np.isnan(masked[np.triu_indices(T, 1)]).all()  # later tokens blocked: gaps
    assert not np.isnan(masked[np.tril_indices(T)]).any()
    np.testing.assert_allclose(masked[np.tril_indices(T)].reshape(-1).sum(), T, rtol=1e-4)  # rows sum to 1
    assert heat_z(cross).shape == (T, S) and not np.isnan(heat_z(cross)).any()
    assert cross["data"][0]["y"] == decoder["data"][0]["y"]  # queries: target tokens
    assert cross["data"][0]["x"] == encoder["data"][0]["x"]  # keys: source tokens
    assert [s.label for s in at.main.slider] == ["Layer", "Head"]
    assert at.main.slider[0].max == 1 and at.main.slider[1].max == 3  # default random config: 2 layers x 4 heads


def test_url_state_is_restored():
    at = open_page(src="Hello students", tgt="Bonjour", layer="1", head="3", d_model="64", heads="8")
    assert not at.exception
    assert [t.value for t in at.text_input] == ["Hello students", "Bonjour"]
    assert at.main.slider[0].value == 1 and at.main.slider[1].value == 3 and at.main.slider[1].max == 7
    assert titles(at)[1] == "Cross-attention, layer 1, head 3"
    assert figures(at)[1]["data"][0]["x"] == ["[CLS]", "hello", "students", "[SEP]"]


def test_mean_of_heads_keeps_the_mask():
    at = open_page(mean="1")
    assert not at.exception
    assert titles(at)[0] == "Decoder masked self-attention, layer 0, mean of heads"
    masked = heat_z(figures(at)[0])
    assert np.isnan(masked[0, 1:]).all() and not np.isnan(masked[-1]).any()


def test_moving_the_sliders_does_not_run_the_model_again(monkeypatch):
    calls = []
    forward = TextTransformer.forward
    monkeypatch.setattr(TextTransformer, "forward", lambda self, *a, **k: calls.append(1) or forward(self, *a, **k))
    at = open_page(src="A sentence only this test uses.")
    assert len(calls) == 1
    at.main.slider[0].set_value(1).run()
    at.main.slider[1].set_value(2).run()
    assert not at.exception and titles(at)[0].endswith("layer 1, head 2")
    assert len(calls) == 1


def test_long_source_is_truncated_and_says_so():
    at = open_page(src="word " * 600)
    assert not at.exception
    assert any("The source has 602 tokens" in w.value and "the rest was cut" in w.value for w in at.warning)
    assert len(figures(at)[1]["data"][0]["x"]) == 512
