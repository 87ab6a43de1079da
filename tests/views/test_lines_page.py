"""The line view (/lines) in AppTest: its lines are the run's own weights, a click on a token selects it as the query
(its lines bright, its row outlined in the heatmap beside), the heads are chosen in the link; the downloads."""
import csv
import io

import numpy as np
import pytest
import streamlit as st

from harness.apptest import charts, open_page
from runtime import models, runs
from views.charts.mounted import element_key
from views.pages.lines import pick_query
from views.widgets import downloads

TEXT = "the cat sat on the mat"


def attentions():
    return runs.compute_run(models.Choice("minilm"), TEXT).attentions


def test_the_lines_are_the_runs_weights_and_the_files_hold_them(offered):
    at = open_page("lines", text=TEXT, layer="2", lines_heads="0,5", query="3")
    assert not at.exception
    lines, heat = (c.figure for c in charts(at))
    assert lines["layout"]["title"]["text"] == "Layer 2: 2 heads, query 3: sat selected"
    assert heat["layout"]["shapes"][0]["y0"] == 2.5  # row 3 outlined
    maps = attentions()[2]
    rows = list(csv.DictReader(io.StringIO(offered["Download the lines (CSV)"][1]().decode("utf-8")
                                           .removeprefix(downloads.BOM))))
    assert {r["head"] for r in rows} == {"0", "5"}
    for r in rows:
        assert float(r["weight"]) == pytest.approx(maps[int(r["head"]), int(r["query"]), int(r["key"])], abs=1e-7)
    arrays = np.load(io.BytesIO(offered["Download the lines (NumPy .npz)"][1]()), allow_pickle=False)
    assert arrays["heads"].tolist() == [0, 5] and int(arrays["layer"]) == 2


def test_pick_query_takes_a_click_on_the_left_column_only_and_checks_it(monkeypatch):
    state = {}
    monkeypatch.setattr(st, "session_state", state)
    for click, query in (({"curve": 8, "point": 4, "at": 1}, 4),  # the left column is trace 10 - 2
                         ({"curve": 3, "point": 1, "at": 2}, 4),  # a line, not a token: nothing
                         ({"curve": 8, "point": 99, "at": 3}, 4),  # out of range (a forged message): nothing
                         ({"curve": 8, "point": "2", "at": 4}, 4),  # not an int: nothing
                         ({"curve": 8, "point": 0, "at": 5}, 0)):
        state[element_key("lines")] = {"click": click}
        pick_query(10, 6)
        assert state["query"] == query, click
