"""The shipped translator as a model source (model.translator.source): listed, sized before it is loaded, its
encoder the translator's own (shared, not copied) and recorded like every encoder, a typed target read as its
vocabulary spells it."""
import shutil

import pytest
import torch

from model.compiled import compiled_pass
from model.family import Capability, Reads
from model.kinds import ModelKind, SourceKind
from model.loading.footprint import module_bytes
from model.loading.sources import find_source, footprint, list_sources, load
from model.translator import SHIPPED, WEIGHTS
from model.translator.source import TRANSLATOR_KEY, check_files


@pytest.fixture(scope="module")
def loaded():
    return load(find_source(TRANSLATOR_KEY))


def test_it_is_listed_available_with_where_it_comes_from():
    (source,) = [s for s in list_sources() if s.key == TRANSLATOR_KEY]
    assert source.kind == SourceKind.SHIPPED and source.family == ModelKind.TRANSLATOR and source.available
    assert "trained by this project" in source.reason and source.reads == Reads.CHINESE
    assert source.can(Capability.TRANSLATION) and source.can(Capability.SNAPSHOTS) and source.name == "translator"


def test_without_its_files_it_is_listed_unavailable_with_why_and_no_path(tmp_path):
    copy = tmp_path / "translator"
    shutil.copytree(SHIPPED, copy)
    (copy / WEIGHTS).unlink()
    ok, why = check_files(copy)
    assert not ok and "model.safetensors" in why and "training.train" in why and str(tmp_path) not in why
    (copy / WEIGHTS).write_bytes(b"not safetensors")
    ok, why = check_files(copy)
    assert not ok and "could not be read" in why and str(tmp_path) not in why


def test_its_footprint_is_known_before_loading_and_covers_what_loading_holds(loaded):
    size = module_bytes(loaded.translator)
    weights = (SHIPPED / WEIGHTS).stat().st_size
    assert footprint(find_source(TRANSLATOR_KEY)) == size + weights  # the module, and its file read beside it
    assert module_bytes(loaded.model) < size  # the encoder is part of it, not a copy


def test_its_encoder_is_the_translators_own_modules(loaded):
    encoder_params = {p.data_ptr() for p in loaded.model.parameters()}
    translator_params = {p.data_ptr() for p in loaded.translator.parameters()}
    assert encoder_params < translator_params
    assert loaded.model.encoder is loaded.translator.transformer.encoder
    facts = loaded.facts
    assert (facts.kind, facts.layers, facts.decoder_layers, facts.vocab_size) == (
        "encoder", 2, 0, len(loaded.translator.source))
    assert facts.special_tokens.pad == ("<pad>", 0)


def test_its_encoder_records_what_the_translator_records(loaded):
    encoded = loaded.encode("我有一只猫")
    assert encoded.tokens == ("我", "有", "一", "只", "猫") and not encoded.truncated and encoded.unknown == ()
    with torch.inference_mode():
        _, trace = loaded.translator(encoded.input_ids, torch.tensor([[1, 4, 13]]), record=True)
        hidden, attentions, mask = loaded.model.inputs_and_attentions(encoded.input_ids)
        output = loaded.model(encoded.input_ids).last_hidden_state
    for i, layer in enumerate(trace.encoder.layers):
        assert torch.equal(attentions[i], layer.self_attn.probs) and torch.equal(hidden[i], layer.input)
    assert torch.equal(output, trace.encoder.output)  # after the encoder's final norm, what the decoder reads
    assert mask is None


def test_padding_is_masked_as_the_translator_masks_it(loaded):
    ids = torch.tensor([[8, 26, 34, 44, 48, 0, 0]])
    with torch.inference_mode():
        _, attentions, _ = loaded.model.inputs_and_attentions(ids, torch.tensor([[1] * 5 + [0] * 2]))
        _, trace = loaded.translator(ids, torch.tensor([[1]]), record=True)
    assert torch.all(attentions[:, :, :, :, 5:] == 0)
    for i, layer in enumerate(trace.encoder.layers):
        torch.testing.assert_close(attentions[i], layer.self_attn.probs)


def test_its_compiled_pass_equals_the_eager_one(loaded):
    compiled = compiled_pass(loaded.model, loaded.model.max_positions)
    for text in ("我", "我有一只猫", "他们昨天在公园看见了两只鸟" * 5):
        ids = loaded.encode(text).input_ids
        with torch.inference_mode():
            hidden, attentions, _ = loaded.model.inputs_and_attentions(ids)
        got_hidden, got_attentions = compiled(ids)
        assert torch.equal(got_hidden, hidden[:, 0]) and torch.equal(got_attentions, attentions[:, 0])


def test_a_long_text_is_cut_and_unknown_characters_are_named(loaded):
    encoded = loaded.encode("我有一只狮子" * 20 + "。")  # a final 。 is dropped, as the language writes it
    assert encoded.truncated and encoded.total_tokens == 20 * 6 and encoded.input_ids.shape == (1, 64)
    assert encoded.unknown == ("狮",)


def test_a_typed_target_is_spelled_as_its_vocabulary_spells_it(loaded):
    target = loaded.target("i Have a CAT?  zebras")
    assert target.words == ("I", "have", "a", "cat", "?", "zebras")
    assert target.unknown == ("zebras",) and target.ids[-1] == 3  # <unk>
    assert target.ids[:5] == tuple(loaded.translator.target.ids(["I", "have", "a", "cat", "?"]))


def test_loading_it_twice_gives_equal_weights_and_a_pass_changes_none(loaded):
    before = {k: v.clone() for k, v in loaded.translator.state_dict().items()}
    with torch.inference_mode():
        loaded.model.inputs_and_attentions(loaded.encode("我有一只猫").input_ids)
    again = load(find_source(TRANSLATOR_KEY)).translator.state_dict()
    for name, value in loaded.translator.state_dict().items():
        assert torch.equal(value, before[name]) and torch.equal(value, again[name])
