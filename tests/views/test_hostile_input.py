"""Hostile input on every page, in AppTest: odd text, broken links, Markdown injection.

Each case gets a plain message in the page (a warning or an info), no exception, and no element the app
did not put there: no Markdown the page sends has a link, an image or HTML, and the chart labels are
escaped. tests/e2e/test_hostile.py checks the same injection, and a lone surrogate, in a real browser.
"""
import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from harness import apptest
from views.shell import registry
from views.shell.markdown import code

INJECTION = "`![](http://evil.example/p.png)[Log in](http://evil.example)`"  # the link value
CONTROLS = "a\x00b \x1b[1mbold \u202eevil\u202c end"  # NUL, an ANSI escape, a right-to-left override
WITHOUT_CONTROLS = "ab [1mbold evil end"


@dataclass(frozen=True)
class Page:
    path: str
    texts: tuple[str, ...]  # the parameters of its text boxes
    low: str | None  # a slider from 0 or 1, given -1 (None: the page has no number to set)
    high: str | None  # a parameter with a small range, given 99
    own: tuple[dict, ...] = field(default=())  # links with bad values of its own parameters, one run each
    opens: dict = field(default_factory=dict)  # a parameter read only under a setting: that setting
    link: dict = field(default_factory=dict)  # what every link of this probe carries (a model)
    translates: bool = False  # the translator reads the text: characters it has never seen get a warning
    chinese_only: bool = False  # a text without a Chinese character gets a message instead of charts
    toy_words: bool = False  # the toy GPT reads the text word by word: words it has never seen get a warning

    @property
    def reads_model(self) -> bool:
        """It has the model picker (?model=): the frame's, or the encoder-decoder, language model or Ask page's own."""
        return registry.MODEL in registry.by_path(self.path).needs or self.path in (
            "encoder-decoder", "language-model", "ask")

    @property
    def id(self) -> str:
        return "-".join([self.path, *self.link.values()])


