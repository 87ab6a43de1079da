"""The Ask page in Streamlit's AppTest, on SmolLM2-135M-Instruct: the answer is the model's own (the CLI's --chat
writes the same), a step, layer or head change never runs the model again, the question's words ranked by the step's
attention and by gradient x input as the model computes them, the heads that used each question word (layer 23 head 4
on "France" when it writes "Paris"), heads switched off rewriting the answer beside the original, the answer's file,
and a long question cut with a notice. Slow: the model loads in ~1 s, each answer takes one to three."""
import html
import io
import time

import numpy as np
import pytest
import torch

from harness import apptest
from harness.apptest import figures, link_value, plotly_array
from model.analysis.rollout import word_saliency
from model.causal.chat import conversation
from model.causal.decoding import generate
from model.causal.sink import answer_loss, evicting, first_token_share
from model.gpt.__main__ import chat
from model.kinds import SourceKey
from model.llama.smollm2 import load, packaged
from runtime import memory
from runtime.budget import Kind
from runtime.models import Choice, compiling
from views.ask.answer import CALM, GAP, MOST_GAP, Question, gap
from views.ask.page import DEFAULT_MOST, DEFAULT_QUESTION, MAX_QUESTION_TOKENS
from views.ask.sink import csv_of
from views.language_model.run import distribution_csv, npz
from views.widgets.next_word import Way

pytestmark = pytest.mark.slow

PARIS = 5  # "The capital of France is Paris.": token 5 is " Paris"


@pytest.fixture(scope="module")
def smollm2():
    return load(packaged())


def open_ask(title=None, **params):
    at = apptest.open_page("ask", title, **params)
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return at


def answers(at) -> list[str]:
    """The answers shown (the model's words, escaped in their HTML box)."""
    return [html.unescape(h.proto.body.split(">", 1)[1].rsplit("</div>", 1)[0]) for h in at.get("html")
            if "class='answer'" in h.proto.body]


def button(at, label: str):
    (found,) = [b for b in at.button if b.label == label]
    return found


def by_title(at, start: str) -> dict:
    (found,) = [f for f in figures(at) if f["layout"]["title"]["text"].startswith(start)]
    return found


def test_the_answer_is_the_models_own(smollm2):
    model, tokenizer = smollm2
    from model.causal.reading import TokenizerReader  # noqa: PLC0415 - only this test reads with it
    with torch.inference_mode():
        want = chat(model, TokenizerReader(tokenizer), DEFAULT_QUESTION, DEFAULT_MOST, None)
    at = open_ask()
    assert answers(at) == [want] == ["The capital of France is Paris."]
    assert link_value(at, "q") == DEFAULT_QUESTION and any("(end of turn)" in m.value for m in at.markdown)


def test_a_first_question_has_the_models_batch_layers_traced_for_a_class():
    """The answers of a class are written through each layer's graph (model.causal.compiled_batch): traced in the
    background after the model's first question, and checked bit for bit on SmolLM2 itself (None if not)."""
    open_ask()
    traced = compiling(Choice(SourceKey.SMOLLM2))
    assert traced.batch_started
    end = time.monotonic() + 60
    while traced.ready_batch() is None and time.monotonic() < end:
        time.sleep(0.1)
    assert traced.ready_batch() is not None and len(traced.ready_batch()) == 30


def test_writing_paris_layer_23_head_4_looks_at_france(smollm2):
    model, tokenizer = smollm2
    at = open_ask(step=str(PARIS))
    table = at.dataframe[0].value
    row = table[table.iloc[:, 0] == " France"].iloc[0]
    assert row.iloc[1].split() == ["23.4", "(0.60)"]  # its strongest head, and that head's attention
    c = conversation(tokenizer, DEFAULT_QUESTION)
    with torch.inference_mode():
        run = generate(model, torch.tensor(c.ids), PARIS + 1, stop={c.end_of_turn})
    attention = run.attentions[23][4, len(c.ids) - 1 + PARIS]  # the row that writes " Paris"
    france = c.tokens.index(" France")
    assert abs(float(attention[france]) - 0.60) < 0.005
    # the button opens that head on the map above
    button(at, "`  France ` → 23.4").click().run()
    assert (apptest.slider_value(at, "layer"), apptest.slider_value(at, "head")) == (23, 4)
    ranking = by_title(at, "Question words by attention, layer 23, head 4")
    bars = ranking["data"][0]
    words = [html.unescape(w).rstrip("\u200b\u200c") for w in bars["y"]][::-1]
    values = plotly_array(bars["x"])[::-1]
    positions = [i for i, a in enumerate(c.asked) if a]
    np.testing.assert_allclose(sorted(values, reverse=True), values)  # ranked, most first
    np.testing.assert_allclose(values, sorted(attention[positions].numpy(), reverse=True), atol=1e-6)
    assert words[0] == " France"


def test_a_step_layer_or_head_change_never_runs_the_model_again():
    at = open_ask()
    before = memory.COMPUTED[Kind.WRITING]
    at.slider(key="step").set_value(3).run()
    at.slider(key="layer").set_value(2).run()
    at.slider(key="head").set_value(1).run()
    at.toggle(key="mean").set_value(True).run()
    at.toggle(key="every").set_value(True).run()
    button(at, "Next").click().run()
    assert not at.exception and at.slider(key="step").value == 4
    every = by_title(at, "Token 4: its attention in every head of every layer")
    assert plotly_array(every["data"][0]["z"]).shape[0] == 30 * 9
    assert memory.COMPUTED[Kind.WRITING] == before
    at.text_input(key="q").set_value("Why is the sky blue?").run()
    assert memory.COMPUTED[Kind.WRITING] == before + 1


