"""Heavy work at class scale, in the server's process: what a class asks for at once, the same for everyone (the tour's
preset text: its head atlas, rollout, attention flow, saliency; the translator's head ranking; the toy GPT's table of
single heads off and a training snapshot's copy accuracy), requested by 1 student and by N students released together
(threads, as Streamlit runs each session's rerun), from an empty cache each time: the process's CPU time, the wall
time, and how many times it was computed. Then work that cannot be shared: N head atlases of N different texts at once
(each student's own), run on the model threads: how many ran at the same time at most (runtime.model_thread.workers()).

    .venv/bin/python bench/shared_work.py [--students 40] [--own 8]
"""
import argparse
import logging
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness.record import run  # noqa: E402


def at_once(fn, n: int) -> tuple[float, float]:
    """(process CPU seconds, wall seconds) of fn() in n threads released together."""
    barrier, errors = threading.Barrier(n + 1), []

    def one():
        barrier.wait()
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - counted and raised below
            errors.append(e)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    cpu, wall = time.process_time(), time.perf_counter()
    barrier.wait()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return time.process_time() - cpu, time.perf_counter() - wall


class Builds:
    """How many values the budget built (runtime.budget.BoundedCache.get_or_build's build() calls), while counting."""

    def __init__(self):
        from runtime.budget import BoundedCache

        self.count, self._lock, real = 0, threading.Lock(), BoundedCache.get_or_build

        def counted(cache, key, build, *args, **kwargs):
            def counting():
                with self._lock:
                    self.count += 1
                return build()
            return real(cache, key, counting, *args, **kwargs)

        BoundedCache.get_or_build = counted


def items():
    """(name, forget: drop it from the budget, compute, counter: how many times it was computed)."""
    from model.kinds import SourceKey
    from runtime.memory import budget
    from runtime.models import Choice, loaded_model, loaded_translator
    from runtime.runs import shared_run
    from views.language_model import heads as lm_heads
    from views.language_model import learning as lm_learning
    from views.language_model.page import LanguageModel
    from views.pages import atlas, rollout
    from views.shell.tour_stops import STOPS
    from views.translate import heads as translate_heads

    params = next(s.params for s in STOPS if s.path == "heatmap")
    preset = shared_run(Choice(params["model"]), params["text"])
    translator = loaded_translator().translator
    gpt = loaded_model(Choice(SourceKey.GPT))
    reader = gpt.reader
    prompt = "the teacher saw two red birds at school . the teacher saw"
    read = reader.read(prompt)
    lm = LanguageModel(Choice(SourceKey.GPT), gpt, reader, prompt, tuple(read.ids), tuple(read.tokens), 8, ())
    steps, _ = lm_learning.snapshots()
    middle = steps[len(steps) // 2]

    def forget(*firsts):
        def drop():
            with budget()._room:
                keys = [k for k in budget()._items if isinstance(k, tuple) and k[:1] in [(f,) for f in firsts]]
            for k in keys:
                budget()._drop(k)
        return drop

    yield "head atlas (tour text)", forget("atlas"), lambda: atlas.atlas_of(preset)
    yield "rollout (tour text)", forget("rollout"), lambda: rollout.rollouts_of(preset)
    yield "attention flow (tour text)", forget("flow"), lambda: rollout.flow_of(preset, 10, preset.num_layers - 1)
    yield "saliency (tour text)", forget("saliency"), lambda: rollout.saliency_of(preset, "token", 10)
    yield "translator: heads ranked", forget(translate_heads.RANKING_KEY[0], "translate"), \
        lambda: translate_heads.ranking(translator)
    yield "toy GPT: single heads off", forget("lm-single heads", "lm-heads off"), lambda: lm_heads.singles(lm)
    yield f"toy GPT: snapshot {middle}'s circuit", forget("gpt snapshot circuit", "gpt snapshot"), \
        lambda: lm_learning.circuit_at(middle, lm)


def own_atlases(n: int) -> tuple[int, float, float]:
    """n atlases of n different texts at once: (most running together on the model threads, CPU s, wall s)."""
    from runtime import model_thread
    from runtime.models import Choice
    from runtime.runs import shared_run
    from views.pages import atlas

    runs = [shared_run(Choice("minilm"), f"student {i} reads the sentence number {i} of the lesson today") for i in
            range(n)]
    running, most, lock = 0, 0, threading.Lock()
    real = model_thread._inference

    def counting(fn, args):
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        try:
            return real(fn, args)
        finally:
            with lock:
                running -= 1

    model_thread._inference = counting
    try:
        queue = iter(runs)
        lock_runs = threading.Lock()

        def next_atlas():
            with lock_runs:
                r = next(queue)
            atlas.atlas_of(r)

        cpu, wall = at_once(next_atlas, n)
    finally:
        model_thread._inference = real
    return most, cpu, wall


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--own", type=int, default=8, help="students computing their own text's atlas at once")
    parser.add_argument("--rounds", type=int, default=3, help="median of this many rounds per row")
    args = parser.parse_args()
    from runtime.model_thread import apply_torch_threads, workers

    apply_torch_threads()
    # each call from outside a page warns "missing ScriptRunContext" (Streamlit set its loggers up when imported)
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)
    n = args.students
    print(f"# {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, {workers()} model thread(s), "
          f"median of {args.rounds} rounds\n")
    print(f"| work | CPU, 1 student (s) | CPU, {n} at once (s) | ratio | wall, 1 (s) | wall, {n} (s) | "
          f"values built, 1 | values built, {n} |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    builds = Builds()
    for name, forget, compute in items():
        ones, manys = [], []
        for _ in range(args.rounds):
            forget()
            before = builds.count
            ones.append((*at_once(compute, 1), builds.count - before))
            forget()
            before = builds.count
            manys.append((*at_once(compute, n), builds.count - before))
        c1, cn = (statistics.median(r[0] for r in rs) for rs in (ones, manys))
        w1, wn = (statistics.median(r[1] for r in rs) for rs in (ones, manys))
        b1, bn = (max(r[2] for r in rs) for rs in (ones, manys))
        print(f"| {name} | {c1:.3f} | {cn:.3f} | {cn / c1:.2f} | {w1:.3f} | {wn:.3f} | {b1} | {bn} |", flush=True)
    print("\n(values built: what the budget computed during the requests, the work itself and what it is made of, "
          "e.g. a ranking's scores of every set of heads: the same for 1 student and for a class means it was shared.)")
    most, cpu, wall = own_atlases(args.own)
    print(f"\n{args.own} students, each the head atlas of a text of their own, at once: at most {most} computing "
          f"together on the model threads ({workers()}), the others queued; {cpu:.2f} s CPU, {wall:.2f} s wall.")


if __name__ == "__main__":
    run(__file__, main)
