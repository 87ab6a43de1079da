"""Tiny Llama GGUF files written in a test, as llama.cpp's convert_hf_to_gguf.py writes a real one: the metadata under
llama.cpp's key names, a byte-level BPE tokenizer with special tokens and a chat template, W_Q and W_K permuted for
llama.cpp's rotation, the matrices quantized (Q8_0, Q4_1: SmolLM2's) and the norms float32."""
from pathlib import Path

import numpy as np
import torch
import transformers
from gguf import GGMLQuantizationType, GGUFWriter
from gguf.quants import quantize
from transformers.convert_slow_tokenizer import bytes_to_unicode

SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
MERGES = ("Ġ t", "h e", "Ġt he", "Ġ a", "i n", "Ġ c", "a t", "Ġc at")
TEMPLATE = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
            "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
_NAMES = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
          "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
          "mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}


def byte_tokens() -> list[str]:
    """GPT-2's printable form of the 256 bytes (transformers' bytes_to_unicode)."""
    return list(bytes_to_unicode().values())


def vocabulary() -> list[str]:
    return [*SPECIAL, *byte_tokens(), *(m.replace(" ", "") for m in MERGES)]


def permute(w: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's convert_hf_to_gguf.py: each head's rows (2, d/2) -> (d/2, 2)."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def hf_llama(seed: int = 0, tied: bool = True, heads: int = 4, kv: int = 2) -> transformers.LlamaForCausalLM:
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(vocab_size=len(vocabulary()), hidden_size=64, intermediate_size=96,
                                      num_hidden_layers=2, num_attention_heads=heads, num_key_value_heads=kv,
                                      head_dim=64 // heads, rope_theta=100000.0, max_position_embeddings=256,
                                      tie_word_embeddings=tied, rms_norm_eps=1e-5, attn_implementation="eager")
    model = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(0.3 * torch.randn(p.shape))
            elif "q_proj" in name or "k_proj" in name:
                p.mul_(8.0)  # attention that picks tokens, as a trained model's does, not uniform
    return model


def _gguf_name(hf: str) -> str:
    if hf.startswith("model.layers."):
        _, _, layer, rest = hf.split(".", 3)
        inner, _, kind = rest.rpartition(".")
        return f"blk.{layer}.{_NAMES[inner]}.{kind}"
    return {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
            "lm_head.weight": "output.weight"}[hf]


def write_gguf(model: transformers.LlamaForCausalLM, path: Path, matrices=GGMLQuantizationType.Q4_1,
               pre: str = "smollm") -> Path:
    c = model.config
    w = GGUFWriter(str(path), "llama")
    w.add_block_count(c.num_hidden_layers)
    w.add_context_length(c.max_position_embeddings)
    w.add_embedding_length(c.hidden_size)
    w.add_feed_forward_length(c.intermediate_size)
    w.add_head_count(c.num_attention_heads)
    w.add_head_count_kv(c.num_key_value_heads)
    w.add_rope_freq_base(c.rope_parameters["rope_theta"])
    w.add_layer_norm_rms_eps(c.rms_norm_eps)
    w.add_rope_dimension_count(c.head_dim)
    w.add_vocab_size(c.vocab_size)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    tokens = vocabulary()
    w.add_token_list(tokens)
    w.add_token_types([3 if t in SPECIAL else 1 for t in tokens])
    w.add_token_merges(list(MERGES))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(2)
    w.add_chat_template(TEMPLATE)
    for name, tensor in model.state_dict().items():
        if name == "lm_head.weight" and c.tie_word_embeddings:
            continue
        array = tensor.numpy().astype(np.float32)
        if ".q_proj." in name:
            array = permute(array, c.num_attention_heads)
        elif ".k_proj." in name:
            array = permute(array, c.num_key_value_heads)
        if array.ndim == 2:
            qtype = GGMLQuantizationType.Q8_0 if "embed" in name else matrices
            w.add_tensor(_gguf_name(name), quantize(array, qtype), raw_dtype=qtype)
        else:
            w.add_tensor(_gguf_name(name), array)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
