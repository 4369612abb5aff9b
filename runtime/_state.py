"""What the runtime remembers about each Keras model object in this process (held weakly)."""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any


@dataclasses.dataclass
class ModelState:
    """Per-model bookkeeping. Must not reference the model itself, or the model would never be freed."""

    restored: bool = False  # Restored from (or checked against) a model_dir, or trained by `fit`.
    seeded: bool = False  # `RunConfig.tf_random_seed` applied.
    device_loop: Any = None  # estimator_calls's replacement train function, with its cache key.
    # `init_from_checkpoint(model, ckpt, assignment_map)` requests, applied on a fresh start.
    init_checkpoints: list = dataclasses.field(default_factory=list)
    summary_writer: Any = None  # (model_dir, writer) for the model's own tf.summary calls


_states: weakref.WeakKeyDictionary[Any, ModelState] = weakref.WeakKeyDictionary()


def model_state(model: Any) -> ModelState:
    """The runtime's bookkeeping for `model` (created on first use, dropped with the model)."""
    state = _states.get(model)
    if state is None:
        state = _states[model] = ModelState()
    return state
