"""Reading a Hugging Face BERT directory without trusting it.

A directory is read in two passes. The first reads no tensor: config.json, and the names, shapes and sizes of
the weights from the file's header (model.safetensors) or from its pickle with every tensor on the meta device
(pytorch_model.bin, through torch.load(weights_only=True): a pickle that asks to run code is refused).
Only when the first pass finds nothing wrong and nothing too big does the second read the tensors.

Every message is shown in the page as it is, so none names a server path: files are named by their name alone,
and an exception's own text is kept only where it cannot hold a path.
"""
import errno
import json
import zipfile
from pathlib import Path
from pickle import UnpicklingError

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file
from torch import Tensor

from locales import N_
from model.messages import Later

SAFETENSORS, PICKLE, CONFIG = "model.safetensors", "pytorch_model.bin", "config.json"
MAX_MODEL_BYTES = 2 * 10**9  # what this server loads at most: the model as float32, and the weights file
MAX_PICKLE_BYTES = 1 << 20  # a state dict's pickle (no tensor data): ~20 KB for MiniLM, ~60 KB for BERT-large
MAX_CONFIG_BYTES = 1 << 20  # config.json: BERT's is under 1 KB


def size_text(n: int) -> str:
    """Bytes as a person reads them: '0.09 GB', '1.3 GB', '20,133 GB'."""
    return f"{n / 10**9:,.0f} GB" if n >= 10**10 else f"{n / 10**9:.2g} GB"


class CheckpointError(ValueError):
    """A checkpoint directory that cannot be loaded; the message names the problem and never a server path."""


def out_of_memory(error: BaseException) -> bool:
    """Did an allocation fail? torch raises RuntimeError('... can't allocate memory ...'), an mmap OSError(ENOMEM)."""
    if isinstance(error, MemoryError):
        return True
    if isinstance(error, OSError):
        return error.errno == errno.ENOMEM
    text = str(error).lower()
    return isinstance(error, RuntimeError) and ("allocate memory" in text or "not enough memory" in text)


NOT_ENOUGH_MEMORY = Later(N_("not enough memory: the server cannot hold this model now"))


