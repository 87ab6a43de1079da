"""One vocabulary of masks (model.masks): the names a page and a link use, the mask each name makes, the score a
blocked key gets, and what counts as blocked; nowhere else in the code is a blocked score written."""
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from model.masks import (
    BLOCKED,
    BLOCKED_AT,
    CAUSAL,
    CAUSAL_PADDING,
    CUSTOM,
    MASK_KINDS,
    NO_MASK,
    PADDING,
    attention_mask_of,
    causal_mask,
    hf_blocked,
    hf_padding_mask,
    is_blocked,
    pads,
    shows_future,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_names_are_the_links_values():
    assert MASK_KINDS == ("none", "causal", "padding", "custom", "causal+padding")
    assert (NO_MASK, CAUSAL, PADDING, CUSTOM, CAUSAL_PADDING) == MASK_KINDS
    assert [k for k in MASK_KINDS if pads(k)] == [PADDING, CAUSAL_PADDING]
    assert [k for k in MASK_KINDS if not shows_future(k)] == [CAUSAL, CAUSAL_PADDING]


@pytest.mark.parametrize("kind", MASK_KINDS)
def test_each_name_makes_its_mask(kind):
    mask = attention_mask_of(kind, 5, blocked_keys=(1, 3, 9))
    if kind in (CAUSAL, CAUSAL_PADDING):
        assert torch.equal(mask, causal_mask(5))
    elif kind == CUSTOM:
        expected = torch.zeros(5, 5, dtype=torch.bool)
        expected[:, [1, 3]] = True  # key 9 is past the end: ignored
        assert torch.equal(mask, expected)
    else:  # padding goes to the model as its attention_mask, not in the (T, T) mask
        assert mask is None


def test_a_custom_mask_of_no_key_and_an_unknown_name():
    assert attention_mask_of(CUSTOM, 4) is None
    with pytest.raises(ValueError, match="mask kind must be one of"):
        attention_mask_of("diagonal", 4)


def test_what_counts_as_blocked():
    values = [BLOCKED, hf_blocked(torch.float32), hf_blocked(torch.float64), -1e9, BLOCKED_AT, -1e4, -5.0, 0.0]
    expected = [True, True, True, True, True, False, False, False]
    assert is_blocked(np.array(values)).tolist() == expected
    assert is_blocked(torch.tensor(values, dtype=torch.float64)).tolist() == expected
    assert is_blocked(torch.tensor(values[:1] + values[5:], dtype=torch.float32)).tolist() == [True, False, False,
                                                                                            False]


def test_hugging_face_padding_is_its_dtype_minimum():
    attention_mask = torch.tensor([[1, 1, 0]])
    for dtype in (torch.float32, torch.float64):
        padding = hf_padding_mask(attention_mask, dtype)
        assert padding.dtype == dtype and padding.tolist() == [[0.0, 0.0, torch.finfo(dtype).min]]


BLOCKED_SPELLINGS = re.compile(r'-\s*1e9|finfo\(|float\(\s*["\']-inf["\']\)|-\s*1e\+?(?:1\d|[2-9]\d)\b|-10000\.0')


def test_no_other_module_writes_a_blocked_score():
    """The blocked score and the line between a bias and a block are model.masks' alone."""
    found = []
    for package in ("model", "views", "viz", "bench"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "model" / "masks.py":
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if BLOCKED_SPELLINGS.search(line.split("#")[0]):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
