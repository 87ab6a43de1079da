"""What a visitor picks in every page's frame: the model (and a random model's settings), the sentence, the
format of the charts' downloads. Each is bound to the URL (views/widgets/state.py)."""
import streamlit as st

from locales import N_, _
from model.family import Capability, Reads
from model.loading.sources import DEFAULT_KEY, RANDOM_KEY, ModelSource, RandomConfig
from model.messages import Later
from runtime.models import Choice, sources
from views.widgets import file_names, link_writes, state
from viz.attention import CHART_CONFIG

MAX_TEXT_CHARS = 20_000  # longer text is cut before tokenising; the model reads at most its positions anyway
DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."  # unless a source has its example
# The source (?src=) and target (?tgt=) of an encoder-decoder: one that reads Chinese (the translator) writes English
# (an empty target: its own translation); the random encoder-decoder reads the default model's English vocabulary.
CHINESE_SOURCE = "我有一只猫"
CHINESE_TEXTS = (CHINESE_SOURCE, "")
ENGLISH_TEXTS = ("The cat sat on the mat.", "Le chat était assis sur le tapis.")
D_MODELS = (32, 64, 96, 128, 192, 256, 384, 512, 768)
NORMS = {"post-LN": N_("post-LN"), "pre-LN": N_("pre-LN")}  # ?norm= values, and what they show
POSITIONS = {"sinusoidal": N_("sinusoidal"), "learned": N_("learned")}  # ?positional= values, and what they show


def source_of(key: str | None) -> ModelSource | None:
    """The source of this key in the model list, if any."""
    return next((s for s in sources() if s.key == key), None)


def model_choice(container=None, translator: bool = False) -> Choice:
    """The model picker (sidebar by default): available sources, the unavailable ones with why. translator: the
    page offers a model that translates (views.shell.registry.PageSpec.translator)."""
    return _picker(container or st.sidebar,
                   [s for s in sources() if translator or not s.can(Capability.TRANSLATION)], DEFAULT_KEY, {},
                   RANDOM_KEY)


def language_model_choice(container=None) -> Choice:
    """The Language model page's model: any that writes the next word, the first of the list by default (the toy
    GPT). Bound to ?model= like every page's picker; a link naming a model that is not a language model falls back
    to the default."""
    offered = [s for s in sources() if s.can(Capability.GENERATION)]
    if not any(s.available for s in offered):
        st.error(_("No language model is available on this server: the toy GPT's files are missing (python -m "
                   "training.train_gpt writes them)."))
        link_writes.stop()
    return _picker(container or st.sidebar, offered, next(s.key for s in offered if s.available), {}, "")


def chat_model_choice(container=None) -> Choice:
    """The Ask page's model: one that answers in turns (a chat template), the first available by default. Bound to
    ?model= like every page's picker; a link naming another model falls back to the default."""
    offered = [s for s in sources() if s.can(Capability.CHAT)]
    if not any(s.available for s in offered):
        reasons = "; ".join(str(s.reason) for s in offered) or _("none is listed")
        st.error(_("No chat model is available on this server: {reasons}").format(reasons=reasons))
        link_writes.stop()
    return _picker(container or st.sidebar, offered, next(s.key for s in offered if s.available), {}, "")


def seq2seq_choice(container=None) -> Choice:
    """The encoder-decoder page's model: one that cross-attends (the translator, the default), or a random
    encoder-decoder and its settings. Bound to ?model= like every page's picker."""
    offered = [s for s in sources() if s.can(Capability.CROSS_ATTENTION)]
    offered += [s for s in sources() if s.key == RANDOM_KEY]
    default = next((s.key for s in offered if s.can(Capability.CROSS_ATTENTION) and s.available), RANDOM_KEY)
    return _picker(container or st.sidebar, offered, default,
                   {RANDOM_KEY: N_("Random encoder-decoder (untrained, configurable)")}, RANDOM_KEY,
                   settings=N_("Random encoder-decoder"))


