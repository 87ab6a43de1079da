"""Step by step: one layer and head of the encoder, from X to the FFN, each tensor a small heatmap with its shape."""
import io
import math
import re
from dataclasses import dataclass, field

import numpy as np
import streamlit as st
import torch

from locales import _
from model.family import Capability
from model.masks import is_blocked
from views.charts.mounted import show_chart
from views.pages.steps_notation import Notation
from views.shell import lecture
from views.shell.frame import Page
from views.widgets import downloads, notices, state
from views.widgets.pickers import first_head
from viz.labels import long_text_labels
from viz.matrix import matrix_spec, shape_label, window

MAX_ROWS = 64  # tokens shown per heatmap: beyond this a slider picks the window (keeps the page light at 512)
MAX_DIMS = 64  # columns shown for wide matrices (d_model, d_ff)
PER_ROW = 4  # at most this many heatmaps side by side
STEPS = 12
LECTURE_HEIGHT = 470  # a panel's height in lecture mode: the step's title and formula sit above it on the screen


@dataclass(frozen=True)
class Panel:
    """One matrix of a step: values (T, C) for all tokens; the page shows a window of it."""

    name: str
    symbols: str  # the symbolic shape, e.g. "T, d_k"
    values: np.ndarray  # (T, C)
    kind: str = "signed"  # or "probability"
    keys: bool = False  # columns are key tokens (else dimensions)
    start: int | None = None  # first dimension shown (None: the page's dimension slider)
    highlight: tuple[int, int] | None = None


@dataclass(frozen=True)
class View:
    """The part of every matrix the page shows: tokens row0..row1-1, dimensions from dim0."""

    labels: tuple[str, ...]  # one per token
    row0: int
    row1: int
    dim0: int
    only: int = 0  # lecture mode: the one step drawn (1..STEPS); 0: every step
    matrices: dict = field(default_factory=dict)  # every step's matrices, whole, by "N. name": the download


def npz(matrices: dict) -> bytes:
    """Every matrix of the steps, whole (every token and dimension), as NumPy arrays named "N. name"."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **matrices)
    return buf.getvalue()


def rows_of(t: torch.Tensor) -> np.ndarray:
    """(1, T, C) or (T, C) tensor -> (T, C) float32 numpy (a learned position table is a parameter: detach)."""
    return (t[0] if t.dim() == 3 else t).detach().numpy().astype(np.float32, copy=False)


def draw(shown: View, panel: Panel, container) -> None:
    """The panel's name and shape, then its heatmap (windowed to MAX_ROWS tokens and MAX_DIMS dimensions)."""
    T, width = panel.values.shape
    container.markdown(f"**{panel.name}** &nbsp; `{shape_label(panel.symbols, panel.values.shape)}`")  # name: _()'d
    if panel.keys:
        lo, hi, col_labels = 0, width, shown.labels
    else:
        lo, hi = window(width, shown.dim0 if panel.start is None else panel.start, MAX_DIMS)
        col_labels = None
    z = panel.values[shown.row0:shown.row1, lo:hi]  # (rows shown, columns shown)
    fig = matrix_spec(z, shown.labels[shown.row0:shown.row1], col_labels, kind=panel.kind, col_offset=lo,
                         highlight=panel.highlight, exact_cells=MAX_ROWS * MAX_DIMS)
    show_chart(fig, key=panel.name, container=container, lecture_height=LECTURE_HEIGHT,
               alt_name=_("{name}, one row per token").format(name=panel.name))
    rows, columns = (shown.row0, shown.row1) != (0, T), (lo, hi) != (0, width)
    if rows and columns:
        container.caption(_("Showing tokens {r0}–{r1} of {T}, dimensions {lo}–{hi} of {width}.").format(
            r0=shown.row0, r1=shown.row1 - 1, T=T, lo=lo, hi=hi - 1, width=width))
    elif rows:
        container.caption(_("Showing tokens {r0}–{r1} of {T}.").format(r0=shown.row0, r1=shown.row1 - 1, T=T))
    elif columns:
        container.caption(_("Showing dimensions {lo}–{hi} of {width}.").format(lo=lo, hi=hi - 1, width=width))


def step(shown: View, title: str, formula: str, panels: list[Panel], note: str = "") -> None:
    """A numbered step ("N. ..."): its title, its formula (st.latex), its matrices side by side. In lecture mode only
    the step chosen in the sidebar (shown.only) is drawn. Its matrices are kept for the download, drawn or not."""
    number = int(re.search(r"\d+", title).group())  # "N. ..." (a test's marked catalog wraps the title)
    shown.matrices.update({f"{number}. {panel.name}": panel.values for panel in panels})
    if shown.only and number != shown.only:
        return
    if not shown.only:
        st.divider()
    text_col, chart_col = st.columns([1, 3])
    text_col.markdown(f"## {title}")  # a section of the page: h2 under the title (heading levels in order)
    if note:
        text_col.caption(note)
    chart_col.latex(formula)
    if not panels:
        return
    per_row = math.ceil(len(panels) / math.ceil(len(panels) / PER_ROW))  # balanced rows: 5 -> 3 + 2
    for i in range(0, len(panels), per_row):
        for panel, col in zip(panels[i:i + per_row], chart_col.columns(per_row)):
            draw(shown, panel, col)


