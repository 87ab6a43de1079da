"""The Translate page's "Teacher forcing" part in Streamlit's AppTest: the grid of what teacher forcing reads and
predicts beside what free generation writes and reads, the first divergence, the decoder's self-attention under
teacher forcing; every control (training snapshot, typed reference, layer, head, mean), heads switched off, and a
text outside the language with and without a reference."""
import numpy as np
import pytest

from harness import apptest
from harness.apptest import figures, link_value, plotly_array
from model.translator import load_shipped
from model.translator.ablation import sources_of
from model.translator.snapshots import at_snapshot
from model.translator.teacher_forcing import compare

EVERY_CROSS = ",".join(f"cross.{layer}.{head}" for layer in range(2) for head in range(4))


@pytest.fixture(scope="module")
def translator():
    return load_shipped()


def open_forcing(**params):
    at = apptest.open_page("translate", part="forcing", **params)
    assert not at.exception, at.exception
    return at


def grid(at) -> list[list[str]]:
    """The five rows of the grid's words, as the browser shows them (without the probabilities)."""
    (figure,) = [f for f in figures(at) if f["data"][0].get("texttemplate")]
    return [[cell.split("<br>")[0].replace("&lt;", "<").replace("&gt;", ">") for cell in row]
            for row in figure["data"][0]["text"]], figure


def story(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**They"))


def test_the_trained_model_agrees_with_itself_on_a_sentence_of_its_language(translator):
    at = open_forcing()
    rows, figure = grid(at)
    assert rows == [["<bos>", "I", "have", "a", "cat"], ["I", "have", "a", "cat", "<eos>"],
                    ["I", "have", "a", "cat", "<eos>"], ["I", "have", "a", "cat", "<eos>"],
                    ["<bos>", "I", "have", "a", "cat"]]
    assert "shapes" not in figure["layout"] and story(at).startswith("**They agree at every position.**")
    assert at.select_slider(key="snap").value == 600 and link_value(at, "snap") == "600"
    c = compare(translator, sources_of(translator, ["我有一只猫"]), translator.target.ids("I have a cat".split()))
    assert any(f"{c.loss:.3f}" in cap.value for cap in at.caption)


def test_an_early_snapshot_parts_them_and_the_grid_frames_the_first_divergence():
    at = open_forcing()
    at.select_slider(key="snap").set_value(150).run()
    assert not at.exception and link_value(at, "snap") == "150"
    early = at_snapshot(150)
    c = compare(early, sources_of(early, ["我有一只猫"]), early.target.ids("I have a cat".split()))
    k = c.first_divergence
    assert k is not None
    rows, figure = grid(at)
    assert rows[1][:len(c.forced.chosen)] == list(c.forced.chosen)
    assert rows[3][:len(c.generated.chosen)] == list(c.generated.chosen)
    assert rows[4][:len(c.generated.inputs)] == list(c.generated.inputs)
    (frame,) = figure["layout"]["shapes"]
    assert (frame["x0"], frame["x1"]) == (k - 0.5, k + 0.5)
    z = plotly_array(figure["data"][0]["z"]).reshape(5, -1)
    assert z[3, k] == 2 and (z[3, :k] == 1).all()  # red where generation parts, green before
    assert (z[4, k + 1:len(c.generated.inputs)] == 3).any()  # then it reads its own wrong word: orange
    assert story(at).startswith(f"**They part at position {k + 1}.**")


def test_heads_switched_off_part_them_on_the_trained_model():
    at = open_forcing(off=EVERY_CROSS)
    rows, figure = grid(at)
    assert "shapes" in figure["layout"] and rows[3][:4] != ["I", "have", "a", "cat"]
    assert any("with 8 heads switched off" in c.value for c in at.caption)


def test_the_decoder_self_attention_under_teacher_forcing_follows_layer_head_and_mean(translator):
    at = open_forcing()
    c = compare(translator, sources_of(translator, ["我有一只猫"]), translator.target.ids("I have a cat".split()))

    def shown():
        (heat,) = [f for f in figures(at) if not f["data"][0].get("texttemplate")]
        return plotly_array(heat["data"][0]["z"]).reshape(5, 5), heat["layout"]["title"]["text"]

    z, title = shown()
    np.testing.assert_allclose(z, c.forced.self_attention[1].mean(0), atol=1e-5)  # NaN where blocked, in both
    assert np.isnan(z[np.triu_indices(5, 1)]).all() and "layer 1, mean of heads" in title
    at.toggle(key="mean").set_value(False).run()
    at.slider(key="layer").set_value(0).run()
    at.slider(key="head").set_value(2).run()
    assert not at.exception
    z, title = shown()
    np.testing.assert_allclose(z, c.forced.self_attention[0, 2], atol=1e-5)
    assert "layer 0, head 2" in title
    assert (link_value(at, "layer"), link_value(at, "head"), link_value(at, "mean")) == ("0", "2", "0")


def test_a_typed_reference_is_read_instead_and_its_unknown_words_are_named():
    at = open_forcing()
    at.text_input(key="tgt").input("I have a lion").run()
    assert not at.exception and link_value(at, "tgt") == "I have a lion"
    rows, _ = grid(at)
    assert rows[2] == ["I", "have", "a", "<unk>", "<eos>"] and rows[0] == ["<bos>", "I", "have", "a", "<unk>"]
    assert any("lion" in w.value for w in at.warning)
    assert story(at).startswith("**They part at position 4.**")  # it writes cat where the reference has <unk>


def test_a_text_outside_the_language_needs_a_typed_reference():
    at = open_forcing(src="你好吗")
    assert not figures(at)
    (info,) = [i.value for i in at.info if i.value.startswith("Teacher forcing reads a correct translation")]
    assert "it writes" in info
    at.text_input(key="tgt").input("how are you ?").run()
    assert not at.exception and len(figures(at)) == 2


def test_a_long_text_and_a_long_reference_are_cut_with_a_notice():
    at = open_forcing(src="我有一只猫" * 14, tgt=" ".join(["cat"] * 70))
    rows, _ = grid(at)
    assert len(rows[2]) == 64 and rows[2][-1] == "<eos>"
    assert any("reads at most 63" in w.value for w in at.warning)
    assert any("reads only the first 64" in w.value for w in at.warning)


def test_a_bad_snapshot_in_the_link_and_a_hostile_reference_give_plain_messages():
    injection = "`![](http://evil.example/p.png)[Log in](http://evil.example)` <b>bold</b>"
    at = open_forcing(snap="7", tgt=injection)
    assert "Ignored ` snap=7 ` in the link" in "\n".join(w.value for w in at.warning)
    assert at.select_slider(key="snap").value == 600
    rows, figure = grid(at)
    assert all("<b>" not in cell for row in figure["data"][0]["text"] for cell in row)
    assert set(rows[2][:-1]) <= {"<unk>"} | set(load_shipped().target.tokens)
    assert not [m.value for m in at.markdown if "evil.example" in m.value]
