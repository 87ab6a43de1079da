"""The all-heads mosaic, with plain numpy arrays: colours, downsampling, the PNG's pixels, the figure."""
import base64
import io

import numpy as np
import plotly.colors
import pytest
from PIL import Image

from viz.mosaic import (
    GAP_RGB,
    NAN_RGB,
    all_heads_figure,
    build_mosaic,
    colorize,
    downsample,
    mosaic_figure,
    stretch_each_tile,
    viridis_lut,
)


def png_pixels(mosaic_or_uri) -> np.ndarray:
    """The RGB pixels (h, w, 3) of a Mosaic's PNG or of a figure's data URI, as stored."""
    if isinstance(mosaic_or_uri, str):
        png = base64.b64decode(mosaic_or_uri.split(",", 1)[1])
    else:
        png = mosaic_or_uri.png
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def decode(mosaic) -> np.ndarray:
    """The RGB pixels (height, width, 3) of a Mosaic as drawn on screen: its PNG scaled up by mosaic.scale."""
    rgb = png_pixels(mosaic)
    assert rgb.shape[:2] == mosaic.png_size[::-1]
    return rgb.repeat(mosaic.scale, axis=0).repeat(mosaic.scale, axis=1)


def tile_pixels(rgb, mosaic, layer, head) -> np.ndarray:
    """(tile, tile, 3): the pixels of one tile."""
    step = mosaic.tile + mosaic.gap
    return rgb[layer * step:layer * step + mosaic.tile, head * step:head * step + mosaic.tile]


def test_lut_is_plotlys_viridis_from_0_to_1():
    lut = viridis_lut(10)  # plotly's Viridis has 10 evenly spaced stops: sampled at 10 levels, exactly them
    assert lut.shape == (10, 3) and lut.dtype == np.uint8
    stops = [plotly.colors.hex_to_rgb(c) for c in plotly.colors.sequential.Viridis]
    assert [tuple(int(v) for v in row) for row in lut] == stops
    assert viridis_lut().shape == (256, 3)


def test_colorize_fixed_range_clips_and_greys_nan():
    lut = viridis_lut(254)
    rgb = colorize(np.array([0.0, 1.0, 1.7, -0.2, 0.5, np.nan], dtype=np.float32))
    assert rgb.shape == (6, 3) and rgb.dtype == np.uint8
    assert (rgb[0] == lut[0]).all() and (rgb[1] == lut[-1]).all()
    assert (rgb[2] == lut[-1]).all() and (rgb[3] == lut[0]).all()  # out of 0..1: clipped, not rescaled
    assert (rgb[4] == lut[round(0.5 * 253)]).all()
    assert tuple(rgb[5]) == NAN_RGB


def test_downsample_max_and_mean_with_a_short_last_block():
    maps = np.arange(100, dtype=np.float32).reshape(10, 10) / 100  # T=10, factor 4: blocks 0:4, 4:8, 8:10
    top = maps[np.ix_(range(0, 4), range(8, 10))]
    pooled_max, pooled_mean = downsample(maps, 4, "max"), downsample(maps, 4, "mean")
    assert pooled_max.shape == pooled_mean.shape == (3, 3) and pooled_max.dtype == np.float32
    assert pooled_max[0, 2] == pytest.approx(top.max()) and pooled_mean[0, 2] == pytest.approx(top.mean())
    assert pooled_max[2, 2] == pytest.approx(maps[8:, 8:].max())
    assert downsample(maps, 1) is not None and np.array_equal(downsample(maps, 1), maps)


def test_downsample_ignores_nan_and_keeps_an_all_blocked_block_nan():
    maps = np.full((4, 4), 0.25, dtype=np.float32)
    maps[0, 1] = np.nan
    maps[2:, 2:] = np.nan
    for pool in ("max", "mean"):
        out = downsample(maps, 2, pool)
        assert out[0, 0] == pytest.approx(0.25) and np.isnan(out[1, 1])



