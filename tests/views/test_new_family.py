"""A family is a folder and one line: a family built in the tests only (tests/model/rms_family.py: a one-layer
decoder with RMSNorm), registered, is listed, loaded, drawn by a page and saved by its download, with no file of
views/ or runtime/ changed or knowing it."""
import csv
import io
from pathlib import Path

import numpy as np
import pytest
import torch

from harness import apptest
from model import families
from model.family import Capability
from model.loading.sources import find_source, list_sources, load
from runtime import models
from tests.model import rms_family

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def registered(monkeypatch):
    """The test family's one line in the registry, for this test."""
    monkeypatch.setattr(families, "FAMILIES", (*families.FAMILIES, rms_family.FAMILY))
    models.sources.clear()  # the list each process keeps for a minute
    yield rms_family.FAMILY
    models.sources.clear()


def test_the_registry_lists_and_loads_it(registered):
    (source,) = [s for s in list_sources() if s.key == rms_family.KEY]
    assert source.available and source.family == rms_family.KIND and source.can(Capability.CAUSAL)
    loaded = load(find_source(rms_family.KEY))
    assert loaded.facts.kind == "tiny-rms" and isinstance(loaded.model.block.norm1, torch.nn.RMSNorm)


def test_a_page_draws_it_and_its_download_saves_its_map(registered, offered):
    at = apptest.open_page("heatmap", model=rms_family.KEY, text="the cat sat on the mat", layer="0", head="1")
    assert not at.exception and not at.error
    name, build = offered["Download this map (CSV)"]
    assert name.endswith("_layer0_head1.csv")
    rows = list(csv.reader(io.StringIO(build().decode("utf-8"))))
    got = np.array([[float(x) for x in row[1:]] for row in rows[1:]])
    loaded = load(find_source(rms_family.KEY))
    with torch.inference_mode():
        _, maps, _ = loaded.model.inputs_and_attentions(loaded.encode("the cat sat on the mat").input_ids)
    np.testing.assert_allclose(got, maps[0, 0, 1].numpy(), rtol=1e-6)
    assert np.allclose(np.triu(got, 1), 0)  # causal: no word sees a later one


def test_no_file_of_views_or_runtime_names_it():
    for folder in ("views", "runtime"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            assert "rms_family" not in text and "tiny-rms" not in text, path
