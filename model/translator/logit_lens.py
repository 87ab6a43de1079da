"""The logit lens on the translator's decoder (model.lens): at every step of the greedy decoding, each decoder layer's
output read out through the decoder's final norm and the output projection to the English words."""
import torch

from model.lens import Lens
from model.lens import logit_lens as read_layers
from model.translator.decoding import generate


def logit_lens(model, src_ids: torch.Tensor, heads_off=()) -> Lens:
    """Greedy decoding of src_ids (1, S), as model.translator.decoding.generate does it, with every layer read out."""
    outputs: list = []
    written = generate(model, src_ids, heads_off=heads_off, layer_outputs=outputs)[0]  # (T,) ending with <eos>
    written = written[:len(outputs)]
    layers = torch.stack([torch.stack(step)[:, 0, 0] for step in outputs], dim=1)  # (layers, T, E)
    norm = model.transformer.decoder.norm
    return read_layers(layers, lambda h: model.generator(h if norm is None else norm(h)), written)
