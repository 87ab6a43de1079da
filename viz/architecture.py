"""What a Transformer is made of: parameters and FLOPs per module, and the tensor shape at every step.

Pure: a model.stats.Shape or a recorded trace in, tables (pandas) and plotly figures out.
Counts are for a batch of one sentence (b = 1); a multiply-add is 2 FLOPs, as in model/stats.py.
"""
from dataclasses import dataclass

import numpy as np
import pandas as pd

from locales import N_, _
from model import stats
from viz.colours import NEGATIVE, POSITIVE
from viz.spec import FigureSpec, subplots_layout


@dataclass(frozen=True)
class ModuleCost:
    """One kind of module: how many the model has, and what each one costs."""

    module: str  # English, marked with N_(): translated where shown (cost_table, cost_bars_spec, the formulas)
    count: int
    params_each: int
    flops_each: int  # matmul FLOPs of one forward pass (lookups and norms: 0)
    param_formula: str  # LaTeX, in h = d_model, f = d_ff, l = tokens, V = vocabulary, P = positions, T = segments
    flop_formula: str

    @property
    def params(self) -> int:
        return self.count * self.params_each

    @property
    def flops(self) -> int:
        return self.count * self.flops_each


def _embedding_formula(s: stats.Shape) -> str:
    terms = [t for t, n in (("Vh", s.vocab_size), ("Ph", s.learned_positions), ("Th", s.token_types)) if n]
    return " + ".join(terms)


def module_costs(s: stats.Shape, seq_len: int, tgt_len: int | None = None) -> list[ModuleCost]:
    """Rows whose parameters sum to stats.param_counts(s) and whose FLOPs sum to stats.flops(s, seq_len)."""
    h, f, l, V = s.d_model, s.d_ff, seq_len, s.vocab_size
    t = l if tgt_len is None else tgt_len
    enc, dec = s.encoder_layers, s.decoder_layers
    attn, ffn = stats.attention_params(h, s.bias), stats.ffn_params(h, f, s.bias)
    attn_p = stats.FORMULAS["attention params"] if s.bias else "4h^2"
    ffn_p = stats.FORMULAS["ffn params"] if s.bias else "2hf"
    norms = 2 * enc + 3 * dec + s.final_norms + (1 if s.embedding_norm else 0)
    rows = [
        ModuleCost(N_("token / position embeddings"), 1, (V + s.learned_positions + s.token_types) * h, 0,
                   _embedding_formula(s), "0"),
        ModuleCost(N_("encoder self-attention") if dec else N_("self-attention"), enc, attn,
                   stats.attention_flops(h, l, l), attn_p, r"4\,l\,h\,(2h + l)"),
        ModuleCost(N_("decoder masked self-attention"), dec, attn, stats.attention_flops(h, t, t), attn_p,
                   r"4\,t\,h\,(2h + t)"),
        ModuleCost(N_("cross-attention"), dec, attn, stats.attention_flops(h, t, l), attn_p,
                   r"2h\,(2th + 2lh + 2tl)"),
        ModuleCost(N_("encoder feed-forward") if dec else N_("feed-forward"), enc, ffn, stats.ffn_flops(h, f, l),
                   ffn_p, r"4\,l\,h\,f"),
        ModuleCost(N_("decoder feed-forward"), dec, ffn, stats.ffn_flops(h, f, t), ffn_p, r"4\,t\,h\,f"),
        ModuleCost(N_("LayerNorm"), norms, stats.layer_norm_params(h, s.bias), 0,
                   stats.FORMULAS["layernorm params"] if s.bias else "h", "0"),
        ModuleCost(N_("pooler"), int(s.pooler), h * h + h, 2 * h * h, "h^2 + h", "2h^2"),
        ModuleCost(N_("masked-LM head (tied output)"), int(s.mlm_head), h * h + 3 * h + V, 2 * l * h * (h + V),
                   "h^2 + 3h + V", r"2\,l\,h\,(h + V)"),
    ]
    return [r for r in rows if r.count and (r.params_each or r.flops_each)]


