"""The Softmax rows page in AppTest: default, URL state, the temperature, bad input, no model re-run."""
import json
import math

import apptest_harness as harness
import pytest
from streamlit.testing.v1 import AppTest

from views import memory


def run(**params) -> AppTest:
    return harness.open_page("softmax", **params)


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
    at = run(text="The cat sat on the mat", layer="3", head="7", query="2", scale="none")
    assert not at.exception
    assert at.slider(key="layer").value == 3 and at.slider(key="head").value == 7
    assert at.selectbox(key="query").value == 2
    assert at.radio(key="scale").value == "none"
    at.selectbox(key="query").set_value(4).run()
    assert harness.link_value(at, "query") == "4" and harness.link_value(at, "text") == "The cat sat on the mat"


@pytest.mark.parametrize("scale, sharper", [("4", True), ("none", True), ("0.25", False), ("0.5", False)])
def test_temperature_sharpens_or_flattens(scale, sharper):
    at = run(text="The animal didn't cross the street because it was too tired.", layer="1", head="4",
             query="3", scale=scale)
    assert not at.exception
    standard, chosen = metric(at, "Entropy, standard"), next(
        float(m.value.split()[0]) for m in at.metric if m.label.startswith("Entropy, τ"))
    assert (chosen < standard) if sharper else (chosen > standard)
    overlay = charts(at)[4]
    assert len(overlay["data"]) == 2 and overlay["layout"]["yaxis"]["range"] == [0.0, 1.0]


def test_moving_query_head_or_scale_does_not_rerun_the_model():
    at = run(text="No wasted work here", layer="1")
    misses, forward = memory.budget().misses, memory.COMPUTED["forward"]
    at.selectbox(key="query").set_value(3).run()
    at.slider(key="head").set_value(5).run()
    at.radio(key="scale").set_value("4").run()
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
