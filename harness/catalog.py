"""What a page shows in words, and which of those words came from the catalog.

marked_chinese() makes every catalog lookup return its Chinese wrapped in ⟦ ⟧ (pseudo-localization) and records the
English strings the Chinese catalog does not have. shown_texts() reads every text a page shows: titles, captions,
Markdown, alerts, labels, help, options, metrics, tabs and expanders, and its charts' titles, axis titles, trace
names, hover templates, annotations and sliders. unmarked() is the English left outside the marks: a string the code
shows without the catalog.
"""
import re
from contextlib import contextmanager

import streamlit as st

import locales
from harness.apptest import charts
from views.shell import navigation

OPEN, CLOSE = "⟦", "⟧"
# Names that are the same in every language: models, libraries, formats, units of code.
PROPER = {
    "bert", "minilm", "all-minilm-l6-v2", "pytorch", "torch", "hugging", "face", "transformers", "numpy", "plotly",
    "csv", "png", "svg", "npz", "json", "safetensors", "gelu", "relu", "softmax", "flops", "d_model", "d_ff",
    "d_k", "unk", "cls", "sep", "pad", "mask", "bos", "eos", "nats", "log", "exp", "max", "min", "argmax",
    "mha", "ffn", "ln", "qkv",  # the formulas' abbreviations: multi-head attention, feed-forward network, LayerNorm
}
_TEXT_FIELDS = {"label", "body", "help", "placeholder", "options", "caption", "title", "text", "page_name",
                "display_values", "delta", "tooltip"}
_MARKED = re.compile(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}")


@contextmanager
def marked_chinese(monkeypatch):
    """Inside: ?lang=zh pages show ⟦中文⟧ for each catalog string; yields the set of catalog misses (English)."""
    real = locales.translations
    misses: set[str] = set()

    class Marked:
        def __init__(self, translations):
            self.t = translations

        def _mark(self, key, english, text):
            if key not in self.t._catalog:
                misses.add(english)
            return f"{OPEN}{text}{CLOSE}"

        def gettext(self, message):
            return self._mark(message, message, self.t.gettext(message))

        def ngettext(self, singular, plural, n):
            return self._mark((singular, 0), singular, self.t.ngettext(singular, plural, n))

        def pgettext(self, context, message):
            return self._mark(f"{context}\x04{message}", message, self.t.pgettext(context, message))

    def forget():  # what was built with the marks must not serve later tests
        navigation._built.clear()
        st.cache_data.clear()

    forget()
    monkeypatch.setattr(locales, "translations", lambda lang: Marked(real(lang)) if lang == "zh" else real(lang))
    try:
        yield misses
    finally:
        monkeypatch.setattr(locales, "translations", real)
        forget()


def _proto_texts(kind: str, proto):
    for descriptor, value in proto.ListFields():
        if descriptor.name in ("spec", "bytes", "json_args", "value", "default", "id", "form_id", "url"):
            continue
        if descriptor.message_type is not None:
            for item in (value if descriptor.is_repeated else [value]):
                yield from _proto_texts(kind, item)
        elif descriptor.type == descriptor.TYPE_STRING and descriptor.name in _TEXT_FIELDS:
            for item in (value if descriptor.is_repeated else [value]):
                yield kind, item


def _figure_texts(figure: dict):
    layout = figure.get("layout", {})
    for key, value in layout.items():
        if isinstance(value, dict) and "title" in value:  # axes, colour bars, legend
            title = value["title"]
            yield title.get("text", "") if isinstance(title, dict) else title
    title = layout.get("title")
    if title:
        yield title.get("text", "") if isinstance(title, dict) else title
    for annotation in layout.get("annotations", []):
        yield annotation.get("text", "")
    for slider in layout.get("sliders", []):
        yield slider.get("currentvalue", {}).get("prefix", "")
    for menu in layout.get("updatemenus", []):
        for button in menu.get("buttons", []):
            yield button.get("label", "")
    for trace in figure.get("data", []):
        for key in ("name", "hovertemplate"):
            if isinstance(trace.get(key), str):
                yield trace[key]
        bar = trace.get("colorbar") or trace.get("marker", {}).get("colorbar")
        if isinstance(bar, dict) and "title" in bar:
            yield bar["title"].get("text", "") if isinstance(bar["title"], dict) else bar["title"]


def shown_texts(at) -> list[tuple[str, str]]:
    """(kind, text) for every text the page shows."""
    out: list[tuple[str, str]] = []

    def visit(node):
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ListFields") and getattr(node, "type", "") != "plotly_chart":
            out.extend(_proto_texts(getattr(node, "type", "?"), proto))
        children = getattr(node, "children", None)
        for child in (children.values() if isinstance(children, dict) else children or []):
            visit(child)

    visit(at._tree)
    for chart in charts(at):
        out.extend(("chart", text) for text in _figure_texts(chart.figure) if text)
        if chart.sliders:
            out.extend(("chart slider", str(label)) for label in chart.sliders.get("labels", {}).values()
                       if isinstance(chart.sliders.get("labels"), dict))
    return [(kind, text) for kind, text in out if text]


def unmarked(text: str, data_words: set[str]) -> list[str]:
    """The English words of text outside the marks, code spans, LaTeX, HTML tags and icons, that are no data."""
    while True:
        stripped = _MARKED.sub(" ", text)
        if stripped == text:
            break
        text = stripped
    # data-text: a block of the model's own words (an answer it wrote, its chat template), data like the tokens
    for pattern in (r"(?s)<(script|style)\b.*?</\1>", r"(?s)<(div)\b[^>]*\bdata-text\b[^>]*>.*?</\1>",
                    r"`[^`]*`", r"(?s)\$\$.*?\$\$", r"\$[^$]*\$", r"<[^>]*>",
                    r"&[a-z]+;",
                    r":material/[a-z_]+:", r"https?://\S+", r"%\{[^}]*\}"):
        text = re.sub(pattern, " ", text)
    words = re.findall(r"[A-Za-z][A-Za-z_'-]*[A-Za-z]", text)
    return [w for w in words if w.lower() not in PROPER and w.lower() not in data_words]


def data_words(at) -> set[str]:
    """Words of what the visitor typed (the sentence boxes), of the example texts a page offers to type (its buttons
    keyed example-...), and of the tokens: data, not interface."""
    words: set[str] = set()
    examples = [b.label for b in at.button if str(b.key or "").startswith("example-")]
    for text in [*(box.value for box in [*at.text_area, *at.text_input]), *examples]:
        words.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z_'-]*", text or ""))
        words.update(w.lower() for w in re.findall(r"[A-Za-z]+", text or ""))  # word pieces: didn ' t
    return words


def untranslated(at) -> list[str]:
    """Each shown text with English outside the catalog's marks, as 'kind: text'."""
    allowed = data_words(at)
    return [f"{kind}: {text!r}" for kind, text in shown_texts(at) if unmarked(text, allowed)]
