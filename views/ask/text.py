"""The model's own words on the Ask page, as escaped HTML: the conversation a token a box (the chat template's greyed),
and an answer as text. Marked data-text: the model's words, not the interface's (no catalog translates them)."""
import html

import streamlit as st


def token_strip(tokens, template, container=None) -> None:
    """The conversation as the model reads it, a box a token; the chat template's tokens greyed (escaped HTML)."""
    cells = "".join(f'<span class="{"tpl" if t else "tok"}">{html.escape(word) or "&nbsp;"}</span>'
                    for word, t in zip(tokens, template))
    (container or st).html(
        "<style>.strip{line-height:2.1;font-size:0.95rem}.strip span{border:1px solid #bbb;border-radius:4px;"
        "padding:1px 4px;margin:1px;white-space:pre}.strip .tpl{color:#666;background:#eee;border-style:dashed}"
        f"</style><div class='strip' data-text>{cells}</div>")


def text_html(text: str, cursor: bool = False, kind: str = "answer", lines: int | None = None) -> str:
    """The model's words as escaped HTML, line breaks kept; data-text: the model's, not the interface's. kind: the
    box's class ("answer": the page's answer; "rewritten": one written again in an experiment); lines: at most this
    many lines shown, the rest scrolled (on a projector the chart below must fit)."""
    cap = f"max-height:{1.6 * lines:.1f}em;overflow-y:auto;" if lines else ""
    return (f"<div class='{kind}' data-text style='white-space:pre-wrap;font-size:1.05rem;line-height:1.6;{cap}'>"
            f"{html.escape(text)}{' ▌' if cursor else ''}</div>")


def labelled_html(label: str, text: str, lines: int) -> str:
    """A label (the interface's, escaped) and the model's words on one line, at most `lines` lines (a projector)."""
    cap = f"max-height:{1.6 * lines:.1f}em;overflow-y:auto;"
    return (f"<div style='font-size:1.05rem;line-height:1.6;{cap}'><b>{html.escape(label)}</b> "
            f"<div class='answer' data-text style='display:inline;white-space:pre-wrap'>{html.escape(text)}</div>"
            "</div>")