PAGES = [
    Page("heatmap", ("text",), "layer", "head", own=({"mean": "maybe", "auto": "2", "special": "sometimes"},)),
    Page("all-heads", ("text",), "layer", "head", own=({"pool": "median", "tile": "4096"},)),
    Page("softmax", ("text",), "layer", "head", own=({"query": "999", "temp": "hot"}, {"temp": "0"})),
    Page("steps", ("text",), "layer", "head", own=({"dim0": "-5", "row0": "x"},)),
    Page("masks", ("text",), "layer", "head", own=({"mask": "bogus"}, {"pad_to": "99"}, {"blocked": "1,999"}),
         opens={"pad_to": {"mask": "padding"}, "blocked": {"mask": "custom"}}),
    Page("masks", ("src",), "layer", "head", own=({"mask": "bogus"}, {"pad_to": "99"}),
         opens={"pad_to": {"mask": "padding"}}, link={"model": "translator"}, translates=True),
    Page("positional", (), "pe_from", "pe_base",
         own=({"pe_d": "5000", "pe_n": "0", "pe_dims": "1,9999", "pe_sim": "maybe"},)),
    Page("architecture", ("text",), "layers", "heads",
         own=({"d_model": "100", "norm": "none", "seed": "1e9"},)),
    Page("encoder-decoder", ("src", "tgt"), "layer", "head", own=({"head": "x", "heads": "3", "activation": "tanh"},),
         opens={"heads": {"model": "random"}, "activation": {"model": "random"}}, translates=True),
    Page("encoder-decoder", ("src", "tgt"), "layer", "head", own=({"model": "bogus"},), link={"model": "random"}),
    Page("lines", ("text",), "layer", "query", own=({"lines_heads": "1,99"},)),
    Page("lines", ("src",), "layer", "query", link={"model": "translator"}, translates=True),
    Page("neurons", ("text",), "layer", "head", own=({"query": "999", "all_keys": "sometimes"},),
         opens={"all_keys": {"text": "word " * 60}}),
    Page("neurons", ("src",), "layer", "head", link={"model": "translator"}, translates=True),
    Page("atlas", ("text",), None, None, own=({"prop": "bogus"},)),
    Page("atlas", ("src",), None, None, link={"model": "translator"}, translates=True),
    Page("rollout", ("text",), "layer", "query", own=({"target": "bogus"},)),
    Page("rollout", ("src",), "layer", "query", link={"model": "translator"}, translates=True),
    Page("compare", ("text", "text2"), "layer", "head",
         own=({"pair": "twins"}, {"model2": "../x"}, {"mask2": "all"}, {"layer2": "99", "head2": "-1"}),
         opens={"model2": {"pair": "model"}, "mask2": {"pair": "mask"}, "layer2": {"pair": "head"},
                "head2": {"pair": "head"}}),
    Page("compare", ("src", "src2"), "layer", "head", link={"model": "translator"}, translates=True),
    Page("embeddings", ("sents",), None, None, own=({"sent": "9"},)),
    Page("translate", ("src",), "layer", "head", translates=True, chinese_only=True,
         own=({"decode": "magic", "off": "cross.9.9", "part": "nowhere", "step": "-3"},
              {"top_k": "-1", "temperature": "0", "draw": "1000", "top_p": "2"}, {"beam": "1"}, {"snap": "7"}),
         opens={"top_k": {"decode": "sample"}, "temperature": {"decode": "sample"}, "draw": {"decode": "sample"},
                "top_p": {"decode": "sample"}, "beam": {"decode": "beam"}, "snap": {"part": "learning"}}),
    Page("language-model", ("prompt",), "words", "step", toy_words=True,
         own=({"decode": "beam", "off": "1.9", "part": "nowhere", "step": "-3"},
              {"top_k": "-1", "temperature": "0", "draw": "1000", "top_p": "2"}, {"probe_seed": "-5", "source": "x"},
              {"snap": "7"}),
         opens={"top_k": {"decode": "sample"}, "temperature": {"decode": "sample"}, "draw": {"decode": "sample"},
                "top_p": {"decode": "sample"}, "probe_seed": {"part": "induction"}, "source": {"part": "induction"},
                "snap": {"part": "learning"}}),
    Page("modern", ("mtext",), "query", "layer", own=({"part": "nowhere"}, {"key": "-1"}, {"context": "7"}),
         opens={"context": {"part": "costs"}}, link={"part": "positions"}),
    Page("ask", ("q",), "most", "layer",
         own=({"decode": "beam", "off": "1.99", "part": "nowhere", "step": "-3"},
              {"top_k": "-1", "temperature": "0", "draw": "1000", "top_p": "2"}, {"every": "maybe", "grad": "x"}),
         opens={"top_k": {"decode": "sample"}, "temperature": {"decode": "sample"}, "draw": {"decode": "sample"},
                "top_p": {"decode": "sample"}}),
]
PAGE_IDS = [p.id for p in PAGES]


def open_page(page: Page, **params) -> AppTest:
    return apptest.open_page(page.path, **{**page.link, **params})


def test_every_page_of_the_registry_is_probed():
    # the tour's page has no control but its links; tests/views/test_tour.py probes ?tour= on every page
    assert {p.path for p in PAGES} | {"tour"} == {spec.path for spec in registry.PAGES}
    assert {p.path for p in PAGES if p.link.get("model") == "translator" or p.translates} == {
        spec.path for spec in registry.PAGES if spec.translator or spec.path in ("encoder-decoder", "translate")}


def elements(block) -> list:
    """Every element under an AppTest block (at.main, at.sidebar), depth first."""
    children = getattr(block, "children", None)
    if children is None:
        return [block]
    return [block] + [e for child in children.values() for e in elements(child)]


def markdown_sources(at: AppTest) -> list[str]:
    """Every text the page sends that Streamlit renders as Markdown: bodies, labels, help, radio options."""
    sources = []
    for node in elements(at.main) + elements(at.sidebar):
        proto = getattr(node, "proto", None)
        if proto is None or node.type == "html":  # the app's own script (views.shell.lone_surrogates)
            continue
        for descriptor, value in proto.ListFields():
            if descriptor.name in ("body", "label", "help", "caption", "options"):
                sources += [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]
    return sources


def chart_texts(at: AppTest) -> list[str]:
    """Titles and category labels of every chart: plotly renders a little HTML in them."""
    texts = []
    for spec in apptest.figures(at):
        texts.append(str(spec["layout"].get("title", {}).get("text", "")))
        for trace in spec["data"]:
            texts += [v for axis in ("x", "y") if isinstance(trace.get(axis), list) for v in trace[axis]
                      if isinstance(v, str)]
    return texts


