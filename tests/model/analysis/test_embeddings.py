"""Sentence vectors against Hugging Face's BertModel (eager) with mean pooling and normalisation written out here,
on a tiny random checkpoint and on the packaged all-MiniLM-L6-v2; the shares, cosines and the 2-D map."""
import numpy as np
import pytest
import torch
import transformers

from model.analysis.embeddings import cosines, pca_2d, sentence_vectors
from model.bert import BertModel
from model.loading.sources import packaged_model_dir
from tests.model.bert.bert_checkpoints import reference, save_tiny


def check(ours, hf, ids):
    with torch.inference_mode():
        got = sentence_vectors(ours, ids)
        out = hf(ids, output_hidden_states=True)
    hidden = out.last_hidden_state[0]  # (T, E)
    pooled = hidden.mean(0)
    np.testing.assert_allclose(got.embedding, (pooled / pooled.norm()).numpy(), atol=1e-5)
    # the mean of the embeddings' output and of every layer's output, as Hugging Face's hidden states give them
    np.testing.assert_allclose(got.layers, torch.stack([h[0].mean(0) for h in out.hidden_states]).numpy(), atol=1e-5)
    shares = (hidden @ pooled) / (hidden.shape[0] * pooled.dot(pooled))
    np.testing.assert_allclose(got.shares, shares.numpy(), atol=1e-5)
    assert got.shares.sum() == pytest.approx(1.0, abs=1e-5)


def test_equal_to_hugging_face_on_a_tiny_random_bert(tmp_path):
    directory = save_tiny(tmp_path, transformers.BertModel)
    check(BertModel.from_pretrained(directory).eval(), reference(directory), torch.tensor([[2, 17, 5, 40, 9, 3]]))


def test_equal_to_hugging_face_on_the_packaged_minilm():
    directory = packaged_model_dir()
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    ids = tokenizer("I have a cat", return_tensors="pt").input_ids
    check(BertModel.from_pretrained(directory).eval(), reference(directory), ids)


def test_cosines_and_the_map_by_hand():
    vectors = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0]])
    np.testing.assert_allclose(cosines(vectors), [[1, 1, 0], [1, 1, 0], [0, 0, 1]], atol=1e-12)
    coords, explained = pca_2d(np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [4.0, 0.0, 1e-9]]))
    np.testing.assert_allclose(coords[:, 0], [-2.0, 0.0, 2.0], atol=1e-6)  # the one axis of spread, largest loading +
    assert explained[0] == pytest.approx(1.0) and explained[1] == pytest.approx(0.0, abs=1e-12)
    same, explained = pca_2d(np.ones((3, 4)))
    assert same.shape == (3, 2) and not explained.any()
