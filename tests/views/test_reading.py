"""Chinese on an English model: below the text box, the tokens as the model sees them, how many are [UNK], and a link
to the Translate page with the text as its source (views/shell/reading.py); nothing for a text the model reads."""
import dataclasses
from urllib.parse import parse_qs

import pytest

from harness.apptest import open_page
from model.loading.sources import list_sources
from views.shell import frame, reading, registry
from views.shell.registry import RUN

CHINESE = "我有一只猫"  # all-MiniLM-L6-v2: [CLS] 我 有 一 [UNK] [UNK] [SEP]
RUN_PAGES = [spec.path for spec in registry.PAGES if RUN in spec.needs]


def notices(at) -> list[str]:
    return [w.value for w in at.warning if "[UNK]" in w.value or "##" in w.value]


def links(at) -> list:
    return [e.proto for e in at.get("page_link") if e.proto.page == "translate"]


@pytest.mark.parametrize("path", RUN_PAGES)
def test_chinese_on_the_english_model_shows_the_tokens_the_unknown_share_and_the_translator(path):
    at = open_page(path, text=CHINESE)
    assert not at.exception
    (notice,) = notices(at)
    assert "` 我 ` ` 有 ` ` 一 ` ` [UNK] ` ` [UNK] `" in notice  # the tokens, each in a code span
    assert "2 of 5 tokens are ` [UNK] `" in notice
    (link,) = links(at)
    assert parse_qs(link.query_string) == {"src": [CHINESE]}


def test_the_notice_and_the_link_in_chinese():
    at = open_page("heatmap", title="注意力热力图", text=CHINESE, lang="zh")
    (notice,) = notices(at)
    assert "5 个词元中有 2 个是 ` [UNK] `（未知词元）" in notice and "模型看到的词元是" in notice
    (link,) = links(at)
    assert link.label == "用能读中文的翻译模型来读它" and parse_qs(link.query_string) == {"src": [CHINESE]}


@pytest.mark.parametrize("text", ["The animal didn't cross the street because it was too tired.",
                                  "Tokenizers split rare words: unbelievably, café."])
def test_a_text_the_model_reads_says_nothing(text):
    at = open_page("heatmap", text=text)  # "tokenizers" is token ##izer ##s: the model's own word pieces
    assert not at.exception and not notices(at) and not links(at)


def test_another_alphabet_cut_into_letters_is_said_without_the_translator():
    at = open_page("softmax", text="Привет мир")
    (notice,) = notices(at)
    assert "cut into single letters" in notice and "[UNK]" not in notice.split("\n\n")[1]
    assert not links(at)  # the translator reads Chinese, not Russian


def test_the_translator_says_what_it_has_not_seen_itself():
    at = open_page("masks", model="translator", src=CHINESE + "鼠")
    assert not at.exception and not notices(at) and not links(at)


def test_without_the_translator_no_link(monkeypatch):
    monkeypatch.setattr(frame, "sources", lambda: [dataclasses.replace(s, available=s.key != "translator")
                                                   for s in list_sources()])
    at = open_page("heatmap", text=CHINESE)
    assert notices(at) and not links(at)


def test_a_long_text_goes_to_the_link_cut():
    assert reading.source_for_link("猫\n\n" * 500) == " ".join(["猫"] * 500)[:reading.LINK_CHARS]
    assert reading.badly_read(["[CLS]", "я", "##с", "[SEP]"], "[UNK]", {"[CLS]", "[SEP]", "[UNK]"}) == (0, 2, True)
    assert reading.badly_read(["[CLS]", "token", "##izer", "[SEP]"], "[UNK]", {"[CLS]", "[SEP]"}) == (0, 2, False)
