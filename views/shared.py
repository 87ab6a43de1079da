"""What every page needs: the shared model, cached forward passes, URL state."""
from dataclasses import dataclass

import numpy as np
import streamlit as st

MAX_TEXT_CHARS = 20_000  # longer pastes are cut before tokenising; the model keeps at most its positions anyway
DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."


@dataclass(frozen=True)
class Attention:
    """A forward pass's attention, ready to draw. Shared by every session: read-only arrays."""

    tokens: tuple[str, ...]
    probs: np.ndarray  # (layers, heads, T, T) float32
    truncated: bool
    total_tokens: int


@st.cache_resource(show_spinner="Loading the model…")
def loaded_model(key: str):
    """One model per process, shared by every session (never mutated)."""
    from model.sources import find_source, load

    source = find_source(key)
    if source is None:
        raise ValueError(f"unknown model {key!r}")
    return load(source)


@st.cache_resource(max_entries=64, show_spinner="Running the model…")
def attention_for(key: str, text: str) -> Attention:
    """One forward pass per (model, text); a slider move reads this cache and never re-runs the model."""
    import torch

    loaded = loaded_model(key)
    encoded = loaded.encode(text)
    with torch.inference_mode():
        out = loaded.model(encoded.input_ids)
    probs = torch.stack([a[0] for a in out.attentions]).numpy().astype(np.float32)  # (layers, heads, T, T)
    probs.flags.writeable = False
    return Attention(encoded.tokens, probs, encoded.truncated, encoded.total_tokens)


def int_param(name: str, default: int, low: int, high: int, notices: list[str]) -> int:
    """An integer from the URL, or the default with a notice when it is not a number in [low, high]."""
    raw = st.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        notices.append(f"Ignored `{name}={raw}` in the link: not a whole number.")
        return default
    if not low <= value <= high:
        notices.append(f"Ignored `{name}={value}` in the link: it must be between {low} and {high}.")
        return default
    return value
