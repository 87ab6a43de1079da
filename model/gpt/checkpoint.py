"""Reading a Hugging Face GPT-2 directory into a GPT, without trusting it (model.loading.checkpoint's two passes).

GPT-2 stores its linear maps as Conv1D, weight (in, out): ours are nn.Linear's (out, in), so each is transposed.
Its c_attn packs W_Q, W_K, W_V side by side (E, 3E): transposed, that is torch.nn's in_proj_weight (3E, E).
"""
from pathlib import Path

import torch
from torch import Tensor

from locales import N_
from model.gpt.config import GPTConfig
from model.loading import checkpoint
from model.loading.checkpoint import CheckpointError, check_shape, out_of_memory
from model.messages import Later

_LAYER = {"ln_1": "norm1", "ln_2": "norm2", "attn.c_attn": "self_attn.in_proj", "attn.c_proj": "self_attn.out_proj",
          "mlp.c_fc": "linear1", "mlp.c_proj": "linear2"}  # inside h.{i} -> inside blocks.{i}
_TOP = {"wte": "wte", "wpe": "wpe", "ln_f": "ln_f"}
_CONV1D = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")  # weight (in, out): transposed
IGNORED = ("attn.bias", "attn.masked_bias")  # old checkpoints' causal-mask buffers, not weights
TIED = "lm_head.weight"  # the output; GPT-2 ties it to wte


def our_name(hf: str) -> tuple[str | None, bool]:
    """A Hugging Face GPT-2 tensor name -> (our name, transposed?); (None, False) for a name we do not read."""
    short = hf.removeprefix("transformer.")
    prefix, _, leaf = short.rpartition(".")
    if prefix in _TOP:
        return f"{_TOP[prefix]}.{leaf}", False
    if prefix.startswith("h."):
        i, _, inner = prefix.removeprefix("h.").partition(".")
        if inner in _LAYER and i.isdigit():
            name = f"blocks.{i}.{_LAYER[inner]}"
            if inner == "attn.c_attn":
                return f"{name}_{leaf}", leaf == "weight"
            return f"{name}.{leaf}", inner in _CONV1D and leaf == "weight"
    return None, False


def convert_shapes(shapes: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    """The first pass: our name -> the shape its tensor will have (TIED kept under its own name)."""
    out = {}
    for hf, shape in shapes.items():
        ours, transposed = our_name(hf)
        if ours is not None:
            out[ours] = tuple(reversed(shape)) if transposed and len(shape) == 2 else tuple(shape)
        elif hf == TIED:
            out[TIED] = tuple(shape)
    return out


def convert_state_dict(hf: dict[str, Tensor]) -> dict[str, Tensor]:
    """Hugging Face GPT-2 names and layout -> ours (TIED kept, to be checked against wte)."""
    out = {}
    for name, tensor in hf.items():
        ours, transposed = our_name(name)
        if ours is not None:
            out[ours] = tensor.T.contiguous() if transposed and tensor.dim() == 2 else tensor
        elif name == TIED:
            out[TIED] = tensor
    return out


def check_shapes(config: GPTConfig, state: dict):
    """Raises CheckpointError naming, by its Hugging Face name, the first tensor missing or of another shape."""
    shapes = config.parameter_shapes()
    for name, expected in shapes.items():
        check_shape(hf_name(name), state.get(name), expected)
    if TIED in state:  # the output, if the file has it: the token embedding's shape
        check_shape(TIED, state[TIED], shapes["wte.weight"])


def hf_name(ours: str) -> str:
    """Our parameter name -> GPT-2's, as a user would look for it in the checkpoint."""
    for hf_prefix, prefix in _TOP.items():
        if ours.startswith(prefix + "."):
            return f"transformer.{hf_prefix}.{ours.removeprefix(prefix + '.')}"
    parts = ours.split(".")
    inner = ".".join(parts[2:])
    for hf_inner, mine in _LAYER.items():
        if inner.startswith(mine):
            return f"transformer.h.{parts[1]}.{hf_inner}.{inner.removeprefix(mine).lstrip('._')}"
    return ours


def read_config(directory: Path) -> GPTConfig:
    return GPTConfig.from_hf(checkpoint.read_raw_config(directory))


def check_checkpoint(directory: Path) -> GPTConfig:
    """Would load accept this directory? Its config, and every tensor's shape from the weights file's header, with
    no tensor read and no module built. Raises CheckpointError."""
    config = read_config(directory)
    check_shapes(config, convert_shapes(checkpoint.weight_shapes(directory)))
    return config


def load(cls, directory):
    """cls(config) filled from a GPT-2 directory, in eval mode; raises CheckpointError."""
    directory = Path(directory)
    config = check_checkpoint(directory)
    try:
        state = convert_state_dict(checkpoint.read_weights(directory))
        check_shapes(config, state)  # again: the file may have changed since it was checked
        tied = state.pop(TIED, None)
        if tied is not None and not torch.equal(tied, state["wte.weight"]):
            raise CheckpointError(Later(N_("its output layer {name} differs from its token embedding: an untied "
                                           "output is not implemented here"), name=repr(TIED)))
        model = cls(config)
        model.load_state_dict({k: state[k] for k in model.state_dict()}, strict=True)
    except (RuntimeError, MemoryError) as e:  # never torch's own text
        raise CheckpointError(checkpoint.NOT_ENOUGH_MEMORY if out_of_memory(e) else Later(
            N_("its weights do not match its config ({error} while reading them)"), error=type(e).__name__)) from None
    return model.eval()
