"""The colours a student must tell apart stay apart for colour-blind students: simulated protanopia, deuteranopia and
tritanopia (Machado, Oliveira and Fernandes 2009, severity 1, on linear RGB), compared in CIE L*a*b* (ΔE 1976); and
past the colours, categories differ in dash and shape too."""
import itertools

import numpy as np
import pytest

from viz.colours import CATEGORIES, DIVERGING, NEGATIVE, POSITIVE, SUMMARY, category
from viz.compare import difference_spec
from viz.embeddings import cosine_figure, map_figure, paths_figure
from viz.forcing import COLOURS
from viz.learning import head_scores
from viz.lines import lines_spec
from viz.masks import masked_difference_spec
from viz.matrix import matrix_spec
from viz.positional import similarity_heatmap, table_heatmap

DEFICIENCIES = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}
APART = 15  # ΔE76: clearly different colours side by side (2.3 is a just-noticeable difference)


def linear(colour: str) -> np.ndarray:
    srgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def lab(rgb: np.ndarray) -> np.ndarray:
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ np.clip(rgb, 0, 1)
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def seen(colour: str, deficiency: str | None = None) -> np.ndarray:
    rgb = linear(colour)
    return lab(rgb if deficiency is None else np.array(DEFICIENCIES[deficiency]) @ rgb)


def apart(a: str, b: str, deficiency: str | None) -> float:
    return float(np.linalg.norm(seen(a, deficiency) - seen(b, deficiency)))


@pytest.mark.parametrize("deficiency", [None, *DEFICIENCIES])
def test_a_positive_and_a_negative_value_of_the_same_size_look_different(deficiency):
    colours = [c for _, c in DIVERGING]
    for k in range(len(colours) // 2):  # stop k and its mirror, the same |value| on either side of 0
        assert apart(colours[k], colours[-1 - k], deficiency) >= APART, (k, deficiency)
    assert apart(NEGATIVE, POSITIVE, deficiency) >= APART


def test_the_scale_is_white_at_zero_and_darker_with_the_size_of_the_value():
    positions = [p for p, _ in DIVERGING]
    assert positions == sorted(positions) and positions[0] == 0 and positions[-1] == 1
    lightness = [seen(c)[0] for _, c in DIVERGING]
    middle = len(lightness) // 2
    assert positions[middle] == 0.5 and lightness[middle] > 95
    assert lightness[:middle + 1] == sorted(lightness[:middle + 1])  # lighter towards 0 from below
    assert lightness[middle:] == sorted(lightness[middle:], reverse=True)  # and darker away from it above
    blue, orange = seen(NEGATIVE), seen(POSITIVE)
    assert blue[2] < -30 and orange[1] > 10 and orange[2] > 30  # b* blue below 0; orange: a* and b* above


@pytest.mark.parametrize("deficiency", [None, *DEFICIENCIES])
def test_the_forcing_grids_right_wrong_and_own_words_look_different(deficiency):
    for a, b in itertools.combinations(COLOURS, 2):
        assert apart(a, b, deficiency) >= APART, (a, b, deficiency)


def test_every_signed_map_uses_the_diverging_scale():
    z = np.array([[0.5, -0.2], [0.1, 0.0]])
    figures = [difference_spec(z, ["a", "b"], ["a", "b"], "B − A").figure(),
               masked_difference_spec(z, ["a", "b"], ["a", "b"]).figure(), cosine_figure(z, ["one", "two"], "cos"),
               matrix_spec(z, ["a", "b"]).figure(), table_heatmap(z, [0, 1], [0, 1]).figure(),
               similarity_heatmap(z, [0, 1]).figure()]
    expected = [[p, c] for p, c in DIVERGING]
    for figure in figures:
        scale = [[p, c] for p, c in figure.data[0].colorscale]
        assert scale == expected, figure.layout.title.text


def contrast_on_white(colour: str) -> float:
    """WCAG 2's contrast ratio of the colour against white."""
    luminance = float(np.array([0.2126, 0.7152, 0.0722]) @ linear(colour))
    return 1.05 / (luminance + 0.05)


@pytest.mark.parametrize("deficiency", [None, *DEFICIENCIES])
def test_any_two_category_colours_and_the_summary_line_look_different(deficiency):
    for a, b in itertools.combinations([*CATEGORIES, SUMMARY], 2):
        assert apart(a, b, deficiency) >= APART, (a, b, deficiency)


def test_category_colours_stand_out_on_white_as_lines_and_dots_must():
    assert min(contrast_on_white(c) for c in [*CATEGORIES, SUMMARY]) >= 3  # WCAG 1.4.11, non-text contrast


def test_past_the_colours_a_category_differs_in_dash_and_shape_too():
    styles = [category(i) for i in range(4 * len(CATEGORIES))]
    assert len(set(styles)) == len(styles)
    assert [colour for colour, _d, _s in styles[:len(CATEGORIES)]] == list(CATEGORIES)
    for a, b in itertools.combinations(styles, 2):
        if a[0] == b[0]:  # the same colour: a different line and a different marker
            assert a[1] != b[1] and a[2] != b[2], (a, b)


def test_each_head_and_sentence_of_a_chart_has_a_style_of_its_own():
    """Twelve heads of the line view, twelve heads' scores over training, nine sentences' points and paths: no two
    drawn alike, each in the categories' colours (or the summary's black)."""
    drawn = {h: (np.array([0]), np.array([h % 3]), np.array([0.5])) for h in range(12)}
    legend = [t for t in lines_spec(["a", "b", "c"], drawn, None, "").figure().data if t.showlegend is not False]
    assert len({(t.line.color, t.line.dash) for t in legend}) == 12

    names = [[f"{layer}.{head}" for head in range(4)] for layer in range(3)]
    scores = np.zeros((2, 3, 4))
    traces = head_scores([1, 2], [0.1, 0.2], scores, scores, names).figure().data
    heads = {t.name: (t.line.color, t.marker.symbol if "markers" in t.mode else None)
             for t in traces if t.legendgroup is not None}
    assert len(heads) == 12 and len(set(heads.values())) == 12
    accuracy = next(t for t in traces if t.legendgroup is None)
    assert accuracy.line.color == SUMMARY

    sentences = [f"sentence {i}" for i in range(9)]
    points = map_figure(np.zeros((9, 2)), [0.5, 0.3], sentences, "").data[0]
    assert len(set(zip(points.marker.color, points.marker.symbol))) == 9
    paths = paths_figure(np.zeros((9, 3, 2)), [0.5, 0.3], sentences, "").data
    assert len({(t.line.color, t.line.dash, t.marker.symbol) for t in paths}) == 9

    used = {t.line.color for t in [*legend, *traces, *paths]} | set(points.marker.color)
    assert used <= {*CATEGORIES, SUMMARY}
