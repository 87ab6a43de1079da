"""The Translate page in Streamlit's AppTest: stepping through 我有一只猫 -> I have a cat with every control (step
slider, previous / next / play, layer, head, mean), the three ways of choosing a word, the alignment part, heads
switched off, the examples, its link, and every kind of bad input as a plain message."""
import time

import numpy as np
import pytest
import torch

from harness import apptest
from harness.apptest import figures, link_value, plotly_array
from model.sampling import Sampling
from model.translator import load_shipped
from model.translator.decoding import beam_search, generate, words_of
from runtime import memory
from views.translate.page import PLAYING


@pytest.fixture(scope="module")
def translator():
    return load_shipped()


def source_ids(model, text: str):
    return torch.tensor([model.encode_source(text)[1]])


def open_translate(**params):
    at = apptest.open_page("translate", **params)
    assert not at.exception, at.exception
    return at


def translation(at) -> str:
    (line,) = [m.value for m in at.markdown if m.value.startswith("**Translation**")]
    return line.split("): ", 1)[1]


def step_line(at) -> str:
    (line,) = [m.value for m in at.markdown if m.value.startswith("**Step ")]
    return line


def slider(at, key):
    return at.slider(key=key)


def test_default_steps_through_i_have_a_cat_from_bos(translator):
    at = open_translate()
    assert translation(at) == "I have a cat"
    assert "reads (the target shifted right): ` <bos> ` → writes **I**" in step_line(at)
    step = slider(at, "step")
    assert (step.value, step.max) == (0, 4)  # I have a cat <eos>
    with torch.inference_mode():
        record = generate(translator, source_ids(translator, "我有一只猫"), record=True)
    for t, word in enumerate(["I", "have", "a", "cat", "<eos>"]):
        step.set_value(t).run()
        causal, cross_row, next_words = figures(at)
        z = plotly_array(causal["data"][0]["z"])  # (5, 5): rows up to t shown, later rows empty
        assert np.isfinite(z[:t + 1][np.tril_indices(t + 1)]).all() and np.isnan(z[t + 1:]).all()
        blocked = plotly_array(causal["data"][1]["z"])  # grey where the causal mask blocks, in the rows shown
        assert (blocked[:t + 1][np.triu_indices(t + 1, 1, 5)] == 1).all()
        np.testing.assert_allclose(z[t, :t + 1], record.decoder[0, 0, 0, t, :t + 1].numpy(), atol=1e-6)
        np.testing.assert_allclose(plotly_array(cross_row["data"][0]["y"]), record.cross[0, 0, 0, t].numpy(),
                                   atol=1e-6)
        bars = next_words["data"][0]
        labels = [label.replace("&lt;", "<").replace("&gt;", ">") for label in bars["y"]][::-1]
        assert labels[0] == word and bars["text"][::-1][0].endswith("← chosen")
        probs = torch.softmax(record.logits[0, t], -1)
        assert plotly_array(bars["x"])[::-1][0] == pytest.approx(probs.max().item(), abs=1e-6)
        assert link_value(at, "step") == str(t)


def test_previous_next_and_play_move_the_step():
    at = open_translate()
    buttons = {b.label: b for b in at.button}
    buttons["Next"].click().run()
    buttons = {b.label: b for b in at.button}
    buttons["Next"].click().run()
    assert slider(at, "step").value == 2
    {b.label: b for b in at.button}["Previous"].click().run()
    assert slider(at, "step").value == 1
    {b.label: b for b in at.button}["Play"].click().run()
    assert at.session_state[PLAYING] and slider(at, "step").disabled
    time.sleep(1.0)
    at.run()  # what the timer's rerun does: one step further
    assert slider(at, "step").value == 2
    {b.label: b for b in at.button}["Pause"].click().run()
    assert not at.session_state[PLAYING] and slider(at, "step").value == 2


def test_sampling_shows_the_cuts_and_a_seed_draws_the_same_sentence_again(translator):
    params = {"decode": "sample", "temperature": "2.5", "top_k": "3", "draw": "7"}
    at = open_translate(**params)
    expected = words_of(translator, generate(translator, source_ids(translator, "我有一只猫"),
                                             Sampling(2.5, 3, None, 7))[0])
    assert translation(at) == expected
    again = open_translate(**params)
    assert translation(again) == expected
    bars = figures(at)[2]["data"][0]
    shown = plotly_array(bars["x"])[::-1]
    cut = [text.endswith("cut") for text in bars["text"][::-1]]
    assert cut == [False] * 3 + [True] * 7  # top-k 3: seven of the ten words are cut
    assert shown[:3].sum() == pytest.approx(1.0, abs=1e-5)  # the kept words share all the probability
    assert any(m.value.startswith("p_i") or "e^{z_i / T}" in m.value for m in at.latex)
    slider(at, "temperature").set_value(0.1).run()
    assert link_value(at, "temperature") == "0.1"


def test_beam_search_shows_its_beam_at_each_step(translator):
    at = open_translate(decode="beam", beam="3")
    (ids,) = beam_search(translator, source_ids(translator, "我有一只猫"), 3)
    assert translation(at) == words_of(translator, ids) == "I have a cat"
    assert any(m.value.startswith("**The beam after step 0**") for m in at.markdown)
    (table,) = at.dataframe
    beam = list(zip(table.value["state"], table.value["prefix"]))
    assert [state for state, _ in beam] == ["open"] * 3 and ("open", "I") in beam
    slider(at, "step").set_value(4).run()
    assert any(m.value.startswith("**The beam after step 4**") for m in at.markdown)
    (table,) = at.dataframe
    assert ("finished", "I have a cat <eos>") in zip(table.value["state"], table.value["prefix"])


