"""The toy GPT on disk: a Hugging Face GPT-2 directory (config.json + model.safetensors in GPT-2's own layout, so
transformers reads it too) with its word vocabulary beside it (words.json), written by `python -m training.train_gpt`
and shipped in model/weights/gpt. Reading a directory gives the model and how its text becomes ids: the toy's words,
the directory's own GPT-2 tokenizer, or none."""
import functools
import json
from pathlib import Path

import torch
from safetensors.torch import save_file
from torch import Tensor

from model.causal.probes import text_induction_scores
from model.facts import SpecialTokens
from model.gpt.checkpoint import hf_name, our_name, read_config
from model.gpt.config import GPTConfig
from model.gpt.model import GPT
from model.gpt.vocabulary import SEPARATOR, SEPARATOR_ID, UNK, UNK_ID, WordVocabulary
from model.loading.checkpoint import CONFIG, SAFETENSORS

SHIPPED = Path(__file__).resolve().parents[1] / "weights" / "gpt"
WORDS, METRICS, SNAPSHOTS = "words.json", "metrics.json", "snapshots.safetensors"
# The pages' first text for the toy GPT: a toy sentence, then the same sentence again, where an induction head shows
SHOWCASE_TEXT = "the teacher saw two red birds at school . the teacher saw two red birds at school"


def hf_config(config: GPTConfig) -> dict:
    """GPTConfig -> a GPT-2 config.json."""
    return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": config.vocab_size,
            "n_positions": config.n_positions, "n_embd": config.n_embd, "n_layer": config.n_layer,
            "n_head": config.n_head, "n_inner": config.n_inner, "activation_function": config.activation_function,
            "layer_norm_epsilon": config.layer_norm_epsilon, "resid_pdrop": 0.0, "embd_pdrop": 0.0,
            "attn_pdrop": 0.0, "bos_token_id": SEPARATOR_ID, "eos_token_id": SEPARATOR_ID, "tie_word_embeddings": True}


def hf_state_dict(model: GPT) -> dict[str, Tensor]:
    """Our parameters under GPT-2's names and layout (Conv1D weights (in, out)): what checkpoint.load reads back."""
    out = {}
    for name, tensor in model.state_dict().items():
        hf = hf_name(name)
        out[hf] = (tensor.T if our_name(hf)[1] else tensor).detach().contiguous()  # [1]: a Conv1D weight
    return out


def save(model: GPT, vocabulary: WordVocabulary | None, directory: Path):
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / CONFIG).write_text(json.dumps(hf_config(model.config), indent=1) + "\n")
    save_file(hf_state_dict(model), directory / SAFETENSORS)
    if vocabulary is not None:
        vocabulary.write(directory / WORDS)


def word_special_tokens() -> SpecialTokens:
    return SpecialTokens(unk=(UNK, UNK_ID), sep=(SEPARATOR, SEPARATOR_ID))


def load(directory: Path = SHIPPED) -> tuple[GPT, WordVocabulary | None]:
    """The GPT of a directory and its word vocabulary (None for a GPT-2 directory without words.json); raises
    CheckpointError (model.loading.checkpoint) or ValueError for a vocabulary that does not fit the model."""
    directory = Path(directory)
    model = GPT.from_pretrained(directory)
    if not (directory / WORDS).is_file():
        return model, None
    vocabulary = WordVocabulary.read(directory / WORDS)
    if len(vocabulary) != model.config.vocab_size:
        raise ValueError(f"{WORDS} holds {len(vocabulary)} words, the model {model.config.vocab_size}")
    model.special_tokens = word_special_tokens()
    return model, vocabulary


def config_of(directory: Path) -> GPTConfig:
    return read_config(Path(directory))


@functools.lru_cache(maxsize=4)
def induction_head(directory: Path = SHIPPED) -> tuple[int, int]:
    """(layer, head) of the best induction head after layer 0, measured on held-out repeat probes at the training's
    last evaluation (metrics.json); (0, 0) when the metrics cannot be read."""
    try:
        scores = json.loads((Path(directory) / METRICS).read_text())["evaluations"][-1]["induction"]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return 0, 0
    best = max(((ly, h) for ly in range(1, len(scores)) for h in range(len(scores[ly]))),
               key=lambda lh: scores[lh[0]][lh[1]], default=(0, 0))
    return int(best[0]), int(best[1])


@functools.lru_cache(maxsize=4)
def showcase_head(directory: Path = SHIPPED) -> tuple[int, int]:
    """(layer, head) the pages open at on SHOWCASE_TEXT: of the heads after layer 0, the one with the highest
    induction score on that text (model.causal.probes.text_induction_scores; where several heads share the copying, the
    best on random probes need not show best on a sentence written twice); induction_head() when the model cannot be
    read."""
    try:
        model, vocabulary = load(directory)
    except (OSError, ValueError, KeyError):
        return induction_head(directory)
    if vocabulary is None or model.config.n_layer < 2:
        return induction_head(directory)
    ids = torch.tensor(vocabulary.ids(SHOWCASE_TEXT.split()))
    with torch.inference_mode():
        scores = text_induction_scores(model(ids[None]).attentions, ids)[1:]  # (layers - 1, heads)
    layer, head = divmod(int(scores.argmax()), scores.size(1))
    return layer + 1, head
