"""What both "Watch it learn" parts share (the Translate page's translator, the Language model page's toy GPT): a
model at a step of its shipped training, built once per process into the budget."""
from collections.abc import Callable

from locales import _
from model.loading.footprint import module_bytes
from runtime.budget import Kind
from runtime.memory import budget
from views.shell.errors import or_stop


def model_at(step: int, steps, trained, name: str, build: Callable[[], object], estimate: int):
    """The model after `step` training steps: the shipped model (`trained`) at the last snapshot (steps), else the
    snapshot's weights (build()), built once per process into the budget under (name, step), of kind "snapshot":
    capped apart from the models."""
    if step == steps[-1]:
        return trained
    return or_stop(_("The training snapshot"), budget().get_or_build, (name, step), build, Kind.SNAPSHOT, estimate,
                   module_bytes)
