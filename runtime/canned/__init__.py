"""TF1's canned estimators as compiled Keras 3 models: same hyper-parameters, numbers and names.

`DNNClassifier`/`DNNRegressor`, `LinearClassifier`/`LinearRegressor`,
`DNNLinearCombinedClassifier`/`Regressor` (wide & deep) and `BaselineClassifier`/`Regressor`
build a `CannedModel`: the estimator's logits (from `feature_columns.InputLayer`/`LinearModel`
and Dense layers named as the estimator's variable scopes), its head (loss, predictions and
evaluation metrics) and its optimizer(s). Train, evaluate and predict it with the runtime's
`fit`/`evaluate`/`predict_examples`, which keep Estimator's steps and checkpoints.

What the original reported is reproduced, per API flavour (`api="v1"` for
`tf.compat.v1.estimator.*`, `"v2"` for `tf.estimator.*` in TF 2.x):

  * Loss: the head's training loss with `loss_reduction` (v1 default: the batch SUM; v2:
    SUM_OVER_BATCH_SIZE, the mean). `evaluate` reports `loss` as Estimator did (the unweighted mean
    over batches of that loss), `average_loss` (the weighted mean per example) and `global_step`.
  * Metrics, keyed as the heads keyed them: multi-class `accuracy`; binary also `precision`,
    `recall`, `auc`, `auc_precision_recall`, `label/mean`, `prediction/mean`,
    `accuracy_baseline`; regression `label/mean`, `prediction/mean`. v1 heads computed AUCs
    with `tf.compat.v1.metrics.auc` (trapezoidal), v2 heads with Keras's AUC (interpolation).
  * Predictions: `logits`, `logistic` (binary), `probabilities`, `class_ids`, `classes`,
    `all_class_ids`, `all_classes`; regression `predictions`.
  * Optimizers: names (`'Adagrad'`, `'Adam'`, `'Ftrl'`, `'RMSProp'`, `'SGD'`) with each class's
    default learning rate (DNN 0.05; Linear 0.2, or `min(0.2, 1/sqrt(#columns))` when
    `optimizer=None`; Baseline 0.3; wide & deep DNN 0.001 and linear `min(0.005,
    1/sqrt(#linear columns))`), instances or callables. v1 names mean TF1 optimizers (Adagrad
    without epsilon, the runtime's Adam and RMSProp); v2 names mean Keras 2's (Adagrad with
    epsilon 1e-7 outside the square root: `LegacyAdagrad`).
  * Checkpoints: `load_tf1_checkpoint` maps the estimator's variable names (`dnn/hiddenlayer_0/
    kernel`, `linear/linear_model/<column>/weights`, `baseline/bias`, ...) and slots (v1
    `<var>/Adagrad`, `<var>/t_0/Adagrad`, `<var>/part_0/Ftrl`; v2 `training/Adagrad/<var>/
    accumulator`) onto the model, so training continues from an Estimator's `model_dir`.

`BoostedTreesClassifier`/`Regressor` have no faithful Keras form; use TensorFlow Decision Forests
(`tfdf.keras.GradientBoostedTreesModel`), a different algorithm that will not reproduce TF1's trees.

The package: `optimizers` (names and defaults), `heads` (loss, predictions, metrics), `model`
(`CannedModel`, its BatchNormalization and TF1 checkpoint loading), and here the estimator-named
builders.
"""

from __future__ import annotations

import math
from typing import Any

import tensorflow as tf

from .. import tf1_checkpoint
from .heads import Head
from .model import BatchNormalization, CannedModel
from .optimizers import LegacyAdagrad, LegacyRMSprop, get_optimizer

keras = tf.keras

__all__ = [
    "BaselineClassifier",
    "BaselineRegressor",
    "CannedModel",
    "DNNClassifier",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LegacyAdagrad",
    "LegacyRMSprop",
    "LinearClassifier",
    "LinearRegressor",
]


# -- the estimator-named builders ------------------------------------------------------------------


def _compile(model: CannedModel, optimizers: dict[str, Any], steps_per_execution: int) -> CannedModel:
    model.set_optimizers(optimizers)
    model.compile(optimizer=optimizers[model.parts[0]], steps_per_execution=steps_per_execution, jit_compile=False)
    return model


def _warm_start(model: CannedModel, warm_start_from: Any) -> None:
    if warm_start_from is None:
        return
    path = getattr(warm_start_from, "ckpt_to_initialize_from", warm_start_from)
    # TF1 WarmStartSettings' default: every trainable variable, no optimizer slots, no global step.
    tf1_checkpoint.init_from_checkpoint(model, path, {"/": "/"})


def check_api(api: str) -> str:
    if api not in ("v1", "v2"):
        raise ValueError(f"`api` must be 'v1' (tf.compat.v1.estimator) or 'v2' (tf.estimator), got {api!r}")
    return api


