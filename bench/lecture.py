"""In front of a class: does each page's main chart fit a projector, with ticks a room can read, in Chinese?

For each page of the registry, as the guided tour opens it (its stop), in Debian's Chromium at a 1280x720
viewport (a projector; 1920x1080 at 150 % zoom is the same 1280x720 CSS pixels, at device scale 1.5):
- visible: the share of the page's first chart inside the viewport, without scrolling (1.00 = whole);
- tick px: the smallest font size of its axis tick labels and token labels (the line view's, drawn as text), in
  CSS px;
- top/bottom: where the chart starts and ends (px).
Then, per page, the catalog coverage of its texts in Chinese (AppTest, harness/catalog.py): the share of
the texts it shows that come wholly from the catalog.

    .venv/bin/python bench/lecture.py [--lecture 0|1] [--lang zh] [--scale 1 1.5]
"""
import argparse
import sys
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.projector import CHART, MEASURE, pages  # noqa: E402
from harness.record import run  # noqa: E402
from harness.servers import chromium, spawn  # noqa: E402


def measure(lecture: str, lang: str, scales: list[float]) -> list[dict]:
    rows = []
    with spawn(ROOT / "app.py", session_ttl=None) as server, chromium() as browser:
        for scale in scales:
            context = browser.new_context(viewport={"width": 1280, "height": 720}, device_scale_factor=scale)
            page = context.new_page()
            for path, params in pages():
                query = urlencode({k: str(v) for k, v in {**params, "lang": lang, "lecture": lecture}.items()})
                page.goto(f"{server.url.rstrip('/')}/{path}?{query}")
                try:
                    page.wait_for_selector(CHART + " .main-svg", timeout=90_000)
                except Exception:  # noqa: BLE001 - a page without a chart: say so
                    rows.append({"page": path, "scale": scale, "visible": None})
                    continue
                page.wait_for_timeout(1500)
                found = page.evaluate(MEASURE, CHART) or {}
                rows.append({"page": path, "scale": scale, **found})
            context.close()
    return rows


def coverage(lang: str) -> dict[str, tuple[int, int]]:
    """Per page: (texts wholly from the catalog, texts shown), in AppTest with every catalog string marked."""
    import pytest
    from streamlit.testing.v1 import AppTest

    from harness.apptest import _app_starting_at
    from harness.catalog import data_words, marked_chinese, shown_texts, unmarked

    out = {}
    with pytest.MonkeyPatch.context() as mp, marked_chinese(mp):
        for path, params in pages():
            at = AppTest.from_function(_app_starting_at, args=(path,), default_timeout=120)
            for k, v in {**params, "lang": lang}.items():
                at.query_params[k] = str(v)
            at.run()
            texts = shown_texts(at)
            allowed = data_words(at)
            out[path] = (sum(1 for _kind, text in texts if not unmarked(text, allowed)), len(texts))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lecture", default="1")
    parser.add_argument("--lang", default="zh")
    parser.add_argument("--scale", type=float, nargs="+", default=[1.0, 1.5])
    args = parser.parse_args()
    covered = coverage(args.lang)
    print(f"lecture={args.lecture} lang={args.lang}, viewport 1280x720")
    print(f"{'page':16} {'scale':>5} {'visible':>8} {'tick px':>8} {'top':>6} {'bottom':>7} {'catalog':>12}")
    for row in measure(args.lecture, args.lang, args.scale):
        marked, total = covered.get(row["page"], (0, 0))
        visible = "—" if row.get("visible") is None else f"{row['visible']:.2f}"
        tick = "—" if row.get("tick") is None else f"{row['tick']:.0f}"
        top = "—" if row.get("top") is None else f"{row['top']:.0f}"
        bottom = "—" if row.get("bottom") is None else f"{row['bottom']:.0f}"
        print(f"{row['page']:16} {row['scale']:5.1f} {visible:>8} {tick:>8} {top:>6} {bottom:>7} "
              f"{marked:>5}/{total:<5}")


if __name__ == "__main__":
    run(__file__, main)
