"""`tfm.legacy`: TF1's `tf.layers`, `tf.nn.rnn_cell` and `tf.contrib.slim`, for hosted TF1 graph-mode model code.

TF 2.16+ dropped `tf.compat.v1.layers` and `tf.compat.v1.nn.rnn_cell`; tf-keras (Keras 2) still
ships them as its legacy modules, with TF1's variable names and `get_variable` scoping. The codemod
respells `tf.layers.X` to `tfm.legacy.layers.X` and `tf.nn.rnn_cell.X` / `tf.contrib.rnn.X` to
`tfm.legacy.rnn_cell.X` where it leaves a model_fn as written (the hosted tier,
`tfmigrate.runtime.estimator`).

`tfm.legacy.slim` is tf-slim (TF1's `tf.contrib.slim` and the layer functions of
`tf.contrib.layers`, as Google moved them out of TF 1.15). Its `batch_norm` reaches TF's legacy
normalization layer through the module path `tf_keras.legacy_tf_layers.normalization`, which
tf-keras ships as `tf_keras.src.legacy_tf_layers.normalization`; the loader aliases that path.

tf_keras is imported on first attribute access, so `import tfmigrate.runtime` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["layers", "rnn_cell", "slim"]

_MODULES = {
    "layers": "tf_keras.api._v1.keras.__internal__.legacy.layers",
    "rnn_cell": "tf_keras.api._v1.keras.__internal__.legacy.rnn_cell",
    "slim": "tf_slim",
}
_PACKAGES = {"layers": "tf-keras", "rnn_cell": "tf-keras", "slim": "tf-slim"}


def _alias_legacy_tf_layers() -> None:
    """`tf_keras.legacy_tf_layers[.normalization]` (where TF's own module points) as tf-keras has them."""
    import sys

    for name in ("", ".normalization"):
        if f"tf_keras.legacy_tf_layers{name}" not in sys.modules:
            try:
                sys.modules[f"tf_keras.legacy_tf_layers{name}"] = importlib.import_module(f"tf_keras.src.legacy_tf_layers{name}")
            except ImportError:  # pragma: no cover - a tf-keras with the public path needs no alias
                return


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        if name == "slim":
            _alias_legacy_tf_layers()
        module = importlib.import_module(_MODULES[name])
    except ImportError as error:  # pragma: no cover - depends on the installation
        raise ImportError(
            f"tfm.legacy.{name} needs {_PACKAGES[name]} (TF1's legacy layers): pip install 'tfmigrate[runtime]'"
        ) from error
    globals()[name] = module
    return module


def __dir__() -> list[str]:
    return sorted(__all__)
