"""Positional encoding: the sinusoidal table, its curves, position similarity, and a model's learned positions (or
its rotation, RoPE)."""
from dataclasses import dataclass

import numpy as np
import streamlit as st

from locales import N_, _
from model.family import Capability
from model.positional import sinusoidal_table
from runtime.budget import Kind
from runtime.models import Choice, loaded_model
from views.charts.mounted import streamlit_chart
from views.pages import rotary
from views.shell import lecture
from views.shell.errors import cached, failure
from views.shell.frame import Page
from views.widgets import downloads, notices, state
from viz.positional import curves_figure, robust_limit, similarity, similarity_heatmap, stride_for, table_heatmap

BASES = (100, 1000, 10000, 100000)
SIMILARITIES = {"dot": N_("dot product"), "cosine": N_("cosine (divided by the norms)")}
DEFAULT_CURVE_DIMS = (0, 1, 16, 32)  # a fast sin/cos pair and two slower waves
MAX_CURVES = 16  # each curve sends its positions and values: 16 x 2048 points stay under 0.5 MB
MAX_ROTARY_ROWS = 2048  # RoPE's table is drawn for at most the page's own number of positions


def pe_table(num_positions: int, d_model: int, base: int) -> np.ndarray:
    """(P, d) float32 sinusoidal table; at most 2048 x 1024, so a few MB per entry, kept in the server's budget."""
    def compute() -> np.ndarray:
        table = sinusoidal_table(num_positions, d_model, float(base)).numpy()
        table.flags.writeable = False  # shared by every session
        return table

    return cached(("sinusoidal table", num_positions, d_model, base), compute, _("The sinusoidal table"),
                         kind=Kind.TABLE)


@dataclass(frozen=True)
class ModelPositions:
    """What the chosen model does with positions: its table (positions x dimensions) or None, and what it is."""

    table: np.ndarray | None  # learned: (max_positions, E); rotary: the angles' sin and cos (positions, head_dim)
    note: str
    rotary: bool = False


def model_positions(choice: Choice) -> ModelPositions:
    """The model's position embeddings or RoPE's rotation, and what they are, or None and why there are none."""
    try:
        loaded = loaded_model(choice)
    except Exception as e:  # noqa: BLE001 - a missing package, an unreadable checkpoint: say so, keep the rest
        return ModelPositions(None, failure(_("The model"), e))
    facts, random = loaded.facts, loaded.source.can(Capability.CONFIGURABLE)
    # The random model's label ends with its whole configuration (for logs): its settings are in the sidebar
    model = _("The random model") if random else loaded.source.label
    if facts.positional == "rotary":
        d, base = facts.head_dim, int(facts.rope_base)
        note = _("{model} adds no position vector: RoPE rotates each head's query and key (head_dim {d}) pair by "
                 "pair, pair i by the angle position × θᵢ, θᵢ = {base}^(−2i/{d}). These are the sines and cosines of "
                 "those angles: the sinusoidal table with d = {d} and base {base}, turning q and k instead of added "
                 "to x. The fastest pair turns once every {fast:.3g} positions, the slowest once every {slow:,.0f}"
                 ).format(model=model, d=d, base=f"{base:,}", fast=2 * np.pi,
                          slow=2 * np.pi * base ** ((d - 2) / d))
        return ModelPositions(pe_table(min(facts.max_positions, MAX_ROTARY_ROWS), d, base), note, rotary=True)
    if facts.positional == "sinusoidal":
        return ModelPositions(None, _(
            "{model} adds the sinusoidal table itself (base 10000, d_model = {d_model}); choose a BERT model or a "
            "random model with learned positions in the sidebar to compare.").format(model=model,
                                                                                      d_model=facts.d_model))
    if random:
        note = _("{model}: learned positions, untrained (random)")
    else:
        note = _("{model}: learned during pre-training")
    return ModelPositions(loaded.model.position_vectors().detach().numpy(), note.format(model=model))


