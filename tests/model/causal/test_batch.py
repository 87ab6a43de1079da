"""Answers written together (model.causal.batch) are the answers written alone (model.causal.decoding.generate): the
same words, token for token, greedy and seeded sampled, for rows of mixed lengths that join at different steps and
leave when they are done; and what a page reads of each (the attention maps, the layers' outputs, the likeliest words)
equal to the alone writing's within float32 rounding; alone in the batch, bit for bit."""
import pytest
import torch

from model.causal import batch as batch_module
from model.causal.batch import Batch
from model.causal.compiled_batch import compiled_batch_layers
from model.causal.decoding import choices, generate
from model.causal.logit_lens import layer_outputs
from model.causal.rows import TOP, Joining
from model.gpt import GPT, GPTConfig
from model.llama import Llama, LlamaConfig
from model.sampling import Sampling

MAX = 96


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(3)
    m = Llama(LlamaConfig(211, 32, 64, 3, 4, 2, 8, max_position_embeddings=MAX)).eval()
    with torch.no_grad():
        for block in m.blocks:  # norms start at 1, projections small: make the rotation and the attention matter,
            block.self_attn.q_proj.weight.mul_(4)  # and the blocks write enough for greedy words not to repeat
            block.self_attn.k_proj.weight.mul_(2)
            block.norm1.weight.add_(0.3 * torch.randn(32))
            block.self_attn.o_proj.weight.mul_(10)
            block.mlp.down_proj.weight.mul_(10)
    return m


def alone(model, prompt, steps, sampling=None, stop=(), heads=()):
    with torch.inference_mode():
        return generate(model, prompt, steps, sampling, heads, stop)


def together(model, asks, off=None):
    """asks: (join at step, prompt, steps, sampling, stop) each; the batch stepped until every row is done.
    Returns the rows in the order asked, and the words each row said (on_word) as it wrote them."""
    batch, rows, said = Batch(model, off), [None] * len(asks), [[] for _ in asks]
    with torch.inference_mode():
        step = 0
        while step == 0 or batch.rows or any(r is None for r in rows):
            for i, (at, prompt, steps, sampling, stop) in enumerate(asks):
                if at == step:
                    rows[i] = batch.join(prompt, steps, sampling, stop, said[i].append)
            batch.step()
            step += 1
    return rows, said


def check_same(model, row, said, prompt, steps, sampling=None, stop=(), heads=()):
    ref = alone(model, prompt, steps, sampling, stop, heads)
    got = row.result()
    assert got.written.tolist() == ref.written.tolist() == said  # token for token, and streamed as written
    T = ref.attentions[0].size(-1)
    expected = torch.stack(ref.attentions)
    assert got.attentions.shape == expected.shape == (3, 4, T, T)
    torch.testing.assert_close(got.attentions, expected, atol=1e-5, rtol=0)
    candidates, final, tempered = choices(ref.logits, sampling, TOP)
    assert torch.equal(got.candidates, candidates)
    torch.testing.assert_close(got.final, final, atol=1e-5, rtol=0)
    torch.testing.assert_close(got.tempered, tempered, atol=1e-5, rtol=0)
    with torch.inference_mode():
        read = torch.cat([prompt, ref.written[:-1]]) if len(ref.written) else prompt
        expected = layer_outputs(model, read, heads)[:, prompt.numel() - 1:]  # the rows the steps read
        torch.testing.assert_close(got.hidden, expected, atol=1e-4, rtol=1e-4)
    return got


def prompts(*lengths, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, 211, (n,), generator=g) for n in lengths]


def test_one_row_alone_in_the_batch_writes_what_generate_writes_bit_for_bit(model):
    (prompt,) = prompts(11)
    (row,), (said,) = together(model, [(0, prompt, 20, None, ())])
    ref, got = alone(model, prompt, 20), row.result()
    assert got.written.tolist() == ref.written.tolist() == said and len(said) == 20
    assert torch.equal(got.attentions, torch.stack(ref.attentions))  # the same ops: the same bits
    # the steps' scores too; the first word's are read from the prompt's last row alone, not from all 11 rows at once
    assert torch.equal(got.final[1:], choices(ref.logits, None, TOP)[1][1:])
    assert len(set(said)) > 5  # a model that writes, not one word again and again


def test_greedy_answers_of_mixed_lengths_and_arrival_times_are_the_answers_written_alone(model):
    ps = prompts(3, 9, 17, 30, 1, seed=1)
    asks = [(0, ps[0], 12, None, ()), (0, ps[1], 25, None, ()), (2, ps[2], 7, None, ()), (5, ps[3], 15, None, ()),
            (9, ps[4], 30, None, ())]  # the last joins after the third has left
    rows, said = together(model, asks)
    for row, words, (_at, prompt, steps, _s, _stop) in zip(rows, said, asks):
        got = check_same(model, row, words, prompt, steps)
        assert len(got.written) == steps


