"""Heavy work at class scale: what is the same for everyone is computed once however many students ask at once
(each waiting one told why), and work on the model threads queues in order, each queued student told how many
requests are ahead."""
import threading
import time

import pytest

from runtime import memory, model_thread
from runtime.memory import budget
from runtime.models import Choice, loaded_translator
from runtime.runs import shared_run
from views.pages import atlas, rollout
from views.shell.tour_stops import STOPS
from views.translate import heads as translate_heads

CLASS = 40


def _at_once(fn, n: int = CLASS) -> list:
    """fn() from n threads released together; their results."""
    start, results, errors = threading.Barrier(n), [None] * n, []

    def one(i):
        start.wait()
        try:
            results[i] = fn()
        except Exception as e:  # noqa: BLE001 - collected, then asserted empty
            errors.append(e)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    return results


def _tour_run():
    """The run of the tour's text on its model, as the rollout and atlas pages open it from the tour."""
    params = next(s.params for s in STOPS if s.path == "heatmap")
    return shared_run(Choice(params["model"]), params["text"])


@pytest.mark.parametrize("name, compute, kind", [
    ("atlas", lambda run: atlas.atlas_of(run), "image"),
    ("rollout", lambda run: rollout.rollouts_of(run), "attribution"),
    ("flow", lambda run: rollout.flow_of(run, 3, 5), "attribution"),
    ("saliency", lambda run: rollout.saliency_of(run, "sentence", 0), "attribution"),
])
def test_forty_students_asking_for_the_tours_preset_at_once_cost_one_computation(name, compute, kind):
    run = _tour_run()
    for key in [k for k in list(budget()._items) if isinstance(k, tuple) and k[:1] == (name,)]:
        budget()._drop(key)
    before = memory.COMPUTED[kind]
    results = _at_once(lambda: compute(run))
    assert memory.COMPUTED[kind] - before == 1
    assert all(r is results[0] for r in results)  # one object, shared


def test_forty_students_ranking_the_translators_heads_at_once_cost_one_ranking(monkeypatch):
    model = loaded_translator().translator
    calls = []
    real = translate_heads.ablation.rank
    monkeypatch.setattr(translate_heads.ablation, "rank", lambda *a: calls.append(1) or real(*a))
    with budget()._room:
        if translate_heads.RANKING_KEY in budget():
            budget()._drop(translate_heads.RANKING_KEY)
    results = _at_once(lambda: translate_heads.ranking(model), n=8)  # a ranking takes seconds: 8 are enough here
    assert len(calls) == 1 and all(r is results[0] for r in results)


def test_a_student_waiting_for_anothers_build_is_told_why(monkeypatch):
    said = []
    monkeypatch.setattr(memory, "shared_wait", lambda: _Recording(said))
    release = threading.Event()
    first = threading.Thread(target=lambda: memory.cached(("slow", 1), lambda: release.wait(5) and "done"))
    first.start()
    time.sleep(0.1)
    second = threading.Thread(target=lambda: memory.cached(("slow", 1), lambda: "built twice"))
    second.start()
    time.sleep(0.1)
    release.set()
    first.join(), second.join()
    assert said == ["entered", "left"]
    assert budget().get(("slow", 1)) == "done"


class _Recording:
    def __init__(self, said):
        self.said = said

    def __enter__(self):
        self.said.append("entered")

    def __exit__(self, *exc):
        self.said.append("left")


def test_queued_jobs_know_how_many_are_ahead_and_a_cancelled_one_leaves_the_line():
    workers = model_thread.workers()
    go = threading.Event()
    busy = [model_thread.QUEUE.submit(go.wait, (10,)) for _ in range(workers)]
    time.sleep(0.1)  # every model thread is now taken
    queued = [model_thread.QUEUE.submit(lambda: None, ()) for _ in range(3)]
    places = [place for _, place in queued]
    assert [model_thread.QUEUE.ahead(p) for p in places] == [0, 1, 2]
    assert queued[0][0].cancel()
    assert [model_thread.QUEUE.ahead(p) for p in places[1:]] == [0, 1]
    go.set()
    for future, _ in busy + queued[1:]:
        future.result(timeout=10)
    assert [model_thread.QUEUE.ahead(p) for p in places] == [0, 0, 0]


def test_the_page_says_the_place_in_the_queue_until_the_job_starts(monkeypatch):
    notices = []

    class Notice:
        def info(self, text, icon=None):
            notices.append(text)

        def empty(self):
            notices.append(None)

    monkeypatch.setattr(model_thread.st, "empty", Notice)
    workers = model_thread.workers()
    go = threading.Event()
    busy = [model_thread.QUEUE.submit(go.wait, (10,)) for _ in range(workers)]
    ahead = [model_thread.QUEUE.submit(time.sleep, (0.3,)) for _ in range(2)]
    threading.Timer(0.5, go.set).start()
    assert model_thread.on_model_thread(lambda: "mine") == "mine"
    for future, _ in busy + ahead:
        future.result(timeout=10)
    texts = [n for n in notices if n]
    assert texts[0].endswith("2 requests ahead of it…")
    assert texts == sorted(texts, key=lambda t: -int(t.split("queued, ")[1][0]) if "queued, " in t else 0)
    assert notices[-1] is None  # the notice goes once the job runs
