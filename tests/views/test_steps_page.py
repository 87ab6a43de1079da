"""The Step-by-step page in AppTest: every step drawn with its shape and formula, Pre-LN vs Post-LN, 512 tokens."""
import base64
import io

import numpy as np
from streamlit.testing.v1 import AppTest

from harness import apptest
from runtime import memory, models, runs

TEXT = "The cat sat on the mat"  # [CLS] the cat sat on the mat [SEP]: T = 8


def run(**params) -> AppTest:
    return apptest.open_page("steps", **params)


def specs(at) -> list[dict]:
    return apptest.figures(at)


def shapes(at) -> list[str]:
    return [m.value for m in at.markdown if "`(" in m.value]


def z_of(spec: dict) -> np.ndarray:
    z = spec["data"][0]["z"]
    shape = [int(n) for n in str(z["shape"]).split(",")]  # plotly writes "64, 512"
    return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape)


def test_layer_0_walks_from_embeddings_to_the_ffn():
    at = run(text=TEXT, layer="0", head="2")
    assert not at.exception
    assert at.title[0].value == "Step by step"
    labels = shapes(at)
    # 5 embeddings, Q K V, 3 T x T (no mask: S' is step 4's), AV, concat, W_O, 2, 2, 2
    assert len(apptest.charts(at)) == len(labels) == 20
    assert "**Q (head 2)** &nbsp; `(T, d_k) = (8, 32)`" in labels
    assert "**A** &nbsp; `(T, T) = (8, 8)`" in labels
    assert any("`(T, d_ff) = (8, 1536)`" in lab for lab in labels)
    assert any("Post-LN" in i.value for i in at.info)
    formulas = " ".join(lat.value for lat in at.latex)
    assert len(at.latex) == 12
    for piece in (r"E_{\text{pos}}", r"W_Q^{(2)}", r"Q K^\top", r"\sqrt{d_k}", r"\mathrm{softmax}", "A V",
                  r"\mathrm{Concat}", "W_O", r"\mathrm{LayerNorm}(X + \mathrm{MHA}(X))", r"\mathrm{FFN}"):
        assert piece in formulas, piece


def test_charts_hold_the_traced_numbers():
    at = run(text=TEXT, layer="1", head="3")
    assert not at.exception
    r = runs.run(models.Choice("minilm"), TEXT)
    a = r.attention(1)
    by_title = dict(zip([lab.split("**")[1] for lab in shapes(at)], specs(at)))
    np.testing.assert_allclose(z_of(by_title["Q (head 3)"]), a.q[0, 3].numpy(), rtol=1e-6)
    probs = by_title["A"]
    np.testing.assert_allclose(z_of(probs), a.probs[0, 3].numpy(), rtol=1e-6)
    assert (probs["data"][0]["zmin"], probs["data"][0]["zmax"]) == (0.0, 1.0)
    concat = by_title["concat"]
    assert concat["data"][0]["x"]["bdata"] and concat["layout"]["shapes"][0]["x0"] == 96 - 0.5  # head 3 of d_k 32
    signed = by_title["Q Kᵀ"]["data"][0]
    assert signed["zmin"] == -signed["zmax"]


def test_later_layer_starts_from_the_previous_output():
    at = run(text=TEXT, layer="4")
    assert not at.exception
    assert len(apptest.charts(at)) == 16
    assert any("X = Z_{3}" in lat.value for lat in at.latex)
    assert any("The output Z of layer 3." in c.value for c in at.caption)


def test_pre_ln_random_model_shows_the_norm_first():
    at = run(text=TEXT, model="random", norm="pre-LN", layers="2", layer="1")
    assert not at.exception
    assert any("Pre-LN" in i.value for i in at.info)
    names = [lab.split("**")[1] for lab in shapes(at)]
    assert names[:2] == ["X", "LN(X)"] and "LN(Y)" in names and "final LN(Z)" in names
    formulas = " ".join(lat.value for lat in at.latex)
    assert r"\mathrm{LN}(X)\,W_Q" in formulas and r"Y = X + \mathrm{MHA}(\mathrm{LN}(X))" in formulas
    assert r"\mathrm{LayerNorm}(X + " not in formulas


