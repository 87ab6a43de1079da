"""viz.learning.learning_curve: the loss of every step, the exact match at some steps on a second axis, a step
marked; plotly's own final form (checking it changes nothing)."""
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from viz.learning import learning_curve

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
    with pytest.raises(ValueError, match="exact match must be in 0..1"):
        learning_curve(LOSS, [(5, 95.0)])
