"""Watch it learn (the Language model page, ?part=learning) in Streamlit's AppTest: the snapshot slider from random to
trained, the induction head's map at each snapshot on a repeat probe (no stripe, then the stripe), the copy accuracy
and the head's score from metrics.json, the loss curve with its plateau and its jump shaded and the step marked, every
head's scores over training; heads switched off; a move back never reads a snapshot again; bad input."""
import json

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from harness import apptest
from harness.apptest import figures, link_value, plotly_array
from model.causal.probes import PROBE_LENGTH, repeat_probes
from model.gpt.snapshots import at_snapshot, snapshot_steps, training_record
from model.gpt.toy import METRICS, SHIPPED, induction_head, load
from runtime import memory

L = PROBE_LENGTH


@pytest.fixture(scope="module")
def record():
    return training_record()


def open_learning(**params) -> AppTest:
    at = apptest.open_page("language-model", part="learning", **params)
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    return at


def charts(at: AppTest) -> tuple[dict, dict, dict]:
    """(the loss curve, the induction head's map, every head's scores)."""
    found = figures(at)
    (heat,) = [f for f in found if f["data"][0]["type"] == "heatmap"]
    curve, lines = [f for f in found if f["data"][0]["type"] == "scatter"]
    assert curve["data"][0]["name"] == "training loss"
    return curve, heat, lines


def probe_attention(model, layer: int, head: int) -> np.ndarray:
    words = len(load()[1].words)
    with torch.inference_mode():
        return model(repeat_probes(words, 1, 0)).attentions[layer][0, head].numpy()


def stripe(z: np.ndarray) -> float:
    """Mean attention from each word of the second copy to the word after its first occurrence."""
    return float(np.mean([z[i, i - L + 1] for i in range(L, 2 * L)]))


def test_the_first_snapshot_is_random_and_the_last_copies_with_its_induction_head(record):
    steps = snapshot_steps()
    layer, head = induction_head()
    at = open_learning()
    slider = at.select_slider(key="snap")
    assert slider.value == 0 and list(slider.options)[0] == "0 (random)" and link_value(at, "snap") == "0"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {f"Training step (of {steps[-1]})": "0", "Copy accuracy": f"{record.copy_accuracy[0]:.1%}",
                       f"Induction score, head {layer}.{head}": f"{record.induction[0][layer, head]:.2f}",
                       "Training loss": "–"}
    assert record.copy_accuracy[0] < 0.05
    assert any(m.value.startswith("**Random weights.**") for m in at.markdown)
    curve, heat, lines = charts(at)
    z = np.nan_to_num(plotly_array(heat["data"][0]["z"]), nan=0.0)
    np.testing.assert_allclose(z, probe_attention(at_snapshot(0), layer, head), atol=5e-5)
    uniform = np.tril(1 / np.arange(1, 2 * L + 1)[:, None] * np.ones((2 * L, 2 * L)))
    assert np.abs(z - uniform).max() < 0.05 and stripe(z) < 0.1  # each word looks evenly behind it: no stripe
    assert heat["layout"]["title"]["text"].startswith(f"Induction head layer {layer} · head {head}, step 0 (random)")
    assert len(plotly_array(curve["data"][0]["y"])) == len(record.loss) == steps[-1]
    np.testing.assert_allclose(plotly_array(curve["data"][1]["y"]), record.copy_accuracy, atol=1e-6)
    mark, plateau, jump = curve["layout"]["shapes"]
    assert mark["type"] == "line" and mark["x0"] == 0
    assert (plateau["x0"], plateau["x1"]) == record.plateau() and plateau["x1"] == record.jump[0]
    assert (jump["x0"], jump["x1"]) == record.jump == (2450, 2900)  # the shipped run's jump
    assert [a["text"] for a in curve["layout"]["annotations"]] == ["step 0", "plateau", "the jump"]
    assert len(lines["data"]) == 2 * 8 + 1 and lines["data"][-1]["name"] == "copy accuracy"
    thick = [t["legendgroup"] for t in lines["data"][:-1] if t["line"]["width"] == 3.5]
    assert thick == [f"{layer}.{head}"]
    assert [s["type"] for s in lines["layout"]["shapes"]] == ["line", "rect", "rect"]

    slider.set_value(steps[-1]).run()
    assert not at.exception and link_value(at, "snap") == str(steps[-1])
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Copy accuracy"] == f"{record.copy_accuracy[-1]:.1%}" and record.copy_accuracy[-1] >= 0.95
    assert metrics["Training loss"] == f"{record.loss[-1]:.3f}"
    assert any(m.value.startswith("**After the jump.**") for m in at.markdown)
    curve, heat, __ = charts(at)
    z = np.nan_to_num(plotly_array(heat["data"][0]["z"]), nan=0.0)
    np.testing.assert_allclose(z, probe_attention(load()[0], layer, head), atol=5e-5)  # the shipped model itself
    assert stripe(z) > 0.8  # the stripe
    assert curve["layout"]["shapes"][0]["x0"] == steps[-1]