def _picker(container, offered, default: str, labels: dict, random_key: str, settings: str = "") -> Choice:
    available = [s for s in offered if s.available]
    labels = {s.key: s.label for s in offered} | labels  # English (sources are shared): translated when shown
    if not available:
        why = "; ".join(_("{model}: {reason}").format(model=shown(labels[s.key]), reason=s.reason) for s in offered)
        st.error(_("No model is available: {reasons}").format(reasons=why))
        link_writes.stop()
    if not any(s.key == default for s in available):
        default = available[0].key
    # What is missing, and why, in the picker's tooltip: an expander and its text were two more messages to
    # the browser on every page run.
    missing = [_("- **{model}**: {reason}").format(model=shown(labels[s.key]), reason=s.reason)
               for s in offered if not s.available]
    key = state.choice(_("Model"), "model", [s.key for s in available], default, container=container,
                       format_func=shown_as({s.key: labels[s.key] for s in available}),
                       on_change=_texts_follow_the_model,
                       help="\n".join([_("Not available on this server:"), *missing]) if missing else None)
    if key != random_key:
        file_names.set_model(key)
        return Choice(key)
    if settings:
        container.header(_(settings))
    return Choice(key, random_config(container))


def shown(label: str) -> str:
    """A model's label in the session's language: a source's (model.messages.Later) or one marked here with N_()."""
    return str(label) if isinstance(label, Later) else _(label)


def shown_as(labels: dict):
    """A widget's format_func: its options' labels, translated now, while the page is drawn in the session's
    language. (Streamlit formats options again when a value comes back, in its own thread for AppTest.)"""
    return {option: shown(label) for option, label in labels.items()}.__getitem__


def seq2seq_texts(model: str | None) -> tuple[str, str]:
    """The source and target an encoder-decoder's boxes start with: Chinese for one that reads it, else English."""
    source = source_of(model)
    return CHINESE_TEXTS if source is not None and source.reads == Reads.CHINESE else ENGLISH_TEXTS


def default_text(model: str | None) -> str:
    """The sentence a model's text box starts with: its source's example (toy English for the toy GPT), else the
    English sentence."""
    source = source_of(model)
    return (source.example if source is not None else "") or DEFAULT_TEXT


def _texts_follow_the_model() -> None:
    """A source, target or sentence still at the previous model's default becomes the new model's: Chinese for the
    translator, toy English for the toy GPT, English for the others. A text the visitor typed stays."""
    before, after = state.kept("model"), st.session_state.get("model")
    old, new = seq2seq_texts(before), seq2seq_texts(after)
    for name, was, now in zip(("src", "tgt"), old, new):
        state.replace_default(name, was, now)
    state.replace_default("text", default_text(before), default_text(after))


def text_box(choice: Choice | None) -> dict:
    """The frame's text box for a model: the sentence (?text=), or for the translator its Chinese source (?src=),
    the same text as on the encoder-decoder page."""
    source = source_of(None if choice is None else choice.key)
    if source is not None and source.reads == Reads.CHINESE:
        return {"label": _("Chinese sentence (what the translator's encoder reads)"), "name": "src",
                "default": CHINESE_SOURCE}
    if source is not None and source.reads == Reads.TOY_ENGLISH:
        return {"label": _("Toy English (what the GPT reads; `.` ends a sentence)"),
                "default": default_text(source.key)}
    return {}


def chart_format(container=None) -> None:
    """What every chart's camera button downloads: PNG or SVG (?img=svg), chosen in the sidebar."""
    state.choice(_("Chart download format"), "img", ("png", "svg"), "png", container=container or st.sidebar,
                 widget="segmented_control", format_func=str.upper,
                 help=_("The camera button in each chart's toolbar saves the chart in this format."))


def chart_config(key: str | None = None, **shown) -> dict:
    """The plotly toolbar config for this session: the chosen download format, no plotly logo, and the camera's file
    name (views.widgets.file_names: page, model, the chart's key, layer and head; shown: file_names.name's layer, head,
    mean, when the chart shows others than the sliders drawn)."""
    image = {**CHART_CONFIG["toImageButtonOptions"], "format": st.session_state.get("img", "png"),
             "filename": file_names.name(*([key] if key else []), **shown)}
    return {**CHART_CONFIG, "toImageButtonOptions": image}


