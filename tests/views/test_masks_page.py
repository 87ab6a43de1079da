"""The masks page in Streamlit's AppTest: every mask kind, URL state, bad input."""

import numpy as np
from streamlit.testing.v1 import AppTest

from harness import apptest
from harness.apptest import plotly_array
from runtime import memory

T = 16  # tokens of the default sentence for all-MiniLM-L6-v2, [CLS] and [SEP] included


def open_masks(**params) -> AppTest:
    return apptest.open_page("masks", **params)


array = plotly_array


def charts(at: AppTest) -> list[dict]:
    return [figure["data"][0] for figure in apptest.figures(at)]


def test_default_is_a_causal_mask_with_three_charts():
    at = open_masks()
    assert not at.exception
    assert at.segmented_control[0].value == "causal"
    assert [s.label for s in at.slider] == ["Layer", "Head"]
    mask, attention, diff = charts(at)
    np.testing.assert_array_equal(array(mask["z"]), np.triu(np.ones((T, T)), 1))
    probs = array(attention["z"])
    assert np.isnan(probs[np.triu_indices(T, 1)]).all()  # blocked cells are gaps
    np.testing.assert_allclose(np.nansum(probs, axis=1), 1.0, atol=1e-5)
    assert -diff["zmin"] == diff["zmax"] > 0
    d = array(diff["z"])  # masked minus unmasked: blocked keys lose all their attention, the rest gain it
    assert (d[np.triu_indices(T, 1)] <= 0).all() and d[np.triu_indices(T, 1)].min() < -0.01
    np.testing.assert_allclose(d.sum(axis=1), 0.0, atol=1e-5)  # both rows sum to 1
    assert at.latex and any("-\\infty" in x.value for x in at.latex)


def test_padding_adds_pad_columns_and_changes_nothing_for_real_tokens():
    at = open_masks(mask="padding", pad_to="20", layer="3", head="2")
    assert not at.exception
    assert at.slider[0].label.startswith("Pad") and at.slider[0].value == 20
    assert (at.slider[0].min, at.slider[0].max) == (T, T + 32)
    mask, attention, diff = charts(at)
    blocked = array(mask["z"])
    assert blocked.shape == (20, 20) and blocked[:, T:].all() and not blocked[:, :T].any()
    assert mask["x"][-1].startswith("[PAD]")
    d = array(diff["z"])
    assert np.isnan(d[T:]).all() and np.isnan(d[:, T:]).all()
    assert np.nanmax(np.abs(d)) < 1e-5  # the mask hides the padding: real tokens attend as without it
    assert at.metric[0].value in ("0", "0.0") or float(at.metric[0].value) < 1e-5


def test_causal_plus_padding_merges_both():
    at = open_masks(mask="causal+padding", pad_to="18")
    blocked = array(charts(at)[0]["z"]).astype(bool)
    expected = np.triu(np.ones((18, 18), bool), 1)
    expected[:, T:] = True
    np.testing.assert_array_equal(blocked, expected)


def test_custom_blocks_the_chosen_keys_for_every_query():
    at = open_masks(mask="custom", blocked="1,3")
    assert not at.exception
    assert at.multiselect[0].value == [1, 3]
    assert at.multiselect[0].options[:2] == ["0: [CLS]", "1: the"]
    mask, attention, _ = charts(at)
    blocked = array(mask["z"]).astype(bool)
    assert blocked[:, [1, 3]].all() and blocked.sum() == 2 * T
    assert np.isnan(array(attention["z"])[:, [1, 3]]).all()


def test_blocking_every_key_says_the_rows_are_empty():
    at = open_masks(mask="custom", blocked=",".join(map(str, range(T))))
    assert not at.exception
    assert any("every key blocked" in w.value for w in at.warning)
    assert np.isnan(array(charts(at)[1]["z"])).all()


def test_no_mask_blocks_nothing_and_changes_nothing():
    at = open_masks(mask="none")
    mask, attention, diff = charts(at)
    assert not array(mask["z"]).any() and not np.isnan(array(attention["z"])).any()
    assert not np.abs(array(diff["z"])).any()


def test_url_state_is_restored_and_written_back():
    at = open_masks(mask="custom", blocked="2", layer="4", head="9", text="Masks hide keys")
    assert at.text_area[0].value == "Masks hide keys"
    assert [at.slider[0].value, at.slider[1].value] == [4, 9]
    at.segmented_control[0].set_value("causal").run()
    assert not at.exception and apptest.link_value(at, "mask") == "causal"
    assert array(charts(at)[0]["z"]).sum() == 5 * 4 / 2  # "[CLS] masks hide keys [SEP]": 5 tokens


def test_moving_layer_and_head_runs_no_forward_pass():
    at = open_masks(mask="causal")
    misses = memory.budget().misses
    at.slider[0].set_value(2).run()
    at.slider[1].set_value(5).run()
    assert not at.exception
    assert memory.budget().misses == misses


def test_long_text_shows_one_big_map_at_a_time():
    at = open_masks(text="word " * 300, mask="causal", mask_map="difference")
    assert not at.exception
    assert at.radio[0].value == "difference"
    assert len(apptest.charts(at)) == 1  # the difference only: not the mask, not the attention
    sizes = [c.size for c in apptest.charts(at)]
    assert sum(sizes) < 1_000_000


def test_random_model_masks_padding_with_minus_infinity():
    at = open_masks(model="random", mask="causal+padding", pad_to="20")
    assert not at.exception
    mask, attention, diff = charts(at)
    assert array(mask["z"]).shape == (20, 20) and array(mask["z"])[:, T:].all()
    np.testing.assert_allclose(np.nansum(array(attention["z"]), axis=1), 1.0, atol=1e-5)
