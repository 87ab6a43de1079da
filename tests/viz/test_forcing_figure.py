"""The teacher-forcing grid: five rows of words, green where right, red where wrong, orange where generation reads
its own wrong word, the first divergence framed; labels escaped; the same JSON as plotly's checked figure."""
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from viz.forcing import OWN, RIGHT, ROWS, WRONG, forcing_grid

REFERENCE = ("I", "have", "a", "cat", "<eos>")
FORCED_INPUTS = ("<bos>", "I", "have", "a", "cat")
FORCED = ("I", "have", "a", "small", "<eos>")
GENERATED = ("I", "have", "a", "small", "cats", "<eos>")
GENERATED_INPUTS = ("<bos>", "I", "have", "a", "small", "cats")
P = np.linspace(0.2, 0.9, 6).astype(np.float32)


def grid(first=3, generated=GENERATED, generated_inputs=GENERATED_INPUTS):
    return forcing_grid(REFERENCE, FORCED_INPUTS, FORCED, P[:5], generated_inputs, generated, P[:len(generated)],
                        P[:5], first)


def test_the_rows_colours_and_the_frame_of_the_first_divergence():
    figure = grid().to_dict()
    heat = figure["data"][0]
    assert heat["y"] == list(ROWS) and heat["x"] == ["1", "2", "3", "4", "5", "6"]
    z = grid().figure().data[0].z  # (5, 6) float32, NaN where a row has no word
    assert list(z[1, :5]) == [RIGHT, RIGHT, RIGHT, WRONG, RIGHT] and np.isnan(z[1, 5])
    assert list(z[3]) == [RIGHT, RIGHT, RIGHT, WRONG, WRONG, WRONG]  # past the reference's end: wrong too
    assert list(z[4, 4:]) == [OWN, OWN] and not (z[4, :4] == OWN).any()
    assert heat["text"][1][3] == "small<br><sub>0.62</sub>" and heat["text"][0][0] == "&lt;bos&gt;"
    assert heat["text"][0][5] == "" and "position 4: small (p 0.62)" in heat["customdata"][1][3]
    (frame,) = figure["layout"]["shapes"]
    assert (frame["x0"], frame["x1"]) == (2.5, 3.5)
    assert figure["layout"]["annotations"][0]["text"] == "first divergence"


def test_no_frame_when_they_agree_and_words_are_escaped():
    figure = forcing_grid(("<b>x</b>", "<eos>"), ("<bos>", "<b>x</b>"), ("<b>x</b>", "<eos>"), P[:2],
                          ("<bos>", "<b>x</b>"), ("<b>x</b>", "<eos>"), P[:2], P[:2], None).to_dict()
    assert "shapes" not in figure["layout"] and "annotations" not in figure["layout"]
    assert all("<b>" not in cell for row in figure["data"][0]["text"] for cell in row)
    assert figure["data"][0]["text"][2][0].startswith("&lt;b&gt;x&lt;/b&gt;")


def test_the_spec_sends_what_plotlys_checked_figure_sends():
    spec = grid()
    sent = json.loads(pio.to_json(spec.to_dict(), validate=False))
    checked = json.loads(pio.to_json(go.Figure(spec.to_dict()).to_dict(), validate=False))
    assert sent == checked
