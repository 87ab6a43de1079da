"""Big maps on the wire (viz.wire): a figure keeps its values; a big map is marked to travel as exact ten-thousandths,
which the browser divides back, blocked cells included."""
import numpy as np

from viz import wire
from viz.attention import heatmap_spec
from viz.masks import masked_difference_spec
from viz.matrix import matrix_spec

TOKENS = [f"t{i}" for i in range(300)]  # 90,000 cells: over wire.EXACT_CELLS


def probabilities(T: int) -> np.ndarray:
    p = np.random.default_rng(0).random((T, T), dtype=np.float32) ** 8
    return p / p.sum(-1, keepdims=True)


def test_small_maps_are_not_marked():
    heat = heatmap_spec(probabilities(30), TOKENS[:30], TOKENS[:30]).to_dict()["data"][0]
    assert heat["z"]["dtype"] == "f4" and "p = %{z:.4f}" in heat["hovertemplate"] and "meta" not in heat
    assert (heat["zmin"], heat["zmax"]) == (0.0, 1.0)


def test_a_big_map_keeps_its_values_hover_and_range_and_is_marked_for_the_wire():
    heat = heatmap_spec(probabilities(300), TOKENS, TOKENS).to_dict()["data"][0]
    assert heat["z"]["dtype"] == "f4" and heat["meta"] == {"z_units": "u2"}
    assert "p = %{z:.4f}" in heat["hovertemplate"] and "query: %{y}" in heat["hovertemplate"]
    assert (heat["zmin"], heat["zmax"]) == (0.0, 1.0) and "tickvals" not in heat["colorbar"]
    auto = heatmap_spec(probabilities(300), TOKENS, TOKENS, auto_range=True).to_dict()["data"][0]
    assert "zmin" not in auto and "zmax" not in auto  # plotly's own range, of the values the browser divided back


def test_units_are_the_four_decimals_the_hover_shows():
    p = probabilities(300)
    sent = wire.units_array(p)
    assert sent["dtype"] == "u2" and len(sent["bdata"]) == 300 * 300 * 2 and sent["shape"] == "300,300"
    units = np.frombuffer(sent["bdata"], np.uint16).reshape(300, 300)
    np.testing.assert_array_equal(units, np.rint(p.astype(np.float64) * 10_000))
    back = wire.from_units(sent)
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, (units / 10_000).astype(np.float32))
    assert np.abs(back - p).max() <= 0.5e-4 + 1e-7  # and float32
    assert [f"{v:.4f}" for v in back[7, :50]] == [f"{v:.4f}" for v in np.rint(p[7, :50] * 10_000) / 10_000]


def test_a_whole_row_on_one_key_reads_1():
    p = np.zeros((300, 300), dtype=np.float32)
    p[:, 0] = 1.0
    assert wire.to_units(p, signed=False)[5, 0] == 10_000 and wire.from_units(wire.units_array(p))[5, 0] == 1.0


def test_blocked_cells_travel_as_a_value_no_probability_takes_and_come_back_as_gaps():
    p = np.tril(probabilities(300))
    p[np.triu_indices(300, 1)] = np.nan  # causal: keys after the query blocked
    sent = wire.units_array(p)
    units = np.frombuffer(sent["bdata"], np.uint16).reshape(300, 300)
    assert (units[np.isnan(p)] == sent["nan"]).all() and (units[~np.isnan(p)] <= 10_000).all()
    np.testing.assert_array_equal(np.isnan(wire.from_units(sent)), np.isnan(p))
    spec = heatmap_spec(p, TOKENS, TOKENS).to_dict()
    assert "images" not in spec["layout"] and spec["data"][0]["hoverongaps"] is False


def test_big_differences_are_signed_ten_thousandths():
    diff = probabilities(300) - probabilities(300).T
    diff[0, 0] = np.nan
    heat = masked_difference_spec(diff, TOKENS, TOKENS).figure().data[0]
    assert np.asarray(heat.z).dtype == np.float32 and heat.meta == {"z_units": "i2"}
    assert "Δp = %{z:+.4f}" in heat.hovertemplate and heat.zmin == -heat.zmax
    sent = wire.units_array(diff, signed=True)
    assert sent["dtype"] == "i2" and np.frombuffer(sent["bdata"], np.int16)[0] == sent["nan"]
    back = wire.from_units(sent)
    assert np.isnan(back[0, 0]) and np.nanmax(np.abs(back - diff)) <= 0.5e-4 + 1e-7


def test_a_step_panel_chooses_its_own_limit():
    p = probabilities(64)[:, :40]
    exact = matrix_spec(p, TOKENS[:64], TOKENS[:40], kind="probability").figure().data[0]
    coarse = matrix_spec(p, TOKENS[:64], TOKENS[:40], kind="probability", exact_cells=64 * 32).figure().data[0]
    assert exact.meta is None and coarse.meta == {"z_units": "u2"}
    assert np.asarray(coarse.z).dtype == np.float32 and "%{z:.4f}" in coarse.hovertemplate
    signed = matrix_spec(p, TOKENS[:64], None, exact_cells=1).figure().data[0]
    assert signed.meta is None  # only probabilities travel as ten-thousandths: scores have no bound
