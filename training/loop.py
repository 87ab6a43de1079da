"""What the two training commands share (training/train.py, the translator; training/train_gpt.py, the toy GPT):
their common options, the seed and threads, the start heard by a watching page, one optimizer step, the progress bar,
the files written, and the command's end.

Each command keeps what is its own: its data, its loss, its learning rate, its evaluations and its metrics. The
order of the calls that draw random numbers is theirs too, so the shipped weights are still what the same seed trains.
"""
import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors.torch import save_file

from training import progress as progress_options
from training.progress import Progress, orphan_exit


def options(prog: str, doc: str, shipped: Path, *, steps: int, batch: int, lr: float, warmup: int, d_model: int,
            heads: int, layers: int, eval_every: int, smoke: str) -> argparse.ArgumentParser:
    """A training command's options (its own are added after): where to write, the seed, the budget, the model's
    size, how often to evaluate, the threads, a smoke run, the snapshots, and a watching page's (--progress ...)."""
    p = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=shipped, help="directory to write (default: the shipped weights)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=steps, help="at most this many steps")
    p.add_argument("--batch", type=int, default=batch)
    p.add_argument("--lr", type=float, default=lr)
    p.add_argument("--warmup", type=int, default=warmup)
    p.add_argument("--d-model", type=int, default=d_model)
    p.add_argument("--heads", type=int, default=heads)
    p.add_argument("--layers", type=int, default=layers)
    p.add_argument("--eval-every", type=int, default=eval_every)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--smoke", action="store_true", help=f"{smoke}: checks the loop, not the model")
    p.add_argument("--no-snapshots", dest="snapshots", action="store_false",
                   help="no snapshots.safetensors: a quicker run")
    progress_options.add_options(p)
    return p


def seeded(args) -> None:
    """The run's seed and threads, before anything is built or drawn."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)


def begin(args, log: Progress | None, model, config: dict) -> float:
    """The clock started; a watching page told the run's size and shown the random model."""
    started = time.perf_counter()
    if log is not None:
        log.start(args.steps, args.seed, config)
        if log.weights_every:
            log.weights(0, model)  # the random model, to look at before the first step
    return started


def descend(args, log: Progress | None, model, optimizer, step: int, rate: float,
            loss_of: Callable[[], torch.Tensor]) -> float:
    """Optimizer step `step` (from 1) at learning rate `rate` on the loss loss_of() computes; a watching page hears
    of it, and the run stops if the process that started it has gone. Returns the loss."""
    for group in optimizer.param_groups:
        group["lr"] = rate
    loss = loss_of()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if log is not None:
        if log.orphaned():
            orphan_exit(args.out if args.remove_if_orphaned else None)
        log.step(step, loss.item(), model)
    return loss.item()


def trained(log: Progress | None, model, step: int) -> None:
    """The trained model's weights to a watching page, unless its last step already sent them."""
    if log is not None and log.weights_every and step % log.weights_every:
        log.weights(step, model)


def bar(step: int, steps: int, loss: float, said: str, started: float) -> None:
    """The progress bar on stderr, rewritten in place."""
    width = 30
    filled = width * step // max(steps, 1)
    print(f"\r[{'#' * filled}{'.' * (width - filled)}] step {step}/{steps}  loss {loss:.3f}  {said}  "
          f"{time.perf_counter() - started:5.0f} s", end="", file=sys.stderr, flush=True)


def write(out: Path, save: Callable[[Path], None], snapshots: dict, metrics: dict, snapshots_file: str,
          metrics_file: str) -> None:
    """The model (save(out)), its snapshots if any, and metrics.json."""
    save(out)
    if snapshots:
        save_file(snapshots, out / snapshots_file)
    (out / metrics_file).write_text(json.dumps(metrics, indent=1) + "\n")


def run(argv, parse: Callable, train: Callable, write: Callable) -> tuple[argparse.Namespace, Progress | None, dict]:
    """The command's run: its options parsed, a watching page's log opened, trained, written; (args, log, result)."""
    args = parse(argv)
    log = progress_options.from_options(args)
    result = train(args, log)
    write(result, args.out)
    return args, log, result


def finish(args, log: Progress | None, metrics: dict, score: float, summary: str, figures_for: str,
           figures: str) -> int:
    """A watching page told the run is done (with its score); the summary and the figures for the docs printed."""
    if log is not None:
        log.done(metrics["steps"], metrics["train_seconds"], score)
    print(f"{metrics['steps']} steps in {metrics['train_seconds']} s; {summary}; written to {args.out}")
    print(f"For {figures_for}:\n{figures}")
    return 0
