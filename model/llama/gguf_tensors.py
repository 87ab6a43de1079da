"""A Llama GGUF file's tensors read straight into float32 torch tensors, at every start, from a small index written
once (model.llama.gguf.prepare): the GGUF stays the only copy on disk (98 MB for SmolLM2, against 538 MB as float32),
and a start reads it in about a second, without parsing its metadata again (the `gguf` package's reader takes 3-5 s
over the tokenizer's 49,152 tokens and 48,900 merges).

The blocks SmolLM2 uses are de-quantized here with torch (Q4_1: x = d q + m over 32 values of 4 bits, d and m
float16; Q8_0: x = d q, q 8 bits; float32 and float16 as they are), bit for bit as the `gguf` package's own numpy
code (tests/model/llama/test_gguf.py); any other block type is handed to that code. W_Q and W_K are put back in
Hugging Face's order (`unpermuted`: each head's rows 2i, 2i+1 -> i, i + d/2). A whole Hugging Face directory
(model.llama.gguf.convert) is written from the same reading.
"""
import json
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

INDEX = "gguf_tensors.json"
Q4_1, Q8_0, F32, F16 = 3, 8, 0, 1  # gguf.GGMLQuantizationType's values
BLOCKS = {Q4_1: (20, 32), Q8_0: (34, 32)}  # bytes and values of a block
CHUNK = 1 << 20  # values de-quantized at once


def entry(tensor, name: str, heads: int) -> dict:
    """One tensor of a gguf.GGUFReader, as the index keeps it: its Hugging Face name, block type, shape (out, in),
    where its bytes are in the file, and the heads to un-permute (0: none)."""
    return {"name": name, "type": int(tensor.tensor_type), "shape": [int(n) for n in reversed(tensor.shape.tolist())],
            "offset": int(tensor.data_offset), "bytes": int(tensor.n_bytes), "heads": heads}


def index_of(entries: list[dict], gguf_bytes: int) -> dict:
    return {"gguf_bytes": gguf_bytes, "tensors": entries}


def read_index(path: Path) -> dict:
    return json.loads(path.read_text())


def _halves(blocks: Tensor, at: int) -> Tensor:
    """The float16 at bytes at..at+1 of each block (B, n), as float32 (B, 1)."""
    return blocks[:, at:at + 2].contiguous().view(torch.float16).float()


def dequantized(raw: np.ndarray, kind: int, shape: list[int]) -> Tensor:
    """A tensor's bytes as float32 (shape), written block by block into the result: at most CHUNK values of
    temporaries beside it (the embedding's 28 M values would otherwise take three times their size at once)."""
    data = torch.from_numpy(raw)
    if kind == F32:
        return data.view(torch.float32).reshape(shape).clone()
    if kind == F16:
        return data.view(torch.float16).float().reshape(shape)
    if kind in BLOCKS:
        size, values = BLOCKS[kind]
        blocks = data.view(-1, size)
        out = torch.empty(blocks.size(0), values)
        step = max(1, CHUNK // values)
        for start in range(0, blocks.size(0), step):
            out[start:start + step] = _block_values(blocks[start:start + step], kind)
        return out.reshape(shape)
    from gguf import GGMLQuantizationType, dequantize  # noqa: PLC0415 - another block type: the package's own code

    rows = raw.reshape(shape[0], -1)
    return torch.from_numpy(np.asarray(dequantize(rows, GGMLQuantizationType(kind)), dtype=np.float32)).reshape(shape)


def _block_values(blocks: Tensor, kind: int) -> Tensor:
    """(B, bytes) blocks -> (B, 32) float32."""
    if kind == Q4_1:  # d (f16), m (f16), 16 bytes: the low nibbles are values 0-15, the high ones 16-31
        q = blocks[:, 4:]
        return _halves(blocks, 0) * torch.cat([q & 0x0F, q >> 4], dim=1).float() + _halves(blocks, 2)
    return _halves(blocks, 0) * blocks[:, 2:].contiguous().view(torch.int8).float()  # Q8_0: d (f16), 32 int8


def unpermuted(w: Tensor, heads: int) -> Tensor:
    """llama.cpp's (heads, d/2, 2) row order of W_Q or W_K (rows, in) back to Hugging Face's (heads, 2, d/2)."""
    rows = w.shape[0]
    return w.reshape(heads, rows // heads // 2, 2, *w.shape[1:]).transpose(1, 2).reshape(w.shape)


def read(gguf_file: Path, index: dict) -> dict[str, Tensor]:
    """Every tensor of the index, float32, with Hugging Face's names; ValueError if the file is not the one indexed."""
    size = gguf_file.stat().st_size
    if size != index["gguf_bytes"]:
        raise ValueError(f"the GGUF file holds {size} bytes, its index says {index['gguf_bytes']}")
    raw = np.memmap(gguf_file, dtype=np.uint8, mode="r")
    out = {}
    for e in index["tensors"]:
        w = dequantized(np.array(raw[e["offset"]:e["offset"] + e["bytes"]]), e["type"], e["shape"])
        out[e["name"]] = unpermuted(w, e["heads"]) if e["heads"] else w
    return out
