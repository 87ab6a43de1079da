"""All heads: every layer x every head as one image (the "model view"), and a way to open one head large."""
from contextlib import nullcontext

import numpy as np
import streamlit as st

from locales import N_, _
from runtime.budget import Kind
from runtime.models import Choice
from runtime.runs import Run
from views.charts.mounted import show_chart, streamlit_chart
from views.shell import lecture
from views.shell.errors import cached
from views.shell.frame import Page
from views.shell.navigation import link_to
from views.widgets import downloads, link_writes, notices, special_tokens, state
from views.widgets.pickers import first_head
from views.widgets.special_tokens import Shown
from viz.attention import heatmap_spec
from viz.mosaic import POOLS, Mosaic, build_mosaic, mosaic_figure, mosaic_spec

TILE_SIZES = (32, 48, 64, 96)
PREVIEW_MAX_TOKENS = 128  # longer sentences get an image preview, not T x T numbers
POOL_NAMES = {"max": N_("max-pool"), "mean": N_("block mean")}


SPINNER_CELLS = 2_000_000  # layers x heads x T x T from which drawing the mosaic takes ~50 ms or more, alone


def mosaic_for(run: Run, tile: int, pool: str, auto: bool, shown: Shown) -> Mosaic:
    """One mosaic per (run, settings), shared: a layer/head change reuses the PNG, no re-encoding. The process's
    bounded cache, not st.cache_resource, which this page's script would decorate anew on every run (the
    decorator reads the function's source) and which hashes every argument on every call.

    A spinner only for a big one: st.spinner starts a thread and sends a message even for the 2 ms mosaic of
    a 30-token sentence (12 x 12 heads at 512 tokens take 0.3 s)."""
    def draw():
        return build_mosaic(shown.maps(run.attentions), tile, pool, auto_range=auto)

    hidden = (shown.hides, shown.renormalise)
    with st.spinner(_("Drawing every head…")) if run.attentions.size >= SPINNER_CELLS else nullcontext():
        return cached(("mosaic", run.key, tile, pool, auto, hidden), draw, _("The all-heads image"), kind=Kind.IMAGE)


def pick_tile(heads: int) -> None:
    """on_select: a click on a tile (point index = layer * heads + head) sets the layer and head selectors."""
    points = [p for p in st.session_state["mosaic"].selection.points if p.get("curve_number") == 1]
    if points:
        st.session_state["layer"], st.session_state["head"] = divmod(int(points[0]["point_index"]), heads)


def describe(mosaic: Mosaic) -> str:
    """The caption under the mosaic: sizes, and what one pixel means."""
    if mosaic.factor > 1:
        pixel = _("each pixel is the {pool} of {f}×{f} token cells").format(pool=_(POOL_NAMES[mosaic.pool]),
                                                                            f=mosaic.factor)
    else:
        pixel = _("each token cell is {r}×{r} px").format(r=mosaic.repeat)
    colour = (_("each tile stretched to its own min..max") if mosaic.auto_range else _("fixed 0..1"))
    return _("{tokens} tokens · {layers} layers × {heads} heads · one {width}×{height} px image ({kb} KB PNG) · tiles "
             "of {tile} px, {pixel} · colour = probability, {colour}").format(
        tokens=mosaic.tokens, layers=mosaic.layers, heads=mosaic.heads, width=mosaic.width, height=mosaic.height,
        kb=f"{len(mosaic.png) / 1024:.0f}", tile=mosaic.tile, pixel=pixel, colour=colour)


def big_view_params(text: str, choice: Choice, layer: int, head: int) -> dict[str, str]:
    """The heatmap page's link: this page's settings (a random model's config too), at this layer and head."""
    params = {k: v for k, v in link_writes.url_params().items() if k not in ("pool", "tile")}
    params.update(text=text, model=choice.key, layer=str(layer), head=str(head), mean="0")
    return params


def preview(run: Run, layer: int, head: int, auto: bool, container, shown: Shown) -> None:
    """The chosen head: the real heatmap for short sentences, a one-tile image beyond PREVIEW_MAX_TOKENS."""
    title = _("Layer {layer}, head {head}").format(layer=layer, head=head)
    probs, tokens = shown.maps(run.attentions[layer, head][None, None]), shown.tokens(run.tokens)
    if len(tokens) <= PREVIEW_MAX_TOKENS:
        fig = heatmap_spec(probs[0, 0], tokens, tokens, title=title, auto_range=auto)
    else:
        tile = build_mosaic(probs, tile=256, auto_range=auto)
        fig = mosaic_figure(tile, max_height=420, title=title, first_layer=layer, first_head=head)
        fig.update_layout(xaxis_title=_("key"), yaxis_title=_("query"))
        max_pool = POOL_NAMES["max"]
        container.caption(_("{n} tokens: preview downsampled ({pool} of {f}×{f} cells); the big view has every "
                            "token.").format(n=len(tokens), pool=_(max_pool), f=tile.factor))
    show_chart(fig, key="preview", container=container)
    # the numbers behind the picture: this head's map (as shown), and every map of the run
    downloads.button(_("Download this map (CSV)"), lambda: downloads.head_csv(np.asarray(probs[0, 0]), tokens),
                     f"attention_layer{layer}_head{head}.csv", "text/csv", container)
    downloads.trace_button(run, layer, container=container)


def view(page: Page) -> None:
    """Settings, mosaic, sliders and preview."""
    run, text, choice = page.run, page.text, page.choice
    settings = lecture.place() or st.container(horizontal=True, gap="large")  # one block, where st.columns sent four
    pool = state.choice(_("Downsampling of long sentences"), "pool", POOLS, "max", container=settings,
                        widget="radio", horizontal=True, format_func=lambda p: _(POOL_NAMES[p]),
                        help=_("Max-pool keeps a one-token pattern bright; block mean shows the average probability."))
    tile = state.choice(_("Tile size (px)"), "tile", TILE_SIZES, 64, container=settings, widget="radio",
                        horizontal=True)
    auto = state.toggle(_("Auto colour range"), "auto", False, container=settings,
                        help=_("Stretch each tile to its own min..max: shows the pattern of a nearly uniform head."))
    shown = special_tokens.switch(run, settings)
    mosaic = mosaic_for(run, tile, pool, auto, shown)
    chart = st.container()  # the notices of the settings and sliders, then the mosaic: drawn once the sliders are read
    st.caption(describe(mosaic))
    shown.say()

    left, right = lecture.charts_row([1, 2])  # in lecture mode the chosen head's map takes the whole width
    first = first_head(page.choice, run.num_layers, run.num_heads)
    controls = lecture.place() or left
    layer = state.int_slider(_("Layer"), "layer", 0, run.num_layers - 1, first[0], container=controls)
    head = state.int_slider(_("Head"), "head", 0, run.num_heads - 1, first[1], container=controls)
    with chart:
        notices.show_notices()
    left.page_link(link_to("heatmap"),
                   label=_("Open layer {layer} head {head} in the big view").format(layer=layer, head=head),
                   icon=":material/zoom_in:", query_params=big_view_params(text, choice, layer, head))
    streamlit_chart(mosaic_spec(mosaic, highlight=(layer, head)), "mosaic", chart, key="mosaic",
                    alt_name=_("Every head's attention map: one tile per layer (down) and head (across), each a query "
                               "× key map. Layer {layer}, head {head} is outlined").format(layer=layer, head=head),
                    on_select=lambda: pick_tile(mosaic.heads), selection_mode="points")
    preview(run, layer, head, auto, right, shown)
