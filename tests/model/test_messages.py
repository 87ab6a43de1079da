"""model/ messages a page shows are made once (sources listed for everyone, models loaded once) and translated when
shown: English as a str, the session's language through str() and format()."""
import pickle

import pytest

import locales
from model.loading.sources import ConfigError, RandomConfig, find_source, list_sources
from model.messages import Later


def test_a_config_error_is_shown_in_the_language_of_whoever_reads_it():
    with locales.use("zh"):  # made while a Chinese page runs...
        with pytest.raises(ConfigError) as raised:
            RandomConfig(d_model=100, nhead=3).validate()
    message = raised.value.args[0]
    assert message.startswith("d_model (100) must be divisible by the number of heads (3)")  # ...English inside
    assert str(raised.value) == message  # an English page
    with locales.use("zh"):
        assert str(raised.value).startswith("d_model（100）必须能被头数（3）整除")
        assert f"{raised.value.args[0]}" == str(raised.value)


def test_labels_and_reasons_nest_and_survive_a_pickle():
    source = find_source("minilm")
    assert source.label == "all-MiniLM-L6-v2 (pretrained BERT, 6 layers x 12 heads)" and "6 layers" in source.reason
    reason = Later("{model} is not available: {reason}", model=source.label, reason=source.reason)
    with locales.use("zh"):
        assert str(reason) == "all-MiniLM-L6-v2（预训练 BERT，6 层 × 12 个头）不可用：6 层，12 个头"
    again = pickle.loads(pickle.dumps(reason))
    assert again == reason and isinstance(again, Later)
    with locales.use("zh"):
        assert str(again).endswith("6 层，12 个头")


def test_every_source_has_a_chinese_label():
    with locales.use("zh"):
        labels = [str(s.label) for s in list_sources()]
    assert all(any("\u4e00" <= c <= "\u9fff" for c in label) for label in labels), labels
