"""SmolLM2-135M-Instruct, the package's LLM, in every model picker (?model=smollm2), in Streamlit's AppTest: each page
runs it at its default text (where layer 13 head 8 sends `it` to `animal`) and at 512 tokens, where its maps are read
a layer at a time (30 x 9 x 512^2 float32 would be 283 MB) and every page's charts stay within the page's megabyte.
Slow: the model loads in ~1 s, a page at 512 tokens takes seconds."""
import csv
import html
import io

import numpy as np
import pytest

from harness import apptest
from harness.apptest import charts, figures, plotly_array
from harness.texts import sentence
from model.kinds import SourceKey
from runtime import models, runs
from runtime.layer_maps import LayerMaps
from views.shell.registry import MODEL, PAGES

pytestmark = pytest.mark.slow

KEY = SourceKey.SMOLLM2
PICKER_PAGES = [spec.path for spec in PAGES if MODEL in spec.needs]
LONG = sentence(600)  # more than a page reads


def opened(path: str, **params):
    at = apptest.open_page(path, model=KEY, **params)
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return at


def test_it_is_in_the_picker_with_what_it_is():
    at = opened("heatmap")
    picker = at.selectbox(key="model")
    assert picker.value == KEY and "SmolLM2-135M-Instruct" in picker.format_func(KEY)


def test_its_heatmap_opens_where_it_looks_at_the_animal():
    at = opened("heatmap")
    assert apptest.slider_value(at, "layer") == 13 and apptest.slider_value(at, "head") == 8
    figure = figures(at)[0]
    tokens = [html.unescape(x).rstrip("\u200b\u200c").strip() for x in figure["data"][0]["x"]]
    z = np.nan_to_num(plotly_array(figure["data"][0]["z"]), nan=0.0)
    row = z[tokens.index("it")].copy()
    row[0] = 0  # the first token, where every head parks what it does not need (the sink)
    assert tokens[int(row.argmax())] == "animal" and row[tokens.index("animal")] > 0.3


@pytest.mark.parametrize("path", PICKER_PAGES)
def test_every_page_runs_it_at_512_tokens_within_a_megabyte(path):
    at = opened(path, text=LONG, sents=LONG, layer="29", head="8")
    assert charts(at) or at.metric
    sent = sum(c.size for c in charts(at)) + sum(len(d.proto.SerializeToString()) for d in at.dataframe)
    assert sent <= 1_000_000, (path, sent)
    run = runs.shared_run(models.Choice(KEY), LONG)
    assert len(run.tokens) == 512 and isinstance(run.attentions, LayerMaps)
    said = any("a page reads at most 512" in w.value for w in at.warning)
    assert said or path in ("positional", "architecture"), path  # the pages that read no text of it


@pytest.mark.parametrize("path, params", [(p, {}) for p in PICKER_PAGES] + [
    ("language-model", {"part": part, "prompt": "The capital of France is"}) for part in ("next", "induction", "lens")])
def test_every_download_of_its_pages_opens(path, params, offered):
    """Every file a page offers on SmolLM2, built as a click builds it and read back: a .npz without pickles, a CSV
    with its byte order mark and rows; a trace's arrays of its shapes (9 heads of 64 dimensions, d_model 576)."""
    opened(path, **params)
    assert offered or path == "softmax" or params.get("part") == "induction", path  # the two that offer no file
    for label, (name, build) in offered.items():
        data = build()
        if name.endswith(".npz"):
            arrays = np.load(io.BytesIO(data), allow_pickle=False)
            assert all(arrays[k].size >= 0 for k in arrays.files) and arrays.files, (path, label)
            if "layer0_probs" in arrays.files:
                t = len(arrays["tokens"])
                assert arrays["layer0_probs"].shape == (9, t, t) and arrays["layer0_q"].shape == (9, t, 64)
                assert arrays["layer29_output"].shape == (t, 576)
                np.testing.assert_allclose(arrays["layer0_probs"].sum(-1), 1, atol=1e-5)
        else:
            assert name.endswith(".csv") and data.startswith(b"\xef\xbb\xbf"), (path, label)
            rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
            assert len(rows) >= 2 and len({len(r) for r in rows}) == 1, (path, label)


def test_its_induction_heads_over_probes_beside_the_toy_gpt():
    at = opened("language-model", part="induction")
    grids = {f["layout"]["title"]["text"].split(":")[0]: plotly_array(f["data"][0]["z"]) for f in figures(at)
             if f["layout"]["title"]["text"].startswith(("Previous-token score", "Induction score"))}
    assert {k: v.shape for k, v in grids.items()} == {"Previous-token score": (30, 9), "Induction score": (30, 9)}
    layer, head = np.unravel_index(grids["Induction score"].argmax(), (30, 9))
    (said,) = [m.value for m in at.markdown if m.value.startswith("Copy accuracy **")]
    assert f"Strongest induction heads: layer {layer} · head {head}" in said
    ours, toy = (d.value for d in at.dataframe[-2:])
    accuracy = [float(a.rstrip("%")) for a in ours["copy accuracy"]]
    assert list(ours["switched off"][:2]) == ["none: the whole model", "the strongest induction head"]
    assert accuracy[4] < accuracy[0] / 4 and accuracy[4] < accuracy[-1]  # 10 induction heads off, against 5 at random
    assert toy["copy accuracy"][0] == "100%" and any(m.value.startswith("**Beside the toy GPT** (2 layers × 4 heads")
                                                     for m in at.markdown)
