"""The toy Chinese -> English language of the built-in translator, exactly as docs/toy-language.md describes it.

Chinese order: [time] subject [place] [不|没] verb [了] object [吗]
English order: [aux] subject [not] verb object [place] [time] [?]

Every sentence of the language has an index in 0..SIZE-1 (`sentence_at`), so the language can be counted,
listed and sampled by seed without building it whole. Sentences whose index hashes into HELD_OUT_PERCENT
form the held-out split: training never samples them; evaluation samples only them.
"""
import hashlib
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

SUBJECTS = {"我": "I", "你": "you", "他": "he", "她": "she", "我们": "we", "他们": "they",
            "老师": "the teacher", "学生们": "the students"}
THIRD_SINGULAR = {"他", "她", "老师"}
VERBS = {  # base, 3rd singular, past
    "有": ("have", "has", "had"), "喜欢": ("like", "likes", "liked"), "看见": ("see", "sees", "saw"),
    "想要": ("want", "wants", "wanted"), "买": ("buy", "buys", "bought")}
NUMBERS = {"一": "a", "两": "two", "三": "three", "四": "four", "五": "five"}
ADJECTIVES = {"大": "big", "小": "small", "新": "new", "旧": "old", "红": "red"}
TIMES = {"": "", "今天": "today", "昨天": "yesterday", "明天": "tomorrow"}
PLACES = {"": "", "在学校": "at school", "在家": "at home", "在公园": "in the park"}
NOUNS = {  # measure word, singular, plural
    "猫": ("只", "cat", "cats"), "狗": ("只", "dog", "dogs"), "鸟": ("只", "bird", "birds"),
    "书": ("本", "book", "books"), "车": ("辆", "car", "cars"), "自行车": ("辆", "bicycle", "bicycles"),
    "苹果": ("个", "apple", "apples"), "鸡蛋": ("个", "egg", "eggs"), "橘子": ("个", "orange", "oranges"),
    "朋友": ("个", "friend", "friends"), "孩子": ("个", "child", "children")}
NEGATABLE = ("喜欢", "想要")  # the verbs that take 不/没, always with a bare noun
BARE_AFTER = ("喜欢",)  # the verb that takes a bare noun in affirmative sentences and questions
PAST_LE = ("买", "看见")  # the verbs that take 了 in the past
STATEMENT, QUESTION, NEGATION = "statement", "question", "negation"
HELD_OUT_PERCENT = 2

_TIME_KEYS, _SUBJECT_KEYS, _PLACE_KEYS = list(TIMES), list(SUBJECTS), list(PLACES)
_NUMBER_PHRASES = [(n, a, noun) for n in NUMBERS for a in ["", *ADJECTIVES] for noun in NOUNS]
_OBJECTS = {verb: [*_NUMBER_PHRASES, *((None, "", noun) for noun in NOUNS if verb in BARE_AFTER)] for verb in VERBS}
_VERB_OBJECTS = [(verb, obj) for verb in VERBS for obj in _OBJECTS[verb]]  # affirmative and questions
_NEGATED_OBJECTS = [(verb, (None, "", noun)) for verb in NEGATABLE for noun in NOUNS]
_FRAMES = len(TIMES) * len(SUBJECTS) * len(PLACES)  # time x subject x place
_AFFIRMATIVE = _FRAMES * len(_VERB_OBJECTS)
LONGEST_CHINESE = 18  # characters of the longest sentence (tests/training/test_language.py counts them)
SIZE = 2 * _AFFIRMATIVE + _FRAMES * len(_NEGATED_OBJECTS)  # statements, questions, negations


@dataclass(frozen=True)
class Sentence:
    """One sentence of the language. number None = a bare noun (English plural)."""

    time: str
    subject: str
    place: str
    verb: str
    number: str | None
    adjective: str
    noun: str
    form: str  # STATEMENT, QUESTION or NEGATION

    @property
    def tense(self) -> str:
        return {"昨天": "past", "明天": "future"}.get(self.time, "present")

    @property
    def kind(self) -> str:
        """What the metrics count errors by: form and tense, e.g. "question/past"."""
        return f"{self.form}/{self.tense}"

    def chinese(self) -> str:
        negation = {"past": "没"}.get(self.tense, "不") if self.form == NEGATION else ""
        le = "了" if self.tense == "past" and self.verb in PAST_LE and self.form != NEGATION else ""
        measure = "" if self.number is None else self.number + NOUNS[self.noun][0]
        question = "吗" if self.form == QUESTION else ""
        return f"{self.time}{self.subject}{self.place}{negation}{self.verb}{le}{measure}{self.adjective}{self.noun}" \
               f"{question}"

    def english(self) -> str:
        base, third, past = VERBS[self.verb]
        singular = self.subject in THIRD_SINGULAR
        do = {"past": "did", "future": "will"}.get(self.tense, "does" if singular else "do")
        if self.form == QUESTION:
            words = [do, SUBJECTS[self.subject], base]
        elif self.form == NEGATION:
            words = [SUBJECTS[self.subject], do, "not", base]
        else:
            verb = {"past": past, "future": f"will {base}"}.get(self.tense, third if singular else base)
            words = [SUBJECTS[self.subject], verb]
        words.append(self.object_english())
        words += [PLACES[self.place], TIMES[self.time], "?" if self.form == QUESTION else ""]
        return " ".join(w for w in words if w)

    def object_english(self) -> str:
        _, singular, plural = NOUNS[self.noun]
        if self.number is None:
            return plural
        after = " ".join(w for w in (ADJECTIVES.get(self.adjective, ""), singular if self.number == "一" else plural)
                         if w)
        number = ("an" if after[0] in "aeiou" else "a") if self.number == "一" else NUMBERS[self.number]
        return f"{number} {after}"


