"""A test helper for the model and app tests: two recorded traces are the same, field by field, bit for bit."""
import dataclasses

import torch


def assert_identical(ours, recorded, where="trace"):
    """Every tensor field of two trace dataclasses is exactly equal (same shape, same bits); other fields equal."""
    if isinstance(recorded, torch.Tensor):
        assert ours.shape == recorded.shape and torch.equal(ours, recorded), where
    elif dataclasses.is_dataclass(recorded):
        for f in dataclasses.fields(recorded):
            assert_identical(getattr(ours, f.name), getattr(recorded, f.name), f"{where}.{f.name}")
    else:
        assert ours == recorded, where
