"""The heatmap page (the default, at /) in Streamlit's AppTest: the map, its sliders, the link, the cache."""
from apptest_harness import APP, TIMEOUT, charts, link_value
from streamlit.testing.v1 import AppTest


def run(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def test_default_page_draws_a_heatmap_with_sliders():
    at = run()
    assert not at.exception
    assert len(charts(at)) == 1
    labels = [s.label for s in at.slider]
    assert labels == ["Layer", "Head"]
    assert at.slider[0].max == 5 and at.slider[1].max == 11  # all-MiniLM-L6-v2: 6 layers x 12 heads


def test_the_map_says_what_was_run_under_it():
    at = run(text="Hello students")
    layout = charts(at)[0].figure["layout"]
    (note,) = layout["annotations"]
    assert note["text"].startswith("4 tokens · 6 layers × 12 heads · all-MiniLM-L6-v2")  # [CLS] hello students [SEP]
    assert note["y"] == 0 and note["yanchor"] == "top"  # under the map, in the chart (and in its PNG)


def test_url_state_is_restored_and_written_back():
    at = run(text="Hello students", layer="3", head="7")
    assert not at.exception
    assert at.text_area[0].value == "Hello students"
    assert at.slider[0].value == 3 and at.slider[1].value == 7
    at.slider[0].set_value(4).run()
    assert link_value(at, "layer") == "4"


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