def sampled(table: np.ndarray, first: int, last: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Rows and columns first..last of table, every s-th of each so the heatmap stays light."""
    s = stride_for(table.shape[0], last - first + 1)
    positions = np.arange(0, table.shape[0], s)
    dims = np.arange(first, last + 1, s)
    return table[::s, first:last + 1:s], positions, dims, s


def ordinal(s: int) -> str:
    """'2nd', '11th' in English; the number alone in a language without ordinal suffixes."""
    if s % 100 in (11, 12, 13) or s % 10 not in (1, 2, 3):
        return _("{n}th").format(n=s)
    return {1: _("{n}st"), 2: _("{n}nd"),
            3: _("{n}rd")}[s % 10].format(n=s)


def thinned(s: int, dimensions: bool = True) -> str:
    """The caption's note (with its leading space) when only every s-th row (and column) is sent."""
    if s <= 1:
        return ""
    if dimensions:
        return " " + _("Every {nth} position and dimension is shown, so the page stays light.").format(nth=ordinal(s))
    return " " + _("Every {nth} position is shown, so the page stays light.").format(nth=ordinal(s))


def intro() -> None:
    st.latex(r"PE_{(pos,\,2i)}=\sin\!\left(\frac{pos}{base^{2i/d}}\right),\qquad "
             r"PE_{(pos,\,2i+1)}=\cos\!\left(\frac{pos}{base^{2i/d}}\right)")


def view(page: Page) -> None:
    """The table's settings, then the tables, the waves and the similarities, sinusoidal beside learned."""
    c1, c2, c3 = lecture.controls(3)
    d_model = state.int_slider(_("d_model (width of the table)"), "pe_d", 2, 1024, 128, container=c1)
    num_positions = state.int_slider(_("Number of positions"), "pe_n", 1, 2048, 128, container=c2)
    base = state.choice(_("Base"), "pe_base", BASES, 10000, container=c3, widget="segmented_control")
    c1, c2, c3 = lecture.controls(3)
    first = state.int_slider(_("First dimension shown"), "pe_from", 0, d_model - 1, 0, container=c1)
    last = state.int_slider(_("Last dimension shown"), "pe_to", 0, d_model - 1, d_model - 1, container=c2)
    cosine = state.choice(_("Similarity"), "pe_sim", tuple(SIMILARITIES), "dot", container=c3,
                          widget="segmented_control", format_func=lambda o: _(SIMILARITIES[o])) == "cosine"
    notices.show_notices()
    if first > last:
        st.info(_("The first dimension ({first}) is after the last ({last}): showing {last}..{first}.").format(
            first=first, last=last))
        first, last = last, first

    table = pe_table(num_positions, d_model, base)  # (P, d)
    positions = model_positions(page.choice)
    tables(table, positions, num_positions, first, last, base)
    waves(table, d_model, base)
    similarities(table, positions, num_positions, cosine)
    rotary.section(d_model, base, num_positions)


def table_csv(table: np.ndarray) -> bytes:
    """The whole table (every position and dimension, not only those drawn) as CSV: a row per position."""
    lines = [downloads.BOM + ",".join(["position", *(f"dim {i}" for i in range(table.shape[1]))])]
    lines += [",".join([str(p), *(f"{v:.8g}" for v in row)]) for p, row in enumerate(table)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def tables(table: np.ndarray, model: ModelPositions, num_positions: int, first: int, last: int, base: int) -> None:
    """The sinusoidal table beside the model's learned positions or rotation (or why it has none)."""
    learned = model.table
    d_model = table.shape[1]
    st.header(_("The table: positions × dimensions"))
    left, right = st.columns(2)
    shown, positions, dims, s = sampled(table, first, last)
    streamlit_chart(table_heatmap(shown, positions, dims, title=_("Sinusoidal, d = {d}, base {base}").format(
        d=d_model, base=f"{base:,}")), "sinusoidal-table", left)
    odd = " " + _("With an odd d the last column is a sine without a cosine.") if d_model % 2 else ""
    left.caption(_("Low dimensions change fast with position, high ones slowly: each (sin, cos) pair is a clock "
                   "hand turning at its own speed.") + odd + thinned(s))
    downloads.button(_("Download the sinusoidal table (CSV)"), lambda: table_csv(table),
                     f"sinusoidal_table_d{d_model}_base{base}.csv", "text/csv", left)
    if learned is None:
        right.info(model.note)
        return
    rows = learned[:num_positions]  # (P', E)
    lf, ll = min(first, rows.shape[1] - 1), min(last, rows.shape[1] - 1)
    l_shown, l_positions, l_dims, ls = sampled(rows, lf, ll)
    if model.rotary:
        title = _("RoPE: sin and cos of position × θᵢ, {positions} positions × {dims} dims").format(
            positions=rows.shape[0], dims=rows.shape[1])
        streamlit_chart(table_heatmap(l_shown, l_positions, l_dims, title=title), "rotary-table", right)
        right.caption(model.note + "." + thinned(ls))
        return
    title = _("Learned, {positions} positions × {dims} dims").format(positions=learned.shape[0],
                                                                     dims=learned.shape[1])
    streamlit_chart(table_heatmap(l_shown, l_positions, l_dims, limit=robust_limit(l_shown), title=title),
                    "learned-table", right)
    right.caption(_("{note}. Colour range: ± the 99th percentile of |value|, so a few large values saturate "
                    "instead of washing out the rest.").format(note=model.note) + thinned(ls))


def waves(table: np.ndarray, d_model: int, base: int) -> None:
    """Chosen dimensions of the table as curves along the positions."""
    st.header(_("Each dimension is a wave along the positions"))
    curve_dims = state.int_list(_("Dimensions to plot"), "pe_dims", range(d_model), str,
                                default=[d for d in DEFAULT_CURVE_DIMS if d < d_model])
    notices.show_notices()  # a bad ?pe_dims= is only read here
    if len(curve_dims) > MAX_CURVES:
        st.info(_("{n} dimensions chosen: plotting the first {most}.").format(n=len(curve_dims), most=MAX_CURVES))
        curve_dims = curve_dims[:MAX_CURVES]
    if curve_dims:
        streamlit_chart(curves_figure(table, curve_dims, d_model, base), "waves",
                        alt_name=_("Each dimension is a wave along the positions"))
    else:
        st.info(_("Pick dimensions to plot their sine or cosine against the position."))


def similarities(table: np.ndarray, model: ModelPositions, num_positions: int, cosine: bool) -> None:
    """Every pair of positions compared, sinusoidal beside learned (or RoPE's rotation)."""
    learned = model.table
    st.header(_("Similarity of every pair of positions"))
    left, right = st.columns(2)
    s = stride_for(num_positions, num_positions)
    title = _("Sinusoidal: cosine") if cosine else _("Sinusoidal: PE · PEᵀ")
    streamlit_chart(similarity_heatmap(table[::s], np.arange(0, num_positions, s), cosine=cosine, title=title),
                    "sinusoidal-similarity", left)
    left.caption(_("With even d, PE(p)·PE(q) = Σᵢ cos((p − q)·ωᵢ): it depends only on the distance p − q, so "
                   "every diagonal is constant, and nearby positions are the most alike.") + thinned(s, False))
    if learned is None:
        return
    rows = learned[:num_positions]
    ls = stride_for(rows.shape[0], rows.shape[0])
    if model.rotary:
        title = _("RoPE: cosine") if cosine else _("RoPE: R · Rᵀ")
        streamlit_chart(similarity_heatmap(rows[::ls], np.arange(0, rows.shape[0], ls), cosine=cosine, title=title),
                        "rotary-similarity", right)
        right.caption(_("A query rotated to position p meets a key rotated to q through cos((p − q)·θᵢ) in each "
                        "pair: RoPE's scores depend on the distance p − q alone, as this table's diagonals show.")
                      + thinned(ls, False))
        return
    limit = None if cosine else robust_limit(similarity(rows[::ls]))
    title = _("Learned: cosine") if cosine else _("Learned: P · Pᵀ")
    streamlit_chart(similarity_heatmap(rows[::ls], np.arange(0, rows.shape[0], ls), cosine=cosine, limit=limit,
                                       title=title), "learned-similarity", right)
    right.caption(_("All {dims} dimensions of the first {positions} learned positions.").format(
        dims=rows.shape[1], positions=rows.shape[0])
                  + ("" if cosine else " " + _("Colour range: ± the 99th percentile."))
                  + thinned(ls, False))
