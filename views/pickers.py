"""What a visitor picks in every page's frame: the model (and a random model's settings), the sentence, the
format of the charts' downloads. Each is bound to the URL (views/state.py)."""
import streamlit as st

from views import state
from views.models import Choice, sources
from viz.attention import CHART_CONFIG

MAX_TEXT_CHARS = 20_000  # longer text is cut before tokenising; the model reads at most its positions anyway
DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."
D_MODELS = (32, 64, 96, 128, 192, 256, 384, 512, 768)


def model_choice(container=None) -> Choice:
    """The model picker (sidebar by default): available sources, the unavailable ones with why."""
    from model.sources import DEFAULT_KEY, RANDOM_KEY

    container = container or st.sidebar
    all_sources = sources()
    available = [s for s in all_sources if s.available]
    labels = {s.key: s.label for s in all_sources}
    if not available:
        st.error("No model is available: " + "; ".join(f"{s.label}: {s.reason}" for s in all_sources))
        state.stop()
    default = DEFAULT_KEY if any(s.key == DEFAULT_KEY for s in available) else available[0].key
    # What is missing, and why, in the picker's tooltip: an expander and its text were two more messages to
    # the browser on every page run.
    missing = [f"- **{s.label}**: {s.reason}" for s in all_sources if not s.available]
    key = state.choice("Model", "model", [s.key for s in available], default, container=container,
                       format_func=lambda k: labels.get(k, k),
                       help="\n".join(["Not available on this server:", *missing]) if missing else None)
    return Choice(key, random_config(container) if key == RANDOM_KEY else None)


def chart_format(container=None) -> None:
    """What every chart's camera button downloads: PNG or SVG (?img=svg), chosen in the sidebar."""
    state.choice("Chart download format", "img", ("png", "svg"), "png", container=container or st.sidebar,
                 widget="segmented_control", format_func=str.upper,
                 help="The camera button in each chart's toolbar saves the chart in this format.")


def chart_config() -> dict:
    """The plotly toolbar config for this session: the chosen download format, no plotly logo."""
    image = {**CHART_CONFIG["toImageButtonOptions"], "format": st.session_state.get("img", "png")}
    return {**CHART_CONFIG, "toImageButtonOptions": image}


def random_config(container=None):
    """Sliders for the random model; only divisors of d_model are offered as head counts."""
    from model.sources import RandomConfig

    c = container or st.sidebar
    d_model = state.choice("d_model", "d_model", D_MODELS, 128, container=c)
    divisors = [h for h in range(1, 17) if d_model % h == 0]
    heads = state.choice("Heads (divisors of d_model)", "heads", divisors, 4 if 4 in divisors else divisors[-1],
                         container=c)
    layers = state.int_slider("Layers", "layers", 1, 12, 2, container=c)
    d_ff = state.choice("d_ff", "d_ff", (64, 128, 256, 512, 1024, 2048, 3072), 512, container=c)
    activation = state.choice("Activation", "activation", ("gelu", "relu"), "gelu", container=c, widget="radio",
                              horizontal=True)
    norm = state.choice("Normalisation", "norm", ("post-LN", "pre-LN"), "post-LN", container=c, widget="radio",
                        horizontal=True)
    positional = state.choice("Positions", "positional", ("sinusoidal", "learned"), "sinusoidal", container=c,
                              widget="radio", horizontal=True)
    seed = state.int_slider("Seed", "seed", 0, 99, 0, container=c)
    return RandomConfig(d_model, heads, layers, d_ff, activation, norm == "pre-LN", positional, seed)


def sentence(label: str = "Sentence", name: str = "text", default: str = DEFAULT_TEXT) -> str:
    """The text box bound to ?text=; on empty text it says what to do and stops the page."""
    value = state.text(label, name, default, MAX_TEXT_CHARS, height=80)
    if not value.strip():
        st.info("Type a sentence above to see its attention.")
        state.stop()
    return value
