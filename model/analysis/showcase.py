"""Which head a student sees first on a pretrained model: one where `it` attends to what it refers to, measured.

Layer 0 head 0 is one of the dullest heads; the first view should show attention doing something a student can
name. PROBES are sentences where a pronoun refers to a noun that is not always the nearest one; pronoun_attention()
is, per head, the mean attention from the pronoun to its referent over them. bench/showcase_head.py prints the
table; tests/model/analysis/test_showcase.py checks that SHOWCASE is still its best head on all-MiniLM-L6-v2.
"""
import numpy as np
import torch

# (sentence, pronoun, referent): the referent's first word piece is the key the pronoun should look at.
PROBES = (
    ("The animal didn't cross the street because it was too tired.", "it", "animal"),
    ("The trophy didn't fit in the suitcase because it was too big.", "it", "trophy"),
    ("The dog chased the ball until it was exhausted.", "it", "dog"),
    ("The bottle fell off the table and it broke into pieces.", "it", "bottle"),
    ("The car would not start because it had no fuel.", "it", "car"),
    ("The cat ignored the mouse because it was full.", "it", "cat"),
    ("The city built a new bridge because it needed one.", "it", "city"),
    ("The company hired more engineers because it was growing fast.", "it", "company"),
    ("The phone slipped out of my hand and it cracked.", "it", "phone"),
    ("The river flooded the village because it rose overnight.", "it", "river"),
    ("The book was on the shelf, but it was missing a page.", "it", "book"),
    ("The computer crashed while it was saving the file.", "it", "computer"),
    ("Mary thanked John because she was grateful.", "she", "mary"),
    ("The doctor called the patient because she had the results.", "she", "doctor"),
    ("The boy helped his grandmother because he was kind.", "he", "boy"),
    ("The teacher praised the student because he had worked hard.", "he", "student"),
)
# model label -> (layer, head); checked by tests/model/analysis/test_showcase.py (SmolLM2's: 0.50 over the probes,
# the next best head 0.35)
SHOWCASE = {"all-MiniLM-L6-v2": (3, 1), "SmolLM2-135M-Instruct": (13, 8)}


def _position(tokens: list[str], word: str, after: int = 0) -> int:
    return next(i for i in range(after, len(tokens)) if _word(tokens[i]) == word)


def _word(token: str) -> str:
    """A token as the probes name it: a byte-level BPE token (SmolLM2's "Ġanimal") without its space, lower case."""
    return token.removeprefix("\u0120").lower()


@torch.no_grad()
def pronoun_attention(model, tokenizer, probes=PROBES) -> np.ndarray:
    """(layers, heads): the mean attention from each probe's pronoun to its referent (a BertModel, or a causal
    model: the pronoun comes after its referent, which it can see)."""
    total = None
    for sentence, pronoun, referent in probes:
        ids = tokenizer(sentence, return_tensors="pt")["input_ids"]  # (1, T)
        tokens = tokenizer.convert_ids_to_tokens(ids[0])
        key = _position(tokens, referent)
        query = _position(tokens, pronoun, after=key + 1)
        maps = torch.stack(model(ids).attentions)  # (layers, 1, heads, T, T)
        found = maps[:, 0, :, query, key].numpy()  # (layers, heads)
        total = found if total is None else total + found
    return total / len(probes)


def best_head(scores: np.ndarray) -> tuple[int, int]:
    layer, head = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(layer), int(head)