def random_config(container=None):
    """Sliders for the random model; only divisors of d_model are offered as head counts."""
    c = container or st.sidebar
    d_model = state.choice("d_model", "d_model", D_MODELS, 128, container=c)
    divisors = [h for h in range(1, 17) if d_model % h == 0]
    heads = state.choice(_("Heads (divisors of d_model)"), "heads", divisors, 4 if 4 in divisors else divisors[-1],
                         container=c)
    layers = state.int_slider(_("Layers"), "layers", 1, 12, 2, container=c)
    d_ff = state.choice("d_ff", "d_ff", (64, 128, 256, 512, 1024, 2048, 3072), 512, container=c)
    activation = state.choice(_("Activation"), "activation", ("gelu", "relu"), "gelu", container=c, widget="radio",
                              horizontal=True)
    norm = state.choice(_("Normalisation"), "norm", ("post-LN", "pre-LN"), "post-LN", container=c, widget="radio",
                        horizontal=True, format_func=shown_as(NORMS))
    positional = state.choice(_("Positions"), "positional", ("sinusoidal", "learned"), "sinusoidal", container=c,
                              widget="radio", horizontal=True, format_func=shown_as(POSITIONS))
    seed = state.int_slider(_("Seed"), "seed", 0, 99, 0, container=c)
    config = RandomConfig(d_model, heads, layers, d_ff, activation, norm == "pre-LN", positional, seed)
    file_names.set_model(RANDOM_KEY, config)  # the page's files name the random model (the architecture page's too)
    return config


def sentence(label: str | None = None, name: str = "text", default: str = DEFAULT_TEXT, container=st) -> str:
    """The text box bound to ?text= (label: default "Sentence"); on empty text it says what to do and stops the
    page."""
    value = state.text(label or _("Sentence"), name, default, MAX_TEXT_CHARS, container=container, height=80)
    if not value.strip():
        st.info(_("Type a sentence above to see its attention."))
        link_writes.stop()
    return value


def layer_head(num_layers: int, num_heads: int, label: str | None = None, layer: int = 0, mean: bool = False,
               containers=None, head: int = 0) -> tuple[int, int, bool]:
    """The Layer slider (?layer=), the Head slider (?head=) and the Mean of heads toggle (?mean=) of a page whose
    maps are (layers, heads, ...): (layer, head, mean). containers: where each goes (layer, head, mean); default one
    row of three columns. layer, head and mean: their defaults."""
    layer_box, head_box, mean_box = containers or st.columns([2, 2, 1], vertical_alignment="bottom")
    layer = state.int_slider(label or _("Layer"), "layer", 0, num_layers - 1, layer, container=layer_box)
    mean = state.toggle(_("Mean of heads"), "mean", mean, container=mean_box)
    head = state.int_slider(_("Head"), "head", 0, num_heads - 1, head, container=head_box, disabled=mean)
    return layer, head, mean


def pick(maps, layer: int, head: int, mean: bool):
    """What layer_head() picked of maps (layers, heads, L, S): one head's (L, S), or the mean of the layer's heads."""
    return maps[layer].mean(axis=0) if mean else maps[layer, head]


def first_head(choice, num_layers: int, num_heads: int) -> tuple[int, int]:
    """The layer and head a page opens at before any is chosen: the head its source shows best on its example (on the
    pretrained MiniLM the head measured best at `it` -> what it refers to, model.analysis.showcase; on the toy GPT the
    induction head that shows best on a sentence written twice, model.gpt.toy.showcase_head), not layer 0 head 0;
    (0, 0) on other models."""
    source = source_of(None if choice is None else choice.key)
    layer, head = (0, 0) if source is None or source.showcase is None else source.showcase()
    return (layer, head) if layer < num_layers and head < num_heads else (0, 0)