def test_seeded_sampled_answers_are_the_answers_written_alone(model):
    ps = prompts(5, 14, 8, seed=2)
    ways = [Sampling(0.8, 20, None, 7), Sampling(1.3, None, 0.9, 11), Sampling(1.0, 5, 0.95, 7)]
    asks = [(at, p, 18, way, ()) for at, p, way in zip((0, 3, 3), ps, ways)]
    rows, said = together(model, asks)
    for row, words, (_at, prompt, steps, way, _stop) in zip(rows, said, asks):
        check_same(model, row, words, prompt, steps, way)
    assert said[0] != said[2]  # the same seed on other prompts: other words


def test_a_row_that_writes_a_stop_word_leaves_and_the_others_go_on(model):
    ps = prompts(6, 10, seed=4)
    first = alone(model, ps[0], 20).written.tolist()
    stop = (first[4],)  # the fifth word it writes ends its answer
    rows, said = together(model, [(0, ps[0], 20, None, stop), (0, ps[1], 20, None, ())])
    assert said[0] == first[:first.index(stop[0]) + 1]
    check_same(model, rows[0], said[0], ps[0], 20, stop=stop)
    check_same(model, rows[1], said[1], ps[1], 20)


def test_a_row_that_leaves_mid_answer_frees_its_place_and_changes_no_other(model):
    ps = prompts(4, 12, 7, seed=5)
    batch, said = Batch(model), [[], [], []]
    with torch.inference_mode():
        rows = [batch.join(p, 16, on_word=s.append) for p, s in zip(ps, said)]
        for _ in range(5):
            batch.step()
        batch.leave(rows[1])
        assert rows[1] not in batch.rows and len(batch.rows) == 2
        while batch.rows:
            batch.step()
    assert len(said[1]) == 6  # it wrote nothing after it left
    with pytest.raises(ValueError):
        rows[1].result()
    check_same(model, rows[0], said[0], ps[0], 16)
    check_same(model, rows[2], said[2], ps[2], 16)


def test_heads_switched_off_write_what_generate_writes_with_them_off(model):
    heads = ((0, 1), (2, 3))
    ps = prompts(5, 13, seed=6)
    rows, said = together(model, [(0, ps[0], 14, None, ()), (1, ps[1], 10, None, ())], model.heads_off(heads))
    for row, words, p, steps in zip(rows, said, ps, (14, 10)):
        check_same(model, row, words, p, steps, heads=heads)
    assert not torch.allclose(alone(model, ps[0], 1, heads=heads).logits, alone(model, ps[0], 1).logits)  # they matter


def test_a_row_stops_where_the_context_ends_and_a_row_of_no_steps_is_done_at_once(model):
    (long, short) = prompts(MAX - 3, 4, seed=8)
    rows, said = together(model, [(0, long, 20, None, ()), (0, short, 0, None, ())])
    assert len(said[0]) == 3 and said[1] == [] and rows[1].done
    check_same(model, rows[0], said[0], long, 20)
    assert rows[1].result().attentions.shape == (3, 4, 4, 4)


def test_a_row_keeps_its_own_keys_and_values_sized_for_its_prompt_and_most_words(model):
    batch = Batch(model)
    with torch.inference_mode():
        row = batch.join(prompts(9)[0], 30)
    assert row.cache_bytes == batch.token_bytes() * (9 + 30)
    assert batch.token_bytes() == 2 * 3 * 2 * 8 * 4  # k and v, 3 layers, 2 key/value heads of 8, float32


def held(row) -> int:
    """Every byte a row's tensors hold (their whole storages: a view would hold what it is cut from)."""
    kept = [row.cache, row.maps, row.hidden, row.candidates, row.final, row.tempered]
    return sum(t.untyped_storage().nbytes() for t in kept)


@pytest.mark.parametrize("shared", [0, 5])
def test_the_room_a_row_is_promised_is_what_it_holds_and_no_step_adds_to_it(model, shared):
    batch = Batch(model)
    p = prompts(9, seed=4)[0]
    with torch.inference_mode():
        if shared:  # a beginning read before: the row copies its part of it
            batch.join(torch.cat([p[:shared], prompts(3, seed=5)[0]]), 1, shared=shared)
        row = batch.join(p, 12, shared=shared)
        joined = held(row)
        while not row.done:
            batch.step()
    assert len(row.written) == 12
    assert held(row) == joined == row.held_bytes == batch.row_bytes(9, 12)
    assert batch.row_bytes(9, 12) < row.result().attentions.nbytes + row.cache_bytes  # not the finished square


def test_a_model_without_rotary_positions_is_refused():
    with pytest.raises(ValueError, match="rotary"):
        Batch(GPT(GPTConfig(50, 32, 16, 1, 2)).eval())


def test_a_beginning_many_prompts_share_is_read_once_and_changes_no_answer(model):
    beginning = prompts(9, seed=10)[0]  # a chat template's system prompt, say
    ps = [torch.cat([beginning, rest]) for rest in prompts(4, 7, 1, seed=11)]
    batch, said = Batch(model), [[], [], []]
    with torch.inference_mode():
        rows = [batch.join(p, 15, on_word=s.append, shared=9) for p, s in zip(ps, said)]
        while batch.rows:
            batch.step()
    assert list(batch._prefixes) == [tuple(beginning.tolist())]  # read once, kept for the next
    for row, words, p in zip(rows, said, ps):
        got = check_same(model, row, words, p, 15)
        assert torch.isfinite(got.attentions).all() and float(got.attentions[:, :, 9:, 9:].triu(1).abs().max()) == 0


