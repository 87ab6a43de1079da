"""How the translator picks its words: greedy, sampling (temperature, top-k, top-p, by seed), beam search.

Every strategy decodes incrementally (model.translator.incremental: the encoder once, one new row per step) unless told
to recompute the whole prefix at every step (incremental=False, the formula's path, kept to measure and to prove the
two equal); any heads can be switched off (heads_off, e.g. [("cross", 1, 2)]). A batch of sources decodes together;
a sentence that has written <eos> is done and only waits for the others.
"""
from dataclasses import dataclass

import torch
from torch import Tensor

from model.cache import Cache
from model.masks import causal_mask
from model.sampling import Sampling
from model.translator.incremental import Memory, encode, step
from model.translator.vocabulary import BOS_ID, EOS_ID, PAD_ID, english_text


@dataclass(frozen=True)
class Decoding:
    """A whole decoding, recorded as it went: the words, and every attention of every step, per layer and head.
    Row t of the decoder's maps is step t (the word after <bos> w1..wt); a word never sees a later one (0 there)."""

    ids: Tensor  # (B, T) the words written, <eos> then <pad> at the end of each row
    logits: Tensor  # (B, T, V) the scores each word was chosen from
    encoder: Tensor  # (layers, B, nh, S, S) the encoder's self-attention
    decoder: Tensor  # (layers, B, nh, T, T) the decoder's causal self-attention, step by step
    cross: Tensor  # (layers, B, nh, T, S) each step's attention to the source


def max_steps(model, src_ids: Tensor) -> int:
    """Words a decoding may write: twice the source plus a few, never past the target's positions."""
    return min(model.max_positions - 1, 2 * src_ids.size(1) + 8)


