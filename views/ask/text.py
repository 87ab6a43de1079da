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


def text_html(text: str, cursor: bool = False, kind: str = "answer") -> str:
    """The model's words as escaped HTML, line breaks kept; data-text: the model's, not the interface's. kind: the
    box's class ("answer": the page's answer; "rewritten": one written again in an experiment)."""
    return (f"<div class='{kind}' data-text style='white-space:pre-wrap;font-size:1.05rem'>{html.escape(text)}"
            f"{' ▌' if cursor else ''}</div>")
