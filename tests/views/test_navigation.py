"""views.shell.navigation: pages are built once per process (per start page), and every run gets its own copies."""
from types import SimpleNamespace

from views.shell import navigation


def test_pages_are_built_once_per_key_and_each_run_gets_copies():
    calls = []
    key, other = object(), object()  # keys no other caller uses

    def build():
        calls.append(1)
        return [SimpleNamespace(url_path="a", marked=False), SimpleNamespace(url_path="b", marked=False)]

    first, second = navigation.pages(key, build), navigation.pages(key, build)
    assert len(calls) == 1
    assert [p.url_path for p in first] == [p.url_path for p in second] == ["a", "b"]
    # st.navigation marks the page a run may call: one session's mark must not reach another session's run
    first[0].marked = True
    assert second[0].marked is False and navigation.pages(key, build)[0].marked is False
    navigation.pages(other, build)  # another start page: its own pages
    assert len(calls) == 2
