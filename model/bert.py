"""BERT on the hand-written layers: embeddings + Post-LN GELU encoder + pooler (+ masked-LM head),
and reading a Hugging Face BERT directory (config.json + model.safetensors / pytorch_model.bin)."""
import dataclasses
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from pickle import UnpicklingError

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .layers import EncoderLayer
from .positional import LearnedPositionalEmbedding
from .trace import EmbeddingTrace, LayerTrace, ModelOutput
from .transformer import Encoder

ACTIVATIONS = {"gelu": F.gelu, "relu": F.relu, "gelu_new": functools.partial(F.gelu, approximate="tanh"),
               "gelu_pytorch_tanh": functools.partial(F.gelu, approximate="tanh")}


class CheckpointError(ValueError):
    """A checkpoint directory that cannot be loaded; the message names the problem."""


@dataclass(frozen=True)
class BertConfig:
    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0

    @classmethod
    def from_dict(cls, raw: dict, source: str = "config.json") -> "BertConfig":
        model_type = raw.get("model_type")
        if model_type != "bert":
            raise CheckpointError(f"{source} describes a {model_type!r} model, not BERT (model_type must be 'bert')")
        if raw.get("position_embedding_type", "absolute") != "absolute":
            raise CheckpointError(f"{source}: position_embedding_type {raw['position_embedding_type']!r} "
                                  "is not supported (only 'absolute')")
        if raw.get("hidden_act", "gelu") not in ACTIVATIONS:
            raise CheckpointError(f"{source}: hidden_act {raw['hidden_act']!r} is not supported "
                                  f"(one of {sorted(ACTIVATIONS)})")
        names = {f.name for f in dataclasses.fields(cls)}
        config = cls(**{k: v for k, v in raw.items() if k in names})
        for name in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                     "max_position_embeddings", "type_vocab_size"):  # sizes: never a ZeroDivision/TypeError later
            value = getattr(config, name)
            if type(value) is not int or value < 1:
                raise CheckpointError(f"{source}: {name} must be a positive integer, got {value!r}")
        if config.hidden_size % config.num_attention_heads:
            raise CheckpointError(f"{source}: hidden_size {config.hidden_size} is not divisible by "
                                  f"num_attention_heads {config.num_attention_heads}")
        return config


class BertEmbeddings(nn.Module):
    """word + token type + learned position, then LayerNorm and dropout."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size, padding_idx=c.pad_token_id)
        self.position_embeddings = LearnedPositionalEmbedding(c.max_position_embeddings, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.norm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, input_ids: Tensor, token_type_ids: Tensor | None, record: bool):
        """(B, T) ids -> (B, T, H), EmbeddingTrace or None."""
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        token = self.word_embeddings(input_ids)  # (B, T, H)
        token_type = self.token_type_embeddings(token_type_ids)  # (B, T, H)
        position = self.position_embeddings(input_ids.size(1))  # (1, T, H)
        summed = token + token_type + position
        out = self.dropout(self.norm(summed))
        return out, (EmbeddingTrace(token, position, token_type, summed, out) if record else None)


class BertMLMHead(nn.Module):
    """dense -> activation -> LayerNorm -> vocabulary logits (decoder tied to the word embeddings)."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)
        self.activation = ACTIVATIONS[c.hidden_act]
        self.norm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.decoder = nn.Linear(c.hidden_size, c.vocab_size)

    def forward(self, hidden: Tensor) -> Tensor:
        return self.decoder(self.norm(self.activation(self.dense(hidden))))  # (B, T, V)


