"""The toy language of docs/toy-language.md in code: its examples, one translation per sentence, its size, its
splits."""
import pytest

from model.translator.vocabulary import chinese_tokens, english_tokens, same_translation
from training import toy_language

# Every example of the toy language's definition (its table, then those in its rules), as docs/toy-language.md gives
# them.
EXAMPLES = [
    ("我有一只猫", "I have a cat"),
    ("她有两个孩子", "she has two children"),
    ("老师喜欢一本旧书", "the teacher likes an old book"),
    ("昨天他们在学校看见了五辆红车", "they saw five red cars at school yesterday"),
    ("明天我们买一个大鸡蛋", "we will buy a big egg tomorrow"),
    ("今天学生们在家想要四个橘子", "the students want four oranges at home today"),
    ("他不喜欢狗", "he does not like dogs"),
    ("昨天我没想要自行车", "I did not want bicycles yesterday"),
    ("她有一个苹果吗", "does she have an apple ?"),
    ("明天老师在公园看见三只小鸟吗", "will the teacher see three small birds in the park tomorrow ?"),
    ("他喜欢狗", "he likes dogs"),
    ("昨天我买了一本书", "I bought a book yesterday"),
    ("他在公园看见一只鸟", "he sees a bird in the park"),
    ("明天她不想要苹果", "she will not want apples tomorrow"),
    ("昨天你买了三本书吗", "did you buy three books yesterday ?"),
]
NOT_IN_LANGUAGE = [
    "我有一本猫",  # a measure word that is not the noun's
    "我有猫",  # a bare noun outside negation and 喜欢
    "我不有猫",  # negation of a verb that takes none
    "昨天我买一本书",  # 买 in the past without 了
    "我买了一本书",  # 了 outside the past
    "他不喜欢狗吗",  # a negated question
    "我一只猫",  # no verb
]


@pytest.fixture(scope="module")
def table() -> dict[str, str]:
    """The whole language: Chinese -> English, and a check that no Chinese sentence comes twice."""
    out = {}
    for sentence in toy_language.every_sentence():
        chinese = sentence.chinese()
        assert chinese not in out, f"{chinese} has two translations: {out[chinese]!r}, {sentence.english()!r}"
        out[chinese] = sentence.english()
    return out


def test_every_example_of_the_page_is_generated_with_its_translation(table):
    for chinese, english in EXAMPLES:
        assert table.get(chinese) == english, chinese


def test_what_the_page_rules_out_is_not_generated(table):
    for chinese in NOT_IN_LANGUAGE:
        assert chinese not in table


def test_the_language_is_counted_and_each_chinese_sentence_has_one_translation(table):
    # statements and questions: 4 times x 8 subjects x 4 places x (5 verbs x 330 number phrases + 11 bare nouns
    # after 喜欢); negations: 4 x 8 x 4 x (2 verbs x 11 bare nouns)
    assert toy_language.SIZE == 2 * 128 * (5 * 5 * 6 * 11 + 11) + 128 * 2 * 11 == 428_032
    assert len(table) == toy_language.SIZE  # every index a different Chinese sentence


def test_the_longest_sentence_is_as_long_as_the_module_says(table):
    assert max(len(chinese) for chinese in table) == toy_language.LONGEST_CHINESE


def test_tokens_and_vocabularies_cover_the_language(table):
    chinese, english = set(toy_language.chinese_vocabulary()), set(toy_language.english_vocabulary())
    assert all(set(chinese_tokens(c)) <= chinese for c in table)
    assert all(set(english_tokens(e)) <= english for e in table.values())
    assert chinese_tokens(" 我有 一只猫。") == list("我有一只猫") and chinese_tokens("她有一个苹果吗？")[-1] == "吗"
    assert english_tokens("does she have an apple?") == ["does", "she", "have", "an", "apple", "?"]


def test_the_checker_ignores_case_and_the_space_before_the_question_mark():
    assert same_translation("Does she have an apple?", "does she have an apple ?")
    assert not same_translation("does she have a apple ?", "does she have an apple ?")


def test_sampling_is_reproducible_by_seed_and_the_held_out_split_is_never_trained_on():
    assert toy_language.sample(50, seed=3) == toy_language.sample(50, seed=3) != toy_language.sample(50, seed=4)
    held = {i for i in range(toy_language.SIZE) if toy_language.is_held_out(i)}
    assert 0.015 < len(held) / toy_language.SIZE < 0.025
    held_chinese = {toy_language.sentence_at(i).chinese() for i in held}
    training = toy_language.sample(3000, seed=0, forms={toy_language.STATEMENT: 1, toy_language.NEGATION: 1})
    assert not {s.chinese() for s in training} & held_chinese
    assert {s.chinese() for s in toy_language.sample(300, seed=5, held_out=True)} <= held_chinese
    assert sum(s.form == toy_language.NEGATION for s in training) > 1000  # the weights were followed


def test_an_index_outside_the_language_is_refused():
    with pytest.raises(IndexError):
        toy_language.sentence_at(toy_language.SIZE)


def test_parse_reads_back_every_sentence_and_its_index_and_nothing_outside_the_language():
    for index in range(0, toy_language.SIZE, 7):  # 61,148 sentences of every form
        sentence = toy_language.sentence_at(index)
        assert toy_language.parse(sentence.chinese()) == sentence
        assert toy_language.index_of(sentence) == index
    for chinese, english in EXAMPLES:
        assert toy_language.parse(f" {chinese}。").english() == english
    for chinese in [*NOT_IN_LANGUAGE, "", "我有一只猫吗吗", "hello", "我喜欢大猫", "我有一只猫 cat"]:
        assert toy_language.parse(chinese) is None, chinese