def sentence_at(index: int) -> Sentence:
    """The sentence with this index, 0 <= index < SIZE: statements, then questions, then negations."""
    if not 0 <= index < SIZE:
        raise IndexError(f"the language has {SIZE} sentences, not index {index}")
    form, rest = ((STATEMENT, index) if index < _AFFIRMATIVE else (QUESTION, index - _AFFIRMATIVE)
                  if index < 2 * _AFFIRMATIVE else (NEGATION, index - 2 * _AFFIRMATIVE))
    pairs = _NEGATED_OBJECTS if form == NEGATION else _VERB_OBJECTS
    frame, pair = divmod(rest, len(pairs))
    frame, place = divmod(frame, len(PLACES))
    time, subject = divmod(frame, len(SUBJECTS))
    verb, (number, adjective, noun) = pairs[pair]
    return Sentence(_TIME_KEYS[time], _SUBJECT_KEYS[subject], _PLACE_KEYS[place], verb, number, adjective, noun,
                    form)


def every_sentence() -> Iterator[Sentence]:
    return (sentence_at(i) for i in range(SIZE))


def is_held_out(index: int) -> bool:
    """A fixed ~2 % of the language that training never samples (a hash of the index, not of any seed)."""
    digest = hashlib.blake2b(index.to_bytes(4, "little"), digest_size=2).digest()
    return int.from_bytes(digest, "little") % 100 < HELD_OUT_PERCENT


FORMS = (STATEMENT, QUESTION, NEGATION)
_FORM_RANGES = {STATEMENT: (0, _AFFIRMATIVE), QUESTION: (_AFFIRMATIVE, 2 * _AFFIRMATIVE),
                NEGATION: (2 * _AFFIRMATIVE, SIZE)}


def sample(n: int, seed: int, held_out: bool = False, forms: dict[str, float] | None = None) -> list[Sentence]:
    """n sentences drawn with replacement from the training split, or from the held-out split: uniformly over the
    language, or first a form with the weights `forms` (negations are 0.7 % of the language), then uniformly
    among the sentences of that form."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        if forms is None:
            index = rng.randrange(SIZE)
        else:
            index = rng.randrange(*_FORM_RANGES[rng.choices(list(forms), weights=list(forms.values()))[0]])
        if is_held_out(index) == held_out:
            out.append(sentence_at(index))
    return out


def chinese_vocabulary() -> list[str]:
    """Every character the language uses, in a fixed order."""
    text = "".join([*TIMES, *SUBJECTS, *PLACES, "不没了吗", *VERBS, *NUMBERS, *ADJECTIVES,
                    *(m for m, _, _ in NOUNS.values()), *NOUNS])
    return list(dict.fromkeys(text))


def english_vocabulary() -> list[str]:
    """Every English word the language uses, in a fixed order."""
    words = [*SUBJECTS.values(), *(w for forms in VERBS.values() for w in forms), "a", "an", *NUMBERS.values(),
             *ADJECTIVES.values(), *TIMES.values(), *PLACES.values(), "do", "does", "did", "will", "not", "?",
             *(w for _, s, p in NOUNS.values() for w in (s, p))]
    return list(dict.fromkeys(t for w in words for t in w.split()))


def _alternatives(words) -> str:
    """A regex group of the words, the longest first (我们 before 我)."""
    return "(" + "|".join(sorted((w for w in words if w), key=len, reverse=True)) + ")"


_MEASURES = {m for m, _, _ in NOUNS.values()}
_AFFIRMATIVE_PAIRS, _NEGATED_PAIRS = frozenset(_VERB_OBJECTS), frozenset(_NEGATED_OBJECTS)
_PATTERN = re.compile(
    f"{_alternatives(TIMES)}?{_alternatives(SUBJECTS)}{_alternatives(PLACES)}?(不|没)?{_alternatives(VERBS)}(了)?"
    f"(?:{_alternatives(NUMBERS)}{_alternatives(_MEASURES)})?{_alternatives(ADJECTIVES)}?{_alternatives(NOUNS)}(吗)?")


def parse(chinese: str) -> Sentence | None:
    """The sentence of the language this Chinese text is (spaces and a final 。 or ？ ignored), or None when it is
    none: it is rebuilt from its parts and must read back the same, so every rule (measure words, 了, 不/没, bare
    nouns) is checked by the code that writes the language."""
    text = "".join(chinese.split()).rstrip("。？.?")
    match = _PATTERN.fullmatch(text)
    if match is None:
        return None
    time, subject, place, negation, verb, _, number, _, adjective, noun, question = match.groups()
    form = NEGATION if negation else QUESTION if question else STATEMENT
    sentence = Sentence(time or "", subject, place or "", verb, number, adjective or "", noun, form)
    pairs = _NEGATED_PAIRS if form == NEGATION else _AFFIRMATIVE_PAIRS
    return sentence if sentence.chinese() == text and (verb, (number, sentence.adjective, noun)) in pairs else None


def index_of(sentence: Sentence) -> int:
    """The inverse of sentence_at."""
    pairs = _NEGATED_OBJECTS if sentence.form == NEGATION else _VERB_OBJECTS
    pair = pairs.index((sentence.verb, (sentence.number, sentence.adjective, sentence.noun)))
    frame = (_TIME_KEYS.index(sentence.time) * len(SUBJECTS) + _SUBJECT_KEYS.index(sentence.subject)) * len(PLACES) \
        + _PLACE_KEYS.index(sentence.place)
    return _FORM_RANGES[sentence.form][0] + frame * len(pairs) + pair
