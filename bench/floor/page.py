"""One floor page: the app's sidebar as plain widgets (bench/floor/sidebar.py), a text area bound to ?text=, sliders
bound to ?layer= and ?head=, one heatmap (of no model, or of a real one with ATTNVIZ_FLOOR_MODEL)."""
import io
import os
import sys
import zlib
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st
from sidebar import Settings, sidebar

# As the app: Streamlit's chart theme replaces plotly's template, so it is not built and sent with each chart.
pio.templates.default = None
LAYERS, HEADS = 6, 12  # all-MiniLM-L6-v2, the app's default model
ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."
FRAGMENT = os.environ.get("ATTNVIZ_FLOOR_FRAGMENT", "") not in ("", "0")
# The all-heads page: "controls" (every head, with the app's page's settings, link and downloads), "grid" (every
# head, the chosen one), "one" (the chosen head only, as it was before 2026-11-26)
ALL_HEADS = os.environ.get("ATTNVIZ_FLOOR_ALL_HEADS", "controls")
if ALL_HEADS not in ("controls", "grid", "one"):
    raise SystemExit(f"ATTNVIZ_FLOOR_ALL_HEADS must be controls, grid or one, not {ALL_HEADS!r}")
SPECIAL = ("[CLS]", "[SEP]")
# ATTNVIZ_FLOOR_MODEL: the floor plus a real model, run in the page for each new sentence, held in the session
# (no cache shared between sessions): "compiled" is the app's default model in its compiled pass (model.compiled),
# "hf" is Hugging Face's BertModel (eager attention, output_attentions=True) on the same weights.
MODEL = os.environ.get("ATTNVIZ_FLOOR_MODEL", "")
if MODEL not in ("", "compiled", "hf"):
    raise SystemExit(f"ATTNVIZ_FLOOR_MODEL must be compiled or hf, not {MODEL!r}")


@st.cache_resource
def model(kind: str):
    """(tokenizer, pass: token ids -> attentions (layers, heads, T, T) as numpy), once per process and kind."""
    import torch
    from transformers import AutoTokenizer, BertModel

    if str(ROOT) not in sys.path:  # `streamlit run bench/floor/app.py` puts only bench/floor on the path
        sys.path.insert(0, str(ROOT))
    from model.loading.sources import packaged_model_dir

    threads = os.environ.get("ATTNVIZ_TORCH_THREADS")
    if threads:
        torch.set_num_threads(int(threads))
    path = packaged_model_dir()
    if kind == "hf":
        hf = BertModel.from_pretrained(path, attn_implementation="eager").eval()

        def forward(ids):
            return torch.stack(hf(ids, output_attentions=True).attentions)[:, 0]
    else:
        from model.bert import BertModel as Ours
        from model.compiled import compiled_pass

        ours = Ours.from_pretrained(path)
        graph = compiled_pass(ours, ours.max_positions)

        def forward(ids):
            return graph(ids)[1]

    def run(ids):
        with torch.inference_mode():
            return forward(torch.tensor([ids])).numpy()
    return AutoTokenizer.from_pretrained(path, local_files_only=True), run


def model_attentions(text: str, kind: str) -> tuple[list[str], np.ndarray]:
    """The word pieces and (layers, heads, T, T) maps of the model's pass `kind`; one pass per new sentence (or pass)
    in this session."""
    held = st.session_state.get("_run")
    if held is None or held[0] != text or st.session_state.get("_run_kind") != kind:
        tokenizer, run = model(kind)
        ids = tokenizer(text, truncation=True, max_length=512)["input_ids"]
        held = st.session_state["_run"] = (text, tokenizer.convert_ids_to_tokens(ids), run(ids))
        st.session_state["_run_kind"] = kind
    return held[1], held[2]


def seeded(text: str, layer: int, head: int) -> np.ndarray:
    """A (T, T) float32 row softmax over the whitespace tokens, the same for the same text, layer and head."""
    size = len(text.split())
    rng = np.random.default_rng(zlib.crc32(f"{layer}/{head}/{text}".encode()))
    scores = rng.standard_normal((size, size), dtype=np.float32)
    probs = np.exp(scores - scores.max(axis=1, keepdims=True))
    return probs / probs.sum(axis=1, keepdims=True)


