"""Two languages: ?lang=, the browser's language, the sidebar switch; and every page shown wholly from the catalog."""
import pytest
from streamlit.testing.v1 import AppTest

import locales
from harness.apptest import TIMEOUT, _app_starting_at, link_value
from harness.catalog import marked_chinese, untranslated
from locales import _
from views.shell import registry

# Every page, and the states of a page that show other texts (a part, a mask, a decoding way).
PAGE_STATES = [(spec.path, {}) for spec in registry.PAGES] + [
    ("masks", {"mask": "padding"}), ("masks", {"mask": "custom", "blocked": "1,2"}), ("masks", {"mask": "none"}),
    ("masks", {"mask": "causal", "text": "word " * 300}), ("masks", {"model": "translator", "src": "我有一只猫"}),
    ("steps", {"model": "random", "norm": "pre-LN", "layers": "2", "layer": "1", "text": "word " * 80}),
    ("all-heads", {"text": "word " * 200}), ("all-heads", {"special": "hide"}), ("heatmap", {"special": "renorm"}),
    ("heatmap", {"special": "hide", "text": "word " * 200}), ("softmax", {"model": "random", "temp": "2"}),
    # Translate: each part, each way of choosing a word, heads switched off, and bad input
    ("translate", {"part": "alignment", "src": "昨天我买了一本书"}),
    ("translate", {"part": "heads", "off": "cross.0.0,cross.0.1,cross.1.0,cross.1.1"}),
    ("translate", {"part": "forcing"}),
    ("translate", {"part": "forcing", "snap": "75", "off": "cross.1.0"}),  # teacher forcing and generation part
    ("translate", {"part": "forcing", "src": "你好吗"}),  # no correct translation known
    ("translate", {"part": "learning", "snap": "0", "off": "cross.1.0"}),
    ("translate", {"part": "live"}),
    ("translate", {"part": "lens", "off": "cross.1.0", "src": "昨天我买了一本书"}),
    ("translate", {"decode": "sample", "temperature": "2", "top_k": "5", "top_p": "0.9"}),
    ("translate", {"decode": "beam", "step": "2"}),
    ("translate", {"src": ""}),  # empty
    ("translate", {"src": "hello"}),  # no Chinese character
    ("translate", {"src": "猫喜欢我们的熊猫"}),  # outside the toy language, an unknown character
    ("translate", {"src": "明天我们在学校有两个小孩子吗"}),  # a held-out sentence
    ("translate", {"src": "我有一只猫" * 14}),  # longer than the translator reads
    # Language model: each part, sampling, heads switched off, and bad input
    ("language-model", {"decode": "sample", "temperature": "2", "top_k": "5", "top_p": "0.9", "off": "1.2"}),
    ("language-model", {"part": "induction"}), ("language-model", {"part": "induction", "source": "text"}),
    ("language-model", {"part": "induction", "source": "text", "prompt": "the teacher saw"}),  # nothing repeats
    ("language-model", {"part": "heads", "off": "1.2"}), ("language-model", {"part": "lens", "off": "0.3"}),
    ("language-model", {"prompt": ""}), ("language-model", {"prompt": "the zebra saw " * 30}),  # unknown, cut
    ("language-model", {"part": "learning", "snap": "0"}), ("language-model", {"part": "learning", "off": "1.2"}),
    ("language-model", {"part": "live"}), ("language-model", {"model": "smollm2", "part": "induction"}),
    # Ask: each part, every view of a step, heads switched off, sampling, and bad input
    ("ask", {"part": "sink"}), ("ask", {"part": "sink", "evict": "1"}),
    ("ask", {"off": "18.8", "step": "5", "grad": "1", "every": "1", "special": "renorm"}),
    ("ask", {"decode": "sample", "top_k": "5", "most": "8"}), ("ask", {"q": ""}), ("ask", {"q": "why " * 200}),
    ("modern", {"part": "norm"}), ("modern", {"part": "attention"}), ("modern", {"mtext": "hi"}),
    ("positional", {"model": "random"}),  # sinusoidal: no learned table, and why
    ("positional", {"model": "random", "positional": "learned", "pe_sim": "cosine", "pe_d": "33", "pe_from": "20",
                    "pe_to": "3", "pe_dims": ",".join(map(str, range(17)))}),  # odd d, swapped range, too many curves
    ("positional", {"pe_n": "2048", "pe_d": "1024", "pe_dims": ""}),  # thinned maps, no curve picked
    ("architecture", {"positional": "learned", "norm": "pre-LN", "layers": "3", "heads": "5"}),  # Pre-LN steps
    ("encoder-decoder", {"tgt": "I have a cat"}),  # the translator reading a typed target (teacher forcing)
    ("encoder-decoder", {"src": "。"}),  # no Chinese to read
    ("encoder-decoder", {"src": "我有一只猫" * 20}),  # a source longer than the positions, cut
    ("encoder-decoder", {"model": "random"}),
    ("encoder-decoder", {"model": "random", "tgt": ""}),  # a target is needed
    ("lines", {"lines_heads": ""}), ("lines", {"lines_heads": "2", "text": "word " * 100}),
    ("lines", {"model": "translator", "src": "我有一只猫"}),
    ("neurons", {"text": "word " * 60}), ("neurons", {"model": "translator", "src": "我有一只猫"}),
    ("embeddings", {"model": "random"}), ("embeddings", {"sents": "x\n" * 20}), ("embeddings", {"sents": ""}),
    ("embeddings", {"sents": "word " * 300}),  # past the pipeline's 256 tokens
    ("compare", {"pair": "model"}), ("compare", {"pair": "head"}), ("compare", {"pair": "mask"}),
    ("compare", {"text2": ""}), ("compare", {"text": "word " * 300, "text2": "word " * 290}),
    ("compare", {"model": "translator", "src": "我有一只猫", "src2": "我有一只狗"}),
    ("compare", {"model": "translator", "pair": "model"}),
    ("atlas", {"prop": "same"}), ("atlas", {"model": "translator", "src": "我有一只猫"}),  # no special token
    ("atlas", {"prop": "bogus", "text": "word " * 300}),
    ("rollout", {"target": "token", "query": "3"}), ("rollout", {"text": "word " * 40}),  # no flow: too long
    ("rollout", {"model": "translator", "src": "我有一只猫"}),
]


