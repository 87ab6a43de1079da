"""The model view: every head of every layer as one small picture, all in ONE PNG image.

144 plotly heatmaps of 512 x 512 numbers would be ~150 MB of float32; one palette PNG of
12 x 12 tiles of 64 px is a few hundred KB, and the browser draws it at once.
"""
import base64
import io
import math
import warnings
import zlib
from dataclasses import dataclass

import numpy as np
import plotly.colors
import plotly.graph_objects as go
from PIL import Image

from locales import _
from viz.spec import FigureSpec

LEVELS = 254  # colour levels of a probability; + NaN colour + gap colour = one 256-colour PNG palette
NAN_INDEX, GAP_INDEX = 254, 255
NAN_RGB = (214, 214, 214)  # blocked (NaN) cells: light grey, as a gap in the big heatmap
GAP_RGB = (255, 255, 255)  # the thin lines between tiles
POOLS = ("max", "mean")
CHUNK_CELLS = 1 << 22  # attention cells colour-indexed at once (16 MB of float32 and its temporaries)


def viridis_lut(levels: int = 256) -> np.ndarray:
    """(levels, 3) uint8: plotly's "Viridis" (the scale the big heatmap uses), sampled evenly over 0..1."""
    scale = plotly.colors.get_colorscale("Viridis")  # [[position, "#rrggbb"], ...]
    stops = np.array([pos for pos, _ in scale], dtype=np.float64)
    rgb = np.array([plotly.colors.hex_to_rgb(colour) for _, colour in scale], dtype=np.float64)  # (stops, 3)
    at = np.linspace(0.0, 1.0, levels)
    lut = np.stack([np.interp(at, stops, rgb[:, c]) for c in range(3)], axis=-1)  # (levels, 3)
    return np.rint(lut).astype(np.uint8)


def colour_index(values) -> np.ndarray:
    """Probabilities (any shape) to uint8 palette indices 0..LEVELS-1: fixed range 0..1 (clipped); NaN to NAN_INDEX."""
    v = np.asarray(values, dtype=np.float32)
    level = np.clip(v, 0.0, 1.0, out=np.empty_like(v))  # NaN stays NaN: one temporary, not three (10 x faster)
    level *= LEVELS - 1
    np.rint(level, out=level)
    level[np.isnan(v)] = NAN_INDEX
    return level.astype(np.uint8)


def colorize(values) -> np.ndarray:
    """Probabilities (...) to Viridis RGB (..., 3) uint8 with the fixed 0..1 range; NaN is light grey."""
    return PALETTE[colour_index(values)]


def _palette() -> np.ndarray:
    """(256, 3) uint8: the LEVELS Viridis colours, then the NaN colour and the gap colour."""
    palette = np.zeros((256, 3), dtype=np.uint8)
    palette[:LEVELS] = viridis_lut(LEVELS)
    palette[NAN_INDEX], palette[GAP_INDEX] = NAN_RGB, GAP_RGB
    return palette


PALETTE = _palette()
PALETTE.flags.writeable = False


def pool_factor(tokens: int, tile: int) -> int:
    """How many tokens one pixel summarises along each axis, so that a tile is at most `tile` pixels."""
    return max(1, math.ceil(tokens / tile))


