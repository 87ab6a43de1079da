"""The three blocks' diagrams (viz.blocks), from real configs: each module of the block in order, the residual adds
with their skips, the changes since 2017 outlined, numbers from the config, text escaped, valid SVG."""
import xml.etree.ElementTree as ET

from model.analysis.modern import Architecture, architecture, reference_config, translator_config
from viz.blocks import CHANGED, boxes, diagram, svg

SVG = "{http://www.w3.org/2000/svg}"
LLAMA3 = architecture("Llama-3-8B", reference_config("llama-3-8b"))
GPT2 = architecture("GPT-2 small", reference_config("gpt2"))
TUTORIAL = architecture("2017", translator_config())


def kinds(a) -> list[str]:
    return [b.kind for b in boxes(a)]


def test_the_2017_block_is_post_ln_with_the_table_added():
    assert kinds(TUTORIAL) == ["embed", "embed", "attention", "add", "norm", "ffn", "add", "norm"]
    rows = boxes(TUTORIAL)
    assert "ReLU, 64 → 256 → 64" in rows[5].details and not any(b.changed for b in rows)
    assert [b.skip for b in rows if b.kind == "add"] == [2, 5]  # each add takes the sublayer's own input


def test_gpt2_and_llama_are_pre_ln_and_llama_has_no_position_table():
    assert kinds(GPT2) == ["embed", "embed", "norm", "attention", "add", "norm", "ffn", "add", "norm", "head"]
    assert kinds(LLAMA3) == ["embed", "norm", "attention", "add", "norm", "ffn", "add", "norm", "head"]
    llama = boxes(LLAMA3)
    assert [b.skip for b in llama if b.kind == "add"] == [1, 4]  # from before the norm: Pre-LN
    assert "32 query, 8 key/value heads" in llama[2].details and "RoPE rotates q and k" in llama[2].details
    assert "4,096 → 2 × 14,336 → 4,096" in llama[5].details
    assert all(b.changed for b in llama[1:] if b.kind != "add")  # every module after the embedding changed
    assert "its own matrix" in llama[-1].details and "tied to the token embedding" in boxes(GPT2)[-1].details


def test_the_diagrams_are_valid_svg_with_every_box_and_a_frame_of_the_repeated_block():
    drawn = [diagram(t, a.name, boxes(a), a.layers) for t, a in (("2017", TUTORIAL), ("GPT-2", GPT2),
                                                                   ("Llama", LLAMA3))]
    root = ET.fromstring(svg(drawn, "three blocks"))
    assert root.get("aria-label") == "three blocks"
    groups = root.findall(f"{SVG}g")
    assert len(groups) == 3
    for group, a in zip(groups, (TUTORIAL, GPT2, LLAMA3)):
        rows = boxes(a)
        rects = group.findall(f"{SVG}rect")
        assert len(rects) == sum(b.kind != "add" for b in rows) + 1  # the boxes and the dashed frame
        assert len(group.findall(f"{SVG}circle")) == 2 and len(group.findall(f"{SVG}path")) == 2
        assert sum(r.get("stroke") == CHANGED for r in rects) == sum(b.changed for b in rows)
        texts = [t.text for t in group.iter(f"{SVG}text")]
        assert f"× {a.layers} blocks" in texts
    assert int(root.get("viewBox").split()[3]) == max(h for _, h in drawn)


def test_a_hostile_name_is_escaped():
    a = Architecture('<script>alert("x")</script>', 2, 4, 4, 16, 64, 256, 100, 64)
    body, _ = diagram("<b>title</b>", a.name, boxes(a), a.layers)
    root = ET.fromstring(svg([(body, 300)], 'a "label"'))
    assert root.find(f".//{SVG}script") is None and root.find(f".//{SVG}b") is None
    assert '<script>alert("x")</script>' in [t.text for t in root.iter(f"{SVG}text")]
