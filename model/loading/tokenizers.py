"""A checkpoint directory's tokenizer, read with transformers from the directory alone (nothing is fetched)."""
from pathlib import Path

from locales import N_
from model.loading.checkpoint import CheckpointError, out_of_memory
from model.loading.directories import TOKENIZER_TEXT, has_tokenizer
from model.messages import Later


def read_tokenizer(path: Path):
    """A checkpoint directory's own tokenizer (transformers), never fetched; raises CheckpointError."""
    from transformers import AutoTokenizer  # noqa: PLC0415 - start-up cost: transformers takes seconds to import, and only checkpoints need it

    if not has_tokenizer(path):  # transformers would build one of 5 tokens
        raise CheckpointError(Later(N_("it has no tokenizer ({files})"), files=TOKENIZER_TEXT))
    try:
        tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as e:  # tokenizers raises bare Exception; its text may hold the path
        if out_of_memory(e):
            raise
        raise CheckpointError(Later(N_("its tokenizer could not be read ({error})"), error=type(e).__name__)) from None
    tok.model_max_length = 1 << 30  # we cut to the model's positions ourselves, and say so
    return tok
