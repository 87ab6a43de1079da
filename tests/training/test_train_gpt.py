"""The toy GPT's training command: a smoke run learns (its loss falls), writes what the app ships, and the same seed
trains the same weights; the data is what the recipe says."""
import json

import pytest
import torch
from safetensors.torch import load_file

from model.causal import probes as probing
from model.causal.ablation import probe_accuracy, sentence_loss
from model.gpt.model import BLOCKS
from model.gpt.toy import METRICS, SHIPPED, SNAPSHOTS, WORDS, load, showcase_head
from model.gpt.vocabulary import SEPARATOR_ID
from model.heads import parse_heads
from tests.training.conftest import learned, same_weights, smoke_run
from training import gpt_data, train_gpt
from training.progress import read_latest


def test_a_smoke_run_learns_and_writes_weights_words_metrics_and_snapshots(gpt_smoke):
    metrics = json.loads((gpt_smoke / METRICS).read_text())
    learned(metrics, 40, 5, 0.95)  # (half its contexts are random words)
    evaluations = metrics["evaluations"]
    assert [e["step"] for e in evaluations] == [0, 10, 20, 30, 40]
    assert evaluations[-1]["held_out_loss"] < evaluations[0]["held_out_loss"]
    for e in evaluations:  # every head's scores at every evaluation
        assert len(e["induction"]) == len(e["previous_token"]) == 2 and len(e["induction"][0]) == 4
        assert 0 <= e["copy_accuracy"] <= 1
    model, vocabulary = load(gpt_smoke)
    assert vocabulary is not None and len(vocabulary) == 73 and (gpt_smoke / WORDS).is_file()
    snapshots = load_file(gpt_smoke / SNAPSHOTS)
    steps = sorted({int(k.split("/")[0]) for k in snapshots})
    assert steps == metrics["snapshot_steps"] and steps[0] == 0 and steps[-1] == 40
    assert all(t.dtype == torch.float16 for t in snapshots.values())
    last = {k.split("/", 1)[1]: v for k, v in snapshots.items() if k.startswith("40/")}
    assert last.keys() == model.state_dict().keys()
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(last[name].float(), tensor, atol=2e-3, rtol=1e-3)
    ablated = {a["heads"] for a in metrics["ablation"]}
    assert {"none", "0.0", "1.3", "1.0+1.1", "0.2+0.3"} <= ablated and len(ablated) == 1 + 8 + 12


def test_the_same_seed_trains_the_same_weights(gpt_smoke, tmp_path):
    smoke_run(train_gpt, tmp_path, "--no-snapshots")
    same_weights(tmp_path, gpt_smoke)


def test_contexts_are_sentences_from_their_start_or_a_sequence_written_twice():
    vocabulary = gpt_data.vocabulary()
    data = gpt_data.Contexts(vocabulary, 0, repeat_share=0.5, repeat_range=(5, 5))
    batch = data.batch(200)
    assert batch.shape == (200, 65)
    repeats = [row for row in batch.tolist() if row[:5] == row[5:10]]
    sentences = [row for row in batch.tolist() if SEPARATOR_ID in row]
    assert 60 < len(repeats) < 140 and len(repeats) + len(sentences) == 200
    held_out = {tuple(s) for s in gpt_data.sentence_ids(vocabulary, 300, 1, held_out=True)}
    for row in sentences:
        first = tuple(row[:row.index(SEPARATOR_ID)])
        assert first not in held_out  # training never reads a held-out sentence
    assert gpt_data.Contexts(vocabulary, 0, context=16).batch(4).shape == (4, 17)


def test_snapshots_are_dense_inside_the_jump():
    evaluations = [{"step": s, "copy_accuracy": 0.02 if s < 500 else min(1.0, (s - 450) / 300)}
                   for s in range(0, 2001, 25)]
    steps = train_gpt.snapshot_steps(evaluations, 16)
    inside = [s for s in steps if 500 <= s <= 725]
    assert len(steps) <= 16 and steps[0] == 0 and steps[-1] == 2000 and len(inside) >= 6
    assert any(s < 500 for s in steps[1:]) and any(s > 725 for s in steps[:-1])