def _dnn(hidden_units, feature_columns, activation_fn, dropout, batch_norm) -> dict:
    if not hidden_units:
        raise ValueError("hidden_units must be a non-empty list of layer sizes")
    if dropout is not None and not 0 <= dropout < 1:
        raise ValueError(f"dropout must be in [0, 1), got {dropout}")
    return {
        "hidden_units": list(hidden_units),
        "feature_columns": feature_columns,
        "activation_fn": activation_fn if activation_fn is not None else tf.nn.relu,
        "dropout": dropout,
        "batch_norm": bool(batch_norm),
    }


def _dnn_rate(api: str) -> float | None:
    # v1 `get_optimizer_instance(name, learning_rate=0.05)`; v2 `get_optimizer_instance_v2(name)`
    # passes no rate, so the Keras optimizer's own default (Adagrad: 0.001) applies.
    return 0.05 if api == "v1" else None


def DNNClassifier(
    hidden_units,
    feature_columns,
    n_classes=2,
    weight_column=None,
    label_vocabulary=None,
    optimizer="Adagrad",
    activation_fn=tf.nn.relu,
    dropout=None,
    loss_reduction=None,
    batch_norm=False,
    warm_start_from=None,
    *,
    api="v2",
    steps_per_execution=1,
    model_dir=None,
    config=None,
) -> CannedModel:
    """`tf.estimator.DNNClassifier` (`api="v2"`) / `tf.compat.v1.estimator.DNNClassifier` (`"v1"`)."""
    api = check_api(api)
    head = Head("classifier", api=api, n_classes=n_classes, weight_column=weight_column,
                 label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
    model = CannedModel(head, api=api, dnn=_dnn(hidden_units, feature_columns, activation_fn, dropout, batch_norm))
    _warm_start(model, warm_start_from)
    return _compile(model, {"dnn": get_optimizer(optimizer, _dnn_rate(api), api)}, steps_per_execution)


def DNNRegressor(
    hidden_units,
    feature_columns,
    label_dimension=1,
    weight_column=None,
    optimizer="Adagrad",
    activation_fn=tf.nn.relu,
    dropout=None,
    loss_reduction=None,
    batch_norm=False,
    warm_start_from=None,
    *,
    api="v2",
    steps_per_execution=1,
    model_dir=None,
    config=None,
) -> CannedModel:
    """`tf.estimator.DNNRegressor` / `tf.compat.v1.estimator.DNNRegressor`."""
    api = check_api(api)
    head = Head("regressor", api=api, label_dimension=label_dimension, weight_column=weight_column,
                 loss_reduction=loss_reduction)
    model = CannedModel(head, api=api, dnn=_dnn(hidden_units, feature_columns, activation_fn, dropout, batch_norm))
    _warm_start(model, warm_start_from)
    return _compile(model, {"dnn": get_optimizer(optimizer, _dnn_rate(api), api)}, steps_per_execution)


def _linear_optimizer(optimizer, feature_columns, api):
    if optimizer is None:
        # TF1's `_get_default_optimizer`: only when `optimizer` is None (the 'Ftrl' default name
        # gets the class's 0.2).
        return get_optimizer("Ftrl", min(0.2, 1.0 / math.sqrt(len(list(feature_columns)))), api)
    return get_optimizer(optimizer, 0.2, api)


def LinearClassifier(
    feature_columns,
    n_classes=2,
    weight_column=None,
    label_vocabulary=None,
    optimizer="Ftrl",
    loss_reduction=None,
    sparse_combiner="sum",
    warm_start_from=None,
    *,
    api="v2",
    steps_per_execution=1,
    model_dir=None,
    config=None,
) -> CannedModel:
    """`tf.estimator.LinearClassifier` / `tf.compat.v1.estimator.LinearClassifier`."""
    api = check_api(api)
    head = Head("classifier", api=api, n_classes=n_classes, weight_column=weight_column,
                 label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
    model = CannedModel(head, api=api, linear={"feature_columns": feature_columns, "sparse_combiner": sparse_combiner})
    _warm_start(model, warm_start_from)
    return _compile(model, {"linear": _linear_optimizer(optimizer, feature_columns, api)}, steps_per_execution)


def LinearRegressor(
    feature_columns,
    label_dimension=1,
    weight_column=None,
    optimizer="Ftrl",
    loss_reduction=None,
    sparse_combiner="sum",
    warm_start_from=None,
    *,
    api="v2",
    steps_per_execution=1,
    model_dir=None,
    config=None,
) -> CannedModel:
    """`tf.estimator.LinearRegressor` / `tf.compat.v1.estimator.LinearRegressor`."""
    api = check_api(api)
    head = Head("regressor", api=api, label_dimension=label_dimension, weight_column=weight_column,
                 loss_reduction=loss_reduction)
    model = CannedModel(head, api=api, linear={"feature_columns": feature_columns, "sparse_combiner": sparse_combiner})
    _warm_start(model, warm_start_from)
    return _compile(model, {"linear": _linear_optimizer(optimizer, feature_columns, api)}, steps_per_execution)


def _combined(kind, linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
              dnn_activation_fn, dnn_dropout, batch_norm, linear_sparse_combiner, head, api, warm_start_from,
              steps_per_execution):
    linear_feature_columns = list(linear_feature_columns or [])
    dnn_feature_columns = list(dnn_feature_columns or [])
    if not linear_feature_columns and not dnn_feature_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
    dnn = None
    if dnn_feature_columns:
        if not dnn_hidden_units:
            raise ValueError(f"dnn_hidden_units must be defined when dnn_feature_columns is specified. dnn_feature_columns: {dnn_feature_columns}")
        dnn = _dnn(dnn_hidden_units, dnn_feature_columns, dnn_activation_fn, dnn_dropout, batch_norm)
    linear = {"feature_columns": linear_feature_columns, "sparse_combiner": linear_sparse_combiner} if linear_feature_columns else None
    model = CannedModel(head, api=api, dnn=dnn, linear=linear)
    optimizers = {}
    if dnn is not None:
        optimizers["dnn"] = get_optimizer(dnn_optimizer, 0.001, api)
    if linear is not None:
        rate = min(0.005, 1.0 / math.sqrt(len(linear_feature_columns)))
        optimizers["linear"] = get_optimizer(linear_optimizer, rate, api)
    _warm_start(model, warm_start_from)
    return _compile(model, optimizers, steps_per_execution)


def DNNLinearCombinedClassifier(
    linear_feature_columns=None,
    linear_optimizer="Ftrl",
    dnn_feature_columns=None,
    dnn_optimizer="Adagrad",
    dnn_hidden_units=None,
    dnn_activation_fn=tf.nn.relu,
    dnn_dropout=None,
    n_classes=2,
    weight_column=None,
    label_vocabulary=None,
    loss_reduction=None,
    batch_norm=False,
    linear_sparse_combiner="sum",
    warm_start_from=None,
    *,
    api="v2",
    steps_per_execution=1,
    model_dir=None,
    config=None,
) -> CannedModel:
    """`tf.estimator.DNNLinearCombinedClassifier` (wide & deep) / its `tf.compat.v1` form."""
    api = check_api(api)
    head = Head("classifier", api=api, n_classes=n_classes, weight_column=weight_column,
                 label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
    return _combined("classifier", linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer,
                     dnn_hidden_units, dnn_activation_fn, dnn_dropout, batch_norm, linear_sparse_combiner, head, api,
                     warm_start_from, steps_per_execution)


def DNNLinearCombinedRegressor(
    linear_feature_columns=None,
    linear_optimizer="Ftrl",
    dnn_feature_columns=None,
    dnn_optimizer="Adagrad",
    dnn_hidden_units=None,
    dnn_activation_fn=tf.nn.relu,
    dnn_dropout=None,
    label_dimension=1,
    weight_column=None,
    loss_reduction=None,
    batch_norm=False,
    linear_sparse_combiner="sum",
    warm_start_from=None,
    *,
    api="v2",
    steps_per_execution=1,
    model_dir=None,
    config=None,
) -> CannedModel:
    """`tf.estimator.DNNLinearCombinedRegressor` (wide & deep) / its `tf.compat.v1` form."""
    api = check_api(api)
    head = Head("regressor", api=api, label_dimension=label_dimension, weight_column=weight_column,
                 loss_reduction=loss_reduction)
    return _combined("regressor", linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer,
                     dnn_hidden_units, dnn_activation_fn, dnn_dropout, batch_norm, linear_sparse_combiner, head, api,
                     warm_start_from, steps_per_execution)


def BaselineClassifier(
    n_classes=2,
    weight_column=None,
    label_vocabulary=None,
    optimizer="Ftrl",
    loss_reduction=None,
    *,
    api="v2",
    steps_per_execution=1,
    model_dir=None,
    config=None,
) -> CannedModel:
    """`tf.estimator.BaselineClassifier`: a learned bias only (the class prior)."""
    api = check_api(api)
    head = Head("classifier", api=api, n_classes=n_classes, weight_column=weight_column,
                 label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
    model = CannedModel(head, api=api, baseline=True)
    return _compile(model, {"baseline": get_optimizer(optimizer, 0.3, api)}, steps_per_execution)


def BaselineRegressor(
    label_dimension=1,
    weight_column=None,
    optimizer="Ftrl",
    loss_reduction=None,
    *,
    api="v2",
    steps_per_execution=1,
    model_dir=None,
    config=None,
) -> CannedModel:
    """`tf.estimator.BaselineRegressor`: a learned bias only (the label mean)."""
    api = check_api(api)
    head = Head("regressor", api=api, label_dimension=label_dimension, weight_column=weight_column,
                 loss_reduction=loss_reduction)
    model = CannedModel(head, api=api, baseline=True)
    return _compile(model, {"baseline": get_optimizer(optimizer, 0.3, api)}, steps_per_execution)
