"""What a chart's JSON costs the server: plotly's own encoder vs orjson, in one run, for the app's figures.

st.plotly_chart turns each figure into JSON on every rerun. Plotly's "json" engine encodes the figure,
parses the result and encodes it again (to replace NaN); with orjson installed, plotly's default ("auto")
encodes once in C. Heatmaps of 30, 128 and 512 tokens and the all-heads image (6 x 12 heads, 30 tokens).

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
from viz.attention import attention_heatmap  # noqa: E402
from viz.mosaic import build_mosaic, mosaic_figure  # noqa: E402


def figures() -> dict[str, dict]:
    rng = np.random.default_rng(0)
    out = {}
    for T in (30, 128, 512):
        probs = rng.random((T, T), dtype=np.float32)
        tokens = [f"tok{i}" for i in range(T)]
        out[f"heatmap, {T} tokens"] = attention_heatmap(probs / probs.sum(-1, keepdims=True), tokens, tokens).to_dict()
    maps = rng.random((6, 12, 30, 30), dtype=np.float32)
    out["all heads, 6 x 12, 30 tokens"] = mosaic_figure(build_mosaic(maps / maps.sum(-1, keepdims=True)),
                                                        highlight=(0, 0)).to_dict()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    pio.templates.default = None  # as app.py
    print(f"{'figure':32s} {'KB':>6s} {'json ms':>8s} {'orjson ms':>10s} {'ratio':>6s}")
    for name, fig in figures().items():
        ms = {engine: cpu_ms(lambda: pio.to_json(fig, validate=False, engine=engine), args.repeat)
              for engine in ("json", "orjson")}
        outputs = {engine: pio.to_json(fig, validate=False, engine=engine) for engine in ("json", "orjson")}
        assert json.loads(outputs["json"]) == json.loads(outputs["orjson"]), name  # the same chart
        print(f"{name:32s} {len(outputs['json']) / 1024:6.0f} {ms['json']:8.2f} {ms['orjson']:10.2f} "
              f"{ms['orjson'] / ms['json']:6.2f}")
    print(f"the app's engine (plotly's default, {pio.json.config.default_engine!r}): "
          f"{'orjson' if _has_orjson() else 'json'}")


def _has_orjson() -> bool:
    try:
        import orjson  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
