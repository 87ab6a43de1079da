"""The Language model page in Streamlit's AppTest: the toy GPT writes after its prompt (greedy and sampled, every
control of the writing), a step, layer or head change never runs the model again, the induction circuit found by its
scores on a probe and on the prompt, heads switched off in every part, the logit lens, a GPT-2 checkpoint with its own
tokenizer, and bad input as plain messages."""
import html
import json
import time

import numpy as np
import pytest
import torch

from harness import apptest
from harness.apptest import figures, link_value, plotly_array
from model.causal.ablation import Ablated, probe_accuracy, sentence_loss
from model.causal.decoding import generate, logits_of
from model.causal.probes import PROBE_LENGTH, PROBE_SEED, PROBES, induction_scores, previous_token_scores, repeat_probes
from model.compiled import CompiledStep
from model.gpt.model import BLOCKS
from model.gpt.toy import METRICS, SHIPPED, load
from model.heads import parse_heads
from model.kinds import SourceKey
from model.sampling import Sampling
from runtime import memory, models
from runtime.budget import Kind
from runtime.models import Choice
from views.language_model.page import DEFAULT_PROMPT, PLAYING


@pytest.fixture(scope="module")
def toy():
    return load()


def open_lm(**params):
    at = apptest.open_page("language-model", **params)
    assert not at.exception, at.exception
    return at


def written(at) -> list[str]:
    (line,) = [m.value for m in at.markdown if m.value.startswith("**Written**")]
    return [html.unescape(w).strip("\\") for w in line.partition("):")[2].split()]


def button(at, label: str):
    (found,) = [b for b in at.button if b.label == label]
    return found


def ablations_of():
    """Every head and pair switched off, as the training measured them (metrics.json's table, the same probes)."""
    table = json.loads((SHIPPED / METRICS).read_text())["ablation"]
    return [Ablated(tuple((h.layer, h.head) for h in parse_heads(a["heads"].replace("+", ",").replace("none", ""),
                                                                     BLOCKS)), a["copy_accuracy"], a["loss"])
            for a in table]


def notices(at) -> list[str]:
    return [n.value for n in [*at.warning, *at.info]]


def ids_of(vocabulary, text):
    return torch.tensor(vocabulary.ids(text.split()))


def shown(labels) -> list[str]:
    return [html.unescape(x).rstrip("\u200b\u200c") for x in labels]


def test_the_default_prompt_is_written_on_greedily_and_stepped_word_by_word(toy):
    model, vocabulary = toy
    at = open_lm()
    prompt = ids_of(vocabulary, DEFAULT_PROMPT)
    with torch.inference_mode():
        want = generate(model, prompt, 10)
    words = [vocabulary.tokens[i] for i in want.written.tolist()]
    assert written(at) == words and words[:5] == ["two", "red", "birds", "at", "school"]  # copied from context
    step = at.slider(key="step")
    assert (step.value, step.max) == (0, 9)
    P = prompt.numel()
    layer, head = int(link_value(at, "layer")), int(link_value(at, "head"))
    for t in (0, 4, 9):
        step.set_value(t).run()
        causal, bars = figures(at)
        z = plotly_array(causal["data"][0]["z"])
        row = P - 1 + t
        assert np.isfinite(z[:row + 1][np.tril_indices(row + 1)]).all() and np.isnan(z[row + 1:]).all()
        np.testing.assert_allclose(np.nan_to_num(z[row, :row + 1]), want.attentions[layer][head, row, :row + 1],
                                   atol=6e-5)
        (box,) = causal["layout"]["shapes"]  # the row this step adds, outlined
        assert (box["y0"], box["y1"]) == (row - 0.5, row + 0.5)
        probs = torch.softmax(want.logits[t], -1)
        top = probs.topk(10)
        assert shown(bars["data"][0]["y"])[::-1] == [vocabulary.tokens[i] for i in top.indices.tolist()]
        np.testing.assert_allclose(plotly_array(bars["data"][0]["x"])[::-1], top.values.numpy(), atol=1e-6)


