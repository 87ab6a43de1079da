"""Files a class can open: every CSV starts with a UTF-8 byte order mark (Excel then reads Chinese tokens), and every
download and chart image is named by page, model, layer and head (views/widgets/file_names.py)."""
import csv
import io

import numpy as np
import pytest

import locales
from harness.apptest import charts, open_page
from views.charts.payload import unpacked
from views.widgets import downloads, file_names

BOM = b"\xef\xbb\xbf"


@pytest.fixture
def named(monkeypatch):
    """{name a page gave: the file's name} of the downloads the pages offer."""
    given = file_names.given
    names = {}

    def recording(file_name):
        names[file_name] = given(file_name)
        return names[file_name]

    monkeypatch.setattr(file_names, "given", recording)
    return names


@pytest.mark.parametrize("lang, header", [("en", "query \\ key"), ("zh", "查询 \\ 键")])
def test_a_csv_starts_with_a_byte_order_mark_and_reads_back_with_its_chinese_tokens(lang, header):
    tokens = ["[CLS]", "我", "有", "=1+1", "猫,狗", "[SEP]"]
    probs = np.random.default_rng(0).dirichlet(np.ones(6), size=6).astype(np.float32)
    with locales.use(lang):
        data = downloads.head_csv(probs, tokens)
    assert data.startswith(BOM) and not data[3:].startswith(BOM)
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows[0] == [header] + [f"{j}:{t}" for j, t in enumerate(tokens)]
    assert [row[0] for row in rows[1:]] == [f"{i}:{t}" for i, t in enumerate(tokens)]
    np.testing.assert_allclose([[float(x) for x in row[1:]] for row in rows[1:]], probs, rtol=1e-7)


def test_the_heatmaps_files_say_page_model_layer_and_head(named):
    at = open_page("heatmap", text="Hello students", layer="3", head="7")
    assert not at.exception
    assert named["attention_layer3_head7.csv"] == "heatmap_all-MiniLM-L6-v2_attention_layer3_head7.csv"
    assert named["attention_trace.npz"] == "heatmap_all-MiniLM-L6-v2_attention_trace.npz"
    (chart,) = charts(at)
    assert chart.config["toImageButtonOptions"]["filename"] == "heatmap_all-MiniLM-L6-v2_layer3_head7"
    # the chart's own sliders fill the layer and head in, in the browser (heads.js), as they do the title
    template = unpacked(chart.payload)["config"]["toImageButtonOptions"]["filename"]
    assert template == "heatmap_all-MiniLM-L6-v2_layer{layer}_head{head}"


def test_a_random_models_files_say_its_size_and_the_mean_says_mean(named):
    at = open_page("heatmap", text="Hello students", model="random", d_model="64", heads="2", layers="2",
                   layer="1", mean="1")
    assert not at.exception
    assert named["attention_layer1_mean.csv"] == "heatmap_random-d64-h2-l2_attention_layer1_mean.csv"
    assert charts(at)[0].config["toImageButtonOptions"]["filename"] == "heatmap_random-d64-h2-l2_layer1_mean"


def test_a_page_without_a_layer_names_none():
    at = open_page("positional", model="random", positional="sinusoidal", layer="3", head="2")
    assert not at.exception
    names = {c.config["toImageButtonOptions"]["filename"] for c in charts(at)}
    assert names and all(n.startswith("positional_random-d128-h4-l2") and "layer" not in n for n in names), names


def test_names_are_ascii_safe_and_bounded(monkeypatch):
    assert file_names.model_name("dir:my model/ü 猫") == "my model/ü 猫".rsplit("/", 1)[-1]
    assert file_names.safe("ü 猫 \"x\"/..\\y") == "x-y"
    state = {}
    monkeypatch.setattr(file_names.st, "session_state", state)
    file_names.state.set_page("heatmap")
    file_names.new_page()
    file_names.set_model("dir:" + "猫" * 10 + "bert base")
    name = file_names.given("attention_" + "x" * 300 + ".csv")
    assert name.startswith("heatmap_bert-base_attention_xxx") and name.endswith(".csv")
    assert len(name) == file_names.MAX_CHARS and name.isascii()
    assert file_names.given("../../etc/passwd") == "heatmap_bert-base_etc-passwd"
    assert file_names.given("map.c s v") == "heatmap_bert-base_map-c-s-v"
