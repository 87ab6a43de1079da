"""Checks that run inside the built image, with no network, under the compose file's limits (scripts/build_image.sh
mounts this file and harness/ read-only at check time; .dockerignore keeps both out of the image):

    python /check/check_image.py pages       every page of the registry, in English and in Chinese (?lang=en, zh),
                                             draws its main chart without an exception (Streamlit's AppTest: the
                                             app itself, as a shared link opens it); the Tour page draws no chart
                                             by design, its stops' links instead. Then every CSV and .npz download
                                             those pages offered is made and parsed, with each page that picks a
                                             model also run on SmolLM2 (?model=smollm2).
    python /check/check_image.py live        both live trainings (the Translate page's and the Language model
                                             page's: runtime/live_training.py running training/live.py's
                                             commands, as the pages do) run to their end, after the process has
                                             loaded what the pages load; ATTNVIZ_LIVE_STEPS and
                                             ATTNVIZ_LIVE_GPT_STEPS shorten them.

Run from the image's /app (its code); prints one line per check and exits non-zero on the first failure.
"""
import argparse
import csv
import io
import sys
import time
from pathlib import Path

import numpy as np

APP = Path.cwd()
sys.path.insert(0, str(APP))
sys.path.insert(1, str(Path(__file__).resolve().parent))  # harness/, mounted beside this file

from harness.apptest import charts, open_page  # noqa: E402
from locales import _, use  # noqa: E402
from views.shell import registry  # noqa: E402
from views.widgets import downloads  # noqa: E402

LANGS = ("en", "zh")
# arrays that are all NaN when the text gives them nothing to measure: a head atlas's measures of repeated tokens, on a
# text where no token repeats (SmolLM2 reads "The" and " the" as two tokens)
NOTHING_TO_MEASURE = {"head_atlas.npz": ("induction", "same")}
LLM = "smollm2"  # its metadata read at build time (ATTNVIZ_LLM_CACHE), its weights from the package's GGUF
NO_CHART = {"tour"}  # pages that draw no chart by design: their stops' links instead
DIAGRAMS = {"modern": 3}  # pages whose first part draws diagrams (SVG images), not charts: how many at least
LIVE_SECONDS = 600  # the longest a shortened live run may take here (a full one has max_seconds of its settings)


def fail(message: str) -> None:
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


def pages() -> dict:
    """Open every page in both languages; {(page, file name): build} of the downloads they offered (English)."""
    offered, real = {}, downloads.button
    current = [""]

    def recording(label, build, file_name, mime, container=None):
        offered.setdefault((current[0], file_name), build)
        real(label, build, file_name, mime, container)

    downloads.button = recording
    for spec in registry.PAGES:
        for lang in LANGS:
            current[0], start = spec.path, time.perf_counter()
            with use(lang):
                title = _(spec.title)
            at = open_page(spec.path, title=title, lang=lang)  # asserts the page's title in that language
            if at.exception:
                fail(f"/{spec.path}?lang={lang}: {at.exception[0].value}")
            drawn = charts(at)
            if spec.path in NO_CHART:
                links = at.get("page_link")
                if len(links) < 2:
                    fail(f"/{spec.path}?lang={lang}: {len(links)} links, no chart")
                what = f"{len(links)} links"
            elif spec.path in DIAGRAMS:
                images = [h for h in at.get("html") if "data:image/svg+xml;base64," in h.proto.body]
                if len(images) < DIAGRAMS[spec.path]:
                    fail(f"/{spec.path}?lang={lang}: {len(images)} diagrams drawn, not {DIAGRAMS[spec.path]}")
                what = f"{len(images)} diagrams"
            else:
                if not drawn or not drawn[0].figure.get("data"):
                    fail(f"/{spec.path}?lang={lang}: no chart drawn")
                what = f"{len(drawn)} charts, the first a {drawn[0].figure['data'][0].get('type', '?')}"
            print(f"page /{spec.path}?lang={lang}: {title}, {what} ({time.perf_counter() - start:.1f} s)", flush=True)
    for spec in [*(s for s in registry.PAGES if registry.MODEL in s.needs),
                 *(s for s in registry.PAGES if s.path == "language-model")]:  # the LLM on every page that picks one
        current[0], start = f"{spec.path}?model={LLM}", time.perf_counter()
        at = open_page(spec.path, model=LLM)
        if at.exception or at.error:
            fail(f"/{current[0]}: {(at.exception or at.error)[0].value}")
        if not charts(at):
            fail(f"/{current[0]}: no chart drawn")
        print(f"page /{current[0]}: {len(charts(at))} charts ({time.perf_counter() - start:.1f} s)", flush=True)
    downloads.button = real
    return offered


