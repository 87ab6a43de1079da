"""Forward passes: one per (model, text, mask), computed once and kept within the memory budget, shared by every
session; the parts of the trace a page asks for are recomputed one layer at a time."""
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

from model.facts import SpecialTokens
from model.loading.footprint import encoder_pass_bytes, stack_sizes
from model.masks import attention_mask_of, pads
from runtime.budget import Kind
from runtime.layer_maps import WHOLE_MAPS_BYTES, LayerMaps, maps_bytes
from runtime.memory import budget, cached
from runtime.model_thread import may_trace, on_model_thread
from runtime.models import Choice, loaded_model, model_key, resident


@dataclass(frozen=True)
class Mask:
    """What the masks page asks for; the other pages use Mask() (no mask)."""

    kind: str = "none"  # one of model.masks.MASK_KINDS
    pad_to: int = 0  # padding: the sequence is padded with [PAD] up to this many tokens
    blocked: tuple[int, ...] = ()  # custom: key positions no query may see


@dataclass(frozen=True)
class Run:
    """One forward pass, kept small: every attention map and each layer's input, nothing more.

    The rest of the trace (Q, K, V, scores, residuals, the FFN, the embeddings) is recomputed one layer at a
    time when a page asks for it, from that layer's input: the same computation, so the same numbers, bit for
    bit. At bert-base size and 128 tokens a cached run is 14.5 MB instead of 87 MB for the whole trace.
    Shared by every session: never modify what it holds.
    """

    key: tuple  # (Choice, text, Mask): what was run, and the cache key of the recomputed parts
    label: str
    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    padding: np.ndarray  # (T,) bool, True at [PAD] positions
    truncated: bool
    total_tokens: int
    attentions: np.ndarray | LayerMaps  # (layers, heads, T, T) float32, read-only; a LayerMaps past WHOLE_MAPS_BYTES
    hidden: torch.Tensor  # (layers, T, E): each layer's input
    mask: torch.Tensor | None  # the additive mask every layer applied, broadcastable to (1, heads, T, T)
    unknown: tuple[str, ...] = ()  # characters or words of the text the model has never seen (models trained here)
    special_tokens: SpecialTokens | None = None  # of the model's tokenizer ([UNK], [CLS]...)

    @property
    def num_layers(self) -> int:
        return self.attentions.shape[0]

    @property
    def num_heads(self) -> int:
        return self.attentions.shape[1]

    @property
    def plain(self) -> bool:
        """The model's own pass over ids: no mask of the page's, no padding (a causal model's own mask only)."""
        return all(m is None for m in model_masks(self.key[2], self.padding))

    def layer(self, index: int, cache: bool = True):
        """model.trace.LayerTrace of one layer (batch of 1), recomputed from its input (and cached)."""
        if not cache:
            return self._recompute(index)
        return cached(("layer", self.key, index), lambda: self._recompute(index), kind=Kind.LAYER)

    def attention(self, index: int):
        """The AttentionTrace of one layer (batch of 1)."""
        return self.layer(index).self_attn

    @property
    def trace(self) -> "RunTrace":
        """The run as a model.trace.StackTrace would show it: embeddings, layers, output (recomputed on access)."""
        return RunTrace(self)

    def _recompute(self, index: int | None):
        """Layer `index`'s trace, or the embeddings' (index None), with the forward pass's masks."""
        if index is None:
            model = loaded_model(self.key[0]).model
            return on_model_thread(model.trace_embeddings, torch.tensor([self.ids]))
        return recompute_layer(self.key, self.hidden, self.padding, index)


def recompute_layer(key: tuple, hidden: torch.Tensor, padding: np.ndarray, index: int):
    """model.trace.LayerTrace of layer `index` of the run `key` (batch of 1), from its input hidden[index]."""
    choice, _, mask = key
    return on_model_thread(loaded_model(choice).model.trace_layer, index, hidden[index:index + 1],
                           *model_masks(mask, padding))


def layer_maps(key: tuple, hidden: torch.Tensor, padding: np.ndarray, index: int, cache: bool) -> np.ndarray:
    """(heads, T, T): the maps of layer `index` of the run `key`, recomputed (kept in the budget if `cache`)."""
    def compute():
        probs = recompute_layer(key, hidden, padding, index).self_attn.probs[0].numpy()
        probs.flags.writeable = False
        return probs

    return cached(("maps", key, index), compute, kind=Kind.LAYER) if cache else compute()


class RunTrace:
    """A Run read like a model.trace.StackTrace (embeddings, layers, output); parts are recomputed on access."""

    def __init__(self, run: Run, cache: bool = True):
        self._run, self._cache = run, cache

    @property
    def embeddings(self):
        run = self._run
        if not self._cache:
            return run._recompute(None)
        return cached(("embeddings", run.key), lambda: run._recompute(None), kind=Kind.EMBEDDING_TRACE)

    @property
    def layers(self) -> "_Layers":
        return _Layers(self._run, self._cache)

    @property
    def output(self):
        """The stack's output (1, T, E): the last layer's, recomputed, after a Pre-LN stack's final norm."""
        run = self._run
        return on_model_thread(loaded_model(run.key[0]).model.stack_output, self.layers[-1].output)


