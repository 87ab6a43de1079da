"""What the all-heads image costs the server: viz.mosaic.build_mosaic on the default model's attention
(all-MiniLM-L6-v2, 6 x 12 heads) at 30, 128 and 512 tokens, now and as it was built before 2026-11-26, in the same run:
- before: each layer on its own, long sentences downsampled with ufunc.reduceat along each axis, the PNG compressed
  with zlib's default strategy (level 1);
- now: the layers of a short sentence at once, downsampling by strided views combined element-wise, the PNG
  compressed with run-length coding only (Z_RLE, level 1).
Both must give the same pixels; the table gives CPU ms (median) and the PNG's bytes.

    .venv/bin/python bench/mosaic.py [--repeat 50]
"""
import argparse
import io
import random
import sys
import types
import zlib
from pathlib import Path
from unittest import mock

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import viz.mosaic as mosaic  # noqa: E402
from bench.timing import cpu_ms  # noqa: E402
from harness.record import run  # noqa: E402
from harness.students.student import make_sentence  # noqa: E402


def reduceat_downsample(maps, factor: int, pool: str = "max") -> np.ndarray:
    """viz.mosaic.downsample as it was: ufunc.reduceat along each axis."""
    maps = np.asarray(maps, dtype=np.float32)
    if factor == 1:
        return maps
    starts = np.arange(0, maps.shape[-1], factor)
    if pool == "max":
        return np.fmax.reduceat(np.fmax.reduceat(maps, starts, axis=-1), starts, axis=-2)
    finite = ~np.isnan(maps)
    sums = np.add.reduceat(np.add.reduceat(np.where(finite, maps, 0.0), starts, axis=-1), starts, axis=-2)
    counts = np.add.reduceat(np.add.reduceat(finite.astype(np.float32), starts, axis=-1), starts, axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sums / counts).astype(np.float32)


def before(attentions, tile: int, pool: str):
    """build_mosaic as it was: per layer, reduceat, zlib's default strategy."""
    default_zlib = types.SimpleNamespace(Z_RLE=zlib.Z_DEFAULT_STRATEGY)
    with mock.patch.object(mosaic, "downsample", reduceat_downsample), mock.patch.object(mosaic, "CHUNK_CELLS", 1), \
            mock.patch.object(mosaic, "zlib", default_zlib):
        return mosaic.build_mosaic(attentions, tile, pool)


def attentions(tokens: int) -> np.ndarray:
    """The default model's (layers, heads, T, T) attention on a sentence of `tokens` word pieces (Hugging Face's
    BertModel, eager attention, on the shipped weights)."""
    from transformers import AutoTokenizer, BertModel  # noqa: PLC0415 - only this bench needs them

    from model.loading.sources import packaged_model_dir  # noqa: PLC0415 - as above

    path = packaged_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = BertModel.from_pretrained(path, attn_implementation="eager").eval()
    text = " ".join(make_sentence(random.Random(i)) for i in range(tokens // 27 + 1))
    ids = tokenizer(text, truncation=True, max_length=tokens)["input_ids"]
    with torch.inference_mode():
        return torch.stack(model(torch.tensor([ids]), output_attentions=True).attentions)[:, 0].numpy()


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    print(f"{'tokens':>6s} {'tile':>4s} {'pool':>4s} {'before ms':>10s} {'now ms':>7s} {'ratio':>6s} "
          f"{'before KB':>10s} {'now KB':>7s}")
    for tokens in (30, 128, 512):
        maps = attentions(tokens)
        for tile, pool in ((64, "max"), (96, "max"), (64, "mean")):
            old, new = before(maps, tile, pool), mosaic.build_mosaic(maps, tile, pool)
            assert np.array_equal(pixels(old.png), pixels(new.png)), (tokens, tile, pool)  # the same picture
            ms_old = cpu_ms(lambda maps=maps, tile=tile, pool=pool: before(maps, tile, pool), args.repeat)
            ms_new = cpu_ms(lambda maps=maps, tile=tile, pool=pool: mosaic.build_mosaic(maps, tile, pool), args.repeat)
            print(f"{maps.shape[-1]:6d} {tile:4d} {pool:>4s} {ms_old:10.2f} {ms_new:7.2f} {ms_new / ms_old:6.2f} "
                  f"{len(old.png) / 1024:10.1f} {len(new.png) / 1024:7.1f}")


if __name__ == "__main__":
    run(__file__, main)
