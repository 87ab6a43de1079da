"""Mask figures: which keys each query may see, and how the mask moves the attention."""
import numpy as np

from locales import _
from model.masks import is_blocked
from viz import wire
from viz.attention import axis_labels, map_layout
from viz.colours import DIVERGING
from viz.spec import FigureSpec

ALLOWED_COLOUR, BLOCKED_COLOUR = "#e8eef7", "#3b3b4f"
DIFF_FLOOR = 0.01  # the colour range is at least ±this, so float noise (~1e-7) stays white


def blocked_from_additive(mask, T: int) -> np.ndarray:
    """An additive mask broadcastable to (..., T, T) -> (T, T) bool, True where a key is blocked.

    What counts as blocked is model.masks.is_blocked (-inf, Hugging Face's dtype minimum, ...); None blocks nothing.
    """
    if mask is None:
        return np.zeros((T, T), dtype=bool)
    m = np.asarray(mask, dtype=np.float32)
    m = np.broadcast_to(m, m.shape[:-2] + (T, T)).reshape(-1, T, T)  # (n, T, T)
    return is_blocked(m).any(axis=0)


def mask_spec(blocked, tokens, title: str = "") -> FigureSpec:
    """blocked (T, T) bool, True = the query (row) may not see the key (column); two colours, no in-between. Plotly's
    dicts (viz.spec), as masked_difference_spec: the masks page draws both on every rerun."""
    z = np.asarray(blocked, dtype=np.uint8)  # (T, T) 1 = blocked, 0 = allowed; one byte a cell on the wire
    if z.ndim != 2 or z.shape != (len(tokens), len(tokens)):
        raise ValueError(f"mask of shape {z.shape} does not fit {len(tokens)} tokens")
    labels = axis_labels(tokens)
    gap = 1 if len(tokens) <= 64 else 0
    heat = {
        "type": "heatmap", "z": z, "x": labels, "y": labels, "zmin": 0.0, "zmax": 1.0, "xgap": gap, "ygap": gap,
        "colorscale": [[0.0, ALLOWED_COLOUR], [0.5, ALLOWED_COLOUR], [0.5, BLOCKED_COLOUR], [1.0, BLOCKED_COLOUR]],
        "colorbar": {"tickvals": [0.25, 0.75], "ticktext": [_("allowed: + 0"), _("blocked: + −∞")], "len": 0.4},
        "hovertemplate": _("query: %{y}<br>key: %{x}<br>blocked: %{z}<extra></extra>"),
    }
    return FigureSpec([heat], map_layout(len(tokens), title, tokens))


def masked_difference_spec(diff, query_tokens, key_tokens, title: str = "", floor: float = DIFF_FLOOR,
                           exact_cells: int = wire.EXACT_CELLS) -> FigureSpec:
    """diff (L, S) = masked minus unmasked probabilities; diverging colours centred at 0, range ±max(|diff|, floor).

    NaN cells (no unmasked counterpart) are gaps. A map of more than `exact_cells` cells is marked to travel as
    ten-thousandths (see viz.wire).
    """
    z = np.asarray(diff, dtype=np.float32)  # (L, S)
    if z.ndim != 2 or z.shape != (len(query_tokens), len(key_tokens)):
        raise ValueError(f"diff of shape {z.shape} does not fit {len(query_tokens)} queries x {len(key_tokens)} keys")
    limit = max(float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 0.0, floor)
    heat = {
        "type": "heatmap", "z": z, "x": axis_labels(key_tokens), "y": axis_labels(query_tokens),
        "colorscale": DIVERGING, "hoverongaps": False, "colorbar": {"title": {"text": "Δp"}}, "zmin": -limit,
        "zmax": limit, "hovertemplate": _("query: %{y}<br>key: %{x}<br>Δp = %{z:+.4f}<extra></extra>"),
        **(wire.units_marker(signed=True) if wire.quantized(z, exact_cells) else {}),
    }
    return FigureSpec([heat], map_layout(max(z.shape), title, key_tokens))
