"""The app loads in Streamlit's AppTest: default state, URL state, bad input."""
import json

import pytest
from apptest_harness import APP, TIMEOUT
from streamlit.testing.v1 import AppTest


def run(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def test_default_page_draws_a_heatmap_with_sliders():
    at = run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 1
    labels = [s.label for s in at.slider]
    assert labels == ["Layer", "Head"]
    assert at.slider[0].max == 5 and at.slider[1].max == 11  # all-MiniLM-L6-v2: 6 layers x 12 heads


def test_the_map_says_what_was_run_under_it():
    at = run(text="Hello students")
    layout = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]
    (note,) = layout["annotations"]
    assert note["text"].startswith("4 tokens · 6 layers × 12 heads · all-MiniLM-L6-v2")  # [CLS] hello students [SEP]
    assert note["y"] == 0 and note["yanchor"] == "top"  # under the map, in the chart (and in its PNG)


def test_url_state_is_restored_and_written_back():
    at = run(text="Hello students", layer="3", head="7")
    assert not at.exception
    assert at.text_area[0].value == "Hello students"
    assert at.slider[0].value == 3 and at.slider[1].value == 7
    at.slider[0].set_value(4).run()
    assert at.query_params["layer"] == ["4"] or at.query_params["layer"] == "4"


def test_a_page_stopped_at_an_empty_text_still_writes_the_link():
    at = run(text="   ")
    assert any("Type a sentence" in i.value for i in at.info) and not at.get("plotly_chart")
    assert "model" in at.query_params and "img" in at.query_params  # what it had drawn before the stop


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_chart_toolbar_downloads_the_chosen_format(fmt):
    at = run(img=fmt)
    assert not at.exception
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    assert config["toImageButtonOptions"]["format"] == fmt
    assert config["displaylogo"] is False


def test_a_slider_move_never_runs_the_model_again_even_after_the_class_filled_the_cache():
    from views import memory, models, runs

    at = run(text="Mine alone")
    budget = memory.budget()
    for i in range(budget.max_entries + 8):  # the rest of the class's sentences fill the budget's passes
        memory.cached(("another student", i), lambda: runs.compute_run(models.Choice("minilm"), f"Theirs {i}"))
    assert budget.kinds()["forward"] == budget.max_entries and ("another student", 0) not in budget
    forward = memory.COMPUTED["forward"]
    at.slider[0].set_value(2).run()
    at.slider[1].set_value(5).run()
    assert not at.exception and at.slider[0].value == 2
    assert memory.COMPUTED["forward"] == forward
    at.text_area[0].input("A new sentence").run()  # a new sentence is one pass
    assert memory.COMPUTED["forward"] == forward + 1


def test_the_model_picker_says_which_models_are_missing_and_why(monkeypatch):
    import dataclasses

    from model import sources
    from views import models

    real = sources.list_sources()
    missing = dataclasses.replace(real[0], key="hf:absent", label="Absent BERT", available=False,
                                  reason="not in the local Hugging Face cache (/nowhere)")
    monkeypatch.setattr(sources, "list_sources", lambda: [*real, missing])
    models.sources.clear()  # cached for a minute per process
    try:
        at = run()
        assert not at.exception
        picker = at.sidebar.selectbox[0]
        assert picker.label == "Model" and "Absent BERT" not in picker.options
        assert "**Absent BERT**: not in the local Hugging Face cache (/nowhere)" in picker.help
    finally:
        models.sources.clear()
