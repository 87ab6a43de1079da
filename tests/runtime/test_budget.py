"""One byte budget for models, passes and images: room made before a model is built, a model that cannot fit
refused, held passes dropped last, a dropped model freed at once."""
import random
import threading
import weakref
from collections import Counter

import numpy as np
import pytest

from harness.apptest import charts, open_page
from model.loading.footprint import module_bytes
from model.loading.sources import RandomConfig
from runtime import budget as budget_module
from runtime import memory, models
from runtime.budget import BoundedCache, OverBudget

MB = 2**20


def array(mb: float) -> np.ndarray:
    return np.zeros(int(mb * MB), dtype=np.uint8)


def test_models_and_passes_share_one_byte_budget():
    cache = BoundedCache(max_entries=10, max_bytes=100 * MB)
    for i in range(4):
        cache.put(("pass", i), array(20))
    seen_in_build = []

    def build_model():
        seen_in_build.append((cache.bytes, len(cache)))  # room was made before this ran
        return array(50)

    cache.get_or_build("model", build_model, kind="model", estimate=50 * MB)
    assert seen_in_build == [(40 * MB, 2)]  # the two oldest passes went first
    assert ("pass", 0) not in cache and ("pass", 3) in cache and cache.bytes == 90 * MB
    cache.put(("pass", 4), array(20))  # a new pass pushes out what was used least recently
    assert ("pass", 2) not in cache and "model" in cache and cache.bytes == 90 * MB
    cache.get(("pass", 3))
    cache.put(("pass", 5), array(20))  # now the model is the least recently used: it goes
    assert "model" not in cache and cache.bytes == 60 * MB


def test_a_model_that_can_never_fit_is_refused_before_it_is_built():
    cache = BoundedCache(max_bytes=100 * MB)
    cache.put("default", array(30), kind="model", pinned=True)
    built = []
    with pytest.raises(OverBudget, match="about 80 MB.*at most 70 MB"):
        cache.get_or_build("huge", lambda: built.append(1), kind="model", estimate=80 * MB)
    assert not built and "default" in cache
    cache.clear()
    assert "default" in cache  # the default model stays


def test_held_passes_go_after_every_unheld_one_and_only_when_the_room_is_needed():
    cache = BoundedCache(max_entries=3, max_bytes=100 * MB)
    cache.put("mine", array(10))
    claim = cache.hold("mine")
    for i in range(5):  # the class's sentences
        cache.put(i, array(10))
    assert "mine" in cache and len(cache) == 3
    cache.get_or_build("big model", lambda: array(95), kind="model", estimate=95 * MB)
    assert "mine" not in cache  # the budget needed its room
    assert claim.key == "mine" and cache.hold("mine") is None


def test_one_build_per_key_however_many_sessions_ask_at_once():
    cache = BoundedCache()
    started, release, calls = threading.Event(), threading.Event(), []

    def build():
        calls.append(1)
        started.set()
        release.wait(5)
        return "model"

    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get_or_build("k", build))) for _ in range(4)]
    threads[0].start()
    started.wait(5)
    for t in threads[1:]:
        t.start()
    release.set()
    for t in threads:
        t.join(5)
    assert calls == [1] and results == ["model"] * 4


def test_a_builder_interrupted_by_a_rerun_leaves_the_build_to_the_next_session():
    class Rerun(BaseException):  # as Streamlit's RerunException and StopException: not an Exception
        pass

    cache = BoundedCache()

    def interrupted():
        raise Rerun

    with pytest.raises(Rerun):
        cache.get_or_build("k", interrupted)
    assert cache.get_or_build("k", lambda: "built") == "built" and cache.reserved == 0