def view(page: Page) -> None:
    """The sliders, then the twelve steps of one layer and head."""
    run = page.run
    facts = page.model().facts
    T = len(run.tokens)
    labels = long_text_labels(run.tokens, MAX_ROWS)

    only = lecture.one_at_a_time(STEPS, _("Step"))
    first = first_head(page.choice, run.num_layers, run.num_heads)
    col1, col2 = lecture.controls(2)
    layer = state.int_slider(_("Layer"), "layer", 0, run.num_layers - 1, first[0], container=col1)
    head = state.int_slider(_("Head"), "head", 0, run.num_heads - 1, first[1], container=col2)
    lt = run.trace.layers[layer]
    attn, sa_block = lt.self_attn, lt.self_attn_block
    d_model, d_k, d_ff = facts.d_model, facts.head_dim, facts.d_ff
    col3, col4 = lecture.controls(2)
    row0 = state.int_slider(_("First token shown"), "row0", 0, max(0, T - MAX_ROWS), 0, container=col3,
                            help=_("Each heatmap shows at most {n} tokens.").format(n=MAX_ROWS))
    dim0 = state.int_slider(_("First dimension shown"), "dim0", 0, max(0, max(d_model, d_ff) - MAX_DIMS), 0,
                            container=col4, help=_("Wide matrices show {n} dimensions at a time.").format(n=MAX_DIMS))
    notices.show_notices()
    shown = View(labels, row0, min(T, row0 + MAX_ROWS), dim0, only)

    pre_ln, n = facts.norm_first, Notation.of(facts)
    sizes = dict(d_model=d_model, heads=run.num_heads, d_k=d_k, d_ff=d_ff, T=T)
    where = st.sidebar if only else st
    if facts.rms_norm:
        norms = _("**Pre-RMSNorm**: each sub-layer reads RMSNorm(x) = x / rms(x) · g (no mean taken away, no bias) "
                  "and adds its output to x: $y = x + f(\\mathrm{{RMSNorm}}(x))$. d_model = {d_model}, {heads} heads "
                  "of d_k = {d_k}, d_ff = {d_ff}, T = {T} tokens.")
    elif pre_ln:
        norms = _("**Pre-LN**: each sub-layer reads LayerNorm(x) and adds its output to x unnormalised: "
                  "$y = x + f(\\mathrm{{LN}}(x))$. d_model = {d_model}, {heads} heads of d_k = {d_k}, d_ff = {d_ff}, "
                  "T = {T} tokens.")
    else:
        norms = _("**Post-LN**: each sub-layer reads x; the sum is normalised after: $y = \\mathrm{{LN}}(x + f(x))$. "
                  "d_model = {d_model}, {heads} heads of d_k = {d_k}, d_ff = {d_ff}, T = {T} tokens.")
    where.info(norms.format(**sizes))
    input_step(shown, run, layer, sa_block, facts)
    attention_steps(shown, attn, sa_block, head, pre_ln, n)
    output_steps(shown, run, layer, facts, n)
    # the heatmaps' numbers, every token and dimension (the charts show a window of them)
    downloads.button(_("Download every matrix of these steps (NumPy .npz)"), lambda: npz(shown.matrices),
                     f"matrices_layer{layer}_head{head}.npz", "application/octet-stream", where)


def input_step(shown: View, run, layer: int, sa_block, facts) -> None:
    """1: the embeddings (layer 0), or the previous layer's output."""
    bert = facts.embedding_norm
    emb = run.trace.embeddings
    if layer == 0 and emb is not None:
        panels = [Panel(_("token embedding"), "T, d_model", rows_of(emb.token))]
        if emb.token_type is not None:
            panels.append(Panel(_("segment embedding"), "T, d_model", rows_of(emb.token_type)))
        panels += [Panel(_("position"), "T, d_model", rows_of(emb.position)),
                   Panel(_("sum"), "T, d_model", rows_of(emb.summed)), Panel("X", "T, d_model", rows_of(emb.output))]
        # bert (facts.embedding_norm): LayerNorm of the sum; a GPT adds the two as they are; the others scale the
        # tokens by sqrt(d_model)
        formula = (r"X = \mathrm{LayerNorm}(E_{\text{tok}} + E_{\text{seg}} + E_{\text{pos}})" if bert
                   else r"X = E_{\text{tok}} + E_{\text{pos}}" if not facts.token_scale
                   else r"X = \sqrt{d_{\text{model}}}\,E_{\text{tok}} + PE")
        note = (_("BERT learns its position embeddings.") if bert else
                _("GPT-2 learns its position embeddings and adds the token embedding as it is.")
                if not facts.token_scale else "")
        step(shown, _("1. X: token embedding + position"), formula, panels, note)
    else:
        step(shown, _("1. X: the input of layer {layer}").format(layer=layer),
             rf"X = Z_{{{layer - 1}}}" if layer else r"X = E", [Panel("X", "T, d_model", rows_of(sa_block.input))],
             _("The output Z of layer {previous}.").format(previous=layer - 1) if layer else
             _("The embedded tokens: no position is added, RoPE turns q and k by position in every layer (step 2).")
             if facts.positional == "rotary" else _("The embedded tokens."))


