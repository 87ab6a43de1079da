"""The Translate page's "Switch heads off" part in Streamlit's AppTest: the translation with and without the heads
switched off in the sidebar (?off=), the exact match on the 200 fixed held-out sentences, every button (sets of heads,
back on, the head that matters most), the ranking computed once per process, and bad input."""
import pytest
import torch

from harness import apptest
from harness.apptest import link_value
from model.translator import ablation, load_shipped
from model.translator.decoding import generate, words_of
from runtime import memory
from training import toy_language
from views.translate.heads import QUICK_SETS, marked

EVERY_CROSS = [f"cross.{layer}.{head}" for layer in range(2) for head in range(4)]


@pytest.fixture(scope="module")
def translator():
    return load_shipped()


@pytest.fixture(scope="module")
def held_out(translator):
    sentences = toy_language.sample(ablation.SENTENCES, ablation.SEED, held_out=True)
    src = ablation.sources_of(translator, [s.chinese() for s in sentences])
    return src, [s.english() for s in sentences]


def open_heads(**params):
    at = apptest.open_page("translate", part="heads", **params)
    assert not at.exception, at.exception
    return at


def said(at, prefix: str) -> str | None:
    found = [m.value.removeprefix(prefix).strip() for m in at.markdown if m.value.startswith(prefix)]
    return found[0] if found else None


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def translate(model, text: str, heads=()) -> str:
    _, ids, _ = model.encode_source(text)
    with torch.inference_mode():
        return words_of(model, generate(model, torch.tensor([ids]), heads_off=heads)[0])


def test_the_whole_model_its_exact_match_and_the_ranking_of_heads_and_sets(translator, held_out):
    at = open_heads()
    assert said(at, "**The whole model:**") == "I have a cat" == translate(translator, "我有一只猫")
    assert metrics(at) == {"Exact match, whole model (200 held-out sentences)": "100.0%"}
    assert at.button(key="heads-off-none").disabled
    ranking = at.dataframe[0].value
    assert len(ranking) == 33 and list(ranking["exact match"]) == sorted(ranking["exact match"])
    by_label = dict(zip(ranking["switched off"], ranking["exact match"]))
    src, english = held_out
    for name, label in (("cross.*.*", "every cross-attention head"), ("cross.1.3", "cross-attention · layer 1 · "
                                                                                    "head 3")):
        heads = [h for s in ablation.head_sets(2, 4) if s.name == name for h in s.heads]
        assert by_label[label] == ablation.score(translator, src, english, heads).exact_match
    assert ranking["switched off"][0] == "every cross-attention head" and ranking["exact match"][0] < 0.1
    assert list(ranking["fall (points)"]) == [round(100 * (1 - m), 1) for m in ranking["exact match"]]


def test_the_ranking_and_the_scores_are_computed_once_per_process():
    open_heads(off="cross.1.3")
    before = memory.COMPUTED["ablation"]
    again = open_heads(off="cross.1.3")
    assert memory.COMPUTED["ablation"] == before and len(again.dataframe[-1].value) == 33  # the ranking, as it was


@pytest.mark.parametrize("name,label", QUICK_SETS)
def test_each_set_button_switches_its_heads_off_in_the_sidebar_and_the_link(name, label, translator, held_out):
    at = open_heads()
    at.button(key=f"heads-off-{name}").click().run()
    assert not at.exception
    heads = [h for s in ablation.head_sets(2, 4) if s.name == name for h in s.heads]
    names = [ablation.head_id(h) for h in heads]
    assert at.sidebar.multiselect(key="off").value == names and link_value(at, "off") == ",".join(names)
    off = translate(translator, "我有一只猫", heads)
    shown = said(at, f"**Without the {len(heads)} heads switched off:**")
    assert shown.replace(":red[**", "").replace("**]", "") == off
    src, english = held_out
    exact = ablation.score(translator, src, english, heads).exact_match
    assert metrics(at)["Exact match without those heads"] == f"{exact:.1%}"
    if name == "cross.*.*":  # the decoder no longer sees the Chinese: the translation breaks
        assert off != "I have a cat" and exact < 0.1 and ":red[" in shown
    at.button(key="heads-off-none").click().run()
    assert at.sidebar.multiselect(key="off").value == [] and link_value(at, "off") == ""
    assert "Exact match without those heads" not in metrics(at)


def test_the_button_of_the_head_that_matters_most_switches_that_one_head_off():
    at = open_heads()
    ranking = at.dataframe[0].value
    singles = ranking[ranking["heads"] == 1]
    top = singles["switched off"].iloc[0]  # e.g. "cross-attention · layer 1 · head 2"
    button = at.button(key="heads-off-top")
    assert top in button.label
    button.click().run()
    (off,) = at.sidebar.multiselect(key="off").value
    block, layer, head = off.split(".")
    assert top == f"{'cross' if block == 'cross' else block + ' self'}-attention · layer {layer} · head {head}"


def test_heads_picked_in_the_sidebar_and_the_wrong_sentences_they_cost(translator, held_out):
    at = open_heads(off="cross.1.3")
    at.sidebar.multiselect(key="off").select("cross.1.2").select("cross.1.0").run()
    assert not at.exception and link_value(at, "off") == "cross.1.3,cross.1.2,cross.1.0"
    heads = [("cross", 1, 3), ("cross", 1, 2), ("cross", 1, 0)]
    src, english = held_out
    score = ablation.score(translator, src, english, heads)
    assert metrics(at)["Exact match without those heads"] == f"{score.exact_match:.1%}"
    wrong = at.dataframe[0].value  # the expander's table, above the ranking
    assert len(wrong) == (~score.right).sum() > 0
    assert list(wrong.columns) == ["Chinese", "correct", "written without those heads"]
    row = wrong.iloc[0]
    assert translate(translator, row["Chinese"], heads) == row["written without those heads"].removesuffix(" …")
    assert row["correct"] != row["written without those heads"]


@pytest.mark.parametrize("src", ["我有一只狮", "你好吗", "我有一只猫" * 14, "我有一只猫。。!!"])
def test_any_text_the_page_lets_through_is_translated_with_and_without_the_heads(src, translator):
    at = open_heads(src=src, off=",".join(EVERY_CROSS))
    whole = said(at, "**The whole model:**")
    assert whole.replace(":red[**", "").replace("**]", "") == (translate(translator, src) or
                                                                 whole)  # (nothing: it wrote <eos> first)
    assert said(at, "**Without the 8 heads switched off:**") is not None
    against = [c.value for c in at.caption if c.value.startswith("Against the correct translation")]
    assert bool(against) == (toy_language.parse(src) is not None)


def test_only_the_words_that_changed_are_marked():
    assert marked("the teacher bought two books".split(), "she bought two books".split()) == \
        ":red[**the**] :red[**teacher**] bought two books"
    assert marked("I have a cat".split(), "I have a cat".split()) == "I have a cat"
    assert marked([], ["I"]) == "(nothing: it wrote ` <eos> ` first)"
