"""What a chart's JSON costs the server, for the app's figures, each comparison in one run.

st.plotly_chart turns each figure into JSON on every rerun:
1. the encoder: plotly's "json" engine encodes the figure, parses the result and encodes it again (to replace
   NaN); with orjson installed, plotly's default ("auto") encodes once in C;
2. the figure: a go.Figure (built unchecked) that Streamlit turns back into dicts with figure.to_dict(), a deep
   copy, against a viz.spec.FigureSpec that hands over the dicts it was built from; from the arrays to the
   JSON, as st.plotly_chart does it.
Heatmaps of 30, 128 and 512 tokens and the all-heads image (6 x 12 heads, 30 tokens).

    .venv/bin/python bench/chart_json.py [--repeat 200]
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np
import plotly.io as pio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.timing import cpu_ms  # noqa: E402
from harness.record import run  # noqa: E402
from viz.attention import heatmap_spec  # noqa: E402
from viz.mosaic import build_mosaic, mosaic_spec  # noqa: E402


def specs() -> dict:
    """name -> a function from the arrays to the figure's FigureSpec, as the pages call it on a rerun."""
    rng = np.random.default_rng(0)
    out = {}
    for T in (30, 128, 512):
        probs = rng.random((T, T), dtype=np.float32)
        probs /= probs.sum(-1, keepdims=True)
        tokens = [f"tok{i}" for i in range(T)]
        out[f"heatmap, {T} tokens"] = lambda probs=probs, tokens=tokens: heatmap_spec(probs, tokens, tokens, "L0")
    maps = rng.random((6, 12, 30, 30), dtype=np.float32)
    mosaic = build_mosaic(maps / maps.sum(-1, keepdims=True))
    out["all heads, 6 x 12, 30 tokens"] = lambda: mosaic_spec(mosaic, highlight=(0, 0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    pio.templates.default = None  # as app.py
    print(f"{'figure':32s} {'KB':>6s} {'json ms':>8s} {'orjson ms':>10s} {'ratio':>6s}")
    for name, build in specs().items():
        fig = build().figure().to_dict()
        ms = {engine: cpu_ms(lambda: pio.to_json(fig, validate=False, engine=engine), args.repeat)
              for engine in ("json", "orjson")}
        outputs = {engine: pio.to_json(fig, validate=False, engine=engine) for engine in ("json", "orjson")}
        assert json.loads(outputs["json"]) == json.loads(outputs["orjson"]), name  # the same chart
        print(f"{name:32s} {len(outputs['json']) / 1024:6.0f} {ms['json']:8.2f} {ms['orjson']:10.2f} "
              f"{ms['orjson'] / ms['json']:6.2f}")
    print(f"the app's engine (plotly's default, {pio.json.config.default_engine!r}): "
          f"{'orjson' if _has_orjson() else 'json'}\n")
    print(f"{'figure':32s} {'go.Figure ms':>13s} {'FigureSpec ms':>14s} {'ratio':>6s}   (arrays -> JSON, app's engine)")
    for name, build in specs().items():
        paths = {"figure": lambda: pio.to_json(build().figure().to_dict(), validate=False),
                 "spec": lambda: pio.to_json(build().to_dict(), validate=False)}
        assert json.loads(paths["figure"]()) == json.loads(paths["spec"]()), name  # the same chart
        ms = {path: cpu_ms(fn, args.repeat) for path, fn in paths.items()}
        print(f"{name:32s} {ms['figure']:13.2f} {ms['spec']:14.2f} {ms['spec'] / ms['figure']:6.2f}")


def _has_orjson() -> bool:
    try:
        import orjson  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    run(__file__, main)
