"""The message catalogs: every string the code marks is in both, translated, with its {fields}; the Chinese uses the
tutorials' terms; the marked strings are plain literals the extractor can read."""
import ast
import re
import sys
from pathlib import Path

import pytest

import locales
from locales import _, ngettext

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import i18n  # noqa: E402  (scripts/i18n.py)

# The tutorials' words: where the English says the left, the Chinese says the right.
GLOSSARY = {
    r"multi-head attention": "多头注意力",
    r"\battention\b": "注意力",
    r"\bmask": "掩码",
    r"\bpositional encoding|\bposition encoding": "位置编码",
    r"\bfeed-forward": "前馈网络",
    r"Add & Norm": "残差连接与层归一化",
    r"\bencoder": "编码器",
    r"\bdecoder": "解码器",
}


@pytest.fixture(scope="module")
def template():
    return i18n.template()


@pytest.mark.parametrize("lang", sorted(locales.LANGUAGES))
def test_the_catalog_has_every_marked_string_translated_with_its_fields(template, lang):
    problems = i18n.problems(lang, template)
    assert not problems, f"{len(problems)} problems in {lang}, e.g.:\n" + "\n".join(problems[:30])


def test_the_code_marks_strings(template):
    assert len(template) >= 20


def test_chinese_uses_the_tutorials_terms():
    wrong = []
    for message in i18n.read("zh"):
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for pattern, term in GLOSSARY.items():
            if any(re.search(pattern, i, re.IGNORECASE) for i in ids) and not all(term in s for s in strings):
                wrong.append(f"{term} missing for {pattern}: {ids[0]!r} -> {strings[0]!r}")
    assert not wrong, "\n".join(wrong[:30])


def _marked_calls(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in i18n.KEYWORDS:
            yield node


@pytest.mark.parametrize("source", i18n.SOURCES)
def test_marked_strings_are_literals_the_extractor_reads(source):
    """_(f"...") or _("a" + b) would never be found in the catalog: shown in English, silently."""
    top = ROOT / source
    bad = []
    for path in ([top] if top.is_file() else sorted(top.rglob("*.py"))):
        for call in _marked_calls(path):
            for arg in call.args:
                if isinstance(arg, (ast.JoinedStr, ast.BinOp)):
                    bad.append(f"{path.relative_to(ROOT)}:{call.lineno}")
    assert not bad, "marked strings built at run time: " + ", ".join(bad)


def test_lookups_follow_the_language():
    with locales.use("zh"):
        assert _("Attention heatmap") == "注意力热力图"
        with locales.use("en"):
            assert _("Attention heatmap") == "Attention heatmap"
        assert locales.current() == "zh"
    assert locales.current() == "en"
    assert _("Attention heatmap") == "Attention heatmap"
    assert ngettext("{n} token", "{n} tokens", 1) == "{n} token"
    assert ngettext("{n} token", "{n} tokens", 2) == "{n} tokens"
    with pytest.raises(ValueError, match="unknown language"):
        with locales.use("fr"):
            pass


def test_fields_are_what_format_fills():
    assert locales.fields("Layer {layer}, head {head:d} of {n:,} {{not}}") == {"layer", "head", "n"}
