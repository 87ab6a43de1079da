"""viz.learning: the loss of every step, a score at some steps on a second axis, a step marked and stretches shaded;
every head's scores over training; plotly's own final form (checking it changes nothing)."""
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from viz.learning import JUMP_FILL, PLATEAU_FILL, head_scores, learning_curve

LOSS = np.linspace(4.5, 0.8, 40).astype(np.float32)
SCORES = [(0, 0.0), (10, 0.05), (25, 0.6), (40, 1.0)]


def sent(figure) -> dict:
    return json.loads(pio.to_json(figure.to_dict(), validate=False))


def test_loss_per_step_and_scores_on_their_own_axis():
    figure = learning_curve(LOSS, SCORES, mark=25).figure()
    loss, scores = figure.data
    assert list(loss.x) == list(range(1, 41)) and np.allclose(loss.y, LOSS)
    assert list(scores.x) == [0, 10, 25, 40] and np.allclose(scores.y, [0, 0.05, 0.6, 1.0])
    assert scores.yaxis == "y2" and figure.layout.yaxis2.overlaying == "y"
    assert figure.layout.yaxis2.tickformat == ".0%" and tuple(figure.layout.yaxis2.range) == (0, 1.05)
    (line,) = figure.layout.shapes
    assert line.x0 == line.x1 == 25 and figure.layout.annotations[0].text == "step 25"


def test_the_axis_runs_to_the_budget_of_a_run_still_going():
    figure = learning_curve(LOSS[:5], [], steps=600).figure()
    assert figure.layout.xaxis.range[1] >= 600
    assert not figure.layout.shapes and len(figure.data[1].x) == 0
    assert learning_curve([], [], steps=600).figure().layout.xaxis.range[1] >= 600  # nothing trained yet


def test_unmarked_without_a_step():
    assert not learning_curve(LOSS, SCORES).figure().layout.shapes


@pytest.mark.parametrize("mark", [None, 0, 40])
def test_checking_the_figure_changes_nothing(mark):
    spec = learning_curve(LOSS, SCORES, mark=mark, title="Training")
    assert sent(go.Figure(spec.to_dict())) == sent(spec)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="one number per step"):
        learning_curve(np.ones((2, 3)), SCORES)
    with pytest.raises(ValueError, match="must be in 0..1"):
        learning_curve(LOSS, [(5, 95.0)])
    with pytest.raises(ValueError, match="do not fit 4 steps"):
        head_scores([0, 1, 2, 3], np.zeros(4), np.zeros((4, 2, 2)), np.zeros((3, 2, 2)), NAMES)


def test_spans_are_shaded_behind_the_mark_and_named():
    spans = [(5, 20, "plateau", PLATEAU_FILL), (20, 30, "the jump", JUMP_FILL)]
    figure = learning_curve(LOSS, SCORES, mark=25, spans=spans, score_label="copy accuracy",
                            score_axis="copy accuracy", score_hover="step %{x}<br>copy %{y:.1%}").figure()
    line, plateau, jump = figure.layout.shapes
    assert line.type == "line" and line.x0 == 25
    assert (plateau.type, plateau.x0, plateau.x1, plateau.layer) == ("rect", 5, 20, "below")
    assert (jump.x0, jump.x1, jump.fillcolor) == (20, 30, JUMP_FILL)
    assert [a.text for a in figure.layout.annotations] == ["step 25", "plateau", "the jump"]
    assert figure.data[1].name == figure.layout.yaxis2.title.text == "copy accuracy"
    assert figure.data[1].hovertemplate.startswith("step %{x}<br>copy")
    assert sent(go.Figure(learning_curve(LOSS, SCORES, spans=spans).to_dict())) == sent(
        learning_curve(LOSS, SCORES, spans=spans))


NAMES = [["0.0", "0.1"], ["1.0", "1.1"]]


def test_every_head_s_scores_over_training():
    steps, accuracy = [0, 10, 20], [0.0, 0.5, 0.9]
    induction = np.arange(12, dtype=np.float32).reshape(3, 2, 2) / 12
    previous = induction[::-1].copy()
    spec = head_scores(steps, accuracy, induction, previous, NAMES, mark=10, highlight=(1, 0),
                       spans=[(10, 20, "the jump", JUMP_FILL)])
    figure = spec.figure()
    *lines, copy = figure.data
    assert len(lines) == 8 and copy.name == "copy accuracy" and np.allclose(copy.y, accuracy)
    by_head = {(t.legendgroup, t.line.dash): t for t in lines}
    assert np.allclose(by_head[("1.0", None)].y, induction[:, 1, 0]) and by_head[("1.0", None)].line.width == 3.5
    assert np.allclose(by_head[("0.1", "dot")].y, previous[:, 0, 1]) and by_head[("0.1", None)].line.width == 1.5
    assert [t.showlegend for t in lines[:2]] == [None, False]  # a head is one entry of the legend
    assert figure.layout.shapes[0].x0 == 10 and figure.layout.shapes[1].type == "rect"
    assert sent(go.Figure(spec.to_dict())) == sent(spec)
