"""`tfm.legacy`: TF1's `tf.layers` and `tf.nn.rnn_cell`, for hosted TF1 graph-mode model code.

TF 2.16+ dropped `tf.compat.v1.layers` and `tf.compat.v1.nn.rnn_cell`; tf-keras (Keras 2) still
ships them as its legacy modules, with TF1's variable names and `get_variable` scoping. The codemod
respells `tf.layers.X` to `tfm.legacy.layers.X` and `tf.nn.rnn_cell.X` / `tf.contrib.rnn.X` to
`tfm.legacy.rnn_cell.X` where it leaves a model_fn as written (the hosted tier,
`tfmigrate.runtime.estimator`).

tf_keras is imported on first attribute access, so `import tfmigrate.runtime` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["layers", "rnn_cell"]

_MODULES = {
    "layers": "tf_keras.api._v1.keras.__internal__.legacy.layers",
    "rnn_cell": "tf_keras.api._v1.keras.__internal__.legacy.rnn_cell",
}


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = importlib.import_module(_MODULES[name])
    except ImportError as error:  # pragma: no cover - depends on the installation
        raise ImportError(
            f"tfm.legacy.{name} needs tf-keras (Keras 2's legacy TF1 layers): pip install 'tfmigrate[runtime]'"
        ) from error
    globals()[name] = module
    return module


def __dir__() -> list[str]:
    return sorted(__all__)