def test_a_dropped_model_is_freed_at_once_even_after_tracing(monkeypatch):
    """torch.jit.trace leaves the model in a reference cycle: without a collection, a dropped model stays."""
    small = [models.Choice("random", RandomConfig(64, 2, 2, 128, seed=seed)) for seed in (201, 202, 203)]
    budget = memory.budget()
    budget.clear()
    size = module_bytes(models.loaded_model(small[0]).model)
    monkeypatch.setattr(budget, "max_bytes", budget.bytes + size // 2)  # room for one of them, not two
    alive = []
    for choice in small:
        loaded = models.loaded_model(choice)
        assert models.compiling(choice).wait() is not None  # traced, as the app does after a first pass
        alive.append(weakref.ref(loaded.model))
        del loaded
    assert [ref() is not None for ref in alive] == [False, False, True]


def test_a_random_model_too_big_for_the_server_gets_a_plain_message(monkeypatch):
    budget = memory.budget()
    monkeypatch.setattr(budget, "max_bytes", budget.bytes + 100 * MB)
    at = open_page("heatmap", "Attention heatmap", model="random", d_model="768", layers="12", d_ff="3072",
                   heads="12", seed="7")
    assert not at.exception
    message = at.error[0].value
    assert "not run, to keep the server up for everyone" in message and "Pick a smaller model" in message
    assert "MB" in message and not charts(at)


def test_room_for_a_pass_is_made_for_its_time_without_dropping_the_model_it_runs_on():
    cache = BoundedCache(max_bytes=100 * MB)
    cache.put("model", array(40), kind="model")
    cache.put("old pass", array(30))
    with cache.room(50 * MB, spare=("model",)):
        assert "model" in cache and "old pass" not in cache and cache.reserved == 50 * MB
        with pytest.raises(OverBudget), cache.room(61 * MB, spare=("model",)):  # beside the model: cannot fit
            pass
    assert cache.reserved == 0


def test_a_pass_too_big_for_the_server_gets_a_plain_message(monkeypatch):
    budget = memory.budget()
    monkeypatch.setattr(budget, "max_bytes", budget.bytes + 300 * MB)
    words = " ".join(["attention"] * 500)
    at = open_page("encoder-decoder", "Encoder-decoder", model="random", d_model="128", heads="16", layers="12",
                   d_ff="512", src=words, tgt=words)
    assert not at.exception
    assert "not run, to keep the server up for everyone" in at.error[0].value
    assert "or a shorter text" in at.error[0].value


def test_a_dropped_model_never_traced_is_freed_without_holding_everyone_up_for_a_collection(monkeypatch):
    """A full collection stops every session for a quarter of a second in a warmed-up server: only a traced model,
    in its reference cycle, needs one."""
    small = [models.Choice("random", RandomConfig(64, 2, 2, 128, seed=seed)) for seed in (211, 212)]
    budget = memory.budget()
    budget.clear()
    collections = []
    monkeypatch.setattr(budget_module.gc, "collect", lambda *a: collections.append(a) or 0)
    size = module_bytes(models.loaded_model(small[0]).model)
    monkeypatch.setattr(budget, "max_bytes", budget.bytes + size // 2)  # room for one of them, not two
    first = weakref.ref(models.loaded_model(small[0]).model)
    assert not models.compiling(small[0]).started  # its first pass would start the tracing: none here
    models.loaded_model(small[1])  # drops the first
    assert first() is None and collections == []


def test_a_model_in_memory_is_not_looked_for_again(monkeypatch):
    """A page's pass finds its resident model in the budget without listing every source (which reads files), and
    the look counts one hit, no miss."""
    default = models.Choice(models.DEFAULT_KEY)
    first = models.resident(default)
    looked = []
    monkeypatch.setattr(models, "find_source", lambda key: looked.append(key))
    hits, misses = memory.budget().hits, memory.budget().misses
    assert models.resident(default) is first and looked == []
    assert (memory.budget().hits, memory.budget().misses) == (hits + 1, misses)


def test_the_caps_and_the_pinned_bytes_stay_counted_through_a_class_worth_of_changes():
    """The budget keeps its counts (entries per capped kind, pinned bytes) as entries come and go, rather than
    counting every entry under its lock on each insertion: after many random puts, builds, holds, replacements and
    clears, the counts are what the entries themselves add up to, and every cap holds."""
    rng = random.Random(7)
    cache = BoundedCache(max_entries=6, max_bytes=60 * MB, kind_entries={"model": 2, "image": 3})
    claims = []
    for step in range(600):
        kind = rng.choice(["forward", "forward", "image", "model", "layer"])
        key = (kind, rng.randrange(12))
        action = rng.random()
        if action < 0.5:
            cache.put(key, array(rng.choice([0.5, 1, 4])), kind=kind, pinned=kind == "model" and rng.random() < 0.1)
        elif action < 0.8:
            cache.get_or_build(key, lambda: array(1), kind=kind, estimate=MB)
        elif action < 0.95:
            claim = cache.hold(key)
            if claim is not None:
                claims.append(claim)
            if len(claims) > 4:
                claims.pop(0)
        else:
            cache.clear()
        with cache._room:
            entries = list(cache._items.values())
            assert cache._pinned == sum(e.size for e in entries if e.pinned), step
            counted = Counter(cache._group(e.kind) for e in entries)
            assert +cache._entries == +counted, step
            assert counted[None] <= 6 and counted["image"] <= 3  # passes and layers; images (models may be pinned)
            assert cache.bytes == sum(e.size for e in entries) <= cache.max_bytes


def test_room_promised_to_work_that_outlives_a_block_evicts_waits_or_refuses():
    cache = BoundedCache(max_bytes=100 * MB)
    cache.put("model", array(40), kind="model", pinned=True)
    for i in range(3):
        cache.put(("pass", i), array(15))
    assert cache.try_reserve(30 * MB)  # the oldest pass goes for it
    assert ("pass", 0) not in cache and ("pass", 1) in cache and cache.reserved == 30 * MB
    assert cache.try_reserve(15 * MB) and ("pass", 1) not in cache and ("pass", 2) in cache
    assert not cache.try_reserve(20 * MB)  # only promises are in the way: nothing promised, ask again later
    assert ("pass", 2) in cache and cache.reserved == 45 * MB  # and nothing dropped for it
    with pytest.raises(OverBudget, match="about 70 MB.*at most 60 MB"):
        cache.try_reserve(70 * MB)  # beside the pinned model it can never fit
    cache.release(30 * MB)
    assert cache.try_reserve(20 * MB) and cache.reserved == 35 * MB


def test_room_promised_never_drops_the_model_the_work_runs_on():
    cache = BoundedCache(max_bytes=100 * MB)
    cache.put("model", array(70), kind="model")
    cache.put("pass", array(20))
    assert cache.try_reserve(10 * MB, spare=("model",)) and "pass" in cache  # it fits as it is
    assert not cache.try_reserve(25 * MB, spare=("model",))  # only the pass could go: not enough, nothing dropped
    assert "model" in cache and "pass" in cache
    assert cache.try_reserve(15 * MB, spare=("model",)) and "model" in cache and "pass" not in cache
    with pytest.raises(OverBudget):
        cache.try_reserve(35 * MB, spare=("model",))  # beside the model it can never fit


def test_an_entry_kept_for_work_under_way_is_not_dropped_until_the_work_ends():
    cache = BoundedCache(max_bytes=100 * MB)
    cache.put("model", array(50), kind="model")
    assert cache.keep("model") and cache.keep("model") and not cache.keep("absent")
    cache.put("pass", array(60))  # would push the model out, were it not kept
    assert "model" in cache
    cache.unkeep("model")
    assert cache._items["model"].pinned  # kept twice: still kept
    cache.unkeep("model")
    cache.put("other", array(60))
    assert "model" not in cache  # no longer kept: it goes as any entry
    cache.put("default", array(10), kind="model", pinned=True)
    cache.keep("default")
    cache.unkeep("default")
    assert cache._items["default"].pinned  # pinned for good stays pinned


def test_too_many_models_drop_a_random_one_before_a_checkpoint_even_one_used_less_recently():
    """The count cap of a kind drops its cheap entries first (a random model, built again in a moment): a tour's four
    random models must not push out SmolLM2, read from its file and traced in seconds, because it was used longest
    ago. With no cheap entry left, the least recently used goes, as before."""
    cache = BoundedCache(max_entries=10, max_bytes=100 * MB, kind_entries={"model": 3})
    cache.get_or_build("checkpoint", lambda: array(20), kind="model")
    cache.get_or_build("random 1", lambda: array(1), kind="model", cheap=True)
    cache.get_or_build("random 2", lambda: array(1), kind="model", cheap=True)
    cache.get_or_build("random 3", lambda: array(1), kind="model", cheap=True)
    assert "checkpoint" in cache and "random 1" not in cache and {"random 2", "random 3"} <= set(cache._items)
    cache.get_or_build("checkpoint 2", lambda: array(20), kind="model")
    cache.get_or_build("checkpoint 3", lambda: array(20), kind="model")
    assert set(cache._items) == {"checkpoint", "checkpoint 2", "checkpoint 3"}  # the random ones went first
    cache.get_or_build("checkpoint 4", lambda: array(20), kind="model")
    assert "checkpoint" not in cache and len(cache) == 3  # none cheap: the least recently used


def test_the_budget_marks_random_models_cheap_and_checkpoints_not(monkeypatch):
    cache = BoundedCache()
    monkeypatch.setattr(models, "budget", lambda: cache)
    models.loaded_model(models.Choice("random", RandomConfig(d_model=32, nhead=2, num_layers=1, d_ff=64)))
    models.loaded_model(models.Choice(models.DEFAULT_KEY))
    assert sorted((e.cheap, k[1].key) for k, e in cache._items.items()) == [(False, models.DEFAULT_KEY),
                                                                             (True, "random")]
