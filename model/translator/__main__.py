"""The translator's command line: `python -m model.translator "我有一只猫"` prints `I have a cat`.

    python -m model.translator "我有一只猫" "她有两个孩子吗"     one line out per sentence
    python -m model.translator --file F                     one line out per line in (F = - reads stdin)
    ... --sample [--temperature T] [--top-k K] [--top-p P] [--seed S]   sampled instead of greedy
    ... --beam N                                            beam search
    ... --ablate cross.1.2,decoder.0.3                      those heads switched off

Greedy by default, in batches, decoded incrementally (model.translator.decoding). A character the model has never seen
is named on stderr and read as <unk>; the translator still answers. An empty line gives an empty line.
"""
import argparse
import sys
import time
from pathlib import Path

import torch

from model.heads import parse_heads
from model.sampling import Sampling
from model.translator import BLOCKS, SHIPPED, Translator
from model.translator.decoding import batch_of, beam_search, generate, words_of


def translate(model: Translator, sentences: list[str], sampling: Sampling | None = None, beam: int | None = None,
              heads_off=(), batch_size: int = 256, warn=None) -> list[str]:
    """English for each Chinese sentence ("" for an empty one). warn(index, message) hears of unknown characters
    and of sentences cut to the model's positions."""
    out = [""] * len(sentences)
    todo = []
    for i, text in enumerate(sentences):
        tokens, ids, unknown = model.encode_source(text)
        if unknown and warn:
            warn(i, "never seen in training, read as <unk>: " + " ".join(unknown))
        if ids and len(ids) == model.max_positions and warn:
            warn(i, f"longer than {model.max_positions} characters: only the first {model.max_positions} are read")
        if ids:
            todo.append((i, ids))
    with torch.inference_mode():
        for start in range(0, len(todo), batch_size):
            chunk = todo[start:start + batch_size]
            src = batch_of(model, [ids for _, ids in chunk])
            if beam:
                decoded = beam_search(model, src, beam, heads_off)
            else:
                decoded = generate(model, src, sampling, heads_off)
            for (i, _), ids in zip(chunk, decoded):
                out[i] = words_of(model, ids)
    return out


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m model.translator",
                                description="Translate the toy Chinese of docs/toy-language.md into English.")
    p.add_argument("sentences", nargs="*", help="Chinese sentences, e.g. 我有一只猫")
    p.add_argument("--file", help="one sentence per line (- reads standard input)")
    p.add_argument("--sample", action="store_true", help="draw each word instead of taking the most likely")
    p.add_argument("--temperature", type=float, default=1.0, help="sampling: softmax(z / T) (default 1)")
    p.add_argument("--top-k", type=int, help="sampling: only the K most likely words")
    p.add_argument("--top-p", type=float, help="sampling: only the most likely words that together reach P")
    p.add_argument("--seed", type=int, default=0, help="sampling: the seed (default 0)")
    p.add_argument("--beam", type=int, help="beam search with N prefixes")
    p.add_argument("--ablate", default="", metavar="HEADS",
                   help="switch heads off: block.layer.head, comma-separated, block one of encoder, decoder, cross "
                        "(e.g. cross.1.2,decoder.0.3)")
    p.add_argument("--batch", type=int, default=256, help="sentences decoded together (default 256)")
    p.add_argument("--model", type=Path, default=SHIPPED, help="a directory written by python -m training.train")
    p.add_argument("--time", action="store_true", help="print the decoding time per sentence on stderr")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    fail = lambda message: (print(f"error: {message}", file=sys.stderr), 2)[1]  # noqa: E731
    if args.file is None and not args.sentences:
        return fail("give a sentence (python -m model.translator 我有一只猫) or --file F")
    if args.beam is not None and args.sample:
        return fail("--beam and --sample are two ways of choosing words: give one")
    sampling_options = args.temperature != 1.0 or args.top_k is not None or args.top_p is not None
    if sampling_options and not args.sample:
        return fail("--temperature, --top-k and --top-p choose how to sample: add --sample")
    try:
        sampling = Sampling(args.temperature, args.top_k, args.top_p, args.seed) if args.sample else None
        heads_off = parse_heads(args.ablate, BLOCKS)
        if args.beam is not None and args.beam < 1:
            raise ValueError(f"--beam needs at least 1 prefix, not {args.beam}")
        model = Translator.from_directory(args.model)
        model.heads_off(heads_off)  # a head the model does not have is said before any work
        if args.file is None:
            lines = args.sentences
        elif args.file == "-":
            lines = sys.stdin.read().splitlines()
        else:
            lines = Path(args.file).read_text(encoding="utf-8").splitlines()
    except (ValueError, TypeError, OSError) as e:  # TypeError: a config.json with keys the model does not take
        return fail(e.strerror if isinstance(e, OSError) and e.strerror else e)
    where = (lambda i: f"line {i + 1}") if args.file is not None else (lambda i: repr(lines[i]))

    def warn(i: int, message: str) -> None:
        print(f"{where(i)}: {message}", file=sys.stderr)

    started = time.perf_counter()
    english = translate(model, lines, sampling, args.beam, heads_off, args.batch, warn)
    seconds = time.perf_counter() - started
    sys.stdout.write("".join(f"{line}\n" for line in english))
    if args.time:
        print(f"{len(lines)} sentences in {seconds:.3f} s: {1000 * seconds / max(len(lines), 1):.3f} ms per sentence",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
