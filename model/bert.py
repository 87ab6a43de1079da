"""BERT on the hand-written layers: embeddings + Post-LN GELU encoder + pooler (+ masked-LM head),
and reading a Hugging Face BERT directory (config.json + model.safetensors / pytorch_model.bin) through
model.loading.checkpoint: sizes bounded and shapes checked before anything big is allocated."""
import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from locales import N_
from model.facts import BERT, ModelFacts
from model.family import Capability
from model.layers import ACTIVATIONS, EncoderLayer
from model.loading import checkpoint
from model.loading.checkpoint import (
    CONFIG,
    CheckpointError,
    check_shape,
    convert_hf_state_dict,
    hf_name,
    out_of_memory,
    size_text,
)
from model.masks import hf_padding_mask
from model.messages import Later
from model.positional import LearnedPositionalEmbedding
from model.recording import TokenEncoder
from model.trace import EmbeddingTrace
from model.transformer import Encoder

CAPABILITIES = frozenset({Capability.ENCODER})  # what a BERT can do (model.family)

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
            raise CheckpointError(Later(N_("{file} describes a {type} model, not BERT (model_type must be 'bert')"),
                                        file=source, type=repr(model_type)))
        if raw.get("position_embedding_type", "absolute") != "absolute":
            raise CheckpointError(Later(N_("{file}: position_embedding_type {value} is not supported (only "
                                           "'absolute')"), file=source, value=repr(raw["position_embedding_type"])))
        if raw.get("hidden_act", "gelu") not in ACTIVATIONS:
            raise CheckpointError(Later(N_("{file}: hidden_act {value} is not supported (one of {allowed})"),
                                        file=source, value=repr(raw["hidden_act"]), allowed=str(sorted(ACTIVATIONS))))
        names = {f.name for f in dataclasses.fields(cls)}
        try:
            config = cls(**{k: v for k, v in raw.items() if k in names})
        except TypeError as e:
            raise CheckpointError(f"{source}: {e}") from None
        checkpoint.check_sizes({name: getattr(config, name) for name in LIMITS}, source)
        if config.hidden_size % config.num_attention_heads:
            raise CheckpointError(Later(N_("{file}: hidden_size {size} is not divisible by num_attention_heads "
                                           "{heads}"), file=source, size=config.hidden_size,
                                        heads=config.num_attention_heads))
        too_big = [f"{name} is {getattr(config, name)}, above this server's limit of {limit}"
                   for name, limit in LIMITS.items() if getattr(config, name) > limit]
        if config.float32_bytes > checkpoint.MAX_MODEL_BYTES:
            too_big.append(f"it describes a model of {size_text(config.float32_bytes)} as float32; this server "
                           f"loads at most {size_text(checkpoint.MAX_MODEL_BYTES)}")
        if too_big:
            raise CheckpointError(f"{source}: " + "; ".join(too_big))
        return config

    def parameter_shapes(self, pooler: bool = True, mlm_head: bool = True) -> dict[str, tuple[int, ...]]:
        """The names and shapes of BertModel(self, pooler, mlm_head).state_dict(), in its order, without building
        it: what a checkpoint's tensors are checked against before any is read (a test holds it to the module)."""
        V, H = self.vocab_size, self.hidden_size
        shapes = {"embeddings.word_embeddings.weight": (V, H),
                  "embeddings.position_embeddings.weight": (self.max_position_embeddings, H),
                  "embeddings.token_type_embeddings.weight": (self.type_vocab_size, H),
                  "embeddings.norm.weight": (H,), "embeddings.norm.bias": (H,)}
        for i in range(self.num_hidden_layers):
            shapes |= {f"encoder.layers.{i}.{name}": shape for name, shape in self._layer_shapes().items()}
        if pooler:
            shapes |= {"pooler.weight": (H, H), "pooler.bias": (H,)}
        if mlm_head:
            shapes |= {"mlm_head.dense.weight": (H, H), "mlm_head.dense.bias": (H,), "mlm_head.norm.weight": (H,),
                       "mlm_head.norm.bias": (H,), "mlm_head.decoder.weight": (V, H), "mlm_head.decoder.bias": (V,)}
        return shapes

    def _layer_shapes(self) -> dict[str, tuple[int, ...]]:
        H, I = self.hidden_size, self.intermediate_size
        return {"self_attn.in_proj_weight": (3 * H, H), "self_attn.in_proj_bias": (3 * H,),
                "self_attn.out_proj.weight": (H, H), "self_attn.out_proj.bias": (H,), "linear1.weight": (I, H),
                "linear1.bias": (I,), "linear2.weight": (H, I), "linear2.bias": (H,), "norm1.weight": (H,),
                "norm1.bias": (H,), "norm2.weight": (H,), "norm2.bias": (H,)}

    @property
    def parameter_count(self) -> int:
        """Parameters of BertModel(self) with a pooler and a masked-LM head tied to the word embeddings: counted
        from one layer's shapes, so that an absurd number of layers is measured without listing them."""
        one_layer = dataclasses.replace(self, num_hidden_layers=1).parameter_shapes()
        per_layer = sum(math.prod(s) for s in self._layer_shapes().values())
        tied = self.vocab_size * self.hidden_size
        return sum(math.prod(s) for s in one_layer.values()) + (self.num_hidden_layers - 1) * per_layer - tied

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