def generate(model, src_ids: Tensor, sampling: Sampling | None = None, heads_off=(), incremental: bool = True,
             steps: int | None = None, record: bool = False, forced: Tensor | None = None,
             layer_outputs: list | None = None):
    """Greedy (sampling None) or sampled decoding of a batch of sources (B, S) -> ids (B, T), each row ending
    with <eos> (or cut at `steps`), <pad> after it. With record=True (incremental only), a Decoding instead.
    forced (B, T): write these words instead of choosing (a beam search's answer, replayed to record it).
    layer_outputs: a list that gets, per step, the list of each decoder layer's output (B, 1, E) (the logit lens)."""
    off = model.heads_off(heads_off)
    if forced is not None:
        steps = forced.size(1)
    if (off is not None or record) and not incremental:
        raise ValueError("heads are switched off and steps recorded only in incremental decoding")
    generator = None if sampling is None else torch.Generator().manual_seed(sampling.seed)
    B, steps = src_ids.size(0), steps or max_steps(model, src_ids)
    ids = torch.full((B, 1), BOS_ID, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    memory, cache = (encode(model, src_ids, off), Cache()) if incremental else (formula_memory(model, src_ids), None)
    rows = []  # per step: logits (B, V), self (layers, B, nh, t + 1), cross (layers, B, nh, S)
    for _ in range(steps):
        if incremental:
            outputs = None if layer_outputs is None else []
            logits, cache, self_rows, cross_rows = step(model, memory, cache, ids[:, -1], off, outputs)
            if layer_outputs is not None:
                layer_outputs.append(outputs)
            if record:
                rows.append((logits, self_rows, cross_rows))
        else:
            logits = formula_step(model, memory, src_ids, ids)
        if forced is not None:
            word = forced[:, ids.size(1) - 1]
        elif sampling is None:
            word = logits.argmax(-1)
        else:
            word = torch.multinomial(sampling.probabilities(logits), 1, generator=generator)[:, 0]
        word = word.masked_fill(done, PAD_ID)
        ids = torch.cat([ids, word[:, None]], dim=1)
        done |= word == EOS_ID
        if done.all():
            break
    return _recorded(ids[:, 1:], memory, rows) if record else ids[:, 1:]


def _recorded(ids: Tensor, memory: Memory, rows) -> Decoding:
    T = len(rows)
    layers, B, nh, _ = rows[-1][1].shape
    decoder = rows[-1][1].new_zeros(layers, B, nh, T, T)
    for t, (_, self_rows, _) in enumerate(rows):
        decoder[..., t, :t + 1] = self_rows
    return Decoding(ids, torch.stack([r[0] for r in rows], 1), memory.attentions, decoder,
                    torch.stack([r[2] for r in rows], 3))


def formula_memory(model, src_ids: Tensor) -> Tensor:
    """The encoder's output by the formula (model/transformer.py), once per batch."""
    src, _ = model.source_embedding(src_ids, False)
    out, _, _ = model.transformer.encoder.encode(src, None, src_ids == PAD_ID)
    return model.transformer.encoder.norm(out)


def formula_step(model, memory: Tensor, src_ids: Tensor, ids: Tensor) -> Tensor:
    """The next word's logits (B, V) by running the decoder over the whole prefix ids (B, t) again."""
    tgt, _ = model.target_embedding(ids, False)
    out, _, _ = model.transformer.decoder.decode(tgt, memory, causal_mask(ids.size(1)), None, None, src_ids == PAD_ID)
    return model.generator(out[:, -1])


@dataclass(frozen=True)
class BeamStep:
    """The beam after one step: the open prefixes (without <bos>) and the sentences finished so far, each with its
    summed log-probability, best first."""

    open: tuple[tuple[tuple[int, ...], float], ...]
    finished: tuple[tuple[tuple[int, ...], float], ...]


def beam_search(model, src_ids: Tensor, beam: int, heads_off=(), steps: int | None = None, record: bool = False):
    """Beam search for each source of the batch: the `beam` best prefixes by summed log-probability; the best
    finished sentence once no open prefix can beat it (a longer prefix only loses probability). Returns, per
    source, its ids ending with <eos> (or cut at `steps`); with record=True, per source (ids, [BeamStep per step])."""
    if beam < 1:
        raise ValueError(f"the beam must hold at least 1 prefix, not {beam}")
    off = model.heads_off(heads_off)
    memory = encode(model, src_ids, off)
    steps = steps or max_steps(model, src_ids)
    found = [_beam_one(model, memory.select(torch.tensor([row])), beam, off, steps) for row in range(src_ids.size(0))]
    return found if record else [ids for ids, _ in found]


def _beam_one(model, memory: Memory, beam: int, off, steps: int) -> tuple[Tensor, list[BeamStep]]:
    prefixes = torch.full((1, 1), BOS_ID, dtype=torch.long)  # (k, t) the open prefixes
    scores = torch.zeros(1)  # (k,) their summed log-probabilities
    cache, finished = Cache(), []  # (score, ids) of sentences that wrote <eos>
    history = []
    for _ in range(steps):
        logits, cache, _, _ = step(model, memory.select(torch.zeros(len(prefixes), dtype=torch.long)), cache,
                                   prefixes[:, -1], off)
        total = (scores[:, None] + torch.log_softmax(logits, -1)).flatten()  # (k * V,)
        best, flat = total.topk(min(beam, total.numel()))
        rows, words = flat // logits.size(-1), flat % logits.size(-1)
        keep = []
        for score, row, word in zip(best.tolist(), rows.tolist(), words.tolist()):
            if word == EOS_ID:
                finished.append((score, torch.cat([prefixes[row, 1:], torch.tensor([EOS_ID])])))
            else:
                keep.append((score, row, word))
        done = tuple(sorted(((tuple(ids.tolist()), score) for score, ids in finished), key=lambda f: -f[1]))
        history.append(BeamStep(tuple((tuple(prefixes[row, 1:].tolist()) + (word,), score)
                                      for score, row, word in keep), done))
        if finished and (not keep or max(s for s, _ in finished) >= keep[0][0]):
            break
        rows = torch.tensor([r for _, r, _ in keep])
        prefixes = torch.cat([prefixes[rows], torch.tensor([[w] for _, _, w in keep])], dim=1)
        scores, cache = torch.tensor([s for s, _, _ in keep]), cache.select(rows)
    if not finished:  # cut at `steps`: the best open prefix
        return prefixes[0, 1:], history
    return max(finished, key=lambda f: f[0])[1], history


def words_of(model, ids) -> str:
    """Decoded ids -> the English sentence."""
    return english_text(model.target.words(ids.tolist() if isinstance(ids, Tensor) else ids))


def batch_of(model, sources: list[list[int]]) -> Tensor:
    """Source id lists (none empty) -> (B, S), the shorter ones padded with <pad>."""
    width = max(len(s) for s in sources)
    return torch.tensor([s + [PAD_ID] * (width - len(s)) for s in sources], dtype=torch.long)
