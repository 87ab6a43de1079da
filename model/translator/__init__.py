"""The built-in Chinese -> English translator: our own Transformer, trained by the project on the toy language.

Source ids -> token embedding * sqrt(d) + the sinusoidal table (model.text_models.TextEmbedding) -> model.Transformer
(Post-LN, ReLU, causal target) -> a linear projection to the English vocabulary. Each side has its own vocabulary
(model.translator.vocabulary). Trained by `python -m training.train`; the weights it writes ship in
model/weights/translator. Decoding (greedy, sampling, beam, incremental, heads switched off) is
model.translator.decoding; the command line is `python -m model.translator "我有一只猫"` (model.translator.__main__).
"""
import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from safetensors.torch import load_file, save_file
from torch import Tensor, nn

from model.facts import TRANSLATOR, ModelFacts, SpecialTokens
from model.family import Capability
from model.heads import Head, HeadsOff, heads_off
from model.kinds import Block
from model.masks import causal_mask
from model.text_models import TextEmbedding
from model.trace import TransformerTrace
from model.transformer import Transformer
from model.translator.vocabulary import BOS, BOS_ID, EOS, EOS_ID, PAD, PAD_ID, UNK, UNK_ID, Vocabulary, chinese_tokens

# What it can do (model.family): encode Chinese, cross-attend to it, translate it
CAPABILITIES = frozenset({Capability.ENCODER, Capability.CROSS_ATTENTION, Capability.TRANSLATION})
BLOCKS = tuple(Block)  # its heads: encoder.1.2, decoder.1.2, cross.1.2 (?off=)
SHIPPED = Path(__file__).resolve().parents[1] / "weights" / "translator"
WEIGHTS, CONFIG = "model.safetensors", "config.json"
SOURCE_VOCAB, TARGET_VOCAB = "source_vocab.json", "target_vocab.json"


@dataclass(frozen=True)
class TranslatorConfig:
    d_model: int = 64
    nhead: int = 4
    num_layers: int = 2  # encoder layers, and as many decoder layers
    d_ff: int = 256
    max_len: int = 64  # positions on each side
    dropout: float = 0.1


class Translator(nn.Module):
    """Chinese ids (B, S) and English ids (B, T) -> next-word logits (B, T, V), as the tutorials' translation."""

    def __init__(self, config: TranslatorConfig, source: Vocabulary, target: Vocabulary):
        super().__init__()
        c = config
        self.config, self.source, self.target, self.max_positions = config, source, target, c.max_len
        self.source_embedding = TextEmbedding(len(source), c.d_model, "sinusoidal", c.max_len, c.dropout)
        self.target_embedding = TextEmbedding(len(target), c.d_model, "sinusoidal", c.max_len, c.dropout)
        self.transformer = Transformer(c.d_model, c.nhead, c.num_layers, c.num_layers, c.d_ff, c.dropout, "relu",
                                       batch_first=True)
        self.generator = nn.Linear(c.d_model, len(target))  # decoder state -> a score per English word
        self.facts = ModelFacts(
            TRANSLATOR, c.num_layers, c.nhead, c.d_model, c.d_ff, "relu", norm_first=False, final_norm=True,
            positional="sinusoidal", max_positions=c.max_len, vocab_size=len(target), decoder_layers=c.num_layers,
            source_vocab_size=len(source),
            special_tokens=SpecialTokens(pad=(PAD, PAD_ID), unk=(UNK, UNK_ID), cls=(BOS, BOS_ID), sep=(EOS, EOS_ID)),
            capabilities=CAPABILITIES)

    def forward(self, src_ids: Tensor, tgt_ids: Tensor, *, record: bool = False):
        """Teacher forcing: logits (B, T, V) for the word after each of tgt_ids; (logits, TransformerTrace) with
        record=True. <pad> (id 0) on either side is masked out as a key."""
        src, src_emb = self.source_embedding(src_ids, record)  # (B, S, E)
        tgt, tgt_emb = self.target_embedding(tgt_ids, record)  # (B, T, E)
        src_padding, tgt_padding = src_ids == PAD_ID, tgt_ids == PAD_ID  # (B, S), (B, T) True = padding
        out = self.transformer(src, tgt, tgt_mask=causal_mask(tgt_ids.size(1), device=tgt_ids.device),
                               src_key_padding_mask=src_padding, tgt_key_padding_mask=tgt_padding,
                               memory_key_padding_mask=src_padding, record=record)
        if not record:
            return self.generator(out)
        out, trace = out
        return self.generator(out), TransformerTrace(dataclasses.replace(trace.encoder, embeddings=src_emb),
                                                     dataclasses.replace(trace.decoder, embeddings=tgt_emb))

    def heads_off(self, heads: Iterable[Head]) -> HeadsOff | None:
        """Heads to switch off, as decoding takes them (None for none); a head the model lacks: ValueError."""
        return heads_off(heads, self.config.num_layers, self.config.nhead, BLOCKS)

    def encode_source(self, text: str) -> tuple[list[str], list[int], list[str]]:
        """A Chinese text -> (its tokens, their ids cut to max_positions, the characters never seen in training)."""
        tokens = chinese_tokens(text)[:self.max_positions]
        return tokens, self.source.ids(tokens), self.source.unknown(tokens)

    def save(self, directory: Path) -> None:
        """Weights (safetensors), config and the two vocabularies, as from_directory reads them."""
        directory.mkdir(parents=True, exist_ok=True)
        save_file({k: v.contiguous() for k, v in self.state_dict().items()}, directory / WEIGHTS)
        (directory / CONFIG).write_text(json.dumps(dataclasses.asdict(self.config), indent=1) + "\n")
        for name, vocabulary in ((SOURCE_VOCAB, self.source), (TARGET_VOCAB, self.target)):
            (directory / name).write_text(json.dumps(list(vocabulary.tokens), ensure_ascii=False, indent=0) + "\n")

    @classmethod
    def from_directory(cls, directory: Path = SHIPPED, weights: dict[str, Tensor] | None = None) -> "Translator":
        """Read a translator from the files save() writes (safetensors only: no code is loaded), in eval mode.
        weights, when given, replaces the weights file (a training snapshot)."""
        config = TranslatorConfig(**json.loads((directory / CONFIG).read_text()))
        source, target = (Vocabulary(tuple(json.loads((directory / name).read_text())))
                          for name in (SOURCE_VOCAB, TARGET_VOCAB))
        model = cls(config, source, target)
        state = weights if weights is not None else load_file(directory / WEIGHTS)
        model.load_state_dict({k: v.float() for k, v in state.items()}, strict=True)
        return model.eval()


def load_shipped() -> Translator:
    """The translator trained by `python -m training.train` and shipped in model/weights/translator."""
    return Translator.from_directory(SHIPPED)

