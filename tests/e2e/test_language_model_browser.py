"""The Language model page in a real browser: the toy GPT's default prompt stepped to its end with Next, Previous and
Play; a sampling link reloaded writes the same words; the induction part shows the stripe of the head its score finds;
an empty prompt answered with a plain message; the snapshot slider at its first and last step; a live run of a few
steps finishes while a second visitor's start is refused."""
import re
from pathlib import Path

import pytest

from harness.servers import spawn
from model.gpt.snapshots import snapshot_steps
from tests.e2e.streamlit_browser import back_and_play, emptied, next_writes, step_line
from tests.e2e.test_encoder_decoder_translator import ticks
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error, open_page

ROOT = Path(__file__).resolve().parents[2]
LIVE_STEPS = 300  # a live run of a few seconds, long enough for a second visitor to try a start while it runs


def written(page) -> str:
    return page.locator("p", has_text=re.compile(r"^Written \(")).first.inner_text().split("): ", 1)[1]


def test_the_default_prompt_stepped_to_its_end(page, server, shoot):
    open_page(page, server, "language-model", words=5)
    assert written(page) == "two red birds at school"  # copied from the prompt's first sentence
    assert "writes two" in step_line(page)
    next_writes(page, ["red", "birds", "at", "school"])
    assert ticks(page, 1, "y")[0] == "school"  # the next-word bars: the chosen word on top
    assert ticks(page, 0, "y")[-1] == "at"  # the map's rows: every token read, the last one this step's
    assert_no_error(page)
    shoot(page, "language-model-step-4")
    back_and_play(page, 4)
    assert_no_error(page)


def test_a_sampling_link_reloaded_writes_the_same_words(page, server):
    open_page(page, server, "language-model", decode="sample", temperature=1.5, top_k=8, draw=11)
    first = written(page)
    assert "sampling, T = 1.5, top-k 8, seed 11" in page.locator("p", has_text="Written").first.inner_text()
    page.reload()
    page.wait_for_selector(CHART, timeout=TIMEOUT)
    assert written(page) == first
    assert_no_error(page)


def test_the_induction_part_shows_the_stripe_of_the_head_found_by_its_score(page, server, shoot):
    open_page(page, server, "language-model", part="induction", probe_seed=3)
    page.get_by_text(re.compile(r"Copy accuracy on the second copy: \d+%")).wait_for(timeout=TIMEOUT)
    titles = page.locator(".gtitle").all_text_contents()
    assert any(re.match(r"Induction head: layer 1 · head \d \(score 0\.[89]\d\)", t) for t in titles), titles
    assert any(t.startswith("Previous-token head: layer 0") for t in titles), titles
    shoot(page, "language-model-induction")
    page.get_by_role("button", name="New random words").click()
    page.wait_for_function("() => !/probe_seed=3(&|$)/.test(location.search)", timeout=TIMEOUT)
    page.get_by_text(re.compile(r"Copy accuracy on the second copy: \d+%")).wait_for(timeout=TIMEOUT)
    assert_no_error(page)


def test_an_empty_prompt_gets_a_plain_message(page, server):
    open_page(page, server, "language-model")
    emptied(page, "Prompt (what the model reads before it writes)", "Type a prompt above")
    assert_no_error(page)


def test_the_snapshot_slider_at_its_first_and_last_step(page, server, shoot):
    last = snapshot_steps()[-1]
    open_page(page, server, "language-model", part="learning")
    page.get_by_text(re.compile(r"^Random weights\.")).wait_for(timeout=TIMEOUT)
    titles = page.locator(".gtitle").all_text_contents()
    assert any(t.startswith("Induction head layer 1 · head") and "step 0 (random)" in t for t in titles), titles
    snapshot = page.locator('[data-testid="stSlider"]').filter(has_text="Training step (a snapshot")
    snapshot = snapshot.get_by_role("slider")
    snapshot.focus()
    page.keyboard.press("End")
    page.wait_for_function(f"() => location.search.includes('snap={last}')", timeout=TIMEOUT)
    page.get_by_text(re.compile(r"^After the jump\.")).wait_for(timeout=TIMEOUT)
    page.wait_for_function(f"() => [...document.querySelectorAll('.gtitle')].some(t => t.textContent.includes("
                           f"'after {last} steps'))", timeout=TIMEOUT)
    assert_no_error(page)
    shoot(page, "language-model-learning-last")


@pytest.fixture(scope="module")
def live_server():
    """A server whose live GPT training stops after LIVE_STEPS steps (a few seconds), for this module alone."""
    try:
        with spawn(ROOT / "app.py", env={"ATTNVIZ_LIVE_GPT_STEPS": str(LIVE_STEPS)}, session_ttl=None) as running:
            yield running.url.rstrip("/")
    except RuntimeError as e:
        pytest.fail(str(e))


def test_a_live_run_finishes_and_a_second_start_is_refused(browser, live_server, shoot):
    lecturer, student = browser.new_context(), browser.new_context()  # two sessions
    try:
        first, second = lecturer.new_page(), student.new_page()
        for p in (first, second):
            p.errors = []
            p.on("pageerror", lambda e, p=p: p.errors.append(str(e)))
            p.goto(f"{live_server}/language-model?part=live")
            p.get_by_role("button", name="Train a new model live").wait_for(timeout=TIMEOUT)
        first.get_by_role("button", name="Train a new model live").click()
        first.get_by_text(re.compile(r"Training \(run 1 of this server")).wait_for(timeout=TIMEOUT)
        second.get_by_role("button", name="Train a new model live").click()
        second.get_by_text(re.compile("A live training is already running on this server")).wait_for(timeout=TIMEOUT)
        first.get_by_text(re.compile(rf"Finished: {LIVE_STEPS} steps in")).wait_for(timeout=TIMEOUT)
        first.wait_for_selector(CHART, timeout=TIMEOUT)
        assert first.locator(".js-plotly-plot").count() >= 2  # the curve and the induction head's map
        for p in (first, second):
            assert_no_error(p)
        shoot(first, "language-model-live-finished")
    finally:
        lecturer.close()
        student.close()
