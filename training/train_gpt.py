"""Train the toy GPT from a seed, and write everything the app ships of it.

    python -m training.train_gpt                        # the shipped model: model/weights/gpt
    python -m training.train_gpt --out /tmp/g --smoke   # a tiny run (CI): a few steps, a small model

A GPT-2-architecture decoder (model.gpt: 2 layers x 4 heads, d_model 64, 64 positions) reads 64-word contexts of toy
English (training.gpt_data): sentences of the training split separated by `.`, a tenth of them a sentence written
earlier in the same context, and, in 40 % of the contexts, random sequences of 8 to 16 words each written twice, so
that copying from context pays. Batches of 32 (more steps in the time), Adam at 3e-3 after a 50-step warm-up, falling
linearly to a tenth from step 3,800 to the last, 5,000: the same seed and threads train the same weights.

Every --eval-every steps: the loss on held-out toy sentences, each read alone (words 2..n); the copy accuracy on
held-out repeat probes; every head's induction and previous-token score (model.causal.probes). After training, every
head and every pair of heads of one layer switched off (model.causal.ablation).

Writes to --out: config.json + model.safetensors (a Hugging Face GPT-2 directory), words.json, metrics.json, and
snapshots.safetensors: float16 weights at steps chosen from the evaluations, before, inside and after the jump.
"""
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from model.causal.ablation import ablations, circuit, sentence_loss
from model.causal.probes import (
    PROBE_SEED,
    PROBES,
    copy_accuracy,
    induction_scores,
    previous_token_scores,
    repeat_probes,
)
from model.gpt import GPT, GPTConfig
from model.gpt.snapshots import JUMP, jump_steps
from model.gpt.toy import METRICS, SHIPPED, SNAPSHOTS, save
from training import gpt_data, loop
from training.progress import Progress

HELD_OUT, HELD_OUT_SEED = 2000, 99  # single toy sentences of the held-out split
SNAPSHOT_COUNT = 16


def evaluate(model: GPT, probes: torch.Tensor, sentences) -> dict:
    model.eval()
    with torch.inference_mode():
        out = model(probes)
        result = {"copy_accuracy": round(copy_accuracy(out.logits, probes), 4),
                  "induction": torch.round(induction_scores(out.attentions), decimals=4).tolist(),
                  "previous_token": torch.round(previous_token_scores(out.attentions), decimals=4).tolist(),
                  "held_out_loss": round(sentence_loss(model, sentences), 4)}
    model.train()
    return result