def test_alignment_maps_are_the_decodings_and_mean_averages_the_heads(translator):
    at = open_translate(part="alignment", src="昨天我买了一本书", layer="1")
    assert translation(at) == "I bought a book yesterday"
    with torch.inference_mode():
        record = generate(translator, source_ids(translator, "昨天我买了一本书"), record=True)
    cross, decoder_self = figures(at)
    np.testing.assert_allclose(plotly_array(cross["data"][0]["z"]), record.cross[1, 0, 0].numpy(), atol=1e-6)
    assert len(cross["data"][0]["y"]) == 6 and len(cross["data"][0]["x"]) == 8  # 5 words + <eos> x 8 characters
    at.toggle(key="mean").set_value(True).run()
    np.testing.assert_allclose(plotly_array(figures(at)[0]["data"][0]["z"]), record.cross[1, 0].mean(0).numpy(),
                               atol=1e-6)
    assert any("yesterday →" in m.value for m in at.markdown)
    assert any("Measure words have no English word" in c.value and "本" in c.value for c in at.caption)


def test_every_cross_head_switched_off_breaks_the_translation():
    every_cross = ",".join(f"cross.{layer}.{head}" for layer in range(2) for head in range(4))
    at = open_translate(off=every_cross)
    assert translation(at) != "I have a cat"
    assert at.sidebar.multiselect(key="off").value == every_cross.split(",")
    at.sidebar.multiselect(key="off").set_value([]).run()
    assert translation(at) == "I have a cat" and link_value(at, "off") == ""


def test_an_example_button_puts_its_sentence_in_the_box():
    at = open_translate()
    at.button(key="example-昨天我买了一本书").click().run()
    assert at.text_input(key="src").value == "昨天我买了一本书"
    assert translation(at) == "I bought a book yesterday"
    assert any("held out" in c.value or "training split" in c.value for c in at.caption)


@pytest.mark.parametrize("src, says", [
    ("", "Type a Chinese sentence above"),
    ("hello", "has none (only Latin letters"),
    ("。！？，", "has none (only Latin letters"),
    ("123", "has none (only Latin letters"),
])
def test_input_without_chinese_gets_a_plain_message(src, says):
    at = open_translate(src=src)
    assert any(says in i.value for i in at.info) and not figures(at)


def test_unknown_characters_are_named_and_the_translation_still_shown():
    at = open_translate(src="我有一只X猫好")
    assert any("` X ` ` 好 `" in w.value and "<unk>" in w.value for w in at.warning)
    assert translation(at) and len(figures(at)) == 3
    assert any("Not a sentence of the toy language" in c.value for c in at.caption)


def test_two_hundred_characters_are_cut_to_what_the_model_reads():
    at = open_translate(src="我有一只猫" * 40)
    assert any("has 200 characters; the translator reads at most 64" in w.value for w in at.warning)
    assert translation(at) and len(figures(at)) == 3
    slider(at, "step").set_value(slider(at, "step").max).run()
    assert not at.exception


def test_a_bad_step_in_the_link_is_ignored_with_a_notice():
    at = open_translate(step="99")
    assert slider(at, "step").value == 0
    assert any("step=99" in w.value for w in at.warning)


def test_moving_the_step_layer_or_head_never_runs_the_model_again():
    at = open_translate(src="明天老师在公园看见三只小鸟吗")
    decoded = memory.COMPUTED["forward"]
    for t in range(1, 4):
        slider(at, "step").set_value(t).run()
        slider(at, "layer").set_value(t % 2).run()
        slider(at, "head").set_value(t).run()
        {b.label: b for b in at.button}["Next"].click().run()
    assert not at.exception and memory.COMPUTED["forward"] == decoded
    at.segmented_control(key="decode").set_value("beam").run()  # a new way of choosing: decoded once more
    assert memory.COMPUTED["forward"] == decoded + 1


@pytest.mark.parametrize("temperature", ["0.5", "1", "2.5"])
def test_temperature_divides_the_scores_and_its_formula_is_beside_its_slider(translator, temperature):
    """softmax(z / T): T > 1 flatter, T < 1 sharper, T = 1 the model's own distribution (issue 20, point 5)."""
    at = open_translate(decode="sample", temperature=temperature)
    T = float(temperature)
    with torch.inference_mode():
        z = generate(translator, source_ids(translator, "我有一只猫"), record=True).logits[0, 0]
    expected = torch.softmax(z / T, -1).topk(10).values.numpy()
    bars = figures(at)[2]["data"][0]
    shown = plotly_array(bars["customdata"])[::-1]  # before any cut: the tempered distribution, most likely first
    np.testing.assert_allclose(shown, expected, atol=1e-5)
    model = torch.softmax(z, -1).max().item()
    assert shown[0] < model - 0.01 if T > 1 else shown[0] > model + 0.01 if T < 1 else shown[0] == pytest.approx(model)
    (column,) = [c for c in at.columns if any(s.key == "temperature" for s in c.slider)]
    assert [m.value.strip("$\n") for m in column.latex] == [r"p_i = \frac{e^{z_i / T}}{\sum_j e^{z_j / T}}"]