def check_csv(name: str, data: bytes) -> str:
    text = data.decode("utf-8")
    if not text.startswith(downloads.BOM):
        fail(f"{name}: no byte order mark in front (Excel would garble its Chinese)")
    rows = list(csv.reader(io.StringIO(text.removeprefix(downloads.BOM))))
    if len(rows) < 2 or len(rows[0]) < 2:
        fail(f"{name}: {len(rows)} rows")
    return f"{len(rows)} rows x {len(rows[0])} columns"


def check_npz(name: str, data: bytes) -> str:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        arrays = {key: npz[key] for key in npz.files}
    if not arrays or not any(a.size for a in arrays.values()):
        fail(f"{name}: no array")
    # NaN or -inf may mark what a mask blocks (the encoder-decoder's causal map); a float array of nothing else, not
    empty = [key for key, a in arrays.items() if a.dtype.kind == "f" and a.size and not np.isfinite(a).any()
             and key not in NOTHING_TO_MEASURE.get(name, ())]
    if empty:
        fail(f"{name}: no finite value in {empty}")
    return f"{len(arrays)} arrays"


def check_downloads(offered: dict) -> None:
    kinds = {".csv": check_csv, ".npz": check_npz}
    made = {ext: 0 for ext in kinds}
    for (page, name), build in sorted(offered.items()):
        ext = Path(name).suffix
        if ext not in kinds:
            continue
        start = time.perf_counter()
        data = build()
        print(f"download /{page} {name}: {len(data):,} bytes, {kinds[ext](name, data)} "
              f"({time.perf_counter() - start:.1f} s)", flush=True)
        made[ext] += 1
    if not all(made.values()):
        fail(f"downloads made: {made}: a CSV and an .npz at least")


def live() -> None:
    from runtime.live_training import FINISHED, RUNNING, LiveTraining  # noqa: PLC0415 - idem
    from training.live import GPTSettings, Settings, live_gpt_steps, live_steps  # noqa: PLC0415 - after pages

    for settings in (Settings(steps=live_steps()), GPTSettings(steps=live_gpt_steps())):
        if not settings.steps:
            fail(f"{settings.kind}: live training is off (its steps are 0)")
        training = LiveTraining(settings)
        run = training.start(seed=0, owner="check")
        deadline = time.time() + LIVE_SECONDS
        while (run := training.current()).state == RUNNING and time.time() < deadline:
            time.sleep(0.5)
        if run.state != FINISHED:
            fail(f"live {settings.kind}: {run.state} after {run.seconds():.0f} s: {run.why}")
        step, weights = training.weights(run.number)
        model = settings.model(run.config, weights)
        params = [p.detach() for p in model.parameters()]
        if not all(bool(p.isfinite().all()) for p in params) or not run.loss or run.loss[-1] >= run.loss[0]:
            fail(f"live {settings.kind}: loss {run.loss[:1]} -> {run.loss[-1:]}, weights finite or not")
        last = run.evaluations[-1] if run.evaluations else "-"
        print(f"live {settings.kind}: finished {len(run.loss)} of {run.steps} steps in {run.seconds():.1f} s, loss "
              f"{run.loss[0]:.2f} -> {run.loss[-1]:.2f}, last evaluation (step, score) {last}, final weights of step "
              f"{step} ({sum(p.numel() for p in params):,} parameters)", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", nargs="+", choices=["pages", "live"])
    args = ap.parse_args()
    if "pages" in args.what:
        check_downloads(pages())
    if "live" in args.what:
        live()
    return 0


if __name__ == "__main__":
    sys.exit(main())
