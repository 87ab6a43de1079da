"""How a map's numbers travel to the browser: float32 while the map is small, two-byte integers when it is not.

plotly sends a numpy array as a base64 typed array (`{"dtype": "f4", "bdata": ...}`), and st.plotly_chart's JSON
writes each "/" of the base64 as "\\u002f": 1.44 bytes on the wire per byte of the array. A 512 x 512 map of float32
is 1 MiB before that, 1.5 MB after, more than a whole page may send (1 MB, issue 17). Above EXACT_CELLS cells a map
goes instead as integers in units of 1/10000, uint16 or int16 (0.75 MB at 512 tokens): the four decimals the hover
has always shown, exactly, and colours that differ from float32's by at most 0.00005 of the colour range (a
screen shows 1/256 of it). plotly's hover cannot divide, so the value reads "p = 4213 / 10000" there.

A typed array of integers has no NaN, so a blocked (NaN) cell is drawn as a gap by an image laid over the map: a
PNG, opaque in the gap colour where a cell is blocked and transparent elsewhere (a few KB). Hovering such a cell
shows its probability, 0.
"""
import base64
import io

import numpy as np
from PIL import Image

EXACT_CELLS = 256 * 256  # up to this many cells a map goes as float32 (0.38 MB on the wire)
UNITS = 10_000  # above it, a value v goes as round(v * UNITS)
GAP_RGBA = (255, 255, 255, 255)  # a gap shows the chart's background: white in the app's light theme


def quantized(values: np.ndarray, exact_cells: int = EXACT_CELLS) -> bool:
    """Whether a map of this size goes as integers."""
    return values.size > exact_cells


def to_units(values: np.ndarray, signed: bool) -> np.ndarray:
    """Values in [0, 1] (or [-1, 1] if signed) as integer multiples of 1/UNITS; NaN becomes 0 (drawn by gap_image)."""
    units = np.rint(np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0) * UNITS)
    return np.clip(units, -UNITS if signed else 0, UNITS).astype(np.int16 if signed else np.uint16)


# A blocked (NaN) cell in a typed array of units that the browser divides back (units_array): no value in range
GAP_UNITS = {"u2": 65535, "i2": -32768}


def units_array(values: np.ndarray, signed: bool = False) -> dict:
    """values as integers of 1/UNITS for views/chart.py's payload, which views/chart_static/chart.js divides back to
    float32 before plotting: a typed array {"dtype": "u2" or "i2", "bdata": raw bytes, "shape": "R,C", "units",
    "nan"}, where a NaN cell is the integer "nan" (NaN again in the browser, a gap)."""
    values = np.asarray(values, dtype=np.float32)
    dtype = "i2" if signed else "u2"
    units = to_units(values, signed)
    units[np.isnan(values)] = GAP_UNITS[dtype]
    return {"dtype": dtype, "bdata": units.tobytes(), "shape": ",".join(map(str, values.shape)), "units": UNITS,
            "nan": GAP_UNITS[dtype]}


def from_units(spec: dict) -> np.ndarray:
    """The float32 values the browser makes of a units_array (bdata raw or base64), NaN where it was NaN."""
    raw = spec["bdata"] if isinstance(spec["bdata"], bytes) else base64.b64decode(spec["bdata"])
    ints = np.frombuffer(raw, dtype=np.int16 if spec["dtype"] == "i2" else np.uint16)
    values = (ints / spec["units"]).astype(np.float32)  # as chart.js: the quotient in double, stored as float32
    values[ints == spec["nan"]] = np.nan
    return values.reshape([int(n) for n in spec["shape"].split(",")])


def value_hover(name: str, exact_format: str, is_quantized: bool) -> str:
    """The hover's value line: 'p = %{z:.4f}' for float32, 'p = %{z} / 10000' for integers (same digits)."""
    if not is_quantized:
        return f"{name} = %{{z:{exact_format}}}"
    sign = "+" if exact_format.startswith("+") else ""
    return f"{name} = %{{z:{sign}d}} / {UNITS}"


def colour_range(zmin: float, zmax: float, is_quantized: bool, ticks: int = 5) -> dict:
    """zmin/zmax in the units the map is sent in; for integers, colour-bar ticks labelled in the values' own units."""
    if not is_quantized:
        return {"zmin": zmin, "zmax": zmax}
    values = np.linspace(zmin, zmax, ticks)
    return {"zmin": zmin * UNITS, "zmax": zmax * UNITS,
            "colorbar_ticks": {"tickvals": [float(v * UNITS) for v in values],
                               "ticktext": [f"{v:.4g}" for v in values]}}


def gap_image(values: np.ndarray) -> dict | None:
    """A layout image covering the NaN cells of an (R, C) map on category axes (cell i at i), or None if none."""
    gaps = np.isnan(np.asarray(values, dtype=np.float32))
    if not gaps.any():
        return None
    rgba = np.zeros(gaps.shape + (4,), dtype=np.uint8)  # (R, C, 4) transparent
    rgba[gaps] = GAP_RGBA
    buffer = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buffer, format="PNG", optimize=True)
    rows, cols = gaps.shape
    return {"source": "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii"),
            "xref": "x", "yref": "y", "x": -0.5, "y": -0.5, "sizex": cols, "sizey": rows, "xanchor": "left",
            "yanchor": "top", "sizing": "stretch", "layer": "above"}