def test_step_layer_and_head_changes_never_run_the_model_again():
    at = open_lm()
    before = memory.COMPUTED[Kind.WRITING]
    at.slider(key="step").set_value(3).run()
    at.slider(key="layer").set_value(0).run()
    at.slider(key="head").set_value(1).run()
    at.toggle(key="mean").set_value(True).run()
    button(at, "Next").click().run()
    assert not at.exception and at.slider(key="step").value == 4
    assert memory.COMPUTED[Kind.WRITING] == before  # one writing, read at every step, layer and head
    at.text_input(key="prompt").set_value("the teacher saw two red birds").run()
    assert memory.COMPUTED[Kind.WRITING] == before + 1


def test_previous_next_and_play_move_the_step():
    at = open_lm(words="3")
    button(at, "Next").click().run()
    assert at.slider(key="step").value == 1
    button(at, "Previous").click().run()
    assert at.slider(key="step").value == 0
    button(at, "Play").click().run()
    assert at.session_state[PLAYING] and at.slider(key="step").disabled


def test_a_sampling_link_writes_the_same_words_again(toy):
    model, vocabulary = toy
    params = {"decode": "sample", "temperature": "1.5", "top_k": "5", "draw": "7", "words": "8"}
    first, again = open_lm(**params), open_lm(**params)
    with torch.inference_mode():
        want = generate(model, ids_of(vocabulary, DEFAULT_PROMPT), 8, Sampling(1.5, 5, None, 7))
    assert written(first) == written(again) == [vocabulary.tokens[i] for i in want.written.tolist()]
    bars = figures(first)[1]
    colours = bars["data"][0]["marker"]["color"][::-1]
    assert colours[5:] == ["#b4b4b4"] * 5  # cut by top-k: grey, with the probability before the cut
    assert any(c.value.startswith("p_i") or "frac" in c.value for c in first.get("latex"))


def test_heads_switched_off_change_the_writing_as_the_model_says(toy):
    model, vocabulary = toy
    at = open_lm(off="1.2")
    with torch.inference_mode():
        want = generate(model, ids_of(vocabulary, DEFAULT_PROMPT), 10, heads=((1, 2),))
    assert written(at) == [vocabulary.tokens[i] for i in want.written.tolist()]
    assert at.sidebar.multiselect(key="off").value == ["1.2"]


def test_the_induction_part_finds_its_heads_by_their_scores_on_a_probe(toy):
    model, vocabulary = toy
    at = open_lm(part="induction", probe_seed="5")
    probe = repeat_probes(len(vocabulary.words), 1, 5)
    with torch.inference_mode():
        out = model(probe)
    induction, previous = induction_scores(out.attentions), previous_token_scores(out.attentions)
    layer, head = divmod(int(induction[1:].argmax()), induction.size(1))
    layer += 1
    p_layer, p_head = divmod(int(previous[:layer].argmax()), previous.size(1))
    prev_map, ind_map, losses = figures(at)[:3]  # then the survey over many probes (its own test)
    assert f"layer {layer} · head {head}" in ind_map["layout"]["title"]["text"]
    assert f"layer {p_layer} · head {p_head}" in prev_map["layout"]["title"]["text"]
    z = np.nan_to_num(plotly_array(ind_map["data"][0]["z"]))
    L = PROBE_LENGTH
    stripe = z[np.arange(L, 2 * L), np.arange(1, L + 1)]
    assert stripe.mean() == pytest.approx(float(induction[layer, head]), abs=1e-3) and stripe.mean() > 0.8
    assert shown(ind_map["data"][0]["x"]) == [vocabulary.tokens[i] for i in probe[0].tolist()]
    colours = losses["data"][0]["marker"]["color"]
    assert colours[:L - 1].count("#e4572e") == 0 and colours[L:].count("#e4572e") == L - 1  # the copy's words
    button(at, "New random words").click().run()
    assert link_value(at, "probe_seed") != "5" and not at.exception


def test_the_induction_part_on_the_prompt_and_on_a_prompt_without_repeats():
    at = open_lm(part="induction", source="text")
    assert any("at 2 of 2 places" in m.value for m in at.markdown)
    assert len(figures(at)) == 3
    at = open_lm(part="induction", source="text", prompt="the teacher saw two red birds")
    assert any("nothing to copy" in i.value for i in at.info) and not figures(at)


