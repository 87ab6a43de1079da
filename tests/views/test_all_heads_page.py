"""The All heads page in Streamlit's AppTest: the mosaic, URL state, the link to the big view, bad input."""
import csv
import io
from urllib.parse import parse_qs

import numpy as np
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

import viz.mosaic
from harness import apptest
from harness.apptest import figures
from model.analysis.showcase import SHOWCASE
from runtime import memory, models, runs


def open_page(text: str = "Hello students", **params) -> AppTest:
    """A link to /all-heads?text=...&params opened in a fresh session."""
    return apptest.open_page("all-heads", text=text, **params)


def link_params(at: AppTest) -> dict[str, str]:
    (link,) = at.get("page_link")
    return {k: v[0] for k, v in parse_qs(link.proto.query_string).items()}


def test_default_page_shows_the_mosaic_a_preview_and_a_link():
    at = open_page()
    assert not at.exception
    mosaic, preview = figures(at)
    image = mosaic["data"][0]
    assert image["type"] == "image" and image["source"].startswith("data:image/png;base64,")
    assert mosaic["layout"]["yaxis"]["ticktext"] == [f"L{i}" for i in range(6)]  # all-MiniLM-L6-v2: 6 x 12
    assert mosaic["layout"]["xaxis"]["ticktext"] == [f"H{i}" for i in range(12)]
    assert preview["data"][0]["type"] == "heatmap"  # a short sentence: the real heatmap of the chosen head
    assert [s.label for s in at.slider] == ["Layer", "Head"]
    assert any("6 layers × 12 heads" in c.value and "KB" in c.value for c in at.caption)
    params = link_params(at)
    assert at.get("page_link")[0].proto.page_script_hash == calc_hash("heatmap")  # st.Page hashes its url_path
    layer, head = map(str, SHOWCASE["all-MiniLM-L6-v2"])  # the head a student sees first (model.analysis.showcase)
    assert (params["text"], params["model"]) == ("Hello students", "minilm")
    assert (params["layer"], params["head"]) == (layer, head)


def test_url_state_is_restored_and_the_link_follows_the_sliders():
    at = open_page(layer="3", head="7", pool="mean", tile="32", auto="1")
    assert not at.exception
    assert (at.slider[0].value, at.slider[1].value) == (3, 7)
    assert at.radio(key="pool").value == "mean" and at.radio(key="tile").value == 32 and at.toggle(key="auto").value
    assert figures(at)[0]["layout"]["shapes"][0]["type"] == "rect"  # the chosen tile is framed
    assert "Layer 3, head 7" in figures(at)[1]["layout"]["title"]["text"]
    assert (link_params(at)["layer"], link_params(at)["head"], link_params(at)["auto"]) == ("3", "7", "1")
    at.slider[1].set_value(2).run()
    assert link_params(at)["head"] == "2" and at.query_params["head"] in ("2", ["2"])
    assert "Open layer 3 head 2" in at.get("page_link")[0].value


def test_a_layer_or_head_change_runs_neither_the_model_nor_the_mosaic(monkeypatch):
    at = open_page("Counting the work done")
    calls = []
    monkeypatch.setattr(runs, "compute_run", lambda *a, **k: calls.append("model"))
    monkeypatch.setattr(viz.mosaic, "build_mosaic", lambda *a, **k: calls.append("mosaic"))
    at.slider[0].set_value(2).run()
    at.slider[1].set_value(5).run()
    assert not at.exception and calls == []
    assert "Layer 2, head 5" in figures(at)[1]["layout"]["title"]["text"]


def test_other_settings_draw_a_new_mosaic_once_and_back_reuses_the_first():
    at = open_page("Counting the mosaics drawn")
    drawn, first = memory.COMPUTED["image"], at.caption[1].value
    at.radio[1].set_value(32).run()
    assert not at.exception and memory.COMPUTED["image"] == drawn + 1
    assert at.caption[1].value != first and "each token cell is 4×4 px" in at.caption[1].value  # 7 tokens in 32 px
    at.radio[1].set_value(64).run()
    assert memory.COMPUTED["image"] == drawn + 1 and at.caption[1].value == first


def test_512_tokens_stay_light():
    at = open_page("word " * 600)
    assert not at.exception
    assert any("the rest was cut" in w.value for w in at.warning)
    assert any("512 tokens" in c.value and "8×8" in c.value for c in at.caption)
    mosaic, preview = apptest.charts(at)
    assert mosaic.size < 1_500_000
    assert preview.figure["data"][0]["type"] == "image"  # not 512 x 512 numbers
    assert preview.size < 300_000


def test_the_previewed_heads_numbers_download_as_csv(offered):
    at = open_page(layer="2", head="5")
    assert not at.exception
    name, build = offered["Download this map (CSV)"]
    assert name == "attention_layer2_head5.csv"
    rows = list(csv.reader(io.StringIO(build().decode("utf-8-sig"))))
    assert rows[0][1:] == ["0:[CLS]", "1:hello", "2:students", "3:[SEP]"]
    expected = runs.compute_run(models.Choice("minilm"), "Hello students").attentions[2, 5]
    np.testing.assert_allclose([[float(x) for x in row[1:]] for row in rows[1:]], expected, rtol=1e-6)
    assert offered["Download the whole trace (NumPy .npz)"][0] == "attention_trace.npz"
