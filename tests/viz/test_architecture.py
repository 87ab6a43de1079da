"""Cost tables, bar charts and shape steps of the architecture page, with plain shapes and a tiny trace."""
import re

import numpy as np
import pytest
import torch

from model import TextConfig, TextEncoder
from model.bert import BertConfig
from model.stats import Shape, flops, param_counts
from viz.architecture import cost_bars_spec, cost_table, human, module_costs, plain, shape_steps

SHAPES = {
    "random encoder": Shape.from_text_encoder(30522, 128, 512, 2, False, "sinusoidal", 512),
    "pre-LN learned": Shape.from_text_encoder(50, 24, 40, 3, True, "learned", 20),
    "bert-base": Shape.from_bert(BertConfig()),
    "bert + mlm": Shape.from_bert(BertConfig(hidden_size=32, intermediate_size=37, vocab_size=99), False, True),
    "nn.Transformer": Shape.from_transformer(32, 64, 2, 3),
}


def evaluate(latex: str, **values) -> int:
    """The shown formula as arithmetic: '4h^2 + 4h' with h=2 -> 24 (implicit products made explicit)."""
    expr = plain(latex).replace("²", "**2").replace(" ", "")
    expr = re.sub(r"(?<=[\w)])(?=[A-Za-z(])", "*", expr)  # 4h -> 4*h, h(...) -> h*(...), hf -> h*f
    return eval(expr, {}, values)  # noqa: S307 - our own formula strings


@pytest.mark.parametrize("name", SHAPES)
def test_rows_sum_to_the_stats_totals(name):
    s = SHAPES[name]
    costs = module_costs(s, seq_len=14, tgt_len=9 if s.decoder_layers else None)
    assert sum(c.params for c in costs) == sum(param_counts(s).values())
    assert sum(c.flops for c in costs) == sum(flops(s, 14, tgt_len=9 if s.decoder_layers else None).values())
    assert all(c.count > 0 for c in costs)


@pytest.mark.parametrize("name", SHAPES)
def test_every_shown_formula_gives_the_number_beside_it(name):
    s = SHAPES[name]
    values = dict(h=s.d_model, f=s.d_ff, l=14, t=9, V=s.vocab_size, P=s.learned_positions, T=s.token_types, b=1)
    for c in module_costs(s, 14, 9 if s.decoder_layers else None):
        assert evaluate(c.param_formula, **values) == c.params_each, c.module
        assert evaluate(c.flop_formula, **values) == c.flops_each, c.module


def test_bert_base_numbers():
    costs = {c.module: c for c in module_costs(SHAPES["bert-base"], 128)}
    assert costs["self-attention"].count == 12 and costs["self-attention"].params_each == 4 * 768**2 + 4 * 768
    assert costs["feed-forward"].params_each == 2 * 768 * 3072 + 3072 + 768
    assert costs["LayerNorm"].count == 25  # two per layer and one on the embeddings
    assert sum(c.params for c in costs.values()) == 109_482_240


def test_encoder_decoder_rows_name_both_sides():
    modules = [c.module for c in module_costs(SHAPES["nn.Transformer"], 10, 7)]
    assert modules == ["encoder self-attention", "decoder masked self-attention", "cross-attention",
                       "encoder feed-forward", "decoder feed-forward", "LayerNorm"]


def test_table_has_a_total_row():
    costs = module_costs(SHAPES["random encoder"], 14)
    table = cost_table(costs)
    assert list(table["module"])[-1] == "total" and len(table) == len(costs) + 1
    assert table["parameters"].iloc[-1] == sum(c.params for c in costs)
    assert table["FLOPs"].iloc[-1] == sum(c.flops for c in costs)
    assert "4h² + 4h" in set(table["params formula (each)"])
    assert str(table["count"].dtype) == "Int64" and table["count"].isna().iloc[-1]


def test_bars_show_parameters_and_flops_per_module():
    costs = module_costs(SHAPES["random encoder"], 14)
    fig = cost_bars_spec(costs, title="random").figure()
    params, flop_bars = fig.data
    assert list(params.y) == list(flop_bars.y) == [c.module for c in costs]
    np.testing.assert_array_equal(params.x, [c.params for c in costs])
    np.testing.assert_array_equal(flop_bars.x, [c.flops for c in costs])
    assert params.orientation == "h" and params.xaxis != flop_bars.xaxis
    assert fig.layout.title.text == "random"


def test_human_numbers():
    assert [human(n) for n in (999, 12_345, 3_906_816, 2.5e9)] == ["999", "12.3k", "3.91M", "2.5G"]


@pytest.mark.parametrize("norm_first", [False, True])
def test_shape_steps_read_the_trace(norm_first):
    model = TextEncoder(TextConfig(50, d_model=24, nhead=4, num_layers=3, d_ff=40, norm_first=norm_first)).eval()
    with torch.inference_mode():
        trace = model(torch.arange(7)[None], record=True).trace
    steps = dict(zip(shape_steps(trace, norm_first)["step"], shape_steps(trace, norm_first)["shape"]))
    assert steps["input ids"] == "(1, 7)"
    assert steps["token embedding"] == "(1, 7, 24)"
    assert steps["layer 0: Q = x W_Q, split into heads"] == "(1, 4, 7, 6)"
    assert steps["layer 0: scores Q Kᵀ / √d_k"] == "(1, 4, 7, 7)"
    assert steps["layer 0: concatenate heads"] == "(1, 7, 24)"
    assert steps["layer 0: FFN hidden = act(x W_1)"] == "(1, 7, 40)"
    assert steps["layers 1–2: the same steps"] == "(1, 7, 24)"
    assert ("layer 0: LayerNorm before attention" in steps) == norm_first
    two_layers = TextEncoder(TextConfig(50, d_model=24, nhead=4, num_layers=2, d_ff=40)).eval()
    with torch.inference_mode():
        steps_of_two = list(shape_steps(two_layers(torch.arange(3)[None], record=True).trace)["step"])
    assert "layer 1: the same steps" in steps_of_two
    assert ("final LayerNorm = model output" in steps) == norm_first