class BertModel(TokenEncoder):
    """BERT's embeddings and encoder, recorded as model.recording.TokenEncoder records (forward, trace_layer, ...)."""

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

    @property
    def facts(self) -> ModelFacts:
        """What this BERT is, from its config: Post-LN, learned positions, segment embeddings, no final norm."""
        c = self.config
        return ModelFacts(BERT, c.num_hidden_layers, c.num_attention_heads, c.hidden_size, c.intermediate_size,
                          c.hidden_act, norm_first=False, final_norm=False, positional="learned",
                          max_positions=c.max_position_embeddings, vocab_size=c.vocab_size,
                          token_types=c.type_vocab_size, embedding_norm=True, capabilities=CAPABILITIES)

    def embed(self, input_ids, token_type_ids, record):
        return self.embeddings(input_ids, token_type_ids, record)

    def key_padding(self, attention_mask, dtype) -> Tensor | None:
        if attention_mask is None or bool(attention_mask.all()):  # all ones: nothing to mask
            return None
        return hf_padding_mask(attention_mask, dtype)  # (B, T) additive

    def pool(self, x: Tensor) -> Tensor | None:
        return torch.tanh(self.pooler(x[:, 0])) if self.pooler is not None else None  # (B, H)

    def position_vectors(self) -> Tensor:
        """(max_positions, H): the learned vector added at each position."""
        return self.embeddings.position_embeddings(self.max_positions)[0]

    def mlm_logits(self, hidden: Tensor) -> Tensor:
        """(B, T, H) -> (B, T, vocab) scores for a masked token; only for checkpoints with a masked-LM head."""
        if self.mlm_head is None:
            raise RuntimeError("this checkpoint has no masked-LM head")
        return self.mlm_head(hidden)

    @classmethod
    def from_pretrained(cls, directory) -> "BertModel":
        """Read a Hugging Face BERT directory; raises CheckpointError naming what is wrong (never a path).

        Nothing big is allocated before the config's sizes are within LIMITS and MAX_MODEL_BYTES and every
        tensor's shape, read from the weights file without its tensors, matches them (check_checkpoint)."""
        directory = Path(directory)
        config = check_checkpoint(directory)
        try:
            state = convert_hf_state_dict(checkpoint.read_weights(directory))
            pooler, mlm_head = check_shapes(config, state)  # again: the file may have changed since it was checked
            model = cls(config, add_pooler=pooler, add_mlm_head=mlm_head)
            if mlm_head and "mlm_head.decoder.weight" not in state:  # tied to the input embeddings
                state["mlm_head.decoder.weight"] = state["embeddings.word_embeddings.weight"]
            model.load_state_dict({k: state[k] for k in model.state_dict()}, strict=True)
        except (RuntimeError, MemoryError) as e:  # never torch's own text ("DefaultCPUAllocator: ...")
            raise CheckpointError(checkpoint.NOT_ENOUGH_MEMORY if out_of_memory(e) else Later(
                N_("its weights do not match its config ({error} while reading them)"),
                error=type(e).__name__)) from None
        head = model.mlm_head
        if head is not None and torch.equal(head.decoder.weight, model.embeddings.word_embeddings.weight):
            head.decoder.weight = model.embeddings.word_embeddings.weight  # tied, as trained: one copy in memory
        return model.eval()


def read_config(directory: Path) -> BertConfig:
    """config.json, as a BertConfig within this server's limits; raises CheckpointError."""
    return BertConfig.from_dict(checkpoint.read_raw_config(directory))


def check_checkpoint(directory: Path) -> BertConfig:
    """Would from_pretrained accept this directory? Its config within the limits, and every tensor's shape, from
    the weights file's header (safetensors) or its pickle read onto the meta device: no tensor is read, no module
    built. Raises CheckpointError."""
    config = read_config(directory)
    check_shapes(config, checkpoint.convert_hf_shapes(checkpoint.weight_shapes(directory)))
    return config


def check_shapes(config: BertConfig, state: dict) -> tuple[bool, bool]:
    """(pooler, masked-LM head) of the model that state (our names -> tensors or shapes) fills; raises
    CheckpointError naming, by its Hugging Face name, the first tensor that is missing or of another shape."""
    pooler, mlm_head = "pooler.weight" in state, "mlm_head.dense.weight" in state
    for name, expected in config.parameter_shapes(pooler, mlm_head).items():
        got = state.get(name)
        if got is None and name == "mlm_head.decoder.weight":  # absent: tied to the word embeddings
            got = state.get("embeddings.word_embeddings.weight")
        check_shape(hf_name(name), got, expected)
    return pooler, mlm_head
