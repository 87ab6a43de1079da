"""The lesson as a short load run: 8 students walk the guided tour on one server (harness/students/tour.py), one of
them starting a live training on the Translate page; zero errors, and every stop and action of the tour done as its
links and pages say. No timing asserts: timings belong to bench/tour_load.py."""
from urllib.parse import parse_qs

from harness.servers import spawn
from harness.students.classroom import APPS, run_load
from harness.students.tour import ANSWER, NEXT_CLICKS, RESEARCH
from views.shell.tour_stops import STOPS

LIVE_STEPS = 30  # the live translator's steps (ATTNVIZ_LIVE_STEPS): a few seconds
TYPED = {"heatmap": "text", "translate": "src"}  # the pages a student types its own sentence on, and the box
STEPPED = {"steps", "next", "look"}  # the ?part= of the stops that step: Translate, Language model, Ask pages


def expected_steps(live: bool) -> list[str]:
    """Every step of one student's walk, from the tour's own stops (a live run's polls counted once)."""
    kinds = ["tour/open"]
    for k, stop in enumerate(STOPS, 1):
        name = f"{k} {stop.path}"
        kinds.append(f"{name}/open")
        kinds += [f"{name}/type"] * (stop.path in TYPED)
        kinds += [f"{name}/next"] * (NEXT_CLICKS if stop.params.get("part") in STEPPED else 0)
        kinds.append(f"{name}/slider")
        if live and stop.path == "translate":
            kinds += [f"{name}/live part", f"{name}/live start", f"{name}/live poll"]
    return kinds + [f"{path}/open" for path in RESEARCH]


def walk(outcome) -> list[str]:
    """The student's steps in order, a run of live polls as one."""
    kinds = [s.kind for s in outcome.steps if not s.kind.endswith(ANSWER)]
    return [kind for i, kind in enumerate(kinds) if not (kind.endswith("live poll") and kinds[i - 1] == kind)]


def streamed(outcome) -> list[tuple]:
    """(the step, its whole answer) of each step whose page streamed an LLM's answer."""
    steps = outcome.steps
    return [(steps[i - 1], s) for i, s in enumerate(steps) if s.kind.endswith(ANSWER)]


def test_eight_students_walk_the_tour_and_one_trains_live():
    env = {"ATTNVIZ_TORCH_THREADS": "1", "ATTNVIZ_LIVE_STEPS": str(LIVE_STEPS)}
    with spawn(APPS["app"], env=env) as server:
        report = run_load(server.url, sessions=8, ramp=2, think=(0, 0.3), seed=3, timeout=60, warmup=1,
                          settle=None, pids=[server.pid], script="tour", live="translate", live_student=2)
        assert server.proc.poll() is None, server.tail()
    table = report.table()
    assert report.errors == [], table
    assert report.completed == 8, table
    for outcome in report.outcomes:
        live = outcome.index == 2
        assert walk(outcome) == expected_steps(live), table
        steps = {}
        for s in outcome.steps:
            steps.setdefault(s.kind, []).append(s)
        for k, stop in enumerate(STOPS, 1):
            name = f"{k} {stop.path}"
            assert parse_qs(steps[f"{name}/open"][0].query_string)["tour"] == [str(k)]
            (moved,) = steps[f"{name}/slider"]  # what the student set is what the page wrote back to its URL
            key, value = moved.value
            assert parse_qs(moved.query_string)[key] == [str(value)], (name, moved.query_string)
            if stop.path in TYPED:
                (typed,) = steps[f"{name}/type"]
                assert parse_qs(typed.query_string)[TYPED[stop.path]] == [typed.value]
            for press in steps.get(f"{name}/next", []):  # one step further, unless at the last step
                before, last = press.value
                assert parse_qs(press.query_string)["step"] == [str(min(before + 1, last))], name
        sentence = steps["2 heatmap/type"][0].value
        for path in RESEARCH:  # opened on the student's own sentence
            assert parse_qs(steps[f"{path}/open"][0].query_string)["text"] == [sentence]
            assert steps[f"{path}/open"][0].charts >= 1
        assert ("live" in outcome.notes) == live
    for k, stop in enumerate(STOPS, 1):  # the presses moved the decoding on (a student may arrive at its last step)
        presses = [s for s in report.steps if s.kind == f"{k} {stop.path}/next"]
        assert len(presses) == (8 * NEXT_CLICKS if stop.params.get("part") in STEPPED else 0)
        assert not presses or sum(before < last for before, last in (s.value for s in presses)) >= 8, stop
    answers = [pair for outcome in report.outcomes for pair in streamed(outcome)]
    assert answers, table  # the Ask stops' answers: the page's step timed to its first word, then the whole answer
    for first, whole in answers:
        assert whole.kind == first.kind + ANSWER and 0 < first.ms <= whole.ms, (first, whole)
    notes = report.outcomes[2].notes["live"]
    assert notes["finished"] and notes["steps"] == LIVE_STEPS and notes["polls"] >= 1, notes
    trainings = [p for p in report.processes.values() if "training.train" in p["command"]]
    assert len(trainings) == 1 and trainings[0]["peak"] > 50 * 2**20, report.processes
    assert report.children_cpu_s > 0, table


def test_a_live_part_that_cannot_start_is_an_error():
    """With live training off on the server (ATTNVIZ_LIVE_STEPS=0), the Translate page has no start button: the
    student says so, does not wait for a run, and walks the rest of the tour."""
    with spawn(APPS["app"], env={"ATTNVIZ_LIVE_STEPS": "0"}) as server:
        report = run_load(server.url, sessions=1, ramp=0, think=(0, 0), burst=True, seed=4, timeout=60, warmup=0,
                          settle=None, script="tour", live="translate")
    (outcome,) = report.outcomes
    assert [(e.step, e.message) for e in report.errors] == [
        ("9 translate/live start", "no button 'live_start' on the page")], report.table()
    assert not outcome.notes["live"]["finished"] and outcome.notes["live"]["polls"] == 0
    assert walk(outcome) == [k for k in expected_steps(True) if not k.endswith(("live start", "live poll"))]
