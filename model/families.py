"""Every model family the app runs, registered once (as Hugging Face's auto classes): a family is a folder in
model/ that declares its model.loading.source_types.Family (its config, capabilities, how it reads text, the sources
it ships or builds, the checkpoints it reads, how a source is sized and loaded), plus one line here.

The model list (model.loading.sources), the pages and the runtime ask this registry and the capabilities
(model.family), never for a family by name."""
from model.gpt.source import FAMILY as GPT
from model.llama.source import FAMILY as LLAMA
from model.loading.bert_source import FAMILY as BERT
from model.loading.random_source import FAMILY as RANDOM_ENCODER
from model.loading.source_types import Family
from model.translator.source import FAMILY as TRANSLATOR

FAMILIES: tuple[Family, ...] = (BERT, RANDOM_ENCODER, TRANSLATOR, GPT, LLAMA)  # in the order the model list shows them


def family(kind: str) -> Family:
    return next(f for f in FAMILIES if f.kind == kind)


def reading(model_type: object) -> Family | None:
    """The family that reads Hugging Face checkpoints of this model_type, if any."""
    return next((f for f in FAMILIES if f.model_type is not None and f.model_type == model_type), None)


def checkpoint_types() -> tuple[str, ...]:
    """The model_types of the checkpoint directories read here."""
    return tuple(f.model_type for f in FAMILIES if f.model_type is not None)