def test_the_heads_part_scores_the_whole_model_and_without_the_heads_switched_off(toy):
    model, vocabulary = toy
    at = open_lm(part="heads", off="1.2")
    metrics = {m.label: m.value for m in at.metric}
    probes = repeat_probes(len(vocabulary.words), PROBES, PROBE_SEED)
    assert metrics["Copy accuracy, whole model"] == f"{probe_accuracy(model, probes):.1%}"
    assert metrics["Copy accuracy without those heads"] == f"{probe_accuracy(model, probes, ((1, 2),)):.1%}"
    table = at.dataframe[0].value
    singles = [a for a in ablations_of() if len(a.heads) == 1]
    (layer, head), = min(singles, key=lambda a: a.copy_accuracy).heads
    assert len(table) == 8 and table.iloc[0, 0] == f"layer {layer} · head {head}"  # copying needs it most
    at.button(key="lm-off-none").click().run()
    assert at.sidebar.multiselect(key="off").value == [] and "Copy accuracy without those heads" not in {
        m.label for m in at.metric}
    at.button(key="lm-off-top").click().run()
    assert at.sidebar.multiselect(key="off").value == [f"{layer}.{head}"]


def test_the_heads_part_s_loss_is_the_held_out_sentences(toy):
    from training import gpt_data  # noqa: PLC0415 - only this test reads the training's sentences
    model, _vocabulary = toy
    at = open_lm(part="heads")
    rows = gpt_data.sentence_ids(gpt_data.vocabulary(), 2000, 99, held_out=True)
    loss = {m.label: m.value for m in at.metric}["Loss on single sentences, whole model"]
    assert loss == f"{sentence_loss(model, rows):.3f} nats"


def test_the_logit_lens_ends_in_the_model_s_own_prediction(toy):
    model, vocabulary = toy
    at = open_lm(part="lens", off="0.3")
    (lens,) = figures(at)
    ids = ids_of(vocabulary, DEFAULT_PROMPT)
    with torch.inference_mode():
        own = torch.softmax(logits_of(model, ids[None], ((0, 3),))[0], -1)
    z = plotly_array(lens["data"][0]["z"])  # (layers, T): each layer's p of the final prediction
    np.testing.assert_allclose(z[-1], own.max(-1).values.numpy(), atol=1e-6)
    assert shown(lens["data"][0]["x"])[0] == f"1: the → {vocabulary.tokens[int(own[0].argmax())]}"


def test_bad_input_is_said_and_the_rest_still_runs():
    at = open_lm(prompt="")
    assert any("Type a prompt" in i.value for i in at.info) and not at.exception
    at = open_lm(prompt="the zebra saw two red birds")
    assert any("zebra" in w for w in notices(at)) and written(at)
    at = open_lm(prompt=" ".join(["the teacher saw"] * 30), words="10")
    assert any("reads only the last 54" in w for w in notices(at))
    at = open_lm(off="9.9,x", words="99", part="nope", probe_seed="-1")
    assert not at.exception and written(at)
    said = " ".join(notices(at))
    assert "off=" in said and "words=" in said and "part=" in said


def test_the_parts_of_the_toy_gpt_s_training_are_not_offered_for_a_checkpoint(tmp_path, monkeypatch):
    from runtime import models  # noqa: PLC0415
    from tests.model.gpt.gpt_checkpoints import gpt2_tokenizer, save_tiny_gpt2  # noqa: PLC0415 - transformers
    directory = gpt2_tokenizer(save_tiny_gpt2(tmp_path / "tiny-gpt2", "wide-ffn"))
    monkeypatch.setenv("ATTNVIZ_MODEL_DIRS", str(directory))
    models.sources.clear()
    try:
        at = apptest.open_page("language-model", prompt="attention is all you need")
        assert not at.exception
        options = at.sidebar.selectbox(key="model").options
        assert len(options) == 3 and "SmolLM2" in options[1] and "tiny-gpt2" in options[2]  # the language models
        at.sidebar.selectbox(key="model").set_value(options[2]).run()
        # what a random checkpoint writes may be only spaces: it is random
        assert not at.exception and any(m.value.startswith("**Written**") for m in at.markdown)
        assert any("tokenizer reads the prompt as" in c.value for c in at.caption)
        assert at.segmented_control(key="part").options == ["The next word", "Copying from context",
                                                              "Switch heads off", "Layers (logit lens)"]
        for part in ("induction", "heads", "lens"):
            at.segmented_control(key="part").set_value(part).run()
            assert not at.exception and figures(at) or at.metric, part
    finally:
        models.sources.clear()


