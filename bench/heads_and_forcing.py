"""The Translate page's "Switch heads off" and "Teacher forcing" parts: what they cost on the server.

1. Scoring: the exact match of the 200 fixed held-out sentences (model.translator.ablation.score: one batched greedy
   decoding) with no head off, cross.1.3 off, every cross head off, every decoder self head off; rounds in rotating
   order, median ms. Then its memory: the peak (VmHWM) of a fresh process scoring the longest-running set, beside
   model.translator.ablation.scoring_bytes, the room the page makes in the budget first.
2. The ranking: every single head and set (33), uncached, as the page computes it once per process.
3. Server time of a rerun (Streamlit's script run, timed inside its thread, in AppTest): the heads part with its
   scores cached and with a set of heads not yet scored; the teacher-forcing part after a snapshot change (first
   time, then cached) and after a layer move.
4. Bytes sent to a real browser for one load of each part (the default sentence 我有一只猫).

    .venv/bin/python bench/heads_and_forcing.py [--rounds 7] [--threads 2]
"""
import argparse
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.app import SCRIPT_RUNS, time_script_runs  # noqa: E402
from harness.record import run  # noqa: E402


def median_ms(times) -> str:
    return f"{1e3 * statistics.median(times):.0f}"


def scoring(rounds: int) -> None:
    import torch

    from model.translator import ablation, load_shipped
    from training import toy_language

    model = load_shipped()
    sentences = toy_language.sample(ablation.SENTENCES, ablation.SEED, held_out=True)
    src, expected = ablation.sources_of(model, [s.chinese() for s in sentences]), [s.english() for s in sentences]
    sets = {"none": (), "cross.1.3": (("cross", 1, 3),),
            "every cross head": tuple(("cross", ly, h) for ly in range(2) for h in range(4)),
            "every decoder self head": tuple(("decoder", ly, h) for ly in range(2) for h in range(4))}
    exact = {name: ablation.score(model, src, expected, heads).exact_match for name, heads in sets.items()}
    times = {name: [] for name in sets}
    cpu = {name: [] for name in sets}
    for r in range(rounds):
        names = list(sets)[r % len(sets):] + list(sets)[:r % len(sets)]
        for name in names:
            start, start_cpu = time.perf_counter(), time.process_time()
            ablation.score(model, src, expected, sets[name])
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    print(f"\n1. exact match of {len(sentences)} held-out sentences (seed {ablation.SEED}), one batched greedy "
          f"decoding, {torch.get_num_threads()} threads, median of {rounds}")
    print("| heads off | exact match | wall ms (median) | min–max wall ms | CPU ms (median) |")
    print("|---|---:|---:|---:|---:|")
    for name, t in times.items():
        print(f"| {name} | {exact[name]:.1%} | {median_ms(t)} | {1e3 * min(t):.0f}–{1e3 * max(t):.0f} | "
              f"{median_ms(cpu[name])} |")

    sets_all = ablation.head_sets(2, 4)
    ranking, ranking_cpu = [], []
    for _ in range(max(1, rounds // 3)):
        start, start_cpu = time.perf_counter(), time.process_time()
        ablation.rank(sets_all, lambda heads: ablation.score(model, src, expected, heads).exact_match)
        ranking.append(time.perf_counter() - start)
        ranking_cpu.append(time.process_time() - start_cpu)
    print(f"\n2. the ranking: {len(sets_all)} sets scored in turn, uncached: median {statistics.median(ranking):.2f} s "
          f"wall ({', '.join(f'{t:.2f}' for t in ranking)}), {statistics.median(ranking_cpu):.2f} s CPU")


PEAK = textwrap.dedent("""
    import sys, torch
    sys.path.insert(0, {root!r})
    torch.set_num_threads({threads})
    from model import ablation
    from model.translator import load_shipped
    from training import toy_language
    def hwm():
        return int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1]) * 1024
    model = load_shipped()
    sentences = toy_language.sample(ablation.SENTENCES, ablation.SEED, held_out=True)
    src = ablation.sources_of(model, [s.chinese() for s in sentences])
    expected = [s.english() for s in sentences]
    ablation.score(model, src[:2], expected[:2])  # torch's first-call allocations, outside the measure
    before = hwm()
    ablation.score(model, src, expected, [("decoder", ly, h) for ly in range(2) for h in range(4)])
    print(hwm() - before, ablation.scoring_bytes(model, src))
""")


def memory(threads: int) -> None:
    out = subprocess.run([sys.executable, "-c", PEAK.format(root=str(ROOT), threads=threads)], capture_output=True,
                         text=True, check=True).stdout.split()
    peak, estimate = int(out[0]), int(out[1])
    print(f"\nscoring's memory: peak growth {peak / 2**20:.1f} MB (VmHWM of a fresh process, every decoder self head "
          f"off: the longest decoding); room made first: {estimate / 2**20:.1f} MB")


def _app(start: str) -> None:
    import app

    app.main(start)


def rerun(at, act) -> float:
    del SCRIPT_RUNS[:]
    act(at).run()
    assert not at.exception, at.exception
    return sum(SCRIPT_RUNS)


def server(rounds: int) -> None:
    from streamlit.testing.v1 import AppTest

    time_script_runs()

    def page(**params):
        at = AppTest.from_function(_app, args=("translate",), default_timeout=600)
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
        assert not at.exception, at.exception
        return at

    heads = page(part="heads")  # the ranking is computed here, once
    pairs = [[f"cross.0.{a}", f"decoder.1.{b}"] for a in range(4) for b in range(4)]
    warm, cold = [], []
    for i in range(rounds):
        warm.append(rerun(heads, lambda at: at.sidebar.multiselect(key="off").set_value(["cross.1.3"])))
        cold.append(rerun(heads, lambda at, i=i: at.sidebar.multiselect(key="off").set_value(pairs[i % 16])))
    forcing = page(part="forcing")
    steps = [25, 50, 75, 100, 125, 150, 175, 200, 250, 300, 400]
    first, again, layer = [], [], []
    for i in range(rounds):
        step = steps[i % len(steps)]
        first.append(rerun(forcing, lambda at, s=step: at.select_slider(key="snap").set_value(s)))
        rerun(forcing, lambda at: at.select_slider(key="snap").set_value(600))
        again.append(rerun(forcing, lambda at, s=step: at.select_slider(key="snap").set_value(s)))
        layer.append(rerun(forcing, lambda at, i=i: at.slider(key="layer").set_value(i % 2)))
    print(f"\n3. server time of a rerun (the page's script, AppTest; median of {rounds}, ms)")
    print("| part | change | ms |\n|---|---|---:|")
    for part, change, t in (("heads", "sidebar heads, scores cached", warm),
                            ("heads", "sidebar heads, a new set scored (200 sentences)", cold),
                            ("forcing", "snapshot, first time (load it, two decodings)", first),
                            ("forcing", "snapshot, cached", again), ("forcing", "decoder layer", layer)):
        print(f"| {part} | {change} | {median_ms(t)} |")


LINKS = {"heads, whole model": "part=heads&src=我有一只猫",
         "heads, every cross head off": "part=heads&src=我有一只猫&off=" + ",".join(
             f"cross.{layer}.{head}" for layer in range(2) for head in range(4)),
         "forcing, trained": "part=forcing&src=我有一只猫",
         "forcing, snapshot 150": "part=forcing&src=我有一只猫&snap=150"}


def page_bytes(quiet: float = 2.0) -> None:
    """Bytes of websocket frames a real Chromium receives for one load of each part (static files, cached by a
    browser, not counted), after a first visit that warmed the server (model loaded, ranking computed)."""
    from bench.page_bytes import kind_of
    from harness.servers import chromium, spawn

    def load(browser, url: str) -> int:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        by_kind, last = {}, [time.perf_counter()]

        def on_frame(payload) -> None:
            if isinstance(payload, bytes):
                by_kind[kind_of(payload)] = by_kind.get(kind_of(payload), 0) + len(payload)
                last[0] = time.perf_counter()

        page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
        page.goto(url)
        page.get_by_text("The whole model:").or_(page.get_by_text("They agree")).or_(
            page.get_by_text("They part")).first.wait_for(timeout=600_000)
        while not by_kind.get("script_finished") or time.perf_counter() - last[0] < quiet:
            page.wait_for_timeout(100)
        context.close()
        return sum(by_kind.values())

    with spawn(ROOT / "app.py", session_ttl=None) as server, chromium() as browser:
        url = server.url.rstrip("/")
        load(browser, f"{url}/translate?{LINKS['heads, whole model']}")  # warm: the model, the ranking
        print("\n4. bytes a browser receives for one load of the part (MB = 10^6 bytes; budget 1 MB)")
        print("| link | MB |\n|---|---:|")
        for name, query in LINKS.items():
            print(f"| {name} | {load(browser, f'{url}/translate?{query}') / 1e6:.3f} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-browser", action="store_true")
    args = p.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    print(f"# {time.strftime('%Y-%m-%d')}, torch {torch.__version__}, {args.threads} threads")
    scoring(args.rounds)
    memory(args.threads)
    server(args.rounds)
    if not args.no_browser:
        page_bytes()


if __name__ == "__main__":
    run(__file__, main)
