"""The sidebar's heads switched off, bound to ?off=, for any model (model.heads: one head type, one way of writing a
head in a link): "1.2,0.3" in a model of one attention block, "encoder.0.1,cross.1.3" in one of several. Every part of
a page then uses the model without them."""
from collections.abc import Callable, Sequence

import streamlit as st

from locales import _
from model.heads import Head, head_id, parse_head
from model.kinds import Block
from views.widgets import state

KEY = "off"  # the link's name, and the multiselect's session key (a part that sets heads writes it); said literally
# below: tests/views/test_hostile_input.py reads the link keys from the calls


def chosen(blocks: Sequence[Block], layers: int, heads: int, name: Callable[[Head], str]) -> tuple[Head, ...]:
    """The heads picked in the sidebar, of a model of `layers` x `heads` in each of `blocks`; name(head): the head
    as the page says it."""
    ids = {head_id(h, blocks): h for h in (Head(b, layer, head) for b in blocks for layer in range(layers)
                                           for head in range(heads))}
    # the names translated now, while the page is drawn in the session's language (Streamlit formats the options
    # again when a value comes back)
    shown = {i: name(h) for i, h in ids.items()}.__getitem__
    picked = state.name_list(_("Heads switched off"), "off", list(ids), shown, container=st.sidebar,
                             placeholder=_("none: the whole model"),
                             help=_("A head switched off adds nothing to its layer's output (its context is zeroed "
                                    "before W_O); every part of the page then uses the model without it."))
    return tuple(parse_head(i, blocks) for i in picked)
