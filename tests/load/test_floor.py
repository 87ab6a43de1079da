"""The floor (bench/floor), the framework's cost that bench/load.py compares the app to: with no model, a seeded
softmax per whitespace token; with ATTNVIZ_FLOOR_MODEL, the real model's attention for the sentence's word pieces,
run once per new sentence in the session."""
import io
import sys
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
import torch
from streamlit.testing.v1 import AppTest
from transformers import AutoTokenizer, BertModel

from harness.apptest import charts, figures, plotly_array
from model.loading.sources import packaged_model_dir

FLOOR = Path(__file__).resolve().parents[2] / "bench" / "floor"
TEXT = "Attention is all you need, said the lecturer."


def floor_page(monkeypatch, model: str, sidebar: str = "app") -> AppTest:
    """The floor's heatmap page in a fresh session on ?text=TEXT&layer=2&head=5, with ATTNVIZ_FLOOR_MODEL=model and
    ATTNVIZ_FLOOR_SIDEBAR=sidebar."""
    monkeypatch.setenv("ATTNVIZ_FLOOR_MODEL", model)
    monkeypatch.setenv("ATTNVIZ_FLOOR_SIDEBAR", sidebar)
    monkeypatch.syspath_prepend(str(FLOOR))
    monkeypatch.delitem(sys.modules, "page", raising=False)  # page.py reads the variable when imported
    monkeypatch.delitem(sys.modules, "sidebar", raising=False)
    at = AppTest.from_file(str(FLOOR / "heatmap.py"), default_timeout=120)
    at.query_params.update(text=TEXT, layer="2", head="5")
    return at.run()


def chart(at: AppTest) -> tuple[list[str], np.ndarray]:
    assert not at.exception, at.exception
    (figure,) = figures(at)
    trace = figure["data"][0]
    return list(trace["x"]), plotly_array(trace["z"])


def test_the_bare_floor_draws_a_row_softmax_per_word(monkeypatch):
    labels, z = chart(floor_page(monkeypatch, ""))
    assert labels == [f"{i}:{w}" for i, w in enumerate(TEXT.split())]
    assert np.allclose(z.sum(axis=1), 1, atol=1e-6)


@pytest.mark.parametrize("model", ["compiled", "hf"])
def test_the_floor_with_a_model_draws_its_attention(monkeypatch, model):
    path = packaged_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    ids = tokenizer(TEXT)["input_ids"]
    with torch.inference_mode():
        reference = BertModel.from_pretrained(path, attn_implementation="eager").eval()(
            torch.tensor([ids]), output_attentions=True).attentions[2][0, 5].numpy()

    at = floor_page(monkeypatch, model)
    labels, z = chart(at)
    assert labels == [f"{i}:{t}" for i, t in enumerate(tokenizer.convert_ids_to_tokens(ids))]
    np.testing.assert_allclose(z, reference, atol=1e-5)

    held = at.session_state["_run"]  # the pass is held for the session: a slider move runs no model
    at.slider(key="head").set_value(7).run()
    assert at.session_state["_run"] is held
    np.testing.assert_array_equal(chart(at)[1], held[2][2, 7])



def floor_all_heads(monkeypatch, mode: str, text: str = TEXT) -> tuple[AppTest, list]:
    """The floor's all-heads page (ATTNVIZ_FLOOR_ALL_HEADS=mode, no model) on ?text=text&layer=2&head=5, and the
    page links it drew: (page, st.page_link's keywords)."""
    monkeypatch.setenv("ATTNVIZ_FLOOR_MODEL", "")
    monkeypatch.setenv("ATTNVIZ_FLOOR_ALL_HEADS", mode)
    monkeypatch.syspath_prepend(str(FLOOR))
    monkeypatch.delitem(sys.modules, "page", raising=False)  # page.py reads the variables when imported
    monkeypatch.delitem(sys.modules, "sidebar", raising=False)
    # Run alone, the page has no navigation for its link to the heatmap page to name: the links it draws are kept
    links = []
    monkeypatch.setattr(st, "page_link", lambda page, **kwargs: links.append((page, kwargs)))
    at = AppTest.from_file(str(FLOOR / "all_heads.py"), default_timeout=120)
    at.query_params.update(text=text, layer="2", head="5")
    at.run()
    assert not at.exception, at.exception
    return at, links


def tiles(grid: np.ndarray, size: int) -> np.ndarray:
    """The (layers, heads, size, size) maps of a floor's all-heads grid (a NaN row and column between two)."""
    layers, heads = (grid.shape[0] + 1) // (size + 1), (grid.shape[1] + 1) // (size + 1)
    padded = np.pad(grid, ((0, 1), (0, 1)), constant_values=np.nan)
    return padded.reshape(layers, size + 1, heads, size + 1).transpose(0, 2, 1, 3)[:, :, :size, :size]


