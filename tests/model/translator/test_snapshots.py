"""model.translator.snapshots: the shipped training snapshots, one step's tensors at a time, as translators."""
import json

import pytest
import torch
from safetensors import safe_open

from model.translator import SHIPPED, load_shipped
from model.translator.decoding import generate, words_of
from model.translator.snapshots import (
    METRICS,
    SNAPSHOTS,
    at_snapshot,
    snapshot_steps,
    snapshot_weights,
    training_record,
)


def translate(model, text: str) -> str:
    with torch.inference_mode():
        return words_of(model, generate(model, torch.tensor([model.source.ids(list(text))]))[0])


def test_the_steps_are_those_of_the_file_and_of_the_metrics():
    metrics = json.loads((SHIPPED / METRICS).read_text())
    with safe_open(SHIPPED / SNAPSHOTS, "pt") as f:
        in_file = sorted({int(key.split(".")[0][4:]) for key in f.keys()})
    assert snapshot_steps() == tuple(in_file) == tuple(s["step"] for s in metrics["snapshots"])
    assert snapshot_steps()[0] == 0 and snapshot_steps()[-1] == metrics["steps"]


def test_a_snapshot_holds_every_parameter_of_the_translator_and_nothing_else():
    shipped = load_shipped()
    weights = snapshot_weights(snapshot_steps()[3])
    assert weights.keys() == shipped.state_dict().keys()
    assert all(w.dtype == torch.float16 for w in weights.values())


def test_from_random_to_trained():
    first, last = at_snapshot(0), at_snapshot(snapshot_steps()[-1])
    assert not first.training and not last.training
    assert translate(last, "我有一只猫") == "I have a cat"
    assert translate(first, "我有一只猫") != "I have a cat"
    shipped = load_shipped()
    for name, tensor in shipped.state_dict().items():  # the last snapshot is the shipped model, in float16
        torch.testing.assert_close(last.state_dict()[name], tensor, atol=2e-3, rtol=1e-3)
    assert not torch.equal(first.generator.weight, last.generator.weight)


def test_a_step_without_a_snapshot_is_refused():
    with pytest.raises(KeyError, match="no snapshot at step 1"):
        at_snapshot(1)


def test_the_training_record_is_metrics_json():
    metrics = json.loads((SHIPPED / METRICS).read_text())
    record = training_record()
    assert list(record.loss) == metrics["loss"] and len(record.loss) == metrics["steps"]
    assert record.snapshot_scores == {s["step"]: s["exact_match"] for s in metrics["snapshots"]}
    assert record.snapshot_scores[0] == 0.0 and record.snapshot_scores[snapshot_steps()[-1]] >= 0.99
    assert record.test == metrics["test"]["exact_match"]
