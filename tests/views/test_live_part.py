"""Train it live (?part=live on the Translate and the Language model pages) in Streamlit's AppTest, with a tiny budget
(ATTNVIZ_LIVE_STEPS, ATTNVIZ_LIVE_GPT_STEPS): start, watch it to the end (the loss curve and each page's own figures),
a second start refused while it runs, stop by whoever started it and nobody else, live training switched off, a bad
setting said plainly; one live training per server whatever the page; the Translate page's sentence and heads off
trained live; every state of a run said in Chinese."""
import time
from dataclasses import dataclass
from types import ModuleType

import pytest
from streamlit.testing.v1 import AppTest

from harness import apptest
from harness.apptest import figures, plotly_array
from harness.catalog import marked_chinese, untranslated
from runtime import live_training
from runtime.live_training import under_way
from views.language_model import live as gpt_live
from views.translate import live as translate_live
from views.widgets import live as live_widgets

STEPS = 20


@dataclass(frozen=True)
class Page:
    slug: str
    module: ModuleType  # the page's live part: its _manager
    setting: str  # the environment variable of its budget
    never_ran: str  # what the part says before any run
    scored: str  # the second metric's label: what a run is measured by
    most: int  # the most steps its setting allows
    timeout: float


TRANSLATE = Page("translate", translate_live, "ATTNVIZ_LIVE_STEPS", "No live training has run",
                 "Held-out exact match", 5000, 240)
GPT = Page("language-model", gpt_live, "ATTNVIZ_LIVE_GPT_STEPS", "No live training of the toy GPT has run",
           "Copy accuracy", 10000, 120)
PAGES = pytest.mark.parametrize("page", [TRANSLATE, GPT], ids=["translate", "language-model"])


def _clear() -> None:
    for page in (TRANSLATE, GPT):
        manager = page.module._manager()
        if manager is not None:
            manager.shutdown()
        page.module._manager.clear()


@pytest.fixture
def live(monkeypatch):
    """Both pages' managers, fresh, with budgets of STEPS steps; their runs stopped and removed afterwards."""
    for page in (TRANSLATE, GPT):
        monkeypatch.setenv(page.setting, str(STEPS))
        page.module._manager.clear()
    yield
    _clear()


def open_live(page: Page, **params) -> AppTest:
    at = apptest.open_page(page.slug, part="live", **params)
    assert not at.exception, at.exception
    return at


def labels(at: AppTest) -> list[str]:
    """The live part's buttons (the pages have buttons of their own: example sentences and prompts)."""
    return [b.label for b in at.button if b.key in ("live_start", "live_stop")]


def until(at: AppTest, done, timeout: float) -> None:
    """Rerun the page (as its polling does) until done(at)."""
    deadline = time.time() + timeout
    while not done(at):
        assert time.time() < deadline, [m.value for m in at.metric]
        time.sleep(0.5)
        at.run()
        assert not at.exception, at.exception


def _translator_figures(at: AppTest) -> None:
    (cross,) = [f for f in figures(at) if f["data"][0]["type"] == "heatmap"]
    assert len(cross["data"][0]["x"]) == 5  # 我有一只猫
    assert any(m.value.startswith(f"**Its translation after {STEPS} steps") for m in at.markdown)


def _gpt_figures(at: AppTest) -> None:
    (heat,) = [f for f in figures(at) if f["data"][0]["type"] == "heatmap"]
    _, lines = [f for f in figures(at) if f["data"][0]["type"] == "scatter"]
    assert heat["layout"]["title"]["text"].startswith("Induction head layer 1 · head ")
    assert f"after {STEPS} steps" in heat["layout"]["title"]["text"] and len(heat["data"][0]["x"]) == 24
    assert len(lines["data"]) == 2 * 8 + 1 and list(plotly_array(lines["data"][0]["x"])) == [0, STEPS]
    curve = next(f for f in figures(at) if f["data"][0]["type"] == "scatter")
    assert list(plotly_array(curve["data"][1]["x"])) == [0, STEPS]  # evaluated at the start and at the end
    assert gpt_live._manager().current().kind == "gpt"
    assert any(f"for {STEPS} steps at one thread" in c.value for c in at.caption)


@pytest.mark.parametrize(("page", "own_figures"), [(TRANSLATE, _translator_figures), (GPT, _gpt_figures)],
                         ids=["translate", "language-model"])
