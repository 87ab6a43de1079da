"""views.shell.frame: what every page of the registry gets from the page frame, checked on every page."""
import dataclasses

import pytest

from harness import apptest
from model.loading import sources
from runtime import models
from views.shell import registry

TEXT_PAGES = [spec.path for spec in registry.PAGES if registry.TEXT in spec.needs]
MODEL_PAGES = [spec.path for spec in registry.PAGES if registry.MODEL in spec.needs]
CHARTED = {"modern": {"part": "costs"}}  # it opens on its three blocks, drawn as images: a part with charts


@pytest.mark.parametrize("spec", registry.PAGES, ids=lambda s: s.path)
def test_every_page_has_its_title_caption_and_the_chart_format_it_was_linked_with(spec):
    at = apptest.open_page(spec.path, img="svg", **CHARTED.get(spec.path, {}))
    assert not at.exception
    assert at.caption[0].value == spec.caption
    charts = apptest.charts(at)
    assert bool(charts) == (spec.path != "tour")  # the tour's page is a list of links
    for chart in charts:
        config = chart.config
        assert config["toImageButtonOptions"]["format"] == "svg" and config["displaylogo"] is False
    assert apptest.link_value(at, "img") == "svg"


@pytest.mark.parametrize("path", TEXT_PAGES)
def test_a_page_stopped_at_an_empty_text_says_what_to_do_and_still_writes_the_link(path):
    at = apptest.open_page(path, text="   ")
    assert not at.exception
    assert any("Type a sentence" in i.value for i in at.info) and not apptest.charts(at)
    assert apptest.link_value(at, "img") == "png"  # what it had drawn before the stop
    assert (apptest.link_value(at, "model") is not None) == (path in MODEL_PAGES)


def test_the_model_picker_says_which_models_are_missing_and_why(monkeypatch):
    real = sources.list_sources()
    missing = dataclasses.replace(real[0], key="hf:absent", label="Absent BERT", available=False,
                                  reason="not in the local Hugging Face cache")
    monkeypatch.setattr(models, "list_sources", lambda: [*real, missing])  # where the app looks it up
    models.sources.clear()  # cached for a minute per process
    try:
        at = apptest.open_page(MODEL_PAGES[0])
        assert not at.exception
        picker = at.sidebar.selectbox[0]
        assert picker.label == "Model" and "Absent BERT" not in picker.options
        assert "**Absent BERT**: not in the local Hugging Face cache" in picker.help
    finally:
        models.sources.clear()