def downsample(maps, factor: int, pool: str = "max") -> np.ndarray:
    """(..., T, T) -> (..., n, n), n = ceil(T / factor): each pixel is one factor x factor block of cells.

    pool="max" (max-pool, the default) keeps a one-token pattern (a diagonal, a column on [SEP]) at full
    brightness, where a block mean would dim it to 1/factor; pool="mean" (block mean) shows the block's
    average probability. The last block may be smaller. NaN (blocked) cells are ignored; an all-NaN
    block stays NaN.
    """
    maps = np.asarray(maps, dtype=np.float32)
    if pool not in POOLS:
        raise ValueError(f"pool must be one of {POOLS}, not {pool!r}")
    if factor == 1:
        return maps
    # Padded with NaN to whole blocks, then the k-th cell of every block taken at once (a strided view) and combined
    # element-wise, along each axis: 0.2-0.65 of the time of ufunc.reduceat at 128 and 512 tokens (bench/mosaic.py).
    size = maps.shape[-1]
    n = -(-size // factor)
    if n * factor != size:
        maps = np.pad(maps, [(0, 0)] * (maps.ndim - 2) + [(0, n * factor - size)] * 2, constant_values=np.nan)
    if pool == "max":  # fmax ignores NaN unless both sides are NaN
        return _fold(_fold(maps, factor, np.fmax, -1), factor, np.fmax, -2)
    finite = ~np.isnan(maps)
    sums = _fold(_fold(np.where(finite, maps, np.float32(0)), factor, np.add, -1), factor, np.add, -2)
    counts = _fold(_fold(finite.astype(np.float32), factor, np.add, -1), factor, np.add, -2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sums / counts).astype(np.float32)  # 0 / 0 = NaN for an all-blocked block


def _fold(maps: np.ndarray, factor: int, op, axis: int) -> np.ndarray:
    """op over each run of `factor` cells along axis -1 or -2 (its length a multiple of factor)."""
    def cells(k: int) -> np.ndarray:
        return maps[..., k::factor] if axis == -1 else maps[..., k::factor, :]

    out = cells(0).copy()
    for k in range(1, factor):
        op(out, cells(k), out=out)
    return out


@dataclass(frozen=True)
class Mosaic:
    """One PNG holding layers x heads tiles; enough geometry to label and hit-test them."""

    png: bytes
    layers: int
    heads: int
    tokens: int
    tile: int  # screen pixels per tile side (as every size here but png_size)
    gap: int  # screen pixels between tiles
    factor: int  # tokens per pixel (downsampling); 1 when each token got >= 1 pixel
    repeat: int  # pixels per token (upsampling of short sentences); 1 when downsampled
    pool: str
    auto_range: bool = False
    scale: int = 1  # screen pixels per PNG pixel: the PNG is stored `scale` times smaller, plotly scales it up

    @property
    def width(self) -> int:
        return self.heads * (self.tile + self.gap) - self.gap

    @property
    def height(self) -> int:
        return self.layers * (self.tile + self.gap) - self.gap

    @property
    def png_size(self) -> tuple[int, int]:
        """(width, height) of the PNG itself: the on-screen size divided by `scale`."""
        return self.width // self.scale, self.height // self.scale

    def centre(self, i: int) -> float:
        """Pixel coordinate of the middle of tile row/column i."""
        return i * (self.tile + self.gap) + (self.tile - 1) / 2

    def data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


def stretch_each_tile(tiles) -> np.ndarray:
    """(..., n, n) -> each tile rescaled to its own min..max (a flat tile becomes 0): the auto colour range."""
    tiles = np.asarray(tiles, dtype=np.float32)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN tiles
        low = np.nanmin(tiles, axis=(-2, -1), keepdims=True)
        span = np.nanmax(tiles, axis=(-2, -1), keepdims=True) - low
        return np.where(span > 0, (tiles - low) / np.where(span > 0, span, 1), 0 * tiles).astype(np.float32)


def build_mosaic(attentions, tile: int = 64, pool: str = "max", gap: int | None = None,
                 auto_range: bool = False) -> Mosaic:
    """attentions (layers, heads, T, T) in [0, 1] -> a Mosaic: rows = layers, columns = heads.

    Long sentences are downsampled (see `downsample`) so a tile is at most `tile` px; short ones are
    repeated pixel-for-pixel up to about `tile` px so each token stays a visible square. Colours use the
    fixed range 0..1, or with auto_range each tile's own min..max (after downsampling). attentions may be any
    object sliced as that array is (a run's maps read a few layers at a time, runtime.layer_maps).
    """
    attn = attentions if hasattr(attentions, "shape") else np.asarray(attentions)
    if attn.ndim != 4 or attn.shape[-1] != attn.shape[-2]:
        raise ValueError(f"attentions must be (layers, heads, T, T), got shape {attn.shape}")
    layers, heads, T, _ = attn.shape
    factor = pool_factor(T, tile)
    repeat = max(1, tile // T) if factor == 1 else 1
    gap = max(2, tile // 16) if gap is None else gap
    stretch = stretch_each_tile if auto_range else np.asarray
    # Repeated cells and gaps are stored `scale` times smaller and scaled up by plotly (mosaic_spec), so a 30-token
    # sentence in 64 px tiles (each cell 2 x 2 px, gaps 4 px) is a PNG of a quarter of the pixels: built in 1.6
    # instead of 2.35 ms, 45 instead of 61 KB. The browser draws it pixelated: the same picture on screen.
    scale = math.gcd(repeat, gap)
    # layers at a time: one call for a short sentence, bounded memory
    step = max(1, CHUNK_CELLS // math.prod(attn.shape[1:]))
    index = np.concatenate([colour_index(stretch(downsample(attn[i:i + step], factor, pool)))
                            for i in range(0, layers, step)])  # (L, H, n, n)
    index = index.repeat(repeat // scale, axis=-2).repeat(repeat // scale, axis=-1)  # (L, H, px / scale, px / scale)
    px, g = index.shape[-1], gap // scale
    padded = np.pad(index, ((0, 0), (0, 0), (0, g), (0, g)), constant_values=GAP_INDEX)
    canvas = padded.transpose(0, 2, 1, 3).reshape(layers * (px + g), heads * (px + g))[:-g or None, :-g or None]
    image = Image.frombytes("P", (canvas.shape[1], canvas.shape[0]), np.ascontiguousarray(canvas).tobytes())
    image.putpalette(PALETTE.tobytes())
    buf = io.BytesIO()
    # Run-length coding only (zlib's Z_RLE): attention values seldom repeat a longer string, so the default search for
    # one costs time for nothing: 12-25 % fewer bytes in less time on the default model's maps (bench/mosaic.py).
    image.save(buf, format="PNG", compress_level=1, compress_type=zlib.Z_RLE)
    return Mosaic(buf.getvalue(), layers, heads, T, px * scale, gap, factor, repeat, pool, auto_range, scale)


def mosaic_figure(mosaic: Mosaic, max_height: int = 900, title: str = "", first_layer: int = 0,
                  first_head: int = 0, highlight: tuple[int, int] | None = None) -> go.Figure:
    """The mosaic as a plotly image; see mosaic_spec."""
    return mosaic_spec(mosaic, max_height, title, first_layer, first_head, highlight).figure()


def mosaic_spec(mosaic: Mosaic, max_height: int = 900, title: str = "", first_layer: int = 0,
                first_head: int = 0, highlight: tuple[int, int] | None = None) -> FigureSpec:
    """The mosaic as a plotly image with "L0".."Ln" / "H0".."Hn" ticks at tile centres.

    An invisible marker at each tile centre (trace 1, point index = layer * heads + head) gives the
    tile its hover ("layer 3, head 7") and makes it clickable: plotly selects scatter points on click,
    not heatmap or image pixels. first_layer/first_head number a mosaic of a slice; highlight=(layer, head)
    draws a red frame around that tile.
    """
    xs = np.array([mosaic.centre(h) for h in range(mosaic.heads)], dtype=np.float32)
    ys = np.array([mosaic.centre(l) for l in range(mosaic.layers)], dtype=np.float32)
    layer_ids = range(first_layer, first_layer + mosaic.layers)
    head_ids = range(first_head, first_head + mosaic.heads)
    name = _("layer {layer}, head {head}")  # translated once, not once a tile
    names = [name.format(layer=i, head=h) for i in layer_ids for h in head_ids]
    top = 90 if title else 64  # room for the H ticks under the toolbar
    pad = 0.5 + mosaic.gap  # a gap's width around the image, so the frame of an edge tile is not cut
    height = int(min(max_height, max(260, mosaic.height + top + 10)))
    frame = [] if highlight is None else [
        {"type": "rect", "line": {"color": "#ff2b2b", "width": 3}, **_frame(mosaic, *highlight)}]
    # Every trace and the whole layout at once, as dicts (add_trace/add_shape/update_layout each validated the
    # figure again, 8 ms per rerun; see viz.spec).
    return FigureSpec([
        # PNG pixel i covers screen pixels i * scale .. i * scale + scale - 1: its centre is x0 + i * dx
        {"type": "image", "source": mosaic.data_uri(), "hoverinfo": "skip", "dx": mosaic.scale, "dy": mosaic.scale,
         "x0": (mosaic.scale - 1) / 2, "y0": (mosaic.scale - 1) / 2},
        {"type": "scatter", "x": np.tile(xs, mosaic.layers), "y": np.repeat(ys, mosaic.heads), "text": names,
         "mode": "markers", "marker": {"size": 1, "opacity": 0}, "unselected": {"marker": {"opacity": 0}},
         "showlegend": False, "hovertemplate": "%{text}<extra></extra>", "name": _("tiles")},
    ], {
        "title": {"text": title}, "height": height, "margin": {"l": 10, "r": 10, "t": top, "b": 10},
        "plot_bgcolor": "rgba(0,0,0,0)", "hovermode": "closest", "hoverdistance": -1,  # nearest tile centre wins
        **({"shapes": frame} if frame else {}),
        "xaxis": {"tickvals": xs, "ticktext": [f"H{h}" for h in head_ids], "side": "top",
                  "range": [-pad, mosaic.width - 1 + pad], "showgrid": False, "zeroline": False,
                  "constrain": "domain"},
        "yaxis": {"tickvals": ys, "ticktext": [f"L{l}" for l in layer_ids],
                  "range": [mosaic.height - 1 + pad, -pad], "showgrid": False, "zeroline": False,
                  "scaleanchor": "x", "constrain": "domain"},
    })


def _frame(mosaic: Mosaic, layer: int, head: int) -> dict:
    """Data coordinates of a rectangle just around tile (layer, head), in the middle of the gaps."""
    step, half_gap = mosaic.tile + mosaic.gap, mosaic.gap / 2
    return {"x0": head * step - 0.5 - half_gap, "x1": head * step + mosaic.tile - 0.5 + half_gap,
            "y0": layer * step - 0.5 - half_gap, "y1": layer * step + mosaic.tile - 0.5 + half_gap}


def all_heads_figure(attentions, tile: int = 64, pool: str = "max", auto_range: bool = False) -> go.Figure:
    """(layers, heads, T, T) -> the model-view figure in one call."""
    return mosaic_figure(build_mosaic(attentions, tile, pool, auto_range=auto_range))
