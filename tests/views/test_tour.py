"""The guided tour: every stop's link opens its page in the state it presets, with the stop's banner, previous /
next links to the neighbouring stops, and a link for a slide; in both languages."""
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

import locales
from harness.apptest import TIMEOUT, _app_starting_at, link_value
from locales import _
from views.shell import registry, tour_stops


def _open(path: str, **params) -> AppTest:
    at = AppTest.from_function(_app_starting_at, args=(path,), default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def _links(at: AppTest) -> list[tuple[str, dict[str, str]]]:
    hashes = {calc_hash(spec.path): spec.path for spec in registry.PAGES}
    return [(hashes[link.proto.page_script_hash], {k: v[0] for k, v in parse_qs(link.proto.query_string).items()})
            for link in at.get("page_link")]


def test_the_stops_follow_the_tutorials_and_exist():
    assert [stop.path for stop in tour_stops.STOPS] == ["positional", "heatmap", "softmax", "masks", "all-heads",
                                                        "steps", "architecture", "encoder-decoder", "translate",
                                                        "language-model", "language-model",  # the toy GPT
                                                        "language-model", "ask", "ask", "modern"]  # a real LLM
    for stop in tour_stops.STOPS:
        registry.by_path(stop.path)
        assert set(map(str, stop.params)) <= registry.link_keys()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("k", range(1, len(tour_stops.STOPS) + 1))
def test_each_stops_link_opens_its_page_in_its_state_with_the_banner(k, lang):
    stop = tour_stops.STOPS[k - 1]
    at = _open(stop.path, **tour_stops.query_params(k, lang))
    assert not at.exception, at.exception
    assert not at.warning, [w.value for w in at.warning]  # every preset value is one the page takes
    with locales.use(lang):
        heading = _("**Tour, stop {k} of {n}: {title}**").format(k=k, n=len(tour_stops.STOPS), title=_(stop.title))
        text = _(stop.text)
    assert heading in [m.value for m in at.markdown] and text in [m.value for m in at.markdown]
    for name, value in stop.params.items():  # the page read the preset, and writes it back as it was
        assert link_value(at, name) == str(value), name
    links = _links(at)
    if k > 1:
        assert (tour_stops.STOPS[k - 2].path, tour_stops.query_params(k - 1, lang)) in links
    if k < len(tour_stops.STOPS):
        assert (tour_stops.STOPS[k].path, tour_stops.query_params(k + 1, lang)) in links
    assert ("tour", {"lang": lang}) in links
    slide = at.get("code")[-1].proto.code_text
    assert urlsplit(slide).path == ("/" if registry.by_path(stop.path).default else f"/{stop.path}")
    assert {k2: v[0] for k2, v in parse_qs(urlsplit(slide).query).items()} == tour_stops.query_params(k, lang)


def test_the_first_view_on_minilm_is_the_measured_head():
    at = _open("heatmap", **tour_stops.query_params(2, "en"))
    assert (link_value(at, "layer"), link_value(at, "head")) == ("3", "1")


def test_a_stop_of_another_page_shows_no_banner_and_a_bad_stop_a_notice():
    at = _open("heatmap", tour="5")  # stop 5 is the all-heads page
    assert not any("Tour, stop" in m.value for m in at.markdown)
    at = _open("heatmap", tour="99")
    assert any("tour=99" in w.value and f"1 to {len(tour_stops.STOPS)}" in w.value for w in at.warning)
    assert not at.exception


def test_the_tour_page_lists_every_stop_with_its_link():
    at = _open("tour", lang="zh")
    assert not at.exception
    links = _links(at)
    assert links[0] == ("positional", tour_stops.query_params(1, "zh"))  # Start the tour
    stops = enumerate(tour_stops.STOPS, start=1)
    assert links[1:] == [(stop.path, tour_stops.query_params(k, "zh")) for k, stop in stops]
    assert len(at.get("code")) == len(tour_stops.STOPS)


def test_a_hostile_stop_is_one_short_code_span_and_the_page_still_works():
    at = _open("masks", tour="<img src=x onerror=alert(1)>**bold**" + "9" * 5000)
    assert not at.exception
    (warning,) = [w.value for w in at.warning if "tour=" in w.value]
    assert warning.count("`") == 2 and len(warning) < 200  # one code span, the value cut to 20 characters
    assert "<img src=x onerr" in warning
    assert not any("Tour, stop" in m.value for m in at.markdown) and at.get("plotly_chart") or at.get("bidi_component")


def test_next_to_a_stop_on_the_same_page_opens_that_stop_s_state():
    """Stops 10 and 11 are both the Language model page: Next from one to the other (the same page, new link) shows
    the next stop's part, not the part this session's widgets held."""
    first, second = 10, 11
    assert tour_stops.STOPS[first - 1].path == tour_stops.STOPS[second - 1].path == "language-model"
    at = _open("language-model", **tour_stops.query_params(first, "en"))
    assert at.segmented_control(key="part").value == "next"
    at.query_params.clear()  # what the Next link opens
    for name, value in tour_stops.query_params(second, "en").items():
        at.query_params[name] = value
    at.run()
    assert not at.exception and at.segmented_control(key="part").value == "induction"
    at.segmented_control(key="part").set_value("heads").run()  # a move on the stop itself is the visitor's
    assert at.segmented_control(key="part").value == "heads"


@pytest.mark.parametrize("path", ["translate", "language-model"])
def test_a_decoding_stop_starts_at_the_first_step_whatever_step_the_session_was_at(path):
    """The Translate and Language model pages share the step (?step=): a student arriving at a decoding stop from a
    page left at step 3 starts the stop's decoding at its first word, as its text says (press Next)."""
    k = next(i for i, stop in enumerate(tour_stops.STOPS, 1) if stop.path == path)
    at = _open(path, step="3", **({"model": "gpt"} if path == "language-model" else {}))
    assert link_value(at, "step") == "3"
    at.query_params.clear()  # the stop's link, as the previous stop's Next opens it
    for name, value in tour_stops.query_params(k, "en").items():
        at.query_params[name] = value
    at.run()
    assert not at.exception and link_value(at, "step") in (None, "0")