@pytest.mark.parametrize(("step", "phase"), [(1600, "**On the plateau.**"), (2600, "**Inside the jump.**"),
                                             (3950, "**After the jump.**")])
def test_a_snapshot_from_the_link_and_where_it_is_in_the_training(record, step, phase):
    at = open_learning(snap=str(step))
    assert at.select_slider(key="snap").value == step
    assert any(m.value.startswith(phase) for m in at.markdown)
    layer, head = induction_head()
    __, heat, lines = charts(at)
    z = np.nan_to_num(plotly_array(heat["data"][0]["z"]), nan=0.0)
    np.testing.assert_allclose(z, probe_attention(at_snapshot(step), layer, head), atol=5e-5)
    assert lines["layout"]["shapes"][0]["x0"] == step
    assert {m.label: m.value for m in at.metric}["Copy accuracy"] == f"{record.copy_accuracy[record.at(step)]:.1%}"


def test_the_jump_s_snapshots_are_named_on_the_slider(record):
    options = list(open_learning().select_slider(key="snap").options)
    assert f"{record.jump[0]} (the jump starts)" in options and f"{record.jump[1]} (the jump has ended)" in options
    assert options[-1] == f"{snapshot_steps()[-1]} (trained)"


def test_heads_switched_off_apply_to_the_snapshot_s_map():
    layer, head = induction_head()
    full = charts(open_learning(snap="5000"))[1]
    # the previous-token head(s) the induction head builds on: the layer-0 set whose loss breaks copying
    previous = json.loads((SHIPPED / METRICS).read_text())["circuit"]["0"]["heads"]
    at = open_learning(snap="5000", off=previous.replace("+", ","))
    __, heat, __ = charts(at)
    assert stripe(np.nan_to_num(plotly_array(heat["data"][0]["z"]))) < stripe(
        np.nan_to_num(plotly_array(full["data"][0]["z"]))) - 0.2
    n = len(previous.split("+"))
    assert any(c.value.startswith(f"The map is read with {n} head") for c in at.caption)


def test_moving_back_to_a_snapshot_reads_nothing_again():
    at = open_learning(snap="2600")
    at.select_slider(key="snap").set_value(2650).run()
    computed = dict(memory.COMPUTED)
    for step in (2600, 2650, 2600):
        at.select_slider(key="snap").set_value(step).run()
        assert not at.exception
    assert dict(memory.COMPUTED) == computed


@pytest.mark.parametrize("bad", ["7", "-1", "abc", "5000.0"])
def test_a_step_without_a_snapshot_in_the_link_is_ignored_with_a_notice(bad):
    at = open_learning(snap=bad)
    assert at.select_slider(key="snap").value == 0
    assert any("snap=" in w.value and "in the link" in w.value for w in at.warning)
