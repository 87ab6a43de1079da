"""The rollout page (/rollout) in AppTest: the rollout map, the query's rollout and flow, the saliency, all equal to
model.analysis.rollout on the run's own maps and model; the downloads; the flow's limit said in the page."""
import base64
import csv
import io

import numpy as np
import pytest
import torch

from harness.apptest import charts, open_page
from model.analysis.rollout import flow_row, rollout, saliency
from runtime import models, runs
from runtime.models import loaded_model
from views.widgets import downloads

TEXT = "the cat sat on the mat"


def array(value) -> np.ndarray:
    """A plotly value as numpy (a typed array, or a list)."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value, dtype=np.float64)


def test_the_charts_are_the_models_numbers_and_the_files_hold_them(offered):
    at = open_page("rollout", text=TEXT, layer="3", query="2", target="token")
    assert not at.exception
    run = runs.compute_run(models.Choice("minilm"), TEXT)
    expected = rollout(run.attentions)[3]
    heat, bars, sal = charts(at)
    np.testing.assert_allclose(array(heat.figure["data"][0]["z"]).reshape(expected.shape), expected, atol=1e-6)
    assert heat.figure["layout"]["title"]["text"] == "Attention rollout through layers 0..3"
    np.testing.assert_allclose(array(bars.figure["data"][0]["y"]), expected[2], atol=1e-6)
    np.testing.assert_allclose(array(bars.figure["data"][1]["y"]), flow_row(run.attentions, 2, 3), atol=1e-6)

    with torch.inference_mode():
        signed, norm = saliency(loaded_model(models.Choice("minilm")).model, torch.tensor([run.ids]), "token", 2)
    np.testing.assert_allclose(array(sal.figure["data"][0]["y"]), signed, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(array(sal.figure["data"][1]["y"]), norm, rtol=1e-5, atol=1e-7)
    assert "the vector of cat after the last layer" in sal.figure["layout"]["title"]["text"]

    arrays = np.load(io.BytesIO(offered["Download the rollout, flow and saliency (NumPy .npz)"][1]()),
                     allow_pickle=False)
    np.testing.assert_allclose(arrays["rollout"], expected, atol=1e-6)
    assert int(arrays["layer"]) == 3 and int(arrays["query"]) == 2 and str(arrays["target"]) == "token"
    name, build = offered["Download the query's row and the saliency (CSV)"]
    text = build().decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text.removeprefix(downloads.BOM))))
    assert text.startswith(downloads.BOM) and name.endswith(".csv") and len(rows) == len(run.tokens)
    assert float(rows[1]["rollout"]) == pytest.approx(expected[2, 1], abs=1e-6) and rows[1]["flow"] != ""


def test_a_long_text_has_no_flow_and_says_why():
    at = open_page("rollout", text="word " * 60)
    assert not at.exception
    bars = charts(at)[1].figure
    assert len(bars["data"]) == 1  # the rollout row alone
    assert any("at most 48 tokens" in c.value and "this text has 62" in c.value for c in at.caption)


def test_the_translator_and_random_models_have_a_rollout():
    for params in ({"model": "translator", "src": "我有一只猫"}, {"model": "random", "text": "a b c"}):
        at = open_page("rollout", **params)
        assert not at.exception and len(charts(at)) == 3


@pytest.mark.parametrize("key", ["minilm", "gpt"])
def test_the_saliency_reads_the_runs_layer_inputs_for_a_plain_run_and_makes_its_own_pass_for_a_masked_one(
        monkeypatch, key):
    """A plain run (the model's own pass; a causal model's own mask only) gives saliency its layer inputs, which it
    would otherwise compute again; a run with a mask of the page's, or padding, does not: its inputs are not those."""
    from views.pages import rollout as page  # noqa: PLC0415 - the page module, to watch what it passes

    given = []
    monkeypatch.setattr(page, "on_model_thread", lambda fn, *args: given.append(args[-1]) or fn(*args))
    monkeypatch.setattr(page, "cached", lambda key, compute, *a, **k: compute())
    plain = runs.compute_run(models.Choice(key), TEXT)
    masked = runs.compute_run(models.Choice(key), TEXT, runs.Mask("padding", pad_to=12))
    assert plain.plain and not masked.plain
    signed, norm = page.saliency_of(plain, "sentence", 0)
    page.saliency_of(masked, "sentence", 0)
    assert given[0] is plain.hidden and given[1] is None
    with torch.inference_mode():
        own = saliency(loaded_model(models.Choice(key)).model, torch.tensor([plain.ids]), "sentence", 0)
    np.testing.assert_array_equal(signed, own[0])
    np.testing.assert_array_equal(norm, own[1])
