"""Train the built-in translator from a seed, and write everything the app ships of it.

    python -m training.train                      # the shipped model: model/weights/translator
    python -m training.train --out /tmp/t --smoke  # a tiny run (CI): a few steps, a small model
    python -m training.train --out /tmp/t --progress /tmp/t/progress.jsonl --weights-every 10 --no-snapshots \
        --threads 1 --nice 10                      # the Translate page's live training (runtime/live_training.py)

Fresh batches are drawn from the language's training split at every step (training.toy_language), negations (0.7 %
of the language) made 10 % of them; the held-out split is never trained on. Every --eval-every steps the model
decodes --val held-out sentences greedily (statements, questions and negations alike); training stops at the first
evaluation with every one of them right (or at --steps). Then the test: --test held-out sentences drawn uniformly
from the language with another seed.

Writes to --out: model.safetensors, config.json, source_vocab.json, target_vocab.json, metrics.json (steps, wall
time, loss curve, exact match, errors by kind of sentence) and snapshots.safetensors (float16 weights at a dozen
steps from random to trained, their exact match in metrics.json). With --progress, also JSON lines as it goes and
the latest weights every --weights-every steps (training/progress.py); that changes nothing of what is trained.
"""
import math
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from model.translator import SHIPPED, Translator, TranslatorConfig
from model.translator.decoding import batch_of, generate, words_of
from model.translator.snapshots import METRICS, SNAPSHOT_SENTENCES, SNAPSHOTS
from model.translator.vocabulary import BOS_ID, EOS_ID, PAD_ID, Vocabulary, english_tokens, same_translation
from training import loop, toy_language
from training.progress import Progress

SNAPSHOT_STEPS = (0, 25, 50, 75, 100, 125, 150, 175, 200, 250, 300, 400)  # and the last step: where it learns
TRAINING_FORMS = {toy_language.STATEMENT: 0.45, toy_language.QUESTION: 0.45, toy_language.NEGATION: 0.1}
VALIDATION_FORMS = dict.fromkeys(toy_language.FORMS, 1.0)  # stop only when every form is learned


def vocabularies() -> tuple[Vocabulary, Vocabulary]:
    return Vocabulary.of(toy_language.chinese_vocabulary()), Vocabulary.of(toy_language.english_vocabulary())