def read_raw_config(directory: Path) -> dict:
    if not directory.is_dir():
        raise CheckpointError(Later(N_("it does not exist or is not a directory")))
    path = directory / CONFIG
    if not path.is_file():
        raise CheckpointError(Later(N_("the directory has no {file}"), file=CONFIG))
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise CheckpointError(Later(N_("{file} is {kb} KB: too big to be a model's config"), file=CONFIG,
                                        kb=path.stat().st_size // 1024))
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise CheckpointError(Later(N_("{file} could not be read: {reason}"), file=CONFIG, reason=e.strerror)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:  # their text holds a position, never the path
        raise CheckpointError(Later(N_("{file} is not valid JSON: {reason}"), file=CONFIG, reason=str(e))) from None
    if not isinstance(raw, dict):
        raise CheckpointError(Later(N_("{file} does not hold a JSON object"), file=CONFIG))
    return raw


def weights_file(directory: Path) -> Path:
    """model.safetensors, else pytorch_model.bin, if its size is one this server loads."""
    for name in (SAFETENSORS, PICKLE):
        path = directory / name
        if path.is_file():
            size = path.stat().st_size
            if size > MAX_MODEL_BYTES:
                raise CheckpointError(Later(N_("{file} holds {size}; this server loads at most {most}"), file=name,
                                            size=size_text(size), most=size_text(MAX_MODEL_BYTES)))
            return path
    raise CheckpointError(Later(N_("the directory has no weights: expected {first} or {second}"),
                                first=SAFETENSORS, second=PICKLE))


def weight_shapes(directory: Path) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor in the weights file, no tensor read (first pass). Raises CheckpointError."""
    path = weights_file(directory)
    if path.name == SAFETENSORS:

        try:  # safe_open reads the header and checks that its offsets cover the file: a truncated file fails here
            with safe_open(path, framework="pt") as f:
                return {name: tuple(f.get_slice(name).get_shape()) for name in f.keys()}  # noqa: SIM118 (not iterable)
        except (SafetensorError, OSError) as e:
            raise _unreadable(path, e) from None
    state = _unpickle(path, map_location="meta", mmap=True)
    total = sum(t.numel() * t.element_size() for t in state.values())
    if total > MAX_MODEL_BYTES:  # a zip record may be compressed: the file's size does not bound its tensors
        raise CheckpointError(Later(N_("{file} describes {size} of tensors; this server loads at most {most}"),
                                    file=PICKLE, size=size_text(total), most=size_text(MAX_MODEL_BYTES)))
    return {name: tuple(t.shape) for name, t in state.items()}


def read_weights(directory: Path) -> dict[str, Tensor]:
    """Every tensor of the weights file, in memory (second pass: call weight_shapes and check them first)."""
    path = weights_file(directory)
    if path.name == PICKLE:
        return _unpickle(path, map_location="cpu", mmap=False)

    try:  # mapped, not read: from_pretrained copies each tensor into the model and drops the mapping
        return load_file(path)
    except (SafetensorError, OSError, RuntimeError, MemoryError) as e:
        raise _unreadable(path, e) from None


def _unpickle(path: Path, map_location: str, mmap: bool) -> dict[str, Tensor]:
    """pytorch_model.bin through torch.load(weights_only=True), checked to be a state dict (str -> Tensor)."""
    _check_pickle_size(path)
    try:
        state = torch.load(path, map_location=map_location, mmap=mmap, weights_only=True)
    except UnpicklingError as e:
        if "weights only load failed" in str(e).lower():
            raise CheckpointError(Later(N_("{file} is not a safe checkpoint: it asks to run code or holds objects "
                                           "other than tensors (refused without running anything; save it as "
                                           "model.safetensors)"), file=PICKLE)) from None
        raise _unreadable(path, e) from None
    except Exception as e:  # noqa: BLE001 - torch.load of a crafted file may raise anything (KeyError, ...)
        raise _unreadable(path, e) from None
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, Tensor) for k, v in state.items()):
        raise CheckpointError(Later(N_("{file} does not hold a state dict (names and tensors)"), file=PICKLE))
    return state


def _check_pickle_size(path: Path):
    """torch's zip format only (mmap, and a pickle whose size is known before it is unpickled). The legacy format
    (torch < 1.6) puts the pickle and the tensor bytes in one stream, so its objects cannot be bounded unread."""
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise _unreadable(path, e) from None
    if magic[:1] == b"\x80":  # a bare pickle stream
        raise CheckpointError(Later(N_("{file} is in torch's legacy format (torch < 1.6), which cannot be checked "
                                       "before it is read; save it again with torch.save, or as model.safetensors"),
                                    file=PICKLE))
    try:
        with zipfile.ZipFile(path) as archive:
            sizes = [i.file_size for i in archive.infolist() if i.filename.endswith("/data.pkl")]
    except (zipfile.BadZipFile, OSError) as e:
        raise _unreadable(path, e) from None
    if len(sizes) != 1:
        raise CheckpointError(Later(N_("{file} is a zip archive but not a torch checkpoint"), file=PICKLE))
    if sizes[0] > MAX_PICKLE_BYTES:
        raise CheckpointError(Later(N_("{file} holds {kb} KB of pickled objects besides its tensors; a state dict "
                                       "needs far less (at most {most} KB here)"), file=PICKLE, kb=sizes[0] // 1024,
                                    most=MAX_PICKLE_BYTES // 1024))


def _unreadable(path: Path, error: BaseException) -> CheckpointError:
    """The plain message for a weights file that failed to read: memory, or damage; never a path nor raw text
    that may hold one (an OSError's text names its file; torch's and safetensors' do not)."""
    if out_of_memory(error):
        return CheckpointError(Later(N_("{file} could not be read: {reason}"), file=path.name,
                                     reason=NOT_ENOUGH_MEMORY))
    detail = error.strerror if isinstance(error, OSError) else str(error).replace(str(path), path.name)
    return CheckpointError(Later(N_("{file} could not be read (truncated or corrupt?): {reason}"), file=path.name,
                                 reason=detail))


_LAYER_NAMES = {  # Hugging Face name inside encoder.layer.{i} -> ours inside encoder.layers.{i}
    "attention.output.dense": "self_attn.out_proj",
    "attention.output.LayerNorm": "norm1",
    "intermediate.dense": "linear1",
    "output.dense": "linear2",
    "output.LayerNorm": "norm2",
}
_TOP_NAMES = {
    "embeddings.LayerNorm": "embeddings.norm",
    "pooler.dense": "pooler",
    "cls.predictions.transform.dense": "mlm_head.dense",
    "cls.predictions.transform.LayerNorm": "mlm_head.norm",
    "cls.predictions.decoder": "mlm_head.decoder",
}


def hf_layout(names) -> dict[str, tuple[str, ...]]:
    """Our parameter name -> the Hugging Face names it is made of: one, or the query, key and value packed into
    one in_proj (3H, H). Names alone, so that shapes from a header and tensors in memory convert alike."""
    clean = {}
    for name in names:
        short = name.removeprefix("bert.")
        if short.endswith((".gamma", ".beta")):  # the oldest checkpoints' LayerNorm names
            short = short.rsplit(".", 1)[0] + (".weight" if short.endswith(".gamma") else ".bias")
        clean[short] = name
    out = {}
    for short, name in clean.items():
        prefix, _, leaf = short.rpartition(".")
        if short == "cls.predictions.bias":
            out.setdefault("mlm_head.decoder.bias", (name,))
        elif prefix in _TOP_NAMES:
            out[f"{_TOP_NAMES[prefix]}.{leaf}"] = (name,)
        elif prefix.startswith("embeddings."):
            out[short] = (name,)
        elif prefix.startswith("encoder.layer."):
            i, _, inner = prefix.removeprefix("encoder.layer.").partition(".")
            if inner in _LAYER_NAMES:
                out[f"encoder.layers.{i}.{_LAYER_NAMES[inner]}.{leaf}"] = (name,)
            elif inner == "attention.self.query":
                parts = tuple(clean.get(f"{prefix.rsplit('.', 1)[0]}.{p}.{leaf}") for p in ("query", "key", "value"))
                if all(parts):
                    out[f"encoder.layers.{i}.self_attn.in_proj_{leaf}"] = parts
    return out


def convert_hf_shapes(shapes: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    """convert_hf_state_dict for shapes (the first pass): our name -> the shape its tensor will have."""
    out = {}
    for ours, parts in hf_layout(shapes).items():
        first = tuple(shapes[parts[0]])
        if len(parts) > 1:
            _check_packable(parts, [tuple(shapes[p]) for p in parts])
            first = (3 * first[0], *first[1:])
        out[ours] = first
    return out


def convert_hf_state_dict(hf: dict[str, Tensor]) -> dict[str, Tensor]:
    """Hugging Face BERT names -> ours. Q, K, V Linear layers become one packed in_proj (3H, H)."""
    out = {}
    for ours, parts in hf_layout(hf).items():
        if len(parts) > 1:
            _check_packable(parts, [tuple(hf[p].shape) for p in parts])
        out[ours] = hf[parts[0]] if len(parts) == 1 else torch.cat([hf[p] for p in parts], dim=0)
    return out


def _check_packable(names: tuple[str, ...], shapes: list[tuple[int, ...]]):
    """Query, key and value stack along their first dimension only if they have one and the same shape."""
    if not shapes[0]:
        raise CheckpointError(Later(N_("tensor {name} is a scalar, not a weight"), name=repr(names[0])))
    for name, shape in zip(names[1:], shapes[1:]):
        if shape != shapes[0]:  # torch.cat would fail with a message of its own
            raise CheckpointError(f"tensor {name!r} has shape {shape}, but {names[0]!r} has {shapes[0]}")


def check_sizes(sizes: dict[str, object], file: str, error: type[CheckpointError] = CheckpointError) -> None:
    """Raises `error` naming the first of a config's sizes that is not a positive integer (never a
    ZeroDivisionError or TypeError later)."""
    for name, value in sizes.items():
        if type(value) is not int or value < 1:
            raise error(Later(N_("{file}: {name} must be a positive integer, got {value}"), file=file, name=name,
                              value=repr(value)))


def check_shape(name: str, got, expected: tuple[int, ...]) -> None:
    """Raises CheckpointError, naming the tensor by `name` (its Hugging Face name), when got (a tensor, a shape, or
    None) is missing or not of the expected shape."""
    if got is None:
        raise CheckpointError(Later(N_("the checkpoint has no tensor for {name}"), name=repr(name)))
    shape = tuple(got.shape) if isinstance(got, Tensor) else tuple(got)
    if shape != expected:
        raise CheckpointError(Later(N_("tensor {name} has shape {shape}, but {file} implies {expected}"),
                                    name=repr(name), shape=str(shape), file=CONFIG, expected=str(expected)))


def hf_name(ours: str) -> str:
    """Our parameter name -> the Hugging Face name a user would look for in the checkpoint."""
    parts = ours.split(".")
    if parts[:2] == ["encoder", "layers"]:
        inner, leaf = ".".join(parts[3:-1]), parts[-1].removeprefix("in_proj_")
        hf_inner = {v: k for k, v in _LAYER_NAMES.items()}.get(inner, "attention.self.query/key/value")
        return f"encoder.layer.{parts[2]}.{hf_inner}.{leaf}"
    prefix, _, leaf = ours.rpartition(".")
    return f"{ {v: k for k, v in _TOP_NAMES.items()}.get(prefix, prefix)}.{leaf}"