def attention(text: str, layer: int, head: int, kind: str) -> tuple[list[str], np.ndarray]:
    """Whitespace tokens and the seeded map of layer, head; with a model's pass (ATTNVIZ_FLOOR_MODEL, the sidebar's
    choice), the model's word pieces and attention map."""
    if kind:
        tokens, maps = model_attentions(text, kind)
        return tokens, maps[layer, head]
    return text.split(), seeded(text, layer, head)


def attentions(text: str, kind: str) -> tuple[list[str], np.ndarray]:
    """The tokens and every (layers, heads, T, T) map, as attention() gives them one at a time."""
    if kind:
        return model_attentions(text, kind)
    return text.split(), np.stack([[seeded(text, layer, head) for head in range(HEADS)] for layer in range(LAYERS)])


def bound(key: str, parse, default):
    """The widget's value before it is drawn: kept in the session, else from the URL, else the default."""
    if key not in st.session_state:
        try:
            st.session_state[key] = parse(st.query_params[key])
        except (KeyError, ValueError):
            st.session_state[key] = st.session_state.get("_" + key, default)


def written(key: str):
    """Keep the value for the next page (a page switch drops the widget) and put it in the URL if it changed."""
    value = st.session_state["_" + key] = st.session_state[key]
    if st.query_params.get(key) != str(value):
        st.query_params[key] = str(value)
    return value


def in_range(high: int):
    def parse(raw: str) -> int:
        value = int(raw)
        if not 0 <= value <= high:
            raise ValueError(raw)
        return value
    return parse


def head_view(text: str, s: Settings, files: bool = False) -> None:
    """The layer and head sliders, the chosen head's map; files: a link to it on the heatmap page, and downloads."""
    bound("layer", in_range(LAYERS - 1), 0)
    bound("head", in_range(HEADS - 1), 0)
    st.slider(s.t("Layer"), 0, LAYERS - 1, key="layer")
    st.slider(s.t("Head"), 0, HEADS - 1, key="head")
    layer, head = written("layer"), written("head")
    tokens, probs = attention(text, layer, head, s.kind)
    labels = [f"{i}:{t}" for i, t in enumerate(tokens)]  # unique: plotly merges equal categories
    if files:
        st.page_link("heatmap.py", label=f"Open layer {layer} head {head} in the big view",
                     query_params={"text": text, "layer": layer, "head": head})
    st.plotly_chart(go.Figure(go.Heatmap(z=probs, x=labels, y=labels, zmin=0, zmax=1, colorscale="Viridis"),
                              layout=s.layout({"title": {"text": f"{s.t('Layer')} {layer}, {s.t('Head')} {head}"},
                                               "yaxis": {"autorange": "reversed"}})), config=s.config)
    if files:
        st.download_button(s.t("Download this map (CSV)"), lambda: head_csv(probs, tokens),
                           file_name=f"attention_layer{layer}_head{head}.csv", mime="text/csv")
        st.download_button(s.t("Download every map (NumPy .npz)"), lambda: maps_npz(text, s.kind),
                           file_name="attention.npz", mime="application/octet-stream")


def head_csv(probs: np.ndarray, tokens: list[str]) -> str:
    rows = [",".join(["query \\ key", *tokens])]
    rows += [",".join([t, *(f"{p:.6g}" for p in row)]) for t, row in zip(tokens, probs, strict=True)]
    return "\n".join(rows)


def maps_npz(text: str, kind: str) -> bytes:
    tokens, maps = attentions(text, kind)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, attentions=maps, tokens=np.array(tokens))
    return buffer.getvalue()


def settings() -> tuple[str, int, bool, str]:
    """The all-heads page's settings, as the app's page has them: downsampling, tile size, colour range, special
    tokens."""
    row = st.container(horizontal=True, gap="large")
    pool = row.radio("Downsampling of long sentences", ["max-pool", "block mean"], horizontal=True, key="pool")
    tile = row.radio("Tile size (px)", [32, 48, 64, 96], index=2, horizontal=True, key="tile")
    auto = row.toggle("Auto colour range", key="auto")
    special = row.segmented_control("Special tokens", ["show", "hide", "renormalise"], default="show",
                                    key="special")
    return pool, tile, auto, special or "show"