def attention_steps(shown: View, attn, sa_block, head: int, pre_ln: bool, n: Notation) -> None:
    """2-10: one head's Q, K, V, scores, mask, softmax and A V; the heads concatenated, W_O, Add (& Norm)."""
    T, d_model, d_k = attn.output.shape[-2], attn.output.shape[-1], attn.q.shape[-1]  # (1, T, d_model), (1, h, T, d_k)
    x_in = rf"{n.norm}(X)" if pre_ln else "X"
    qkv = [Panel(_("{name} (head {head})").format(name=m, head=head), "T, d_k", rows_of(part[0, head])) for m, part in
           (("Q", attn.q), ("K", attn.k), ("V", attn.v))]
    if pre_ln:
        qkv.insert(0, Panel(f"{n.name}(X)", "T, d_model", rows_of(sa_block.sublayer_in)))
    kv = head // n.group
    projections = [(m, rf"{x_in}\,W_{m}^{{({head if m == 'Q' else kv})}}{n.b(m)}") for m in "QKV"]
    note = _("Head {head} uses columns {first}–{last} of the full projections.").format(
        head=head, first=head * d_k, last=(head + 1) * d_k - 1)
    if n.group > 1:
        note = _("Head {head} uses columns {first}–{last} of W_Q; its K and V are key/value head {kv}'s (columns "
                 "{kv_first}–{kv_last} of W_K and W_V), shared by query heads {a}–{b}.").format(
            head=head, first=head * d_k, last=(head + 1) * d_k - 1, kv=kv, kv_first=kv * d_k,
            kv_last=(kv + 1) * d_k - 1, a=kv * n.group, b=(kv + 1) * n.group - 1)
    if n.rotary:
        note += " " + _("Q and K are shown rotated (RoPE): in the row of position m, the pair of dimensions (i, i + "
                        "d_k/2) turned by the angle m × θᵢ.")
    step(shown, _("2. Q, K, V of the head"),
         # each equation whole; a narrow column breaks the line between them (views/shell/formulas.py)
         r",\quad\allowbreak ".join(rf"{{{m} = \mathrm{{RoPE}}({p})}}" if n.rotary and m != "V" else rf"{{{m} = {p}}}"
                                    for m, p in projections), qkv, note)

    scaled = rows_of(attn.scores[0, head])  # (T, T) q.k * scale
    raw = scaled / np.float32(attn.scale)  # (T, T) q.k
    mask = None if attn.mask is None else np.broadcast_to(attn.mask.numpy(), attn.scores.shape)[0, head]  # (T, T)
    step(shown, _("3. Scores Q Kᵀ"), r"S = Q K^\top", [Panel("Q Kᵀ", "T, T", raw, keys=True)])
    step(shown, _("4. Scaled by 1/√d_k"), rf"S / \sqrt{{d_k}} = S \times {attn.scale:.4g}",
         [Panel("Q Kᵀ / √d_k", "T, T", scaled, keys=True)])
    masked = scaled if mask is None else np.where(is_blocked(mask), np.nan, scaled + mask)  # (T, T) blocked -> NaN gap
    # Without a mask S' is the matrix of step 4, bit for bit: not drawn (and sent) twice.
    step(shown, _("5. Plus the mask"), r"S' = \frac{Q K^\top}{\sqrt{d_k}} + M,\quad M_{ij} \in \{0, -\infty\}",
         [] if mask is None else [Panel("+ M", "T, T", masked, keys=True)],
         _("No mask here (no padding): M = 0 and the scores pass unchanged, so S' is the matrix of step 4.")
         if mask is None else _("Blocked cells (-inf) are gaps."))
    step(shown, _("6. Softmax of each row"), r"A = \mathrm{softmax}(S'), \quad \textstyle\sum_j A_{ij} = 1",
         [Panel("A", "T, T", rows_of(attn.probs[0, head]), kind="probability", keys=True)])
    step(shown, _("7. Times V: the head's output"), rf"\mathrm{{head}}_{{{head}}} = A V",
         [Panel(_("head {head} = A V").format(head=head), "T, d_k", rows_of(attn.context[0, head]))])

    concat = rows_of(attn.context[0].transpose(0, 1).reshape(T, d_model))  # (nh, T, d_k) -> (T, nh * d_k)
    lo = head * d_k
    step(shown, _("8. Concatenate the heads"), r"\mathrm{Concat}(\mathrm{head}_0, \dots, \mathrm{head}_{h-1})",
         [Panel(_("concat"), "T, d_model", concat, start=lo, highlight=(lo, lo + d_k))],
         _("The box marks head {head}'s columns {first}–{last}.").format(head=head, first=lo, last=lo + d_k - 1))
    step(shown, _("9. Output projection W_O"), rf"\mathrm{{MHA}} = \mathrm{{Concat}}(\dots)\,W_O{n.b('O')}",
         [Panel(_("MHA output"), "T, d_model", rows_of(attn.output))])

    if pre_ln:
        step(shown, _("10. Add (Pre-LN: no norm after)"), rf"Y = X + \mathrm{{MHA}}({n.norm}(X))",
             [Panel("Y = X + MHA", "T, d_model", rows_of(sa_block.output))])
    else:
        step(shown, _("10. Add & Norm"), r"Y = \mathrm{LayerNorm}(X + \mathrm{MHA}(X))",
             [Panel("X + MHA", "T, d_model", rows_of(sa_block.residual)),
              Panel("Y", "T, d_model", rows_of(sa_block.output))])


