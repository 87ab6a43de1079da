"""The special tokens switch (?special=) on the heatmap and all-heads pages: hidden by the model's own ids, rows as
computed or renormalised (and the page says which), the download is the map shown."""
import csv
import io

import numpy as np
import pytest
from apptest_harness import charts, open_page

from views import downloads
from views.special_tokens import Shown
from viz import wire

TEXT = "the cat sat on the mat"


def attentions(text: str = TEXT):
    from views import models, runs

    return runs.compute_run(models.Choice("minilm"), text).attentions


def test_hiding_drops_rows_and_columns_and_renormalising_rescales_rows():
    maps = np.array([[[[0.5, 0.3, 0.2], [0.6, 0.1, 0.3], [0.2, 0.2, 0.6]]]], dtype=np.float32)
    keep = np.array([False, True, True])
    np.testing.assert_allclose(Shown(keep, False).maps(maps)[0, 0], [[0.1, 0.3], [0.2, 0.6]])
    np.testing.assert_allclose(Shown(keep, True).maps(maps)[0, 0], [[0.25, 0.75], [0.25, 0.75]])
    np.testing.assert_allclose(Shown(np.ones(3, dtype=bool), True).maps(maps), maps)


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
