"""The translator in the pages, in Streamlit's AppTest: the default of the encoder-decoder page (its own
translation, Chinese characters and English words on the axes, unknown characters named), its encoder on the masks
page, its link (?model=translator, ?src=, ?tgt=) read back as it was written."""
import dataclasses
import html

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from harness import apptest
from harness.apptest import figures, link_value, plotly_array
from model.loading import sources
from model.translator import load_shipped
from model.translator.decoding import generate, words_of
from model.translator.vocabulary import chinese_tokens
from runtime import models


@pytest.fixture(scope="module")
def translator():
    return load_shipped()


def translate(model, text: str) -> str:
    _, ids, _ = model.encode_source(text)
    return words_of(model, generate(model, torch.tensor([ids]))[0])


def open_seq2seq(**params) -> AppTest:
    return apptest.open_page("encoder-decoder", **params)


def axes(figure: dict) -> tuple[list[str], list[str]]:
    """(keys, queries) of a heatmap, as the browser shows them (plotly's labels unescaped, without the invisible
    marks that keep repeated tokens apart)."""
    trace = figure["data"][0]
    shown = lambda label: html.unescape(label).rstrip("\u200b\u200c")  # noqa: E731
    return [shown(x) for x in trace["x"]], [shown(y) for y in trace["y"]]


def translation_line(at: AppTest) -> str:
    (line,) = [m.value for m in at.markdown if m.value.startswith("**Translation:**")]
    return line.removeprefix("**Translation:**").strip()


def test_the_translator_is_the_default_and_shows_its_own_translation(translator):
    at = open_seq2seq()
    assert not at.exception and not at.warning
    assert at.sidebar.selectbox(key="model").value == "translator"
    assert [t.value for t in at.text_input] == ["我有一只猫", ""]
    assert translation_line(at) == "I have a cat" == translate(translator, "我有一只猫")
    decoder, cross, encoder = figures(at)
    assert axes(decoder) == (["<bos>", "I", "have", "a", "cat"],) * 2
    assert axes(cross) == (["我", "有", "一", "只", "猫"], ["<bos>", "I", "have", "a", "cat"])
    assert axes(encoder) == (["我", "有", "一", "只", "猫"],) * 2
    assert cross["layout"]["xaxis"]["title"]["text"] == "key: Chinese character (encoder output)"
    assert cross["layout"]["yaxis"]["title"]["text"] == "query: English word"
    masked = plotly_array(decoder["data"][0]["z"])  # causal: the upper triangle is blocked
    assert np.isnan(masked[np.triu_indices(5, 1)]).all() and not np.isnan(masked[np.tril_indices(5)]).any()
    np.testing.assert_allclose(np.nansum(masked, axis=1), 1.0, atol=1e-4)
    assert [s.max for s in at.main.slider] == [1, 3]  # the translator's 2 layers x 4 heads
    assert (link_value(at, "model"), link_value(at, "src"), link_value(at, "tgt")) == ("translator", "我有一只猫", "")


def test_a_typed_target_is_read_with_teacher_forcing(translator):
    at = open_seq2seq(src="她有两个孩子吗", tgt="Does she have two Children ?")
    assert not at.exception and not at.warning
    assert not [m for m in at.markdown if m.value.startswith("**Translation:**")]
    keys, queries = axes(figures(at)[1])
    assert keys == chinese_tokens("她有两个孩子吗")
    assert queries == ["<bos>", "does", "she", "have", "two", "children", "?"]  # as the vocabulary spells them
    (said,) = [m.value for m in at.markdown if m.value.startswith("**With your target**")]
    assert "` children ` → ?" in said and "` ? ` → ` <eos> `" in said  # it would have written the same
    assert translate(translator, "她有两个孩子吗") == "does she have two children ?"


def test_characters_and_words_it_has_never_seen_are_named_and_it_still_answers():
    at = open_seq2seq(src="我有一只狮", tgt="I have a lion")
    assert not at.exception
    said = [w.value for w in at.warning]
    assert "The translator has never seen this character: ` 狮 `." in said[0] and "` <unk> `" in said[0]
    assert "The translator has never seen this word: ` lion `." in said[1]
    assert len(figures(at)) == 3


def test_a_long_source_is_cut_to_its_positions_and_says_so():
    at = open_seq2seq(src="我有一只猫" * 20)
    assert not at.exception
    assert any("The source has 100 tokens; the model reads at most 64" in w.value for w in at.warning)
    assert len(axes(figures(at)[2])[0]) == 64


