"""Page state that lives in the URL: every widget starts from ?name=..., survives a page switch (a random model's
settings per page), and is written back, so any view is a link a lecturer can put on a slide. The writes go out as
one message (views.widgets.link_writes); what was ignored or changed is said (views.widgets.notices); typed text is
cleaned first (views.widgets.cleaning).

Values from the URL are checked; a bad one is ignored with a notice on the page. A value the notice shows
is a visitor's text: it goes in a code span (views.shell.markdown), never into the Markdown itself.
"""
from collections.abc import Callable, Sequence
from urllib.parse import quote

import streamlit as st

from locales import _
from views.shell.markdown import code
from views.widgets import cleaning, link_writes, notices

_KEEP = "_keep_"  # session keys that outlive the widgets (Streamlit drops a widget's state off its page)
DRAWN = "_drawn"  # session: {name: value} of the widgets drawn since views.widgets.file_names.begin_run()
_PAGE = "_state_page"  # the page being drawn (set_page)
# A random model's settings are kept per page: the 12-layer model a student builds on the architecture page does not
# follow them to the heatmap, whose own random model stays as it was set there. Text, layer and head follow them.
PER_PAGE = frozenset({"d_model", "heads", "layers", "d_ff", "activation", "norm", "positional", "seed"})
# A text takes up to 9 bytes a character in a link (a Chinese character is %E4%BD%A0). Past this many, the text is
# left out of the link: nginx refuses a request line over 8 KB (414), Streamlit's server a header over 64 KB (400,
# a blank page), and the encoder-decoder page has two texts.
LINK_TEXT_BYTES = 3_000


def set_page(path: str) -> None:
    """The frame, as it draws the page at /path: where the values of PER_PAGE are kept."""
    st.session_state[_PAGE] = path


def page() -> str | None:
    """The registry path of the page being drawn (set_page), or None outside a page."""
    return st.session_state.get(_PAGE)


def _kept_key(name: str) -> str:
    """The session key of the value `name` kept for other runs and pages (per page for PER_PAGE)."""
    return _KEEP + (f"{page() or ''}:" if name in PER_PAGE else "") + name


def _start(name: str, default, parse: Callable[[str], object], valid: Callable[[object], bool], describe: str):
    """Put the widget's value in session state before it is drawn: URL, else the kept value, else default."""
    if name in st.session_state:
        value = st.session_state[name]
    elif name in st.query_params:
        raw = st.query_params[name]
        try:
            value = parse(raw)
            if not valid(value):
                raise ValueError
        except (ValueError, TypeError, KeyError):
            shown = code(f"{name}={cleaning.cut(raw)}")
            notices.notice(_("Ignored {parameter} in the link: {reason}.").format(parameter=shown, reason=describe))
            value = st.session_state.get(_kept_key(name), default)
    else:
        value = st.session_state.get(_kept_key(name), default)
    if isinstance(value, str):  # typed text, or text from the link
        value = cleaning.readable(value, new=value != st.session_state.get(_kept_key(name)))
    if not valid(value):  # e.g. a layer from a bigger model: back to the default
        value = default
    st.session_state[name] = value


def write_back(name: str, dump: Callable[[object], str]) -> object:
    """The widget `name`'s value, kept for other pages and written to the link as dump(value) (batched inside
    url_writes())."""
    value = st.session_state[name]
    st.session_state[_kept_key(name)] = value
    st.session_state.setdefault(DRAWN, {})[name] = value
    text = dump(value)
    pending = link_writes.pending()
    if pending is None:
        if st.query_params.get(name) != text:  # each write sends the browser the whole query string again
            st.query_params[name] = text
    elif pending.get(name, st.query_params.get(name)) != text:
        pending[name] = text
    return value


def kept(name: str):
    """The value the widget `name` had when it was last drawn, on any page (None if never)."""
    return st.session_state.get(_kept_key(name))


def replace_default(name: str, old_default, new_default) -> None:
    """Call from a widget's on_change: the widget `name`, if it holds old_default (where it is drawn, and the value
    kept for other pages), gets new_default. Where it has no value yet, the default it is drawn with applies."""
    for key in (name, _kept_key(name)):
        if key in st.session_state and st.session_state[key] == old_default:
            st.session_state[key] = new_default


def int_slider(label: str, name: str, low: int, high: int, default: int, container=st, **kwargs) -> int:
    """An integer slider bound to ?name=; high == low shows a fixed value instead (a slider needs a range)."""
    _start(name, default, int, lambda v: isinstance(v, int) and low <= v <= high, _whole(low, high))
    if high <= low:
        container.caption(_("{label}: {value}").format(label=label, value=low))
        st.session_state[name] = low
    else:
        container.slider(label, low, high, key=name, **kwargs)
    return write_back(name, str)


