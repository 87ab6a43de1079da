"""A model's size is known before it is built, from the textbook's counts: exactly what building it allocates."""
import pytest
from torch import nn

from model.loading.footprint import module_bytes
from model.loading.sources import (
    DEFAULT_KEY,
    RANDOM_KEY,
    RandomConfig,
    find_source,
    footprint,
    load,
    load_encoder_decoder,
)


@pytest.mark.parametrize("config", [RandomConfig(), RandomConfig(96, 3, 3, 200, "relu", True, "learned", 5),
                                    RandomConfig(32, 1, 1, 64, positional="learned", max_len=40)])
def test_a_random_models_footprint_is_what_building_it_allocates(config):
    source = find_source(RANDOM_KEY)
    assert footprint(source, config) == module_bytes(load(source, config).model)
    assert footprint(source, config, encoder_decoder=True) == module_bytes(load_encoder_decoder(config).model)


def test_a_checkpoints_footprint_covers_the_module_and_its_weights_read_beside_it():
    source = find_source(DEFAULT_KEY)
    size = module_bytes(load(source).model)
    weights = (source.path / "model.safetensors").stat().st_size
    assert size + weights * 0.99 <= footprint(source) <= size * 1.01 + weights


def test_a_tied_tensor_is_counted_once():
    a, b = nn.Linear(4, 4), nn.Linear(4, 4)
    b.weight = a.weight
    assert module_bytes(nn.Sequential(a, b)) == 4 * (16 + 4 + 4)
