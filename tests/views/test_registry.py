"""views.shell.registry: every page declared once, and what reads it (the app, the README, a new page)."""
import importlib
import re
from pathlib import Path

import pytest

from harness import apptest
from views.shell import registry

ROOT = Path(apptest.APP).parent


def test_the_readme_page_table_is_the_registry():
    readme = (ROOT / "README.md").read_text()
    rows = re.findall(r"^\| ([^|]+?) \(`(/[^`]*)`\) \|", readme, flags=re.M)
    assert rows == [(spec.title, "/" if spec.default else f"/{spec.path}") for spec in registry.PAGES]


def test_paths_are_unique_and_one_page_is_the_default():
    assert len({spec.path for spec in registry.PAGES}) == len(registry.PAGES)
    assert [spec.path for spec in registry.PAGES if spec.default] == ["heatmap"]


@pytest.mark.parametrize("spec", registry.PAGES, ids=lambda s: s.path)
def test_each_module_draws_its_page_with_view(spec):
    module = importlib.import_module(spec.module)  # importing a page draws nothing: it has no Streamlit calls
    assert callable(module.view)
    assert registry.RUN not in spec.needs or {registry.MODEL, registry.TEXT} <= spec.needs


def test_every_page_module_in_views_is_registered():
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "views").rglob("*.py")
               if re.search(r"^def view\(page", p.read_text(), flags=re.M)}
    assert modules == {spec.module for spec in registry.PAGES}


def test_a_new_page_is_one_registry_entry_and_one_module(monkeypatch):
    """The README's example: an entry and tests/views/example_page.py, and the app serves it with the frame's
    title, model picker, text box and run, its slider bound to the link."""
    entry = registry.PageSpec("entropy", "Entropy", ":material/equalizer:", "tests.views.example_page",
                              "How spread out each query's attention is.",
                              frozenset({registry.MODEL, registry.TEXT, registry.RUN}))
    monkeypatch.setattr(registry, "PAGES", (*registry.PAGES, entry))
    at = apptest.open_page("entropy", text="Hello students", layer="2")
    assert not at.exception
    assert at.caption[0].value == "How spread out each query's attention is."
    assert at.text_area[0].value == "Hello students" and at.slider[0].value == 2
    assert len(at.get("vega_lite_chart")) == 1  # st.bar_chart
    at.slider[0].set_value(3).run()
    assert apptest.link_value(at, "layer") == "3"


def test_the_readme_example_is_the_module_this_test_runs():
    readme = (ROOT / "docs" / "architecture.md").read_text()
    example = readme.split("# views/pages/entropy.py: the whole page\n", 1)[1].split("```", 1)[0]
    module = (ROOT / "tests/views/example_page.py").read_text().split('"""', 2)[2]

    def code(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.strip()]

    assert code(example) == code(module)
