"""What the run cache keeps: attention maps and each layer's input, small enough for a class, and the
details recomputed from them equal to a full recorded forward pass."""
import contextlib
import threading
import time

import pytest
import torch

from model.compiled import CompiledPass
from model.loading.sources import RandomConfig
from model.masks import CAUSAL_PADDING, CUSTOM
from runtime import model_thread, models, runs
from runtime.budget import nbytes
from tests.identical import assert_identical

BERT_BASE = models.Choice("random", RandomConfig(768, 12, 12, 3072))


def test_a_bert_base_run_of_128_tokens_costs_under_15_mb():
    run = runs.compute_run(BERT_BASE, "the " * 126)
    assert len(run.tokens) == 128 and run.attentions.shape == (12, 12, 128, 128)
    size = nbytes(run)
    # 12 x 12 x 128 x 128 probabilities + 12 x 128 x 768 layer inputs, float32, and 128 padding flags
    assert size == 4 * (12 * 12 * 128 * 128 + 12 * 128 * 768) + 128
    assert size < 15e6


@pytest.mark.parametrize("mask", [runs.Mask(), runs.Mask(CAUSAL_PADDING, pad_to=14),
                                  runs.Mask(CUSTOM, blocked=(2, 3))])
def test_recomputed_details_equal_a_full_recorded_pass(mask):
    text = "Attention is what the visualizer shows"
    run = runs.compute_run(models.Choice("minilm"), text, mask)
    loaded = models.loaded_model(models.Choice("minilm"))
    attention_mask, attn_mask = runs.model_masks(mask, run.padding)
    assert (attention_mask is None) == (mask.kind != CAUSAL_PADDING)  # the padded case is padded
    with torch.inference_mode():
        full = loaded.model(torch.tensor([run.ids]), attention_mask, attn_mask=attn_mask, record=True).trace
    assert_identical(run.trace.embeddings, full.embeddings, "embeddings")
    assert len(run.trace.layers) == len(full.layers) == run.num_layers
    for i, layer in enumerate(full.layers):
        assert_identical(run.trace.layers[i], layer, f"layer {i}")
        assert torch.equal(torch.from_numpy(run.attentions[i].copy()), layer.self_attn.probs[0])
        assert (run.mask is None) == (layer.self_attn.mask is None)
        if run.mask is not None:
            assert torch.equal(run.mask, layer.self_attn.mask)
    assert torch.equal(run.trace.output, full.output)
    assert not run.attentions.flags.writeable


@pytest.mark.parametrize("mask", [runs.Mask(), runs.Mask("causal")])
def test_a_pre_ln_runs_output_is_the_final_norm_of_its_last_layer(mask):
    """The pass does not compute the stack's output; run.trace.output recomputes it, final norm included."""
    choice = models.Choice("random", RandomConfig(32, 4, 3, 64, norm_first=True))
    run = runs.compute_run(choice, "a pre-LN stack ends with one more norm", mask)
    model = models.loaded_model(choice).model
    attention_mask, attn_mask = runs.model_masks(mask, run.padding)
    with torch.inference_mode():
        full = model(torch.tensor([run.ids]), attention_mask, attn_mask=attn_mask, record=True).trace
    assert run.hidden.shape == (3, len(run.ids), 32)  # each layer's input, not the output
    assert torch.equal(run.trace.output, full.output)
    assert not torch.equal(run.trace.output, full.layers[-1].output)


@pytest.mark.parametrize("raw, expected", [("", None), ("1", 1), (" 2 ", 2)])
def test_torch_threads_setting(raw, expected):
    assert model_thread.torch_threads({"ATTNVIZ_TORCH_THREADS": raw}) == expected
    assert model_thread.torch_threads({}) is None


@pytest.mark.parametrize("raw", ["0", "-1", "two", "1.5"])
def test_a_bad_torch_threads_setting_is_refused_with_its_name(raw):
    with pytest.raises(ValueError, match="ATTNVIZ_TORCH_THREADS"):
        model_thread.torch_threads({"ATTNVIZ_TORCH_THREADS": raw})


def test_loading_a_model_applies_the_torch_threads_setting(monkeypatch):
    before = torch.get_num_threads()
    monkeypatch.setenv("ATTNVIZ_TORCH_THREADS", "1")
    fresh = models.Choice("random", RandomConfig(32, 2, 1, 64, seed=77))  # a model this process has not loaded
    try:
        torch.set_num_threads(2)
        models.loaded_model(fresh)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_passes_from_fresh_threads_run_on_the_same_long_lived_model_threads():
    """Streamlit runs each rerun in a new thread; the model runs on the process's own threads, under
    inference_mode, whichever rerun asks."""
    seen = []

    def where():
        seen.append((threading.get_ident(), threading.current_thread().name, torch.is_inference_mode_enabled()))
        return len(seen)

    callers = [threading.Thread(target=model_thread.on_model_thread, args=(where,)) for _ in range(6)]
    for t in callers:  # one after the other, as reruns that do not overlap
        t.start()
        t.join()
    assert len(seen) == 6 and all(inference for _, _, inference in seen)
    assert all(name.startswith("attnviz-model") for _, name, _ in seen)
    assert len({ident for ident, _, _ in seen}) <= model_thread.workers()
    assert not {ident for ident, _, _ in seen} & {t.ident for t in callers}


