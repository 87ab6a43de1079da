"""Layers (logit lens): each layer's output at each position of the prompt, read out through the final norm and
the output tied to the token embedding, as if that layer were the last (model.causal.logit_lens). Where does the model
settle on the word it predicts? The last layer's row is the model's own distribution."""
import io

import numpy as np
import streamlit as st
import torch

from locales import _
from model.causal.logit_lens import logit_lens
from runtime.budget import Kind
from runtime.model_thread import on_model_thread
from views.charts.mounted import show_chart
from views.language_model.page import LanguageModel
from views.shell.errors import cached
from views.widgets import downloads, notices
from viz.lens import lens_figure

COLUMNS = 24  # the prompt's last positions shown (a cell holds a word and a probability: wider is unreadable)


def lens_of(lm: LanguageModel):
    """(top ids (layers, T, TOP), their probabilities, each layer's probability of the final prediction and its rank,
    the final predictions (T,)): once per (model, prompt, heads off), shared."""
    def compute():
        with torch.inference_mode():
            lens = logit_lens(lm.model, torch.tensor(lm.ids, dtype=torch.long), lm.heads_off, keep_probs=False)
        return (lens.top_ids.numpy(), lens.top_p.numpy(), lens.chosen_p.numpy(), lens.chosen_rank.numpy(),
                lens.chosen.numpy())

    return cached(("lm-lens", *lm.key), lambda: on_model_thread(compute), _("The language model"),
                  kind=Kind.ATTRIBUTION)


def npz_of(lm: LanguageModel, lens) -> bytes:
    top_ids, top_p, final_p, rank, final = lens
    token = lm.reader.token
    out = io.BytesIO()
    np.savez_compressed(out, tokens=np.array(lm.tokens), predicted=np.array([token(i) for i in final]),
                        top_words=np.vectorize(token, otypes=[str])(top_ids) if top_ids.size else np.array([]),
                        top_p=top_p, p_predicted=final_p, rank_predicted=rank)
    return out.getvalue()


def section(lm: LanguageModel) -> None:
    notices.show_notices()
    lens = lens_of(lm)
    top_ids, top_p, final_p, rank, final = lens
    shown = slice(max(0, len(lm.ids) - COLUMNS), len(lm.ids))
    token = lm.reader.token
    top_words = [[[token(i) for i in cell] for cell in row[shown]] for row in top_ids.tolist()]
    columns = [f"{t} → {token(int(p))}" for t, p in zip(lm.tokens[shown], final[shown])]
    rms = lm.loaded.facts.rms_norm
    st.latex(r"p^{(l)}_t = \mathrm{softmax}\big(W_{\text{out}}\,\mathrm{RMSNorm}(h^{(l)}_t)\big)" if rms else
             r"p^{(l)}_t = \mathrm{softmax}\big(W_E\,\mathrm{LayerNorm}(h^{(l)}_t)\big)")
    show_chart(lens_figure(final_p[:, shown], top_words, top_p[:, shown], rank[:, shown], columns,
                           _("Each layer read out as if it were the last"),
                           columns=_("position: the word read → the word the model predicts next"),
                           hover=_("%{y}, position %{x}<br>the word finally predicted: p = %{z:.3f}, rank "
                                   "%{customdata[1]}<br>top words:<br>%{customdata[0]}<extra></extra>")),
               key="lm-lens")
    st.caption(_("Each cell: the word that layer would predict next, and its probability; the colour is that layer's "
                 "probability of the word the model finally predicts (hover for the top five and its rank). The last "
                 "layer's row is the model's own distribution.") + " " + (
        _("RMSNorm: the model's final norm; W_out: its output matrix.") if rms else
        _("W_E: the token embedding, which the output shares.")))
    if len(lm.ids) > COLUMNS:
        st.caption(_("The prompt's last {n} positions of {total}.").format(n=COLUMNS, total=len(lm.ids)))
    downloads.button(_("Download the logit lens (NumPy .npz)"), lambda: npz_of(lm, lens), "language_model_lens.npz",
                     "application/octet-stream")
