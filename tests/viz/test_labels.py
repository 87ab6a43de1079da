"""Key labels stand upright when they are Chinese characters (or as short), and slant when they are words; a control
character is drawn visibly."""
import numpy as np

from model.printable import visible
from viz.attention import axis_labels, heatmap_spec
from viz.labels import SLANTED, tick_angle, width
from viz.masks import mask_spec, masked_difference_spec

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
        assert mask_spec(np.zeros((5, 5), bool), keys).figure().layout.xaxis.tickangle == angle
        assert masked_difference_spec(square, WORDS, keys).figure().layout.xaxis.tickangle == angle
    assert heatmap_spec(square, WORDS, CHINESE, key_angle=-30).figure().layout.xaxis.tickangle == -30


def test_a_control_character_in_a_token_is_drawn_as_a_visible_picture():
    """A byte-level BPE token can be a control character: raw in a label it shows as nothing and makes a chart saved
    as SVG an invalid XML file (seen in Chromium with a GPT-2 tokenizer's token \\x0e)."""
    labels = axis_labels(["a\x0eb", "\x00", "\n", "\x7f", "\x85", "plain", "\x0e"])
    assert labels[:6] == ["a\u240eb", "\u2400", "\u240a", "\u2421", "\\x85", "plain"]
    assert labels[6].startswith("\u240e")  # a second \x0e: still unique, still visible
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for label in labels for c in label)
    assert visible("日本 tab\there") == "日本 tab\u2409here"
