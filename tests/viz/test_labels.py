"""Key labels stand upright when they are Chinese characters (or as short), and slant when they are words."""
import numpy as np

from viz.attention import heatmap_spec
from viz.labels import SLANTED, tick_angle, width
from viz.masks import difference_heatmap, mask_heatmap

CHINESE, WORDS = list("我有一只猫"), ["the", "cat", "sat", "on", "it"]


def test_a_chinese_character_takes_two_columns_and_stands_upright():
    assert (width("猫"), width("ab"), width("<pad>")) == (2, 2, 5)
    assert tick_angle(CHINESE) == 0 and tick_angle(["I", "a"]) == 0
    assert tick_angle(WORDS) == tick_angle([*CHINESE, "<pad>"]) == SLANTED == -60
    assert tick_angle([]) == SLANTED


def test_every_map_of_keys_chooses_its_angle_from_its_labels():
    square = np.full((5, 5), 0.2)
    for keys, angle in ((CHINESE, 0), (WORDS, SLANTED)):
        assert heatmap_spec(square, WORDS, keys).figure().layout.xaxis.tickangle == angle
        assert mask_heatmap(np.zeros((5, 5), bool), keys).layout.xaxis.tickangle == angle
        assert difference_heatmap(square, WORDS, keys).layout.xaxis.tickangle == angle
    assert heatmap_spec(square, WORDS, CHINESE, key_angle=-30).figure().layout.xaxis.tickangle == -30
