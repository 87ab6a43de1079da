"""From 2017 to today: what changed between the tutorials' Transformer and today's LLMs (SmolLM2's block: RoPE,
RMSNorm, SwiGLU, grouped-query attention), each change measured on real weights in the app (model.analysis.modern):

- blocks and costs (views.pages.modern_blocks): the three blocks as diagrams, and each module's parameters and FLOPs;
- positions: the sinusoidal table added to x against RoPE rotating q and k, on SmolLM2's own query and key vectors
  for the student's text: the same two words at shifted positions score the same under RoPE, not with the table added;
- norm: LayerNorm against RMSNorm on the same residual vector of SmolLM2;
- feed-forward: ReLU and GELU against SwiGLU, with the gate's activations on the student's text in one layer;
- attention: multi-head against grouped-query: which query heads share a key/value head, and the key/value cache of
  four real configurations at 2,048 and 8,192 tokens, against full multi-head attention.
"""
from fractions import Fraction

import numpy as np
import streamlit as st
import torch

from locales import N_, _
from model.analysis.modern import architectures, gates_of, norms_of, residual, shifted_scores
from model.kinds import SourceKey
from runtime.budget import Kind
from runtime.model_thread import on_model_thread
from runtime.models import Choice
from views.charts.mounted import show_chart
from views.pages.modern_blocks import blocks, costs
from views.shell import lecture
from views.shell.errors import cached
from views.shell.frame import Page
from views.shell.markdown import code
from views.widgets import downloads, notices, state
from views.widgets.pickers import sentence
from viz.modern import activations_spec, gates_spec, norms_spec, sharing_spec, shifted_spec

PARTS = {"blocks": N_("Three blocks"), "positions": N_("Positions: added or rotated"),
         "norm": N_("LayerNorm or RMSNorm"), "ffn": N_("ReLU, GELU or SwiGLU"),
         "attention": N_("Grouped-query attention and the cache"), "costs": N_("Parameters and FLOPs")}
UNITS = 24  # the hidden units the gates' heatmap shows: those with the largest |SiLU(gate) × up|
SHIFTS = 256  # the pair of words moved 0 .. 255 positions further
DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."
MAX_TOKENS = 64  # of its text, ?mtext=: its own box, so that the tour's stop sets it without touching the sentence a
# student carries from page to page (?text=); said literally where it is read (tests/views/test_hostile_input.py)


def intro() -> None:
    st.info(_("The tutorials' Transformer (2017) and the LLMs of today share the same attention, but not the rest of "
              "the block: positions are rotated into q and k instead of added to x (RoPE), LayerNorm became RMSNorm, "
              "ReLU became SwiGLU, and several query heads share one key and value (grouped-query attention). Each "
              "part below measures one change on real weights."), icon=":material/history:")


def llm(page: Page):
    return page.model(Choice(SourceKey.SMOLLM2))


def tokens_of(loaded, text: str) -> tuple[torch.Tensor, list[str]]:
    read = loaded.reader.read(text)
    ids = list(read.ids)[:MAX_TOKENS]
    if len(read.ids) > MAX_TOKENS:
        notices.notice(_("This text has {n} tokens: the page reads its first {most}; the rest was cut.").format(
            n=len(read.ids), most=MAX_TOKENS))
    return torch.tensor(ids, dtype=torch.long), list(read.tokens)[:MAX_TOKENS]