def test_an_example_button_sets_the_prompt_and_top_p_cuts_the_tail(toy):
    model, vocabulary = toy
    at = open_lm(decode="sample", top_p="0.5", draw="2")
    example = "yesterday she bought a red car . yesterday she"
    button(at, example).click().run()
    assert at.text_input(key="prompt").value == example and link_value(at, "prompt") == example
    with torch.inference_mode():
        want = generate(model, ids_of(vocabulary, example), 10, Sampling(1.0, None, 0.5, 2))
    assert written(at) == [vocabulary.tokens[i] for i in want.written.tolist()]
    bars = figures(at)[1]["data"][0]
    shown_p, colours = plotly_array(bars["x"])[::-1], bars["marker"]["color"][::-1]
    kept = Sampling(1.0, None, 0.5, 2).probabilities(want.logits[0][None])[0]
    top = torch.softmax(want.logits[0], -1).topk(10)
    cut = kept[top.indices] == 0
    assert cut.any() and (~cut).any()  # top-p keeps the head of the distribution, cuts the rest
    np.testing.assert_allclose(shown_p[~cut.numpy()], kept[top.indices][~cut].numpy(), atol=1e-6)
    np.testing.assert_allclose(shown_p[cut.numpy()], top.values[cut].numpy(), atol=1e-6)  # before the cut
    assert [c == "#b4b4b4" for c in colours] == cut.tolist()


def test_after_its_first_writing_the_model_writes_through_its_compiled_step_the_same_words(toy, monkeypatch):
    """The first writing steps eagerly and queues the tracing of the model's step (model.compiled); the next ones
    step through the graph: the same words and the same attention as generate's eager steps."""
    model, vocabulary = toy
    traced = models.compiling(Choice(SourceKey.GPT))
    open_lm(prompt="the cat saw two red birds")
    traced.start_step()  # queued by that first writing unless an earlier test's writing did
    deadline = time.monotonic() + 60
    while traced.ready_step() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert traced.ready_step() is not None  # the toy GPT traces, and the graph passed its bit-for-bit check
    steps, real = [], CompiledStep.__call__
    monkeypatch.setattr(CompiledStep, "__call__", lambda self, *args: steps.append(1) or real(self, *args))
    prompt = "a cat saw the teacher"
    at = open_lm(prompt=prompt, words="12")
    assert len(steps) == 11  # every word after the first, through the graph
    with torch.inference_mode():
        want = generate(model, ids_of(vocabulary, prompt), 12)
    assert written(at) == [vocabulary.tokens[i] for i in want.written.tolist()]
    at.slider(key="step").set_value(11).run()
    causal, _ = figures(at)
    z, row = plotly_array(causal["data"][0]["z"]), ids_of(vocabulary, prompt).numel() + 10
    layer, head = int(link_value(at, "layer")), int(link_value(at, "head"))
    np.testing.assert_allclose(np.nan_to_num(z[row, :row + 1]), want.attentions[layer][head, row, :row + 1], atol=6e-5)


def test_the_induction_part_surveys_every_head_over_many_probes(toy):
    at = open_lm(part="induction")
    grids = [f for f in figures(at) if f["layout"]["title"]["text"].startswith(("Previous-token score",
                                                                               "Induction score"))]
    assert [plotly_array(g["data"][0]["z"]).shape for g in grids] == [(2, 4), (2, 4)]
    table = at.dataframe[-1].value
    assert table["switched off"][2] == "the 3 strongest induction heads" and table["heads (layer.head)"][2].startswith(
        "1.")
    accuracy = [float(a.rstrip("%")) for a in table["copy accuracy"]]
    assert accuracy[0] > 95 and accuracy[2] < 60 and accuracy[3] < 20  # the 3, then the 5 strongest switched off
    assert not any(m.value.startswith("**Beside the toy GPT**") for m in at.markdown)  # it is the toy GPT


def test_a_checkpoints_survey_outlives_the_budget_dropping_everything_else(toy):
    open_lm(part="induction")
    key = ("lm-survey", Choice(SourceKey.GPT))
    assert memory.budget().get(key, count_miss=False) is not None
    memory.budget().clear()  # what a class's sentences do to the budget's entries, at once
    assert memory.budget().get(key, count_miss=False) is not None  # the next student waits for no survey
