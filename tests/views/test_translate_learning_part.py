"""Watch it learn (the Translate page, ?part=learning) in Streamlit's AppTest: the snapshot slider from random to
trained, the translation and cross-attention of each snapshot, its held-out accuracy and the loss curve with the
snapshot marked; the map's pickers; the link; bad input."""
import html

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from harness import apptest
from harness.apptest import figures, link_value, plotly_array
from model.translator import load_shipped
from model.translator.decoding import generate
from model.translator.snapshots import at_snapshot, snapshot_steps, training_record


def open_learning(**params) -> AppTest:
    return apptest.open_page("translate", part="learning", **params)


def translation_line(at: AppTest) -> str:
    (line,) = [m.value for m in at.markdown if m.value.startswith("**Its translation")]
    return line


def cross_and_curve(at: AppTest) -> tuple[dict, dict]:
    maps = [f for f in figures(at) if f["data"][0]["type"] == "heatmap"]
    curves = [f for f in figures(at) if f["data"][0]["type"] == "scatter"]
    assert len(maps) == 1 and len(curves) == 1
    return maps[0], curves[0]


def rows_and_keys(figure: dict) -> tuple[list[str], list[str]]:
    shown = lambda label: html.unescape(label).rstrip("\u200b\u200c")  # noqa: E731
    trace = figure["data"][0]
    return [shown(y) for y in trace["y"]], [shown(x) for x in trace["x"]]


def z(figure: dict) -> np.ndarray:
    return plotly_array(figure["data"][0]["z"])


def expected_cross(model, text: str, layer: int, head: int | None) -> np.ndarray:
    with torch.inference_mode():
        cross = generate(model, torch.tensor([model.source.ids(list(text))]), record=True).cross[layer, 0]
    return (cross.mean(0) if head is None else cross[head]).numpy()


def test_the_first_snapshot_is_random_and_the_last_translates():
    steps, record = snapshot_steps(), training_record()
    at = open_learning()
    assert not at.exception and not at.error
    assert at.select_slider(key="snap").value == 0 and link_value(at, "snap") == "0"
    assert "at step 0 (random weights)" in translation_line(at) and "✗ wrong" in translation_line(at)
    assert [(m.label, m.value) for m in at.metric] == [("Training step", f"0 of {steps[-1]}"),
                                                       ("Held-out exact match", "0.0%"), ("Training loss", "–")]
    cross, curve = cross_and_curve(at)
    rows, keys = rows_and_keys(cross)
    assert keys == list("我有一只猫") and "cat" not in rows
    np.testing.assert_allclose(z(cross), expected_cross(at_snapshot(0), "我有一只猫", 1, None),
                               atol=1e-6)
    assert cross["layout"]["title"]["text"] == "Cross-attention, layer 1, mean of its heads"
    assert len(plotly_array(curve["data"][0]["y"])) == len(record.loss)
    assert list(plotly_array(curve["data"][1]["x"])) == list(steps)
    assert curve["layout"]["shapes"][0]["x0"] == 0

    at.select_slider(key="snap").set_value(steps[-1]).run()
    assert not at.exception and link_value(at, "snap") == str(steps[-1])
    assert translation_line(at) == f"**Its translation after {steps[-1]} steps:** I have a cat :green[✓ right]"
    assert at.metric[1].value == f"{record.snapshot_scores[steps[-1]]:.1%}"
    assert at.metric[2].value == f"{record.loss[-1]:.3f}"
    cross, curve = cross_and_curve(at)
    assert rows_and_keys(cross) == (["I", "have", "a", "cat", "<eos>"], list("我有一只猫"))
    np.testing.assert_allclose(z(cross), expected_cross(load_shipped(), "我有一只猫", 1, None),
                               atol=1e-6)
    assert curve["layout"]["shapes"][0]["x0"] == steps[-1]


def test_a_snapshot_in_between_and_one_head_of_a_layer():
    step = snapshot_steps()[6]
    at = open_learning(snap=str(step), mean="0", layer="0", head="2")
    assert not at.exception
    cross, _ = cross_and_curve(at)
    assert cross["layout"]["title"]["text"] == "Cross-attention, layer 0, head 2"
    np.testing.assert_allclose(z(cross), expected_cross(at_snapshot(step), "我有一只猫", 0, 2),
                               atol=1e-6)
    at.slider(key="head").set_value(3).run()
    cross, _ = cross_and_curve(at)
    np.testing.assert_allclose(z(cross), expected_cross(at_snapshot(step), "我有一只猫", 0, 3),
                               atol=1e-6)
    at.toggle(key="mean").set_value(True).run()
    assert at.slider(key="head").disabled and link_value(at, "mean") == "1"
    at.slider(key="layer").set_value(1).run()
    cross, _ = cross_and_curve(at)
    assert cross["layout"]["title"]["text"] == "Cross-attention, layer 1, mean of its heads"


def test_heads_switched_off_in_the_sidebar_apply_to_the_snapshot():
    at = open_learning(snap=str(snapshot_steps()[-1]), off="cross.0.0,cross.0.1,cross.0.2,cross.0.3,cross.1.0,"
                       "cross.1.1,cross.1.2,cross.1.3")
    assert not at.exception
    line = translation_line(at)
    assert "8 heads off" in line and "✗ wrong" in line  # no cross-attention left: it cannot read the Chinese


@pytest.mark.parametrize("bad", ["7", "-1", "abc", "600.0"])
def test_a_step_without_a_snapshot_in_the_link_is_ignored_with_a_notice(bad):
    at = open_learning(snap=bad)
    assert not at.exception
    assert at.select_slider(key="snap").value == 0
    assert any("snap=" in w.value and "in the link" in w.value for w in at.warning)


@pytest.mark.parametrize("src", ["我有一只猫🙂", "我有一只猫" * 14, "猫猫猫猫猫猫", "我喜欢猫吗吗吗了"])
def test_any_source_the_page_lets_through(src):
    at = open_learning(src=src, snap=str(snapshot_steps()[-1]))
    assert not at.exception and not at.error
    cross, _ = cross_and_curve(at)
    rows, keys = rows_and_keys(cross)
    assert len(keys) == min(len(src), 64) and rows
    assert translation_line(at).startswith("**Its translation after")
