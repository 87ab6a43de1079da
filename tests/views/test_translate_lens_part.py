"""The Translate page's logit lens (?part=lens) in AppTest: the grid is model.translator.logit_lens of the source with
the sidebar's heads off; the last layer's words are the translation; the downloads hold the same numbers."""
import base64
import csv
import io

import numpy as np
import pytest
import torch

from harness.apptest import charts, open_page
from model.translator import load_shipped
from model.translator.logit_lens import logit_lens
from views.widgets import downloads


def expected(src: str, off=()):
    model = load_shipped().eval()
    with torch.inference_mode():
        return logit_lens(model, torch.tensor([model.encode_source(src)[1]]), off)


@pytest.mark.parametrize("off, heads", [("", ()), ("cross.1.0,cross.1.1", (("cross", 1, 0), ("cross", 1, 1)))])
def test_the_grid_is_the_lens_of_the_source_with_the_heads_off(offered, off, heads):
    at = open_page("translate", part="lens", src="昨天我买了一本书", off=off)
    assert not at.exception
    (chart,) = charts(at)
    trace = chart.figure["data"][0]
    lens = expected("昨天我买了一本书", heads)
    z = trace["z"]
    got = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(lens.chosen_p.shape)
    np.testing.assert_allclose(got, lens.chosen_p.numpy(), atol=1e-6)
    assert [x.split(": ", 1)[1] for x in trace["x"]][:-1] == "I bought a book yesterday".split()
    assert [cell.split("<br>")[0] for cell in trace["text"][-1]][:-1] == "I bought a book yesterday".split()
    arrays = np.load(io.BytesIO(offered["Download the logit lens (NumPy .npz)"][1]()), allow_pickle=False)
    np.testing.assert_allclose(arrays["top_p"], lens.top_p.numpy(), atol=1e-6)
    rows = list(csv.DictReader(io.StringIO(offered["Download the logit lens (CSV)"][1]().decode("utf-8")
                                           .removeprefix(downloads.BOM))))
    assert len(rows) == lens.probs.shape[0] * lens.probs.shape[1] and rows[-1]["rank_written"] == "1"


def test_a_source_without_chinese_is_asked_for_again():
    at = open_page("translate", part="lens", src="hello")
    assert not at.exception and not charts(at)
    assert any("this text has none" in i.value for i in at.info)
