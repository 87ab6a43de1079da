"""A recorded forward pass as one TorchScript graph, reduced to what the app keeps of it.

Why: an eager pass returns to Python between its ~300 operations, and each return takes Python's GIL. In a
Streamlit server other threads hold the GIL most of the time (page scripts, the event loop), so an eager pass
waits for it at every step: all-MiniLM-L6-v2 at 30 tokens costs 38 ms of CPU beside one busy Python thread
against 14 ms alone. A traced graph runs its operations in C++ without the GIL and costs 14 ms either way
(bench/gil.py).

The graph runs the same ATen operations on the same weights (shared, not copied) in the same order, so its
results equal the eager pass's bit for bit (tests/model/test_compiled.py checks lengths from 1 to the
maximum, for each kind of model). Only unmasked sequences of one: a mask or padding takes the eager pass.
"""
import warnings

import torch
from torch import Tensor, nn

from model.cache import Cache, KeyValues
from model.decoder_only import CausalLMOutput

# torch 2.13 says torch.jit.trace is deprecated (see CompiledPass). A filter, not warnings.catch_warnings(),
# which is not thread-safe and the tracing runs on a model thread.
warnings.filterwarnings("ignore", message=r"`torch\.jit\.trace(_method)?` is deprecated", category=DeprecationWarning)
# Tracing a step says which Python values it froze (a branch on a size); compiled_step checks the graph against the
# eager step on a longer cache instead, and drops a graph that differs.
warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)


class _AttentionsAndInputs(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: Tensor) -> tuple[Tensor, Tensor]:
        inputs, attentions, _ = self.model.inputs_and_attentions(ids)
        return inputs[:, 0], attentions[:, 0]  # a sequence of one


class CompiledPass:
    """model.inputs_and_attentions(ids) for one unmasked sequence (1, T), as (inputs, attentions):
    each layer's input (layers, T, E), every attention map (layers, heads, T, T).

    Built once per model (BertModel or TextEncoder, in eval mode), shared by every session: it holds no
    state of a pass. torch.jit.trace is deprecated in favour of torch.compile, which needs a C++ compiler at
    run time; if tracing fails (a torch without it), `compiled_pass` returns None and callers run eagerly.
    """

    def __init__(self, model: nn.Module, max_positions: int):
        self.max_positions = max_positions
        with torch.inference_mode():
            self._graph = torch.jit.trace(_AttentionsAndInputs(model).eval(), torch.zeros(1, 2, dtype=torch.long),
                                          check_trace=False)

    def __call__(self, ids: Tensor) -> tuple[Tensor, Tensor]:
        if ids.dim() != 2 or ids.shape[0] != 1 or not 0 < ids.shape[1] <= self.max_positions:
            raise ValueError(f"a compiled pass takes ids of shape (1, T) with 0 < T <= {self.max_positions}, "
                             f"not {tuple(ids.shape)}")
        # the plain interpreter: no shape specialisation or fusion, so exactly the eager pass's kernels
        with torch.inference_mode(), torch.jit.optimized_execution(False):
            return self._graph(ids)


def compiled_pass(model: nn.Module, max_positions: int) -> CompiledPass | None:
    """The model's CompiledPass, or None if this torch cannot trace it (callers then run the eager pass)."""
    try:
        return CompiledPass(model, max_positions)
    except Exception:  # noqa: BLE001 - any failure to trace means: run eagerly, as before
        return None


class _Step(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: Tensor, keys: tuple[Tensor, ...], values: tuple[Tensor, ...]):
        out = self.model(ids, cache=Cache(tuple(KeyValues(k, v) for k, v in zip(keys, values))))
        layers = out.cache.self_attn
        return out.logits, tuple(kv.k for kv in layers), tuple(kv.v for kv in layers), out.attentions


class CompiledStep:
    """One step of a generation (model.causal.decoding.generate) of a decoder-only model as one TorchScript graph:
    the next word (1, 1) read after a cache of one sequence, no head switched off, returned as the eager step's
    output (logits, attentions, cache). The eager step returns to Python between its ~1,000 operations (SmolLM2's
    30 layers): 10 ms of a 45 ms step, which the graph does not spend, and it waits for no GIL (bench/llm.py).

    Built from a real step: traced on one cache, then checked bit for bit against the eager step on the next one,
    a word longer, so that nothing of the example's length (a position, a mask) was frozen into the graph;
    `compiled_step` returns None when the check fails or tracing does (the eager step serves). Shared by every
    session: it holds no state of a generation."""

    def __init__(self, model: nn.Module, ids: Tensor, cache: Cache):
        self.max_positions = model.max_positions
        keys, values = _split(cache)
        with torch.inference_mode():
            self._graph = torch.jit.trace(_Step(model).eval(), (ids, keys, values), check_trace=False)

    def __call__(self, ids: Tensor, cache: Cache) -> CausalLMOutput:
        if ids.shape != (1, 1) or cache.self_attn[0].k.size(0) != 1 or cache.length >= self.max_positions:
            raise ValueError(f"a compiled step reads one word after a cache of one sequence of fewer than "
                             f"{self.max_positions} words, not {tuple(ids.shape)} after {cache.length}")
        keys, values = _split(cache)
        with torch.inference_mode(), torch.jit.optimized_execution(False):  # exactly the eager step's kernels
            logits, keys, values, attentions = self._graph(ids, keys, values)
        return CausalLMOutput(logits, attentions, None, cache=Cache(tuple(map(KeyValues, keys, values))))


def _split(cache: Cache) -> tuple[tuple[Tensor, ...], tuple[Tensor, ...]]:
    return tuple(kv.k for kv in cache.self_attn), tuple(kv.v for kv in cache.self_attn)


def compiled_step(model: nn.Module) -> CompiledStep | None:
    """The model's CompiledStep, traced on a step after a 3-word prompt and checked on the next; None if this torch
    cannot trace it or the graph's step differs from the eager one in any bit (callers then step eagerly)."""
    try:
        with torch.inference_mode():
            ids = torch.zeros(1, 1, dtype=torch.long)
            cache = model(torch.zeros(1, 3, dtype=torch.long), use_cache=True).cache
            step = CompiledStep(model, ids, cache)
            cache = model(ids, cache=cache).cache  # a word longer than the traced example
            eager, graph = model(ids, cache=cache), step(ids, cache)
        same = torch.equal(eager.logits, graph.logits) and all(
            torch.equal(a, b) for a, b in zip((*eager.attentions, *_split(eager.cache)[0]),
                                              (*graph.attentions, *_split(graph.cache)[0])))
        return step if same else None
    except Exception:  # noqa: BLE001 - any failure to trace or run means: step eagerly, as before
        return None
