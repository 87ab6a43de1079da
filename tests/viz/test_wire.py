"""Big maps on the wire (viz.wire): small maps stay float32, big ones go as exact ten-thousandths with their gaps."""
import base64
import io

import numpy as np
from PIL import Image

from viz import wire
from viz.attention import heatmap_spec
from viz.masks import difference_heatmap
from viz.matrix import matrix_heatmap

TOKENS = [f"t{i}" for i in range(300)]  # 90,000 cells: over wire.EXACT_CELLS


def probabilities(T: int) -> np.ndarray:
    p = np.random.default_rng(0).random((T, T), dtype=np.float32) ** 8
    return p / p.sum(-1, keepdims=True)


def test_small_maps_stay_float32_with_their_exact_hover():
    heat = heatmap_spec(probabilities(30), TOKENS[:30], TOKENS[:30]).to_dict()["data"][0]
    assert heat["z"]["dtype"] == "f4" and "p = %{z:.4f}" in heat["hovertemplate"]
    assert (heat["zmin"], heat["zmax"]) == (0.0, 1.0)


def test_big_maps_go_as_the_four_decimals_the_hover_shows():
    p = probabilities(300)
    heat = heatmap_spec(p, TOKENS, TOKENS).to_dict()["data"][0]
    assert heat["z"]["dtype"] == "u2"
    z = np.frombuffer(base64.b64decode(heat["z"]["bdata"]), np.uint16).reshape(300, 300)
    np.testing.assert_array_equal(z, np.rint(p.astype(np.float64) * 10_000))  # the value, to 4 decimals
    assert "p = %{z:d} / 10000" in heat["hovertemplate"] and "query: %{y}" in heat["hovertemplate"]
    assert (heat["zmin"], heat["zmax"]) == (0, 10_000)  # the fixed 0..1 range, in ten-thousandths
    assert heat["colorbar"]["tickvals"][-1] == 10_000 and heat["colorbar"]["ticktext"] == ["0", "0.25", "0.5",
                                                                                           "0.75", "1"]
    assert len(heat["z"]["bdata"]) == 300 * 300 * 2 * 4 // 3  # base64 of two bytes a cell: half of float32


def test_a_whole_row_on_one_key_reads_1():
    p = np.zeros((300, 300), dtype=np.float32)
    p[:, 0] = 1.0
    assert wire.to_units(p, signed=False)[5, 0] == 10_000


def test_auto_range_of_a_big_map_is_labelled_in_probabilities():
    p = probabilities(300)
    heat = heatmap_spec(p, TOKENS, TOKENS, auto_range=True).to_dict()["data"][0]
    assert heat["zmin"] == float(p.min()) * 10_000 and heat["zmax"] == float(p.max()) * 10_000
    assert float(heat["colorbar"]["ticktext"][-1]) == float(f"{p.max():.4g}")


def test_blocked_cells_of_a_big_map_are_covered_by_a_gap_image():
    p = np.tril(probabilities(300))
    p[np.triu_indices(300, 1)] = np.nan  # causal: keys after the query blocked
    spec = heatmap_spec(p, TOKENS, TOKENS).to_dict()
    (image,) = spec["layout"]["images"]
    png = Image.open(io.BytesIO(base64.b64decode(image["source"].split(",", 1)[1])))
    alpha = np.asarray(png.convert("RGBA"))[..., 3]  # (300, 300)
    np.testing.assert_array_equal(alpha == 255, np.isnan(p))  # opaque exactly where blocked
    assert (image["x"], image["y"], image["sizex"], image["sizey"]) == (-0.5, -0.5, 300, 300)
    assert len(image["source"]) < 10_000
    assert "images" not in heatmap_spec(probabilities(300), TOKENS, TOKENS).to_dict()["layout"]


def test_big_differences_go_as_signed_ten_thousandths():
    diff = probabilities(300) - probabilities(300).T
    heat = difference_heatmap(diff, TOKENS, TOKENS).data[0]
    assert np.asarray(heat.z).dtype == np.int16 and "Δp = %{z:+d} / 10000" in heat.hovertemplate
    np.testing.assert_array_equal(np.asarray(heat.z), np.rint(diff.astype(np.float64) * 10_000))
    assert heat.zmin == -heat.zmax


def test_a_step_panel_chooses_its_own_limit():
    p = probabilities(64)[:, :40]
    exact = matrix_heatmap(p, TOKENS[:64], TOKENS[:40], kind="probability").data[0]
    coarse = matrix_heatmap(p, TOKENS[:64], TOKENS[:40], kind="probability", exact_cells=64 * 32).data[0]
    assert np.asarray(exact.z).dtype == np.float32 and np.asarray(coarse.z).dtype == np.uint16
    signed = matrix_heatmap(p, TOKENS[:64], None, exact_cells=1).data[0]
    assert np.asarray(signed.z).dtype == np.float32  # only probabilities are quantized
