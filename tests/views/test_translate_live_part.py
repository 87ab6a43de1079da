"""Train it live (the Translate page, ?part=live) in Streamlit's AppTest, with a tiny budget (ATTNVIZ_LIVE_STEPS):
start, watch it to the end (loss curve, accuracy, translation and map), a second start refused while it runs, stop
by whoever started it and nobody else, live training switched off, a bad setting said plainly."""
import time

import pytest
from streamlit.testing.v1 import AppTest

from harness import apptest
from harness.apptest import figures
from harness.catalog import marked_chinese, untranslated
from runtime import live_training as live_training
from views.translate import live as translate_live
from views.widgets import live as live_widgets

STEPS = 20


@pytest.fixture
def live(monkeypatch):
    """The page's manager, fresh, with a budget of STEPS steps; its run stopped and removed afterwards."""
    monkeypatch.setenv("ATTNVIZ_LIVE_STEPS", str(STEPS))
    translate_live._manager.clear()
    yield
    manager = translate_live._manager()
    if manager is not None:
        manager.shutdown()
    translate_live._manager.clear()


def open_live(**params) -> AppTest:
    return apptest.open_page("translate", part="live", **params)


def labels(at: AppTest) -> list[str]:
    """The live part's buttons (the page above has buttons of its own: example sentences)."""
    return [b.label for b in at.button if b.key in ("live_start", "live_stop")]


def until(at: AppTest, done, timeout: float = 240) -> None:
    """Rerun the page (as its polling does) until done(at)."""
    deadline = time.time() + timeout
    while not done(at):
        assert time.time() < deadline, [m.value for m in at.metric]
        time.sleep(0.5)
        at.run()
        assert not at.exception, at.exception


def test_start_watch_it_learn_and_finish(live):
    lecturer = open_live()
    assert not lecturer.exception
    assert any("No live training has run" in i.value for i in lecturer.info)
    assert labels(lecturer) == ["Train a new model live"]
    lecturer.button(key="live_start").click().run()
    assert not lecturer.exception
    assert "Stop it" in labels(lecturer)
    until(lecturer, lambda at: len(at.success) > 0)
    (finished,) = lecturer.success
    assert finished.value.startswith(f"Finished: {STEPS} steps in") and "seed 0" in finished.value
    assert (lecturer.metric[0].label, lecturer.metric[0].value) == (f"Step (of at most {STEPS})", str(STEPS))
    assert lecturer.metric[1].label == f"Held-out exact match (step {STEPS})"
    assert lecturer.metric[1].value.endswith("%")
    assert "Stop it" not in labels(lecturer)
    curve = next(f for f in figures(lecturer) if f["data"][0]["type"] == "scatter")
    cross = next(f for f in figures(lecturer) if f["data"][0]["type"] == "heatmap")
    assert len(apptest.plotly_array(curve["data"][0]["y"])) == STEPS
    assert curve["layout"]["xaxis"]["range"][1] >= STEPS
    assert len(cross["data"][0]["x"]) == 5  # 我有一只猫
    assert any(m.value.startswith(f"**Its translation after {STEPS} steps") for m in lecturer.markdown)


def test_a_second_start_is_refused_politely_and_only_the_starter_may_stop(live):
    lecturer, student = open_live(), open_live(src="她有两本书")
    lecturer.number_input(key="live_seed").set_value(5).run()
    lecturer.button(key="live_start").click().run()
    assert translate_live._manager().current().seed == 5
    student.run()
    assert not student.exception
    assert "Stop it" not in labels(student)
    assert any("Started by another visitor" in c.value and "only they can stop it" in c.value
               for c in student.caption)
    student.button(key="live_start").click().run()
    assert not student.exception
    (refused,) = [i.value for i in student.info if "already running" in i.value]
    assert refused.startswith("A live training is already running on this server, started ")
    assert translate_live._manager().current().owner != student.session_state[live_widgets.OWNER]
    lecturer.button(key="live_stop").click().run()
    assert not lecturer.exception
    assert any(w.value.startswith("Stopped after") and "stopped by the visitor who started it" in w.value
               for w in lecturer.warning)
    assert labels(lecturer) == ["Train a new model live"]
    student.run()
    assert any(w.value.startswith("Stopped after") for w in student.warning)