def test_prompts_joining_together_are_read_in_one_pass_and_answer_as_alone(model):
    first, second = prompts(9, 5, seed=12)
    rests = prompts(4, 11, 1, 6, seed=13)
    ps = [torch.cat([first, rests[0]]), torch.cat([first, rests[1]]), torch.cat([second, rests[2]]), rests[3]]
    shared = [9, 9, 5, 0]  # two share a beginning, one has its own, one none: three passes
    batch, said = Batch(model), [[] for _ in ps]
    reads = []
    original = batch._read

    def counted(texts, after=None):
        reads.append(len(texts))
        return original(texts, after)

    batch._read = counted
    with torch.inference_mode():
        rows = batch.join_all([Joining(p, 12, None, (), s.append, n) for p, s, n in zip(ps, said, shared)])
        while batch.rows:
            batch.step()
    assert sorted(reads) == [1, 1, 1, 1, 2]  # two beginnings read alone; the rests in three passes, two together
    for row, words, p in zip(rows, said, ps):
        check_same(model, row, words, p, 12)


# A batch step through each layer's graph (model.causal.compiled_batch) writes what the eager step writes, bit for bit;
# a graph traced once serves any number of rows and words.
COMPILED_ASKS = [(0, 3, 12, None), (0, 9, 25, Sampling(0.8, 20, None, 7)), (2, 17, 7, None), (5, 30, 15, None),
        (9, 1, 30, Sampling(1.3, None, 0.9, 11))]  # (joins at step, prompt length, words, sampling)


def written(model, compiled, asks=COMPILED_ASKS, seed=1):
    batch, ps = Batch(model), prompts(*(a[1] for a in asks), seed=seed)
    batch.compiled = compiled
    rows = [None] * len(asks)
    with torch.inference_mode():
        step = 0
        while step == 0 or batch.rows or any(r is None for r in rows):
            for i, (at, _n, steps, sampling) in enumerate(asks):
                if at == step:
                    rows[i] = batch.join(ps[i], steps, sampling)
            batch.step()
            step += 1
    return [r.result() for r in rows]


def test_the_layers_graphs_write_what_the_eager_step_writes_bit_for_bit(model):
    compiled = compiled_batch_layers(model)
    assert compiled is not None and len(compiled) == len(model.blocks)
    for eager, graph in zip(written(model, None), written(model, compiled), strict=True):
        assert graph.written.tolist() == eager.written.tolist()
        for name in ("attentions", "hidden", "candidates", "final", "tempered"):
            assert torch.equal(getattr(graph, name), getattr(eager, name)), name


def test_a_graph_traced_once_serves_other_rows_and_lengths(model):
    compiled = compiled_batch_layers(model)
    asks = [(0, 40, 20, None), (0, 2, 40, None), (3, 11, 9, None)]  # longer and shorter than the traced example
    for eager, graph in zip(written(model, None, asks, 5), written(model, compiled, asks, 5), strict=True):
        assert graph.written.tolist() == eager.written.tolist()
        assert torch.equal(graph.attentions, eager.attentions)


def test_heads_switched_off_step_eagerly(model):
    batch = Batch(model, model.heads_off([(1, 2)]))
    batch.compiled = compiled_batch_layers(model)  # traced with every head on: not used
    with torch.inference_mode():
        a, b = (batch.join(p, 6) for p in prompts(4, 9, seed=3))
        while batch.rows:
            batch.step()
        off = Batch(model, model.heads_off([(1, 2)]))
        c, d = (off.join(p, 6) for p in prompts(4, 9, seed=3))
        while off.rows:
            off.step()
    for graph, eager in ((a, c), (b, d)):
        assert graph.written == eager.written
        assert torch.equal(graph.result().hidden, eager.result().hidden)  # head 1.2's output zeroed, as eagerly


@pytest.mark.parametrize("room_bytes", [1, 2**15])
def test_the_layers_graphs_in_one_call_fill_the_rooms_a_group_of_layers_at_a_time(model, monkeypatch, room_bytes):
    """Rooms for one layer, or a few, at a time (SmolLM2's 40 rows of 60-80 words: 3-4 layers): the one call's
    loop (compiled_batch._Stack) fills each group before its layers, as the eager step does."""
    monkeypatch.setattr(batch_module, "ROOM_BYTES", room_bytes)
    compiled, groups = compiled_batch_layers(model), set()
    stack = compiled.stack
    monkeypatch.setattr(compiled, "stack", lambda x, mask, starts, rooms, *rest: groups.add(rooms.size(0)) or stack(
        x, mask, starts, rooms, *rest))
    for eager, graph in zip(written(model, None), written(model, compiled), strict=True):
        assert graph.written.tolist() == eager.written.tolist()
        for name in ("attentions", "hidden", "candidates", "final", "tempered"):
            assert torch.equal(getattr(graph, name), getattr(eager, name)), name
    assert groups and min(groups) < len(model.blocks)  # rooms for fewer layers than the model has