def test_post_ln_random_model_has_no_extra_norm_panels():
    at = run(text=TEXT, model="random", norm="post-LN", layers="2", layer="0")
    assert not at.exception
    names = [lab.split("**")[1] for lab in shapes(at)]
    assert "LN(X)" not in names and "LN(Y)" not in names
    assert names[:4] == ["token embedding", "position", "sum", "X"]  # no segment embedding outside BERT


def test_url_state_is_restored_and_written_back():
    at = run(text=TEXT, layer="2", head="5", dim0="100")
    assert not at.exception
    assert (at.slider(key="layer").value, at.slider(key="head").value, at.slider(key="dim0").value) == (2, 5, 100)
    assert any("dimensions 100–163 of 384" in c.value for c in at.caption)
    at.slider(key="head").set_value(6).run()
    assert apptest.link_value(at, "head") == "6" and apptest.link_value(at, "dim0") == "100"


def test_moving_layer_or_head_does_not_rerun_the_model():
    at = run(text="No forward pass on a slider move")
    before = dict(memory.COMPUTED)
    at.slider(key="layer").set_value(3).run()  # recomputes layer 3 alone, from its cached input
    at.slider(key="head").set_value(9).run()
    at.slider(key="layer").set_value(0).run()  # layer 0 was computed on arrival
    at.slider(key="layer").set_value(3).run()  # cached now
    assert not at.exception
    assert memory.COMPUTED["forward"] == before["forward"]
    assert memory.COMPUTED["layer"] == before["layer"] + 1
    at.text_area(key="text").set_value("Another sentence").run()
    assert memory.COMPUTED["forward"] == before["forward"] + 1


def test_512_tokens_show_a_window_and_stay_under_1_mb():
    at = run(text="word " * 600, row0="400", layer="0")
    assert not at.exception
    assert at.slider(key="row0").max == 512 - 64 and at.slider(key="row0").value == 400
    assert any("tokens 400–463 of 512" in c.value for c in at.caption)
    all_charts = apptest.charts(at)
    sizes = sum(c.size for c in all_charts)
    assert len(all_charts) == 20 and sizes < 970_000, sizes  # the page's other elements take about 30 KB
    probs = next(s for s, lab in zip(specs(at), shapes(at)) if lab.startswith("**A**"))
    assert z_of(probs).shape == (64, 512) and probs["data"][0]["y"][0] == "400: word"
    assert probs["data"][0]["meta"] == {"z_units": "u2"}  # sent as ten-thousandths (viz.wire), drawn as values


def test_every_matrix_downloads_whole_in_lecture_mode_too(offered):
    """The npz holds each step's matrices for every token and dimension (a chart shows a window of 64), also the
    steps lecture mode does not draw."""
    text = " ".join(["word"] * 80)  # 82 tokens: more rows than a chart shows
    drawn = None
    for lecture in ("0", "1"):
        at = run(text=text, layer="1", head="3", lecture=lecture)
        assert not at.exception
        drawn = drawn or len(apptest.charts(at))  # every matrix is a chart in normal mode
        name, build = offered["Download every matrix of these steps (NumPy .npz)"]
        assert name == "matrices_layer1_head3.npz"
        files = np.load(io.BytesIO(build()))
        a = runs.run(models.Choice("minilm"), text).attention(1)
        np.testing.assert_allclose(files["2. Q (head 3)"], a.q[0, 3].numpy(), rtol=1e-6)
        np.testing.assert_allclose(files["6. A"], a.probs[0, 3].numpy(), rtol=1e-6)
        assert files["11. FFN output"].shape == (82, 384) and len(files.files) == drawn == 16
