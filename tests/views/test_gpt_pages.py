"""The toy GPT in the pages, in Streamlit's AppTest: every page with a model picker runs it on its default text (a toy
sentence written twice) and opens at its induction head; its maps are causal; the masks page says its causal mask is
always on; a word it has never seen is named once; the head atlas measures induction on any model's text."""
import html

import numpy as np
import pytest
import torch

from harness import apptest
from harness.apptest import charts, figures, link_value, plotly_array
from model.gpt.toy import SHOWCASE_TEXT as GPT_TEXT
from model.gpt.toy import load, showcase_head
from views.shell.registry import MODEL, PAGES

PICKER_PAGES = [spec.path for spec in PAGES if MODEL in spec.needs]


@pytest.fixture(scope="module")
def toy():
    return load()


@pytest.mark.parametrize("path", PICKER_PAGES)
def test_every_page_with_a_model_runs_the_toy_gpt(path):
    at = apptest.open_page(path, model="gpt")
    assert not at.exception and not at.error, [e.value for e in at.exception]
    assert charts(at)
    if "text" in {t.key for t in at.text_area}:
        assert at.text_area(key="text").value == GPT_TEXT


@pytest.mark.parametrize("path", ["heatmap", "all-heads", "softmax", "masks", "neurons", "compare"])
def test_pages_open_at_the_induction_head(path):
    at = apptest.open_page(path, model="gpt")
    layer, head = showcase_head()
    assert layer >= 1 and (link_value(at, "layer"), link_value(at, "head")) == (str(layer), str(head))


def test_the_heatmap_is_the_model_s_causal_attention_at_that_head(toy):
    model, vocabulary = toy
    at = apptest.open_page("heatmap", model="gpt")
    figure = figures(at)[0]
    z = plotly_array(figure["data"][0]["z"])
    ids = torch.tensor([vocabulary.ids(GPT_TEXT.split())])
    with torch.inference_mode():
        layer, head = showcase_head()
        want = model(ids).attentions[layer][0, head].numpy()
    shown = np.nan_to_num(z, nan=0.0)
    np.testing.assert_allclose(shown, want, atol=5e-5 + 1e-7)  # the chart sends 4 decimals
    assert np.all(np.triu(shown, 1) == 0)
    labels = [html.unescape(x).rstrip("\u200b\u200c") for x in figure["data"][0]["x"]]
    assert labels == GPT_TEXT.split()


def test_the_masks_page_says_the_causal_mask_is_always_on():
    for lang, says in (("en", "causal mask is always on"), ("zh", "因果掩码始终开启")):
        at = apptest.open_page("masks", title=None if lang == "en" else "掩码", model="gpt", lang=lang, mask="none")
        assert any(says in i.value for i in at.info)


def test_a_word_it_has_never_seen_is_named_once():
    at = apptest.open_page("heatmap", model="gpt", text="I have a zebra . I have a zebra")
    notices = [w.value for w in at.warning]
    assert len(notices) == 1 and "zebra" in notices[0] and "<unk>" in notices[0]
    assert not at.exception


def test_switching_to_the_gpt_brings_its_own_sentence():
    at = apptest.open_page("heatmap")
    at.sidebar.selectbox(key="model").set_value("gpt").run()
    assert at.text_area(key="text").value == GPT_TEXT and not at.exception
    at.sidebar.selectbox(key="model").set_value("minilm").run()
    assert at.text_area(key="text").value != GPT_TEXT


@pytest.mark.parametrize("model", ["gpt", "minilm"])
def test_the_atlas_measures_induction_on_the_text(model):
    at = apptest.open_page("atlas", model=model, text=GPT_TEXT if model == "gpt" else "one two three one two three")
    table = at.dataframe[0].value
    induction = table["induction"]
    assert induction.notna().all() and (induction >= 0).all() and (induction <= 1).all()
    assert list(table.columns).index("induction") == list(table.columns).index("previous") + 1  # beside it
    if model == "gpt":  # on its own text written twice, the head found on the probes is the one that does it most
        layer, head = showcase_head()
        row = table[(table["layer"] == layer) & (table["head"] == head)]
        assert float(row["induction"].iloc[0]) == pytest.approx(float(induction.max()))


def test_the_step_by_step_page_writes_the_gpt_s_own_formulas():
    at = apptest.open_page("steps", model="gpt", layer="0")
    shown = " ".join(str(getattr(e, "value", "")) for e in at.main)
    assert r"E_{\text{tok}} + E_{\text{pos}}" in shown and r"\sqrt{d_{\text{model}}}" not in shown
    at = apptest.open_page("steps", model="gpt", layer="1")
    assert any("next-word scores" in c.value for c in at.caption)