class BertModel(nn.Module):
    def __init__(self, config: BertConfig, add_pooler: bool = True, add_mlm_head: bool = False):
        super().__init__()
        self.config = config
        self.max_positions = config.max_position_embeddings
        self.embeddings = BertEmbeddings(config)
        layer = EncoderLayer(config.hidden_size, config.num_attention_heads, config.intermediate_size,
                             config.hidden_dropout_prob, ACTIVATIONS[config.hidden_act], config.layer_norm_eps,
                             batch_first=True, norm_first=False)
        layer.self_attn.dropout = config.attention_probs_dropout_prob
        self.encoder = Encoder(layer, config.num_hidden_layers, enable_nested_tensor=False)
        self.pooler = nn.Linear(config.hidden_size, config.hidden_size) if add_pooler else None
        self.mlm_head = BertMLMHead(config) if add_mlm_head else None

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, output_attentions=True, *,
                attn_mask=None, record=False) -> ModelOutput:
        """input_ids (B, T); attention_mask (B, T), 1 = token, 0 = padding; token_type_ids (B, T);
        attn_mask (T, T) bool (True = blocked) or additive, e.g. a causal mask, on top of the padding."""
        x, emb_trace = self.embeddings(input_ids, token_type_ids, record)
        kpm = self._key_padding(attention_mask, x.dtype)
        x, attentions, trace = self.encoder.encode(x, attn_mask, kpm, record, emb_trace, output_attentions)
        pooled = torch.tanh(self.pooler(x[:, 0])) if self.pooler is not None else None  # (B, H)
        return ModelOutput(x, attentions, pooled, trace)

    @staticmethod
    def _key_padding(attention_mask, dtype) -> Tensor | None:
        if attention_mask is None or bool(attention_mask.all()):  # all ones: nothing to mask
            return None
        # Hugging Face adds the dtype's minimum, not -inf: equal probabilities, and an all-padding
        # row stays finite exactly as it does there.
        return (1.0 - attention_mask.to(dtype)) * torch.finfo(dtype).min  # (B, T) additive

    def inputs_and_attentions(self, input_ids, attention_mask=None, attn_mask=None):
        """forward(record=True) reduced to each layer's input (layers, B, T, H), every attention map
        (layers, B, heads, T, T) and the additive mask the layers applied (or None); bit for bit, without the
        last layer's feed-forward (Encoder.inputs_and_attentions). The app keeps these and recomputes the rest."""
        x, _ = self.embeddings(input_ids, None, True)
        return self.encoder.inputs_and_attentions(x, attn_mask, self._key_padding(attention_mask, x.dtype))

    def stack_output(self, x: Tensor) -> Tensor:
        """forward(record=True).trace.output from the last layer's output x: the same (Post-LN, no final norm)."""
        return x

    def trace_embeddings(self, input_ids, token_type_ids=None) -> EmbeddingTrace:
        """The embeddings alone, recorded: equal to forward(record=True).trace.embeddings."""
        return self.embeddings(input_ids, token_type_ids, True)[1]

    def trace_layer(self, index: int, x, attention_mask=None, attn_mask=None) -> LayerTrace:
        """Layer `index` alone, recorded, from its input x (B, T, H) and the forward pass's masks: equal to
        forward(record=True).trace.layers[index], so a caller can keep each layer's input and recompute the rest."""
        return self.encoder.layers[index].encode(x, attn_mask, self._key_padding(attention_mask, x.dtype), True)[2]

    def mlm_logits(self, hidden: Tensor) -> Tensor:
        """(B, T, H) -> (B, T, vocab) scores for a masked token; only for checkpoints with a masked-LM head."""
        if self.mlm_head is None:
            raise RuntimeError("this checkpoint has no masked-LM head")
        return self.mlm_head(hidden)

    @classmethod
    def from_pretrained(cls, directory) -> "BertModel":
        """Read a Hugging Face BERT directory; raises CheckpointError naming what is wrong."""
        directory = Path(directory)
        config = read_config(directory)
        state = convert_hf_state_dict(read_weights(directory))
        model = cls(config, add_pooler="pooler.weight" in state, add_mlm_head="mlm_head.dense.weight" in state)
        if model.mlm_head is not None and "mlm_head.decoder.weight" not in state:  # tied to the input embeddings
            state["mlm_head.decoder.weight"] = state.get("embeddings.word_embeddings.weight")
        expected = model.state_dict()
        for name, tensor in expected.items():
            got = state.get(name)
            if got is None:
                raise CheckpointError(f"{directory}: the checkpoint has no tensor for {_hf_name(name)!r}")
            if got.shape != tensor.shape:
                raise CheckpointError(f"{directory}: tensor {_hf_name(name)!r} has shape {tuple(got.shape)}, "
                                      f"but config.json implies {tuple(tensor.shape)}")
        model.load_state_dict({k: state[k] for k in expected}, strict=True)
        head = model.mlm_head
        if head is not None and torch.equal(head.decoder.weight, model.embeddings.word_embeddings.weight):
            head.decoder.weight = model.embeddings.word_embeddings.weight  # tied, as trained: one copy in memory
        return model.eval()


