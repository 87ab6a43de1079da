"""The floor's sidebar: the controls the app's sidebar has on every page, written as a plain Streamlit page would, each
of them working: the language of the page's words, lecture mode (a taller chart, larger text), the model (with
ATTNVIZ_FLOOR_MODEL: its Hugging Face pass or the app's compiled one, both of all-MiniLM-L6-v2) and the charts'
download format. Each is bound to the URL as the page's other widgets are (page.bound / page.written).

ATTNVIZ_FLOOR_SIDEBAR=app (the default) draws it; =none leaves the sidebar empty (the floor before 2026-11-26, later).
"""
import os
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

SIDEBAR = os.environ.get("ATTNVIZ_FLOOR_SIDEBAR", "app")
if SIDEBAR not in ("app", "none"):
    raise SystemExit(f"ATTNVIZ_FLOOR_SIDEBAR must be app or none, not {SIDEBAR!r}")
LANGUAGES = {"en": "English", "zh": "中文"}
ZH = {  # the page's words in Chinese, as a plain page would keep them: a dict
    "Attention heatmap (floor)": "注意力热图（基线）", "All heads (floor)": "所有注意力头（基线）", "Sentence": "句子",
    "Layer": "层", "Head": "头", "Type a sentence above.": "请在上面输入一个句子。",
    "Every layer (down) and head (across)": "每一层（纵向）和每个头（横向）", "Language": "语言",
    "Lecture mode": "授课模式", "Model": "模型", "Chart download format": "图表下载格式",
    "Download this map (CSV)": "下载这张图（CSV）", "Download every map (NumPy .npz)": "下载所有注意力图（NumPy .npz）",
}
MODELS = {"hf": "all-MiniLM-L6-v2 (Hugging Face)", "compiled": "all-MiniLM-L6-v2 (compiled pass)",
          "": "no model (seeded maps)"}
FORMATS = ("png", "svg")
LECTURE_HEIGHT, LECTURE_FONT = 480, 20


@dataclass(frozen=True)
class Settings:
    """What the sidebar set for this run."""

    lang: str = "en"
    lecture: bool = False
    kind: str = ""  # the model's pass: "hf", "compiled", or "" (no model: seeded maps)
    image_format: str = "png"

    def t(self, text: str) -> str:
        """text in the page's language."""
        return ZH.get(text, text) if self.lang == "zh" else text

    def layout(self, layout: dict) -> dict:
        """A chart's layout, taller and in larger type in lecture mode."""
        return {**layout, "height": LECTURE_HEIGHT, "font": {"size": LECTURE_FONT}} if self.lecture else layout

    @property
    def config(self) -> dict:
        """The chart's config: its camera button saves in the chosen format."""
        return {"toImageButtonOptions": {"format": self.image_format}}


def one_of(options) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in options:
            raise ValueError(raw)
        return raw
    return parse


def flag(raw: str) -> bool:
    if raw not in ("True", "False", "1", "0"):
        raise ValueError(raw)
    return raw in ("True", "1")


def sidebar(model: str, bound, written) -> Settings:
    """The sidebar's controls (none with ATTNVIZ_FLOOR_SIDEBAR=none): model is ATTNVIZ_FLOOR_MODEL, the default pass."""
    if SIDEBAR == "none":
        return Settings(kind=model)
    kinds = ("hf", "compiled") if model else ("",)
    for key, parse, default in (("lang", one_of(LANGUAGES), "en"), ("lecture", flag, False),
                                ("model", one_of(kinds), model), ("format", one_of(FORMATS), "png")):
        bound(key, parse, default)
    t = Settings(lang=st.session_state["lang"]).t
    st.sidebar.segmented_control(t("Language"), list(LANGUAGES), format_func=LANGUAGES.get, required=True, key="lang")
    st.sidebar.toggle(t("Lecture mode"), key="lecture")
    st.sidebar.selectbox(t("Model"), kinds, format_func=MODELS.get, key="model")
    st.sidebar.segmented_control(t("Chart download format"), FORMATS, format_func=str.upper, required=True,
                                 key="format")
    return Settings(written("lang"), written("lecture"), written("model"), written("format"))