def int_param(name: str, low: int, high: int, default: int) -> int:
    """An integer bound to ?name= that no Streamlit widget draws: a chart's own slider sets it
    (views/charts/head_chart.py) in st.session_state[name] before this is called."""
    _start(name, default, int, lambda v: isinstance(v, int) and low <= v <= high, _whole(low, high))
    return write_back(name, str)


def _whole(low: int, high: int) -> str:
    return _("it must be a whole number from {low} to {high}").format(low=low, high=high)


def float_slider(label: str, name: str, low: float, high: float, default: float, container=st, **kwargs) -> float:
    _start(name, default, float, lambda v: isinstance(v, float) and low <= v <= high,
           _("it must be a number from {low} to {high}").format(low=low, high=high))
    container.slider(label, low, high, key=name, **kwargs)
    return write_back(name, lambda v: f"{v:g}")


def choice(label: str, name: str, options: Sequence, default, container=st, widget="selectbox", **kwargs):
    """One of `options` (strings or ints) bound to ?name=; widget: selectbox, radio, segmented_control."""
    options = list(options)
    by_text = {str(o): o for o in options}
    _start(name, default, lambda raw: by_text[raw] if raw in by_text else _raise(),
           lambda v: v in options, _("it must be one of {options}").format(
               options=", ".join(map(str, options[:12])) + ("…" if len(options) > 12 else "")))
    getattr(container, widget)(label, options, key=name, **kwargs)
    if st.session_state[name] is None:  # a segmented control can be cleared
        st.session_state[name] = default
    return write_back(name, str)


def toggle(label: str, name: str, default: bool = False, container=st, **kwargs) -> bool:
    _start(name, default, lambda raw: {"1": True, "true": True, "0": False, "false": False}[raw.lower()],
           lambda v: isinstance(v, bool), _("use 1 or 0"))
    container.toggle(label, key=name, **kwargs)
    return write_back(name, lambda v: "1" if v else "0")


def int_list(label: str, name: str, options: Sequence[int], format_func, container=st, default=(),
             **kwargs) -> list[int]:
    """Several of `options` (ints) bound to ?name=1,4,5."""
    options = list(options)
    _start(name, list(default), lambda raw: [int(x) for x in raw.split(",") if x.strip()],
           lambda v: isinstance(v, list) and all(x in options for x in v), _("pick from the tokens shown"))
    container.multiselect(label, options, key=name, format_func=format_func, **kwargs)
    return write_back(name, lambda v: ",".join(map(str, v)))


def name_list(label: str, name: str, options: Sequence[str], format_func, container=st, **kwargs) -> list[str]:
    """Several of `options` (names without commas) bound to ?name=a,b,c."""
    options = list(options)
    _start(name, [], lambda raw: [x.strip() for x in raw.split(",") if x.strip()],
           lambda v: isinstance(v, list) and all(x in options for x in v),
           _("pick from {options}").format(options=", ".join(options[:6]) + ("…" if len(options) > 6 else "")))
    container.multiselect(label, options, key=name, format_func=format_func, **kwargs)
    return write_back(name, ",".join)


def text(label: str, name: str, default: str, max_chars: int, container=st, area: bool = True, **kwargs) -> str:
    """Free text bound to ?name=; a longer value from the link is cut with a notice. A text too long for a link
    (LINK_TEXT_BYTES) stays in the session, out of the link, with a notice: a link that long would not reload."""
    def parse(raw: str) -> str:
        if len(raw) > max_chars:
            notices.notice(_("The text in the link was cut to its first {n:,} characters.").format(n=max_chars))
        return raw[:max_chars]

    _start(name, default, parse, lambda v: isinstance(v, str), "")
    (container.text_area if area else container.text_input)(label, key=name, max_chars=max_chars, **kwargs)
    value = st.session_state[name]
    if len(quote(value, safe="")) <= LINK_TEXT_BYTES:
        return write_back(name, str)
    st.session_state[_kept_key(name)] = value
    pending = link_writes.pending()
    if pending is not None:
        pending.pop(name, None)
    if name in st.query_params:
        del st.query_params[name]
    notices.notice(_("This text is too long for the page's link ({n:,} characters): the link leaves it out, so it "
                     "opens with the default text. A text goes in the link up to about {chinese:,} Chinese or "
                     "{english:,} English characters.").format(n=len(value), chinese=LINK_TEXT_BYTES // 9,
                                                                english=LINK_TEXT_BYTES * 2 // 3))
    return value


def _raise():
    raise ValueError


def examples(name: str, texts: Sequence[str], container=st) -> None:
    """A row of buttons under a text box bound to ?name=, each putting its example text into the box."""
    row = container.container(horizontal=True, gap="small")
    for example in texts:
        row.button(example, type="tertiary", on_click=_put, args=(name, example), key=f"example-{example}")


def _put(name: str, example: str) -> None:
    st.session_state[name] = example
