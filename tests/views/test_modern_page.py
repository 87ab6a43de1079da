"""The From 2017 to today page in AppTest, on SmolLM2: RoPE keeps a pair's score where the added table does not, on
the model's own vectors; the norms of a real residual; the key/value cache of four configurations. Slow: SmolLM2
loads in ~1 s and a pair's scores take a few passes."""
import base64
import re

import numpy as np
import pytest
import torch

from harness import apptest
from harness.apptest import figures, plotly_array
from model.analysis.modern import architectures, attention_input, gates_of, shifted_scores
from model.llama.smollm2 import load, packaged
from views.pages.modern import SHIFTS, UNITS, gates_csv, shifted_csv
from views.pages.modern_blocks import costs_csv

pytestmark = pytest.mark.slow


def opened(**params):
    at = apptest.open_page("modern", **params)
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return at


def test_rope_keeps_its_own_score_along_the_text_and_the_added_table_does_not():
    at = opened(part="positions")
    (chart,) = figures(at)
    added, rotated = (plotly_array(t["y"]) for t in chart["data"])
    assert len(rotated) == 256 and np.ptp(rotated) < 1e-4 < 10 < np.ptp(added)
    model, tokenizer = load(packaged())
    ids = torch.tensor(tokenizer("The animal didn't cross the street because it was too tired.")["input_ids"])
    with torch.inference_mode():
        own = model(ids[None], record=True, until=13).trace.layers[13].self_attn.scores[0, 8, 8, 1]
    assert abs(float(rotated[0]) - float(own)) < 1e-4  # `it` (8) looking at `animal` (1), layer 13 head 8
    (said,) = [m.value for m in at.markdown if m.value.startswith("SmolLM2's own query")]
    assert f"**{float(own):.4f}**" in said
    assert [d.proto.label for d in at.get("download_button")] == ["Download the scores (CSV)"]
    s = shifted_scores(model, ids, 13, 8, 8, 1, SHIFTS)  # what the button builds its file from, on click
    rows = shifted_csv(s).decode("utf-8-sig").splitlines()
    assert rows[0] == "shift,rope_score,added_score" and len(rows) == 1 + SHIFTS
    assert abs(float(rows[1].split(",")[1]) - float(own)) < 1e-4


def test_the_norms_are_of_the_models_own_residual():
    at = opened(part="norm", layer="5", query="3")
    x, layer_norm, rms = (plotly_array(t["y"]) for t in figures(at)[0]["data"])
    model, tokenizer = load(packaged())
    ids = torch.tensor(tokenizer("The animal didn't cross the street because it was too tired.")["input_ids"])
    with torch.inference_mode():
        h = attention_input(model, ids, 5)[3]  # the block's own RMSNorm of what the first 5 layers wrote
        gain = model.blocks[5].norm1.weight.detach()
    np.testing.assert_allclose(rms * gain[:64].numpy(), h[:64].numpy(), rtol=1e-3, atol=1e-4)
    assert abs(float(np.mean(layer_norm))) < 0.2 and x.shape == (64,)


def test_the_cache_of_four_configurations():
    at = opened(part="attention")
    table = at.dataframe[0].value
    assert list(table["model"]) == ["all-MiniLM-L6-v2", "GPT-2 small", "SmolLM2-135M", "Llama-3-8B"]
    assert list(table["key/value heads"]) == [12, 12, 3, 8] and list(table["query heads"]) == [12, 12, 9, 32]
    assert table["at 8,192 tokens"][2] == "180 MB" and table["full multi-head at 8,192 tokens"][2] == "540 MB"
    assert table["at 8,192 tokens"][3] == "1,024 MB"


def test_the_three_blocks_are_drawn_from_their_configs_and_downloadable():
    at = opened()  # the page opens on the blocks: no weight read
    images = [h.proto.body for h in at.get("html") if "data:image/svg+xml;base64," in h.proto.body]
    assert len(images) == 3
    drawn = [base64.b64decode(re.search(r"base64,([A-Za-z0-9+/=]+)", body).group(1)).decode() for body in images]
    assert "Multi-head attention" in drawn[0] and "ReLU, 64 → 256 → 64" in drawn[0]
    assert "Masked multi-head attention" in drawn[1] and "GELU, 768 → 3,072 → 768" in drawn[1]
    assert "9 query, 3 key/value heads" in drawn[2] and "576 → 2 × 1,536 → 576" in drawn[2]
    assert [d.proto.label for d in at.get("download_button")] == ["Download the diagrams (SVG)"]
    zh = apptest.open_page("modern", "从 2017 到今天", lang="zh")
    assert "分组查询注意力" in base64.b64decode(re.search(r"base64,([A-Za-z0-9+/=]+)", [
        h.proto.body for h in zh.get("html") if "svg+xml" in h.proto.body][2]).group(1)).decode()


def test_swiglus_gates_are_the_models_own_on_the_text():
    at = opened(part="ffn", layer="13")
    activations, gates = figures(at)
    shares = plotly_array(activations["data"][0]["y"])
    assert abs(float(shares.sum()) - 100) < 1e-3
    model, tokenizer = load(packaged())
    ids = torch.tensor(tokenizer("The animal didn't cross the street because it was too tired.")["input_ids"])
    with torch.inference_mode():
        g = gates_of(model, ids, 13)
    (said,) = [m.value for m in at.markdown if m.value.startswith("In layer 13")]
    assert f"**{g.shares()['below_zero']:.0%}**" in said
    units = g.strongest(UNITS)
    heat = gates["data"][0]
    assert [int(u) for u in heat["x"]] == list(units) and len(heat["y"]) == len(ids)
    np.testing.assert_allclose(plotly_array(heat["z"]).reshape(len(ids), -1), g.opened[:, units], rtol=1e-5)
    assert [d.proto.label for d in at.get("download_button")] == ["Download the gates (CSV)"]
    rows = gates_csv(g, tokenizer.convert_ids_to_tokens(ids.tolist())).decode("utf-8-sig").splitlines()
    assert len(rows) == 1 + len(ids) * g.gate.shape[1] and rows[0].startswith("position,token,unit,gate")


def test_the_costs_of_four_blocks_and_their_whole_models():
    at = opened(part="costs")
    table = at.dataframe[0].value
    assert list(table["model"]) == ["all-MiniLM-L6-v2", "GPT-2 small", "SmolLM2-135M", "Llama-3-8B"]
    assert list(table["whole model"]) == ["22.7M", "124M", "135M", "8.03G"]
    params, flops = figures(at)
    assert [t["name"] for t in params["data"]] == ["attention", "feed-forward", "norms"]
    short = opened(part="costs", context="512").dataframe[0].value
    assert list(short["scores' share"]) < list(table["scores' share"])  # fewer keys, a smaller share
    model, _ = load(packaged())
    shapes = architectures()
    rows = costs_csv(shapes, 2048).decode("utf-8-sig").splitlines()
    smol = rows[1 + [a.name for a in shapes].index("SmolLM2-135M")].split(",")
    assert int(smol[8]) == sum(p.numel() for p in model.parameters()) == 134_515_008


def test_the_gates_heatmap_shows_hostile_text_escaped():
    at = opened(part="ffn", mtext="<b>bold</b> & <script>x</script>")
    (_, gates) = figures(at)
    labels = gates["data"][0]["y"]
    assert not [label for label in labels if "<" in label] and any("&lt;" in label for label in labels)
