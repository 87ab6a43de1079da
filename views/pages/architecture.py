"""Architecture: what the random model is made of, what each module costs, and the tensor shape at every step."""
import pandas as pd
import streamlit as st

from locales import _
from model.bert import BertConfig
from model.kinds import SourceKey
from model.loading.sources import DEFAULT_KEY, RANDOM_KEY, RandomConfig
from model.stats import Shape, kv_cache_bytes
from runtime.models import Choice, loaded_model, sources
from views.charts.mounted import streamlit_chart
from views.shell import lecture
from views.shell.errors import or_stop
from views.shell.frame import Page
from views.shell.reading import run as run_of
from views.widgets import notices
from views.widgets.pickers import random_config
from viz.architecture import (
    cost_bars_spec,
    cost_columns,
    cost_table,
    decoder_module_costs,
    module_costs,
    shape_steps,
)


def requested_heads() -> str | None:
    """The raw ?heads= of the link, when this run will read it (before the widget owns the value)."""
    return st.query_params.get("heads") if "heads" not in st.session_state else None


def explain_heads(raw: str | None, config: RandomConfig) -> None:
    """A head count from the link that does not divide d_model: say why it was not used."""
    try:
        asked = int(raw)
    except (TypeError, ValueError):
        return  # no ?heads=, or not a number (views.widgets.state has said so)
    if asked >= 1 and config.d_model % asked:
        notices.notice(_("{asked} heads do not divide d_model = {d_model}: each head gets d_model / heads dimensions, "
                       "so the head count must divide d_model. Using {heads} heads.").format(
            asked=asked, d_model=config.d_model, heads=config.nhead))


def show_table(costs) -> None:
    """The cost table with thousands separators and a blank count in the total row. The browser writes the
    separators (its locale's: "localized"), where a pandas Styler took 5 ms a table on every rerun."""
    table, column = cost_table(costs), cost_columns()
    table[column["count"]] = [("" if pd.isna(n) else str(n)) for n in table[column["count"]]]
    numbers = st.column_config.NumberColumn(format="localized")
    st.dataframe(table, hide_index=True, column_config={column["module"]: st.column_config.TextColumn(width="medium"),
                                                        column["parameters"]: numbers, column["flops"]: numbers})


def latex_number(n: int) -> str:
    return f"{n:,}".replace(",", "{,}")


def show_formulas(costs, symbols: str) -> None:
    """Each module's formulas with their values, parameters then FLOPs, the symbols first: a list of modules, each
    formula inline (it wraps in a narrow column; an aligned block did not and scrolled sideways, out of a keyboard's
    reach)."""
    st.caption(symbols)
    for heading, formula, value in ((_("**Parameters of one module**"), "param_formula", "params_each"),
                                    (_("**FLOPs (one forward pass) of one module**"), "flop_formula", "flops_each")):
        lines = [f"- {_(c.module)} (× {c.count}): ${getattr(c, formula)} = {latex_number(getattr(c, value))}$"
                 for c in costs if getattr(c, value)]
        st.markdown("\n".join([heading, "", *lines]))


def show_costs(costs, counted: int, check: str, symbols: list[str], title: str, formulas_open: bool) -> None:
    """Table, the sum checked against a count made otherwise (`check` says by whom: {ours} and {counted} in it), bar
    chart and formulas of one model."""
    if lecture.on():  # in front of a class the chart comes first
        streamlit_chart(cost_bars_spec(costs, title), "costs")
    show_table(costs)
    ours = sum(c.params for c in costs)
    line = check.format(ours=f"{ours:,}", counted=f"{counted:,}")
    if ours == counted:
        st.success(line, icon=":material/check_circle:")
    else:
        st.error(line, icon=":material/cancel:")
    if not lecture.on():
        streamlit_chart(cost_bars_spec(costs, title), "costs")
    note = _("{symbols}; one sentence (b = 1); a multiply-add is 2 FLOPs; lookups and norms count 0 FLOPs (no "
             "matrix multiply).").format(symbols=_(", ").join(symbols))
    with st.expander(_("The formulas, with these numbers"), expanded=formulas_open):
        show_formulas(costs, note)


def encoder_costs(shape: Shape, seq_len: int, model, title: str, formulas_open: bool) -> None:
    """show_costs of an encoder (the random model, MiniLM) on seq_len tokens."""
    symbols = [_("h = d_model = {h}").format(h=shape.d_model), _("f = d_ff = {f}").format(f=shape.d_ff),
               _("l = {l} tokens").format(l=seq_len),
               _("V = {V} words in the vocabulary").format(V=f"{shape.vocab_size:,}")]
    if shape.learned_positions:
        symbols.append(_("P = {P} learned positions").format(P=shape.learned_positions))
    if shape.token_types:
        symbols.append(_("T = {T} segment types").format(T=shape.token_types))
    show_costs(module_costs(shape, seq_len), sum(p.numel() for p in model.parameters()),
               _("Sum of the parameters = {ours}; PyTorch counts sum(p.numel()) = {counted}"), symbols, title,
               formulas_open)


def random_shape(loaded, config: RandomConfig) -> Shape:
    return Shape.from_text_encoder(loaded.facts.vocab_size, config.d_model, config.d_ff, config.num_layers,
                                   config.norm_first, config.positional, config.max_len)