def assert_plain(at: AppTest) -> None:
    """No exception, no error box, no foreign element: only the app's own Markdown, only escaped labels."""
    assert not at.exception, at.exception[0].message
    assert not at.error, at.error[0].value
    parser = MarkdownIt("commonmark")
    for source in markdown_sources(at):
        for block in parser.parse(source):
            assert block.type != "html_block", source
            for token in block.children or []:
                assert token.type not in ("link_open", "image", "html_inline"), source
                if token.type == "text":
                    assert "evil.example" not in token.content, source  # a URL outside a code span
    assert not [t for t in chart_texts(at) if "<" in t]


def messages(at: AppTest) -> str:
    return "\n".join(m.value for m in [*at.warning, *at.info])


def box(at: AppTest, name: str):
    return {w.key: w for w in [*at.text_input, *at.text_area]}[name]


def unknown_to_the_translator(at: AppTest) -> list[str]:
    """The warnings naming characters the translator has never seen (and no others)."""
    return [w.value for w in at.warning if w.value.startswith("The translator has never seen")]


TEXTS = {
    "empty": "",
    "600 words": "word " * 600,
    "Chinese and Arabic": "注意力就是你所需要的 الانتباه هو كل ما تحتاجه",
    "emoji": "attention 🤖🔥 is all 👩‍🔬",
    "HTML": "<script>alert('x')</script> & <b>bold</b>",
    "control characters": CONTROLS,
}


@pytest.mark.slow  # every page x every text; the cleaning itself is checked directly in test_text_cleaning.py
@pytest.mark.parametrize("case", TEXTS)
@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_unusual_text(page, case):
    text = TEXTS[case]
    at = open_page(page, **{name: text for name in ("text", *page.texts)})  # positional: carried only
    assert_plain(at)
    said = messages(at)
    if not page.texts:  # no text box: the text is only carried to the other pages, silently
        assert not at.warning and apptest.charts(at)
        return
    if case == "empty":
        assert "Type a" in said and not apptest.charts(at)
        return
    if page.chinese_only and not any("\u4e00" <= c <= "\u9fff" for c in text):
        assert "this text has none" in said and not apptest.charts(at)
        assert case != "control characters" or "Removed 4 invisible control characters" in said
        return
    assert apptest.charts(at)
    if case == "600 words":
        assert "the rest was cut" in said
    elif case == "control characters":
        assert "Removed 4 invisible control characters (U+0000, U+001B, U+202C, U+202E) from the text." in said
        assert [box(at, name).value for name in page.texts] == [WITHOUT_CONTROLS] * len(page.texts)
        assert at.query_params[page.texts[0]] in (WITHOUT_CONTROLS, [WITHOUT_CONTROLS])
    else:
        if page.translates:  # none of these texts is the toy language's
            assert unknown_to_the_translator(at) and len(unknown_to_the_translator(at)) == len(at.warning)
        elif page.toy_words:
            assert [w.value for w in at.warning if w.value.startswith("The toy GPT has never seen")] == [
                w.value for w in at.warning] and at.warning
        elif case in ("Chinese and Arabic", "emoji") and registry.RUN in registry.by_path(page.path).needs:  # [UNK]s
            (notice,) = [w.value for w in at.warning]
            assert notice.startswith("The model reads this text in pieces") and "tokens are ` [UNK] `" in notice
        else:
            assert not at.warning
        assert [box(at, name).value for name in page.texts] == [text] * len(page.texts)


@pytest.mark.parametrize("page", [p for p in PAGES if p.texts], ids=[p.id for p in PAGES if p.texts])
def test_a_character_that_could_not_be_read_is_explained(page):
    """What the browser sends for a lone surrogate typed in the box (views.shell.lone_surrogates): U+FFFD."""
    at = open_page(page, text="hello")
    box(at, page.texts[0]).input("abc 猫 \ufffd def").run()
    assert_plain(at)
    assert "A character of the text could not be read" in messages(at) and "shown as �" in messages(at)
    assert box(at, page.texts[0]).value == "abc 猫 \ufffd def" and apptest.charts(at)
    at.run()  # said once, not on every rerun
    assert "could not be read" not in messages(at)


