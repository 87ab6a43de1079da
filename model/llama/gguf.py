"""A Llama GGUF file (llama.cpp's format) read as a Hugging Face Llama: `convert` writes a Hugging Face directory
(config.json, model.safetensors as float32, tokenizer.json and tokenizer_config.json with the chat template);
`prepare` writes the same but the weights, with an index of the file's tensors instead, which
model.llama.gguf_tensors reads at every start from the GGUF itself (SmolLM2's way: model.llama.smollm2).

What the file stores differs from a Hugging Face checkpoint in three ways, each undone here:
- the weights are quantized (SmolLM2's Q4_1 and Q8_0 blocks): de-quantized by model.llama.gguf_tensors, bit for
  bit as the `gguf` package's own code;
- W_Q and W_K are permuted for llama.cpp's rotation of adjacent pairs (x_2i, x_2i+1); Hugging Face's RoPE
  (model.llama.attention) rotates (x_i, x_i+d/2), so each head's rows are put back: rows 2i, 2i+1 of a head
  -> rows i, i + d/2 (gguf_tensors.unpermuted, the inverse of llama.cpp's convert_hf_to_gguf.py `permute`). A
  wrong one keeps every shape and changes every answer (tests/model/llama/test_gguf.py);
- the tokenizer is metadata (tokens, merges, token types, the pre-tokenizer's name): a byte-level BPE built from
  it with the `tokenizers` library, splitting text as llama.cpp says that pre-tokenizer does.

The file is read only from an installed package or a path the server's operator gives (never from a browser), and
holds no code.
"""
import json
import os
import sys
from pathlib import Path

from model.llama import gguf_tensors
from model.llama.config import UnsupportedLlama

CONFIG, WEIGHTS, TOKENIZER, TOKENIZER_CONFIG = "config.json", "model.safetensors", "tokenizer.json", \
    "tokenizer_config.json"
FILES = (CONFIG, WEIGHTS, TOKENIZER, TOKENIZER_CONFIG)  # a Hugging Face directory (convert)
PREPARED = (CONFIG, gguf_tensors.INDEX, TOKENIZER, TOKENIZER_CONFIG)  # what a start reads beside the GGUF (prepare)

_TENSORS = {  # GGUF -> Hugging Face names; blk.{i}. -> model.layers.{i}.
    "token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head",
    "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm", "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
}
# How llama.cpp splits text before BPE, by tokenizer.ggml.pre (its llama-vocab.cpp): SmolLM's digits one by one,
# then GPT-2's split. A name not here is refused rather than tokenized differently.
_GPT2_SPLIT = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
_SPLITS = {"smollm": ("digits", _GPT2_SPLIT), "gpt2": (_GPT2_SPLIT,)}
CONTROL = 3  # tokenizer.ggml.token_type of a special token (<|im_start|>)


def _fields(reader) -> dict:
    """The metadata as Python values (strings, numbers, lists), tokens and merges included."""
    return {name: field.contents() for name, field in reader.fields.items()}