def show_pretrained(seq_len: int) -> None:
    """The packaged MiniLM beside the random model, when it is installed."""
    source = next((s for s in sources() if s.key == DEFAULT_KEY), None)
    if source is None or not source.available:
        st.info(_("The pretrained model is not available here: {reason}.").format(
            reason=source.reason if source else _("not listed")))
        return
    loaded = or_stop(_("The pretrained model"), loaded_model, Choice(DEFAULT_KEY))
    bert = loaded.model
    shape = Shape.from_bert(bert.config, pooler=bert.pooler is not None, mlm_head=bert.mlm_head is not None)
    st.caption(_("{summary}.").format(summary=loaded.facts.summary()))
    encoder_costs(shape, min(seq_len, loaded.facts.max_positions), bert,
                  _("Parameters and FLOPs of {model}").format(model="all-MiniLM-L6-v2"), formulas_open=False)


def show_llm(seq_len: int) -> None:
    """SmolLM2's block, today's (grouped-query attention, SwiGLU, RMSNorm), from its metadata alone (no weight
    read): its costs, and the key/value cache that grouped-query attention shrinks."""
    source = next((s for s in sources() if s.key == SourceKey.SMOLLM2), None)
    if source is None or not source.available or source.shape is None:
        st.info(_("The pretrained LLM is not available here: {reason}.").format(
            reason=source.reason if source else _("not listed")))
        return
    shape, counted = or_stop(_("The pretrained LLM"), source.shape)
    n, g, d = shape.heads, shape.kv_heads, shape.head_dim
    st.caption(_("{layers} layers; {n} query heads over {g} key/value heads of d = {d} dimensions (each key/value "
                 "head serves {share} query heads); d_model {h}, d_ff {f}; SwiGLU, RMSNorm, rotary positions (no "
                 "position table), no biases.").format(layers=shape.layers, n=n, g=g, d=d, share=n // g,
                                                       h=shape.d_model, f=shape.d_ff))
    symbols = [_("h = d_model = {h}").format(h=shape.d_model), _("f = d_ff = {f}").format(f=shape.d_ff),
               _("l = {l} tokens").format(l=seq_len),
               _("V = {V} words in the vocabulary").format(V=f"{shape.vocab_size:,}"),
               _("n = {n} query heads, g = {g} key/value heads, d = {d} dimensions a head").format(n=n, g=g, d=d)]
    show_costs(decoder_module_costs(shape, seq_len), counted,
               _("Sum of the parameters = {ours}; its checkpoint's tensors hold {counted}"), symbols,
               _("Parameters and FLOPs of {model}").format(model="SmolLM2-135M-Instruct"), formulas_open=False)
    st.subheader(_("The key/value cache: what writing a long answer keeps"))
    columns = [_("attention"), _("per token"), _("at {n} tokens").format(n="2,048"),
               _("at {n} tokens").format(n="8,192")]
    rows = []
    for label, heads in ((_("grouped-query: {g} key/value heads").format(g=g), g),
                         (_("full multi-head: {n} key/value heads").format(n=n), n)):
        sizes = [kv_cache_bytes(shape.layers, heads, d, tokens) for tokens in (1, 2048, 8192)]
        rows.append([label, f"{sizes[0] / 1024:,.0f} KB", *(f"{b / 2**20:,.0f} MB" for b in sizes[1:])])
    st.dataframe(pd.DataFrame(rows, columns=columns), hide_index=True)
    st.caption(_("A key and a value of d numbers per key/value head per layer, for every token written so far "
                 "(float32; bfloat16 halves it): 2 × {layers} × g × {d} × 4 bytes a token. Sharing each key/value head "
                 "among {share} query heads makes it {share} times smaller, for the same number of query heads.")
               .format(layers=shape.layers, d=d, share=n // g))


def view(page: Page) -> None:
    config_column, main = (st.sidebar, st.container()) if lecture.on() else st.columns([1, 3], gap="large")
    config_column.header(_("Random model"))
    raw_heads = requested_heads()
    config = random_config(config_column)
    explain_heads(raw_heads, config)
    choice = Choice(RANDOM_KEY, config)
    run = run_of(choice, page.text)
    loaded = page.model(choice)
    seq_len = len(run.tokens)

    with main:
        notices.show_notices()  # at the top of the results, beside the sliders that caused them
        st.header(_("Parameters and FLOPs: random model, {layers} layers × {heads} heads").format(
            layers=config.num_layers, heads=config.nhead))
        positions = _("learned positions") if config.positional == "learned" else _("sinusoidal positions")
        st.caption(_("d_model {d_model}, d_ff {d_ff}, {activation}, {norm}, {positions}, for this sentence of {n} "
                     "tokens.").format(d_model=config.d_model, d_ff=config.d_ff, activation=config.activation.upper(),
                                       norm="Pre-LN" if config.norm_first else "Post-LN", positions=positions,
                                       n=seq_len))
        encoder_costs(random_shape(loaded, config), seq_len, loaded.model,
                      _("Parameters and FLOPs of the random model"), formulas_open=True)

        st.header(_("The tensor shape at every step, for this sentence ({n} tokens)").format(n=seq_len))
        st.caption(_("Read from the recorded forward pass. B = 1 sentence, T = {n} tokens, d = {d}, h = {h} heads, "
                     "d_k = d / h = {d_k}, d_ff = {d_ff}.").format(n=seq_len, d=config.d_model, h=config.nhead,
                                                                  d_k=config.d_model // config.nhead,
                                                                  d_ff=config.d_ff))
        st.dataframe(shape_steps(run.trace, config.norm_first), hide_index=True, height="content")

        st.header(_("For comparison: the pretrained all-MiniLM-L6-v2"))
        show_pretrained(seq_len)
        st.header(_("Today's block: SmolLM2-135M-Instruct"))
        show_llm(seq_len)
        with st.expander(_("Reference: bert-base (12 layers × 12 heads, d_model 768, d_ff 3072)")):
            show_table(module_costs(Shape.from_bert(BertConfig()), seq_len))
            st.caption(_("By the same formulas, with the pooler; Hugging Face's bert-base-uncased has 109,482,240."))