def test_an_error_on_a_model_thread_reaches_the_caller():
    def broken():
        raise RuntimeError("checkpoint unreadable")

    with pytest.raises(RuntimeError, match="checkpoint unreadable"):
        model_thread.on_model_thread(broken)
    assert model_thread.on_model_thread(lambda a, b: a + b, 2, 3) == 5  # the thread is still there


def test_only_a_long_pass_shows_a_spinner(monkeypatch):
    """st.spinner costs a thread and a message: a 14 ms pass goes without, a pass past SPINNER_AFTER gets one."""
    shown = []

    @contextlib.contextmanager
    def spinner(text):
        shown.append(text)
        yield

    monkeypatch.setattr(model_thread.st, "spinner", spinner)
    assert model_thread.on_model_thread(lambda: "quick") == "quick" and shown == []
    assert model_thread.on_model_thread(lambda: time.sleep(model_thread.SPINNER_AFTER + 0.2) or "slow") == "slow"
    assert shown == ["Running the model…"]


def test_unmasked_runs_take_the_compiled_pass_and_masked_runs_the_eager_one(monkeypatch):
    """The default model traces here, so a class's passes run without the GIL between operations; a mask (or
    padding) is not in the traced graph and takes the eager pass, which still records the mask."""
    choice = models.Choice("minilm")
    compiled = models.compiling(choice).wait()
    assert compiled is not None and models.compiling(choice).ready() is compiled
    calls = []
    call = CompiledPass.__call__
    # this model's pass only: another model's tracing, queued by an earlier test, may warm its own up meanwhile
    monkeypatch.setattr(CompiledPass, "__call__",
                        lambda self, ids: (self is compiled and calls.append(ids)) or call(self, ids))
    plain = runs.compute_run(choice, "a sentence no other test runs, compiled")
    assert len(calls) == 1 and plain.mask is None
    masked = runs.compute_run(choice, "a sentence no other test runs, compiled", runs.Mask("causal"))
    assert len(calls) == 1 and masked.mask is not None
    assert not (plain.attentions == masked.attentions).all()


def test_a_new_model_runs_its_first_pass_eagerly_and_is_compiled_for_the_next(monkeypatch):
    monkeypatch.setattr(model_thread, "random_traces", 0)
    choice = models.Choice("random", RandomConfig(32, 2, 1, 64, seed=7))  # a model no other test builds
    assert models.compiling(choice).ready() is None
    first = runs.compute_run(choice, "the first pass of a new model")
    assert models.compiling(choice).started
    compiled = models.compiling(choice).wait()  # started by that first pass
    assert compiled is not None
    again = runs.compute_run(choice, "the first pass of a new model")  # compiled now: the same bits
    assert (first.attentions == again.attentions).all() and (first.hidden == again.hidden).all()


def test_a_compiled_pass_that_fails_its_first_call_is_not_used(monkeypatch):
    class Broken:
        def __call__(self, ids):
            raise RuntimeError("graph cannot run")

    monkeypatch.setattr(model_thread, "compiled_pass", lambda m, n: Broken())  # where the app looks it up
    choice = models.Choice("random", RandomConfig(32, 2, 1, 64, seed=8))  # a model no other test builds
    first = runs.compute_run(choice, "a model whose graph fails")
    assert models.compiling(choice).wait() is None
    again = runs.compute_run(choice, "a model whose graph fails, again")  # eager, no error
    assert again.attentions.shape[0] == first.attentions.shape[0] == 1


def test_random_models_from_links_are_traced_only_a_few_times_per_process(monkeypatch):
    """torch.jit.trace keeps about 0.9 MB per layer for good: a visitor's links must not add up."""
    monkeypatch.setattr(model_thread, "random_traces", model_thread.MAX_TRACED_RANDOM - 1)
    first, second = (models.Choice("random", RandomConfig(32, 2, 1, 64, seed=seed)) for seed in (301, 302))
    runs.compute_run(first, "traced: the last one allowed")
    runs.compute_run(second, "not traced: runs eagerly, the same numbers")
    assert models.compiling(first).started and not models.compiling(second).started
    assert model_thread.may_trace(models.Choice("minilm"))  # the operator's checkpoints always are
