"""`tfm.legacy`: TF1's `tf.layers`, `tf.nn.rnn_cell`, `tf.keras`, `tf.contrib.slim`, `optimize_loss` and the other contrib pieces TF1 programs used (`summary`, `crf`, the fused LSTM, `predictor`), for hosted TF1 graph-mode model code.

TF 2.16+ dropped `tf.compat.v1.layers` and `tf.compat.v1.nn.rnn_cell`; tf-keras (Keras 2) still
ships them as its legacy modules, with TF1's variable names and `get_variable` scoping. The codemod
respells `tf.layers.X` to `tfm.legacy.layers.X` and `tf.nn.rnn_cell.X` / `tf.contrib.rnn.X` to
`tfm.legacy.rnn_cell.X` where it leaves a model_fn as written (the hosted tier,
`tfmigrate.runtime.estimator`). In a TF 1.x program it writes `tfm.legacy.tf1_layers.X` and
`tfm.legacy.tf1_rnn_cell.X`: the same layers and cells with TF 1.x's graph-seeded default
initializers (`tf1_initializers.py`), where `tfm.legacy.layers` has TF 2.x's `tf.compat.v1.layers` ones.

`tfm.legacy.keras` is TF 1.x's `tf.keras`: tf-keras's Keras 2 v1 API (`tf_keras.api._v1.keras`, what
`tf.keras` was under `tensorflow.compat.v1` on TF 2.15: the v1 BatchNormalization, graph mode),
with TF 1.x's graph-seeded initializers for its layers and models as `tfm.legacy.tf1_layers` has
them (`tf1_initializers.py`), for Keras code in a TF 1.x program's TF1 graph (rule TFM105): variables named
as TF 1.x named them (`dense/kernel`), so TF 1.x checkpoints restore, and unseeded random ops
(dropout) draw TF 1.x's masks.

`tfm.legacy.keras_v2` is TF 2.x's `tf.keras` up to TF 2.15: tf-keras's Keras 2 v2 API (`tf_keras.api._v2.keras`),
for Keras code in a TF 2.x-spelled program's TF1 graph (a hosted model_fn of a program written
against `tf.compat.v1`, rule TFM105): Keras 3 objects have no graph mode (a Keras 3 regularizer
on a TF1 layer's variable fails with `Invalid dtype: float32_ref`), Keras 2's do.

`tfm.legacy.slim` is tf-slim (TF1's `tf.contrib.slim` and the layer functions of
`tf.contrib.layers`, as Google moved them out of TF 1.15). Its `batch_norm` reaches TF's legacy
normalization layer through the module path `tf_keras.legacy_tf_layers.normalization`, which
tf-keras ships as `tf_keras.src.legacy_tf_layers.normalization`; the loader aliases that path.
`tfm.legacy.slim.metrics` holds `tf.contrib.metrics`' streaming metrics (`streaming_concat`,
`streaming_pearson_correlation`, ...). tf-slim reads some TF internals where TF <= 2.12 had them
(`control_flow_ops.cond`, `array_ops.stack`, `ops.Tensor`): the loader puts them back there.
`tfm.legacy.optimizers` is `tf.contrib.layers`' training helper module, which tf-slim kept as
`tf_slim.layers.optimizers`: `optimize_loss` (the optimizer by name, class, instance or function, a
`learning_rate` variable under the `OptimizeLoss` scope, decay, gradient noise, multipliers and
clipping, the UPDATE_OPS run first, its summaries), `adaptive_clipping_fn`, `OPTIMIZER_CLS_NAMES`.
`tfm.legacy.contrib_layers` is the package `tf_slim.layers`, where tf-slim kept the helper modules
TF1 programs imported from `tf.contrib.layers.python.layers` (`utils.collect_named_outputs`,
`regularizers`, `summaries`, ...).

`tfm.legacy.contrib_summary` is TF 1.15's `tf.contrib.summary`: the names it re-exported from
TensorFlow's `summary_ops_v2`, which current TF still has with the same signatures
(`scalar(name, tensor, family=None, step=None)`, `always_record_summaries()`,
`all_summary_ops()`...), as TPU programs' `host_call` functions use them (the hosted
TPUEstimator initializes and flushes their writers as TF1's did).

`tfm.legacy.crf` is TF 1.x's `tf.contrib.crf`, the linear-chain CRF (`crf_log_likelihood`,
`crf_decode`, ...), rebuilt on current TF in `runtime/crf.py`.

`tfm.legacy.fused_rnn` holds TF 1.x's `tf.contrib.rnn.LSTMBlockFusedCell` and
`TimeReversedFusedRNN` (`runtime/fused_rnn.py`, on current TF's `BlockLSTM` kernel).

`tfm.legacy.predictor` is TF 1.x's `tf.contrib.predictor.from_saved_model` (`runtime/predictor.py`:
a SavedModel loaded into a session of its own, called with a dict of inputs).

`tfm.legacy.contrib_deprecated` is TF 1.x's `tf.contrib.deprecated`: the pre-1.0 summary functions
(`scalar_summary(tags, values)`, `histogram_summary`, `image_summary`, `audio_summary`,
`merge_summary`, `merge_all_summaries`) it re-exported from TensorFlow's `logging_ops`, which
current TF still has unchanged: the tags stay as given (no name scope, several tags per op), unlike
`tf.compat.v1.summary.*`, which names the tag after the op.

tf_keras is imported on first attribute access, so `import tfmigrate.runtime` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "keras", "keras_v2", "layers", "rnn_cell", "tf1_layers", "tf1_rnn_cell", "slim", "optimizers", "contrib_layers", "contrib_summary",
    "contrib_deprecated", "crf", "fused_rnn", "predictor",
]

_MODULES = {
    "keras": "tf_keras.api._v1.keras",
    "keras_v2": "tf_keras.api._v2.keras",
    "layers": "tf_keras.api._v1.keras.__internal__.legacy.layers",
    "rnn_cell": "tf_keras.api._v1.keras.__internal__.legacy.rnn_cell",
    "slim": "tf_slim",
    "optimizers": "tf_slim.layers.optimizers",
    "contrib_layers": "tf_slim.layers",
}
# contrib.layers' modules (`tf.contrib.layers.python.layers.utils`, ...) as tf-slim kept them.
CONTRIB_LAYER_MODULES = ("utils", "summaries", "regularizers", "initializers", "normalization", "rev_block_lib", "sparse_ops")
# TF 1.x's tf.layers / tf.nn.rnn_cell: the same modules with TF 1.x's default initializers (`tf1_initializers.py`).
_TF1_MODULES = {"tf1_layers": "layers", "tf1_rnn_cell": "rnn_cell"}
_PACKAGES = {
    "keras": "tf-keras", "keras_v2": "tf-keras", "layers": "tf-keras", "rnn_cell": "tf-keras", "tf1_layers": "tf-keras", "tf1_rnn_cell": "tf-keras", "slim": "tf-slim",
    "optimizers": "tf-slim", "contrib_layers": "tf-slim",
}
# TF 1.15's tf.contrib.summary: these names of summary_ops_v2 (`all_summary_ops` under its v2 name).
_CONTRIB_SUMMARY = (
    "always_record_summaries", "audio", "create_db_writer", "create_file_writer", "eval_dir", "flush",
    "generic", "graph", "histogram", "image", "import_event", "initialize", "never_record_summaries",
    "record_summaries_every_n_global_steps", "scalar", "should_record_summaries", "summary_writer_initializer_op",
)


def _contrib_summary() -> Any:
    import types

    from tensorflow.python.ops import summary_ops_v2

    module = types.ModuleType(f"{__name__}.contrib_summary", "TF 1.15's tf.contrib.summary (see tfm.legacy).")
    module.__dict__.update({name: getattr(summary_ops_v2, name) for name in _CONTRIB_SUMMARY if hasattr(summary_ops_v2, name)})
    module.all_summary_ops = summary_ops_v2.all_v2_summary_ops
    return module


# TF 1.x's tf.contrib.deprecated: these functions of logging_ops.
CONTRIB_DEPRECATED = (
    "audio_summary", "histogram_summary", "image_summary", "merge_all_summaries", "merge_summary", "scalar_summary",
)


def _contrib_deprecated() -> Any:
    import types

    from tensorflow.python.ops import logging_ops

    module = types.ModuleType(f"{__name__}.contrib_deprecated", "TF 1.x's tf.contrib.deprecated (see tfm.legacy).")
    module.__dict__.update({name: getattr(logging_ops, name) for name in CONTRIB_DEPRECATED})
    return module


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
    if name in ("crf", "fused_rnn", "predictor"):
        module = importlib.import_module(f"{__package__}.{name}")
        globals()[name] = module
        return module
    if name == "contrib_summary":
        globals()[name] = module = _contrib_summary()
        return module
    if name == "contrib_deprecated":
        globals()[name] = module = _contrib_deprecated()
        return module
    if name not in _MODULES and name not in _TF1_MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        if name == "keras":
            from .tf1_initializers import tf1_keras

            globals()[name] = module = tf1_keras(f"{__name__}.{name}", _MODULES[name])
            return module
        if name in _TF1_MODULES:
            from .tf1_initializers import tf1_module

            globals()[name] = module = tf1_module(f"{__name__}.{name}", _MODULES[_TF1_MODULES[name]])
            return module
        if name in ("slim", "optimizers", "contrib_layers"):
            from ..proof import restore_moved_tf_names  # (proof.py, standard library only, is the oracle's too)

            _alias_legacy_tf_layers()
            restore_moved_tf_names()
        module = importlib.import_module(_MODULES[name])
        if name == "slim":
            importlib.import_module("tf_slim.nets")  # `slim.nets.inception...`, as contrib.slim had it
        if name == "contrib_layers":
            for submodule in CONTRIB_LAYER_MODULES:  # attributes of the package once imported
                importlib.import_module(f"{_MODULES[name]}.{submodule}")
    except ImportError as error:  # pragma: no cover - depends on the installation
        raise ImportError(
            f"tfm.legacy.{name} needs {_PACKAGES[name]} (TF1's legacy layers): pip install 'tfmigrate[runtime]'"
        ) from error
    globals()[name] = module
    return module


def __dir__() -> list[str]:
    return sorted(__all__)
