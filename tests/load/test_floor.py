"""The floor (bench/floor), the framework's cost that bench/load.py compares the app to: with no model, a seeded
softmax per whitespace token; with ATTNVIZ_FLOOR_MODEL, the real model's attention for the sentence's word pieces,
run once per new sentence in the session."""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest
from transformers import AutoTokenizer, BertModel

from harness.apptest import figures, plotly_array
from model.loading.sources import packaged_model_dir

FLOOR = Path(__file__).resolve().parents[2] / "bench" / "floor"
TEXT = "Attention is all you need, said the lecturer."


def floor_page(monkeypatch, model: str) -> AppTest:
    """The floor's heatmap page in a fresh session on ?text=TEXT&layer=2&head=5, with ATTNVIZ_FLOOR_MODEL=model."""
    monkeypatch.setenv("ATTNVIZ_FLOOR_MODEL", model)
    monkeypatch.syspath_prepend(str(FLOOR))
    monkeypatch.delitem(sys.modules, "page", raising=False)  # page.py reads the variable when imported
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


def test_the_floors_all_heads_page_draws_every_head_then_the_chosen_one(monkeypatch):
    """The plain all-heads page the app's is compared to: every (layer, head) map in one heatmap, a NaN row and column
    between two maps, then the chosen head as on the heatmap page."""
    monkeypatch.setenv("ATTNVIZ_FLOOR_MODEL", "")
    monkeypatch.syspath_prepend(str(FLOOR))
    monkeypatch.delitem(sys.modules, "page", raising=False)
    import page  # noqa: PLC0415 - bench/floor is on the path only in this test

    at = AppTest.from_file(str(FLOOR / "all_heads.py"), default_timeout=120)
    at.query_params.update(text=TEXT, layer="2", head="5")
    at.run()
    assert not at.exception, at.exception
    every, chosen = figures(at)
    grid = plotly_array(every["data"][0]["z"])
    size = len(TEXT.split())
    assert grid.shape == (page.LAYERS * (size + 1) - 1, page.HEADS * (size + 1) - 1)
    for layer, head in [(0, 0), (2, 5), (page.LAYERS - 1, page.HEADS - 1)]:
        top, left = layer * (size + 1), head * (size + 1)
        np.testing.assert_array_equal(grid[top:top + size, left:left + size], page.seeded(TEXT, layer, head))
    assert np.isnan(grid[size, :]).all() and np.isnan(grid[:, size]).all()
    np.testing.assert_array_equal(plotly_array(chosen["data"][0]["z"]), page.seeded(TEXT, 2, 5))


def test_the_floors_old_all_heads_page_is_one_map(monkeypatch):
    """ATTNVIZ_FLOOR_ALL_HEADS=0: the all-heads page as it was before 2026-11-26 (the chosen head only), to re-run
    the older comparisons."""
    monkeypatch.setenv("ATTNVIZ_FLOOR_ALL_HEADS", "0")
    monkeypatch.syspath_prepend(str(FLOOR))
    monkeypatch.delitem(sys.modules, "page", raising=False)
    at = AppTest.from_file(str(FLOOR / "all_heads.py"), default_timeout=120)
    at.query_params.update(text=TEXT)
    at.run()
    assert not at.exception, at.exception
    assert len(figures(at)) == 1
