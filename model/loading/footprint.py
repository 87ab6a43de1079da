"""How many bytes a model holds, and how many it will hold, known before it is built (from the textbook's parameter
counts in model.stats): so a server shared by a class can make room first, or refuse a model that cannot fit."""
from pathlib import Path

from torch import nn

from model.stats import Shape, param_counts

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
FLOAT32 = 4


def module_bytes(module: nn.Module) -> int:
    """Bytes of the module's parameters and buffers (a tied or shared tensor counted once)."""
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
                for t in (*module.parameters(), *module.buffers())}
    return sum(storages.values())


def planned_bytes(shape: Shape, positions: int = 0) -> int:
    """Bytes of a float32 model of this shape: its parameters, and a sinusoidal table of `positions` rows (a
    buffer, not a parameter); module_bytes of the built model is at most this
    (tests/model/loading/test_footprint.py)."""
    return FLOAT32 * (sum(param_counts(shape).values()) + positions * shape.d_model)


def loading_bytes(directory: Path, module_size: int) -> int:
    """Peak bytes of loading a checkpoint: the module, and its weights read beside it before they are copied in."""
    weights = next((directory / f for f in WEIGHT_FILES if (directory / f).is_file()), None)
    return module_size + (weights.stat().st_size if weights is not None else module_size)


# A pass's peak (VmHWM) is these counts times SLACK plus OVERHEAD: allocator slack, softmax and masking temporaries.
# Measured at 512 tokens, 1-12 layers, 1-16 heads, d_model 32-768: encoder passes peaked at 0.53-0.95 of the
# estimate, encoder-decoder passes at 0.86-1.05; short texts cost a few MB either way (python -m bench.memory --passes).
SLACK, OVERHEAD = 1.2, 8 * 2**20


def stack_sizes(facts) -> tuple[int, int, int, int]:
    """(layers, heads, d_model, d_ff) of a model's stack, from its model.facts.ModelFacts."""
    return facts.layers, facts.heads, facts.d_model, facts.d_ff


def attention_block_bytes(heads: int, d_model: int, queries: int, keys: int) -> int:
    """One recorded attention block: scores, masked scores and probabilities (heads, L, S), Q, K, V and the context
    (L|S, E)."""
    return FLOAT32 * (2 * heads * queries * keys + 2 * queries * d_model + 2 * keys * d_model)


def feed_forward_bytes(d_ff: int, d_model: int, tokens: int) -> int:
    """One recorded feed-forward block and its residuals: hidden and activated (T, d_ff), input and output (T, E)."""
    return FLOAT32 * tokens * (2 * d_ff + 4 * d_model)


def encoder_pass_bytes(layers: int, heads: int, d_model: int, d_ff: int, tokens: int, maps: bool = True) -> int:
    """Peak bytes of Encoder.inputs_and_attentions on one sequence: every layer's probabilities (unless maps=False)
    and input, twice while they are stacked, beside the recorded working sets of two layers (the last one's, and
    the one running)."""
    kept = FLOAT32 * layers * (heads * tokens * tokens * maps + tokens * d_model)
    working = attention_block_bytes(heads, d_model, tokens, tokens) + feed_forward_bytes(d_ff, d_model, tokens)
    return int(SLACK * (2 * kept + 2 * working)) + OVERHEAD


def encoder_decoder_pass_bytes(layers: int, heads: int, d_model: int, d_ff: int, source: int, target: int) -> int:
    """Peak bytes of a whole recorded encoder-decoder pass: every block's trace is kept to the end, and the three
    maps (encoder self, decoder self, cross) are copied out of it."""
    blocks = layers * (attention_block_bytes(heads, d_model, source, source)
                       + attention_block_bytes(heads, d_model, target, target)
                       + attention_block_bytes(heads, d_model, target, source))
    feed_forward = layers * (feed_forward_bytes(d_ff, d_model, source) + feed_forward_bytes(d_ff, d_model, target))
    maps = FLOAT32 * layers * heads * (source * source + target * target + target * source)
    return int(SLACK * (blocks + feed_forward + maps)) + OVERHEAD
