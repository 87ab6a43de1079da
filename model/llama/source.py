"""The Llama family as the app lists and loads it: any Hugging Face Llama checkpoint directory (model_type "llama")
with its own tokenizer, named by the server's operator (ATTNVIZ_MODEL_DIRS) or in the local Hugging Face cache."""
from pathlib import Path

from model.family import Reads
from model.kinds import ModelKind
from model.llama.config import LlamaConfig
from model.llama.model import CAPABILITIES, Llama, check_checkpoint
from model.loading.checkpoint import read_raw_config, weights_file
from model.loading.loaded import LoadedModel
from model.loading.source_types import Family, ModelSource
from model.loading.tokenizers import read_tokenizer

MAPPED_SLACK = 1 << 20  # a float32 safetensors file is its tensors and a header of a few KB


def _layers_and_heads(directory: Path) -> tuple[int, int]:
    config = check_checkpoint(directory)
    return config.n_layer, config.n_head


def _load(source: ModelSource, options=None) -> LoadedModel:
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
    return footprint(source.path)


FAMILY = Family(ModelKind.LLAMA, LlamaConfig, CAPABILITIES, Reads.TOKENIZER, _load, _footprint, model_type="llama",
                check=_layers_and_heads)
