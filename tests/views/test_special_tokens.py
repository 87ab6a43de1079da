"""The special tokens switch (?special=) on the heatmap, all-heads, line view, compare and encoder-decoder pages: hidden
by the model's own ids, rows as computed or renormalised (and the page says which), the download is the map shown."""
import csv
import io

import numpy as np
import pytest

from harness.apptest import charts, figures, open_page, plotly_array
from runtime import models, runs
from views.widgets import downloads
from views.widgets.special_tokens import Shown
from viz import wire

TEXT = "the cat sat on the mat"


def attentions(text: str = TEXT):
    return runs.compute_run(models.Choice("minilm"), text).attentions


def test_hiding_drops_rows_and_columns_and_renormalising_rescales_rows():
    maps = np.array([[[[0.5, 0.3, 0.2], [0.6, 0.1, 0.3], [0.2, 0.2, 0.6]]]], dtype=np.float32)
    keep = np.array([False, True, True])
    np.testing.assert_allclose(Shown(keep, False).maps(maps)[0, 0], [[0.1, 0.3], [0.2, 0.6]])
    np.testing.assert_allclose(Shown(keep, True).maps(maps)[0, 0], [[0.25, 0.75], [0.25, 0.75]])
    np.testing.assert_allclose(Shown(np.ones(3, dtype=bool), True).maps(maps), maps)


@pytest.mark.parametrize("renormalise", [False, True])
def test_one_causal_row_is_what_the_whole_map_shows_of_it(renormalise):
    rng = np.random.default_rng(0)
    z = rng.random((2, 3, 6, 6)).astype(np.float32)
    z[..., np.triu_indices(6, 1)[0], np.triu_indices(6, 1)[1]] = np.nan  # causal: later keys blocked
    z /= np.nansum(z, axis=-1, keepdims=True)
    keep = np.array([False, True, True, False, True, True])
    shown = Shown(keep, renormalise)
    for row in (4, 5):  # rows the page draws (kept): up to the query itself
        at = int(keep[:row].sum())
        whole = shown.maps(z)[:, :, at, :int(keep[:row + 1].sum())]
        np.testing.assert_allclose(shown.key_rows(z[:, :, row, :row + 1]), whole, rtol=1e-6)


@pytest.mark.parametrize("mode", ["hide", "renorm"])
def test_the_heatmap_hides_cls_and_sep(mode, offered):
    at = open_page("heatmap", text=TEXT, special=mode)
    assert not at.exception
    (chart,) = charts(at)
    stack = wire.from_units(chart.sliders["stack"])  # (layers, heads, 6, 6): [CLS] and [SEP] gone
    inner = attentions()[:, :, 1:-1, 1:-1]
    expected = inner / inner.sum(-1, keepdims=True) if mode == "renorm" else inner
    np.testing.assert_allclose(stack, expected, atol=0.5 / wire.UNITS)
    assert chart.figure["data"][0]["y"][0] == "the" and len(chart.figure["data"][0]["y"]) == 6
    said = [c.value for c in at.caption if c.value.startswith("Hidden:")]
    assert len(said) == 1 and ("renormalised" in said[0]) == (mode == "renorm")
    rows = list(csv.reader(io.StringIO(offered["Download this map (CSV)"][1]().decode("utf-8")
                                       .removeprefix(downloads.BOM))))
    assert rows[0][1] == "0:the" and len(rows) == 7


def test_all_heads_draws_the_maps_without_them():
    at = open_page("all-heads", text=TEXT, special="hide")
    assert not at.exception
    assert any(c.value.startswith("6 tokens") for c in at.caption)
    assert any(c.value.startswith("Hidden:") for c in at.caption)


