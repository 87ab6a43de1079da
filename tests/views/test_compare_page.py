"""Compare (/compare) in AppTest: each kind of pair draws A, B and B − A from the runs' own maps, aligned on the
tokens both sentences have; the query row is outlined in all three; the downloads hold the same numbers."""
import base64
import io

import numpy as np
import pytest

from harness.apptest import charts, open_page
from model.analysis.compare import align
from model.loading.sources import RandomConfig
from runtime import models, runs
from runtime.runs import Mask
from views.widgets import downloads

TEXT, TEXT2 = "the cat sat on the mat", "the big dog sat on the mat"


def z(figure: dict) -> np.ndarray:
    value = figure["data"][0]["z"]
    return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).reshape(
        [int(n) for n in str(value["shape"]).split(",")])


def maps(text: str, mask: Mask = Mask(), model: str = "minilm"):
    choice = models.Choice(model, RandomConfig() if model == "random" else None)
    return runs.compute_run(choice, text, mask)


def test_two_sentences_differ_on_the_tokens_they_share(offered):
    at = open_page("compare", text=TEXT, text2=TEXT2, layer="2", head="4", query="3")
    assert not at.exception
    a, b, diff, row = (c.figure for c in charts(at))
    run_a, run_b = maps(TEXT), maps(TEXT2)
    alignment = align(run_a.tokens, run_b.tokens)
    assert alignment.size == 7  # [CLS] the ... sat on the mat [SEP]: "cat" and "big dog" are unmatched
    expected = run_b.attentions[2, 4][np.ix_(alignment.b, alignment.b)] - run_a.attentions[2, 4][
        np.ix_(alignment.a, alignment.a)]
    np.testing.assert_allclose(z(a), run_a.attentions[2, 4], atol=1e-6)
    np.testing.assert_allclose(z(b), run_b.attentions[2, 4], atol=1e-6)
    np.testing.assert_allclose(z(diff), expected, atol=1e-6)
    # query 3 of A ("sat") is row 3 of A, row 4 of B ("sat" after "big dog"), row 2 of the difference
    assert [f["layout"]["shapes"][0]["y0"] + 0.5 for f in (a, b, diff)] == [3, 4, 2]
    assert row["layout"]["title"]["text"] == "Row 3: sat: A and B over the keys both have"
    arrays = np.load(io.BytesIO(offered["Download A, B and B − A (NumPy .npz)"][1]()), allow_pickle=False)
    np.testing.assert_allclose(arrays["difference"], expected, atol=1e-6)
    assert arrays["matched_b"].tolist() == alignment.b.tolist()
    text = offered["Download B − A (CSV)"][1]().decode("utf-8")
    assert text.startswith(downloads.BOM) and len(text.splitlines()) == 1 + alignment.size


@pytest.mark.parametrize("pair, b", [("mask", lambda: maps(TEXT, Mask("causal")).attentions[3, 1]),
                                     ("head", lambda: maps(TEXT).attentions[3, 2]),
                                     ("model", lambda: maps(TEXT, model="random").attentions[1, 1])])
def test_a_mask_another_head_and_another_model(pair, b):
    at = open_page("compare", text=TEXT, pair=pair)
    assert not at.exception
    a_fig, b_fig, diff, _row = (c.figure for c in charts(at))
    np.testing.assert_allclose(z(b_fig), b(), atol=1e-6)
    np.testing.assert_allclose(z(diff), b() - z(a_fig), atol=1e-6)


def test_long_texts_show_one_map_at_a_time_and_an_empty_second_sentence_is_asked_for():
    at = open_page("compare", text="word " * 300, text2="word " * 290)
    assert [c.figure["layout"]["title"]["text"] for c in charts(at)][0] == "B − A on the 292 tokens both have"
    at = open_page("compare", text2=" ")
    assert not charts(at) and any("second sentence" in i.value for i in at.info)


def test_the_difference_is_drawn_in_diverging_colours_centred_on_zero():
    diff = charts(open_page("compare", text=TEXT, text2=TEXT2))[2].figure["data"][0]
    assert diff["colorscale"][0][1] == "#053061" and diff["colorscale"][-1][1] == "#7f3b08"  # blue..orange
    assert diff["zmin"] == -diff["zmax"] > -1


def test_the_translator_compares_two_chinese_sentences(offered):
    at = open_page("compare", model="translator")
    assert not at.exception
    a, b, diff, _row = (c.figure for c in charts(at))
    assert a["data"][0]["x"] == list("我有一只猫") and b["data"][0]["x"] == list("我有一只狗")  # its own language
    assert len(diff["data"][0]["x"]) == 4  # 我有一只
    assert "Download B − A (CSV)" in offered


def test_two_sentences_without_a_common_token_say_so_and_offer_no_empty_file(offered):
    at = open_page("compare", text="cats purr", text2="dogs bark")
    assert not at.exception  # [CLS] and [SEP] are common: hidden, nothing is left in common
    offered.clear()
    at = open_page("compare", text="cats purr", text2="dogs bark", special="hide")
    assert not at.exception
    assert [c.figure["layout"]["title"]["text"] for c in charts(at)][:2] == [
        "A: layer 3, head 1", "B (the second sentence): layer 3, head 1"]
    assert len(charts(at)) == 2 and any("no token in common" in i.value for i in at.info)
    assert "Download B − A (CSV)" not in offered and "Download A, B and B − A (NumPy .npz)" in offered
    arrays = np.load(io.BytesIO(offered["Download A, B and B − A (NumPy .npz)"][1]()), allow_pickle=False)
    n = len(charts(at)[0].figure["data"][0]["x"])  # A's tokens without [CLS] and [SEP]
    assert arrays["difference"].shape == (0, 0) and arrays["a"].shape == (n, n)
