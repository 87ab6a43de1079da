"""The From 2017 to today page in AppTest, on SmolLM2: RoPE keeps a pair's score where the added table does not, on
the model's own vectors; the norms of a real residual; the key/value cache of four configurations. Slow: SmolLM2
loads in ~1 s and a pair's scores take a few passes."""
import numpy as np
import pytest
import torch

from harness import apptest
from harness.apptest import figures, plotly_array
from model.analysis.modern import attention_input, shifted_scores
from model.llama.smollm2 import load, packaged
from views.pages.modern import SHIFTS, shifted_csv

pytestmark = pytest.mark.slow


def opened(**params):
    at = apptest.open_page("modern", **params)
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return at


def test_rope_keeps_its_own_score_along_the_text_and_the_added_table_does_not():
    at = opened()
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
