"""The architecture page in Streamlit's AppTest: cost tables checked against PyTorch, shapes from the trace."""
import re

from streamlit.testing.v1 import AppTest

from harness import apptest


def open_page(**params) -> AppTest:
    return apptest.open_page("architecture", "Architecture", **params)


def shapes(at: AppTest) -> dict[str, str]:
    table = next(d.value for d in at.dataframe if "step" in d.value.columns)
    return dict(zip(table["step"], table["shape"]))


def checks(at: AppTest) -> list[tuple[int, int]]:
    """(our sum, PyTorch's sum) from every 'Sum of the parameters' line."""
    lines = [s.value for s in at.success if "Sum of the parameters" in s.value]
    return [tuple(int(n.replace(",", "")) for n in re.findall(r"\d[\d,]{3,}", line)) for line in lines]


def test_default_page_shows_costs_shapes_and_charts():
    at = open_page()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 3  # random model, all-MiniLM-L6-v2, SmolLM2
    assert checks(at)[:2] == [(4_303_360, 4_303_360), (22_713_216, 22_713_216)]
    assert [s.label for s in at.main.selectbox][:2] == ["d_model", "Heads (divisors of d_model)"]
    assert not at.sidebar.selectbox  # the sliders are in the page body
    steps = shapes(at)
    T = int(steps["input ids"].strip("()").split(", ")[1])
    assert steps["layer 0: Q = x W_Q, split into heads"] == f"(1, 4, {T}, 32)"
    assert steps["layer 0: FFN hidden = act(x W_1)"] == f"(1, {T}, 512)"
    formulas = [m.value for m in at.markdown if m.value.startswith(("**Parameters of one", "**FLOPs (one"))]
    assert len(formulas) == 6  # parameter and FLOP formulas of the three models, each module a line with its formula
    assert "- self-attention (× 2): $4h^2 + 4h = 66{,}048$" in formulas[0], formulas[0]
    bert_base = [d.value for d in at.dataframe if "module" in d.value.columns][-1]
    assert bert_base["parameters"].iloc[-1] == 109_482_240


def test_url_state_is_restored_and_read_from_the_trace():
    at = open_page(text="Hello students", d_model="96", heads="6", layers="3", d_ff="256", norm="pre-LN",
                   positional="learned", seed="7")
    assert not at.exception
    assert at.text_area[0].value == "Hello students"
    steps = shapes(at)
    assert steps["input ids"] == "(1, 4)"  # [CLS] hello students [SEP]
    assert steps["layer 0: Q = x W_Q, split into heads"] == "(1, 6, 4, 16)"
    assert steps["layer 0: FFN hidden = act(x W_1)"] == "(1, 4, 256)"
    assert "layer 0: LayerNorm before attention" in steps and "layers 1–2: the same steps" in steps
    ours, torch_count = checks(at)[0]
    assert ours == torch_count
    assert at.query_params["d_model"] in ("96", ["96"]) and at.query_params["norm"] in ("pre-LN", ["pre-LN"])


def test_a_config_change_updates_the_tables():
    at = open_page()
    before = checks(at)[0]
    at.main.selectbox[0].set_value(256).run()
    assert not at.exception
    after = checks(at)[0]
    assert after[0] == after[1] and after[0] > before[0]


def test_heads_that_do_not_divide_d_model_are_explained_and_the_page_works():
    at = open_page(d_model="100", heads="3")
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "d_model=100" in warnings and "heads=3" in warnings
    assert "3 heads do not divide d_model = 128" in warnings
    assert len(at.get("plotly_chart")) == 3


def test_long_text_is_truncated_and_says_so():
    at = open_page(text="word " * 700)
    assert not at.exception
    assert any("the rest was cut" in w.value for w in at.warning)
    assert shapes(at)["input ids"] == "(1, 512)"


def test_today_s_block_is_counted_and_its_key_value_cache_compared():
    """SmolLM2's block from its metadata (no weight read): the formulas' sum is its checkpoint's 134,515,008
    parameters, and grouped-query attention's cache is a third of full multi-head attention's."""
    at = open_page()
    assert not at.exception
    assert checks(at)[2] == (134_515_008, 134_515_008)
    assert any("its checkpoint's tensors hold" in s.value for s in at.success)
    costs = next(d.value for d in at.dataframe if any("grouped-query" in str(m) for m in d.value.iloc[:, 0]))
    assert list(costs.iloc[:, 0])[:5] == ["token embedding", "grouped-query self-attention", "SwiGLU feed-forward",
                                          "RMSNorm", "output (tied to the token embedding)"]
    cache = at.dataframe[-1].value if "per token" in at.dataframe[-1].value.columns else next(
        d.value for d in at.dataframe if "per token" in d.value.columns)
    assert cache.values.tolist() == [["grouped-query: 3 key/value heads", "45 KB", "90 MB", "360 MB"],
                                     ["full multi-head: 9 key/value heads", "135 KB", "270 MB", "1,080 MB"]]
