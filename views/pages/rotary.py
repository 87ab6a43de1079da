"""RoPE on the Positional encoding page, after the tutorials' sinusoidal table: the same frequencies, used to rotate
each query and key pair by pair instead of adding a vector to x; the pairs turning with the position, their
frequencies, and one query's score with one key at every pair of positions, rotated against added: RoPE's depends on
the distance n - m alone (model.positional.rotary_scores, the code the Llama family runs)."""
import streamlit as st
import torch

from locales import _
from model.positional import added_scores, rotary_frequencies, rotary_scores, shift_gap, sinusoidal_table
from views.charts.mounted import streamlit_chart
from views.shell import lecture
from viz.rotary import frequencies_spec, rotation_spec, scores_spec

SCORE_POSITIONS = 64  # the score tables: 64 x 64 positions
TURNS = 24  # positions drawn on the circles
SEED = 0  # the query and key: random, the same for every visitor


def pairs_of(d: int) -> list[int]:
    """Four pairs from the fastest to the slowest."""
    half = d // 2
    return sorted({0, half // 8, half // 3, half - 1})


def section(d_model: int, base: int, num_positions: int) -> None:
    d = d_model - d_model % 2  # RoPE turns pairs: an even width
    st.header(_("RoPE: rotate q and k instead of adding a vector"))
    st.latex(r"\theta_i = base^{-2i/d},\qquad q_m = R(m\theta)\,q,\quad k_n = R(n\theta)\,k,\qquad "
             r"q_m^{\top}k_n = q^{\top}R\big((n-m)\theta\big)\,k")
    if d < 2:
        st.info(_("RoPE needs at least one pair of dimensions: pick d_model ≥ 2."))
        return
    st.markdown(_("Today's LLMs (Llama, SmolLM2, Qwen) add no position vector. Each head's query and key are cut into "
                  "pairs of dimensions, and pair i is turned by the angle position × θᵢ: the sinusoidal table's own "
                  "frequencies (here d = {d}, base {base}), turning q and k instead of added to x.").format(
        d=d, base=f"{base:,}"))
    thetas = rotary_frequencies(d, base).numpy()
    left, right = lecture.charts_row(2)
    streamlit_chart(rotation_spec(thetas, pairs_of(d), min(TURNS, num_positions),
                                  _("Each pair turns with the position (positions 0 to {last})").format(
                                      last=min(TURNS, num_positions) - 1)), "rope-rotation", left)
    left.caption(_("A pair's point on the unit circle at each position: the fast pairs turn a whole circle in a few "
                   "positions, the slow ones hardly move."))
    streamlit_chart(frequencies_spec(thetas, _("The pairs' frequencies θᵢ")), "rope-frequencies", right)
    right.caption(_("The same falling frequencies as the sinusoidal table's (sin, cos) pairs."))
    positions = min(SCORE_POSITIONS, max(num_positions, 2))
    g = torch.Generator().manual_seed(SEED)
    q, k = torch.randn(d, generator=g), torch.randn(d, generator=g)
    rotated = rotary_scores(q, k, positions, base)
    added = added_scores(q, k, sinusoidal_table(positions, d, float(base)))
    left, right = lecture.charts_row(2)
    streamlit_chart(scores_spec(rotated.numpy(), _("RoPE: R(m)q · R(n)k")), "rope-scores", left)
    left.caption(_("Every diagonal is one value: the score depends on the distance n − m alone. Along any diagonal it "
                   "moves by at most {gap:.1e} (float32 rounding).").format(gap=shift_gap(rotated)))
    streamlit_chart(scores_spec(added.numpy(), _("Added: (q + PE_m) · (k + PE_n)")), "added-scores", right)
    right.caption(_("The same q and k with the table added: the score changes along a diagonal by up to {gap:.2f}, "
                    "so the same two words at shifted positions score differently.").format(gap=shift_gap(added)))
    st.caption(_("q and k: {d} random numbers each (seed {seed}), at {n} positions.").format(
        d=d, seed=SEED, n=positions))
