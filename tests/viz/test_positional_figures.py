"""Positional-encoding figures against the formula, with plain arrays."""
import math

import numpy as np
import pytest

from model.positional import sinusoidal_table
from viz.positional import (
    MAX_CELLS,
    curves_figure,
    dimension_name,
    robust_limit,
    similarity,
    similarity_heatmap,
    stride_for,
    table_heatmap,
)


def pe(pos: int, dim: int, d: int, base: float = 10000.0) -> float:
    """The paper's formula, one cell at a time."""
    angle = pos / base ** ((dim - dim % 2) / d)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


@pytest.mark.parametrize("d, base", [(16, 10000.0), (7, 100.0)])
def test_table_heatmap_holds_the_formula(d, base):
    table = sinusoidal_table(40, d, base).numpy()
    heat = table_heatmap(table, np.arange(40), np.arange(d)).figure().data[0]
    z = np.asarray(heat.z)
    assert z.dtype == np.float32 and z.shape == (40, d)
    for pos, dim in [(0, 0), (0, 1), (1, 0), (3, 1), (17, d - 1), (39, d - 2), (25, 4)]:
        assert z[pos, dim] == pytest.approx(pe(pos, dim, d, base), abs=1e-6)
    assert (heat.zmin, heat.zmax) == (-1.0, 1.0)
    assert "position" in heat.hovertemplate and "dimension" in heat.hovertemplate


def test_table_heatmap_axes_are_the_real_numbers_of_a_slice():
    table = sinusoidal_table(100, 64).numpy()
    s = 3
    heat = table_heatmap(table[::s, 10:31:s], np.arange(0, 100, s), np.arange(10, 31, s)).figure().data[0]
    assert list(heat.y[:3]) == [0, 3, 6] and list(heat.x[:3]) == [10, 13, 16]
    assert np.asarray(heat.z)[2, 1] == pytest.approx(pe(6, 13, 64), abs=1e-6)


def test_learned_table_range_is_symmetric_at_the_largest_value():
    heat = table_heatmap(np.array([[0.5, -2.0]]), [0], [0, 1], limit=None).figure().data[0]
    assert (heat.zmin, heat.zmax) == (-2.0, 2.0)


def test_table_heatmap_rejects_mismatched_axes():
    with pytest.raises(ValueError, match="does not fit"):
        table_heatmap(np.zeros((3, 4)), np.arange(3), np.arange(5))


def test_similarity_is_pe_times_pe_transposed():
    table = sinusoidal_table(30, 24).numpy()
    heat = similarity_heatmap(table, np.arange(30)).figure().data[0]
    np.testing.assert_allclose(np.asarray(heat.z), table @ table.T, atol=1e-5)
    assert heat.zmin == -heat.zmax and heat.zmax == pytest.approx(12.0, abs=1e-4)  # |PE(p)|^2 = d/2


def test_sinusoidal_similarity_depends_only_on_the_distance():
    sim = similarity(sinusoidal_table(50, 32).numpy())  # (50, 50)
    for offset in (0, 1, 7, -5):
        diagonal = np.diagonal(sim, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-4)


def test_cosine_similarity_has_ones_on_the_diagonal_and_a_fixed_range():
    table = np.random.default_rng(0).normal(size=(6, 5))
    heat = similarity_heatmap(table, np.arange(6), cosine=True).figure().data[0]
    z = np.asarray(heat.z)
    np.testing.assert_allclose(np.diag(z), 1.0, atol=1e-6)
    norms = np.linalg.norm(table, axis=1)
    np.testing.assert_allclose(z, (table @ table.T) / np.outer(norms, norms), atol=1e-6)
    assert (heat.zmin, heat.zmax) == (-1.0, 1.0)
    assert np.all(np.isfinite(similarity(np.zeros((2, 3)), cosine=True)))  # a zero vector does not give NaN


def test_stride_keeps_heatmaps_under_the_cell_budget_and_is_smallest():
    for rows, cols in [(2048, 1024), (2048, 2048), (512, 384), (100, 100), (1, 1)]:
        s = stride_for(rows, cols)
        assert math.ceil(rows / s) * math.ceil(cols / s) <= MAX_CELLS
        assert s == 1 or math.ceil(rows / (s - 1)) * math.ceil(cols / (s - 1)) > MAX_CELLS


def test_the_biggest_table_sends_well_under_a_megabyte():
    table = sinusoidal_table(2048, 1024).numpy()
    s = stride_for(*table.shape)
    fig = table_heatmap(table[::s, ::s], np.arange(0, 2048, s), np.arange(0, 1024, s)).figure()
    assert len(fig.to_json()) < 1_000_000


def test_curves_follow_sin_for_even_and_cos_for_odd_dimensions():
    d, base = 32, 10000.0
    table = sinusoidal_table(64, d, base).numpy()
    fig = curves_figure(table, [0, 1, 6], d, base).figure()
    assert len(fig.data) == 3
    for trace, dim in zip(fig.data, [0, 1, 6]):
        assert list(trace.x) == list(range(64))
        for pos in (0, 5, 63):
            assert trace.y[pos] == pytest.approx(pe(pos, dim, d, base), abs=1e-6)
    assert "sin" in fig.data[0].name and "cos" in fig.data[1].name


def test_dimension_name_gives_the_wavelength():
    assert dimension_name(0, 128, 10000) == f"dim 0: sin, wavelength {2 * math.pi:.3g}"
    assert dimension_name(65, 128, 10000) == f"dim 65: cos, wavelength {2 * math.pi * 100:.3g}"


def test_robust_limit_ignores_a_few_outliers():
    values = np.concatenate([np.linspace(-0.1, 0.1, 999), [50.0]])
    assert robust_limit(values) == pytest.approx(0.1, abs=0.01)
    assert robust_limit(np.zeros(3)) > 0  # never an empty colour range


def test_similarity_heatmap_takes_a_given_colour_limit():
    heat = similarity_heatmap(np.eye(3) * 4, np.arange(3), limit=2.0).figure().data[0]
    assert (heat.zmin, heat.zmax) == (-2.0, 2.0)
    assert np.asarray(heat.z)[0, 0] == 16.0  # values are not clipped, only the colours saturate
