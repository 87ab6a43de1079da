"""The sentence-embedding lens: several sentences as the packaged all-MiniLM-L6-v2 turns them into sentence vectors
(mean of the last layer's tokens, normalised), how alike they are, where they lie, how each layer moves them, and
which tokens make up a sentence's vector."""
import io

import numpy as np
import streamlit as st

from locales import _
from model.analysis.embeddings import SentenceVectors, cosines, pca_2d, sentence_vectors
from model.family import Capability
from model.loading.loaded import MAX_TOKENS
from runtime.budget import Kind
from runtime.model_thread import on_model_thread
from views.charts.mounted import show_chart
from views.shell import lecture
from views.shell.errors import cached
from views.shell.frame import Page
from views.widgets import downloads, link_writes, notices, state
from views.widgets.pickers import source_of
from viz.embeddings import cosine_figure, map_figure, paths_figure, shares_figure, short
from viz.labels import token_label

MAX_SENTENCES = 12
MAX_CHARS = 20_000  # all the sentences together
DEFAULT = "\n".join(["I have a cat", "I own a cat", "My cat sleeps on the sofa", "The weather is nice today",
                     "It is sunny and warm outside"])
PIPELINE_TOKENS = 256  # sentence-transformers' max_seq_length for this model: it cuts longer sentences there


def vectors_of(page: Page, sentence: str) -> tuple[SentenceVectors, tuple[str, ...], bool, int]:
    """(vectors, tokens, cut, tokens before the cut) of one sentence, once per (model, sentence), shared."""
    loaded = page.model()

    def compute():
        encoded = loaded.encode(sentence)
        vectors = on_model_thread(sentence_vectors, loaded.model, encoded.input_ids)
        return vectors, encoded.tokens, encoded.truncated, encoded.total_tokens

    return cached(("sentence-vectors", page.choice, sentence), compute, _("The sentence vectors"),
                  kind=Kind.SENTENCE_VECTORS)


def sentences_of(raw: str) -> list[str]:
    """The non-empty lines, at most MAX_SENTENCES (a notice says when more were given)."""
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    if len(lines) > MAX_SENTENCES:
        notices.notice(_("This page compares at most {n} sentences: the first {n} of {given} are shown.").format(
            n=MAX_SENTENCES, given=len(lines)))
    return lines[:MAX_SENTENCES]


def npz_of(sentences, vectors, similarity) -> bytes:
    out = io.BytesIO()
    arrays = {"sentences": np.array(sentences, dtype=str), "embeddings": np.stack([v.embedding for v, *_ in vectors]),
              "cosines": similarity, "pooled_per_layer": np.stack([v.layers for v, *_ in vectors])}
    arrays.update({f"shares_{i}": v.shares for i, (v, *_rest) in enumerate(vectors)})
    arrays.update({f"tokens_{i}": np.array(tokens, dtype=str) for i, (_v, tokens, *_rest) in enumerate(vectors)})
    np.savez_compressed(out, **arrays)
    return out.getvalue()


def csv_of(sentences, similarity) -> bytes:
    header = ",".join(["sentence", *(downloads.csv_cell(s) for s in sentences)])
    rows = [",".join([downloads.csv_cell(s), *(f"{c:.6f}" for c in similarity[i])]) for i, s in enumerate(sentences)]
    return downloads.csv_lines([header, *rows])


def view(page: Page) -> None:
    raw = state.text(_("Sentences, one per line"), "sents", DEFAULT, MAX_CHARS, height=150,
                     container=lecture.place() or st,
                     help=_("Up to {n} sentences. Each is read by the model as on the other pages.").format(
                         n=MAX_SENTENCES))
    sentences = sentences_of(raw)
    if not sentences:
        st.info(_("Type a few sentences above, one per line, to compare their sentence vectors."))
        link_writes.stop()
    source = source_of(page.choice.key)
    trained = source is not None and source.can(Capability.SENTENCE_EMBEDDING) and page.choice.random is None
    if not trained:
        st.info(_("A sentence vector means something only for a model trained to make one, as all-MiniLM-L6-v2 "
                  "was. For this model the numbers are computed the same way, but they say little."))
    vectors = [vectors_of(page, s) for s in sentences]
    for i, (_v, tokens, cut, total) in enumerate(vectors):
        if cut:
            said = _("Sentence {i} has {total} tokens; a page reads at most {read}, so the rest was cut.") if len(
                tokens) == MAX_TOKENS else _("Sentence {i} has {total} tokens; the model reads at most {read}, so the "
                                             "rest was cut.")
            notices.notice(said.format(i=i + 1, total=total, read=len(tokens)))
        elif len(tokens) > PIPELINE_TOKENS and trained:
            notices.notice(_("Sentence {i} has {n} tokens: the sentence-transformers pipeline would cut it at {cut}; "
                           "this page reads it whole.").format(i=i + 1, n=len(tokens), cut=PIPELINE_TOKENS))
    picked = state.choice(_("Tokens of sentence"), "sent", range(len(sentences)), 0,
                          container=lecture.place() or st, format_func=lambda i: f"{i + 1}: {short(sentences[i], 60)}")
    notices.show_notices()

    similarity = cosines(np.stack([v.embedding for v, *_ in vectors]))
    show_chart(cosine_figure(similarity, sentences, _("Cosine similarity of the sentence vectors")), key="cosines")
    st.caption(_("Each sentence vector is the mean of the last layer's token vectors, normalised to length 1, as "
                 "the sentence-transformers pipeline of all-MiniLM-L6-v2 makes it; 1 is the same direction."))
    if len(sentences) >= 2:
        coords, explained = pca_2d(np.stack([v.embedding for v, *_ in vectors]))
        show_chart(map_figure(coords, explained, sentences, _("The sentences on their two main axes (PCA)")),
                   key="map")
        layers = np.stack([v.layers for v, *_ in vectors])  # (N, layers + 1, E)
        flat, explained = pca_2d(layers.reshape(-1, layers.shape[-1]))
        show_chart(paths_figure(flat.reshape(len(sentences), -1, 2), explained, sentences,
                                _("Each sentence's mean vector after the embeddings (0) and after every layer")),
                   key="paths")
        st.caption(_("One PCA of every sentence's mean vector at every depth, so the paths share their axes."))
    chosen, tokens, *_rest = vectors[picked]
    labels = tokens if len(tokens) <= 64 else [token_label(tokens, i) for i in range(len(tokens))]
    show_chart(shares_figure(chosen.shares, labels, _("Each token's share of the vector of sentence {i}").format(
        i=picked + 1)), key="shares")
    st.caption(_("Token i's share is h_i · p / (T |p|²), with p the mean of the T last-layer vectors h_i: the shares "
                 "add up to 1. [CLS] and [SEP] are averaged in too, as the pipeline does."))

    downloads.button(_("Download the vectors, similarities and shares (NumPy .npz)"),
                     lambda: npz_of(sentences, vectors, similarity), "sentence_embeddings.npz",
                     "application/octet-stream")
    downloads.button(_("Download the similarities (CSV)"), lambda: csv_of(sentences, similarity),
                     "sentence_similarities.csv", "text/csv")
