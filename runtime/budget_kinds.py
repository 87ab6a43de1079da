"""What the memory budget holds, by kind (runtime.budget): one StrEnum, so that a kind is never a free string."""
from enum import StrEnum


class Kind(StrEnum):
    """What a budget entry is: each kind counted apart (evictions, computations), some capped apart (KIND_ENTRIES)."""

    FORWARD = "forward"  # a forward pass (runtime.runs)
    LAYER = "layer"  # one layer of a pass recorded again (runtime.runs)
    EMBEDDING_TRACE = "embedding-trace"  # a pass's embeddings recorded again (runtime.runs)
    MODEL = "model"
    IMAGE = "image"
    ABLATION = "ablation"
    SNAPSHOT = "snapshot"
    LIVE = "live"
    ATTRIBUTION = "attribution"
    SENTENCE_VECTORS = "sentence-vectors"  # a sentence's vectors (views.pages.embeddings)
    WRITING = "writing"  # a language model's writing (views.language_model.run)
    CIRCUIT = "circuit"  # a language model's induction circuit on a text (views.language_model.induction)
    TABLE = "table"  # a model's position table (views.pages.positional)


# entries of these kinds are capped apart from the passes. "ablation": the translator's scores with heads switched
# off (a few KB each, one per set of heads a visitor tries: they must not push other students' passes out);
# "snapshot": the translator or the toy GPT at a step of its training (views.translate.learning,
# views.language_model.learning; both pages' fit: 12 translators of ~1 MB, 14 GPTs of ~0.4 MB and the GPT's maps of
# the probe, ~20 KB each, and their records), so that scrubbing through them never drops a model; "live": the live
# training's newest model and what the page reads with it (views/widgets/live.py), replaced every second while it
# runs; "attribution": a run's rollouts, a flow row, a saliency (views.pages.rollout); "sentence-vectors": a
# sentence's vectors (views.pages.embeddings), a few KB each
KIND_ENTRIES = {Kind.MODEL: 8, Kind.IMAGE: 16, Kind.ABLATION: 64, Kind.SNAPSHOT: 48, Kind.LIVE: 8,
                Kind.ATTRIBUTION: 32, Kind.SENTENCE_VECTORS: 64}