def snapshot_steps(evaluations: list[dict], count: int = SNAPSHOT_COUNT) -> list[int]:
    """Steps to keep: the first and the last, a few on the plateau, at least half of them inside the jump (from the
    first evaluation at JUMP[0] copy accuracy to the first at JUMP[1]), one after."""
    steps = [e["step"] for e in evaluations]
    start = next((e["step"] for e in evaluations if e["copy_accuracy"] >= JUMP[0]), steps[-1])
    end = next((e["step"] for e in evaluations if e["copy_accuracy"] >= JUMP[1]), steps[-1])
    before = [s for s in steps if s < start]
    inside = [s for s in steps if start <= s <= end]
    after = [s for s in steps if s > end]

    def spread(values, n):
        if n <= 0 or not values:
            return []
        if len(values) <= n:
            return values
        return [values[round(i * (len(values) - 1) / max(n - 1, 1))] for i in range(n)]

    chosen = {steps[0], steps[-1]}
    chosen |= set(spread(inside, count // 2))
    chosen |= set(spread(before, (count - len(chosen)) * 2 // 3))
    chosen |= set(spread(after, count - len(chosen)))
    return sorted(chosen)[:count] if len(chosen) <= count else sorted(chosen)


def learning_rate(step: int, args) -> float:
    """Linear warm-up over --warmup steps, then --lr until --decay-from, then down linearly to a tenth at the end."""
    rate = args.lr * min(1.0, step / args.warmup)
    if args.decay_from and step > args.decay_from:
        rate *= 1 - 0.9 * (step - args.decay_from) / max(1, args.steps - args.decay_from)
    return rate


def train(args, log: Progress | None = None) -> dict:
    loop.seeded(args)
    vocabulary = gpt_data.vocabulary()
    config = GPTConfig(len(vocabulary), args.context, args.d_model, args.layers, args.heads, dropout=0.0)
    model = GPT(config).train()
    data = gpt_data.Contexts(vocabulary, args.seed, args.repeat_share, args.sentence_repeat, args.context,
                             (args.repeat_min, args.repeat_max))
    probes = repeat_probes(len(vocabulary.words), PROBES, PROBE_SEED)
    sentences = gpt_data.sentence_ids(vocabulary, args.held_out, HELD_OUT_SEED, held_out=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    kept, losses, evaluations = {}, [], []
    started = loop.begin(args, log, model, {"model": vars(config)})

    def evaluation(step: int):
        e = {"step": step, "seconds": round(time.perf_counter() - started, 1), **evaluate(model, probes, sentences)}
        evaluations.append(e)
        if args.snapshots:
            kept[step] = {k: v.detach().to(torch.float16).clone() for k, v in model.state_dict().items()}
        if log is not None:
            log.evaluation(step, e["copy_accuracy"], e["seconds"], induction=e["induction"],
                           previous_token=e["previous_token"])
        best = max(max(row) for row in e["induction"][1:] or e["induction"])
        loop.bar(step, args.steps, losses[-1] if losses else float("nan"), f"copy {e['copy_accuracy']:6.1%}  "
                 f"induction {best:.2f}  held-out {e['held_out_loss']:.3f}", started)

    def loss_of() -> torch.Tensor:
        batch = data.batch(args.batch)  # (B, T + 1)
        logits = model(batch[:, :-1]).logits  # (B, T, V)
        return F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())

    evaluation(0)
    for step in range(1, args.steps + 1):
        losses.append(round(loop.descend(args, log, model, optimizer, step, learning_rate(step, args), loss_of), 4))
        if step % args.eval_every == 0 or step == args.steps:
            evaluation(step)
    seconds = time.perf_counter() - started
    print(file=sys.stderr)
    loop.trained(log, model, args.steps)  # while the heads are switched off one by one
    model.eval()
    found = ablations(model, probes, sentences)
    steps = snapshot_steps(evaluations) if args.snapshots else []
    snapshots = {f"{s}/{name}": t for s in steps for name, t in kept[s].items()}
    jump = jump_steps([(e["step"], e["copy_accuracy"]) for e in evaluations])
    return {"model": model, "vocabulary": vocabulary, "snapshots": snapshots, "metrics": {
        "seed": args.seed, "steps": args.steps, "train_seconds": round(seconds, 1), "threads": args.threads,
        "batch": args.batch, "context": args.context, "learning_rate": args.lr, "warmup": args.warmup,
        "decay_from": args.decay_from,
        "recipe": {"repeat_share": args.repeat_share, "repeat_words": [args.repeat_min, args.repeat_max],
                   "sentence_repeat": args.sentence_repeat},
        "parameters": sum(p.numel() for p in model.parameters()), "config": vars(config),
        "probes": {"count": PROBES, "seed": PROBE_SEED, "length": probes.size(1) // 2},
        "held_out": {"sentences": args.held_out, "seed": HELD_OUT_SEED},
        "jump": {"starts": jump[0], "ends": jump[1], "copy_accuracy": list(JUMP)},
        "loss": losses, "evaluations": evaluations, "snapshot_steps": steps,
        "ablation": [a.as_dict() for a in found],
        "circuit": {str(layer): a.as_dict() for layer, a in circuit(found).items()}}}


def best_head(scores: list[list[float]], layers) -> tuple[int, int, float]:
    """(layer, head, score) of the highest score among the given layers."""
    return max(((ly, h, scores[ly][h]) for ly in layers for h in range(len(scores[ly]))), key=lambda t: t[2])


def readme_figures(m: dict) -> str:
    """The docs' lines about a training run, from its metrics (a test checks that docs/gpt.md holds them)."""
    last = m["evaluations"][-1]
    layers = range(len(last["induction"]))
    induction = best_head(last["induction"], layers[1:] or layers)
    previous = best_head(last["previous_token"], layers[:1])
    lines = [f"- seed {m['seed']}: {m['steps']} steps of {m['batch']} contexts of {m['context']} words in "
             f"{m['train_seconds']} s on {m['threads']} CPU threads (evaluations included)",
             f"- the jump: copy accuracy first at {m['jump']['copy_accuracy'][0]:.0%} at step {m['jump']['starts']}, "
             f"at {m['jump']['copy_accuracy'][1]:.0%} at step {m['jump']['ends']}",
             f"- at the end, on {m['probes']['count']} held-out repeat probes: copy accuracy "
             f"{last['copy_accuracy']:.1%}; induction head {induction[0]}.{induction[1]} ({induction[2]:.2f}); "
             f"previous-token head {previous[0]}.{previous[1]} ({previous[2]:.2f})",
             f"- held-out loss on {m['held_out']['sentences']:,} single toy sentences: {last['held_out_loss']:.3f} "
             f"nats per word"]
    for layer, a in sorted(m["circuit"].items()):
        lines.append(f"- switched off, layer {layer}'s {a['heads']}: copy accuracy {a['copy_accuracy']:.1%}, "
                     f"loss {a['loss']:.3f}")
    return "\n".join(lines)


def write(result: dict, out: Path) -> None:
    model, vocabulary = result["model"].eval(), result["vocabulary"]
    loop.write(out, lambda out: save(model, vocabulary, out), result["snapshots"], result["metrics"], SNAPSHOTS,
               METRICS)


def parse(argv=None):
    p = loop.options("python -m training.train_gpt", __doc__, SHIPPED, steps=5000, batch=32, lr=3e-3, warmup=50,
                     d_model=64, heads=4, layers=2, eval_every=50, smoke="a tiny model for 40 steps")
    p.add_argument("--context", type=int, default=gpt_data.CONTEXT)
    p.add_argument("--decay-from", type=int, default=3800, help="from this step, the rate falls linearly to a tenth")
    p.add_argument("--repeat-share", type=float, default=0.4, help="share of contexts with a sequence written twice")
    p.add_argument("--repeat-min", type=int, default=gpt_data.REPEAT_RANGE[0])
    p.add_argument("--repeat-max", type=int, default=gpt_data.REPEAT_RANGE[1])
    p.add_argument("--sentence-repeat", type=float, default=0.1, help="chance that a sentence repeats an earlier one")
    p.add_argument("--held-out", type=int, default=HELD_OUT, help="held-out sentences the loss is measured on")
    args = p.parse_args(argv)
    if args.smoke:
        args.steps, args.d_model, args.held_out, args.eval_every, args.decay_from = 40, 32, 100, 10, 30
    return args


def main(argv=None) -> int:
    args, log, result = loop.run(argv, parse, train, write)
    m = result["metrics"]
    last = m["evaluations"][-1]
    return loop.finish(args, log, m, last["copy_accuracy"], f"copy accuracy {last['copy_accuracy']:.1%}, held-out "
                       f"loss {last['held_out_loss']:.3f}; the jump from step {m['jump']['starts']} to "
                       f"{m['jump']['ends']}", "docs/gpt.md", readme_figures(m))


if __name__ == "__main__":
    sys.exit(main())