def decoder_module_costs(s: stats.DecoderShape, seq_len: int) -> list[ModuleCost]:
    """Today's LLM block, in n = query heads, g = key/value heads, d = head size: rows whose parameters sum to the
    model's (tests/model/test_stats.py) and whose FLOPs are its matmuls on seq_len tokens."""
    h, f, l, V, n, g, d = s.d_model, s.d_ff, seq_len, s.vocab_size, s.heads, s.kv_heads, s.head_dim
    rows = [
        ModuleCost(N_("token embedding"), 1, V * h, 0, "Vh", "0"),
        ModuleCost(N_("grouped-query self-attention"), s.layers, stats.grouped_attention_params(h, n, g, d),
                   stats.grouped_attention_flops(h, n, g, d, l), stats.FORMULAS["grouped attention params"],
                   stats.FORMULAS["grouped attention flops"]),
        ModuleCost(N_("SwiGLU feed-forward"), s.layers, stats.swiglu_params(h, f), stats.swiglu_flops(h, f, l),
                   stats.FORMULAS["swiglu params"], stats.FORMULAS["swiglu flops"]),
        ModuleCost(N_("RMSNorm"), 2 * s.layers + 1, h, 0, "h", "0"),
        ModuleCost(N_("output (tied to the token embedding)") if s.tied else N_("output"), 1, 0 if s.tied else V * h,
                   2 * l * h * V, "0" if s.tied else "Vh", r"2\,l\,h\,V"),
    ]
    return [r for r in rows if r.count and (r.params_each or r.flops_each)]


def plain(latex: str) -> str:
    """A LaTeX formula as plain text for a table cell."""
    return latex.replace(r"\,", "").replace(r"\;", " ").replace("^2", "²")


def cost_columns() -> dict[str, str]:
    """The cost table's columns by role: their headers in the current language."""
    return {"module": _("module"), "count": _("count"), "params formula": _("params formula (each)"),
            "parameters": _("parameters"), "flops formula": _("FLOPs formula (each)"), "flops": _("FLOPs")}


def cost_table(costs: list[ModuleCost]) -> pd.DataFrame:
    """One row per module and a total row: how many, parameters and FLOPs with the formula of one module.
    Headers and module names in the current language (cost_columns())."""
    rows = [{"module": _(c.module), "count": c.count, "params formula": plain(c.param_formula),
             "parameters": c.params, "flops formula": plain(c.flop_formula), "flops": c.flops}
            for c in costs]
    rows.append({"module": _("total"), "count": None, "params formula": "",
                 "parameters": sum(c.params for c in costs), "flops formula": "",
                 "flops": sum(c.flops for c in costs)})
    table = pd.DataFrame(rows)
    table["count"] = table["count"].astype("Int64")  # whole numbers, blank in the total row
    return table.rename(columns=cost_columns())


def human(n: float) -> str:
    """12_345_678 -> '12.3M'."""
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g}{unit}"
    return f"{n:g}"


# viz.colours' blue and orange: dark enough for the white number plotly writes inside a bar, 5.9:1 and 4.9:1 (plotly's
# #636efa and #ef553b: 4.1:1 and 3.5:1)
PARAMS_COLOUR, FLOPS_COLOUR = NEGATIVE, POSITIVE


