"""Train it live (the Language model page, ?part=live) in Streamlit's AppTest, with a tiny budget
(ATTNVIZ_LIVE_GPT_STEPS): start, watch it to the end (loss curve, copy accuracy, every head's scores, the induction
head's map), a second start refused while it runs, stop by whoever started it and nobody else; one live training per
server whatever the page (the Translate page's run refuses a GPT start, and the other way round); live training
switched off, a bad setting said plainly."""
import time

import pytest
from streamlit.testing.v1 import AppTest

from harness import apptest
from harness.apptest import figures, plotly_array
from runtime.live_training import under_way
from views.language_model import live as gpt_live
from views.translate import live as translate_live
from views.widgets import live as live_widgets

STEPS = 20


@pytest.fixture
def live(monkeypatch):
    """Both pages' managers, fresh, with budgets of STEPS steps; their runs stopped and removed afterwards."""
    monkeypatch.setenv("ATTNVIZ_LIVE_GPT_STEPS", str(STEPS))
    monkeypatch.setenv("ATTNVIZ_LIVE_STEPS", str(STEPS))
    for page in (gpt_live, translate_live):
        page._manager.clear()
    yield
    for page in (gpt_live, translate_live):
        manager = page._manager()
        if manager is not None:
            manager.shutdown()
        page._manager.clear()


def open_live(**params) -> AppTest:
    at = apptest.open_page("language-model", part="live", **params)
    assert not at.exception, at.exception
    return at


def labels(at: AppTest) -> list[str]:
    """The live part's buttons (the page has buttons of its own: example prompts)."""
    return [b.label for b in at.button if b.key in ("live_start", "live_stop")]


def until(at: AppTest, done, timeout: float = 120) -> None:
    """Rerun the page (as its polling does) until done(at)."""
    deadline = time.time() + timeout
    while not done(at):
        assert time.time() < deadline, [m.value for m in at.metric]
        time.sleep(0.5)
        at.run()
        assert not at.exception, at.exception


def test_start_watch_it_learn_and_finish(live):
    lecturer = open_live()
    assert any(i.value.startswith("No live training of the toy GPT has run") for i in lecturer.info)
    assert any("for 20 steps at one thread" in c.value for c in lecturer.caption)
    assert labels(lecturer) == ["Train a new model live"]
    lecturer.button(key="live_start").click().run()
    assert not lecturer.exception and "Stop it" in labels(lecturer)
    assert gpt_live._manager().current().kind == "gpt"
    until(lecturer, lambda at: any(s.value.startswith("Finished") for s in at.success))
    (finished,) = [s.value for s in lecturer.success]
    assert finished.startswith(f"Finished: {STEPS} steps in") and "seed 0" in finished
    metrics = [(m.label, m.value) for m in lecturer.metric]
    assert metrics[0] == (f"Step (of at most {STEPS})", str(STEPS))
    assert metrics[1][0] == f"Copy accuracy (step {STEPS})" and metrics[1][1].endswith("%")
    assert "Stop it" not in labels(lecturer)
    found = figures(lecturer)
    (heat,) = [f for f in found if f["data"][0]["type"] == "heatmap"]
    curve, lines = [f for f in found if f["data"][0]["type"] == "scatter"]
    assert len(plotly_array(curve["data"][0]["y"])) == STEPS and curve["layout"]["xaxis"]["range"][1] >= STEPS
    assert list(plotly_array(curve["data"][1]["x"])) == [0, STEPS]  # evaluated at the start and at the end
    assert heat["layout"]["title"]["text"].startswith("Induction head layer 1 · head ")
    assert f"after {STEPS} steps" in heat["layout"]["title"]["text"] and len(heat["data"][0]["x"]) == 24
    assert len(lines["data"]) == 2 * 8 + 1 and list(plotly_array(lines["data"][0]["x"])) == [0, STEPS]


def test_a_second_start_is_refused_and_only_the_starter_may_stop(live):
    lecturer, student = open_live(), open_live()
    lecturer.number_input(key="live_seed").set_value(5).run()
    lecturer.button(key="live_start").click().run()
    assert gpt_live._manager().current().seed == 5
    student.run()
    assert "Stop it" not in labels(student)
    assert any("Started by another visitor" in c.value and "only they can stop it" in c.value
               for c in student.caption)
    student.button(key="live_start").click().run()
    assert not student.exception
    (refused,) = [i.value for i in student.info if "already running" in i.value]
    assert refused.startswith("A live training is already running on this server, started ")
    run = gpt_live._manager().current()
    assert run.owner == lecturer.session_state[live_widgets.OWNER] != student.session_state[live_widgets.OWNER]
    assert not gpt_live._manager().stop(student.session_state[live_widgets.OWNER])  # nobody else stops it
    assert gpt_live._manager().current().state == "running"
    lecturer.button(key="live_stop").click().run()
    assert not lecturer.exception
    assert any(w.value.startswith("Stopped after") and "stopped by the visitor who started it" in w.value
               for w in lecturer.warning)
    assert labels(lecturer) == ["Train a new model live"]
    student.run()
    assert any(w.value.startswith("Stopped after") for w in student.warning)


def test_one_live_training_per_server_whatever_the_page(live):
    translating = apptest.open_page("translate", part="live")
    writing = open_live()
    translating.button(key="live_start").click().run()
    assert under_way().kind == "translator"
    writing.run()
    assert any(c.value.startswith("The translator (Translate page) is being trained live on this server now")
               for c in writing.caption)
    writing.button(key="live_start").click().run()
    assert not writing.exception and gpt_live._manager().current() is None  # not started
    (refused,) = [i.value for i in writing.info if i.value.startswith("Not started")]
    assert "The translator (Translate page) is being trained live on this server" in refused
    assert "One live training runs at a time per server" in refused
    translating.button(key="live_stop").click().run()
    assert under_way() is None

    writing.button(key="live_start").click().run()
    assert under_way().kind == "gpt" and "Stop it" in labels(writing)
    translating.button(key="live_start").click().run()
    assert not translating.exception and translate_live._manager().current().state == "stopped"  # its last run
    assert any(i.value.startswith("Not started: The toy GPT (Language model page) is being trained live")
               for i in translating.info)
    writing.button(key="live_stop").click().run()
    assert under_way() is None


def test_live_training_switched_off(monkeypatch):
    monkeypatch.setenv("ATTNVIZ_LIVE_GPT_STEPS", "0")
    gpt_live._manager.clear()
    try:
        at = open_live()
        assert not labels(at)
        assert any("switched off on this server (ATTNVIZ_LIVE_GPT_STEPS=0)" in i.value for i in at.info)
    finally:
        gpt_live._manager.clear()


def test_a_bad_setting_is_said_plainly(monkeypatch):
    monkeypatch.setenv("ATTNVIZ_LIVE_GPT_STEPS", "99999")
    gpt_live._manager.clear()
    try:
        at = open_live()
        (error,) = at.error
        assert "ATTNVIZ_LIVE_GPT_STEPS must be a whole number of steps from 0 (off) to 10000" in error.value
        assert "'99999'" in error.value and not labels(at)
    finally:
        gpt_live._manager.clear()
