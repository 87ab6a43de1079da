"""A short load run (issue 5): the real app under 8 students speaking Streamlit's websocket protocol, zero
errors; and proof that the generator sees a broken page and follows st.fragment reruns. No timing asserts:
timings belong to bench/load.py."""
import textwrap
from urllib.parse import parse_qs

from harness.servers import spawn
from harness.students.classroom import APPS, run_load
from harness.students.student import STEPS

# Two pages at the app's url paths ("" / heatmap, all-heads) with the widgets the session script moves.
PAGES = textwrap.dedent('''
    import streamlit as st

    FRAGMENT = {fragment}

    def chart(layer, head):
        st.plotly_chart({{"data": [{{"type": "heatmap", "z": [[layer, head], [head, layer]]}}]}})

    def sliders():
        layer = st.slider("Layer", 0, 5, key="layer")
        head = st.slider("Head", 0, 11, key="head")
        if {raise_on_move} and layer != 0:
            raise RuntimeError("a slider move broke the page")
        st.query_params.update(layer=str(layer), head=str(head))
        chart(layer, head)

    def heatmap():
        st.text_area("Sentence", st.query_params.get("text", "a default sentence"), key="text")
        st.markdown("x" * 12_000)  # above global.minCachedMessageSize: the browser caches it
        (st.fragment(sliders) if FRAGMENT else sliders)()

    def all_heads():
        chart(0, 0)

    st.navigation([st.Page(heatmap, url_path="heatmap", default=True),
                   st.Page(all_heads, url_path="all-heads")]).run()
''')


def _run_page(tmp_path, *, fragment: bool, raise_on_move: bool):
    app = tmp_path / "pages_app.py"
    app.write_text(PAGES.format(fragment=fragment, raise_on_move=raise_on_move))
    with spawn(app) as server:
        return run_load(server.url, sessions=2, ramp=0.5, think=(0, 0.2), seed=1, timeout=30, warmup=0,
                        settle=None, pids=[server.pid])


def test_eight_students_on_the_app_see_no_error():
    with spawn(APPS["app"]) as server:
        report = run_load(server.url, sessions=8, ramp=2, think=(0, 0.5), seed=5, timeout=60, warmup=1,
                          settle=None, pids=[server.pid])
        assert server.proc.poll() is None, server.tail()
    assert report.errors == [], report.table()
    assert report.completed == 8, report.table()
    for outcome in report.outcomes:
        assert [s.kind for s in outcome.steps] == list(STEPS)
        assert all(s.charts >= 1 for s in outcome.steps), report.table()
        layer, head, sentence = outcome.steps[1:4]
        # what the student set is what the page wrote back to its URL (the frontend's query string)
        assert f"layer={layer.value}" in layer.query_string and f"head={head.value}" in head.query_string
        assert sentence.value.split()[0] in sentence.query_string
        # a run's URL writes reach the browser as one message, not one per widget (6 on a first visit)
        assert [s.url_messages for s in outcome.steps] == [1, 1, 1, 1, 1], report.table()
        opened = parse_qs(outcome.steps[0].query_string)
        assert {"text", "model", "img", "layer", "head", "mean", "auto"} <= set(opened), opened
    assert report.server_cpu_s > 0 and report.rss_mb["peak"] > 0


def test_students_open_the_page_with_more_url_parameters():
    """query: every student (and the warm-up) opens with these parameters too, here a random model of 2 layers
    x 2 heads, so each slider has one other value to move to: 1."""
    query = "model=random&d_model=32&heads=2&layers=2&d_ff=64"
    with spawn(APPS["app"]) as server:
        report = run_load(server.url, sessions=2, ramp=0.5, think=(0, 0.2), seed=2, timeout=60, warmup=1,
                          settle=None, pids=[server.pid], query=query)
    assert report.errors == [] and report.completed == 2, report.table()
    assert report.settings["query"] == query
    for outcome in report.outcomes:
        opened = parse_qs(outcome.steps[0].query_string)
        assert (opened["model"], opened["d_model"], opened["heads"], opened["layers"]) == (
            ["random"], ["32"], ["2"], ["2"]), opened
        assert [s.value for s in outcome.steps[1:3]] == [1, 1]


def test_a_page_that_raises_on_a_slider_move_is_reported(tmp_path):
    report = _run_page(tmp_path, fragment=False, raise_on_move=True)
    # from the move on, the heatmap page raises (the slider keeps its value); the all-heads page does not
    failed = {(e.session, e.step) for e in report.errors if "exception in the page" in e.message}
    assert failed == {(i, step) for i in (0, 1) for step in ("layer", "head", "sentence")}, report.table()
    assert report.completed == 0
    for outcome in report.outcomes:  # the session goes on: every step ran
        assert [(s.kind, s.ok) for s in outcome.steps] == [("open", True), ("layer", False), ("head", False),
                                                          ("sentence", False), ("all_heads", True)]


def test_fragment_reruns_are_followed(tmp_path):
    report = _run_page(tmp_path, fragment=True, raise_on_move=False)
    assert report.errors == [], report.table()
    assert report.completed == 2
    for outcome in report.outcomes:
        steps = {s.kind: s for s in outcome.steps}
        assert steps["layer"].fragment_run and steps["head"].fragment_run
        assert not steps["open"].fragment_run and not steps["sentence"].fragment_run
        assert f"layer={steps['layer'].value}" in steps["layer"].query_string
        assert f"head={steps['head'].value}" in steps["head"].query_string
        assert f"layer={steps['layer'].value}" in steps["head"].query_string  # the other slider kept its value
        # the big markdown came in full on open, then as a reference to the browser's message cache
        assert steps["open"].cached == 0 and steps["sentence"].cached == 1
