"""One decoding of the Translate page, computed once per (source, way of choosing, heads switched off) in the
process's budget and shared by every session: the words, each step's scores and distributions, every attention,
and a beam search's beams. Moving the step, the layer or the head reads it; nothing runs the model again."""
import io
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch

from locales import _
from model.translator.decoding import beam_search, generate
from model.translator.vocabulary import BOS, EOS_ID, english_text
from runtime.model_thread import on_model_thread
from runtime.models import loaded_translator
from views.shell.errors import cached
from views.shell.markdown import plain
from views.widgets import downloads
from views.widgets.next_word import BEAM, SAMPLE, TOP_WORDS, Way


@dataclass(frozen=True)
class Decoded:
    """A finished decoding, read-only numpy arrays. Step t reads inputs[t] (<bos> first) and writes words[t]."""

    src_tokens: tuple[str, ...]
    inputs: tuple[str, ...]  # (T,) what the decoder reads at each step: <bos> w1 .. w(T-1)
    words: tuple[str, ...]  # (T,) what it writes: w1 .. wT, the last one <eos> when it finished
    translation: str
    candidates: np.ndarray  # (T, TOP_WORDS) word ids, most likely first (by score)
    final: np.ndarray  # (T, TOP_WORDS) probability the word was drawn with (after temperature and cuts)
    tempered: np.ndarray  # (T, TOP_WORDS) softmax(z / T) before any cut
    chosen: np.ndarray  # (T,) index of the written word among the candidates, -1 when it is not among them
    encoder: np.ndarray  # (layers, heads, S, S)
    decoder: np.ndarray  # (layers, heads, T, T), NaN where the causal mask blocks
    cross: np.ndarray  # (layers, heads, T, S)
    vocabulary: tuple[str, ...]  # the target's words by id
    beams: tuple = ()  # model.translator.decoding.BeamStep per step, for a beam search


def _frozen(array, dtype=np.float32) -> np.ndarray:
    """A read-only copy: a decoding is shared by every session."""
    out = np.ascontiguousarray(np.asarray(array, dtype=dtype))
    out.flags.writeable = False
    return out


def compute(src: str, way: Way, heads_off: tuple) -> Decoded:
    loaded = loaded_translator()
    model, source = loaded.translator, loaded.encode(src)
    src_ids, beams = source.input_ids, ()
    if way.kind == BEAM:
        (ids, beams), = on_model_thread(partial(beam_search, heads_off=heads_off, record=True), model, src_ids,
                                        way.beam)
        # the beam's answer, read again step by step to record every attention and score on the way
        run = on_model_thread(partial(generate, heads_off=heads_off, record=True, forced=ids[None]), model, src_ids)
    else:  # greedy or sampled: recorded as it is written
        run = on_model_thread(partial(generate, heads_off=heads_off, record=True), model, src_ids,
                              way.sampling() if way.kind == SAMPLE else None)
    written = run.ids[0].tolist()
    T = written.index(EOS_ID) + 1 if EOS_ID in written else len(written)
    logits = run.logits[0, :T]
    tempered = torch.softmax(logits / (way.temperature if way.kind == SAMPLE else 1.0), -1)
    final = way.sampling().probabilities(logits) if way.kind == SAMPLE else tempered
    candidates = logits.topk(min(TOP_WORDS, logits.size(-1)), -1).indices  # (T, k)
    chosen = [row.tolist().index(w) if w in row.tolist() else -1 for row, w in zip(candidates, written[:T])]
    vocabulary = tuple(model.target.tokens)
    words = tuple(vocabulary[i] for i in written[:T])
    decoder = run.decoder[:, 0, :, :T, :T].clone()
    decoder[..., torch.ones(T, T, dtype=torch.bool).triu(1)] = float("nan")
    return Decoded(source.tokens, (BOS, *words[:-1]), words, english_text(model.target.words(written)),
                   _frozen(candidates, np.int64), _frozen(final.gather(-1, candidates)),
                   _frozen(tempered.gather(-1, candidates)), _frozen(chosen, np.int64), _frozen(run.encoder[:, 0]),
                   _frozen(decoder), _frozen(run.cross[:, 0, :, :T]),
                   vocabulary, tuple(beams))


def npz(d: Decoded) -> bytes:
    """The whole decoding as NumPy arrays (no pickled objects): the tokens, the next-word candidates and their
    probabilities, and every attention; each row of the decoder's maps and of cross is one step."""
    buf = io.BytesIO()
    np.savez_compressed(buf, src_tokens=np.array(d.src_tokens), inputs=np.array(d.inputs), words=np.array(d.words),
                        candidates=np.array([[d.vocabulary[i] for i in row] for row in d.candidates]),
                        candidate_probs=d.final, candidate_probs_before_cuts=d.tempered, encoder_self=d.encoder,
                        decoder_self=d.decoder, cross=d.cross)
    return buf.getvalue()


def download(d: Decoded) -> None:
    downloads.button(_("Download this decoding (NumPy .npz)"), lambda: npz(d), "translation_decoding.npz",
                     "application/octet-stream")


def decoded(src: str, way: Way, heads_off: tuple) -> Decoded:
    """The decoding of src, computed once per (src, way, heads off) and then shared."""
    return cached(("translate", src, way, tuple(sorted(heads_off))), lambda: compute(src, way, heads_off),
                  _("The translator"))


def translation_line(way: Way, d: Decoded) -> str:
    """**Translation** (how the words were chosen): the words."""
    words = " ".join(plain(w) for w in d.translation.split()) or "—"
    return _("**Translation** ({how}): {words}").format(how=way.describe(), words=words)
