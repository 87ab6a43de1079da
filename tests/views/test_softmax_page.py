"""The Softmax rows page in AppTest: default, URL state, the temperature, bad input, no model re-run."""
import json
import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from harness import apptest
from runtime import memory


def run(**params) -> AppTest:
    return apptest.open_page("softmax", **params)


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def metric(at, label: str) -> float:
    value = next(m.value for m in at.metric if m.label == label)
    return float(value.split()[0])


def test_default_page_shows_four_bar_charts_and_the_comparison():
    at = run()
    assert not at.exception
    assert at.title[0].value == "Softmax rows"
    specs = charts(at)
    assert len(specs) == 5
    titles = [s["layout"]["title"]["text"] for s in specs]
    assert titles[0].startswith("(1) raw scores") and titles[3] == "(4) softmax probabilities"
    assert all(s["data"][0]["type"] == "bar" for s in specs)
    assert specs[3]["layout"]["yaxis"]["range"] == [0.0, 1.0]
    assert any("sqrt{d_k}" in lat.value for lat in at.latex)


def test_row_sum_and_entropy_in_nats_and_bits():
    at = run(text="Hello students", layer="2", head="1", query="1")
    assert not at.exception
    assert next(m.value for m in at.metric if m.label == "Row sum") == "1.000000"
    nats, bits = metric(at, "Entropy (nats)"), metric(at, "Entropy (bits)")
    assert bits == pytest.approx(nats / math.log(2), abs=2e-4)
    assert 0 <= nats <= metric(at, "Max possible: log T") + 1e-4
    assert metric(at, "Max possible: log T") == pytest.approx(math.log(4), abs=1e-4)  # [CLS] hello students [SEP]


def test_url_state_is_restored_and_written_back():
    at = run(text="The cat sat on the mat", layer="3", head="7", query="2", temp="2.5")
    assert not at.exception
    assert at.slider(key="layer").value == 3 and at.slider(key="head").value == 7
    assert at.selectbox(key="query").value == 2
    assert at.slider(key="temp").value == 2.5
    at.selectbox(key="query").set_value(4).run()
    assert apptest.link_value(at, "query") == "4" and apptest.link_value(at, "text") == "The cat sat on the mat"


@pytest.mark.parametrize("t, flatter", [("2", True), ("5", True), ("0.5", False), ("0.1", False)])
def test_temperature_divides_the_scores_above_one_flatter_below_one_sharper(t, flatter):
    """softmax(s / T): T > 1 raises the entropy, T < 1 lowers it (the usual meaning, as on the Translate page)."""
    at = run(text="The animal didn't cross the street because it was too tired.", layer="1", head="4",
             query="3", temp=t)
    assert not at.exception
    model, chosen = metric(at, "Entropy, T = 1"), metric(at, f"Entropy, T = {float(t):g}")
    assert (chosen > model) if flatter else (chosen < model)
    overlay = charts(at)[4]
    assert len(overlay["data"]) == 2 and overlay["layout"]["yaxis"]["range"] == [0.0, 1.0]


def test_temperature_one_is_the_models_row():
    at = run(text="The animal didn't cross the street because it was too tired.", layer="3", head="1", query="10")
    assert at.slider(key="temp").value == 1.0
    model_bars, overlay = charts(at)[3], charts(at)[4]
    row = apptest.plotly_array(model_bars["data"][0]["y"])
    np.testing.assert_allclose(apptest.plotly_array(overlay["data"][1]["y"]), row, atol=1e-6)  # T = 1
    np.testing.assert_allclose(apptest.plotly_array(overlay["data"][0]["y"]), row, atol=1e-6)
    assert metric(at, "Entropy, T = 1") == pytest.approx(metric(at, "Entropy (nats)"), abs=1e-4)


def test_moving_query_head_or_scale_does_not_rerun_the_model():
    at = run(text="No wasted work here", layer="1")
    misses, forward = memory.budget().misses, memory.COMPUTED["forward"]
    at.selectbox(key="query").set_value(3).run()
    at.slider(key="head").set_value(5).run()
    at.slider(key="temp").set_value(3.0).run()
    assert not at.exception
    assert memory.budget().misses == misses  # not even one layer recomputed
    at.text_area(key="text").set_value("A new sentence runs the model once").run()
    assert memory.COMPUTED["forward"] == forward + 1  # the counter is live: a new text is one forward pass


def test_512_tokens_stay_light():
    at = run(text="word " * 600, query="300")
    assert not at.exception
    assert any("the rest was cut" in w.value for w in at.warning)
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert len(specs) == 5 and len(json.loads(specs[0])["data"][0]["x"]) == 512
    assert sum(map(len, specs)) < 1_000_000


def test_the_charts_numbers_are_in_a_table_key_by_key():
    """What the four charts draw, as numbers a screen reader reads (the table's toolbar downloads them as CSV)."""
    at = run(text="Hello students", layer="2", head="1", query="1")
    assert not at.exception
    (table,) = [d.value for d in at.dataframe if "q·k" in d.value.columns]
    specs = charts(at)
    assert list(table["key"]) == ["[CLS]", "hello", "students", "[SEP]"]
    for column, spec in zip(["q·k", "q·k / √d_k", "M", "p"], specs[:4], strict=True):
        np.testing.assert_allclose(table[column], apptest.plotly_array(spec["data"][0]["y"]), rtol=1e-5, atol=1e-7)
    assert table["p"].sum() == pytest.approx(1.0, abs=1e-5)
