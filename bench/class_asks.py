"""A class asks the LLM at once (issue 46), at the runtime's level: N different questions arrive at the model
threads within a few seconds, and are written together (runtime.batching) on SmolLM2-135M-Instruct, 48 tokens at
most each. Reported per question: the time from its arrival to its first token and to its whole answer (p50, p95,
max); the process CPU for the class against the same questions written one at a time (generate with the compiled
step, what the Ask page did before: timed on `--alone` of them, scaled to N); the peak resident memory; whether each
answer equals the one written alone (on the `--alone` checked). No websocket or page here: bench/README.md says what
the page-level load test adds.

    .venv/bin/python bench/class_asks.py [--students 40] [--within 5] [--alone 8]
"""
import argparse
import resource
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.record import run  # noqa: E402

TOKENS = 48
SUBJECTS = ("the sky", "cats", "airplanes", "sleep", "the moon", "volcanoes", "bees", "rain", "the heart", "trains",
            "music", "ice", "the ocean", "trees", "bread", "magnets", "clocks", "snow", "the sun", "bicycles")
FORMS = ("Why is {} important?", "Tell me one fact about {}.")


def questions(n: int) -> list[str]:
    return [FORMS[i // len(SUBJECTS) % len(FORMS)].format(SUBJECTS[i % len(SUBJECTS)]) for i in range(n)]


def percentile(values, q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--within", type=float, default=5.0, help="s over which the questions arrive")
    parser.add_argument("--alone", type=int, default=8, help="questions also written one at a time")
    args = parser.parse_args()

    import torch  # noqa: PLC0415

    from model.causal.chat import conversation  # noqa: PLC0415
    from model.causal.decoding import generate  # noqa: PLC0415
    from model.compiled import compiled_step  # noqa: PLC0415
    from model.llama.smollm2 import load, packaged  # noqa: PLC0415
    from runtime import batching  # noqa: PLC0415
    from runtime.model_thread import apply_torch_threads  # noqa: PLC0415

    threads = apply_torch_threads()
    model, tokenizer = load(packaged())
    asked = questions(args.students)
    talks = [conversation(tokenizer, q) for q in asked]
    prompts = [torch.tensor(c.ids) for c in talks]
    stop = {tokenizer.eos_token_id}

    with torch.inference_mode():
        step = compiled_step(model)
        generate(model, prompts[0], 4, step=step)  # warm
        start_cpu, start = cpu(), time.perf_counter()
        alone = [generate(model, p, TOKENS, stop=stop, step=step).written.tolist() for p in prompts[:args.alone]]
        alone_cpu, alone_wall = cpu() - start_cpu, time.perf_counter() - start

    writer = batching.Writer(model)
    arrived, first, whole = {}, {}, {}
    lock = threading.Lock()

    def said(i):
        def on_word(word):
            with lock:
                first.setdefault(i, time.perf_counter())
        return on_word

    start_cpu, start = cpu(), time.perf_counter()
    jobs = []
    for i, p in enumerate(prompts):
        time.sleep(max(0.0, start + i * args.within / max(1, args.students - 1) - time.perf_counter()))
        arrived[i] = time.perf_counter()
        job = writer.ask(p, TOKENS, None, stop, said(i), talks[i].asked.index(True))  # as the Ask page asks
        job.future.add_done_callback(lambda _f, i=i: whole.setdefault(i, time.perf_counter()))
        jobs.append(job)
    results = [job.future.result(600) for job in jobs]
    class_cpu, class_wall = cpu() - start_cpu, time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    to_first = [first[i] - arrived[i] for i in range(args.students)]
    to_whole = [whole[i] - arrived[i] for i in range(args.students)]
    same = sum(r.written.tolist() == a for r, a in zip(results, alone))
    words = sum(len(r.written) for r in results)
    one_at_a_time = alone_cpu / args.alone * args.students
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, {args.students} questions arriving over {args.within:g} s, "
          f"{TOKENS} tokens at most, torch threads {threads}, batch limit {batching.LIMIT}\n")
    print("| measure | p50 | p95 | max |\n|---|---:|---:|---:|")
    for name, values in (("first token (s)", to_first), ("whole answer (s)", to_whole)):
        print(f"| {name} | {statistics.median(values):.2f} | {percentile(values, 0.95):.2f} | {max(values):.2f} |")
    print("\n| measure | value |\n|---|---:|")
    print(f"| the class: wall time, first arrival to last answer (s) | {class_wall:.1f} |")
    print(f"| the class: process CPU (s) | {class_cpu:.1f} |")
    print(f"| one at a time (compiled step): CPU for {args.alone} answers (s), wall (s) | {alone_cpu:.1f}, "
          f"{alone_wall:.1f} |")
    print(f"| one at a time, scaled to {args.students} (CPU s) | {one_at_a_time:.1f} |")
    print(f"| the class's CPU against one at a time | **{class_cpu / one_at_a_time:.2f}x** |")
    print(f"| words written | {words} |")
    print(f"| answers equal to the one written alone | {same} of {min(args.alone, args.students)} |")
    print(f"| ticks (one word of every answer in flight each) | {writer.ticks} |")
    print(f"| peak resident memory of the process (MiB) | {peak:.0f} |")


if __name__ == "__main__":
    run(__file__, main)
