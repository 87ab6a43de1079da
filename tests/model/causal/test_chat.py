"""A question in a chat model's template (model.causal.chat): the same ids as the tokenizer's own apply_chat_template,
and each token marked as the question's or the template's, on a tiny chat model written as a GGUF in the test."""
import pytest
import transformers

from model.causal.chat import conversation, has_chat_template
from model.llama.gguf import convert
from tests.model.llama.gguf_files import hf_llama, write_gguf


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chat")
    convert(write_gguf(hf_llama(), folder / "tiny.gguf"), folder / "hf")
    return transformers.AutoTokenizer.from_pretrained(folder / "hf")


@pytest.mark.parametrize("question", ["the cat?", "a cat sat on the mat", "  the  cat  ", "the\ncat", "cat cat cat"])
def test_the_ids_are_the_templates_and_the_question_tokens_spell_the_question(tokenizer, question):
    c = conversation(tokenizer, question)
    want = tokenizer.apply_chat_template([{"role": "user", "content": question}], add_generation_prompt=True,
                                         return_dict=True)["input_ids"]
    assert list(c.ids) == list(want) and len(c.tokens) == len(c.asked) == len(c.ids)
    asked = [i for i, a in zip(c.ids, c.asked) if a]
    assert tokenizer.decode(asked).strip() == question.strip()
    first = c.asked.index(True)
    assert not any(c.asked[:first]) and tokenizer.decode(c.ids[:first]).endswith("<|im_start|>user\n")
    assert tokenizer.decode(c.ids[max(c.question_positions) + 1:]) == "<|im_end|>\n<|im_start|>assistant\n"
    assert c.end_of_turn == tokenizer.convert_tokens_to_ids("<|im_end|>")


def test_a_question_the_template_also_says_is_marked_where_the_user_said_it(tokenizer):
    c = conversation(tokenizer, "user")  # the role's own word, before the question
    first = c.asked.index(True)
    assert "".join(t for t, a in zip(c.tokens, c.asked) if a) == "user"
    assert tokenizer.decode(c.ids[:first]).endswith("<|im_start|>user\n")  # the role's "user": the template's


def test_a_model_without_a_chat_template_is_refused(tokenizer):
    plain = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer.backend_tokenizer)
    assert not has_chat_template(plain) and has_chat_template(tokenizer)
    with pytest.raises(ValueError, match="no chat template"):
        conversation(plain, "the cat?")
