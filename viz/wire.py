"""How a map's numbers travel to the browser: float32 while the map is small, two-byte integers when it is not.

A figure always holds its values (float32, NaN where a cell is blocked). A 512 x 512 map of float32 is 1 MiB, more
than a whole page may send (1 MB, issue 17), so a map of more than EXACT_CELLS cells is marked (units_marker(), in
plotly's free `meta`, which draws nothing) and views/charts/mounted.py sends its values as integers in units of 1/10000,
uint16 or int16 (0.5 MB at 512 tokens): the four decimals the hover shows, exactly, and colours that differ from
float32's by at most 0.00005 of the colour range (a screen shows 1/256 of it). The chart's JavaScript divides them
back into float32 before plotting (views/charts/static/chart.js), so the hover reads p = 0.4213, the colour bar is in
the values' own units and a blocked cell, sent as an integer no value takes (GAP_UNITS), is NaN again: a gap.
The same units carry a chart's preloaded maps (views/charts/head_chart.py).
"""
import base64

import numpy as np

EXACT_CELLS = 256 * 256  # up to this many cells a map goes as float32 (0.26 MB on the wire)
UNITS = 10_000  # above it, a value v goes as round(v * UNITS)
GAP_UNITS = {"u2": 65535, "i2": -32768}  # a blocked (NaN) cell: no value in range takes it


def quantized(values: np.ndarray, exact_cells: int = EXACT_CELLS) -> bool:
    """Whether a map of this size goes as integers."""
    return values.size > exact_cells


def units_marker(signed: bool) -> dict:
    """The trace properties that ask views/charts/mounted.py to send the trace's z as units: values in [0, 1] (uint16),
    or in [-1, 1] if signed (int16)."""
    return {"meta": {"z_units": "i2" if signed else "u2"}}


def to_units(values: np.ndarray, signed: bool) -> np.ndarray:
    """Values in [0, 1] (or [-1, 1] if signed) as integer multiples of 1/UNITS; NaN becomes 0 (units_array marks it)."""
    units = np.rint(np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0) * UNITS)
    return np.clip(units, -UNITS if signed else 0, UNITS).astype(np.int16 if signed else np.uint16)


def units_array(values: np.ndarray, signed: bool = False) -> dict:
    """values as integers of 1/UNITS for views/charts/mounted.py's payload, which views/charts/static/chart.js divides
    back to float32 before plotting: a typed array {"dtype": "u2" or "i2", "bdata": raw bytes, "shape": "R,C", "units",
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
