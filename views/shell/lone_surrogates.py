"""A lone surrogate typed in a text box: replaced by U+FFFD in the browser, so that the edit reaches the server.

A lone surrogate (one half of a UTF-16 pair, e.g. half an emoji from a broken copy and paste, or put there by
a script) is a valid JavaScript string but no UTF-8. Streamlit's browser code sends it anyway, as the bytes
of the surrogate itself; the server refuses the message ("String field had bad UTF-8"), logs a warning and
closes the connection (code 1002). The browser reconnects and the edit is gone, without a word on the page.
Worse, the browser keeps the text and sends it with every later message, so each slider move after it is
dropped too, until the text is changed. No Python code of the app ever sees any of it.

So the page carries a small script that swaps each lone surrogate for U+FFFD as it is typed, before
Streamlit reads the box; views.widgets.state then says on the page that a character could not be read.
"""
import streamlit as st

# The "input" listener on window, in the capture phase, runs before React's (on the app's root element);
# the value is set with the prototype's setter so that React sees the change. A flag on window: the
# script runs once per page load however often it is drawn. No "<" in the script: Streamlit's HTML sanitizer
# (DOMPurify) drops a script whose text has "<!", "</" or "<" before a letter.
_SCRIPT = r"""<style>[data-testid="stElementContainer"]:has(script[data-lone-surrogates]) {display: none}</style>
<script data-lone-surrogates>
if (!window.attnvizLoneSurrogates) {
  window.attnvizLoneSurrogates = true;
  const surrogates = /[\uD800-\uDBFF][\uDC00-\uDFFF]|[\uD800-\uDFFF]/g;  // a pair, or a lone half
  window.addEventListener("input", (event) => {
    const box = event.target;
    if (!(box instanceof HTMLTextAreaElement || box instanceof HTMLInputElement)) return;
    const fixed = box.value.replace(surrogates, (found) => (found.length === 2 ? found : "\uFFFD"));
    if (fixed === box.value) return;
    const caret = box.selectionStart;
    Object.getOwnPropertyDescriptor(Object.getPrototypeOf(box), "value").set.call(box, fixed);
    box.setSelectionRange(caret, caret);
  }, true);
}
</script>"""


def replace_in_the_browser(styles: str = "") -> None:
    """Draw the script in the sidebar, hidden (an element with nothing to show would still push the rest down), with
    the page's style elements: one element, where a separate st.html of each was one more message on every run."""
    st.sidebar.html(_SCRIPT + styles, unsafe_allow_javascript=True)
