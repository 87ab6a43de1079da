"""views.widgets.link_writes.url_writes: a run's URL writes reach the browser as one message, and never half of them."""
from types import SimpleNamespace

import pytest

from views.widgets import link_writes, state


class QueryParams(dict):
    """st.query_params as the browser sees it: every update is one message."""

    def __init__(self, **values):
        super().__init__(values)
        self.messages = []

    def update(self, values):
        super().update(values)
        self.messages.append(dict(values))

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.messages.append({key: value})

    def to_dict(self):
        return dict(self)


@pytest.fixture
def st(monkeypatch):
    fake = SimpleNamespace(query_params=QueryParams(text="hello", layer="1"), session_state={})
    monkeypatch.setattr(state, "st", fake)
    monkeypatch.setattr(link_writes, "st", fake)
    return fake


def write(st, **values):
    for name, value in values.items():
        st.session_state[name] = value
        state.write_back(name, str)


def test_writes_inside_a_block_are_one_message_with_only_what_changed(st):
    with link_writes.url_writes():
        write(st, text="hello", layer=2, head=3)
        with link_writes.url_writes():  # a fragment drawn by its page: joins the page's message
            write(st, mean=False)
        assert st.query_params.messages == []
        assert link_writes.url_params() == {"text": "hello", "layer": "2", "head": "3", "mean": "False"}
    assert st.query_params.messages == [{"layer": "2", "head": "3", "mean": "False"}]


def test_outside_a_block_each_write_is_sent_at_once(st):
    write(st, layer=4, head=0)
    assert st.query_params.messages == [{"layer": "4"}, {"head": "0"}]


def test_an_interrupted_run_sends_nothing_so_the_next_run_writes_it_all(st):
    class Rerun(Exception):
        pass

    with pytest.raises(Rerun), link_writes.url_writes():
        write(st, layer=2)
        raise Rerun
    assert st.query_params.messages == [] and st.query_params["layer"] == "1"
    with link_writes.url_writes():
        write(st, layer=2)
    assert st.query_params.messages == [{"layer": "2"}]
