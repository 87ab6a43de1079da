"""Entry point: page config and the navigation over the page registry (views/shell/registry.py); pages live in
views/."""
import plotly.io as pio
import streamlit as st

from locales import _
from views.shell import formulas, frame, language, lecture, link_check, lone_surrogates, navigation, registry
from views.widgets import link_writes

# Streamlit's chart theme replaces plotly's template (the charts are pixel-identical without it), so
# don't build and send plotly's default template, about 7 KB, with every chart on every rerun.
pio.templates.default = None


def main(start: str | None = None) -> None:
    """The app; `start`: the URL path of the page served at / (default: the registry's default page)."""
    lang = language.resolve()
    st.set_page_config(page_title=_("Attention visualizer"), page_icon=":material/visibility:", layout="wide")
    pages = navigation.pages((start, lang), lambda: [
        frame.streamlit_page(spec, default=spec.default if start is None else spec.path == start)
        for spec in registry.PAGES])
    with link_writes.url_writes():  # one URL message per run, not one per widget
        link_check.check_link()
        language.switch(lang)
        lecture.toggle()
        lone_surrogates.replace_in_the_browser(styles=formulas.CSS + lecture.css())
        st.navigation(pages, expanded=True).run()  # every page in view (Streamlit folds past 10)


if __name__ == "__main__":
    main()
