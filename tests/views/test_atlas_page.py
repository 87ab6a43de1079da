"""The head atlas (/atlas) in AppTest: one row per head with the measurements of model.analysis.head_stats on the run's
own maps, thumbnails, links to the heatmap at that head, the special tokens' shares, the downloads."""
import base64
import csv
import io
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from harness.apptest import charts, open_page
from model.analysis.head_stats import head_properties
from runtime import models, runs
from views.widgets import downloads

TEXT = "the cat sat on the mat"


def run_of(text: str, model: str = "minilm"):
    return runs.compute_run(models.Choice(model), text)


def test_every_head_is_a_row_with_its_measurements_thumbnail_and_link(offered):
    at = open_page("atlas", text=TEXT)
    assert not at.exception
    table = at.dataframe[0].value
    run = run_of(TEXT)
    assert len(table) == run.num_layers * run.num_heads == 72
    special = np.isin(run.ids, [run.special_tokens.cls[1], run.special_tokens.sep[1]])
    expected = head_properties(run.attentions, run.ids, special)
    row = table[(table["layer"] == 3) & (table["head"] == 7)].iloc[0]
    for name, values in expected.items():
        assert row[name] == pytest.approx(values[3, 7], abs=1e-4), name
    assert np.isfinite(table["same"]).all()  # "the" occurs twice: a number in every row, not empty
    png = base64.b64decode(row["map"].removeprefix("data:image/png;base64,"))
    assert png.startswith(b"\x89PNG")
    link = urlsplit(row["link"])
    query = {k: v[0] for k, v in parse_qs(link.query).items()}
    assert link.path == "./" and (query["layer"], query["head"], query["mean"]) == ("3", "7", "0")
    assert query["text"] == TEXT and query["model"] == "minilm"


def test_special_token_shares_and_downloads(offered):
    at = open_page("atlas", text=TEXT)
    grid, shares = charts(at)
    run = run_of(TEXT)
    z = grid.figure["data"][0]["z"]  # the map opens on entropy
    entropy = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(6, 12)
    p = run.attentions.astype(np.float64)
    np.testing.assert_allclose(entropy, -(p * np.log(p)).sum(-1).mean(-1), rtol=1e-5)
    names = [t["text"] for t in shares.figure["layout"]["annotations"]]
    assert names == ["[CLS]", "[SEP]"]
    sep = run.attentions[..., -1].mean(-1)  # (layers, heads): the mean over queries of the [SEP] column
    z = shares.figure["data"][1]["z"]
    got = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(sep.shape)
    np.testing.assert_allclose(got, sep, atol=1e-6)
    name, build = offered["Download the table (CSV)"]
    text = build().decode("utf-8")
    assert name.endswith(".csv") and text.startswith(downloads.BOM)
    rows = list(csv.DictReader(io.StringIO(text.removeprefix(downloads.BOM))))
    assert len(rows) == 72 and float(rows[0]["share_[SEP]"]) == pytest.approx(sep[0, 0], abs=1e-6)
    name, build = offered["Download the measurements (NumPy .npz)"]
    arrays = np.load(io.BytesIO(build()), allow_pickle=False)
    np.testing.assert_allclose(arrays["share_[SEP]"], sep, atol=1e-6)
    assert arrays["tokens"].tolist() == list(run.tokens) and arrays["entropy"].shape == (6, 12)


def test_the_map_shows_the_measurement_the_link_asks_for():
    at = open_page("atlas", text=TEXT, prop="previous")
    grid = charts(at)[0].figure
    assert grid["layout"]["title"]["text"] == "Previous token: every head of every layer"
    assert grid["data"][0]["zmax"] == 1.0


def test_random_models_and_the_translator_have_an_atlas():
    at = open_page("atlas", model="random", text="a b c")
    assert not at.exception and len(at.dataframe[0].value) > 0
    at = open_page("atlas", model="translator", src="我有一只猫")
    assert not at.exception
    table = at.dataframe[0].value
    assert len(table) > 0 and table["entropy"].notna().all()


def test_links_too_heavy_for_the_page_leave_the_text_out(monkeypatch):
    """270 heads x a 3 KB text would be 810 KB of links: past LINKS_BYTES they leave the texts out (any setting longer
    than SHORT_VALUE), and say so."""
    from views.pages import atlas  # noqa: PLC0415 - the page module, as AppTest runs it

    monkeypatch.setattr(atlas, "LINKS_BYTES", 1000)
    at = open_page("atlas", text="the cat sat on the mat, and the dog that had chased it all morning slept by the door")
    assert not at.exception
    assert any("the links leave the text out" in c.value for c in at.caption)
    links = at.dataframe[0].value["link"]
    assert len(links) == 72 and not any("text=" in link for link in links)
    assert all("head=" in link and "model=minilm" in link for link in links)
