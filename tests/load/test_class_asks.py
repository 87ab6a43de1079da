"""A class asking the LLM at once, as a short load run (harness/students/ask.py): 8 students type 8 different
questions on the Ask page within 2 s, watch each answer streamed to its end, move its step and head sliders; one more
student moves the heatmap's sliders meanwhile. Zero errors, every answer streamed before it ended, every move written
back to the link. No timing goals: those belong to bench/class_asks_load.py."""
from urllib.parse import parse_qs

from harness.servers import spawn
from harness.students.ask import ASKER_STEPS, HEATMAP_STEPS, question
from harness.students.classroom import APPS, run_load


def test_eight_students_ask_at_once_and_one_watches_the_heatmap():
    with spawn(APPS["app"], env={"ATTNVIZ_TORCH_THREADS": "1"}) as server:
        report = run_load(server.url, sessions=9, ramp=2, think=(0, 0.3), seed=5, timeout=120, warmup=1,
                          settle=None, pids=[server.pid], script="ask", watch=8.0)
        assert server.proc.poll() is None, server.tail()
    table = report.table()
    assert report.errors == [], table
    assert report.completed == 9, table
    for outcome in report.outcomes:
        kinds = list(dict.fromkeys(s.kind for s in outcome.steps))
        if outcome.index == 0:
            assert kinds == list(HEATMAP_STEPS) and len(outcome.steps) >= 10, table
            continue
        assert kinds == list(ASKER_STEPS), table
        steps = {}
        for s in outcome.steps:
            steps.setdefault(s.kind, []).append(s)
        (asked,), (first,) = steps["ask/question"], steps["ask/first token"]
        assert parse_qs(asked.query_string)["q"] == [question(outcome.index, 5)] == [f"5. {question(outcome.index)}"]
        assert 0 < first.ms < asked.ms  # the first word was on the page before the answer ended
        assert len(steps["ask/step"]) == 3 and len(steps["ask/head"]) == 2
        for move in steps["ask/step"] + steps["ask/head"]:
            key = "step" if move.kind == "ask/step" else "head"
            assert parse_qs(move.query_string).get(key) == [str(move.value)], move
            assert move.fragment_run  # a move reruns the step part only
