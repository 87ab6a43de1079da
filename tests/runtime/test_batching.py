"""Answers written together on the model threads (runtime.batching): questions that arrive while others are answered
join the batch and get the answers they would get alone, word by word as written; the line beyond the limit waits in
order and says how many are ahead; a question nobody follows any more leaves at once; every answer's room is promised
in the memory budget while it is written and given back after."""
import threading
import time
from concurrent.futures import CancelledError, ThreadPoolExecutor

import pytest
import torch

from model.causal.decoding import generate
from model.llama import Llama, LlamaConfig
from model.sampling import Sampling
from runtime import batching, model_thread
from runtime.budget import BoundedCache, OverBudget

MB = 2**20


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(3)
    m = Llama(LlamaConfig(211, 32, 64, 3, 4, 2, 8, max_position_embeddings=128)).eval()
    with torch.no_grad():
        for block in m.blocks:  # words that do not repeat (tests/model/causal/test_batch.py)
            block.self_attn.q_proj.weight.mul_(4)
            block.self_attn.k_proj.weight.mul_(2)
            block.self_attn.o_proj.weight.mul_(10)
            block.mlp.down_proj.weight.mul_(10)
    return m


@pytest.fixture
def room(monkeypatch):
    cache = BoundedCache(max_bytes=64 * MB)
    monkeypatch.setattr(batching, "budget", lambda: cache)
    return cache


def prompt(n: int, seed: int) -> torch.Tensor:
    return torch.randint(0, 211, (n,), generator=torch.Generator().manual_seed(seed))


def alone(model, p, steps, sampling=None):
    with torch.inference_mode():
        return generate(model, p, steps, sampling).written.tolist()


def until(condition, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "not in time"
        time.sleep(0.002)


def test_questions_arriving_while_others_are_answered_join_and_get_their_alone_answers(model, room):
    w = batching.Writer(model)
    asks = [(prompt(5, 0), 40, None), (prompt(17, 1), 30, Sampling(0.9, 30, None, 4)), (prompt(9, 2), 35, None)]
    said = [[] for _ in asks]
    jobs = [w.ask(*asks[0], (), said[0].append)]
    until(lambda: len(said[0]) >= 5)  # the first is being written when the others come
    jobs += [w.ask(*a, (), s.append) for a, s in zip(asks[1:], said[1:])]
    results = [j.future.result(60) for j in jobs]
    for (p, steps, sampling), got, words in zip(asks, results, said):
        assert got.written.tolist() == alone(model, p, steps, sampling) == words
    assert w.ticks < 40 + 30 + 35  # together: fewer steps than the answers' words
    assert room.reserved == 0 and w.idle


def test_beyond_the_limit_a_question_waits_in_order_and_says_how_many_are_ahead(model, room):
    w = batching.Writer(model, limit=1)
    gate = threading.Event()
    first = w.ask(prompt(4, 3), 30, None, (), lambda word: gate.wait(10))  # held at its first word
    second, third = (w.ask(prompt(6, s), 5, None, (), lambda word: None) for s in (4, 5))
    until(lambda: first.ahead() is None)
    assert (second.ahead(), third.ahead()) == (0, 1) and w.in_flight == 1
    gate.set()
    assert third.future.result(60).written.tolist() == alone(model, prompt(6, 5), 5)
    assert second.future.done() and first.future.done()


def test_a_question_nobody_follows_leaves_the_line_or_the_batch_at_once_and_frees_its_room(model, room):
    w = batching.Writer(model, limit=1)
    said, gate = [], threading.Event()

    def slow(word):
        said.append(word)
        gate.wait(10)

    going = w.ask(prompt(8, 6), 60, None, (), slow)
    waiting = w.ask(prompt(8, 7), 60, None, (), lambda word: None)
    until(lambda: said)
    assert room.reserved > 0  # the answer in flight holds its room
    waiting.cancel()
    assert waiting.future.cancelled() and waiting.ahead() is None
    going.cancel()
    gate.set()
    until(lambda: going.future.done())
    assert isinstance(going.future.exception(), CancelledError) and len(said) < 60
    until(lambda: w.idle)
    assert room.reserved == 0 and w.batch.rows == []


def test_an_answer_that_could_never_fit_the_budget_is_refused_with_its_message(model, monkeypatch):
    monkeypatch.setattr(batching, "budget", lambda: BoundedCache(max_bytes=1000))
    w = batching.Writer(model)
    job = w.ask(prompt(8, 8), 20, None, (), lambda word: None)
    with pytest.raises(OverBudget):
        job.future.result(30)


def test_a_reading_that_fails_says_why_to_its_questions_and_the_writer_goes_on(model, room, monkeypatch):
    w = batching.Writer(model)
    monkeypatch.setattr(w.batch, "row_bytes", lambda *args: 1 / 0)
    failing = w.ask(prompt(6, 13), 5, None, (), lambda word: None)
    with pytest.raises(ZeroDivisionError):
        failing.future.result(30)
    monkeypatch.undo()
    assert w.ask(prompt(6, 14), 5, None, (), lambda word: None).future.result(30).written.tolist() == \
        alone(model, prompt(6, 14), 5)
    until(lambda: w.idle)
    assert room.reserved == 0


def test_the_model_is_kept_in_the_budget_while_its_answers_are_written(model, room):
    room.put("the model", torch.zeros(1000), kind="model")
    w = batching.Writer(model, spare=("the model",))
    gate, said = threading.Event(), []
    job = w.ask(prompt(6, 10), 10, None, (), lambda word: (said.append(word), gate.wait(10)))
    until(lambda: said)
    assert room._items["the model"].pinned  # a class's answers make room by dropping anything but their model
    gate.set()
    job.future.result(30)
    until(lambda: w.idle)
    assert "the model" in room and not room._items["the model"].pinned


def test_an_answer_in_flight_goes_on_while_a_newcomer_s_prompt_is_read(model, room, monkeypatch):
    """A newcomer's prompt is read on the other model thread: the answers in flight get their next words meanwhile
    (held here at its first word, said when its reading ends, the newcomer never stops them)."""
    threads = ThreadPoolExecutor(2, thread_name_prefix="attnviz-model")  # two model threads, as the image's two cores
    monkeypatch.setattr(model_thread, "model_threads", lambda: threads)
    w = batching.Writer(model)
    said, reading, gate = [], threading.Event(), threading.Event()
    first = w.ask(prompt(5, 11), 100, None, (), lambda word: (said.append(word), time.sleep(0.005)))
    until(lambda: len(said) >= 2)
    newcomer = w.ask(prompt(7, 12), 5, None, (), lambda word: reading.set() or gate.wait(20))
    until(reading.is_set)
    at = len(said)
    until(lambda: len(said) >= at + 5 or first.future.done(), timeout=10)
    gate.set()
    assert len(said) >= at + 5  # written while the newcomer's reading was held
    assert newcomer.future.result(30).written.tolist() == alone(model, prompt(7, 12), 5)
    assert first.future.result(60).written.tolist() == alone(model, prompt(5, 11), 100) == said
    threads.shutdown()