@pytest.mark.parametrize("mode", ["controls", "grid"])
def test_the_floors_all_heads_page_draws_every_head_then_the_chosen_one(monkeypatch, mode):
    """The plain all-heads page the app's is compared to: every (layer, head) map in one heatmap, a NaN row and column
    between two maps, then the chosen head as on the heatmap page."""
    at, links = floor_all_heads(monkeypatch, mode)
    import page  # noqa: PLC0415 - bench/floor is on the path only in these tests

    every, chosen = figures(at)
    grid, size = plotly_array(every["data"][0]["z"]), len(TEXT.split())
    assert grid.shape == (page.LAYERS * (size + 1) - 1, page.HEADS * (size + 1) - 1)
    assert np.isnan(grid[size, :]).all() and np.isnan(grid[:, size]).all()
    maps = tiles(grid, size)
    for layer, head in [(0, 0), (2, 5), (page.LAYERS - 1, page.HEADS - 1)]:
        np.testing.assert_array_equal(maps[layer, head], page.seeded(TEXT, layer, head))
    np.testing.assert_array_equal(plotly_array(chosen["data"][0]["z"]), page.seeded(TEXT, 2, 5))
    assert (len(at.get("download_button")) == 2) == (mode == "controls")
    if mode == "controls":  # the big view of the chosen head
        assert links[-1] == ("heatmap.py", {"label": "Open layer 2 head 5 in the big view",
                                               "query_params": {"text": TEXT, "layer": 2, "head": 5}})


def test_the_floors_all_heads_controls_change_the_picture(monkeypatch):
    """The plain page does the work of the app's settings: special tokens hidden or renormalised, each tile stretched
    to its own range, long sentences pooled to the tile size; its downloads hold the chosen map and every map."""
    text = "[CLS] " + TEXT + " [SEP]"
    at, _ = floor_all_heads(monkeypatch, "controls", text)
    import page  # noqa: PLC0415 - bench/floor is on the path only in these tests

    words = text.split()
    at.button_group(key="special").set_value("renormalise").run()
    maps = tiles(plotly_array(figures(at)[0]["data"][0]["z"]), len(words) - 2)
    inner = page.seeded(text, 2, 5)[1:-1, 1:-1]
    np.testing.assert_allclose(maps[2, 5], inner / inner.sum(axis=1, keepdims=True), rtol=1e-6)
    at.toggle(key="auto").set_value(True).run()
    maps = tiles(plotly_array(figures(at)[0]["data"][0]["z"]), len(words) - 2)
    assert np.nanmin(maps[2, 5]) == 0 and np.nanmax(maps[2, 5]) == pytest.approx(1)

    long_text = " ".join(f"w{i}" for i in range(70))
    at, _ = floor_all_heads(monkeypatch, "controls", long_text)
    maps = tiles(plotly_array(figures(at)[0]["data"][0]["z"]), 35)  # 70 tokens in tiles of 64 px: 2 a cell
    np.testing.assert_array_equal(maps[1, 3, 0, 0], page.seeded(long_text, 1, 3)[:2, :2].max())
    at.radio(key="tile").set_value(32).run()
    maps = tiles(plotly_array(figures(at)[0]["data"][0]["z"]), 24)  # in tiles of 32 px: 3 a cell
    np.testing.assert_array_equal(maps[1, 3, 0, 0], page.seeded(long_text, 1, 3)[:3, :3].max())

    np.testing.assert_array_equal(page.attentions(TEXT, "")[1][2, 5], page.seeded(TEXT, 2, 5))
    with np.load(io.BytesIO(page.maps_npz(TEXT, ""))) as saved:
        np.testing.assert_array_equal(saved["attentions"], page.attentions(TEXT, "")[1])
    assert page.head_csv(page.seeded(TEXT, 2, 5), TEXT.split()).splitlines()[0] == "query \\ key," + ",".join(
        TEXT.split())


def test_the_floors_old_all_heads_page_is_one_map(monkeypatch):
    """ATTNVIZ_FLOOR_ALL_HEADS=one: the all-heads page as it was before 2026-11-26 (the chosen head only), to re-run
    the older comparisons."""
    at, _ = floor_all_heads(monkeypatch, "one")
    assert len(figures(at)) == 1


def test_the_floors_sidebar_controls_each_do_what_the_apps_do(monkeypatch):
    """The app's sidebar as a plain page would write it: the page's words in Chinese, lecture mode's taller chart and
    larger type, the charts' download format, and the model's other pass, each bound to the link."""
    at = floor_page(monkeypatch, "hf")
    labels, z = chart(at)
    assert at.title[0].value == "Attention heatmap (floor)" and at.slider(key="layer").label == "Layer"

    at.button_group(key="lang").set_value("zh").run()
    assert at.title[0].value == "注意力热图（基线）" and at.slider(key="layer").label == "层"
    assert at.query_params["lang"] == "zh"

    at.toggle(key="lecture").set_value(True).run()
    (shown,) = charts(at)
    assert shown.figure["layout"]["height"] == 480 and shown.figure["layout"]["font"]["size"] == 20

    assert shown.config["toImageButtonOptions"]["format"] == "png"
    at.button_group(key="format").set_value("svg").run()
    assert charts(at)[0].config["toImageButtonOptions"]["format"] == "svg"

    held = at.session_state["_run"]
    at.selectbox(key="model").set_value("compiled").run()  # the app's compiled pass of the same model
    assert at.session_state["_run"] is not held and at.session_state["_run_kind"] == "compiled"
    compiled_labels, compiled = chart(at)
    assert compiled_labels == labels
    np.testing.assert_allclose(compiled, z, atol=1e-5)


def test_the_floor_without_a_sidebar(monkeypatch):
    """ATTNVIZ_FLOOR_SIDEBAR=none: the floor as it was before, nothing in the sidebar."""
    at = floor_page(monkeypatch, "", sidebar="none")
    assert not at.sidebar.children and not at.get("button_group") and len(figures(at)) == 1