class _Layers(Sequence):
    def __init__(self, run: Run, cache: bool):
        self._run, self._cache = run, cache

    def __len__(self) -> int:
        return self._run.num_layers

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return self._run.layer(index % len(self), self._cache)


def model_masks(mask: Mask, padding: np.ndarray) -> tuple:
    """What the model is given for `mask` over a sequence padded where `padding` is True:
    (attention_mask (1, T), 1 = token, or None; attn_mask (T, T), True = blocked, or None)."""
    attention_mask = torch.tensor([[0 if p else 1 for p in padding]]) if padding.any() else None
    return attention_mask, attention_mask_of(mask.kind, len(padding), mask.blocked)


def compute_run(choice: Choice, text: str, mask: Mask = Mask()) -> Run:
    """Tokenise, apply the mask, run the model; keep each layer's input and the attention maps (what
    model.inputs_and_attentions returns of a recorded pass), or, past WHOLE_MAPS_BYTES, the inputs alone and
    a LayerMaps (runtime.layer_maps) that recomputes a layer's maps when a page asks."""
    model = resident(choice)
    loaded = model.loaded
    encoded = loaded.encode(text)
    ids = encoded.input_ids[0].tolist()
    tokens = list(encoded.tokens)
    pad = 0
    if pads(mask.kind) and mask.pad_to > len(ids):
        pad = min(mask.pad_to, loaded.facts.max_positions) - len(ids)
        pad_token, pad_id = loaded.facts.special_tokens.pad or ("[PAD]", 0)
        ids, tokens = ids + [pad_id] * pad, tokens + [pad_token] * pad
    padding = np.array([False] * (len(ids) - pad) + [True] * pad)
    attention_mask, attn_mask = model_masks(mask, padding)
    plain = attention_mask is None and attn_mask is None  # what the compiled graph computes: no mask, no padding
    layers, heads, *_ = sizes = stack_sizes(loaded.facts)
    whole = maps_bytes(layers, heads, len(ids)) <= WHOLE_MAPS_BYTES
    compiled = model.compiling.ready() if plain and whole else None
    with budget().room(encoder_pass_bytes(*sizes, len(ids), maps=whole), spare=(model_key(choice),)):
        if compiled is not None:  # the same numbers, without waiting for the GIL between operations
            (hidden, attentions), additive = on_model_thread(compiled, torch.tensor([ids])), None
        else:
            hidden, attentions, additive = on_model_thread(loaded.model.inputs_and_attentions, torch.tensor([ids]),
                                                           attention_mask, attn_mask, whole)  # whole: keep the maps
            hidden, attentions = hidden[:, 0], attentions[:, 0] if whole else None  # a sequence of one
            if plain and not model.compiling.started and may_trace(choice):
                model.compiling.start()  # for the next pass of this model
    key = (choice, text, mask)
    if whole:
        attentions = attentions.numpy()  # (layers, heads, T, T), shared by every session: read-only
        attentions.flags.writeable = False
    else:  # no reference to the Run itself: a cycle would keep a dropped run until the cyclic collector runs
        attentions = LayerMaps((layers, heads, len(ids), len(ids)),
                               lambda index, cache: layer_maps(key, hidden, padding, index, cache),
                               lambda name, compute: cached(("maps", key, name), compute, kind=Kind.ATTRIBUTION))
    return Run(key, loaded.source.label, tuple(tokens), tuple(ids), padding, encoded.truncated,
               encoded.total_tokens, attentions, hidden, additive, encoded.unknown, loaded.facts.special_tokens)


def on_maps(run: Run, compute, *args):
    """compute(run.attentions, *args) on a model thread (runtime.model_thread); for a run whose maps are read a
    layer at a time (runtime.layer_maps), here, each layer's recomputation on a model thread (they do not nest)."""
    if isinstance(run.attentions, LayerMaps):
        return compute(run.attentions, *args)
    return on_model_thread(compute, run.attentions, *args)


_HELD = "_held_runs"  # session state: claims on the runs this session's page drew last (a page draws at most two)


def shared_run(choice: Choice, text: str, mask: Mask = Mask()) -> Run:
    """The run for (model, text, mask), computed once in the budget, held by no session (the server's warm-up)."""
    return cached((choice, text, mask), lambda: compute_run(choice, text, mask))


def run(choice: Choice, text: str, mask: Mask = Mask()) -> Run:
    """The run for (model, text, mask): computed once, then shared through the budget.

    The session also holds the runs its page drew last, so that a slider move does not run the model again when
    the rest of the class fills the budget: held runs go last, only if the budget needs their room. The claims
    are released with the session."""
    key = (choice, text, mask)
    result = shared_run(choice, text, mask)
    held = [h for h in st.session_state.get(_HELD, ()) if h.key != key]
    claim = budget().hold(key)
    st.session_state[_HELD] = tuple(h for h in (claim, *held) if h is not None)[:2]
    return result
