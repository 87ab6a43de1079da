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

# torch 2.13 says torch.jit.trace is deprecated (see CompiledPass). A filter, not warnings.catch_warnings(),
# which is not thread-safe and the tracing runs on a model thread.
warnings.filterwarnings("ignore", message=r"`torch\.jit\.trace(_method)?` is deprecated", category=DeprecationWarning)


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
