"""A Llama checkpoint in the pages, in Streamlit's AppTest: a tiny chat Llama (converted from a GGUF written in the
test: RoPE, RMSNorm, SwiGLU, 4 query heads over 2 key/value heads) named by the operator (ATTNVIZ_MODEL_DIRS) is
listed, and every page with a model picker runs it; its heatmap is its causal attention; the positional page shows
its rotation (RoPE) where a learned table would be; its facts say what it is."""
import html
import io

import numpy as np
import pytest
import torch
import transformers

from harness import apptest
from harness.apptest import charts, figures, plotly_array
from model.llama import Llama
from model.llama.gguf import convert
from model.positional import sinusoidal_table
from tests.model.llama.gguf_files import hf_llama, write_gguf
from views.shell.registry import MODEL, PAGES

KEY = "dir:tiny-llama"
TEXT = "the cat sat on the mat"
PICKER_PAGES = [spec.path for spec in PAGES if MODEL in spec.needs] + ["language-model"]


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    folder = tmp_path_factory.mktemp("llama")
    convert(write_gguf(hf_llama(), folder / "tiny.gguf"), folder / "tiny-llama")
    return folder / "tiny-llama"


@pytest.fixture(autouse=True)
def listed(directory, monkeypatch):
    from runtime import models  # noqa: PLC0415 - the list is read again with the operator's directory

    monkeypatch.setenv("ATTNVIZ_MODEL_DIRS", str(directory))
    models.sources.clear()
    yield
    models.sources.clear()


@pytest.mark.parametrize("path", PICKER_PAGES)
def test_every_page_with_a_model_runs_a_llama_checkpoint(path):
    at = apptest.open_page(path, model=KEY, text=TEXT, prompt=TEXT)
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert charts(at) or at.metric


def test_the_heatmap_is_the_model_s_causal_attention_at_that_head(directory):
    at = apptest.open_page("heatmap", model=KEY, text=TEXT, layer="1", head="3")
    figure = figures(at)[0]
    z = np.nan_to_num(plotly_array(figure["data"][0]["z"]), nan=0.0)
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    ids = torch.tensor([tokenizer(TEXT)["input_ids"]])
    with torch.inference_mode():
        want = Llama.from_pretrained(directory)(ids).attentions[1][0, 3].numpy()
    np.testing.assert_allclose(z, want, atol=5e-5 + 1e-7)  # the chart sends 4 decimals
    assert np.all(np.triu(z, 1) == 0)
    labels = [html.unescape(x).rstrip("\u200b\u200c") for x in figure["data"][0]["x"]]
    assert "".join(labels) == TEXT  # byte-level BPE tokens shown as the text they are (model.causal.reading)


def test_the_positional_page_shows_its_rotation_not_a_learned_table():
    for lang, says in (("en", "RoPE rotates each head's query and key"), ("zh", "RoPE")):
        at = apptest.open_page("positional", title=None if lang == "en" else "位置编码", model=KEY, lang=lang,
                               pe_n="64")
        assert not at.exception
        assert any(says in c.value for c in at.caption), [c.value for c in at.caption]
    rotary = [f for f in figures(at) if "RoPE" in f["layout"]["title"]["text"]]
    assert len(rotary) == 3  # the table, every pair of positions compared, then RoPE's own part (random q and k)
    table = plotly_array(rotary[0]["data"][0]["z"])
    want = sinusoidal_table(64, 16, 100000.0).numpy()  # head_dim 16, rope_theta 100000
    np.testing.assert_allclose(table, want[:table.shape[0], :table.shape[1]], atol=5e-5 + 1e-7)


def test_its_facts_say_what_it_is(directory):
    facts = Llama.from_pretrained(directory).facts
    assert (facts.heads, facts.key_value_heads, facts.head_dim, facts.positional) == (4, 2, 16, "rotary")
    assert facts.summary() == ("2 layers, 4 heads over 2 key/value heads, d_model 64, d_ff 96, SwiGLU, "
                               "Pre-RMSNorm, rotary positions (RoPE)")


def test_the_step_by_step_page_writes_llama_s_own_formulas():
    at = apptest.open_page("steps", model=KEY, text=TEXT, layer="1", head="3")
    assert not at.exception
    formulas = " ".join(e.value for e in at.latex)
    assert r"Q = \mathrm{RoPE}(\mathrm{RMSNorm}(X)\,W_Q^{(3)})" in formulas
    assert r"V = \mathrm{RMSNorm}(X)\,W_V^{(1)}" in formulas  # query head 3 reads key/value head 1
    assert r"W_{\text{gate}}" in formulas and "b_Q" not in formulas and "b_O" not in formulas
    assert r"\mathrm{LN}" not in formulas
    said = " ".join(c.value for c in at.caption) + " ".join(i.value for i in at.info)
    assert "shared by query heads 2–3" in said and "Pre-RMSNorm" in said and "RMSNorm(Z)" in said


def test_the_lens_rollout_and_masks_pages_name_its_parts():
    at = apptest.open_page("language-model", model=KEY, prompt=TEXT, part="lens")
    assert not at.exception
    assert any(r"\mathrm{RMSNorm}" in e.value for e in at.latex)
    assert any("W_out: its output matrix" in c.value for c in at.caption)
    at = apptest.open_page("rollout", model=KEY, text=TEXT)
    assert any("RoPE adds no position vector" in c.value for c in at.caption)
    at = apptest.open_page("masks", model=KEY, text=TEXT, mask="none")
    assert any("causal mask is always on" in i.value for i in at.info)


def test_the_atlas_gives_each_head_its_sink_score(directory):
    at = apptest.open_page("atlas", model=KEY, text=TEXT)
    table = at.dataframe[0].value
    assert len(table) == 2 * 4
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    ids = torch.tensor([tokenizer(TEXT)["input_ids"]])
    with torch.inference_mode():
        maps = Llama.from_pretrained(directory)(ids).attentions
    for layer, head in ((0, 1), (1, 3)):
        row = table[(table["layer"] == layer) & (table["head"] == head)].iloc[0]
        assert row["first"] == pytest.approx(float(maps[layer][0, head, 1:, 0].mean()), abs=1e-4)


def test_the_steps_page_shows_swiglu_s_gate_and_up(offered):
    at = apptest.open_page("steps", model=KEY, text=TEXT)
    assert not at.exception
    npz = next(build() for label, (name, build) in offered.items() if name.endswith(".npz"))
    arrays = np.load(io.BytesIO(npz), allow_pickle=False)
    gate, up, hidden = (next(arrays[k] for k in arrays.files if k.startswith(f"11. {start}"))
                        for start in ("gate (before SILU)", "up", "hidden"))
    np.testing.assert_allclose(hidden, gate / (1 + np.exp(-gate)) * up, rtol=1e-4, atol=1e-6)
