"""Sentence embeddings as sentence-transformers makes them from all-MiniLM-L6-v2 (modules.json: the Transformer, then
mean pooling over the tokens, then L2 normalisation), with what is under them: the mean of every layer's hidden
states, and each token's share of the pooled vector.

A token's share of the pooled vector p = (1/T) Σ_i h_i is s_i = h_i · p / (T |p|²): the shares sum to 1 exactly, and
s_i is how much of p's length lies along p in token i's contribution (negative when h_i points away from p)."""
from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class SentenceVectors:
    """One sentence, as the model pools it."""

    embedding: np.ndarray  # (E,) mean-pooled last hidden states, L2-normalised: the sentence embedding
    layers: np.ndarray  # (layers + 1, E) the mean over tokens of the embeddings' output and of each layer's output
    shares: np.ndarray  # (T,) each token's share of the (unnormalised) pooled last hidden states; sums to 1


def sentence_vectors(model, input_ids: torch.Tensor) -> SentenceVectors:
    """input_ids (1, T), no padding; under torch.inference_mode (the model thread's)."""
    x, _ = model.embed(input_ids, None, False)  # (1, T, E)
    outputs = model.layer_outputs(x)
    pooled = [x[0].mean(0), *(h[0].mean(0) for h in outputs)]
    x = outputs[-1]
    last = model.stack_output(x)[0]  # (T, E) after the final norm, if the stack has one
    pooled[-1] = last.mean(0)
    p = pooled[-1]
    shares = (last @ p) / (last.shape[0] * p.dot(p))
    embedding = torch.nn.functional.normalize(p, dim=0)
    return SentenceVectors(embedding.numpy(), torch.stack(pooled).numpy(), shares.numpy())


def cosines(embeddings: np.ndarray) -> np.ndarray:
    """(N, E) -> (N, N) cosine similarities (the rows need not be normalised)."""
    e = np.asarray(embeddings, dtype=np.float64)
    e = e / np.maximum(np.linalg.norm(e, axis=-1, keepdims=True), 1e-12)
    return np.clip(e @ e.T, -1.0, 1.0)


def pca_2d(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, E) -> ((N, 2) coordinates on the first two principal axes, (2,) share of the variance each explains).
    Deterministic: each axis's sign is chosen so that its largest loading is positive."""
    x = np.asarray(points, dtype=np.float64)
    x = x - x.mean(0)
    _u, s, vt = np.linalg.svd(x, full_matrices=False)
    vt = vt[:2] * np.sign(vt[:2, np.argmax(np.abs(vt[:2]), axis=1)].diagonal())[:, None]
    total = (s ** 2).sum()
    explained = (s[:2] ** 2) / total if total > 0 else np.zeros(min(2, s.size))
    coords = x @ vt.T
    if coords.shape[1] < 2:  # one point, or all alike
        coords = np.pad(coords, ((0, 0), (0, 2 - coords.shape[1])))
        explained = np.pad(explained, (0, 2 - explained.size))
    return coords, explained
