"""Can every student use every page? axe-core's violations on each page view, in Debian's Chromium.

Every page of the registry, in English and in Chinese, normal and in lecture mode (?lang=, ?lecture=), against one
`streamlit run app.py` server, opened in its default state and measured once its charts are drawn
(harness/axe.py). Prints, per page view, the elements that break a rule at each impact (critical, serious,
moderate, minor), the serious or critical rules, and the lowest contrast of its charts' text on its background (axe
does not check text inside an SVG: measured from the drawn colours); then each rule: its impact, the page views it
breaks and the elements in all. Budget: no serious or critical violation on any page view, chart text at least 4.5:1
(tests/e2e/test_accessibility.py).

    .venv/bin/python bench/accessibility.py [--pages heatmap steps] [--lang en zh] [--lecture 0 1] [--samples]
                                            [--states] [--root ../before]

--samples prints a few offending elements' HTML for each rule (to find what to fix). --states measures other states
students open instead, in both languages: each page as each tour stop opens it, and every part of the Translate and
Language model pages. --root measures another checkout of the app (the app before a change), with its own
.streamlit/config.toml.
"""
import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.axe import BLOCKING, IMPACTS, LANGS, MODES, measure, states, views  # noqa: E402
from harness.record import run  # noqa: E402
from harness.servers import chromium, spawn  # noqa: E402


def table(found) -> None:
    print(f"| page view | {' | '.join(IMPACTS)} | serious or critical rules | chart text |")
    print(f"|---|{'---:|' * len(IMPACTS)}---|---:|")
    for f in found:
        counts = " | ".join(str(f.elements(impact) or "") for impact in IMPACTS)
        rules = ", ".join(f"{rule} ({n})" for rule, (_imp, n) in sorted(f.blocking().items()))
        text = "" if f.chart_text is None else f"{f.chart_text:.2f}"
        print(f"| {f.view.name} | {counts} | {rules} | {text} |")
    bad = sum(1 for f in found if f.blocking())
    print(f"\n{bad} of {len(found)} page views have a serious or critical violation; elements in all: "
          + ", ".join(f"{impact} {sum(f.elements(impact) for f in found)}" for impact in IMPACTS) + ".")
    texts = [f.chart_text for f in found if f.chart_text is not None]
    if texts:
        print(f"Chart text (axis ticks and titles, colour bars, legends, notes, numbers on bars; axe does not check "
              f"SVG text): lowest contrast {min(texts):.2f}:1 (WCAG AA: 4.5:1).")


def by_rule(found) -> None:
    views_of, elements, impact_of = defaultdict(int), defaultdict(int), {}
    for f in found:
        for rule, (impact, n) in f.rules.items():
            views_of[rule] += 1
            elements[rule] += n
            impact_of[rule] = impact
    print("\n| rule | impact | page views | elements |\n|---|---|---:|---:|")
    order = sorted(views_of, key=lambda r: (IMPACTS.index(impact_of[r]), r))
    for rule in order:
        print(f"| {rule} | {impact_of[rule]} | {views_of[rule]} | {elements[rule]} |")
    if not order:
        print("| (none) | | | |")


def samples(found) -> None:
    seen = set()
    print()
    for f in found:
        for rule, html in f.samples.items():
            if rule in seen:
                continue
            seen.add(rule)
            print(f"{rule} ({f.rules[rule][0]}), e.g. on {f.view.name}:")
            for h in html:
                print(f"    {h}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", nargs="*", help="registry paths (default: every page)")
    parser.add_argument("--lang", nargs="+", default=list(LANGS))
    parser.add_argument("--lecture", nargs="+", default=list(MODES))
    parser.add_argument("--samples", action="store_true")
    parser.add_argument("--states", action="store_true")
    parser.add_argument("--root", type=Path, default=ROOT, help="another checkout of the app (its theme too)")
    args = parser.parse_args()
    chosen = [v for v in (states() if args.states else views()) if (not args.pages or v.path in args.pages)
              and v.lang in args.lang and v.lecture in args.lecture]
    start = time.perf_counter()
    root = args.root.resolve()
    with spawn(root / "app.py", session_ttl=None, cwd=root) as server, chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        found = measure(context.new_page(), server.url, chosen)
        context.close()
    print(f"axe-core on {len(found)} page views of {'this checkout' if root == ROOT else root} at 1280x720 in "
          f"{time.perf_counter() - start:.0f} s "
          f"(blocking: {', '.join(BLOCKING)}); elements breaking a rule, by impact:\n")
    table(found)
    by_rule(found)
    if args.samples:
        samples(found)
    return 1 if any(f.blocking() for f in found) else 0


if __name__ == "__main__":
    sys.exit(run(__file__, main))
