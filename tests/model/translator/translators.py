"""Translators for the tests: a seeded random one, and padded ids of a few sentences."""
import torch

from model.translator import Translator, TranslatorConfig
from model.translator.decoding import batch_of
from model.translator.vocabulary import BOS_ID, PAD_ID, Vocabulary
from training.toy_language import chinese_vocabulary, english_vocabulary


def random_translator(seed=0, **config) -> Translator:
    torch.manual_seed(seed)
    model = Translator(TranslatorConfig(**config), Vocabulary.of(chinese_vocabulary()),
                       Vocabulary.of(english_vocabulary()))
    return model.eval()


def ids(model, sources, targets):
    """Padded (B, S) source and (B, T) target ids of word lists, <bos> first on the target side."""
    width = max(map(len, sources))
    src = torch.tensor([model.source.ids(list(s)) + [PAD_ID] * (width - len(s)) for s in sources])
    width = max(map(len, targets)) + 1
    tgt = torch.tensor([[BOS_ID, *model.target.ids(t.split())] + [PAD_ID] * (width - 1 - len(t.split()))
                        for t in targets])
    return src, tgt


SOURCES, TARGETS = ["我有一只猫", "明天老师在公园看见三只小鸟吗"], ["I have a", "will the teacher see three small"]


def sources(model, texts):
    """(B, S) padded source ids of Chinese texts."""
    return batch_of(model, [model.source.ids(list(t)) for t in texts])
