"""A model the project trains and ships (model/weights/<family>): whether its files are there and readable, and the
bytes of its weights, from the files alone. The translator's source and the toy GPT's read them alike."""
import json
import math
from pathlib import Path

from locales import N_
from model.loading.checkpoint import CONFIG, weight_shapes
from model.loading.footprint import FLOAT32
from model.messages import Later


def check_shipped(directory: Path, files: tuple[str, ...], command: str, origin: Later) -> tuple[bool, str]:
    """(ok, reason): the files there and readable (config.json parses, the weights' header reads), or why not;
    command: what writes them; origin: where the model comes from, the reason when it is available."""
    missing = [name for name in files if not (directory / name).is_file()]
    if missing:
        return False, Later(N_("its shipped files are missing ({files}): `{command}` writes them"),
                            files=", ".join(missing), command=command)
    try:
        json.loads((directory / CONFIG).read_text())
        weights_bytes(directory)
    except Exception as e:  # noqa: BLE001 - safetensors raises its own SafetensorError; its text may hold the path
        return False, Later(N_("its shipped files could not be read ({error})"), error=type(e).__name__)
    return True, origin


def weights_bytes(directory: Path) -> int:
    """Bytes of the parameters as float32, from the safetensors header (no tensor is read)."""
    return FLOAT32 * sum(math.prod(shape) for shape in weight_shapes(directory).values())
