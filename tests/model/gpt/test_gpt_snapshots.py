"""model.gpt.snapshots: the toy GPT's shipped training snapshots, one step's tensors at a time, as models; what its
metrics say of every evaluation; where the jump and the plateau are."""
import json

import numpy as np
import pytest
import torch

from model.gpt.snapshots import (
    JUMP,
    at_snapshot,
    jump_steps,
    plateau,
    snapshot_steps,
    snapshot_weights,
    training_record,
)
from model.gpt.toy import METRICS, SHIPPED, induction_head, load
from model.snapshots import SnapshotFile


def test_the_steps_are_those_of_the_file_and_of_the_metrics():
    metrics = json.loads((SHIPPED / METRICS).read_text())
    assert snapshot_steps() == tuple(metrics["snapshot_steps"]) and snapshot_steps()[0] == 0
    weights = snapshot_weights(snapshot_steps()[3])
    assert weights.keys() == load()[0].state_dict().keys() and all(w.dtype == torch.float16 for w in weights.values())
    with pytest.raises(KeyError, match="no snapshot at step 7"):
        snapshot_weights(7)


def test_from_random_to_the_shipped_model():
    first, last = at_snapshot(0), at_snapshot(snapshot_steps()[-1])
    shipped = load()[0]
    assert not first.training and not last.training and first.special_tokens == shipped.special_tokens
    for name, tensor in shipped.state_dict().items():  # the last snapshot is the shipped model, in float16
        torch.testing.assert_close(last.state_dict()[name], tensor, atol=2e-3, rtol=1e-3)
    assert not torch.equal(first.wte.weight, last.wte.weight)


def test_the_record_is_metrics_json():
    metrics = json.loads((SHIPPED / METRICS).read_text())
    record = training_record()
    assert record.loss == tuple(metrics["loss"]) and record.steps[-1] == metrics["steps"]
    assert record.induction.shape == (len(metrics["evaluations"]), 2, 4) and not record.induction.flags.writeable
    assert record.copy_accuracy[record.at(3300)] == pytest.approx(
        next(e["copy_accuracy"] for e in metrics["evaluations"] if e["step"] == 3300))
    assert record.jump == (metrics["jump"]["starts"], metrics["jump"]["ends"]) and record.jump_levels == JUMP
    assert record.induction_head() == induction_head() and record.probes == 500
    with pytest.raises(KeyError):
        record.at(7)


def test_the_jump_and_the_plateau():
    evaluations = [(0, 0.01), (50, 0.05), (100, 0.25), (150, 0.6), (200, 0.95)]
    assert jump_steps(evaluations) == (100, 200)
    assert jump_steps(evaluations[:3]) == (100, None) and jump_steps([]) == (None, None)
    loss = np.concatenate([np.linspace(4.0, 2.5, 300), np.full(2700, 2.5), np.linspace(2.5, 2.0, 500)])
    first, last = plateau(loss, 3000)
    assert 300 <= first <= 400 and last == 3000
    assert plateau(loss, None) is None and plateau(loss[:150], 150) is None  # no jump, or too early to tell
    flat, jump = training_record().plateau(), training_record().jump
    assert flat[1] == jump[0] and 100 < flat[0] < 1000


def test_a_snapshot_key_names_its_step(tmp_path):
    assert SnapshotFile(tmp_path, "", "/").step_of("3200/wte.weight") == 3200
    assert SnapshotFile(tmp_path, "step", ".").step_of("step125.generator.weight") == 125
    for bad in ("wte.weight", "x3/wte", "3200"):
        with pytest.raises(ValueError, match="not a snapshot key"):
            SnapshotFile(tmp_path, "", "/").step_of(bad)