@pytest.mark.parametrize("mode", ["hide", "renorm"])
def test_the_line_view_draws_the_lines_among_the_tokens_shown(mode, offered):
    at = open_page("lines", text=TEXT, layer="2", lines_heads="0,5", special=mode, query="0")
    assert not at.exception
    lines, heat = (c.figure for c in charts(at))
    assert lines["layout"]["title"]["text"] == "Layer 2: 2 heads, query 0: the selected"  # [CLS] is not a query
    assert list(lines["data"][-1]["text"]) == ["the", "cat", "sat", "on", "the", "mat"]  # the keys column
    inner = attentions()[2][:, 1:-1, 1:-1]
    expected = inner / inner.sum(-1, keepdims=True) if mode == "renorm" else inner
    np.testing.assert_allclose(plotly_array(heat["data"][0]["z"]), expected[[0, 5]].mean(0), atol=1e-6)
    assert any(c.value.startswith("Hidden:") for c in at.caption)
    rows = list(csv.DictReader(io.StringIO(offered["Download the lines (CSV)"][1]().decode("utf-8")
                                           .removeprefix(downloads.BOM))))
    assert {r["query_token"] for r in rows} <= {"the", "cat", "sat", "on", "mat"}
    for r in rows:
        assert float(r["weight"]) == pytest.approx(expected[int(r["head"]), int(r["query"]), int(r["key"])],
                                                   abs=1e-6)


def test_compare_hides_them_in_both_sentences_before_aligning():
    second = "the big dog sat on the mat"
    at = open_page("compare", text=TEXT, text2=second, layer="2", head="4", special="renorm", query="2")
    assert not at.exception
    a, b, diff, _row = (c.figure for c in charts(at))
    inner_a, inner_b = attentions()[2, 4, 1:-1, 1:-1], attentions(second)[2, 4, 1:-1, 1:-1]
    inner_a, inner_b = inner_a / inner_a.sum(-1, keepdims=True), inner_b / inner_b.sum(-1, keepdims=True)
    np.testing.assert_allclose(plotly_array(a["data"][0]["z"]), inner_a, atol=1e-6)
    np.testing.assert_allclose(plotly_array(b["data"][0]["z"]), inner_b, atol=1e-6)
    assert a["data"][0]["y"][0] == "the" and len(diff["data"][0]["y"]) == 5  # the sat on the mat, matched
    assert [f["layout"]["shapes"][0]["y0"] + 0.5 for f in (a, b)] == [2, 3]  # "sat": after "big dog" in B
    assert any(c.value.startswith("Hidden:") and "renormalised" in c.value for c in at.caption)


def test_the_random_encoder_decoder_hides_cls_and_sep_on_both_sides_and_keeps_the_causal_gaps():
    at = open_page("encoder-decoder", model="random", src="Hello students", tgt="Bonjour", special="renorm")
    assert not at.exception
    full = open_page("encoder-decoder", model="random", src="Hello students", tgt="Bonjour")
    decoder, cross, encoder = (f["data"][0] for f in figures(at))
    decoder_all, cross_all, _encoder_all = (f["data"][0] for f in figures(full))
    assert cross["x"] == encoder["x"] == ["hello", "students"] and "[CLS]" not in decoder["y"]
    assert len(decoder["y"]) == len(decoder_all["y"]) - 2
    inner = plotly_array(cross_all["z"])[1:-1, 1:-1]
    np.testing.assert_allclose(plotly_array(cross["z"]), inner / inner.sum(-1, keepdims=True), atol=1e-6)
    masked = plotly_array(decoder["z"])
    n = masked.shape[0]
    assert np.isnan(masked[np.triu_indices(n, 1)]).all()  # the later tokens are still gaps, not zeros
    np.testing.assert_allclose(np.nansum(masked, -1), 1, atol=1e-6)
    assert any(c.value.startswith("Hidden:") and "[CLS]" in c.value and "[SEP]" in c.value for c in at.caption)


def test_the_translator_hides_bos_from_its_target():
    at = open_page("encoder-decoder", src="我有一只猫", special="hide")
    assert not at.exception
    decoder, cross, encoder = (f["data"][0] for f in figures(at))
    assert decoder["y"][0] != "<bos>" and "<bos>" not in cross["y"] and cross["x"] == encoder["x"]
    assert len(cross["x"]) == 5  # the source has no special token: every character stays
    said = [c.value for c in at.caption if c.value.startswith("Hidden:")]
    assert len(said) == 1 and "<bos>" in said[0] and "left for the tokens shown" in said[0]