def test_the_shipped_toy_gpt_copies_with_an_induction_head_and_a_previous_token_head():
    """The goals of the shipped run, measured again from its weights on the held-out probes and sentences."""
    model, vocabulary = load(SHIPPED)
    metrics = json.loads((SHIPPED / METRICS).read_text())
    probes = probing.repeat_probes(len(vocabulary.words), probing.PROBES, probing.PROBE_SEED)
    with torch.inference_mode():
        out = model(probes)
    assert probing.copy_accuracy(out.logits, probes) >= 0.95
    assert float(probing.induction_scores(out.attentions)[1:].max()) >= 0.8
    # the head the pages open at copies too
    assert float(probing.induction_scores(out.attentions)[showcase_head()]) >= 0.8
    assert float(probing.previous_token_scores(out.attentions)[0].max()) >= 0.4
    rows = gpt_data.sentence_ids(vocabulary, train_gpt.HELD_OUT, train_gpt.HELD_OUT_SEED, held_out=True)
    whole = sentence_loss(model, rows)
    assert whole == pytest.approx(metrics["evaluations"][-1]["held_out_loss"], abs=1e-3)
    assert metrics["train_seconds"] <= 120 and metrics["threads"] == 2


def test_the_shipped_toy_gpt_s_circuit_is_proven_by_switching_heads_off():
    """Point 4 of the goals, measured again: a set of at most two layer-1 heads whose loss breaks copying (at most 30 %)
    while the sentences lose at most 0.15 nats, and previous-token head(s) of layer 0 whose loss breaks it too."""
    model, vocabulary = load(SHIPPED)
    metrics = json.loads((SHIPPED / METRICS).read_text())
    probes = probing.repeat_probes(len(vocabulary.words), probing.PROBES, probing.PROBE_SEED)
    rows = gpt_data.sentence_ids(vocabulary, train_gpt.HELD_OUT, train_gpt.HELD_OUT_SEED, held_out=True)
    whole = sentence_loss(model, rows)
    for layer, found in metrics["circuit"].items():
        heads = parse_heads(found["heads"].replace("+", ","), BLOCKS)
        assert 1 <= len(heads) <= 2 and {h.layer for h in heads} == {int(layer)}
        accuracy = probe_accuracy(model, probes, heads)
        assert accuracy == pytest.approx(found["copy_accuracy"], abs=1e-4) and accuracy <= 0.30
        assert sentence_loss(model, rows, heads) == pytest.approx(found["loss"], abs=1e-3)
    assert sorted(metrics["circuit"]) == ["0", "1"]
    assert metrics["circuit"]["1"]["loss"] - whole <= 0.15


def test_the_shipped_snapshots_show_the_plateau_and_the_jump():
    metrics = json.loads((SHIPPED / METRICS).read_text())
    steps = metrics["snapshot_steps"]
    start, end = metrics["jump"]["starts"], metrics["jump"]["ends"]
    assert len(steps) >= 12 and len([s for s in steps if start <= s <= end]) >= 3
    snapshots = load_file(SHIPPED / SNAPSHOTS)
    assert sorted({int(k.split("/")[0]) for k in snapshots}) == steps
    assert sum(p.stat().st_size for p in SHIPPED.iterdir()) < 5 * 2 ** 20


def test_the_docs_figures_come_from_the_shipped_metrics_file():
    metrics = json.loads((SHIPPED / METRICS).read_text())
    docs = (SHIPPED.parents[2] / "docs" / "gpt.md").read_text(encoding="utf-8")
    assert train_gpt.readme_figures(metrics) in docs


def test_a_watched_run_writes_its_progress_and_trains_the_same_weights(gpt_smoke, tmp_path):
    out = tmp_path / "watched"
    smoke_run(train_gpt, out, "--no-snapshots", "--progress", str(tmp_path / "progress.jsonl"), "--weights-every", "20")
    lines = [json.loads(line) for line in (tmp_path / "progress.jsonl").read_text().splitlines()]
    kinds = [line["kind"] for line in lines]
    assert kinds[0] == "start" and kinds[-1] == "done" and kinds.count("step") == 40
    assert [line["step"] for line in lines if line["kind"] == "weights"] == [0, 20, 40]  # the random model first
    evaluations = [line for line in lines if line["kind"] == "evaluation"]
    assert [e["step"] for e in evaluations] == [0, 10, 20, 30, 40]
    metrics = json.loads((out / METRICS).read_text())["evaluations"]
    assert [(e["exact_match"], e["induction"], e["previous_token"]) for e in evaluations] == [
        (m["copy_accuracy"], m["induction"], m["previous_token"]) for m in metrics]  # every head's scores, streamed
    same_weights(out, gpt_smoke)


def test_a_watched_run_writes_its_trained_weights_last_whatever_its_weights_every(tmp_path):
    out = tmp_path / "watched"
    smoke_run(train_gpt, out, "--no-snapshots", "--progress", str(tmp_path / "progress.jsonl"), "--weights-every", "15")
    lines = [json.loads(line) for line in (tmp_path / "progress.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines if line["kind"] == "weights"] == [0, 15, 30, 40]
    step, weights = read_latest(tmp_path)
    model, _ = load(out)
    assert step == 40 and all(torch.equal(weights[k], v) for k, v in model.state_dict().items())
