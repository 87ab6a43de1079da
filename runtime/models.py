"""Which models exist, and each loaded once per process into the memory budget, shared by every session."""
from dataclasses import dataclass

import streamlit as st

from locales import _
from model.family import Capability
from model.loading.footprint import module_bytes
from model.loading.sources import (
    DEFAULT_KEY,
    Loaded,
    LoadedSeq2Seq,
    ModelSource,
    RandomConfig,
    find_source,
    footprint,
    list_sources,
    load,
    load_encoder_decoder,
)
from runtime.budget import Kind
from runtime.memory import budget
from runtime.model_thread import Compiling, apply_torch_threads


@dataclass(frozen=True)
class Choice:
    """Which model: a source key, and the config when it is the random model."""

    key: str
    random: RandomConfig | None = None


@st.cache_resource(ttl=60, show_spinner=False)
def sources() -> list[ModelSource]:
    return list_sources()


@dataclass(frozen=True)
class Resident:
    """A loaded model and its compiled pass: one entry of the budget, so that they are dropped together."""

    loaded: Loaded | LoadedSeq2Seq
    compiling: "Compiling | None"

    @property
    def in_a_cycle(self) -> bool:
        """Whether it may sit in a reference cycle once dropped (runtime.budget's _trim): a traced model does."""
        return self.compiling is not None and self.compiling.started

    def settle(self) -> None:
        """Once dropped from the budget: no tracing of it left queued or running, so that it can be freed now."""
        if self.compiling is not None:
            self.compiling.settle()


def loaded_model(choice: Choice):
    """One model per (source, config) per process, shared by every session, never mutated. Room is made in the
    budget before it is built; the default model stays. Raises OverBudget, CheckpointError, ConfigError."""
    return resident(choice).loaded


def model_key(choice: Choice, encoder_decoder: bool = False) -> tuple:
    return "model", choice, encoder_decoder


def resident(choice: Choice, encoder_decoder: bool = False) -> Resident:
    """The budget's entry for a model: built (or read) once, with room made first. encoder_decoder: the random
    encoder-decoder of choice.random, for the encoder-decoder page. The translator is one entry for every page
    (model.translator.source.LoadedTranslator: the whole model, and its encoder)."""
    held = budget().get(model_key(choice, encoder_decoder), count_miss=False)
    if held is not None:  # a model in memory is not looked for again: listing every source reads files (1.5 ms)
        return held
    source = find_source(choice.key)
    if source is None:
        raise ValueError(f"unknown model {choice.key!r}")  # a key the picker never offers: logged, not shown
    if encoder_decoder and source.can(Capability.CROSS_ATTENTION):  # one model for every page: its own
        return resident(choice)

    def build() -> Resident:
        apply_torch_threads()
        with st.spinner(_("Building the random encoder-decoder…") if encoder_decoder else _("Loading the model…")):
            if encoder_decoder:
                return Resident(load_encoder_decoder(choice.random), None)
            loaded = load(source, choice.random)
        return Resident(loaded, Compiling(loaded.model))

    return budget().get_or_build(model_key(choice, encoder_decoder), build, kind=Kind.MODEL,
                                 estimate=footprint(source, choice.random, encoder_decoder),
                                 size=lambda r: module_bytes(r.loaded.modules),
                                 pinned=choice == Choice(DEFAULT_KEY) and not encoder_decoder,
                                 waiting=lambda: st.spinner(_("Loading the model…")), cheap=choice.random is not None)


def compiling(choice: Choice) -> Compiling:
    """The model's Compiling, dropped with the model."""
    return resident(choice).compiling


def loaded_translator():
    """The model that translates (the shipped translator, model.translator.source.LoadedTranslator), once per
    process, in the budget: one entry for the Translate page and the encoder-decoder page alike."""
    key = next((s.key for s in sources() if s.can(Capability.TRANSLATION)), None)
    if key is None:
        raise ValueError("no model translates on this server")
    return resident(Choice(key)).loaded