def batch(model: Translator, sentences) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sentences -> source ids (B, S), decoder input <bos> w1..wn (B, T), target w1..wn <eos> (B, T); <pad>-filled."""
    src = batch_of(model, [model.source.ids(list(s.chinese())) for s in sentences])
    tgt = batch_of(model, [[BOS_ID, *model.target.ids(english_tokens(s.english())), EOS_ID] for s in sentences])
    return src, tgt[:, :-1], tgt[:, 1:]


def exact_match(model: Translator, sentences, batch_size: int = 500) -> tuple[float, dict[str, list[int]]]:
    """Share of sentences translated exactly (greedy; the checker of docs/toy-language.md), and per kind of sentence
    [wrong, total]."""
    model.eval()
    by_kind: dict[str, list[int]] = {}
    right = 0
    with torch.inference_mode():
        for start in range(0, len(sentences), batch_size):
            chunk = sentences[start:start + batch_size]
            src, _, _ = batch(model, chunk)
            for s, ids in zip(chunk, generate(model, src)):
                ok = same_translation(words_of(model, ids), s.english())
                right += ok
                counts = by_kind.setdefault(s.kind, [0, 0])
                counts[0] += not ok
                counts[1] += 1
    model.train()
    return right / len(sentences), dict(sorted(by_kind.items()))


def learning_rate(step: int, peak: float, warmup: int) -> float:
    """Linear warm-up to peak, then inverse square root decay."""
    return peak * min((step + 1) / warmup, math.sqrt(warmup / (step + 1)))


def train(args, log: Progress | None = None) -> dict:
    """Train from args.seed; log, if given, hears of every step, evaluation and the weights as they go."""
    loop.seeded(args)
    source, target = vocabularies()
    config = TranslatorConfig(d_model=args.d_model, nhead=args.heads, num_layers=args.layers, d_ff=args.d_ff)
    model = Translator(config, source, target).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
    validation = toy_language.sample(args.val, seed=args.seed + 1, held_out=True, forms=VALIDATION_FORMS)
    # one seed, drawn first
    batches = toy_language.sample(args.batch * args.steps, seed=args.seed, forms=TRAINING_FORMS)
    snapshots, snapshot_scores, losses, evaluations = {}, {}, [], []
    step = 0
    started = loop.begin(args, log, model, vars(config))

    def snapshot(at: int) -> None:
        for name, tensor in model.state_dict().items():
            snapshots[f"step{at}.{name}"] = tensor.detach().to(torch.float16).contiguous()
        snapshot_scores[at] = exact_match(model, validation[:SNAPSHOT_SENTENCES])[0]

    def loss_of() -> torch.Tensor:
        src, tgt_in, tgt_out = batch(model, batches[step * args.batch:(step + 1) * args.batch])
        logits = model(src, tgt_in)  # (B, T, V)
        return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID,
                               label_smoothing=args.label_smoothing)

    while step < args.steps:
        if step in SNAPSHOT_STEPS and args.snapshots:
            snapshot(step)
        loss = loop.descend(args, log, model, optimizer, step + 1, learning_rate(step, args.lr, args.warmup), loss_of)
        losses.append(round(loss, 4))
        step += 1
        if step % args.eval_every == 0 or step == args.steps:
            score = exact_match(model, validation)[0]
            evaluations.append({"step": step, "exact_match": score, "seconds": round(time.perf_counter() - started, 1)})
            loop.bar(step, args.steps, loss, f"held-out exact match {score:6.1%}", started)
            if log is not None:
                log.evaluation(step, score, evaluations[-1]["seconds"])
            if score == 1.0:
                break
    seconds = time.perf_counter() - started
    if args.snapshots:
        snapshot(step)
    loop.trained(log, model, step)  # while the test runs
    test = toy_language.sample(args.test, seed=args.test_seed, held_out=True)
    score, by_kind = exact_match(model, test)
    print(file=sys.stderr)
    return {"model": model, "snapshots": snapshots, "metrics": {
        "seed": args.seed, "steps": step, "train_seconds": round(seconds, 1), "threads": args.threads,
        "batch": args.batch, "learning_rate": args.lr, "warmup": args.warmup, "label_smoothing": args.label_smoothing,
        "parameters": sum(p.numel() for p in model.parameters()), "config": vars(config),
        "language_size": toy_language.SIZE, "held_out_percent": toy_language.HELD_OUT_PERCENT,
        "loss": losses, "evaluations": evaluations,
        "snapshots": [{"step": s, "exact_match": snapshot_scores[s], "loss": losses[s - 1] if s else None}
                      for s in sorted(snapshot_scores)],
        "test": {"sentences": args.test, "seed": args.test_seed, "exact_match": score,
                 "errors_by_kind": {k: {"wrong": w, "total": n} for k, (w, n) in by_kind.items()}}}}


def readme_figures(m: dict) -> str:
    """The README's lines about a training run, from its metrics (a test checks that the README holds them)."""
    test, reached = m["test"], next((e for e in m["evaluations"] if e["exact_match"] >= 0.995), None)
    wrong = ", ".join(f"{k} {v['wrong']}/{v['total']}" for k, v in test["errors_by_kind"].items() if v["wrong"])
    lines = [f"- seed {m['seed']}: {m['steps']} steps of {m['batch']} sentences in {m['train_seconds']} s on "
             f"{m['threads']} CPU threads (evaluations and snapshots included)",
             f"- held-out test: {test['exact_match']:.2%} exact on {test['sentences']:,} sentences drawn with seed "
             f"{test['seed']} (wrong by kind: {wrong or 'none'})"]
    if reached:
        lines.insert(1, f"- validation first at 99.5 % or more after {reached['step']} steps, {reached['seconds']} s")
    return "\n".join(lines)


def write(result: dict, out: Path) -> None:
    loop.write(out, result["model"].eval().save, result["snapshots"], result["metrics"], SNAPSHOTS, METRICS)


def parse(argv=None):
    p = loop.options("python -m training.train", __doc__, SHIPPED, steps=3000, batch=64, lr=1e-3, warmup=100,
                     d_model=TranslatorConfig.d_model, heads=TranslatorConfig.nhead,
                     layers=TranslatorConfig.num_layers, eval_every=100, smoke="a tiny model for 60 steps")
    p.add_argument("--test-seed", type=int, default=12345, help="seed of the test sentences (not training's)")
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--d-ff", type=int, default=TranslatorConfig.d_ff)
    p.add_argument("--val", type=int, default=500, help="held-out sentences checked every --eval-every steps")
    p.add_argument("--test", type=int, default=2000, help="held-out sentences of the final test")
    args = p.parse_args(argv)
    if args.smoke:
        args.steps, args.warmup, args.d_model, args.d_ff = 60, 10, 32, 64
        args.val, args.test, args.eval_every = 50, 100, 30
    return args


def main(argv=None) -> int:
    args, log, result = loop.run(argv, parse, train, write)
    m = result["metrics"]
    test = m["test"]
    return loop.finish(args, log, m, test["exact_match"], f"held-out exact match {test['exact_match']:.2%} on "
                       f"{test['sentences']} sentences (seed {test['seed']})", "the README", readme_figures(m))


if __name__ == "__main__":
    sys.exit(main())