def positions(page: Page) -> None:
    loaded = llm(page)
    config = loaded.model.config
    with lecture.sidebar():
        ids, tokens = tokens_of(loaded, sentence(_("Text"), "mtext", DEFAULT_TEXT))  # its own box: see MAX_TOKENS
        if len(tokens) < 2:
            st.info(_("Type at least two tokens: a query and a key before it."))
            return
        query = state.int_slider(_("Query token"), "query", 1, len(tokens) - 1, min(8, len(tokens) - 1),
                                 help=_("The word that looks"))
        key = state.int_slider(_("Key token"), "key", 0, query, min(1, query), help=_("The word looked at"))
        row = st.columns(2)
        layer = state.int_slider(_("Layer"), "layer", 0, config.n_layer - 1, 13, container=row[0])
        head = state.int_slider(_("Head"), "head", 0, config.n_head - 1, 8, container=row[1])
        notices.show_notices()
    s = cached(("modern-shift", ids.numpy().tobytes(), layer, head, query, key),
               lambda: on_model_thread(shifted_scores, loaded.model, ids, layer, head, query, key, SHIFTS),
               _("The language model"), kind=Kind.ATTRIBUTION)
    st.latex(r"\text{2017: } (x_m + PE_m)W_Q \cdot (x_n + PE_n)W_K \qquad\quad "
             r"\text{RoPE: } R(m\theta)\,W_Q x_m \cdot R(n\theta)\,W_K x_n "
             r"= W_Q x_m \cdot R\big((n-m)\theta\big)W_K x_n")
    rotated, added = np.ptp(s.rotated), np.ptp(s.added)
    show_chart(shifted_spec(s.shifts, s.rotated, s.added, _("{query} looking at {key}, layer {layer} head {head}, "
                                                          "moved s positions further").format(
        query=tokens[query], key=tokens[key], layer=layer, head=head)), key="modern-shift")
    st.markdown(_("SmolLM2's own query of {query} (position {m}) and key of {key} (position {n}), in layer {layer} "
                  "head {head}. Rotated by RoPE, the pair moved by s = 0 to {last} positions keeps its score: "
                  "**{own:.4f}**, within **{rotated:.1e}** (float32 rounding); it is the model's own score. With "
                  "the sinusoidal table added to the same input instead, the same two words score from {low:.2f} "
                  "to {high:.2f}.").format(query=code(tokens[query]), key=code(tokens[key]), m=query, n=key,
                                           layer=layer, head=head, last=SHIFTS - 1, own=float(s.rotated[0]),
                                           rotated=rotated, low=float(s.added.min()), high=float(s.added.max())))
    st.caption(_("The spread of the added scores: {added:.2f}. RoPE's score depends only on n − m: a word's meaning "
                 "and its distance to another word, not where the pair sits in the text.").format(added=added))
    downloads.button(_("Download the scores (CSV)"), lambda: shifted_csv(s), "modern_rope_shift.csv", "text/csv")


def shifted_csv(s) -> bytes:
    lines = ["shift,rope_score,added_score"] + [f"{k},{r:.6f},{a:.6f}" for k, r, a in zip(s.shifts, s.rotated,
                                                                                           s.added)]
    return downloads.csv_lines(lines)


def norm(page: Page) -> None:
    loaded = llm(page)
    config = loaded.model.config
    with lecture.sidebar():
        ids, tokens = tokens_of(loaded, sentence(_("Text"), "mtext", DEFAULT_TEXT))  # its own box: see MAX_TOKENS
        row = st.columns(2)
        layer = state.int_slider(_("Layer"), "layer", 0, config.n_layer - 1, 13, container=row[0])
        query = state.int_slider(_("Token"), "query", 0, len(tokens) - 1, min(8, len(tokens) - 1), container=row[1])
        notices.show_notices()

    def compute():
        return norms_of(residual(loaded.model, ids, layer)[query])

    n = cached(("modern-norm", ids.numpy().tobytes(), layer, query), lambda: on_model_thread(compute),
               _("The language model"), kind=Kind.ATTRIBUTION)
    st.latex(r"\mathrm{LayerNorm}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}\cdot\gamma + \beta \qquad "
             r"\mathrm{RMSNorm}(x) = \frac{x}{\sqrt{\frac{1}{d}\sum_i x_i^2 + \epsilon}}\cdot\gamma")
    show_chart(norms_spec(n.x, n.layer_norm, n.rms_norm, _("The residual of {token} entering layer {layer}: "
                                                            "its first 64 of {d} dimensions").format(
        token=tokens[query], layer=layer, d=len(n.x))), key="modern-norm")
    st.markdown(_("This vector's mean is **{mean:.3f}**, its standard deviation {std:.3f}, its root mean square "
                  "{rms:.3f}. LayerNorm subtracts the mean, then divides by the deviation; RMSNorm only divides by "
                  "the root mean square: the mean stays (here {kept:.3f} after it), one reduction fewer. Both then "
                  "multiply by a learned gain γ (not drawn).").format(mean=n.mean, std=n.std, rms=n.rms,
                                                                      kept=float(n.rms_norm.mean())))


