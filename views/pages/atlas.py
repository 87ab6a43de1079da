"""Head atlas: every head of every layer with what it measurably does, in one sortable table; each head's row has
its map as a thumbnail and a link to it on the heatmap page. Below: the share of attention each special token
receives, per layer and head (attention sinks)."""
import base64
import io
from dataclasses import dataclass
from urllib.parse import urlencode

import numpy as np
import streamlit as st

from locales import N_, _
from model.analysis.head_stats import PROPERTIES, head_properties, special_shares
from runtime.budget import Kind
from runtime.runs import Run, on_maps
from views.charts.mounted import show_chart
from views.shell import lecture
from views.shell.errors import cached
from views.shell.frame import Page
from views.widgets import downloads, link_writes, notices, state
from views.widgets.special_tokens import special_positions
from viz.atlas import grid_figure, shares_figure, thumbnails

LINKS_BYTES = 300_000  # the table's links together, at most: each repeats the page's link state, text included
SHORT_VALUE = 64  # characters of a link setting kept in every row's link when the texts are left out
# each property's column: its name and what it measures (shown as the column's help)
COLUMNS = {
    "entropy": (N_("Entropy (nats)"), N_("Mean over the queries of −Σ p·ln p: 0 when each row puts everything on one "
                                        "key, ln T when it spreads evenly.")),
    "previous": (N_("Previous token"), N_("Mean attention of a token to the token just before it.")),
    "induction": (N_("Induction"), N_("Mean attention of a repeated token to the token that followed its previous "
                                      "occurrence (… A B … A → B): what an induction head does. Empty when no "
                                      "token repeats; a text written twice shows it best.")),
    "next": (N_("Next token"), N_("Mean attention of a token to the token just after it.")),
    "self": (N_("Itself"), N_("Mean attention of a token to itself (the diagonal).")),
    "special": (N_("Special tokens"), N_("Mean share of a row on the special tokens (`[CLS]`, `[SEP]`, `<bos>`, "
                                        "`<eos>`, `[PAD]`): heads that park their attention there (attention "
                                        "sinks).")),
    "first": (N_("First token (sink)"), N_("Mean attention of a token to the first token, whatever it is (every "
                                           "query after the first): trained LLMs park most of some heads' attention "
                                           "there, an attention sink.")),
    "same": (N_("Same token elsewhere"), N_("Mean attention of a token to other positions of the same token, over "
                                            "the tokens that occur more than once; empty when none does.")),
    "distance": (N_("Mean distance"), N_("Mean over the queries of Σ p·|i − j|: how far, in tokens, a head looks.")),
}


@dataclass(frozen=True)
class Atlas:
    """What the page shows of one run, computed once and shared: numbers and small PNGs, no text."""

    properties: dict  # {property: (layers, heads) float64}
    shares: dict  # {special token: (layers, heads) float64}
    pngs: tuple  # [layer][head] PNG bytes of the head's map


def special_ids(run: Run) -> dict[str, int]:
    """{text: id} of the model's special tokens that start, end or pad a sequence."""
    special = run.special_tokens
    roles = (special.cls, special.sep, special.pad, special.mask) if special is not None else ()
    return {text: index for text, index in (r for r in roles if r)}


def atlas_of(run: Run) -> Atlas:
    """Once per run, shared; on a model thread, so that a class asking for atlases of their own texts at once runs
    as many as the cores hold, the others queued (runtime.model_thread)."""
    def compute(maps) -> Atlas:
        special, specials = special_positions(run.ids, run.special_tokens), special_ids(run)
        layers = [(thumbnails(p[None])[0], head_properties(p[None], run.ids, special),  # a layer at a time
                   special_shares(p[None], run.ids, specials)) for p in maps]
        return Atlas({name: np.concatenate([layer[1][name] for layer in layers]) for name in PROPERTIES},
                     {text: np.concatenate([layer[2][text] for layer in layers]) for text in layers[0][2]},
                     tuple(tuple(layer[0]) for layer in layers))

    return cached(("atlas", run.key), lambda: on_maps(run, compute), _("The head atlas"), kind=Kind.IMAGE)


def heatmap_link(layer: int, head: int, text: bool = True) -> str:
    """The heatmap page at this head, with this page's link state (text, model, its settings, language); text=False:
    without the texts (any value longer than SHORT_VALUE)."""
    params = {k: v for k, v in link_writes.url_params().items() if k not in ("layer", "head", "mean", "stage") and (
        text or len(v) <= SHORT_VALUE)}
    params.update(layer=str(layer), head=str(head), mean="0")
    return "./?" + urlencode(params)  # the default page is served at /: relative, so a base path is kept


