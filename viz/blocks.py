"""Three Transformer blocks drawn side by side (the From 2017 to today page): the tutorials' 2017 encoder block,
GPT-2's and the Llama block (SmolLM2's), each from its config (model.analysis.modern.Architecture), as SVG.

Read from the top: the input, each module as a box, the residual adds as ⊕ with the skip drawn on the left, the
repeated block in a dashed frame with its count. A module that changed since 2017 has a thick red outline.
Pure: an Architecture in, an SVG string out; every text is escaped (a config's name is not ours)."""
import html
from dataclasses import dataclass

from locales import _

WIDTH = 270  # one diagram's width (viewBox units: the page scales it to its column)
BOX_LEFT, BOX_RIGHT = 44, 258  # a box's x range; the skips run at SKIP_X, left of it
SKIP_X = 24
CENTRE = (BOX_LEFT + BOX_RIGHT) // 2
LINE, GAP = 16, 16  # a detail line's height; the space between two rows (an arrow)
FILLS = {"embed": "#ececec", "attention": "#fbd9b9", "ffn": "#c9def4", "norm": "#fbefad", "head": "#ececec"}
CHANGED = "#c0392b"


@dataclass(frozen=True)
class Box:
    """One row of a diagram: a module (label and detail lines), or a residual add (kind "add", skip: the index of the
    row whose input the skip starts from)."""

    label: str
    kind: str
    details: tuple[str, ...] = ()
    changed: bool = False
    repeated: bool = False  # inside the block's frame
    skip: int | None = None

    @property
    def height(self) -> int:
        return 24 if self.kind == "add" else 28 + LINE * len(self.details)


def _norm(a, after: bool) -> Box:
    if a.norm == "rms":
        return Box(_("RMSNorm"), "norm", (_("scale only, before the sublayer"),), True, True)
    if after:
        return Box(_("LayerNorm"), "norm", (_("after the add (Post-LN)"),), False, True)
    return Box(_("LayerNorm"), "norm", (_("before the sublayer (Pre-LN)"),), True, True)


def boxes(a) -> list[Box]:
    """The rows of an Architecture's diagram, from its input to its output."""
    rows = [Box(_("Token embedding"), "embed", (_("d_model = {h}").format(h=a.hidden),))]
    if a.position == "sinusoidal":
        rows.append(Box(_("+ positional encoding"), "embed", (_("sinusoidal table, added to x"),)))
    elif a.position == "learned":
        rows.append(Box(_("+ learned positions"), "embed", (_("{p} rows, added to x").format(p=f"{a.positions:,}"),),
                        True))
    heads = _("{n} heads of {d}").format(n=a.heads, d=a.head_dim)
    if a.position == "rope":
        attention = Box(_("Grouped-query attention"), "attention", (
            _("{n} query, {g} key/value heads").format(n=a.heads, g=a.kv_heads), _("RoPE rotates q and k")),
            True, True)
    elif a.decoder:
        attention = Box(_("Masked multi-head attention"), "attention", (heads, _("each word sees the words before")),
                        True, True)
    else:
        attention = Box(_("Multi-head attention"), "attention", (heads,), False, True)
    sizes = f"{a.hidden:,} → {a.inner:,} → {a.hidden:,}"
    if a.ffn == "swiglu":
        ffn = Box(_("SwiGLU feed-forward"), "ffn", ("SiLU(xW_gate) ⊙ xW_up → W_down",
                                                    f"{a.hidden:,} → 2 × {a.inner:,} → {a.hidden:,}"), True, True)
    else:
        name = {"relu": "ReLU", "gelu": "GELU", "gelu_new": "GELU"}.get(a.ffn, a.ffn)
        ffn = Box(_("Feed-forward"), "ffn", (f"{name}, {sizes}",), a.ffn != "relu", True)
    for sublayer in (attention, ffn):
        start = len(rows)
        if a.pre_norm:
            rows.append(_norm(a, False))
        rows.append(sublayer)
        rows.append(Box("+", "add", repeated=True, skip=start))
        if not a.pre_norm:
            rows.append(_norm(a, True))
    if a.decoder:
        rows.append(Box(_("Final RMSNorm") if a.norm == "rms" else _("Final LayerNorm"), "norm", (), True))
        tied = _("tied to the token embedding") if a.tied else _("its own matrix")
        rows.append(Box(_("Linear, then softmax"), "head", (_("over {V} words").format(V=f"{a.vocab:,}"), tied),
                        True))
    return rows