def ffn(page: Page) -> None:
    loaded = llm(page)
    config = loaded.model.config
    with lecture.sidebar():
        ids, tokens = tokens_of(loaded, sentence(_("Text"), "mtext", DEFAULT_TEXT))  # its own box: see MAX_TOKENS
        layer = state.int_slider(_("Layer"), "layer", 0, config.n_layer - 1, 13)
        notices.show_notices()
    g = cached(("modern-gates", ids.numpy().tobytes(), layer),
               lambda: on_model_thread(gates_of, loaded.model, ids, layer), _("The language model"),
               kind=Kind.ATTRIBUTION)
    edges, shares = g.histogram()
    units = g.gate.shape[1]
    show_chart(activations_spec(edges, shares, _("The three activations, over the {n} gate values of layer {layer} "
                                                 "on this text").format(n=f"{g.gate.size:,}", layer=layer)),
               key="modern-activations")
    st.latex(r"\begin{aligned}\text{2017: } & \max(0,\, xW_1 + b_1)\,W_2 + b_2 \\ \text{GPT-2: } & \mathrm{GELU}"
             r"(xW_1 + b_1)\,W_2 + b_2 \\ \text{SwiGLU: } & \big(\mathrm{SiLU}(xW_{gate}) \odot xW_{up}\big)\,W_{down}"
             r"\end{aligned}")  # below the chart: on a projector, the chart first and whole
    measured = g.shares()
    h = config.hidden_size
    st.markdown(_("In layer {layer}, **{below:.0%}** of SwiGLU's gates are below 0 on this text: ReLU would write "
                  "exactly 0 for them, GELU and SiLU a small negative number (SiLU's least is −0.278, at g = −1.28). "
                  "**{closed:.0%}** are nearly closed (|SiLU(g)| < 0.05). The second half, up, sets the sign: "
                  "{negative:.0%} of the products SiLU(g) × up are negative; a ReLU layer's activations never "
                  "are.").format(layer=layer, below=measured["below_zero"], closed=measured["closed"],
                                 negative=measured["negative_product"]))
    st.caption(_("Three matrices instead of two: SmolLM2's {units} = {ratio} × {h} hidden units make 3 × {h} × "
                 "{units} = {swiglu} parameters a layer; two matrices of f = 4h = {wide}, the 2017 and GPT-2 way, "
                 "make {classic}.").format(units=f"{units:,}", ratio=Fraction(units, h).limit_denominator(16), h=h,
                                           swiglu=f"{3 * h * units:,}", wide=f"{4 * h:,}",
                                           classic=f"{2 * h * 4 * h:,}"))
    strongest = g.strongest(UNITS)
    show_chart(gates_spec(g.opened[:, strongest], g.up[:, strongest], tokens, strongest,
                          _("SiLU(gate) of the {k} hidden units that wrote most, layer {layer}").format(
                              k=len(strongest), layer=layer)), key="modern-gates")
    downloads.button(_("Download the gates (CSV)"), lambda: gates_csv(g, tokens), "modern_swiglu_gates.csv",
                     "text/csv")


def gates_csv(g, tokens) -> bytes:
    """Every token's gate, up, SiLU(gate) and product for every hidden unit of the layer."""
    lines = ["position,token,unit,gate,up,silu_gate,product"]
    opened, product = g.opened, g.product
    for t, token in enumerate(tokens):
        lines += [f"{t},{downloads.csv_cell(token)},{u},{g.gate[t, u]:.5f},{g.up[t, u]:.5f},{opened[t, u]:.5f},"
                  f"{product[t, u]:.5f}" for u in range(g.gate.shape[1])]
    return downloads.csv_lines(lines)


def attention(page: Page) -> None:
    notices.show_notices()
    shapes = architectures()
    smol = next((s for s in shapes if s.name.startswith("SmolLM2")), None)
    if smol is not None:
        title = _("SmolLM2: {n} query heads read {g} key/value heads").format(n=smol.heads, g=smol.kv_heads)
        show_chart(sharing_spec(smol.heads, smol.kv_heads, title), key="modern-sharing")
        st.caption(_("Each query head (a column) reads the keys and values of one key/value head (a row): {group} "
                     "query heads share each, in order, so the cache keeps {g} keys and values a layer, not "
                     "{n}.").format(group=smol.heads // smol.kv_heads, g=smol.kv_heads, n=smol.heads))
    st.subheader(_("The key/value cache: what writing keeps for every token (bfloat16)"))
    rows = {_("model"): [], _("layers"): [], _("query heads"): [], _("key/value heads"): [], _("per token"): [],
            _("at {n} tokens").format(n="2,048"): [], _("at {n} tokens").format(n="8,192"): [],
            _("full multi-head at {n} tokens").format(n="8,192"): []}
    for s in shapes:
        values = [s.name, s.layers, s.heads, s.kv_heads, f"{s.bytes(1) / 1024:,.0f} KB",
                  f"{s.bytes(2048) / 2**20:,.0f} MB", f"{s.bytes(8192) / 2**20:,.0f} MB",
                  f"{s.bytes(8192, heads=s.heads) / 2**20:,.0f} MB"]
        for column, value in zip(rows, values):
            rows[column].append(value)
    st.dataframe(rows, hide_index=True, width="stretch")
    st.caption(_("2 (a key and a value) × layers × key/value heads × head dimension × 2 bytes, per token; computed "
                 "from each model's config (GPT-2 small's and Llama-3-8B's published ones, kept in the repository). "
                 "MiniLM is an encoder: it keeps no cache, the column says what one would hold."))


def view(page: Page) -> None:
    with lecture.sidebar():
        part = state.choice(_("Show"), "part", list(PARTS), "blocks", widget="segmented_control",
                            format_func={k: _(v) for k, v in PARTS.items()}.__getitem__)
    {"blocks": blocks, "positions": positions, "norm": norm, "ffn": ffn, "attention": attention,
     "costs": costs}[part](page)