def test_start_watch_it_learn_and_finish(live, page, own_figures):
    lecturer = open_live(page)
    assert any(i.value.startswith(page.never_ran) for i in lecturer.info)
    assert labels(lecturer) == ["Train a new model live"]
    lecturer.button(key="live_start").click().run()
    assert not lecturer.exception and "Stop it" in labels(lecturer)
    until(lecturer, lambda at: any(s.value.startswith("Finished") for s in at.success), page.timeout)
    (finished,) = [s.value for s in lecturer.success]
    assert finished.startswith(f"Finished: {STEPS} steps in") and "seed 0" in finished
    metrics = [(m.label, m.value) for m in lecturer.metric]
    assert metrics[0] == (f"Step (of at most {STEPS})", str(STEPS))
    assert metrics[1][0] == f"{page.scored} (step {STEPS})" and metrics[1][1].endswith("%")
    assert "Stop it" not in labels(lecturer)
    curve = next(f for f in figures(lecturer) if f["data"][0]["type"] == "scatter")
    assert len(plotly_array(curve["data"][0]["y"])) == STEPS and curve["layout"]["xaxis"]["range"][1] >= STEPS
    assert list(plotly_array(curve["data"][1]["x"]))[-1] == STEPS  # evaluated at the end
    own_figures(lecturer)


@PAGES
def test_a_second_start_is_refused_and_only_the_starter_may_stop(live, page):
    lecturer, student = open_live(page), open_live(page)
    lecturer.number_input(key="live_seed").set_value(5).run()
    lecturer.button(key="live_start").click().run()
    manager = page.module._manager()
    assert manager.current().seed == 5
    student.run()
    assert "Stop it" not in labels(student)
    assert any("Started by another visitor" in c.value and "only they can stop it" in c.value
               for c in student.caption)
    student.button(key="live_start").click().run()
    assert not student.exception
    (refused,) = [i.value for i in student.info if "already running" in i.value]
    assert refused.startswith("A live training is already running on this server, started ")
    run = manager.current()
    assert run.owner == lecturer.session_state[live_widgets.OWNER] != student.session_state[live_widgets.OWNER]
    assert not manager.stop(student.session_state[live_widgets.OWNER])  # nobody else stops it
    assert manager.current().state == "running"
    lecturer.button(key="live_stop").click().run()
    assert not lecturer.exception
    assert any(w.value.startswith("Stopped after") and "stopped by the visitor who started it" in w.value
               for w in lecturer.warning)
    assert labels(lecturer) == ["Train a new model live"]
    student.run()
    assert any(w.value.startswith("Stopped after") for w in student.warning)


def test_one_live_training_per_server_whatever_the_page(live):
    translating, writing = open_live(TRANSLATE), open_live(GPT)
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


@pytest.mark.parametrize("src", ["你喜欢猫吗", "你喜欢猫吗🙂" + "猫" * 70])  # an unknown character, cut at 64
def test_the_page_sentence_is_the_one_translated_live_with_the_heads_off(live, src):
    at = open_live(TRANSLATE, src=src, off="cross.1.0")
    at.button(key="live_start").click().run()
    until(at, lambda at: any(m.value.startswith("**Its translation") for m in at.markdown), TRANSLATE.timeout)
    cross = next(f for f in figures(at) if f["data"][0]["type"] == "heatmap")
    assert len(cross["data"][0]["x"]) == min(len(src), 64) and cross["data"][0]["x"][:5] == list("你喜欢猫吗")
    assert any(m.value.startswith("**Its translation") and ", 1 head off:" in m.value for m in at.markdown)
    at.button(key="live_stop").click().run()
    assert not at.exception


@PAGES
def test_live_training_switched_off(monkeypatch, page):
    monkeypatch.setenv(page.setting, "0")
    page.module._manager.clear()
    try:
        at = open_live(page)
        assert not labels(at)
        assert any(f"switched off on this server ({page.setting}=0)" in i.value for i in at.info)
    finally:
        page.module._manager.clear()


@PAGES
@pytest.mark.parametrize("value", ["lots", "99999"])
def test_a_bad_setting_is_said_plainly(monkeypatch, page, value):
    monkeypatch.setenv(page.setting, value)
    page.module._manager.clear()
    try:
        at = open_live(page)
        (error,) = at.error
        assert f"{page.setting} must be a whole number of steps from 0 (off) to {page.most}" in error.value
        assert f"'{value}'" in error.value and not labels(at)
    finally:
        page.module._manager.clear()


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
