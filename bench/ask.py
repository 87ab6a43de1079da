"""The Ask page's budgets (issue 45), on SmolLM2-135M-Instruct:

1. the answer streamed: in Streamlit's AppTest (the page's own polling included, the model on a model thread as
   served), for each new question typed, the time from the question to its first token and to its 48th; against
   the reference in the same run, the plain page a user would write: transformers' generate with a
   TextIteratorStreamer, on transformers' reading of the same GGUF (eager, 2 threads). Budgets: first token
   <= 1 s, 48 tokens <= 2.5 s;
2. the server's script run after a step, layer or head change (AppTest, inside Streamlit's ScriptRunner), and after
   the Next button: budget 50 ms; of it, the step part's own run (views.ask.step.section): the fragment that a served
   page reruns alone on such a move (AppTest reruns the whole script); and with gradient x input on, a step's first
   visit (its backward pass);
3. the sink part's first opening (its shares), then its eviction experiment switched on (computed once per answer);
4. bytes a browser receives (websocket) opening the page, per part and view: budget 1 MB.

    .venv/bin/python bench/ask.py [--moves 20] [--no-browser]
"""
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.page_costs import browser_bytes, command, report, slider_moves, timed  # noqa: E402

QUESTIONS = ("Why is the sky blue?", "What do cats eat?", "How do airplanes fly?", "Why do we sleep?",
             "What is a Transformer in machine learning?")
TOKENS = 48


def streamed(questions) -> dict[str, list[float]]:
    """{"first token": [...], "48th token": [...], "whole page": [...]} for each new question typed (48 at most)."""
    from bench.app import time_script_runs  # noqa: PLC0415
    from harness import apptest  # noqa: PLC0415 - with AppTest, in the server part only
    from runtime import streams  # noqa: PLC0415

    time_script_runs()
    marks: list[float] = []
    said = streams.Stream._say

    def say(self, item):
        marks.append(time.perf_counter())
        said(self, item)

    streams.Stream._say = say
    at = apptest.open_page("ask", most=str(TOKENS))
    time.sleep(3)  # the compiled step is traced after the first answer (runtime.model_thread)
    out = {"first token": [], f"{TOKENS}th token": [], "whole page": []}
    for question in questions:
        del marks[:]
        start = time.perf_counter()
        out["whole page"].append(timed(at, lambda q=question: at.text_input(key="q").input(q).run()))
        out["first token"].append(marks[0] - start)
        if len(marks) >= TOKENS:
            out[f"{TOKENS}th token"].append(marks[TOKENS - 1] - start)
    streams.Stream._say = said
    return out


def reference(questions) -> dict[str, list[float]]:
    """transformers' generate with a streamer, greedy, 48 new tokens: what a plain page would call."""
    import torch  # noqa: PLC0415
    import transformers  # noqa: PLC0415

    from model.llama.smollm2 import packaged  # noqa: PLC0415

    found = packaged()
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(found.gguf.parent), gguf_file=found.gguf.name, attn_implementation="eager", dtype=torch.float32).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(found.gguf.parent), gguf_file=found.gguf.name)
    out = {"first token": [], f"{TOKENS}th token": []}
    for question in questions:
        ids = tokenizer.apply_chat_template([{"role": "user", "content": question}], add_generation_prompt=True,
                                            return_tensors="pt", return_dict=True)
        streamer = transformers.TextIteratorStreamer(tokenizer, skip_prompt=True)
        start = time.perf_counter()
        worker = threading.Thread(target=lambda: model.generate(**ids, max_new_tokens=TOKENS, min_new_tokens=TOKENS,
                                                                do_sample=False, streamer=streamer))
        worker.start()
        times = [time.perf_counter() - start for piece in streamer if piece or True]
        worker.join()
        out["first token"].append(times[0])
        out[f"{TOKENS}th token"].append(time.perf_counter() - start)
    return out


def part_moves(moves: int) -> dict[str, list[float]]:
    """{"<key> slider, its part alone": seconds of views.ask.step.section in each move}: what a served page reruns."""
    from harness import apptest  # noqa: PLC0415
    from views.ask import step  # noqa: PLC0415

    runs: list[float] = []
    section = step.section

    def timed_section(asked):
        start = time.perf_counter()
        try:
            return section(asked)
        finally:
            runs.append(time.perf_counter() - start)

    step.section = timed_section
    at = apptest.open_page("ask")
    out = {}
    for key in ("step", "layer", "head"):
        out[f"{key} slider, its part alone (a served page's fragment rerun)"] = times = []
        for i in range(moves):
            del runs[:]
            at.slider(key=key).set_value((i + 1) % (int(at.slider(key=key).max) + 1)).run()
            times.append(sum(runs))
    step.section = section
    return out


def server_side(moves: int) -> None:
    import torch  # noqa: PLC0415

    from harness import apptest  # noqa: PLC0415

    torch.set_num_threads(2)
    ours = streamed(QUESTIONS)
    theirs = reference(QUESTIONS)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, the answer streamed, {len(QUESTIONS)} new questions, "
          f"{TOKENS} tokens at most\n")
    print("| what | ours: median (s) | ours: max (s) | transformers + streamer: median (s) | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name in ("first token", f"{TOKENS}th token"):
        if not ours[name]:
            continue
        ratio = statistics.median(ours[name]) / statistics.median(theirs[name])
        print(f"| {name} | {statistics.median(ours[name]):.3f} | {max(ours[name]):.3f} | "
              f"{statistics.median(theirs[name]):.3f} | {ratio:.2f} |")
    print(f"| the whole page (answer, step part, charts) | {statistics.median(ours['whole page']):.3f} | "
          f"{max(ours['whole page']):.3f} | | |\n")
    times = slider_moves("ask", ("step", "layer", "head"), moves) | part_moves(moves)
    at = apptest.open_page("ask", grad="1", step="0")
    steps = int(at.slider(key="step").max)
    times["step slider, gradient x input on, first visit"] = [
        timed(at, lambda s=s: at.slider(key="step").set_value(s).run()) for s in range(1, steps + 1)]
    at = apptest.open_page("ask")
    sink = [timed(at, lambda: at.segmented_control(key="part").set_value("sink").run()),
            timed(at, lambda: at.toggle(key="evict").set_value(True).run())]
    report(moves, times, {}, {}, typed="", reference_name="",
           budgets={"step slider, gradient x input on, first visit": 1000})
    print(f"| the sink part's first opening (its shares) | {sink[0] * 1e3:.0f} | |")
    print(f"| the eviction experiment, switched on (?evict=1: once per answer) | {sink[1] * 1e3:.0f} | |")


def browser_side() -> None:
    paths = ["ask", "ask?step=5&every=1", "ask?step=5&grad=1", "ask?part=sink", "ask?lang=zh&lecture=1&step=5"]
    browser_bytes("the default question", "ask", paths)


if __name__ == "__main__":
    command(__file__, __doc__, server_side, browser_side)
