"""The Language model page in a real browser: the toy GPT's default prompt stepped to its end with Next, Previous and
Play; a sampling link reloaded writes the same words; the induction part shows the stripe of the head its score finds;
an empty prompt answered with a plain message."""
import re

from tests.e2e.test_encoder_decoder_translator import ticks
from tests.e2e.test_pages import CHART, TIMEOUT, assert_no_error, open_page


def step_line(page) -> str:
    return page.locator("p", has_text=re.compile(r"^Step \d+\.")).first.inner_text()


def written(page) -> str:
    return page.locator("p", has_text=re.compile(r"^Written \(")).first.inner_text().split("): ", 1)[1]


def test_the_default_prompt_stepped_to_its_end(page, server, shoot):
    open_page(page, server, "language-model", words=5)
    assert written(page) == "two red birds at school"  # copied from the prompt's first sentence
    assert "writes two" in step_line(page)
    for step, word in enumerate(["red", "birds", "at", "school"], start=1):
        page.get_by_role("button", name="Next").click()
        page.wait_for_function(f"() => location.search.includes('step={step}')", timeout=TIMEOUT)
        page.wait_for_function(f"() => [...document.querySelectorAll('p')].some(p => /writes {word}$/.test("
                               "p.innerText.trim()))", timeout=TIMEOUT)
    assert ticks(page, 1, "y")[0] == "school"  # the next-word bars: the chosen word on top
    assert ticks(page, 0, "y")[-1] == "at"  # the map's rows: every token read, the last one this step's
    assert_no_error(page)
    shoot(page, "language-model-step-4")
    page.get_by_role("button", name="Previous").click()
    page.wait_for_function("() => location.search.includes('step=3')", timeout=TIMEOUT)
    page.get_by_role("button", name="Play").click()  # from step 3: one step a second, to the end, then stops
    page.wait_for_function("() => location.search.includes('step=4')", timeout=TIMEOUT)
    page.get_by_role("button", name="Play").wait_for(timeout=TIMEOUT)
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
    assert any(re.match(r"Induction head: layer 1 · head \d \(score 0\.9\d\)", t) for t in titles), titles
    assert any(t.startswith("Previous-token head: layer 0") for t in titles), titles
    shoot(page, "language-model-induction")
    page.get_by_role("button", name="New random words").click()
    page.wait_for_function("() => !/probe_seed=3(&|$)/.test(location.search)", timeout=TIMEOUT)
    page.get_by_text(re.compile(r"Copy accuracy on the second copy: \d+%")).wait_for(timeout=TIMEOUT)
    assert_no_error(page)


def test_an_empty_prompt_gets_a_plain_message(page, server):
    open_page(page, server, "language-model")
    box = page.get_by_label("Prompt (what the model reads before it writes)")
    box.fill("")
    box.press("Enter")
    page.get_by_text("Type a prompt above").wait_for(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() == 0
    assert_no_error(page)