@pytest.mark.parametrize(("size", "factor"), [(7, 2), (30, 3), (33, 4), (64, 8), (50, 17)])
def test_downsample_is_each_blocks_nanmax_or_nanmean(size, factor):
    """Against the definition, block by block, on maps with blocked (NaN) cells, whole and cut last blocks."""
    rng = np.random.default_rng(size * factor)
    maps = rng.random((2, 3, size, size), dtype=np.float32)
    maps[rng.random(maps.shape) < 0.3] = np.nan
    maps[0, 0, :factor, :factor] = np.nan  # one all-blocked block
    n = -(-size // factor)
    for pool, reduce in (("max", np.nanmax), ("mean", np.nanmean)):
        expected = np.full((2, 3, n, n), np.nan, dtype=np.float32)
        for i in range(n):
            for j in range(n):
                block = maps[..., i * factor:(i + 1) * factor, j * factor:(j + 1) * factor]
                seen = ~np.isnan(block).all(axis=(-2, -1))
                expected[..., i, j][seen] = reduce(block[seen], axis=(-2, -1))
        out = downsample(maps, factor, pool)
        assert out.shape == expected.shape and out.dtype == np.float32
        np.testing.assert_allclose(out, expected, rtol=1e-6, equal_nan=True)

def test_bad_pool_and_bad_shape_raise():
    with pytest.raises(ValueError, match="pool"):
        downsample(np.zeros((4, 4)), 2, "median")
    with pytest.raises(ValueError, match="layers, heads, T, T"):
        build_mosaic(np.zeros((2, 4, 4)))


def test_each_tile_has_the_viridis_colour_of_its_max_pooled_block():
    attn = np.random.default_rng(1).random((2, 3, 8, 8), dtype=np.float32)
    mosaic = build_mosaic(attn, tile=4, pool="max", gap=2)  # 8 tokens into 4 px: 2 x 2 blocks
    rgb = decode(mosaic)
    assert (mosaic.tile, mosaic.factor, mosaic.layers, mosaic.heads) == (4, 2, 2, 3)
    assert rgb.shape == (2 * 4 + 2, 3 * 4 + 2 * 2, 3) == (mosaic.height, mosaic.width, 3)
    for layer in range(2):
        for head in range(3):
            blocks = attn[layer, head].reshape(4, 2, 4, 2).max(axis=(1, 3))  # (4, 4), pooled by hand
            assert np.array_equal(tile_pixels(rgb, mosaic, layer, head), colorize(blocks))
    assert (rgb[4:6] == GAP_RGB).all() and (rgb[:, 4:6] == GAP_RGB).all()  # the thin lines between tiles


def test_mean_pool_and_nan_cells_in_the_image():
    attn = np.full((1, 1, 4, 4), 0.5, dtype=np.float32)
    attn[0, 0, 0, :2] = [0.1, 0.3]
    attn[0, 0, 2:, 2:] = np.nan  # a blocked 2 x 2 block
    mosaic = build_mosaic(attn, tile=2, pool="mean")
    rgb = decode(mosaic)
    assert np.array_equal(rgb[0, 0], colorize(np.float32((0.1 + 0.3 + 0.5 + 0.5) / 4)))
    assert tuple(rgb[1, 1]) == NAN_RGB


def test_short_sentences_are_repeated_pixel_for_pixel():
    attn = np.random.default_rng(2).dirichlet(np.ones(3), size=(1, 2, 3)).astype(np.float32)  # (1, 2, 3, 3)
    mosaic = build_mosaic(attn, tile=64)
    assert (mosaic.factor, mosaic.repeat, mosaic.tile, mosaic.scale) == (1, 21, 63, 1)  # gcd(21, gap 4) = 1
    tile = tile_pixels(decode(mosaic), mosaic, 0, 1)
    assert np.array_equal(tile, colorize(attn[0, 1]).repeat(21, axis=0).repeat(21, axis=1))


def test_repeated_cells_and_gaps_are_stored_smaller_and_drawn_at_full_size():
    attn = np.random.default_rng(5).dirichlet(np.ones(30), size=(2, 3, 30)).astype(np.float32)  # (2, 3, 30, 30)
    mosaic = build_mosaic(attn, tile=64)  # each cell 2 x 2 px, gaps of 4 px: stored at half size
    assert (mosaic.repeat, mosaic.gap, mosaic.scale, mosaic.tile) == (2, 4, 2, 60)
    assert (mosaic.width, mosaic.height) == (3 * 60 + 2 * 4, 2 * 60 + 4)
    assert png_pixels(mosaic).shape == (62, 94, 3) and mosaic.png_size == (94, 62)
    full = build_mosaic(attn, tile=64, gap=3)  # gcd(2, 3) = 1: stored at full size
    assert full.scale == 1 and png_pixels(full).shape[:2] == (full.height, full.width)
    rgb = decode(mosaic)
    for layer in range(2):
        for head in range(3):
            expected = colorize(attn[layer, head]).repeat(2, axis=0).repeat(2, axis=1)
            assert np.array_equal(tile_pixels(rgb, mosaic, layer, head), expected)
    assert (rgb[60:64] == GAP_RGB).all() and (rgb[:, 60:64] == GAP_RGB).all()
    # plotly draws PNG pixel i over screen pixels 2i .. 2i + 1: centred at x0 + i * dx, as the ticks and frame expect
    image = mosaic_figure(mosaic).data[0]
    assert (image.dx, image.dy, image.x0, image.y0) == (2, 2, 0.5, 0.5)
    assert image.x0 - image.dx / 2 == -0.5 and image.x0 + (94 - 0.5) * image.dx == mosaic.width - 0.5


def test_auto_range_stretches_each_tile_to_its_min_and_max():
    flat = np.full((4, 4), 1 / 4, dtype=np.float32)
    faint = np.linspace(0.001, 0.003, 16, dtype=np.float32).reshape(4, 4)
    stretched = stretch_each_tile(np.stack([faint, flat]))
    assert stretched[0].min() == 0 and stretched[0].max() == pytest.approx(1)
    assert (stretched[1] == 0).all()  # a flat tile has no range: the lowest colour
    assert np.isnan(stretch_each_tile(np.array([[np.nan, 0.2], [0.1, 0.3]]))[0, 0])
    rgb = decode(build_mosaic(faint[None, None], tile=4, auto_range=True))
    lut = viridis_lut(254)
    assert (rgb[0, 0] == lut[0]).all() and (rgb[3, 3] == lut[-1]).all()


def test_figure_is_one_image_with_layer_and_head_ticks_and_tile_hover():
    attn = np.random.default_rng(3).random((2, 3, 5, 5), dtype=np.float32)
    mosaic = build_mosaic(attn, tile=10)
    fig = mosaic_figure(mosaic, highlight=(1, 2))
    image, tiles = fig.data
    assert image.type == "image" and image.source.startswith("data:image/png;base64,")
    assert np.array_equal(png_pixels(image.source), png_pixels(mosaic)) and image.hoverinfo == "skip"
    assert list(fig.layout.xaxis.ticktext) == ["H0", "H1", "H2"] and list(fig.layout.yaxis.ticktext) == ["L0", "L1"]
    assert list(fig.layout.xaxis.tickvals) == [mosaic.centre(h) for h in range(3)]
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]  # layer 0 at the top
    assert tiles.type == "scatter" and tiles.text[1 * 3 + 2] == "layer 1, head 2"  # point index = layer*heads+head
    assert (tiles.x[1 * 3 + 2], tiles.y[1 * 3 + 2]) == (mosaic.centre(2), mosaic.centre(1))
    frame = fig.layout.shapes[0]
    assert frame.x0 < mosaic.centre(2) - mosaic.tile / 2 < mosaic.centre(2) + mosaic.tile / 2 < frame.x1
    assert frame.y0 < mosaic.centre(1) - mosaic.tile / 2 < mosaic.centre(1) + mosaic.tile / 2 < frame.y1
    assert not mosaic_figure(mosaic).layout.shapes


def test_slice_numbering():
    fig = mosaic_figure(build_mosaic(np.zeros((1, 1, 4, 4), dtype=np.float32)), first_layer=4, first_head=7)
    assert list(fig.layout.xaxis.ticktext) == ["H7"] and fig.data[1].text[0] == "layer 4, head 7"


def test_12x12_heads_at_512_tokens_is_small_and_holds_the_tiles():
    attn = np.random.default_rng(4).random((12, 12, 512, 512), dtype=np.float32)
    fig = all_heads_figure(attn, tile=64)
    assert len(fig.to_json()) < 1_500_000  # 144 float32 heatmaps would be ~150 MB
    rgb = png_pixels(fig.data[0].source)
    mosaic = build_mosaic(attn[5:6, 7:8], tile=64)  # one tile, same settings (scale 1: downsampled)
    assert rgb.shape == (12 * 64 + 11 * mosaic.gap,) * 2 + (3,)
    step = 64 + mosaic.gap
    tile = rgb[5 * step:5 * step + 64, 7 * step:7 * step + 64]
    assert np.array_equal(tile, colorize(attn[5, 7].reshape(64, 8, 64, 8).max(axis=(1, 3))))
