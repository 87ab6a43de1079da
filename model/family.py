"""What a model can do and how it reads text, said as data: a page asks these, never which family a model is.

A family (model.families) declares its capabilities once; its models carry them in their facts (model.facts) and
its sources in the list (model.loading.sources), with what a source adds of its own (a sentence-transformer's
pooled embedding, a model trained here with its training's snapshots, a model built from a visitor's settings).
"""
from enum import StrEnum


class Capability(StrEnum):
    ENCODER = "encoder"  # self-attention over every token of a text (no causal mask of its own)
    CAUSAL = "causal"  # its self-attention is causal, always: a token sees only itself and those before it
    CROSS_ATTENTION = "cross-attention"  # a decoder that attends to an encoder's output
    TRANSLATION = "translation"  # it translates the toy language's Chinese into its English
    GENERATION = "generation"  # it writes the next token: a language model
    CHAT = "chat"  # it answers a question in turns: its tokenizer has a chat template (model.causal.chat)
    SENTENCE_EMBEDDING = "sentence-embedding"  # trained so that its mean-pooled output embeds a sentence
    SNAPSHOTS = "snapshots"  # trained here: its training's snapshots ship with it, and a server can train it live
    CONFIGURABLE = "configurable"  # built from settings a visitor picks (a random model)


class Reads(StrEnum):
    """The text a model reads."""

    TOKENIZER = "tokenizer"  # any text, by its checkpoint's own tokenizer (English)
    TOY_ENGLISH = "toy-english"  # the toy language's English, a token per word
    CHINESE = "chinese"  # the toy language's Chinese, a token per character