def _session(path: str, locale: str | None = None, **params) -> AppTest:
    at = AppTest.from_function(_app_starting_at, args=(path,), default_timeout=TIMEOUT)
    if locale:
        at.context["locale"] = locale
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


@pytest.mark.parametrize(("path", "params"), PAGE_STATES, ids=[
    "-".join([path, *(f"{k}={v}" for k, v in params.items())]) for path, params in PAGE_STATES])
def test_every_text_of_the_page_comes_from_the_chinese_catalog(monkeypatch, path, params):
    with marked_chinese(monkeypatch) as misses:
        at = _session(path, lang="zh", **params)
        assert not at.exception, at.exception
        shown = untranslated(at)
    assert not shown, f"{len(shown)} texts shown without the catalog:\n" + "\n".join(shown)
    assert not misses, f"not in the Chinese catalog: {sorted(misses)}"


@pytest.mark.parametrize("path", [spec.path for spec in registry.PAGES])
def test_every_page_renders_in_english(path):
    at = _session(path, lang="en")
    assert not at.exception, at.exception
    assert at.title[0].value == registry.by_path(path).title


def test_lang_in_the_link_chooses_over_the_browser():
    at = _session("heatmap", locale="en-US", lang="zh")
    assert at.title[0].value == "注意力热力图"
    assert link_value(at, "lang") == "zh"


@pytest.mark.parametrize(("locale", "title"), [("zh-CN", "注意力热力图"), ("zh-TW", "注意力热力图"),
                                               ("en-GB", "Attention heatmap"), ("de-DE", "Attention heatmap"),
                                               (None, "Attention heatmap")])
def test_without_lang_the_browser_language_decides(locale, title):
    at = _session("heatmap", locale=locale)
    assert at.title[0].value == title


def test_a_bad_lang_is_ignored_with_a_notice_in_the_browser_language():
    at = _session("heatmap", locale="zh-CN", lang="klingon")
    assert at.title[0].value == "注意力热力图"
    assert any("lang=klingon" in w.value for w in at.warning)
    assert not at.exception


def test_the_sidebar_switch_changes_the_language_and_writes_the_link():
    at = _session("softmax", locale="en-US")
    assert at.title[0].value == "Softmax rows"
    switch = at.sidebar.button_group(key="lang")
    switch.set_value("zh").run()
    assert at.title[0].value == "Softmax 行"
    assert link_value(at, "lang") == "zh"
    at.sidebar.button_group(key="lang").set_value("en").run()
    assert at.title[0].value == "Softmax rows"
    assert link_value(at, "lang") == "en"


def test_a_fragments_rerun_keeps_the_language():
    """A slider in the page's fragment reruns without app.py: its texts still come in the session's language."""
    at = _session("softmax", locale="en-US", lang="zh")
    at.selectbox(key="query").set_value(2).run()
    with locales.use("zh"):
        label = _("Query token")
    assert label != "Query token"
    assert at.selectbox(key="query").label == label
    assert at.title[0].value == "Softmax 行"



def test_the_language_is_read_once_a_run_and_anew_in_the_next(monkeypatch):
    """_() reads the session's language once a run (a page calls it a hundred times): a language kept in the run
    applies at once, and one written to the session between two runs applies to the next, though the same script
    thread runs both (a rerun asked for while one runs)."""
    from types import SimpleNamespace  # noqa: PLC0415 - this test only

    from views.shell import language  # noqa: PLC0415 - installs the session's resolver

    with locales.use("zh"):
        chinese = _("Language")
    session = {"_language": "zh"}
    ctx = SimpleNamespace(cursors={})  # what ScriptRunContext.reset() renews for every run
    monkeypatch.setattr(language, "st", SimpleNamespace(session_state=session))
    monkeypatch.setattr(language, "get_script_run_ctx", lambda: ctx)
    assert _("Language") == chinese
    session["_language"] = "en"  # not through _keep: this run keeps the language it read
    assert _("Language") == chinese
    language._keep("en")
    assert _("Language") == "Language"
    session["_language"] = "zh"
    ctx.cursors = {}  # the next run, on the same thread
    assert _("Language") == chinese
