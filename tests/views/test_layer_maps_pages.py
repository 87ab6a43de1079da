"""Every page that draws a run's attention draws the same when the run's maps are read a layer at a time
(runtime.layer_maps: SmolLM2 past 176 tokens, MiniLM past 340) as when they are kept whole: the same figures, the
same downloads, and no page ever asks for the whole stack at once (np.asarray of such maps raises)."""
import io

import numpy as np
import pytest

from harness import apptest
from harness.apptest import figures
from runtime import models, runs
from runtime.layer_maps import LayerMaps
from runtime.memory import budget
from views.shell.registry import MODEL, PAGES
from views.widgets import downloads

LONG = ("The lecturer wrote a long sentence on the board so that every head of every layer had something to "
        "attend to, and the students compared the maps of the first layer with those of the last one, then read "
        "the rows of each head again to see which words took the most of every query's attention.")  # 60 tokens:
# past what a chart preloads, so both draw through the server
SWITCH = ("heatmap", "all-heads", "lines", "compare", "atlas")  # the pages with the special tokens switch
CASES = [(spec.path, {}) for spec in PAGES if MODEL in spec.needs] + [
    (path, {"special": mode}) for path in SWITCH for mode in ("hide", "renorm")] + [
    ("heatmap", {"mean": "1", "layer": "5"})]


def drawn(path: str, offered: dict, **params) -> tuple[list, dict]:
    at = apptest.open_page(path, model="minilm", text=LONG, **params)
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    files = {label: build() for label, (_name, build) in offered.items()}
    offered.clear()
    return figures(at), files


@pytest.mark.parametrize(("path", "settings"), CASES,
                         ids=[f"{p}-{','.join(f'{k}={v}' for k, v in s.items()) or 'plain'}" for p, s in CASES])
def test_a_page_of_maps_read_a_layer_at_a_time_is_the_page_of_whole_maps(path, settings, offered, monkeypatch):
    budget().clear()
    whole = drawn(path, offered, **settings)
    assert len(runs.shared_run(models.Choice("minilm"), LONG).tokens) >= 50
    budget().clear()
    monkeypatch.setattr(runs, "WHOLE_MAPS_BYTES", 0)
    lazy = drawn(path, offered, **settings)
    assert isinstance(runs.shared_run(models.Choice("minilm"), LONG).attentions, LayerMaps)
    assert lazy[0] == whole[0]
    assert lazy[1].keys() == whole[1].keys() and all(lazy[1][k] == whole[1][k] for k in whole[1]), path


@pytest.mark.parametrize(("path", "label", "name"), [
    ("heatmap", "Download layer 3's trace (NumPy .npz)", "attention_trace_layer3.npz"),
    ("all-heads", "Download layer 3's trace (NumPy .npz)", "attention_trace_layer3.npz"),
    ("masks", "Download layer 3's masked trace (NumPy .npz)", "masked_trace_causal_layer3.npz")])
def test_past_its_bound_the_trace_offered_is_the_layer_shown(path, label, name, offered, monkeypatch):
    """SmolLM2's whole trace at 512 tokens would be 900 MB: past WHOLE_TRACE_BYTES a page offers its layer's."""
    monkeypatch.setattr(downloads, "WHOLE_TRACE_BYTES", 0)
    at = apptest.open_page(path, model="minilm", text=LONG, layer="3", head="2", mask="causal")
    assert not at.exception
    assert offered[label][0] == name and not any("whole" in k for k in offered)
    arrays = np.load(io.BytesIO(offered[label][1]()))
    assert {k for k in arrays if k.startswith("layer")} == {
        f"layer3_{n}" for n in ("q", "k", "v", "scores", "probs", "context", "output")}
    assert "embeddings_output" in arrays and list(arrays["tokens"]) == list(runs.shared_run(
        models.Choice("minilm"), LONG).tokens)
    mask = runs.Mask("causal") if path == "masks" else runs.Mask()
    want = runs.compute_run(models.Choice("minilm"), LONG, mask).attentions[3]
    assert np.array_equal(arrays["layer3_probs"], want)