def _text(x: float, y: float, text: str, size: int, weight: str = "normal", anchor: str = "middle",
          colour: str = "#222") -> str:
    return (f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" font-weight="{weight}" text-anchor="{anchor}" '
            f'fill="{colour}">{html.escape(text)}</text>')


def _arrow(y0: float, y1: float, x: float = CENTRE) -> str:
    return (f'<line x1="{x}" y1="{y0:.0f}" x2="{x}" y2="{y1 - 5:.0f}" stroke="#555" stroke-width="1.5"/>'
            f'<polygon points="{x - 4},{y1 - 6:.0f} {x + 4},{y1 - 6:.0f} {x},{y1:.0f}" fill="#555"/>')


def diagram(title: str, subtitle: str, rows: list[Box], layers: int) -> tuple[str, int]:
    """One diagram's SVG elements (no <svg> around them) and its height."""
    parts = [_text(WIDTH / 2, 20, title, 16, "bold"), _text(WIDTH / 2, 39, subtitle, 12, colour="#555")]
    y, tops, bottoms = 58.0, [], []
    for index, row in enumerate(rows):
        if index:
            gap = GAP + (22 if rows[index - 1].repeated and not row.repeated else 0)  # room for the frame's count
            y += gap
            parts.append(_arrow(y - gap, y))
        tops.append(y)
        if row.kind == "add":
            parts.append(f'<circle cx="{CENTRE}" cy="{y + 12:.0f}" r="12" fill="#fff" stroke="#555" '
                         f'stroke-width="1.5"/>' + _text(CENTRE, y + 17, "+", 16, "bold"))
        else:
            stroke = (CHANGED, 3) if row.changed else ("#777", 1)
            parts.append(f'<rect x="{BOX_LEFT}" y="{y:.0f}" width="{BOX_RIGHT - BOX_LEFT}" height="{row.height}" '
                         f'rx="6" fill="{FILLS[row.kind]}" stroke="{stroke[0]}" stroke-width="{stroke[1]}"/>')
            parts.append(_text(CENTRE, y + 19, row.label, 14, "bold"))
            parts.extend(_text(CENTRE, y + 19 + LINE * (k + 1), line, 12, colour="#333")
                         for k, line in enumerate(row.details))
        y += row.height
        bottoms.append(y)
    for index, row in enumerate(rows):
        if row.skip is not None:  # from the arrow into row `skip`, round the left, into the add's left side
            start, end = tops[row.skip] - GAP / 2, tops[index] + 12
            parts.append(f'<path d="M {CENTRE} {start:.0f} H {SKIP_X} V {end:.0f} H {CENTRE - 12}" fill="none" '
                         f'stroke="#555" stroke-width="1.5"/>'
                         f'<polygon points="{CENTRE - 18},{end - 4:.0f} {CENTRE - 18},{end + 4:.0f} {CENTRE - 12},'
                         f'{end:.0f}" fill="#555"/>')
    inside = [i for i, row in enumerate(rows) if row.repeated]
    if inside:
        top, bottom = tops[inside[0]] - GAP / 2 + 2, bottoms[inside[-1]] + GAP / 2 - 2
        parts.append(f'<rect x="{SKIP_X - 16}" y="{top:.0f}" width="{WIDTH - SKIP_X + 4}" '
                     f'height="{bottom - top:.0f}" rx="10" fill="none" stroke="#888" stroke-dasharray="5 4"/>')
        parts.append(_text(WIDTH - 8, bottom + 16, _("× {n} blocks").format(n=layers), 13, "bold", "end", "#555"))
        y = max(y, bottom + 10)
    return "".join(parts), int(y + 12)


def svg(diagrams: list[tuple[str, int]], label: str) -> str:
    """Diagrams side by side in one SVG (each WIDTH wide), scaled to the width of whatever holds it; label: what it
    shows, for a screen reader."""
    width, height = WIDTH * len(diagrams), max(size for body, size in diagrams)
    groups = "".join(f'<g transform="translate({WIDTH * k} 0)">{body}</g>' for k, (body, size) in enumerate(diagrams))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
            f'font-family="sans-serif" role="img" aria-label="{html.escape(label)}">{groups}</svg>')
