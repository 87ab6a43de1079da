"""The compiled pass (one traced TorchScript graph) gives what the eager recorded pass gives, bit for bit, at
every length, for every kind of model the app runs. What it saves is measured by bench/forward.py."""
import threading

import pytest
import torch

from model.causal.decoding import generate
from model.compiled import CompiledPass, CompiledStep, compiled_pass, compiled_step
from model.fast import accelerate
from model.gpt import GPT, GPTConfig
from model.llama import Llama, LlamaConfig
from model.sampling import Sampling
from model.text_models import TextConfig, TextEncoder

MAX = 64


def text_encoder(**kwargs):
    torch.manual_seed(1)
    return TextEncoder(TextConfig(99, 32, 4, 3, 48, max_len=MAX, **kwargs)).eval()


MODELS = {
    "bert": None,  # the fixture
    "post-LN sinusoidal gelu": dict(),
    "pre-LN learned relu": dict(norm_first=True, positional="learned", activation="relu"),
    "gpt": None,  # a causal language model: its causal mask is built inside the graph, at every length
    "llama": None,  # RoPE's rotation too, and grouped key/value heads
}


def gpt():
    torch.manual_seed(1)
    return GPT(GPTConfig(99, MAX, 32, 3, 4, n_inner=48)).eval()


def llama():
    torch.manual_seed(1)
    model = Llama(LlamaConfig(99, 32, 48, 3, 4, 2, 8, max_position_embeddings=MAX)).eval()
    with torch.no_grad():
        for block in model.blocks:  # norms start at 1, projections small: make the rotation matter
            block.self_attn.q_proj.weight.mul_(8)
            block.norm1.weight.add_(0.3 * torch.randn(32))
    return model


def eager(model, ids):
    """What the app keeps of the eager recorded pass: each layer's input, every attention map (batch of one)."""
    with torch.inference_mode():
        trace = model(ids, record=True).trace
    return (torch.cat([layer.input for layer in trace.layers]),
            torch.cat([layer.self_attn.probs for layer in trace.layers]))


@pytest.mark.parametrize("which", MODELS)
def test_the_compiled_pass_equals_the_recorded_pass_at_every_length(tiny_bert, which):
    model = {"bert": lambda: tiny_bert, "gpt": gpt, "llama": llama}.get(which, lambda: text_encoder(**MODELS[which]))()
    compiled = compiled_pass(model, MAX)
    assert isinstance(compiled, CompiledPass)  # this torch traces it: the app takes the fast path
    g = torch.Generator().manual_seed(3)
    for T in (1, 2, 3, 10, 63, MAX, 10, 2):  # shorter and longer than the traced example, and back
        ids = torch.randint(1, 99, (1, T), generator=g)
        hidden, attentions = compiled(ids)
        want_hidden, want_attentions = eager(model, ids)
        assert hidden.shape == (3, T, 32) and attentions.shape == (3, 4, T, T)
        assert torch.equal(hidden, want_hidden) and torch.equal(attentions, want_attentions), T


def test_a_different_sentence_gives_different_maps(tiny_bert):
    compiled = compiled_pass(tiny_bert, MAX)
    a = compiled(torch.tensor([[5, 6, 7, 8]]))[1]
    b = compiled(torch.tensor([[5, 6, 9, 8]]))[1]
    assert not torch.equal(a, b)


@pytest.mark.parametrize("shape", [(1, 0), (1, MAX + 1), (2, 5), (5,)])
def test_ids_it_cannot_take_are_refused(tiny_bert, shape):
    with pytest.raises(ValueError, match=r"\(1, T\)"):
        compiled_pass(tiny_bert, MAX)(torch.ones(shape, dtype=torch.long))


def test_two_threads_at_once_get_their_own_results(tiny_bert):
    compiled = compiled_pass(tiny_bert, MAX)
    inputs = [torch.randint(1, 99, (1, 20 + i), generator=torch.Generator().manual_seed(i)) for i in range(2)]
    want = [eager(tiny_bert, ids) for ids in inputs]
    got = [[] for _ in inputs]

    def work(i):
        for _ in range(20):
            got[i].append(compiled(inputs[i]))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, results in enumerate(got):
        assert len(results) == 20
        assert all(torch.equal(h, want[i][0]) and torch.equal(a, want[i][1]) for h, a in results)


def test_a_pass_that_cannot_be_traced_leaves_the_eager_path():
    class Untraceable(torch.nn.Module):
        def forward(self, ids, record=True):
            raise RuntimeError("no")

    assert compiled_pass(Untraceable(), MAX) is None



@pytest.mark.parametrize("which", ["gpt", "llama", "llama, accelerated"])
def test_the_compiled_step_writes_what_the_eager_steps_write_bit_for_bit(which):
    """A generation through the traced step: the same words, scores and attention, at every length after the
    traced example's, up to the model's last position (a frozen position or mask would show at once)."""
    model = gpt() if which == "gpt" else llama()
    if "accelerated" in which:
        model = accelerate(model)
    step = compiled_step(model)
    assert isinstance(step, CompiledStep)  # this torch traces it and the check passed: the app takes it
    prompt = torch.randint(1, 99, (6,), generator=torch.Generator().manual_seed(4))
    for sampling in (None, Sampling(temperature=1.5, seed=7)):
        with torch.inference_mode():
            alone, stepped = (generate(model, prompt, MAX, sampling, step=s) for s in (None, step))
        assert stepped.written.numel() == MAX - 6  # to the last position
        assert torch.equal(alone.written, stepped.written) and torch.equal(alone.logits, stepped.logits)
        assert all(torch.equal(a, b) for a, b in zip(alone.attentions, stepped.attentions))


def test_a_step_that_would_differ_from_the_eager_one_is_not_used(monkeypatch):
    """The check on a longer cache than the traced one catches what tracing froze: here the graph is made to read
    its example's length, so `compiled_step` gives None and generation steps eagerly."""
    model = llama()
    real = Llama.forward

    def frozen(self, input_ids, *args, cache=None, **kwargs):  # a position taken from a Python int while tracing
        out = real(self, input_ids, *args, cache=cache, **kwargs)
        if torch.jit.is_tracing():
            out.logits.add_(cache.length)
        return out

    monkeypatch.setattr(Llama, "forward", frozen)
    assert compiled_step(model) is None


def test_the_compiled_step_refuses_what_it_was_not_traced_for():
    model = llama()
    step = compiled_step(model)
    with torch.inference_mode():
        cache = model(torch.zeros(2, 3, dtype=torch.long), use_cache=True).cache
        with pytest.raises(ValueError, match="one word after a cache of one sequence"):
            step(torch.zeros(2, 1, dtype=torch.long), cache)
