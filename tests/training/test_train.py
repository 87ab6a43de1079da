"""One training command: a tiny smoke run learns (its loss falls) and writes what the app ships; the shipped
weights translate sentences they never saw."""
import json

import torch
from safetensors.torch import load_file

from model.translator import SHIPPED, Translator, load_shipped
from model.translator.decoding import batch_of, generate, words_of
from model.translator.vocabulary import same_translation
from tests.training.conftest import learned, same_weights, smoke_run
from training import toy_language, train


def test_a_smoke_run_learns_and_writes_weights_vocabularies_metrics_and_snapshots(translator_smoke):
    metrics = json.loads((translator_smoke / train.METRICS).read_text())
    learned(metrics, 60, 10, 0.85)
    assert 0 <= metrics["test"]["exact_match"] <= 1 and metrics["test"]["sentences"] == 100
    assert sum(k["total"] for k in metrics["test"]["errors_by_kind"].values()) == 100
    model = Translator.from_directory(translator_smoke)
    assert model.config.d_model == 32
    snapshots = load_file(translator_smoke / train.SNAPSHOTS)
    steps = sorted({int(k.split(".")[0].removeprefix("step")) for k in snapshots})
    assert steps == [s["step"] for s in metrics["snapshots"]] == [0, 25, 50, 60]
    assert all(t.dtype == torch.float16 for t in snapshots.values())
    last = {k.split(".", 1)[1]: v for k, v in snapshots.items() if k.startswith("step60.")}
    first = {k.split(".", 1)[1]: v for k, v in snapshots.items() if k.startswith("step0.")}
    assert last.keys() == model.state_dict().keys()
    trained = Translator.from_directory(translator_smoke, weights=last)
    untrained = Translator.from_directory(translator_smoke, weights=first)
    for name, tensor in model.state_dict().items():  # the last snapshot is the written model, in float16
        torch.testing.assert_close(trained.state_dict()[name], tensor, atol=2e-3, rtol=1e-3)
    assert not torch.equal(untrained.generator.weight, trained.generator.weight)


def test_the_same_seed_trains_the_same_model(translator_smoke, tmp_path):
    smoke_run(train, tmp_path)
    same_weights(tmp_path, translator_smoke)


def test_the_shipped_weights_translate_held_out_sentences_they_never_saw():
    """At least 99.5 % exact on 600 held-out sentences drawn with a seed that neither training nor its test used."""
    metrics = json.loads((SHIPPED / train.METRICS).read_text())
    assert 2026 not in (metrics["seed"], metrics["seed"] + 1, metrics["test"]["seed"])
    sentences = toy_language.sample(600, seed=2026, held_out=True)
    model = load_shipped()
    with torch.inference_mode():
        out = generate(model, batch_of(model, [model.source.ids(list(s.chinese())) for s in sentences]))
    right = sum(same_translation(words_of(model, ids), s.english()) for s, ids in zip(sentences, out))
    assert right / len(sentences) >= 0.995
    assert metrics["test"]["sentences"] >= 2000 and metrics["test"]["exact_match"] >= 0.995


def test_everything_shipped_stays_under_10_mb():
    assert sum(p.stat().st_size for p in SHIPPED.iterdir()) < 10 * 2 ** 20


def test_the_readmes_figures_come_from_the_shipped_metrics_file():
    metrics = json.loads((SHIPPED / train.METRICS).read_text())
    readme = (SHIPPED.parents[2] / "docs" / "translator.md").read_text(encoding="utf-8")
    assert train.readme_figures(metrics) in readme
