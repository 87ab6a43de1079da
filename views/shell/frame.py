"""The page frame: what every page shares, done once. A page module holds only what is particular to it.

render(spec) draws the title and caption from the registry, the page's intro(), the sidebar (the model picker when
the page needs a model, the charts' download format), the text box, and the forward pass, then calls the page's
view(page) with what it asked for. A failure to load a model or to run it is a plain message on the page, and the
page stops there (views/shell/errors.py); every widget is bound to the URL (views/widgets/state.py).
"""
import importlib
from dataclasses import dataclass
from functools import partial

import streamlit as st

import locales
from locales import _
from model.family import Capability, Reads
from runtime import runs
from runtime.models import Choice, loaded_model, sources
from views.shell import lecture, reading, tour_stops
from views.shell.errors import or_stop, said
from views.shell.registry import MODEL, RUN, TEXT, PageSpec
from views.widgets import file_names, link_writes, pickers, state


@dataclass(frozen=True)
class Page:
    """What the frame hands a page's view(): its registry entry, and what it needs, already picked and run."""

    spec: PageSpec
    choice: Choice | None = None  # needs "model"
    text: str | None = None  # needs "text"
    run: runs.Run | None = None  # needs "run": the pass of choice on text, no mask

    def model(self, choice: Choice | None = None):
        """The loaded model (model.loading.sources.LoadedModel) of choice (default: the page's), or a message and a
        stop."""
        return or_stop(_("The model"), loaded_model, choice or self.choice)


def streamlit_page(spec: PageSpec, default: bool = False):
    """The st.Page of a registry entry, for app.py's navigation (a link to a page is views.shell.navigation.link_to)."""
    return st.Page(partial(render, spec), title=_(spec.title), icon=spec.icon, url_path=spec.path, default=default)


def render(spec: PageSpec) -> None:
    """Draw the page `spec` (st.Page calls this, one page per registry entry)."""
    module = importlib.import_module(spec.module)
    state.set_page(spec.path)
    file_names.new_page()
    st.title(_(spec.title))
    st.caption(_(spec.caption))
    tour_stops.banner(spec.path, locales.current(), st.sidebar if lecture.on() else st)
    intro = getattr(module, "intro", None)
    if intro is not None and not lecture.on():  # in front of a class the chart comes first
        intro()
    choice = pickers.model_choice(translator=spec.translator) if MODEL in spec.needs else None
    pickers.chart_format()
    if TEXT in spec.needs:  # lecture mode runs the page whole: its controls are in the sidebar, one run redraws both
        (_text_and_page if lecture.on() else _below_the_sidebar)(spec, module.view, choice)
    else:
        with said(_("The model")):
            module.view(Page(spec, choice))


def _text_and_page(spec: PageSpec, view, choice: Choice | None) -> None:
    """The text box, the pass and the page."""
    file_names.begin_run()
    text = pickers.sentence(**pickers.text_box(choice), container=st.sidebar if lecture.on() else st)
    run = reading.run(choice, text) if RUN in spec.needs else None
    if run is not None:
        _how_the_model_read(choice, text, run)
    with said(_("The model")):  # a layer recomputed within a page (Run.layer) may not fit the budget
        view(Page(spec, choice, text, run))


# typing or moving a slider reruns only this part (not the sidebar)
_below_the_sidebar = link_writes.fragment(_text_and_page)


def _how_the_model_read(choice: Choice, text: str, run: runs.Run) -> None:
    """Below the text box: the tokens, when the model read the text in [UNK]s or letters (views/shell/reading.py). The
    translator and a toy GPT say which characters or words they have never seen themselves (runtime.runs)."""
    offered = {s.key: s for s in sources()}
    if choice is None or offered.get(choice.key) is None or offered[choice.key].reads == Reads.CHINESE:
        return
    if run.unknown:  # a model trained here (a toy GPT) names the words it has never seen itself (views.shell.reading)
        return
    special = run.special_tokens
    if special is None:
        return
    named = [t[0] for t in (special.pad, special.unk, special.cls, special.sep, special.mask) if t]
    translator = any(s.can(Capability.TRANSLATION) and s.available for s in offered.values())
    reading.show(run.tokens, special.unk[0] if special.unk else None, set(named), text, translator)