def hf_config(meta: dict, tied: bool) -> dict:
    """A Hugging Face Llama config.json from the GGUF's metadata; UnsupportedLlama for what we do not implement."""
    arch = meta.get("general.architecture")
    if arch != "llama":
        raise UnsupportedLlama(f"the GGUF holds a {arch!r} model, not a Llama")
    if any(key.startswith("llama.rope.scaling") for key in meta):
        raise UnsupportedLlama("RoPE scaling is not implemented")
    heads = int(meta["llama.attention.head_count"])
    hidden = int(meta["llama.embedding_length"])
    return {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_act": "silu",
        "vocab_size": len(meta["tokenizer.ggml.tokens"]), "hidden_size": hidden,
        "intermediate_size": int(meta["llama.feed_forward_length"]),
        "num_hidden_layers": int(meta["llama.block_count"]), "num_attention_heads": heads,
        "num_key_value_heads": int(meta.get("llama.attention.head_count_kv", heads)),
        "head_dim": int(meta.get("llama.rope.dimension_count", hidden // heads)),
        "rms_norm_eps": float(meta["llama.attention.layer_norm_rms_epsilon"]),
        "rope_parameters": {"rope_type": "default", "rope_theta": float(meta.get("llama.rope.freq_base", 10000.0))},
        "max_position_embeddings": int(meta["llama.context_length"]), "tie_word_embeddings": tied,
        "bos_token_id": meta.get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": meta.get("tokenizer.ggml.eos_token_id"),
        "pad_token_id": meta.get("tokenizer.ggml.padding_token_id"), "torch_dtype": "float32",
    }


def hf_name(name: str) -> str:
    """blk.3.attn_q.weight -> model.layers.3.self_attn.q_proj.weight."""
    stem, _, kind = name.rpartition(".")
    if stem.startswith("blk."):
        _, layer, part = stem.split(".", 2)
        return f"model.layers.{layer}.{_TENSORS[part]}.{kind}"
    return f"{_TENSORS[stem]}.{kind}"


def index(reader, config: dict, gguf_file: Path) -> dict:
    """The file's tensors as model.llama.gguf_tensors reads them: Hugging Face's names, where the bytes are, and the
    heads W_Q and W_K are un-permuted by."""
    heads = {".attn_q.": config["num_attention_heads"], ".attn_k.": config["num_key_value_heads"]}
    entries = [gguf_tensors.entry(t, hf_name(t.name), next((n for k, n in heads.items() if k in t.name), 0))
               for t in reader.tensors]
    return gguf_tensors.index_of(entries, gguf_file.stat().st_size)


def tokenizer(meta: dict):
    """The byte-level BPE the metadata describes, as a `tokenizers.Tokenizer`."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers  # noqa: PLC0415

    if meta.get("tokenizer.ggml.model") != "gpt2":
        raise UnsupportedLlama(f"a {meta.get('tokenizer.ggml.model')!r} tokenizer: only byte-level BPE is read")
    pre = meta.get("tokenizer.ggml.pre")
    if pre not in _SPLITS:
        raise UnsupportedLlama(f"the pre-tokenizer {pre!r} is not known here")
    tokens = list(meta["tokenizer.ggml.tokens"])
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, merges, fuse_unk=False))
    steps = [pre_tokenizers.Digits(individual_digits=True) if split == "digits"
             else pre_tokenizers.Split(Regex(split), behavior="isolated") for split in _SPLITS[pre]]
    tok.pre_tokenizer = pre_tokenizers.Sequence([*steps, pre_tokenizers.ByteLevel(add_prefix_space=False,
                                                                                  use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    types = meta["tokenizer.ggml.token_type"]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, kind in zip(tokens, types, strict=True) if kind == CONTROL])
    return tok


def tokenizer_config(meta: dict) -> dict:
    tokens = meta["tokenizer.ggml.tokens"]

    def token(key: str) -> str | None:
        i = meta.get(f"tokenizer.ggml.{key}_token_id")
        return None if i is None else tokens[int(i)]

    return {"tokenizer_class": "PreTrainedTokenizerFast", "chat_template": meta.get("tokenizer.chat_template"),
            "bos_token": token("bos"), "eos_token": token("eos"), "unk_token": token("unknown"),
            "pad_token": token("padding"), "add_bos_token": bool(meta.get("tokenizer.ggml.add_bos_token", False)),
            "model_max_length": int(meta["llama.context_length"]), "clean_up_tokenization_spaces": False}


def convert(gguf_file: Path, out: Path) -> None:
    """Write the Hugging Face directory `out` from a GGUF file (config, tokenizer, float32 model.safetensors)."""
    def weights_file(reader, config: dict, part: Path) -> None:
        from safetensors.torch import save_file  # noqa: PLC0415

        weights = gguf_tensors.read(gguf_file, index(reader, config, gguf_file))  # as every start reads them
        save_file(weights, str(part / WEIGHTS), metadata={"format": "pt"})
        (part / WEIGHTS).chmod(0o644)  # safetensors writes 0600: a server run as another user reads it too

    _written(gguf_file, out, weights_file, FILES)


def prepare(gguf_file: Path, out: Path) -> None:
    """Write `out` with what a start needs besides the GGUF itself: the config, the tokenizer and the index of the
    file's tensors (model.llama.gguf_tensors, which reads them at every start); no weights."""
    def index_file(reader, config: dict, part: Path) -> None:
        (part / gguf_tensors.INDEX).write_text(json.dumps(index(reader, config, gguf_file)))

    _written(gguf_file, out, index_file, PREPARED)


def _written(gguf_file: Path, out: Path, write_weights, files: tuple[str, ...]) -> None:
    """`out` from the GGUF's metadata, then write_weights(reader, config, folder): into a sibling first, renamed
    when complete, so a reader never sees half of it (two processes at once: the second's rename finds it there)."""
    from gguf import GGUFReader  # noqa: PLC0415

    reader = GGUFReader(str(gguf_file))
    meta = _fields(reader)
    config = hf_config(meta, tied=not any(t.name == "output.weight" for t in reader.tensors))
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(f"{out.name}.part-{os.getpid()}")
    part.mkdir()
    try:
        (part / CONFIG).write_text(json.dumps(config, indent=1))
        tokenizer(meta).save(str(part / TOKENIZER))
        (part / TOKENIZER_CONFIG).write_text(json.dumps(tokenizer_config(meta), indent=1))
        write_weights(reader, config, part)
        part.rename(out)
    except OSError:
        if not complete(out, files):
            raise
    finally:
        if part.exists():
            for f in part.iterdir():
                f.unlink()
            part.rmdir()


def complete(directory: Path, files: tuple[str, ...] = FILES) -> bool:
    return all((directory / f).is_file() for f in files)


if __name__ == "__main__":
    # python -m model.llama.gguf FILE.gguf OUT_DIR: a Hugging Face directory (for ATTNVIZ_MODEL_DIRS); with --index,
    # what model.llama.smollm2 prepares, in a process apart
    (prepare if sys.argv[1] == "--index" else convert)(*(Path(a) for a in sys.argv[1:] if a != "--index"))
