"""BERT on the hand-written layers: embeddings + Post-LN GELU encoder + pooler (+ masked-LM head),
and reading a Hugging Face BERT directory (config.json + model.safetensors / pytorch_model.bin) through
model.checkpoint: sizes bounded and shapes checked before anything big is allocated."""
import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import checkpoint
from .checkpoint import CONFIG, CheckpointError, convert_hf_state_dict, hf_name, out_of_memory, size_text
from .layers import EncoderLayer
from .positional import LearnedPositionalEmbedding
from .trace import EmbeddingTrace, LayerTrace, ModelOutput
from .transformer import Encoder

__all__ = ["BertConfig", "BertModel", "CheckpointError", "check_checkpoint", "read_config"]

ACTIVATIONS = {"gelu": F.gelu, "relu": F.relu, "gelu_new": functools.partial(F.gelu, approximate="tanh"),
               "gelu_pytorch_tanh": functools.partial(F.gelu, approximate="tanh")}

# The largest sizes this server builds, each above every published BERT (BERT-large: 24 layers, hidden 1024,
# 16 heads, 4096 intermediate; LaBSE: 501,153 tokens; BERT's 512 positions, 2 token types), and far below what
# would exhaust a server: the model as a whole must also fit MAX_MODEL_BYTES.
LIMITS = {"vocab_size": 524_288, "hidden_size": 4096, "num_hidden_layers": 48, "num_attention_heads": 64,
          "intermediate_size": 16_384, "max_position_embeddings": 8192, "type_vocab_size": 16}


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
    def from_dict(cls, raw: dict, source: str = CONFIG) -> "BertConfig":
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
        try:
            config = cls(**{k: v for k, v in raw.items() if k in names})
        except TypeError as e:
            raise CheckpointError(f"{source}: {e}") from None
        for name in LIMITS:  # sizes: never a ZeroDivision/TypeError later
            value = getattr(config, name)
            if type(value) is not int or value < 1:
                raise CheckpointError(f"{source}: {name} must be a positive integer, got {value!r}")
        if config.hidden_size % config.num_attention_heads:
            raise CheckpointError(f"{source}: hidden_size {config.hidden_size} is not divisible by "
                                  f"num_attention_heads {config.num_attention_heads}")
        too_big = [f"{name} is {getattr(config, name)}, above this server's limit of {limit}"
                   for name, limit in LIMITS.items() if getattr(config, name) > limit]
        if config.float32_bytes > checkpoint.MAX_MODEL_BYTES:
            too_big.append(f"it describes a model of {size_text(config.float32_bytes)} as float32; this server "
                           f"loads at most {size_text(checkpoint.MAX_MODEL_BYTES)}")
        if too_big:
            raise CheckpointError(f"{source}: " + "; ".join(too_big))
        return config

    @property
    def parameter_count(self) -> int:
        """Parameters of BertModel(self) with a pooler and a masked-LM head tied to the word embeddings:
        arithmetic on the sizes, so an absurd config is measured without building anything."""
        V, H, I = self.vocab_size, self.hidden_size, self.intermediate_size
        embeddings = (V + self.max_position_embeddings + self.type_vocab_size) * H + 2 * H  # + LayerNorm
        layer = 4 * H * H + 4 * H + 2 * H * I + I + H + 4 * H  # Q, K, V, out; the feed-forward; two LayerNorms
        pooler, mlm_head = H * H + H, H * H + H + 2 * H + V  # the MLM decoder's weight is the word embeddings
        return embeddings + self.num_hidden_layers * layer + pooler + mlm_head

    @property
    def float32_bytes(self) -> int:
        return 4 * self.parameter_count


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
        """Read a Hugging Face BERT directory; raises CheckpointError naming what is wrong (never a path).

        Nothing big is allocated before the config's sizes are within LIMITS and MAX_MODEL_BYTES and every
        tensor's shape, read from the weights file without its tensors, matches them. The module is then built
        on the meta device and takes the tensors read as its parameters: one copy of the weights in memory."""
        directory = Path(directory)
        config = check_checkpoint(directory)
        try:
            state = convert_hf_state_dict(checkpoint.read_weights(directory))
            model = match_weights(config, state)  # again: the file may have changed since it was checked
            model.load_state_dict({k: state[k].to(torch.float32) for k in model.state_dict()}, strict=True,
                                  assign=True)
        except (RuntimeError, MemoryError) as e:  # never torch's own text ("DefaultCPUAllocator: ...")
            raise CheckpointError(checkpoint.NOT_ENOUGH_MEMORY if out_of_memory(e) else "its weights do not match its config "
                                  f"({type(e).__name__} while reading them)") from None
        head = model.mlm_head
        if head is not None and torch.equal(head.decoder.weight, model.embeddings.word_embeddings.weight):
            head.decoder.weight = model.embeddings.word_embeddings.weight  # tied, as trained: one copy in memory
        return model.eval()


def read_config(directory: Path) -> BertConfig:
    """config.json, as a BertConfig within this server's limits; raises CheckpointError."""
    return BertConfig.from_dict(checkpoint.read_raw_config(directory))


def check_checkpoint(directory: Path) -> BertConfig:
    """Would from_pretrained accept this directory? Config, limits, and every tensor's shape from the weights
    file's header (safetensors) or its pickle read onto the meta device: no tensor is read. Raises CheckpointError."""
    config = read_config(directory)
    match_weights(config, convert_hf_state_dict(_meta_tensors(checkpoint.weight_shapes(directory))))
    return config


def match_weights(config: BertConfig, state: dict[str, Tensor]) -> BertModel:
    """A BertModel on the meta device (nothing allocated) whose every parameter has a tensor of its shape in
    state (our names, convert_hf_state_dict's; an absent MLM decoder is added, tied to the word embeddings);
    raises CheckpointError naming the first tensor that is missing or differs, by its Hugging Face name."""
    with torch.device("meta"):
        model = BertModel(config, add_pooler="pooler.weight" in state, add_mlm_head="mlm_head.dense.weight" in state)
    if model.mlm_head is not None and "mlm_head.decoder.weight" not in state:  # tied to the input embeddings
        state["mlm_head.decoder.weight"] = state.get("embeddings.word_embeddings.weight")
    for name, tensor in model.state_dict().items():
        got = state.get(name)
        if got is None:
            raise CheckpointError(f"the checkpoint has no tensor for {hf_name(name)!r}")
        if got.shape != tensor.shape:
            raise CheckpointError(f"tensor {hf_name(name)!r} has shape {tuple(got.shape)}, "
                                  f"but {CONFIG} implies {tuple(tensor.shape)}")
    return model


def _meta_tensors(shapes: dict[str, tuple[int, ...]]) -> dict[str, Tensor]:
    return {name: torch.empty(shape, device="meta") for name, shape in shapes.items()}