def table(atlas: Atlas, layers: int, heads: int) -> tuple[dict, bool]:
    """The table's columns (one row per head, layer by layer), and whether its links carry the text: not when they
    would pass LINKS_BYTES together (SmolLM2's 270 links with a 3 KB text: 810 KB)."""
    rows = [(layer, head) for layer in range(layers) for head in range(heads)]
    links = [heatmap_link(layer, head) for layer, head in rows]
    with_text = sum(map(len, links)) <= LINKS_BYTES
    columns = {
        "link": links if with_text else [heatmap_link(layer, head, text=False) for layer, head in rows],
        "map": ["data:image/png;base64," + base64.b64encode(atlas.pngs[layer][head]).decode("ascii")
                for layer, head in rows],
        "layer": [layer for layer, _head in rows],
        "head": [head for _layer, head in rows],
    }
    for name in PROPERTIES:
        columns[name] = [round(float(atlas.properties[name][layer, head]), 4) for layer, head in rows]
    return columns, with_text


def csv_of(atlas: Atlas, layers: int, heads: int) -> bytes:
    """The table as CSV (English column names, the same file in both languages), with the BOM."""
    out = io.StringIO()
    out.write(downloads.BOM + ",".join(["layer", "head", *PROPERTIES, *(f"share_{t}" for t in atlas.shares)]) + "\n")
    for layer in range(layers):
        for head in range(heads):
            values = [atlas.properties[n][layer, head] for n in PROPERTIES]
            values += [atlas.shares[t][layer, head] for t in atlas.shares]
            out.write(",".join([str(layer), str(head), *(f"{v:.6f}" if np.isfinite(v) else "" for v in values)]))
            out.write("\n")
    return out.getvalue().encode("utf-8")


def npz_of(atlas: Atlas, run: Run) -> bytes:
    """The properties and shares as NumPy arrays (no pickle: np.load(..., allow_pickle=False) reads it)."""
    out = io.BytesIO()
    arrays = {name: atlas.properties[name] for name in PROPERTIES}
    arrays.update({f"share_{t}": v for t, v in atlas.shares.items()})
    np.savez_compressed(out, tokens=np.array(run.tokens, dtype=str), **arrays)
    return out.getvalue()


def zmax_of(name: str, tokens: int) -> float:
    """The top of a measurement's colour range: ln T for entropy, T - 1 tokens for distance, else 1 (a share)."""
    return {"entropy": max(np.log(tokens), 1e-6), "distance": max(tokens - 1, 1)}.get(name, 1.0)


def view(page: Page) -> None:
    run = page.run
    atlas = atlas_of(run)
    shown = state.choice(_("Map of"), "prop", PROPERTIES, "entropy", container=lecture.place() or st,
                         format_func=lambda name: _(COLUMNS[name][0]), help=_("Which measurement the map shows."))
    notices.show_notices()
    label, tip = COLUMNS[shown]
    show_chart(grid_figure(atlas.properties[shown], _("{measure}: every head of every layer").format(
        measure=_(label)), zmax_of(shown, len(run.tokens)), ".1f" if shown == "distance" else ".2f"), key="atlas_grid")
    st.caption(_(tip))
    config = {
        "link": st.column_config.LinkColumn(_("Heatmap"), display_text=_("open the map"), help=_(
            "This head on the heatmap page, with the same text and model.")),
        "map": st.column_config.ImageColumn(_("Map"), help=_("The head's attention map (query rows × key columns, "
                                                             "0..1); long texts are max-pooled.")),
        "layer": st.column_config.NumberColumn(_("Layer")),
        "head": st.column_config.NumberColumn(_("Head")),
        **{name: st.column_config.NumberColumn(_(label), help=_(tip), format="%.3f")
           for name, (label, tip) in COLUMNS.items()},
    }
    st.caption(_("{n} heads ({layers} layers × {heads} heads) over {tokens} tokens. Click a column's name to sort by "
                 "it.").format(n=run.num_layers * run.num_heads, layers=run.num_layers, heads=run.num_heads,
                               tokens=len(run.tokens)))
    columns, with_text = table(atlas, run.num_layers, run.num_heads)
    if not with_text:
        st.caption(_("With this many heads and a text this long, the links leave the text out (it would be repeated "
                     "in every row): each opens the heatmap at its head with the default text. Paste the text there, "
                     "or open the heatmap from this page's menu and pick the head."))
    st.dataframe(columns, column_config=config, hide_index=True,
                 row_height=52, height=min(720 if not lecture.on() else lecture.CHART_HEIGHT,
                                           38 + 52 * run.num_layers * run.num_heads))
    if atlas.shares:
        show_chart(shares_figure(atlas.shares, _("Share of the attention each special token receives")),
                   key="atlas_shares")
    else:
        st.info(_("The model reads this text without special tokens (such as `[CLS]`, `[SEP]`, `<bos>`, `<eos>`), so "
                  "no head can park its attention on one."))
    downloads.button(_("Download the table (CSV)"), lambda: csv_of(atlas, run.num_layers, run.num_heads),
                     "head_atlas.csv", "text/csv")
    downloads.button(_("Download the measurements (NumPy .npz)"), lambda: npz_of(atlas, run),
                     "head_atlas.npz", "application/octet-stream")
