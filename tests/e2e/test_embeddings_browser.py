"""The sentence-embedding lens in the real browser: the default sentences draw the four charts; a 512-token sentence
among them arrives within the issue's byte budget (1 MB)."""
from urllib.parse import quote

from harness.texts import sentence
from tests.e2e.streamlit_browser import settled
from tests.e2e.test_atlas_browser import received_bytes
from tests.e2e.test_pages import TIMEOUT, assert_no_error

SHARES = "Each token's share of the vector of sentence"


def test_the_default_sentences_draw_every_chart(page, server, shoot):
    page.goto(f"{server}/embeddings")
    page.locator(".gtitle", has_text=SHARES).wait_for(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() == 4
    assert_no_error(page)
    shoot(page, "embeddings")


def test_a_512_token_sentence_arrives_within_a_megabyte(page, server):
    count = received_bytes(page)
    sents = "\n".join([sentence(512), "I have a cat", "The weather is nice today"])
    page.goto(f"{server}/embeddings?sents={quote(sents)}")
    page.locator(".gtitle", has_text=SHARES).wait_for(timeout=TIMEOUT)
    settled(page)
    assert page.get_by_text("the sentence-transformers pipeline would cut it at 256").count() == 1
    assert_no_error(page)
    assert 0 < count[0] <= 1_000_000, count[0]