def output_steps(shown: View, run, layer: int, facts, n: Notation) -> None:
    """11-12: the feed-forward network and the layer's output."""
    lt = run.trace.layers[layer]
    ffn_block = lt.ffn_block
    pre_ln = facts.norm_first
    act = facts.activation.upper()
    y_in = rf"{n.norm}(Y)" if pre_ln else "Y"
    hidden = _("hidden = {activation}(gate) ⊙ up").format(activation=act) if n.gated else _(
        "hidden = {activation}(…)").format(activation=act)
    ffn = [Panel(hidden, "T, d_ff", rows_of(lt.ffn_hidden)),
           Panel(_("FFN output"), "T, d_model", rows_of(ffn_block.sublayer_out))]
    if lt.ffn_gate is not None:  # a gated FFN's two halves, before they meet
        ffn[:0] = [Panel(_("gate (before {activation})").format(activation=act), "T, d_ff", rows_of(lt.ffn_gate)),
                   Panel("up", "T, d_ff", rows_of(lt.ffn_up))]
    if pre_ln:
        ffn.insert(0, Panel(f"{n.name}(Y)", "T, d_model", rows_of(ffn_block.sublayer_in)))
    gate, up, down = (rf"W_{{\text{{{w}}}}}" for w in ("gate", "up", "down"))
    formula = (rf"\mathrm{{FFN}} = \big(\mathrm{{{act}}}({y_in}\,{gate}) \odot {y_in}\,{up}\big)\,{down}"
               if n.gated else rf"\mathrm{{FFN}} = \mathrm{{{act}}}({y_in}\,W_1{n.b('1')})\,W_2{n.b('2')}")
    step(shown, _("11. Feed-forward network"), formula, ffn,
         _("SwiGLU: the gate, through SiLU, scales the up projection element by element.") if n.gated else "")
    if pre_ln:
        last = layer == run.num_layers - 1 and facts.final_norm
        step(shown, _("12. Add: the layer's output"), rf"Z = Y + \mathrm{{FFN}}({n.norm}(Y))",
             [Panel("Z", "T, d_model", rows_of(ffn_block.output))]
             + ([Panel(_("final {norm}(Z)").format(norm=n.name), "T, d_model", rows_of(run.trace.output))]
                if last else []),
             (_("A Pre-RMSNorm stack ends with one more RMSNorm after the last layer.") if facts.rms_norm else
              _("A Pre-LN stack ends with one more LayerNorm after the last layer.")) if last else "")
    else:
        step(shown, _("12. Add & Norm: the layer's output"), r"Z = \mathrm{LayerNorm}(Y + \mathrm{FFN}(Y))",
             [Panel("Y + FFN", "T, d_model", rows_of(ffn_block.residual)),
              Panel("Z", "T, d_model", rows_of(ffn_block.output))])
    (st.sidebar if shown.only else st).caption(
        _("Z is the input of layer {next}.").format(next=layer + 1) if layer < run.num_layers - 1
        else _("RMSNorm(Z) times the output matrix gives each position's next-token scores.")
        if facts.can(Capability.GENERATION) and facts.rms_norm
        else _("LN(Z) times the token embedding (the tied output) gives each position's next-word scores.")
        if facts.can(Capability.GENERATION) else _("Z is the encoder's output."))
