"""The heatmap page (the default, at /) in Streamlit's AppTest: the map, its sliders (the chart's own for a small run,
Streamlit's for a big one), the link, the downloads, the cache."""
import csv
import io

import numpy as np
from streamlit.testing.v1 import AppTest

from harness.apptest import APP, TIMEOUT, charts, link_value
from model.analysis.showcase import SHOWCASE
from runtime import memory, models, runs
from views.charts import head_chart
from views.charts.mounted import element_key
from viz import wire

CHART_STATE = element_key(head_chart.chart_key("heatmap"))  # the component's state: what its sliders picked
LONG_TEXT = " ".join(["word"] * 50)  # 52 tokens: 6 x 12 maps of 52 x 52 are 389 KB as ten-thousandths


def run(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def move_chart(at: AppTest, **selection) -> AppTest:
    """What the chart's own sliders do in the browser: the selection in the component's state, then a rerun."""
    at.session_state[CHART_STATE] = {"selection": selection}
    return at.run()


def maps_of(text: str) -> np.ndarray:
    return runs.compute_run(models.Choice("minilm"), text).attentions  # (layers, heads, T, T)


def test_a_small_run_gets_every_map_and_the_charts_own_sliders():
    at = run(text="Hello students")
    assert not at.exception and len(at.slider) == 0  # no Streamlit slider: the chart draws its own
    (chart,) = charts(at)
    sliders = chart.sliders
    assert sliders["labels"] == {"layer": "Layer", "head": "Head"} and sliders["head_max"] == 11
    # MiniLM opens at the head measured best at `it` -> its referent (model.analysis.showcase), not layer 0 head 0
    assert (sliders["layer"], sliders["head"], sliders["head_disabled"]) == (*SHOWCASE["all-MiniLM-L6-v2"], False)
    stack = wire.from_units(sliders["stack"])  # all-MiniLM-L6-v2: 6 layers x 12 heads of 4 x 4
    np.testing.assert_allclose(stack, maps_of("Hello students"), atol=0.5 / wire.UNITS)
    assert chart.figure["layout"]["title"]["text"] == "Layer {}, head {}".format(*SHOWCASE["all-MiniLM-L6-v2"])
    assert sliders["title"] == "Layer {layer}, head {head}"


def test_the_map_says_what_was_run_under_it():
    at = run(text="Hello students")
    layout = charts(at)[0].figure["layout"]
    (note,) = layout["annotations"]
    assert note["text"].startswith("4 tokens · 6 layers × 12 heads · all-MiniLM-L6-v2")  # [CLS] hello students [SEP]
    assert note["y"] == 0 and note["yanchor"] == "top"  # under the map, in the chart (and in its PNG)


def test_a_link_opens_at_its_head_and_a_move_of_the_chart_writes_the_link_and_the_downloads(offered):
    at = run(text="Hello students", layer="3", head="7")
    assert not at.exception and at.text_area[0].value == "Hello students"
    (chart,) = charts(at)
    assert (chart.sliders["layer"], chart.sliders["head"]) == (3, 7)
    assert chart.figure["layout"]["title"]["text"] == "Layer 3, head 7"
    assert offered["Download this map (CSV)"][0] == "attention_layer3_head7.csv"

    move_chart(at, layer=4, head=2)
    assert not at.exception
    assert (link_value(at, "layer"), link_value(at, "head")) == ("4", "2")
    name, build = offered["Download this map (CSV)"]
    assert name == "attention_layer4_head2.csv"
    rows = list(csv.reader(io.StringIO(build().decode("utf-8"))))
    np.testing.assert_allclose([[float(x) for x in row[1:]] for row in rows[1:]], maps_of("Hello students")[4, 2],
                               rtol=1e-6)


def test_the_rerun_after_a_move_sends_the_chart_the_same_bytes():
    """So Streamlit sends a reference to the browser's copy, and the chart, which shows the move already, is not
    drawn again; what is sent only changes with the maps."""
    at = run(text="Hello students", layer="1", head="1")
    before = charts(at)[0].payload
    for layer, head in ((1, 2), (0, 0), (5, 11)):
        move_chart(at, layer=layer, head=head)
        assert charts(at)[0].payload == before and link_value(at, "head") == str(head)
    at.toggle[1].set_value(True).run()  # auto colour range: another figure, sent with the selection of now
    (chart,) = charts(at)
    assert chart.payload != before and (chart.sliders["layer"], chart.sliders["head"]) == (5, 11)


def test_new_maps_or_another_language_send_the_mounted_chart_new_bytes():
    """The bytes the mounted chart has are sent again only while everything they are made of is the same."""
    at = run(text="Hello students", layer="1", head="1")
    move_chart(at, layer=2, head=3)
    before = charts(at)[0].payload
    at.text_area[0].set_value("Hello teachers and students").run()  # a new sentence, the chart still on the page
    (chart,) = charts(at)
    assert chart.payload != before and (chart.sliders["layer"], chart.sliders["head"]) == (2, 3)
    np.testing.assert_allclose(wire.from_units(chart.sliders["stack"]), maps_of("Hello teachers and students"),
                               atol=0.5 / wire.UNITS)
    english = chart.payload
    at.session_state["lang"] = "zh"  # the sidebar's language switch
    at.run()
    (chart,) = charts(at)
    assert chart.payload != english and chart.sliders["labels"] == {"layer": "层", "head": "头"}


def test_a_selection_from_the_browser_is_checked():
    at = run(text="Hello students", layer="2", head="3")
    for bad in ({"layer": 6, "head": 0}, {"layer": -1, "head": 0}, {"layer": "1", "head": 1},
                {"layer": True, "head": 1}, {"layer": 1}, "layer=1", [1, 1]):
        at.session_state[CHART_STATE] = {"selection": bad}
        at.run()
        assert not at.exception
        assert (link_value(at, "layer"), link_value(at, "head")) == ("2", "3"), bad


def test_the_mean_of_heads_sends_each_layers_mean_and_disables_the_head_slider():
    at = run(text="Hello students", mean="1", layer="2", head="4")
    (chart,) = charts(at)
    assert chart.sliders["head_disabled"] and chart.sliders["stack"]["shape"] == "6,1,4,4"
    np.testing.assert_allclose(wire.from_units(chart.sliders["stack"])[:, 0], maps_of("Hello students").mean(axis=1),
                               atol=0.5 / wire.UNITS)
    assert chart.figure["layout"]["title"]["text"] == "Layer 2, mean of heads"
    assert chart.sliders["title"] == "Layer {layer}, mean of heads"


def test_a_big_run_keeps_streamlits_sliders_and_one_map(offered):
    at = run(text=LONG_TEXT, layer="3", head="7")
    assert not at.exception
    assert [s.label for s in at.slider] == ["Layer", "Head"]
    assert at.slider[0].max == 5 and at.slider[1].max == 11  # all-MiniLM-L6-v2: 6 layers x 12 heads
    (chart,) = charts(at)
    assert chart.sliders is None and chart.figure["layout"]["title"]["text"] == "Layer 3, head 7"
    at.slider[0].set_value(4).run()
    assert link_value(at, "layer") == "4" and charts(at)[0].figure["layout"]["title"]["text"] == "Layer 4, head 7"
    assert offered["Download this map (CSV)"][0] == "attention_layer4_head7.csv"


def test_the_threshold_is_on_the_bytes_of_every_map():
    assert head_chart.preloads(np.zeros((6, 12, 45, 45), np.float32))  # 292 KB as ten-thousandths
    assert not head_chart.preloads(np.zeros((6, 12, 46, 46), np.float32))


def test_a_slider_move_never_runs_the_model_again_even_after_the_class_filled_the_cache():
    at = run(text="Mine alone")
    budget = memory.budget()
    for i in range(budget.max_entries + 8):  # the rest of the class's sentences fill the budget's passes
        memory.cached(("another student", i), lambda: runs.compute_run(models.Choice("minilm"), f"Theirs {i}"))
    assert budget.kinds()["forward"] == budget.max_entries and ("another student", 0) not in budget
    forward = memory.COMPUTED["forward"]
    move_chart(at, layer=2, head=0)
    move_chart(at, layer=2, head=5)
    assert not at.exception and link_value(at, "layer") == "2"
    assert memory.COMPUTED["forward"] == forward
    at.text_area[0].input("A new sentence").run()  # a new sentence is one pass
    assert memory.COMPUTED["forward"] == forward + 1