def links(page: Page) -> dict[str, tuple[dict, list[str]]]:
    """Bad links for the page: (query parameters, what the page must say)."""
    model = [f"Ignored {code('model=../../etc/passwd')} in the link: it must be one of"] if page.reads_model else []
    unknown = f"Ignored {code('foo')} in the link: no page of this app reads it."
    if page.low is None:  # no number of its own: the others' are carried, the model and unknown keys are checked
        return {"path": ({"model": "../../etc/passwd"}, model),
                "unknown and repeated keys": ({"foo": "bar"}, [unknown])}
    return {
        "-1 and 99": ({page.low: "-1", page.high: "99"}, [f"Ignored {code(page.low + '=-1')} in the link",
                                                          f"Ignored {code(page.high + '=99')} in the link"]),
        "path": ({"model": "../../etc/passwd"}, model),
        "injection": ({page.low: INJECTION}, [f"Ignored {code(page.low + '=' + INJECTION[:60] + '…')} in the link"]),
        "unknown and repeated keys": ({"foo": "bar", page.low: ["2", "1"]}, [unknown,
            f"{code(page.low)} is given 2 times in the link: the last one, {code('1')}, is used."]),
    }


@pytest.mark.parametrize("page, case", [(p, case) for p in PAGES for case in links(p)],
                         ids=[f"{p.id}-{case}" for p in PAGES for case in links(p)])
def test_malformed_link(page, case):
    params, expected = links(page)[case]
    at = open_page(page, **params)
    assert_plain(at)
    said = "\n".join(w.value for w in at.warning)
    for message in expected:
        assert message in said
    if not expected:  # a parameter of other pages: carried, not this page's business
        assert not at.warning
    if case == "unknown and repeated keys" and page.low is not None:
        assert apptest.slider_value(at, page.low) == 1
    assert apptest.charts(at) or at.dataframe


@pytest.mark.parametrize("page, link", [(p, link) for p in PAGES for link in p.own],
                         ids=[f"{p.id}-{'-'.join(link)}" for p in PAGES for link in p.own])
def test_bad_values_of_the_pages_own_parameters(page, link):
    settings = {k: v for name in link for k, v in page.opens.get(name, {}).items()}
    at = open_page(page, **settings, **link)
    assert_plain(at)
    said = "\n".join(w.value for w in at.warning)
    for name, value in link.items():
        assert f"Ignored {code(f'{name}={value}')} in the link: " in said
    assert apptest.charts(at) or diagrams(at)


def diagrams(at: AppTest) -> list:
    """The diagrams a page draws as images instead of charts (/modern's three blocks)."""
    return [h for h in at.get("html") if "data:image/svg+xml;base64," in h.proto.body]


def test_the_injection_is_one_code_span():
    at = open_page(PAGES[0], layer=INJECTION)
    (warning,) = at.warning
    tokens = MarkdownIt("commonmark").parseInline(warning.value)[0].children
    assert [t.type for t in tokens] == ["text", "code_inline", "text"]
    assert tokens[1].content == "layer=" + INJECTION[:60] + "…"


def test_every_parameter_a_page_reads_is_a_link_key():
    """registry.link_keys() (no notice for them on any page) is exactly what the views bind to the URL."""
    bound = set()
    for source in (Path(apptest.APP).parent / "views").rglob("*.py"):
        tree = ast.parse(source.read_text())
        defaults = {arg.arg: default.value for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
                    for arg, default in zip(f.args.args[::-1], f.args.defaults[::-1])
                    if isinstance(default, ast.Constant)}  # pickers.sentence(name="text")
        for call in ast.walk(tree):
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and isinstance(call.func.value, ast.Name) and call.func.value.id == "state"
                    and call.func.attr in ("int_slider", "float_slider", "choice", "toggle", "int_list", "name_list",
                                           "text", "int_param")):
                name = call.args[0 if call.func.attr == "int_param" else 1]  # int_param has no label
                if isinstance(name, ast.Name) and name.id in defaults:
                    bound.add(defaults[name.id])
                else:
                    assert isinstance(name, ast.Constant), f"{source.name}:{call.lineno}: a name not read here"
                    bound.add(name.value)
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "sentence"
                    and len(call.args) > 1 and isinstance(call.args[1], ast.Constant)):  # a text box of its own
                bound.add(call.args[1].value)
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "get"
                    and isinstance(call.func.value, ast.Attribute) and call.func.value.attr == "query_params"
                    and call.args and isinstance(call.args[0], ast.Constant)):  # read without a widget (?tour=)
                bound.add(call.args[0].value)
    assert bound == registry.link_keys()