def shown_maps(tokens: list[str], maps: np.ndarray, special: str) -> tuple[list[str], np.ndarray]:
    """The tokens and maps without [CLS] and [SEP] (hide), and their rows summing to 1 again (renormalise)."""
    keep = [i for i, t in enumerate(tokens) if special == "show" or t not in SPECIAL] or list(range(len(tokens)))
    maps = maps[..., keep, :][..., keep]
    if special == "renormalise":
        maps = maps / maps.sum(axis=-1, keepdims=True)
    return [tokens[i] for i in keep], maps


def pooled(maps: np.ndarray, tile: int, pool: str) -> np.ndarray:
    """Each map at most `tile` cells a side: the max or mean of each block of cells."""
    size = maps.shape[-1]
    factor = -(-size // tile)
    if factor == 1:
        return maps
    n = -(-size // factor)
    padded = np.pad(maps, ((0, 0), (0, 0), (0, n * factor - size), (0, n * factor - size)), constant_values=np.nan)
    blocks = padded.reshape(*maps.shape[:2], n, factor, n, factor)
    return np.nanmax(blocks, axis=(3, 5)) if pool == "max-pool" else np.nanmean(blocks, axis=(3, 5))


def all_heads_view(text: str, controls: bool, s: Settings) -> None:
    """Every head in one heatmap: the layers down, the heads across, one NaN row and column between two maps;
    controls: with the app's page's settings (they change the picture) and its caption."""
    pool, tile, auto, special = settings() if controls else ("max-pool", 64, False, "show")
    tokens, maps = shown_maps(*attentions(text, s.kind), special)
    maps = pooled(maps, tile, pool)
    if auto:
        low = maps.min(axis=(2, 3), keepdims=True)
        maps = (maps - low) / np.maximum(maps.max(axis=(2, 3), keepdims=True) - low, 1e-12)
    size = maps.shape[-1]
    tiles = np.pad(maps, ((0, 0), (0, 0), (0, 1), (0, 1)), constant_values=np.nan)  # (layers, heads, T + 1, T + 1)
    grid = tiles.transpose(0, 2, 1, 3).reshape(LAYERS * (size + 1), HEADS * (size + 1))[:-1, :-1]
    centres = [i * (size + 1) + (size - 1) / 2 for i in range(max(LAYERS, HEADS))]
    layout = {"title": {"text": s.t("Every layer (down) and head (across)")}, "height": LAYERS * tile + 120,
              "xaxis": {"tickvals": centres[:HEADS], "ticktext": [f"H{h}" for h in range(HEADS)]},
              "yaxis": {"tickvals": centres[:LAYERS], "ticktext": [f"L{i}" for i in range(LAYERS)],
                        "autorange": "reversed", "scaleanchor": "x"}}
    st.plotly_chart(go.Figure(go.Heatmap(z=grid, zmin=0, zmax=1, colorscale="Viridis"), layout=s.layout(layout)),
                    config=s.config)
    if controls:
        st.caption(f"{len(tokens)} tokens · {LAYERS} layers × {HEADS} heads · tiles of {tile} px · "
                   f"{'each tile stretched to its own min..max' if auto else 'fixed 0..1'}")


def page(title: str, all_heads: bool = False) -> None:
    s = sidebar(MODEL, bound, written)
    st.title(s.t(title))
    bound("text", str, DEFAULT_TEXT)
    st.text_area(s.t("Sentence"), key="text")
    text = written("text")
    if not text.split():
        st.info(s.t("Type a sentence above."))
        return
    if all_heads and ALL_HEADS != "one":
        all_heads_view(text, ALL_HEADS == "controls", s)
    (st.fragment(head_view) if FRAGMENT else head_view)(text, s, files=all_heads and ALL_HEADS == "controls")
