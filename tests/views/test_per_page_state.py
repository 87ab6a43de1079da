"""What follows a student from page to page (the text, the layer and head) and what stays on its page (a random
model's settings: views.widgets.state.PER_PAGE)."""
from streamlit.testing.v1 import AppTest

from harness.apptest import TIMEOUT


def _two_pages():
    """Two pages' worth of widgets in one script: st.session_state["page"] says which is drawn."""
    import streamlit as st  # noqa: PLC0415 - AppTest runs this function's source alone

    from views.widgets import link_writes, state  # noqa: PLC0415 - AppTest runs this function's source alone

    page = st.session_state.get("page", "heatmap")
    if st.session_state.get("drawn") != page:  # as Streamlit does on a page switch: the widgets' state and the
        for key in ("text", "layer", "layers", "d_model"):  # link's query go
            st.session_state.pop(key, None)
        if "drawn" in st.session_state:
            st.query_params.clear()
        st.session_state["drawn"] = page
    with link_writes.url_writes():
        state.set_page(page)
        state.text("Sentence", "text", "The cat sat", 100)
        state.int_slider("Layer", "layer", 0, 5, 0)
        state.int_slider("Layers", "layers", 1, 12, 2)
        state.choice("d_model", "d_model", (64, 128, 256), 128)


def _switch(at: AppTest, page: str) -> AppTest:
    at.session_state["page"] = page
    return at.run()


def test_the_text_and_layer_follow_the_random_models_settings_stay_on_their_page():
    at = AppTest.from_function(_two_pages, default_timeout=TIMEOUT).run()
    at.text_area(key="text").input("Students in class").run()
    at.slider(key="layer").set_value(4).run()
    at.slider(key="layers").set_value(9).run()
    at.selectbox(key="d_model").set_value(256).run()

    _switch(at, "architecture")
    assert at.text_area(key="text").value == "Students in class" and at.slider(key="layer").value == 4
    assert at.slider(key="layers").value == 2 and at.selectbox(key="d_model").value == 128  # this page's own
    at.slider(key="layers").set_value(12).run()

    _switch(at, "heatmap")
    assert at.slider(key="layers").value == 9 and at.selectbox(key="d_model").value == 256  # as set here
    assert at.query_params["layers"] in ("9", ["9"])  # and written to the link
    _switch(at, "architecture")
    assert at.slider(key="layers").value == 12
