"""views.navigation: pages are built once per process, and every run gets its own copies."""
from types import SimpleNamespace

from views import navigation


def test_pages_are_built_once_and_each_run_gets_copies(monkeypatch):
    monkeypatch.setattr(navigation, "_built", [])
    calls = []

    def build():
        calls.append(1)
        return [SimpleNamespace(url_path="a", _can_be_called=False), SimpleNamespace(url_path="b",
                                                                                    _can_be_called=False)]

    first, second = navigation.pages(build), navigation.pages(build)
    assert len(calls) == 1
    assert [p.url_path for p in first] == [p.url_path for p in second] == ["a", "b"]
    # st.navigation marks the page a run may call: one session's mark must not reach another session's run
    first[0]._can_be_called = True
    assert second[0]._can_be_called is False
    assert navigation.pages(build)[0]._can_be_called is False
