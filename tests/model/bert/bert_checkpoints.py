"""Tiny random BERT checkpoints beside their Hugging Face reference, for the BERT tests."""
import shutil

import torch
import transformers
from safetensors.torch import load_file

TINY = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
            max_position_embeddings=64, type_vocab_size=2)


def save_tiny(directory, hf_class, seed=0):
    """A random Hugging Face checkpoint (config.json + model.safetensors)."""
    torch.manual_seed(seed)
    hf = hf_class(transformers.BertConfig(**TINY))
    with torch.no_grad():  # make biases and LayerNorm weights non-trivial
        for p in hf.parameters():
            if p.dim() == 1:
                p.add_(0.1 * torch.randn_like(p))
    hf.save_pretrained(directory)
    return directory


def as_binary(directory, target):
    """The same checkpoint as pytorch_model.bin (transformers 5 always writes safetensors, so torch.save)."""
    shutil.copytree(directory, target)
    state = load_file(target / "model.safetensors")
    (target / "model.safetensors").unlink()
    torch.save(state, target / "pytorch_model.bin")
    return target


def reference(directory, hf_class=transformers.BertModel):
    """The Hugging Face model, with eager attention so that it returns attention probabilities."""
    return hf_class.from_pretrained(directory, attn_implementation="eager").eval()


def tiny_batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1, TINY["vocab_size"], (3, 9), generator=g)
    attention_mask = torch.ones(3, 9, dtype=torch.long)
    attention_mask[1, 6:] = 0
    attention_mask[2, 2:] = 0
    token_type_ids = (torch.arange(9) >= 4).long().expand(3, 9).clone()
    return dict(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)


def compare(ours, ref, batch, h, atol=1e-5):
    out = ours(**batch)
    with torch.no_grad():
        expected = ref(**batch, output_attentions=True, output_hidden_states=True)
    h.close(out.last_hidden_state, expected.last_hidden_state, atol)
    assert len(out.attentions) == len(expected.attentions) == ours.config.num_hidden_layers
    for got, want in zip(out.attentions, expected.attentions):
        assert got.shape == want.shape
        h.close(got, want, atol)
    if getattr(expected, "pooler_output", None) is not None:
        h.close(out.pooler_output, expected.pooler_output, atol)
    return out, expected
