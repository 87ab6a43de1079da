"""A run whose attention maps are too big to keep whole keeps each layer's input only, and reads a layer's maps when
asked: the same numbers as the whole maps, bit for bit, and never the whole stack at once."""
import numpy as np
import pytest

from model.analysis.head_stats import head_properties, special_shares
from model.analysis.rollout import flow_row, rollout
from model.loading.footprint import encoder_pass_bytes
from model.loading.sources import RandomConfig
from model.masks import CAUSAL_PADDING, CUSTOM
from runtime import models, runs
from runtime.budget import nbytes
from runtime.layer_maps import WHOLE_MAPS_BYTES, LayerMaps, maps_bytes
from viz.atlas import thumbnails
from viz.mosaic import build_mosaic

TEXT = "the maps of a long text are read a layer at a time"
SMALL = models.Choice("random", RandomConfig(32, 4, 3, 64, seed=5))


def both(choice, text, mask, monkeypatch):
    """The run with its maps whole, and the same run read a layer at a time."""
    whole = runs.compute_run(choice, text, mask)
    monkeypatch.setattr(runs, "WHOLE_MAPS_BYTES", 0)
    return whole, runs.compute_run(choice, text, mask)


@pytest.mark.parametrize("mask", [runs.Mask(), runs.Mask(CAUSAL_PADDING, pad_to=20), runs.Mask(CUSTOM, blocked=(2,))])
@pytest.mark.parametrize("choice", [models.Choice("minilm"), models.Choice("gpt"), SMALL])
def test_a_layer_read_alone_is_the_whole_pass_s_layer_bit_for_bit(choice, mask, monkeypatch):
    whole, lazy = both(choice, TEXT, mask, monkeypatch)
    assert isinstance(whole.attentions, np.ndarray) and isinstance(lazy.attentions, LayerMaps)
    assert lazy.attentions.shape == whole.attentions.shape and lazy.attentions.size == whole.attentions.size
    for i in range(-1, whole.num_layers):
        assert np.array_equal(lazy.attentions[i], whole.attentions[i], equal_nan=True)
        assert not lazy.attentions[i].flags.writeable
    assert np.array_equal(lazy.attentions[1, 2], whole.attentions[1, 2], equal_nan=True)
    assert np.array_equal(lazy.attentions[1:, :2, 3], whole.attentions[1:, :2, 3], equal_nan=True)
    assert lazy.attentions[whole.num_layers:].shape == (0, *whole.attentions.shape[1:])
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(lazy.attentions, whole.attentions, strict=True))
    assert np.array_equal(lazy.hidden, whole.hidden)
    with pytest.raises(IndexError):
        lazy.attentions[whole.num_layers]


def test_such_a_run_keeps_no_map_and_cannot_be_made_one_array(monkeypatch):
    whole, lazy = both(models.Choice("minilm"), TEXT, runs.Mask(), monkeypatch)
    layers, heads, t, _ = whole.attentions.shape
    assert nbytes(whole) - nbytes(lazy) == maps_bytes(layers, heads, t) == whole.attentions.nbytes
    with pytest.raises(TypeError, match="a layer at a time"):
        np.asarray(lazy.attentions)


def test_the_analyses_read_it_a_layer_at_a_time_and_find_the_same(monkeypatch):
    whole, lazy = both(models.Choice("minilm"), TEXT, runs.Mask(), monkeypatch)
    assert np.array_equal(rollout(lazy.attentions), rollout(whole.attentions))
    assert np.array_equal(flow_row(lazy.attentions, 2, 4), flow_row(whole.attentions, 2, 4))
    special = np.zeros(len(whole.ids), dtype=bool)
    special[[0, -1]] = True
    a, b = head_properties(lazy.attentions, whole.ids, special), head_properties(whole.attentions, whole.ids, special)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)
    specials = {"[CLS]": whole.ids[0]}
    assert np.array_equal(special_shares(lazy.attentions[2:3], whole.ids, specials)["[CLS]"],
                          special_shares(whole.attentions[2:3], whole.ids, specials)["[CLS]"])
    for auto in (False, True):
        assert build_mosaic(lazy.attentions, 16, auto_range=auto).png == build_mosaic(whole.attentions, 16,
                                                                                     auto_range=auto).png
    assert thumbnails(lazy.attentions[:2]) == thumbnails(whole.attentions[:2])


def test_smollm2_at_512_tokens_keeps_its_inputs_only():
    """30 layers x 9 heads x 512^2 float32 maps are 283 MB: past the threshold, its pass reserves the inputs' room."""
    assert maps_bytes(30, 9, 512) == 283_115_520 > WHOLE_MAPS_BYTES >= maps_bytes(6, 12, 340)
    with_maps, without = encoder_pass_bytes(30, 9, 576, 1536, 512), encoder_pass_bytes(30, 9, 576, 1536, 512, False)
    assert with_maps > 800e6 and without < 200e6
