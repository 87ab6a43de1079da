"""One writing of the Language model page, computed once per (model, prompt, way of choosing, words, heads switched
off) in the process's budget and shared by every session: the prompt read once into the keys and values of every
layer (GPT.forward's cache), then one row per word written; each step's candidates and probabilities and
every attention map. Moving the step, the layer or the head reads it; nothing runs the model again."""
import io
from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

from locales import _
from model.causal.decoding import choices, generate
from runtime.budget import Kind
from runtime.model_thread import may_trace, on_model_thread
from runtime.models import compiling
from views.language_model.page import LanguageModel
from views.shell.errors import cached
from views.shell.markdown import plain
from views.widgets import downloads
from views.widgets.next_word import SAMPLE, TOP_WORDS, Way


@dataclass(frozen=True)
class Writing:
    """A finished writing, read-only. Step t reads tokens[:P + t] and writes words[t] (P: the prompt's tokens)."""

    tokens: tuple[str, ...]  # (P + N - 1,) every token read: the prompt, then the words written but the last
    prompt_tokens: int  # P
    words: tuple[str, ...]  # (N,) the words written
    text: str  # the words written, as text
    candidates: tuple[tuple[str, ...], ...]  # (N, k) the most likely next words at each step, by score
    final: np.ndarray  # (N, k) probability each candidate was drawn with (after temperature and cuts)
    tempered: np.ndarray  # (N, k) softmax(z / T) before any cut
    chosen: np.ndarray  # (N,) index of the written word among the candidates, -1 when it is not among them
    attentions: np.ndarray  # (layers, heads, P + N - 1, P + N - 1), NaN where the causal mask blocks
    ids: tuple[int, ...] = ()  # (N,) the ids of the words written

    def row(self, step: int) -> int:
        """The row of the attention maps that step `step` adds: the last token it reads."""
        return self.prompt_tokens - 1 + step


def _frozen(array, dtype=np.float32) -> np.ndarray:
    """A read-only copy: a writing is shared by every session."""
    out = np.ascontiguousarray(np.asarray(array, dtype=dtype))
    out.flags.writeable = False
    return out


def compute(lm: LanguageModel, way: Way) -> Writing:
    traced = compiling(lm.choice)
    step = traced.ready_step()  # the same words and numbers as the eager steps, a tenth faster (model.compiled)
    done = on_model_thread(write, lm.model, lm.reader, lm.ids, lm.tokens, lm.words, way, lm.heads_off, step)
    if step is None and not traced.step_started and may_trace(lm.choice):
        traced.start_step()  # for the next writing with this model
    return done


def write(model, reader, ids, tokens, words: int, way: Way, heads=(), step=None, stop=(), on_word=None) -> Writing:
    """Up to `words` words after the prompt ids (P,) shown as tokens, chosen as `way` says, with `heads` off; on a
    model thread. step, stop, on_word: as model.causal.decoding.generate takes them."""
    sampling = way.sampling() if way.kind == SAMPLE else None
    run = generate(model, torch.tensor(ids, dtype=torch.long), words, sampling, heads, stop, step, on_word)
    return as_writing(reader, tokens, run.written.tolist(), *choices(run.logits, sampling, TOP_WORDS),
                      torch.stack(run.attentions))


def as_writing(reader, tokens, written: list[int], candidates, final, tempered, attentions) -> Writing:
    """A Writing from the prompt's tokens (P,), the words written (N,), each step's candidates' ids and probabilities
    (N, k) (model.causal.decoding.choices) and every attention map (layers, heads, T, T), 0 above the diagonal: NaN
    written there in place (no second copy of the maps), so on a model thread, where they were made."""
    chosen = [row.tolist().index(w) if w in row.tolist() else -1 for row, w in zip(candidates, written)]
    T = attentions.size(-1)
    attentions[..., torch.ones(T, T, dtype=torch.bool).triu(1)] = float("nan")
    token = reader.token
    return Writing(tuple(tokens) + tuple(token(i) for i in written[:-1]), len(tokens), tuple(token(i) for i in written),
                   reader.joined(written), tuple(tuple(token(i) for i in row) for row in candidates.tolist()),
                   _frozen(final), _frozen(tempered), _frozen(chosen, np.int64), _frozen(attentions), tuple(written))


def writing(lm: LanguageModel, way: Way) -> Writing:
    """The writing after lm's prompt, computed once per (model, prompt, heads off, way, words) and then shared."""
    return cached(("lm-writing", *lm.key, lm.words, way), lambda: compute(lm, way), _("The language model"),
                  kind=Kind.WRITING)


def npz(w: Writing) -> bytes:
    """The whole writing as NumPy arrays (no pickled objects): the tokens read, the words written, each step's
    candidates and their probabilities, and every attention map (row P - 1 + t: step t)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, tokens=np.array(w.tokens), prompt_tokens=np.array(w.prompt_tokens),
                        words=np.array(w.words), candidates=np.array(w.candidates), candidate_probs=w.final,
                        candidate_probs_before_cuts=w.tempered, attentions=w.attentions)
    return buf.getvalue()


def distribution_csv(w: Writing, step: int) -> bytes:
    """Step `step`'s candidates as CSV (UTF-8 with a byte order mark, as every CSV here): rank, word, probability
    drawn with, probability before the cuts, chosen."""
    lines = ["rank,word,probability,probability_before_cuts,chosen"]
    for rank, word in enumerate(w.candidates[step]):
        lines.append(f"{rank + 1},{downloads.csv_cell(word)},{w.final[step, rank]:.6f},{w.tempered[step, rank]:.6f},"
                     f"{int(rank == w.chosen[step])}")
    return downloads.csv_lines(lines)


def download(w: Writing, step: int) -> None:
    row = st.columns(2)
    downloads.button(_("Download this writing (NumPy .npz)"), lambda: npz(w), "language_model_writing.npz",
                     "application/octet-stream", container=row[0])
    downloads.button(_("Download step {step}'s distribution (CSV)").format(step=step),
                     lambda: distribution_csv(w, step), f"language_model_step{step}.csv", "text/csv", container=row[1])


def writing_line(way: Way, w: Writing) -> str:
    """**Written** (how the words were chosen): the words."""
    words = " ".join(plain(word) for word in w.words) or "—"
    return _("**Written** ({how}): {words}").format(how=way.describe(), words=words)
