"""The positional-encoding page in Streamlit's AppTest: formula, learned positions, URL state, bad input."""
import csv
import io
import json
import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from harness import apptest
from harness.apptest import plotly_array
from runtime import models

ROPE_CHARTS = 4  # after the sinusoidal table's: views.pages.rotary
LABELS = ["d_model (width of the table)", "Number of positions", "First dimension shown", "Last dimension shown"]


def open_positional(**params) -> AppTest:
    return apptest.open_page("positional", **params)


array = plotly_array


def figures(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def pe(pos: int, dim: int, d: int, base: float) -> float:
    angle = pos / base ** ((dim - dim % 2) / d)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


def test_default_shows_sinusoidal_and_minilm_learned_positions():
    at = open_positional()
    assert not at.exception
    assert [s.label for s in at.slider] == LABELS
    assert at.segmented_control[0].value == 10000
    table, learned, curves, sim, learned_sim = figures(at)[:5]  # then RoPE's four
    z = array(table["data"][0]["z"])
    assert z.shape == (128, 128)
    assert z[5, 2] == pytest.approx(pe(5, 2, 128, 10000), abs=1e-6)
    assert array(learned["data"][0]["z"]).shape == (128, 128)  # the same dimensions 0..127 of MiniLM's 384
    assert [t["name"].split(":")[0] for t in curves["data"]] == ["dim 0", "dim 1", "dim 16", "dim 32"]
    s = array(sim["data"][0]["z"])
    np.testing.assert_allclose(s, z @ z.T, atol=1e-4)  # all 128 dimensions are shown by default
    assert array(learned_sim["data"][0]["z"]).shape == (128, 128)


def test_learned_positions_are_the_models_weights():
    at = open_positional(pe_d="384", pe_n="20", pe_from="0", pe_to="383")
    weight = models.loaded_model(models.Choice("minilm")).model.embeddings.position_embeddings.weight
    np.testing.assert_allclose(array(figures(at)[1]["data"][0]["z"]), weight[:20].detach().numpy(), atol=1e-6)


def test_url_state_sets_the_table_and_is_written_back():
    at = open_positional(pe_d="64", pe_n="50", pe_base="100", pe_from="4", pe_to="9", pe_dims="2,3")
    assert not at.exception
    assert [s.value for s in at.slider] == [64, 50, 4, 9]
    table = figures(at)[0]["data"][0]
    assert list(array(table["x"])) == list(range(4, 10)) and list(array(table["y"])) == list(range(50))
    assert array(table["z"])[7, 1] == pytest.approx(pe(7, 5, 64, 100), abs=1e-6)
    assert len(figures(at)[2]["data"]) == 2
    at.slider[0].set_value(33).run()
    assert not at.exception
    assert at.query_params["pe_d"] in ("33", ["33"])


def test_dimensions_given_backwards_are_swapped():
    at = open_positional(pe_from="20", pe_to="3")
    assert any("showing 3..20" in i.value for i in at.info)
    assert list(array(figures(at)[0]["data"][0]["x"])) == list(range(3, 21))


def test_the_biggest_table_is_thinned_to_stay_light():
    at = open_positional(pe_d="1024", pe_n="2048", pe_dims=",".join(map(str, range(20))))
    assert not at.exception
    sizes = [len(c.proto.spec) for c in at.get("plotly_chart")]
    assert sum(sizes) < 3_000_000 and max(sizes) < 800_000
    assert any("plotting the first 16" in i.value for i in at.info)
    assert any("Every 5th position and dimension" in c.value for c in at.caption)


def test_cosine_similarity_has_ones_on_the_diagonal():
    at = open_positional(pe_sim="cosine", pe_n="40")
    sim = array(figures(at)[3]["data"][0]["z"])
    np.testing.assert_allclose(np.diag(sim), 1.0, atol=1e-5)


def test_random_sinusoidal_model_has_no_learned_table():
    at = open_positional(model="random")
    assert not at.exception
    assert any("adds the sinusoidal table itself" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 3 + ROPE_CHARTS


def test_random_model_with_learned_positions_shows_them():
    at = open_positional(model="random", positional="learned", d_model="64")
    assert not at.exception
    assert len(at.get("plotly_chart")) == 5 + ROPE_CHARTS
    assert array(figures(at)[1]["data"][0]["z"]).shape == (128, 64)


def test_no_dimension_chosen_asks_for_some():
    at = open_positional(pe_dims="")
    assert not at.exception
    assert any("Pick dimensions" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 4 + ROPE_CHARTS


def test_the_whole_sinusoidal_table_downloads_as_csv(offered):
    """Every position and dimension, also those the thinned chart leaves out."""
    at = open_positional(pe_d="64", pe_n="300", pe_base="100")
    assert not at.exception
    name, build = offered["Download the sinusoidal table (CSV)"]
    assert name == "sinusoidal_table_d64_base100.csv"
    rows = list(csv.reader(io.StringIO(build().decode("utf-8-sig"))))
    assert rows[0] == ["position", *(f"dim {i}" for i in range(64))] and len(rows) == 301
    assert float(rows[1 + 250][1 + 7]) == pytest.approx(pe(250, 7, 64, 100), abs=1e-7)


def test_rope_follows_the_sinusoidal_table_with_the_pages_own_d_and_base():
    at = open_positional(pe_d="32", pe_base="100", pe_n="40")
    assert not at.exception and at.header[-1].value == "RoPE: rotate q and k instead of adding a vector"
    rotation, frequencies, rotated, added = figures(at)[-4:]
    thetas = array(frequencies["data"][0]["y"])
    np.testing.assert_allclose(thetas, [100 ** (-2 * i / 32) for i in range(16)], rtol=1e-6)
    pair0 = rotation["data"][0]
    np.testing.assert_allclose(array(pair0["x"])[:3], np.cos([0, 1, 2]), atol=1e-6)  # pair 0 turns 1 radian a position
    r, a = array(rotated["data"][0]["z"]), array(added["data"][0]["z"])
    assert r.shape == a.shape == (40, 40)
    assert max(np.ptp(np.diagonal(r, k)) for k in range(-39, 40)) < 1e-4  # the distance alone
    assert max(np.ptp(np.diagonal(a, k)) for k in range(-39, 40)) > 1.0