def cost_bars_spec(costs: list[ModuleCost], title: str = "") -> FigureSpec:
    """Parameters and FLOPs per module, side by side, as horizontal bars: plotly's dicts (viz.spec), on the axes
    make_subplots lays out (viz.spec.subplots_layout: make_subplots and the checked bars took 10 ms a chart, and the
    architecture page draws two on every move of a slider)."""
    names = [_(c.module) for c in costs]
    params = np.array([c.params for c in costs], dtype=np.float64)
    flops = np.array([c.flops for c in costs], dtype=np.float64)
    layout = subplots_layout(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                             subplot_titles=(_("parameters"), _("FLOPs, one forward pass")))
    bars = []
    for axis, values, colour, what, hover in (
            ("", params, PARAMS_COLOUR, _("parameters"), _("%{y}<br>parameters: %{x:,}")),
            ("2", flops, FLOPS_COLOUR, _("FLOPs"), _("%{y}<br>FLOPs: %{x:,}"))):
        bars.append({"type": "bar", "x": values, "y": names, "orientation": "h", "marker": {"color": colour},
                     "name": what, "text": [human(v) for v in values], "textposition": "auto", "cliponaxis": False,
                     "hovertemplate": hover + "<extra></extra>", "xaxis": "x" + axis, "yaxis": "y" + axis})
        layout["yaxis" + axis] = {**layout["yaxis" + axis], "autorange": "reversed"}
    layout.update(title={"text": title}, showlegend=False, height=90 + 34 * len(costs),
                  margin={"l": 10, "r": 30, "t": 60 if title else 40, "b": 10})
    return FigureSpec(bars, layout)


def _dims(shape) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


def shape_steps(trace, norm_first: bool = False) -> pd.DataFrame:
    """Step -> tensor shape, read from a recorded encoder trace (model.trace.StackTrace, batch of 1); layers from 0.
    Steps and headers in the current language."""
    steps = []

    def add(step, tensor_shape, symbols):
        steps.append({_("step"): step, _("shape"): _dims(tensor_shape), _("in symbols"): symbols})

    emb = trace.embeddings
    if emb is not None:
        add(_("input ids"), emb.token.shape[:2], "(B, T)")
        add(_("token embedding"), emb.token.shape, "(B, T, d)")
        add(_("position encoding"), emb.position.shape, "(1, T, d)")
        if emb.token_type is not None:
            add(_("segment (token type) embedding"), emb.token_type.shape, "(B, T, d)")
        add(_("token + position"), emb.summed.shape, "(B, T, d)")
        add(_("embedding output = layer 0 input"), emb.output.shape, "(B, T, d)")
    first, n = trace.layers[0], len(trace.layers)
    a = first.self_attn
    if norm_first:
        add(_("layer 0: LayerNorm before attention"), first.self_attn_block.sublayer_in.shape, "(B, T, d)")
    add(_("layer 0: Q = x W_Q, split into heads"), a.q.shape, "(B, h, T, d_k)")
    add(_("layer 0: K = x W_K"), a.k.shape, "(B, h, T, d_k)")
    add(_("layer 0: V = x W_V"), a.v.shape, "(B, h, T, d_k)")
    add(_("layer 0: scores Q Kᵀ / √d_k"), a.scores.shape, "(B, h, T, T)")
    add(_("layer 0: softmax probabilities"), a.probs.shape, "(B, h, T, T)")
    add(_("layer 0: context = probs · V"), a.context.shape, "(B, h, T, d_k)")
    B, heads, T, head_dim = a.context.shape
    add(_("layer 0: concatenate heads"), (B, T, heads * head_dim), "(B, T, h·d_k) = (B, T, d)")
    add(_("layer 0: × W_O"), a.output.shape, "(B, T, d)")
    add(_("layer 0: Add (residual)") if norm_first else _("layer 0: Add & Norm"), first.self_attn_block.output.shape,
        "(B, T, d)")
    add(_("layer 0: FFN hidden = act(x W_1)"), first.ffn_hidden.shape, "(B, T, d_ff)")
    add(_("layer 0: FFN output = hidden W_2"), first.ffn_block.sublayer_out.shape, "(B, T, d)")
    add(_("layer 0: Add (residual) = layer output") if norm_first else _("layer 0: Add & Norm = layer output"),
        first.output.shape, "(B, T, d)")
    if n == 2:
        add(_("layer 1: the same steps"), trace.layers[-1].output.shape, "(B, T, d)")
    elif n > 2:
        add(_("layers 1–{last}: the same steps").format(last=n - 1), trace.layers[-1].output.shape, "(B, T, d)")
    add(_("final LayerNorm = model output") if norm_first else _("model output"), trace.output.shape, "(B, T, d)")
    return pd.DataFrame(steps)
