"""Tiny random GPT-2 checkpoints saved by Hugging Face, beside their reference, for the GPT tests."""
import json

import torch
import transformers
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

# (n_embd, n_layer, n_head, vocab_size, n_positions, activation_function, n_inner): several sizes and activations
SIZES = {
    "small": (32, 2, 4, 50, 16, "gelu_new", None),
    "wide-ffn": (48, 3, 6, 97, 40, "gelu", 80),
    "one-head": (24, 1, 1, 30, 8, "relu", None),
    "tanh": (40, 2, 5, 61, 24, "gelu_pytorch_tanh", 64),
}


def save_tiny_gpt2(directory, size="small", seed=0, **overrides):
    """A random GPT2LMHeadModel (biases and LayerNorms perturbed so that they matter), saved with save_pretrained."""
    E, L, H, V, P, act, inner = SIZES[size]
    torch.manual_seed(seed)
    config = transformers.GPT2Config(vocab_size=V, n_positions=P, n_embd=E, n_layer=L, n_head=H, n_inner=inner,
                                     activation_function=act, bos_token_id=0, eos_token_id=0, **overrides)
    hf = transformers.GPT2LMHeadModel(config)
    with torch.no_grad():
        for p in hf.parameters():
            if p.dim() == 1:
                p.add_(0.1 * torch.randn_like(p))
    hf.save_pretrained(directory)
    return directory


def edit_config(directory, **changes):
    path = directory / "config.json"
    path.write_text(json.dumps(json.loads(path.read_text()) | changes))


def reference(directory):
    return transformers.GPT2LMHeadModel.from_pretrained(directory, attn_implementation="eager").eval()


def gpt2_tokenizer(directory, vocab_size=50):
    """A byte-level BPE tokenizer of `vocab_size` ids, trained offline on a line, saved as GPT-2's."""
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    # The same tokenizer in every process: ByteLevel.alphabet() comes in a random order each time (a Rust hash set),
    # so the alphabet is the line's own characters (a space is "Ġ") and then the byte alphabet's first, sorted.
    line = "attention is all you need"
    own = sorted(set(line.replace(" ", "Ġ")))
    alphabet = own + [c for c in sorted(pre_tokenizers.ByteLevel.alphabet()) if c not in own][:40 - len(own)]
    bpe.train_from_iterator([line] * 20, trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=alphabet))
    transformers.GPT2TokenizerFast(tokenizer_object=bpe).save_pretrained(directory)
    return directory