def test_gradient_x_input_is_the_models_own(smollm2):
    model, tokenizer = smollm2
    at = open_ask(step=str(PARIS), grad="1")
    bars = by_title(at, "Question words by attention")["data"]
    assert [b["name"] for b in bars] == ["attention", "gradient × input (share)"]
    c = conversation(tokenizer, DEFAULT_QUESTION)
    read = list(c.ids) + tokenizer("The capital of France is")["input_ids"]
    with torch.inference_mode():
        _signed, norm = word_saliency(model, torch.tensor([read]), len(read) - 1, tokenizer(" Paris")["input_ids"][0])
    positions = [i for i, a in enumerate(c.asked) if a]
    share = norm[positions] / norm[positions].sum()
    words = [html.unescape(w).rstrip("\u200b\u200c") for w in bars[1]["y"]]
    got = dict(zip(words, plotly_array(bars[1]["x"])))
    for pos, want in zip(positions, share):
        assert abs(got[c.tokens[pos]] - want) < 1e-4


def test_heads_switched_off_rewrite_the_answer_beside_the_original():
    at = open_ask(off=",".join(f"{layer}.{head}" for layer in range(0, 3) for head in range(9)))
    own, off = answers(at)
    assert own == "The capital of France is Paris." and off != own
    (parted,) = [c.value for c in at.caption if c.value.startswith("They part at token")]
    first = next(i for i, (a, b) in enumerate(zip(own, off)) if a != b)
    assert first >= 0 and "against" in parted


def test_the_answer_downloads_with_every_map(smollm2):
    at = open_ask(step="2")
    labels = [d.proto.label for d in at.get("download_button")]
    assert labels == ["Download this answer (NumPy .npz)", "Download token 2's distribution (CSV)"]
    key = Question(Choice(SourceKey.SMOLLM2), conversation(smollm2[1], DEFAULT_QUESTION), DEFAULT_MOST, Way()).key
    writing = memory.budget().get(key).writing  # what the buttons build their files from, on click
    data = np.load(io.BytesIO(npz(writing)), allow_pickle=False)
    T = len(writing.tokens)
    assert data["attentions"].shape == (30, 9, T, T)
    assert "".join(data["words"]) == "The capital of France is Paris.<|im_end|>"  # its end of turn too
    rows = distribution_csv(writing, 2).decode("utf-8-sig").splitlines()
    assert rows[0] == "rank,word,probability,probability_before_cuts,chosen" and len(rows) == 11
    assert rows[1].split(",")[1] == " of" and rows[1].endswith(",1")  # token 2, " of", written greedily


def test_a_long_question_is_cut_with_a_notice():
    at = open_ask(q="why " * 400)
    assert any(f"reads only the first {MAX_QUESTION_TOKENS}: the rest was cut" in w.value for w in at.warning)
    assert answers(at)


def test_in_chinese():
    at = open_ask("提问", lang="zh", step="2")
    assert answers(at) and any(m.value.startswith("**回答的第 2 个词元。**") for m in at.markdown)


def test_the_sink_part_measures_the_answers_own_attention_and_eviction(smollm2):
    model, tokenizer = smollm2
    at = open_ask(part="sink", evict="1")
    c = conversation(tokenizer, DEFAULT_QUESTION)
    P = len(c.ids)
    with torch.inference_mode():
        run = generate(model, torch.tensor(c.ids), DEFAULT_MOST, stop={c.end_of_turn})
        ids = run.ids
        T = ids.numel()
        share = first_token_share(torch.stack(run.attentions).numpy(), range(P - 1, T - 1))
        base, _ = answer_loss(model, ids, P)
        first, _ = answer_loss(model, ids, P, evicting(T, 0, P - 1))
    grid = by_title(at, "The answer's attention to the first token")
    np.testing.assert_allclose(plotly_array(grid["data"][0]["z"]), share, atol=1e-6)
    (said,) = [m.value for m in at.markdown if m.value.startswith("Nothing evicted")]
    assert f"**{base:.3f}**" in said and f"**{first:.3f}**" in said and first > 2 * base  # the sink is load-bearing
    rows = csv_of(share).decode("utf-8-sig").splitlines()  # what its download button builds
    assert rows[0] == "layer,head,share_to_first_token" and len(rows) == 1 + 270
    assert abs(float(rows[1 + 9 * 23 + 4].split(",")[2]) - share[23, 4]) < 1e-6
    strongest = np.unravel_index(share.argmax(), share.shape)
    at.button(key="ask-sink-one").click().run()
    assert link_value(at, "off") == f"{strongest[0]}.{strongest[1]}" and len(answers(at)) == 2


def test_while_a_class_asks_each_page_rewrites_its_answer_less_often():
    assert gap(0) == gap(1) == gap(CALM) == GAP  # alone, or a few: every word as it comes
    assert GAP < gap(2 * CALM) < gap(4 * CALM) < MOST_GAP == gap(5 * CALM) == gap(64)  # 40 answers: twice a second
