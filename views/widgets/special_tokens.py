"""The special tokens switch (?special=show|hide|renorm), shared by the attention pages.

[CLS] and [SEP] (a translator's <bos> and <eos>, and [PAD]) often take most of a head's attention: a head with
nothing to do parks it there (an "attention sink"), and the rest of the map is dark. Hiding them shows the rest.
Hidden, each row is either left as it is (its cells are what the model computed, the row sums to less than 1) or
renormalised over the keys that remain (each row sums to 1 again, the shares among the remaining keys). The page
says which. The special tokens are the model's own (views.pages.atlas.special_ids: by id, from its tokenizer), never
guessed from the text.

    shown = special_tokens.switch(run, container)  # or of(run, choose(container)) for several runs
    maps, tokens = shown.maps(run.attentions), shown.tokens(run.tokens)
    shown.say()
"""
from dataclasses import dataclass

import numpy as np
import streamlit as st

from locales import N_, _
from runtime.layer_maps import LayerMaps
from views.shell.markdown import code
from views.widgets import state

MODES = {"show": N_("Show"), "hide": N_("Hide"), "renorm": N_("Hide and renormalise")}


@dataclass(frozen=True)
class Shown:
    keep: np.ndarray  # (T,) bool: the query positions drawn (and the keys', unless `keys` says otherwise)
    renormalise: bool
    note: str = ""  # what is hidden and how the rows are drawn ("" when nothing is hidden)
    keys: np.ndarray | None = None  # (S,) bool: the key positions drawn, for a map whose keys are another text's

    def say(self, container=None) -> None:
        """The note, as a caption (by the chart)."""
        if self.note:
            (container or st).caption(self.note)

    @property
    def kept_keys(self) -> np.ndarray:
        return self.keep if self.keys is None else self.keys

    @property
    def hides(self) -> bool:
        return not (self.keep.all() and self.kept_keys.all())

    def maps(self, maps: np.ndarray) -> np.ndarray:
        """(..., T, S) -> (..., T', S') without the hidden queries and keys; rows renormalised if asked (a blocked
        cell, NaN, stays a gap)."""
        if not self.hides:
            return maps
        if isinstance(maps, LayerMaps):  # a run's maps too big to keep whole: each layer as it is read
            return maps.mapped(self.maps, (*maps.shape[:2], int(self.keep.sum()), int(self.kept_keys.sum())))
        kept = np.asarray(maps)[..., self.keep, :][..., self.kept_keys]
        return _renormalised(kept) if self.renormalise else kept

    def key_rows(self, rows: np.ndarray) -> np.ndarray:
        """(..., S) rows of one query over the first S keys (a causal row, up to the query itself) -> over the keys
        drawn among them, renormalised if asked: maps() for one row, without the whole map."""
        kept = np.asarray(rows)[..., self.kept_keys[:np.shape(rows)[-1]]]
        return _renormalised(kept) if self.renormalise else kept

    def tokens(self, tokens) -> tuple:
        return tuple(t for t, k in zip(tokens, self.keep) if k)

    def key_tokens(self, tokens) -> tuple:
        return tuple(t for t, k in zip(tokens, self.kept_keys) if k)


def _renormalised(kept: np.ndarray) -> np.ndarray:
    """Each row divided by its sum (a blocked cell, NaN, stays a gap; a row with nothing left stays 0)."""
    total = np.nansum(kept, axis=-1, keepdims=True, dtype=np.float32)
    return np.divide(kept, total, out=np.zeros_like(kept), where=total > 0).astype(np.float32)


def special_positions(ids, special) -> np.ndarray:
    """(T,) bool: where the model's special tokens ([CLS], [SEP], [PAD], [MASK]; <bos>, <eos>, <pad>) are."""
    roles = (special.cls, special.sep, special.pad, special.mask) if special is not None else ()
    return np.isin(np.asarray(ids), [index for _text, index in (r for r in roles if r)])


def choose(container=None) -> str:
    """The switch (bound to ?special=): "show", "hide" or "renorm"."""
    return state.choice(_("Special tokens"), "special", list(MODES), "show", container=container or st,
                        widget="segmented_control", format_func=lambda m: _(MODES[m]),
                        help=_("[CLS] and [SEP] often take most of a head's attention (an attention sink). Hide them "
                               "to see the rest of the map, with each row as the model computed it or renormalised "
                               "over the remaining keys."))


def of(run, mode: str) -> Shown:
    """What `mode` hides of a run, and how; the note says so."""
    special = special_positions(run.ids, run.special_tokens)
    return hidden(mode, [(run.attentions, special, special)], zip(run.tokens, special))[0]


def hidden(mode: str, parts, named) -> list[Shown]:
    """What `mode` hides of each part: parts are (maps (..., T, S), queries (T,) bool, keys (S,) bool), True at a
    special token (an encoder-decoder has three: its decoder's self-attention, the cross-attention, the encoder's);
    named: (token, special) pairs, whose special ones the note names. One Shown per part, all with one note (its share
    left: the mean over every row of every part). Nothing is hidden where a map would be left without a row."""
    parts = list(parts)
    if mode == "show" or not any(q.any() or k.any() for _m, q, k in parts) or any(
            q.all() or k.all() for _m, q, k in parts):
        return [Shown(np.ones(q.size, dtype=bool), False, keys=np.ones(k.size, dtype=bool)) for _m, q, k in parts]
    names = " ".join(sorted({code(t) for t, s in named if s}))
    if mode == "renorm":
        note = _("Hidden: {tokens}. Each row is renormalised over the remaining keys, so it sums to 1 again: the "
                 "shares among the tokens shown.").format(tokens=names)
    else:  # a row sums to 1: what the shown keys keep is 1 minus what the hidden ones take (no copy of the maps)
        kept = 1.0 - float(np.concatenate([_taken(m, q, k) for m, q, k in parts]).mean())
        note = _("Hidden: {tokens}. The rows are as the model computed them, so they sum to less than 1: on "
                 "average {share} is left for the tokens shown.").format(tokens=names, share=f"{kept:.0%}")
    return [Shown(~q, mode == "renorm", note, keys=~k) for _m, q, k in parts]


def _taken(maps, queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """What the hidden keys take of each shown row, flattened (float64)."""
    def of_maps(m) -> np.ndarray:
        return np.nansum(np.asarray(m)[..., keys][..., ~queries, :], axis=-1, dtype=np.float64).ravel()

    if isinstance(maps, LayerMaps):  # every layer read once per run, then kept: a slider move reads none again
        return maps.summary(("taken", queries.tobytes(), keys.tobytes()),
                            lambda: np.concatenate([of_maps(layer) for layer in maps]))
    return of_maps(maps)


def switch(run, container=None) -> Shown:
    """The switch, and what it hides of `run`."""
    return of(run, choose(container))
