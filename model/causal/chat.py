"""A chat model's conversation: the question a student asks, put in the model's chat template (SmolLM2's
`<|im_start|>user ... <|im_end|>`), as the ids it reads and, for each token, whether it is the question's or the
template's. The template's tokens (the turn markers, the roles, the system prompt) take attention too: a page shows
them, greyed, and can hide them."""
from dataclasses import dataclass

from model.causal.reading import shown_tokens


@dataclass(frozen=True)
class Conversation:
    """One question in the chat template, up to the assistant's turn (where the answer starts)."""

    ids: tuple[int, ...]  # (P,)
    tokens: tuple[str, ...]  # (P,) as shown
    asked: tuple[bool, ...]  # (P,) True at a token of the question, False at one of the template's
    end_of_turn: int  # the id the model writes when its answer is over (<|im_end|>)

    @property
    def question_positions(self) -> tuple[int, ...]:
        return tuple(i for i, a in enumerate(self.asked) if a)


def has_chat_template(tokenizer) -> bool:
    return bool(getattr(tokenizer, "chat_template", None))


def conversation(tokenizer, question: str) -> Conversation:
    """The question as the user's one message, the generation prompt after it (the assistant's turn begins). A token
    is the question's when its characters lie inside the question's own span of the templated text (a token that
    straddles the question's edge, which the template's newlines keep from happening, counts as the template's)."""
    if not has_chat_template(tokenizer):
        raise ValueError("this model has no chat template")
    messages = [{"role": "user", "content": question}]
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    start = text.rfind(question) if question else -1
    end = start + len(question)
    encoded = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    ids = tuple(encoded["input_ids"])
    asked = tuple(start >= 0 and a >= start and b <= end and b > a for a, b in encoded["offset_mapping"])
    return Conversation(ids, shown_tokens(tokenizer, ids), asked, tokenizer.eos_token_id)
