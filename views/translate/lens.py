"""The logit lens: each decoder layer's output at each step of the greedy decoding, read out through the decoder's
final norm and output projection as if it were the last layer. Where does the decoder settle on its word?"""
import io

import numpy as np
import streamlit as st

from locales import _
from model.translator.logit_lens import logit_lens
from runtime.budget import Kind
from runtime.model_thread import on_model_thread
from views.charts.mounted import show_chart
from views.shell.errors import cached
from views.translate.page import Translate
from views.widgets import downloads, notices
from viz.lens import lens_figure


def lens_of(t: Translate):
    """The lens of t's source with t's heads off, once per (source, heads off), shared."""
    model = t.loaded.translator
    return cached(("lens", t.src, tuple(sorted(t.heads_off))),
                  lambda: on_model_thread(logit_lens, model, t.source.input_ids, t.heads_off), _("The translator"),
                  kind=Kind.ATTRIBUTION)


def npz_of(lens, words, vocabulary) -> bytes:
    out = io.BytesIO()
    np.savez_compressed(out, words=np.array(words, dtype=str), ids=lens.chosen.numpy(), top_ids=lens.top_ids.numpy(),
                        top_p=lens.top_p.numpy(), top_words=np.array(vocabulary, dtype=str)[lens.top_ids.numpy()],
                        chosen_p=lens.chosen_p.numpy(), chosen_rank=lens.chosen_rank.numpy())
    return out.getvalue()


def csv_of(lens, words, vocabulary) -> bytes:
    """One row per (layer, step): the word written, its probability and rank at that layer, the layer's top word."""
    lines = [downloads.BOM + "layer,step,written,p_written,rank_written,top_word,p_top"]
    for layer in range(lens.probs.size(0)):
        for i, word in enumerate(words):
            top = int(lens.top_ids[layer, i, 0])
            lines.append(f"{layer},{i + 1},{downloads.csv_cell(word)},{float(lens.chosen_p[layer, i]):.6g},"
                         f"{int(lens.chosen_rank[layer, i])},{downloads.csv_cell(vocabulary[top])},"
                         f"{float(lens.top_p[layer, i, 0]):.6g}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def section(t: Translate) -> None:
    notices.show_notices()
    lens = lens_of(t)
    vocabulary = t.loaded.translator.target.tokens
    words = [vocabulary[i] for i in lens.chosen.tolist()]
    top_words = [[[vocabulary[i] for i in cell] for cell in row] for row in lens.top_ids.tolist()]
    st.latex(r"p^{(l)}_t = \mathrm{softmax}\big(W_{\mathrm{out}}\,\mathrm{norm}(h^{(l)}_t) + b\big)"
             if t.loaded.translator.transformer.decoder.norm is not None else
             r"p^{(l)}_t = \mathrm{softmax}\big(W_{\mathrm{out}}\,h^{(l)}_t + b\big)")
    show_chart(lens_figure(lens.chosen_p.numpy(), top_words, lens.top_p.numpy(), lens.chosen_rank.numpy(), words,
                           _("Each decoder layer read out as if it were the last (greedy decoding)")),
               key="translate-lens")
    st.caption(_("Each cell: the word that layer would write, and its probability; the colour is that layer's "
                 "probability of the word the decoder finally wrote (hover for the top five and its rank). The last "
                 "layer's row is the decoder's own choice."))
    downloads.button(_("Download the logit lens (NumPy .npz)"), lambda: npz_of(lens, words, vocabulary),
                     "translation_logit_lens.npz", "application/octet-stream")
    downloads.button(_("Download the logit lens (CSV)"), lambda: csv_of(lens, words, vocabulary),
                     "translation_logit_lens.csv", "text/csv")
