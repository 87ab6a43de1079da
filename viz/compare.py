"""The comparison's pictures: a map with a query's row outlined, and the difference B − A in diverging colours."""
import numpy as np

from locales import _
from viz import wire
from viz.attention import heatmap_spec
from viz.colours import DIVERGING
from viz.spec import FigureSpec


def outlined(spec: FigureSpec, row: int | None, columns: int) -> FigureSpec:
    """spec (a heatmap_spec) with a box around row `row` (None: no box)."""
    data, layout = spec.parts()
    if row is not None:
        layout["shapes"] = [{"type": "rect", "xref": "x", "yref": "y", "x0": -0.5, "x1": columns - 0.5,
                             "y0": row - 0.5, "y1": row + 0.5, "line": {"color": "#ff2d2d", "width": 3}}]
    return FigureSpec(data, layout)


def difference_spec(diff: np.ndarray, query_tokens, key_tokens, title: str, row: int | None = None) -> FigureSpec:
    """(M, M) B − A: orange where B attends more, blue where less, white where equal; the range symmetric about 0 up
    to the largest |difference|. Sent as signed ten-thousandths past wire.EXACT_CELLS cells."""
    z = np.asarray(diff, dtype=np.float32)
    limit = float(np.nanmax(np.abs(z))) if z.size and np.isfinite(z).any() else 0.0
    limit = limit or 1e-4
    spec = heatmap_spec(np.clip(z, 0, 1), query_tokens, key_tokens, title=title)  # the layout of every map
    data, layout = spec.parts()
    heat = {**data[0], "z": z, "colorscale": DIVERGING, "zmin": -limit, "zmax": limit,
            "colorbar": {"title": {"text": "Δp"}},
            "hovertemplate": _("query: %{y}<br>key: %{x}<br>B − A = %{z:.4f}<extra></extra>")}
    heat.pop("meta", None)
    if wire.quantized(z):
        heat.update(wire.units_marker(signed=True))
    return outlined(FigureSpec([heat], layout), row, z.shape[1])