def read_config(directory: Path) -> BertConfig:
    if not directory.is_dir():
        raise CheckpointError(f"{directory} is not a directory")
    path = directory / "config.json"
    if not path.is_file():
        raise CheckpointError(f"{directory} has no config.json")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(raw, dict):
        raise CheckpointError(f"{path} does not hold a JSON object")
    try:
        return BertConfig.from_dict(raw, str(path))
    except TypeError as e:
        raise CheckpointError(f"{path}: {e}") from None


def read_weights(directory: Path) -> dict[str, Tensor]:
    """model.safetensors, else pytorch_model.bin with weights_only=True (no code is ever unpickled)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    safetensors, pickle = directory / "model.safetensors", directory / "pytorch_model.bin"
    try:
        if safetensors.is_file():
            return load_file(safetensors)
        if pickle.is_file():
            state = torch.load(pickle, map_location="cpu", weights_only=True)
            if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, Tensor)
                                                      for k, v in state.items()):
                raise CheckpointError(f"{pickle} does not hold a state dict")
            return state
    except (SafetensorError, OSError, RuntimeError, EOFError, ValueError, UnpicklingError) as e:
        if isinstance(e, CheckpointError):
            raise
        path = safetensors if safetensors.is_file() else pickle
        raise CheckpointError(f"{path} could not be read (truncated or corrupt?): {e}") from None
    raise CheckpointError(f"{directory} has no weights: expected model.safetensors or pytorch_model.bin")


_LAYER_NAMES = {  # Hugging Face name inside encoder.layer.{i} -> ours inside encoder.layers.{i}
    "attention.output.dense": "self_attn.out_proj",
    "attention.output.LayerNorm": "norm1",
    "intermediate.dense": "linear1",
    "output.dense": "linear2",
    "output.LayerNorm": "norm2",
}
_TOP_NAMES = {
    "embeddings.LayerNorm": "embeddings.norm",
    "pooler.dense": "pooler",
    "cls.predictions.transform.dense": "mlm_head.dense",
    "cls.predictions.transform.LayerNorm": "mlm_head.norm",
    "cls.predictions.decoder": "mlm_head.decoder",
}


def convert_hf_state_dict(hf: dict[str, Tensor]) -> dict[str, Tensor]:
    """Hugging Face BERT names -> ours. Q, K, V Linear layers become one packed in_proj (3H, H)."""
    clean = {}
    for name, tensor in hf.items():
        name = name.removeprefix("bert.")
        if name.endswith(".gamma") or name.endswith(".beta"):  # the oldest checkpoints' LayerNorm names
            name = name.rsplit(".", 1)[0] + (".weight" if name.endswith(".gamma") else ".bias")
        clean[name] = tensor
    out = {}
    for name, tensor in clean.items():
        prefix, _, leaf = name.rpartition(".")
        if name == "cls.predictions.bias":
            out.setdefault("mlm_head.decoder.bias", tensor)
        elif prefix in _TOP_NAMES:
            out[f"{_TOP_NAMES[prefix]}.{leaf}"] = tensor
        elif prefix.startswith("embeddings."):
            out[name] = tensor
        elif prefix.startswith("encoder.layer."):
            i, _, inner = prefix.removeprefix("encoder.layer.").partition(".")
            if inner in _LAYER_NAMES:
                out[f"encoder.layers.{i}.{_LAYER_NAMES[inner]}.{leaf}"] = tensor
            elif inner == "attention.self.query":
                qkv = [clean.get(f"{prefix.rsplit('.', 1)[0]}.{p}.{leaf}") for p in ("query", "key", "value")]
                if all(t is not None for t in qkv):
                    out[f"encoder.layers.{i}.self_attn.in_proj_{leaf}"] = torch.cat(qkv, dim=0)
    return out


def _hf_name(ours: str) -> str:
    """Our parameter name -> the Hugging Face name a user would look for in the checkpoint."""
    parts = ours.split(".")
    if parts[:2] == ["encoder", "layers"]:
        inner, leaf = ".".join(parts[3:-1]), parts[-1].removeprefix("in_proj_")
        hf_inner = {v: k for k, v in _LAYER_NAMES.items()}.get(inner, "attention.self.query/key/value")
        return f"encoder.layer.{parts[2]}.{hf_inner}.{leaf}"
    prefix, _, leaf = ours.rpartition(".")
    return f"{ {v: k for k, v in _TOP_NAMES.items()}.get(prefix, prefix)}.{leaf}"