def test_punctuation_alone_is_no_sentence():
    at = open_seq2seq(src="。")
    assert not at.exception and not figures(at)
    assert any("Type a Chinese sentence" in i.value for i in at.info)


def test_the_link_is_read_back_as_it_was_written():
    params = {"model": "translator", "src": "他昨天买了三本书", "tgt": "", "layer": "1", "head": "2", "mean": "0"}
    at = open_seq2seq(**params)
    assert not at.exception and not at.warning
    assert translation_line(at) == "he bought three books yesterday"
    assert {k: link_value(at, k) for k in params} == params
    assert [f["layout"]["title"]["text"] for f in figures(at)][1] == "Cross-attention, layer 1, head 2"
    again = open_seq2seq(**{k: link_value(at, k) for k in at.query_params})
    assert figures(again) == figures(at)


def test_a_bad_model_in_the_link_is_a_notice_and_the_translator_answers():
    at = open_seq2seq(model="minilm")
    assert not at.exception
    assert any("Ignored ` model=minilm ` in the link: it must be one of translator, random" in w.value
               for w in at.warning)
    assert translation_line(at) == "I have a cat"


def test_switching_models_swaps_the_texts_still_at_their_defaults():
    at = open_seq2seq()
    at.sidebar.selectbox(key="model").set_value("random").run()
    assert not at.exception
    assert [t.value for t in at.text_input] == ["The cat sat on the mat.", "Le chat était assis sur le tapis."]
    assert any("weights are random" in i.value for i in at.info)
    at.text_input(key="src").input("Hello").run()
    at.sidebar.selectbox(key="model").set_value("translator").run()
    assert [t.value for t in at.text_input] == ["Hello", ""]  # typed: kept (and named as unknown)
    assert any("never seen these characters" in w.value for w in at.warning)


def test_the_translator_unavailable_is_said_and_the_random_model_serves(monkeypatch):
    real = sources.list_sources()
    gone = [dataclasses.replace(s, available=False, reason="its shipped files are missing (model.safetensors)")
            if s.key == "translator" else s for s in real]
    monkeypatch.setattr(models, "list_sources", lambda: gone)  # where the app looks it up
    models.sources.clear()  # cached for a minute per process
    try:
        at = open_seq2seq()
        assert not at.exception
        picker = at.sidebar.selectbox(key="model")
        assert picker.value == "random" and picker.options == ["Random encoder-decoder (untrained, configurable)"]
        assert "its shipped files are missing" in picker.help
    finally:
        models.sources.clear()


def test_on_the_masks_page_its_encoder_reads_the_chinese_under_each_mask():
    at = apptest.open_page("masks", model="translator", src="我有一只猫", mask="padding", pad_to="8")
    assert not at.exception and not at.warning
    assert at.text_area(key="src").value == "我有一只猫"
    mask, attention, _ = figures(at)
    assert axes(attention)[0] == ["我", "有", "一", "只", "猫", "<pad>", "<pad>", "<pad>"]
    z = plotly_array(attention["data"][0]["z"])
    assert np.isnan(z[:, 5:]).all() and not np.isnan(z[:, :5]).any()  # <pad> is blocked as a key
    assert any("translator's **encoder**" in i.value for i in at.info)
    assert {k: link_value(at, k) for k in ("model", "src", "mask", "pad_to")} == {
        "model": "translator", "src": "我有一只猫", "mask": "padding", "pad_to": "8"}
    causal = apptest.open_page("masks", model="translator", mask="causal")
    z = plotly_array(figures(causal)[1]["data"][0]["z"])
    assert np.isnan(z[np.triu_indices(5, 1)]).all() and not np.isnan(z[np.tril_indices(5)]).any()


def test_on_the_masks_page_unknown_characters_are_named():
    at = apptest.open_page("masks", model="translator", src="我有一只狮子")  # two passes: with and without the mask
    assert not at.exception and figures(at)
    assert ["never seen this character: ` 狮 `" in w.value for w in at.warning] == [True]  # said once


def test_pages_of_one_model_only_do_not_offer_it():
    at = apptest.open_page("heatmap", model="translator")
    assert not at.exception
    assert any("Ignored ` model=translator ` in the link" in w.value for w in at.warning)
    assert not [o for o in at.sidebar.selectbox(key="model").options if o.startswith("Translator")]