@pytest.mark.parametrize("src", ["你喜欢猫吗", "你喜欢猫吗🙂" + "猫" * 70])  # an unknown character, cut at 64
def test_the_page_sentence_is_the_one_translated_live_with_the_heads_off(live, src):
    at = open_live(src=src, off="cross.1.0")
    at.button(key="live_start").click().run()
    until(at, lambda at: any(m.value.startswith("**Its translation") for m in at.markdown))
    cross = next(f for f in figures(at) if f["data"][0]["type"] == "heatmap")
    assert len(cross["data"][0]["x"]) == min(len(src), 64) and cross["data"][0]["x"][:5] == list("你喜欢猫吗")
    assert any(m.value.startswith("**Its translation") and ", 1 head off:" in m.value for m in at.markdown)
    at.button(key="live_stop").click().run()
    assert not at.exception


def test_live_training_switched_off(monkeypatch):
    monkeypatch.setenv("ATTNVIZ_LIVE_STEPS", "0")
    translate_live._manager.clear()
    try:
        at = open_live()
        assert not at.exception and not labels(at)
        assert any("switched off on this server" in i.value for i in at.info)
    finally:
        translate_live._manager.clear()


def test_a_bad_setting_is_said_plainly(monkeypatch):
    monkeypatch.setenv("ATTNVIZ_LIVE_STEPS", "lots")
    translate_live._manager.clear()
    try:
        at = open_live()
        assert not at.exception
        (error,) = at.error
        assert "ATTNVIZ_LIVE_STEPS must be a whole number" in error.value and "'lots'" in error.value
    finally:
        translate_live._manager.clear()


def _status_in_chinese(state: str, test: float | None, why: tuple) -> None:
    """An app that draws the live part's status of one made-up run, in Chinese: no training process is started."""
    import time  # noqa: PLC0415 - AppTest runs this function's source alone

    import locales  # noqa: PLC0415 - AppTest runs this function's source alone
    from runtime.live_training import LiveRun  # noqa: PLC0415 - AppTest runs this function's source alone
    from views.translate.live import status  # noqa: PLC0415 - AppTest runs this function's source alone

    message, fields = why
    english = message.format(**dict(fields)) if message else ""
    run = LiveRun(2, 3, time.time() - 30, state, 20, loss=(3.2, 2.9), evaluations=((1, 0.25),),
                  ended=None if state == "running" else time.time(), test=test, why=english, why_message=message,
                  why_fields=fields)
    with locales.use("zh"):
        status(run)


@pytest.mark.parametrize(("state", "test", "why"), [
    ("running", None, ("", ())), ("finished", 0.995, ("", ())), ("finished", None, ("", ())),
    ("stopped", None, (live_training.STOPPED_BY_OWNER, ())), ("stopped", None, (live_training.SHUTTING_DOWN, ())),
    ("stopped", None, (live_training.TOO_LONG, (("seconds", "300"),))),
    ("failed", None, (live_training.CRASHED, (("code", 1),)))])
def test_every_state_of_a_run_and_why_it_ended_is_said_in_chinese(monkeypatch, state, test, why):
    """A run is shared by sessions in both languages: its state and why it ended are translated as they are shown."""
    with marked_chinese(monkeypatch) as misses:
        at = AppTest.from_function(_status_in_chinese, args=(state, test, why), default_timeout=30).run()
        assert not at.exception, at.exception
        shown = untranslated(at)
    assert not shown and not misses, (shown, misses)
    said = [e.value for e in (*at.success, *at.warning, *at.error, *at.caption)]
    assert len(said) == 1 and said[0].count("⟦") == (2 if why[0] else 1)  # the reason: a message of its own
