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
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Sequence

import numpy as np
import tensorflow as tf

from . import feature_columns as fc
from . import losses as tf1_losses
from . import metrics as tf1_metrics
from . import optimizers as tf1_optimizers

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

_REDUCTIONS = {
    "weighted_sum": tf1_losses.Reduction.SUM,
    "sum": tf1_losses.Reduction.SUM,
    "weighted_sum_over_batch_size": tf1_losses.Reduction.SUM_OVER_BATCH_SIZE,
    "sum_over_batch_size": tf1_losses.Reduction.SUM_OVER_BATCH_SIZE,
    "auto": tf1_losses.Reduction.SUM_OVER_BATCH_SIZE,
    "weighted_mean": tf1_losses.Reduction.MEAN,
    "weighted_sum_by_nonzero_weights": tf1_losses.Reduction.SUM_BY_NONZERO_WEIGHTS,
}


def _reduction(value: Any, api: str) -> str:
    if value is None:
        return tf1_losses.Reduction.SUM if api == "v1" else tf1_losses.Reduction.SUM_OVER_BATCH_SIZE
    key = str(getattr(value, "value", value)).lower()
    if key not in _REDUCTIONS:
        raise ValueError(f"Invalid loss_reduction: {value!r} (one of {sorted(_REDUCTIONS)})")
    return _REDUCTIONS[key]


# -- optimizers ----------------------------------------------------------------------------------


class LegacyAdagrad(keras.optimizers.Adagrad):
    """Keras 2's (`tf.keras.optimizers.legacy.Adagrad`, what a v2 canned estimator's 'Adagrad' was):
    `var -= lr * g / (sqrt(acc) + epsilon)`; Keras 3's puts epsilon inside the square root."""

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kwargs):
        kwargs.setdefault("name", "adagrad")
        super().__init__(
            learning_rate=learning_rate, initial_accumulator_value=initial_accumulator_value, epsilon=epsilon, **kwargs
        )

    def update_step(self, gradient, variable, learning_rate):
        lr = tf.cast(learning_rate, variable.dtype)
        gradient = tf.cast(gradient, variable.dtype)
        accumulator = self._accumulators[self._get_variable_index(variable)]
        self.assign_add(accumulator, tf.square(gradient))
        self.assign_sub(variable, lr * gradient / (tf.sqrt(accumulator) + self.epsilon))


class LegacyRMSprop(keras.optimizers.RMSprop):
    """Keras 2's (`tf.keras.optimizers.legacy.RMSprop`, what a v2 canned estimator's 'RMSProp' was)
    without momentum and not centered: `rms = rho * rms + (1 - rho) * g^2`,
    `var -= lr * g / (sqrt(rms) + epsilon)`; Keras 3's puts epsilon inside the square root.
    With momentum or centered it is Keras 3's (TF's fused RMSProp kernels, which Keras 2 used
    there, put epsilon inside too)."""

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **kwargs):
        kwargs.setdefault("name", "rmsprop")
        super().__init__(
            learning_rate=learning_rate, rho=rho, momentum=momentum, epsilon=epsilon, centered=centered, **kwargs
        )

    def update_step(self, gradient, variable, learning_rate):
        if self.momentum > 0 or self.centered:
            return super().update_step(gradient, variable, learning_rate)
        lr = tf.cast(learning_rate, variable.dtype)
        gradient = tf.cast(gradient, variable.dtype)
        rms = self._velocities[self._get_variable_index(variable)]
        self.assign(rms, self.rho * rms + (1.0 - self.rho) * tf.square(gradient))
        self.assign_sub(variable, lr * gradient / (tf.sqrt(tf.convert_to_tensor(rms)) + self.epsilon))


def _named_optimizer(name: str, learning_rate: float | None, api: str) -> keras.optimizers.Optimizer:
    if api == "v1":
        table: dict[str, Callable[[float], Any]] = {
            "Adagrad": lambda lr: keras.optimizers.Adagrad(learning_rate=lr, initial_accumulator_value=0.1, epsilon=0.0),
            "Adam": lambda lr: tf1_optimizers.Adam(learning_rate=lr),
            "Ftrl": lambda lr: keras.optimizers.Ftrl(learning_rate=lr),
            "RMSProp": lambda lr: tf1_optimizers.RMSProp(learning_rate=lr),
            "SGD": lambda lr: keras.optimizers.SGD(learning_rate=lr),
        }
    else:
        table = {
            "Adagrad": lambda lr: LegacyAdagrad(learning_rate=lr),
            "Adam": lambda lr: keras.optimizers.Adam(learning_rate=lr, epsilon=1e-7),
            "Ftrl": lambda lr: keras.optimizers.Ftrl(learning_rate=lr),
            "RMSProp": lambda lr: LegacyRMSprop(learning_rate=lr),
            "SGD": lambda lr: keras.optimizers.SGD(learning_rate=lr),
        }
    if name not in table:
        raise ValueError(f"Unsupported optimizer name: {name}. Supported names are: {tuple(sorted(table))}")
    if learning_rate is None:
        # v2 `get_optimizer_instance_v2(name)` without a rate: the Keras 2 class's default.
        learning_rate = _KERAS2_DEFAULT_RATES[name]
    return table[name](learning_rate)


# Keras 2's (legacy) optimizers' default learning rates.
_KERAS2_DEFAULT_RATES = {"Adagrad": 0.001, "Adam": 0.001, "Ftrl": 0.001, "RMSProp": 0.001, "SGD": 0.01}


def get_optimizer(optimizer: Any, learning_rate: float | None, api: str) -> keras.optimizers.Optimizer:
    """A canned estimator's `optimizer` argument as a Keras 3 optimizer (see the module docstring).

    Args:
      optimizer: a name, a Keras optimizer, or a callable returning one.
      learning_rate: the estimator class's learning rate for a name (None: the Keras 2 class's
        default, as TF 2.15's v2 DNN estimators did).
      api: "v1" or "v2".
    """
    if isinstance(optimizer, str):
        return _named_optimizer(optimizer, learning_rate, api)
    if callable(optimizer) and not isinstance(optimizer, keras.optimizers.Optimizer):
        optimizer = optimizer()
    if not isinstance(optimizer, keras.optimizers.Optimizer):
        raise ValueError(
            f"The given object is not a Keras optimizer instance (migrate TF1 optimizers with tfmigrate). Given: {optimizer}"
        )
    if api == "v2" and type(optimizer) is keras.optimizers.Adagrad:
        # TF 2.15 converted it to the legacy Adagrad, whose epsilon is outside the square root.
        config = optimizer.get_config()
        rate = optimizer._learning_rate  # noqa: SLF001 (keeps a schedule)
        if not isinstance(rate, keras.optimizers.schedules.LearningRateSchedule) and not callable(rate):
            rate = float(np.asarray(rate))  # a float rate, which Keras 3 holds in a variable
        return LegacyAdagrad(
            learning_rate=rate,
            initial_accumulator_value=config["initial_accumulator_value"],
            epsilon=config["epsilon"],
        )
    return optimizer


# -- heads ---------------------------------------------------------------------------------------


class _Head:
    """The loss, predictions and metrics of a canned head (`canned/head.py`, `head/*.py`)."""

    def __init__(
        self,
        kind: str,
        *,
        api: str,
        n_classes: int = 2,
        label_dimension: int = 1,
        weight_column: Any = None,
        label_vocabulary: Sequence[str] | None = None,
        loss_reduction: Any = None,
    ) -> None:
        if kind == "classifier" and (n_classes is None or n_classes < 2):
            raise ValueError(f"n_classes must be > 1 for classification: {n_classes}")
        self.kind = kind
        self.api = api
        self.n_classes = int(n_classes)
        self.label_dimension = int(label_dimension)
        self.reduction = _reduction(loss_reduction, api)
        if isinstance(weight_column, str):
            weight_column = fc.numeric_column(weight_column)
        self.weight_column = weight_column
        self.label_vocabulary = tuple(label_vocabulary) if label_vocabulary else None
        if self.label_vocabulary is not None:
            if len(self.label_vocabulary) != self.n_classes:
                raise ValueError(
                    f"label_vocabulary does not have n_classes ({self.n_classes}) entries: {self.label_vocabulary}"
                )
            self._table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    tf.constant(self.label_vocabulary), tf.range(len(self.label_vocabulary), dtype=tf.int64)
                ),
                default_value=-1,
            )

    @property
    def binary(self) -> bool:
        return self.kind == "classifier" and self.n_classes == 2

    @property
    def logits_dimension(self) -> int:
        if self.kind == "regressor":
            return self.label_dimension
        return 1 if self.binary else self.n_classes

    def labels(self, labels: Any) -> tf.Tensor:
        labels = tf.convert_to_tensor(labels)
        if labels.shape.rank == 1:
            labels = tf.expand_dims(labels, -1)
        if self.kind == "regressor":
            return tf.cast(labels, tf.float32)
        if self.label_vocabulary is not None:
            labels = self._table.lookup(labels)
        return tf.cast(labels, tf.float32 if self.binary else tf.int64)

    def unreduced_loss(self, labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        if self.kind == "regressor":
            return tf.math.squared_difference(logits, labels)
        if self.binary:
            return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.squeeze(labels, -1), logits=logits)
        return tf.expand_dims(loss, -1)

    def weights(self, features: dict, like: tf.Tensor) -> tf.Tensor:
        if self.weight_column is None:
            return tf.ones([tf.shape(like)[0], 1], tf.float32)
        return tf.reshape(self.weight_column.value(features), [-1, 1])

    def training_loss(self, unreduced: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
        return tf1_losses.compute_weighted_loss(unreduced, weights=weights, reduction=self.reduction)

    def predictions(self, logits: tf.Tensor) -> dict[str, tf.Tensor]:
        if self.kind == "regressor":
            return {"predictions": logits}
        batch = tf.shape(logits)[0]
        out = {"logits": logits}
        if self.binary:
            out["logistic"] = tf.sigmoid(logits)
            two_class_logits = tf.concat([tf.zeros_like(logits), logits], axis=-1)
            out["probabilities"] = tf.nn.softmax(two_class_logits)
            class_ids = tf.argmax(two_class_logits, axis=-1)
        else:
            out["probabilities"] = tf.nn.softmax(logits)
            class_ids = tf.argmax(logits, axis=-1)
        out["class_ids"] = tf.expand_dims(class_ids, -1)
        if self.label_vocabulary is not None:
            names = tf.constant(self.label_vocabulary)
        else:
            names = tf.strings.as_string(tf.range(self.n_classes))
        out["classes"] = tf.gather(names, out["class_ids"])
        out["all_class_ids"] = tf.tile(tf.expand_dims(tf.range(self.n_classes), 0), [batch, 1])
        out["all_classes"] = tf.tile(tf.expand_dims(names, 0), [batch, 1])
        return out

    def metrics(self) -> dict[str, keras.metrics.Metric]:
        metrics: dict[str, keras.metrics.Metric] = {"loss": tf1_metrics.Mean(name="loss"), "average_loss": tf1_metrics.Mean(name="average_loss")}
        if self.kind == "regressor":
            metrics["label/mean"] = tf1_metrics.Mean(name="label_mean")
            metrics["prediction/mean"] = tf1_metrics.Mean(name="prediction_mean")
            return metrics
        metrics["accuracy"] = tf1_metrics.Accuracy(name="accuracy")
        if self.binary:
            metrics["precision"] = tf1_metrics.Precision(name="precision")
            metrics["recall"] = tf1_metrics.Recall(name="recall")
            metrics["prediction/mean"] = tf1_metrics.Mean(name="prediction_mean")
            metrics["label/mean"] = tf1_metrics.Mean(name="label_mean")
            if self.api == "v1":
                metrics["auc"] = tf1_metrics.AUC(name="auc")
                metrics["auc_precision_recall"] = tf1_metrics.AUC(curve="PR", name="auc_precision_recall")
            else:
                metrics["auc"] = keras.metrics.AUC(name="auc")
                metrics["auc_precision_recall"] = keras.metrics.AUC(curve="PR", name="auc_precision_recall")
        return metrics

    def update_metrics(self, metrics, labels, logits, unreduced, weights, training_loss) -> None:
        metrics["loss"].update_state(training_loss)
        metrics["average_loss"].update_state(unreduced, weights=weights)
        if self.kind == "regressor":
            metrics["label/mean"].update_state(labels, weights=weights)
            metrics["prediction/mean"].update_state(logits, weights=weights)
            return
        predictions = self.predictions(logits)
        class_ids = predictions["class_ids"]
        metrics["accuracy"].update_state(labels, class_ids, weights=weights)
        if self.binary:
            metrics["precision"].update_state(labels, class_ids, weights=weights)
            metrics["recall"].update_state(labels, class_ids, weights=weights)
            metrics["prediction/mean"].update_state(predictions["logistic"], weights=weights)
            metrics["label/mean"].update_state(labels, weights=weights)
            for key in ("auc", "auc_precision_recall"):
                if self.api == "v1":
                    metrics[key].update_state(labels, predictions["logistic"], weights=weights)
                else:
                    metrics[key].update_state(labels, predictions["logistic"], sample_weight=weights)

    def results(self, metrics) -> dict[str, tf.Tensor]:
        out = {key: metric.result() for key, metric in metrics.items()}
        if self.binary:
            mean = out["label/mean"]
            out["accuracy_baseline"] = tf.maximum(mean, 1.0 - mean)
        return out


# -- the model -----------------------------------------------------------------------------------


class BatchNormalization(keras.layers.Layer):
    """The canned DNN's `batch_norm=True` layer: Keras 2's non-fused BatchNormalization on 2-D input
    (`tf.nn.moments`, `tf.nn.batch_normalization`, moving averages by `var -= (var - value) * (1 -
    momentum)`), momentum 0.999 and epsilon 0.001. Keras 3's computes the variance as
    `E[x^2] - E[x]^2` and normalises in another order (measured: 2.6e-6 relative after 30 Adagrad
    steps with Keras 3's layer). With this layer Adagrad matches TF 2.15; Adam does not, because
    the bias of a hidden unit whose ReLU is always on gets a rounding-noise gradient (zero in exact
    arithmetic) that Adam scales to full steps (see README, TFM401)."""

    def __init__(self, momentum=0.999, epsilon=0.001, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.epsilon = epsilon

    def build(self, input_shape):
        dim = int(input_shape[-1])
        self.gamma = self.add_weight(name="gamma", shape=(dim,), initializer="ones")
        self.beta = self.add_weight(name="beta", shape=(dim,), initializer="zeros")
        self.moving_mean = self.add_weight(name="moving_mean", shape=(dim,), initializer="zeros", trainable=False)
        self.moving_variance = self.add_weight(name="moving_variance", shape=(dim,), initializer="ones", trainable=False)
        self.built = True

    def call(self, inputs, training=False):
        if training:
            mean, variance = tf.nn.moments(inputs, axes=[0], keepdims=False)
            decay = tf.constant(1.0 - self.momentum, tf.float32)
            for variable, value in ((self.moving_mean, mean), (self.moving_variance, variance)):
                variable.assign_sub((tf.convert_to_tensor(variable) - value) * decay)
        else:
            mean, variance = self.moving_mean, self.moving_variance
        return tf.nn.batch_normalization(inputs, mean, variance, self.beta, self.gamma, self.epsilon)



_V2_SLOTS = {
    "Adagrad": "accumulator",
    "Ftrl": "accumulator",
    "Ftrl_1": "linear",
    "Adam": "m",
    "Adam_1": "v",
    "Momentum": "momentum",
    "RMSProp": "rms",
    "RMSProp_1": "momentum",
}


class CannedModel(keras.Model):
    """A canned estimator as a Keras model (build it with the estimator-named functions below).

    `call` returns the logits; `train_step` minimises the head's training loss with each part's
    optimizer (DNN and linear parts have their own in wide & deep; the first one's `iterations`
    is the global step); `test_step` reports the head's metrics as `evaluate` keys them;
    `predict_step` returns the head's predictions dict.
    """

    def __init__(
        self,
        head: _Head,
        *,
        api: str,
        dnn: dict | None = None,
        linear: dict | None = None,
        baseline: bool = False,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        self.head = head
        self.api = api
        self.parts: list[str] = []
        units = head.logits_dimension
        self._tf1: dict[str, Any] = {}
        self._part_variables: dict[str, list[Any]] = {}
        if dnn is not None:
            self.parts.append("dnn")
            self.dnn_input = fc.InputLayer(dnn["feature_columns"], name="input_layer")
            width = self.dnn_input.output_dim
            names = fc.scoped_tf1_names("dnn/input_from_feature_columns/input_layer", self.dnn_input.tf1_names)
            if api == "v1":
                # A v2 shared table is created in the variable scope of its first use: a v1 DNN's
                # `dnn/input_from_feature_columns` (a v2 DNN, a Keras model, has none).
                absolute = {k[1:] for k in self.dnn_input.tf1_names if k.startswith("/")}
                names = {(f"dnn/input_from_feature_columns/{k}" if k in absolute else k): v for k, v in names.items()}
            self.hidden = []
            self.dropouts = []
            self.batch_norms = []
            for index, size in enumerate(dnn["hidden_units"]):
                layer = keras.layers.Dense(size, activation=dnn["activation_fn"], name=f"hiddenlayer_{index}")
                layer.build((None, width))
                width = size
                self.hidden.append(layer)
                names[f"dnn/hiddenlayer_{index}/kernel"] = layer.kernel
                names[f"dnn/hiddenlayer_{index}/bias"] = layer.bias
                if dnn["dropout"] is not None:
                    self.dropouts.append(keras.layers.Dropout(dnn["dropout"]))
                if dnn["batch_norm"]:
                    norm = BatchNormalization(momentum=0.999, epsilon=0.001, name=f"batchnorm_{index}")
                    norm.build((None, size))
                    self.batch_norms.append(norm)
                    scope = f"dnn/hiddenlayer_{index}/batchnorm_{index}"
                    names[f"{scope}/gamma"] = norm.gamma
                    names[f"{scope}/beta"] = norm.beta
                    names[f"{scope}/moving_mean"] = norm.moving_mean
                    names[f"{scope}/moving_variance"] = norm.moving_variance
            self.dnn_logits = keras.layers.Dense(units, name="logits")
            self.dnn_logits.build((None, width))
            names["dnn/logits/kernel"] = self.dnn_logits.kernel
            names["dnn/logits/bias"] = self.dnn_logits.bias
            self._tf1.update(names)
            # TF 2.15's v2 DNN trained its Keras model's variables only: a v2 shared embedding table
            # (`tf.feature_column.shared_embeddings`, created outside that model) kept its
            # initial values and had no optimizer slot.
            untrained = {id(v) for k, v in self.dnn_input.tf1_names.items() if k.startswith("/")} if api == "v2" else set()
            self._part_variables["dnn"] = [v for v in names.values() if id(v) not in untrained]
        if linear is not None:
            self.parts.append("linear")
            self.linear_model = fc.LinearModel(
                linear["feature_columns"], units=units, sparse_combiner=linear["sparse_combiner"], name="linear_model"
            )
            names = fc.scoped_tf1_names("linear/linear_model", self.linear_model.tf1_names)
            self._tf1.update(names)
            self._part_variables["linear"] = list(names.values())
        if baseline:
            self.parts.append("baseline")
            self.baseline_bias = self.add_weight(name="bias", shape=(units,), initializer="zeros")
            self._tf1["baseline/bias"] = self.baseline_bias
            self._part_variables["baseline"] = [self.baseline_bias]
        self._eval_metrics = head.metrics()
        self.part_optimizers: dict[str, Any] = {}
        self.built = True

    # -- forward -----------------------------------------------------------------------------

    def call(self, features, training=False):
        if not isinstance(features, dict):
            raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
        logits = None
        if "dnn" in self.parts:
            net = self.dnn_input(features)
            for index, layer in enumerate(self.hidden):
                net = layer(net)
                if self.dropouts and training:
                    net = self.dropouts[index](net, training=True)
                if self.batch_norms:
                    net = self.batch_norms[index](net, training=training)
            logits = self.dnn_logits(net)
        if "linear" in self.parts:
            linear_logits = self.linear_model(features)
            logits = linear_logits if logits is None else logits + linear_logits
        if "baseline" in self.parts:
            some = next(iter(features.values())) if features else None
            if isinstance(some, tf.SparseTensor):
                batch = some.dense_shape[0]
            elif some is not None:
                batch = tf.shape(some)[0]
            else:
                raise ValueError("BaselineClassifier/Regressor need at least one feature to know the batch size")
            logits = tf.tile(tf.expand_dims(tf.convert_to_tensor(self.baseline_bias), 0), [batch, 1])
        return logits

    # -- steps -------------------------------------------------------------------------------

    def set_optimizers(self, optimizers: dict[str, Any]) -> None:
        """The optimizer of each part (`dnn`, `linear`, `baseline`); the first is `model.optimizer`."""
        self.part_optimizers = dict(optimizers)
        for part, optimizer in self.part_optimizers.items():
            if part != self.parts[0]:
                setattr(self, f"{part}_optimizer", optimizer)

    def checkpointed_optimizers(self) -> list[Any]:
        """Every part's optimizer (`model.optimizer` first), each built on its part's trainable
        variables: what the model's checkpoints hold besides the model (`checkpoints.weights_from`
        snapshots them all)."""
        found = []
        for part in self.parts:
            optimizer = self.optimizer if part == self.parts[0] else self.part_optimizers.get(part)
            if optimizer is None:
                continue
            if not optimizer.built:
                optimizer.build([v for v in self._part_variables[part] if v.trainable])
            found.append(optimizer)
        return found

    def _head_losses(self, data, training):
        features, labels, _ = keras.utils.unpack_x_y_sample_weight(data)
        logits = self(features, training=training)
        labels = self.head.labels(labels)
        unreduced = self.head.unreduced_loss(labels, logits)
        weights = self.head.weights(features, unreduced)
        return labels, logits, unreduced, weights, self.head.training_loss(unreduced, weights)

    def train_step(self, data):
        with tf.GradientTape() as tape:
            _, _, _, _, loss = self._head_losses(data, training=True)
            scaled = tf1_losses.scale_loss_for_replicas(loss)
        # One gradient computation; each part's optimizer applies its share (TF1 grouped the
        # DNN's and the linear model's train ops).
        everything = [(part, v) for part in self.parts for v in self._part_variables[part] if v.trainable]
        gradients = tape.gradient(scaled, [v for _, v in everything])
        for part in self.parts:
            optimizer = self.optimizer if part == self.parts[0] else self.part_optimizers[part]
            pairs = [(g, v) for (p, v), g in zip(everything, gradients) if p == part]
            optimizer.apply_gradients(zip(_for_optimizer([g for g, _ in pairs], optimizer), [v for _, v in pairs]))
        return {"loss": loss}

    @property
    def metrics(self):
        return list(self._eval_metrics.values())

    def update_eval_metrics(self, data):
        """Updates the head's evaluation metrics with one batch; returns the batch's training loss."""
        labels, logits, unreduced, weights, loss = self._head_losses(data, training=False)
        self.head.update_metrics(self._eval_metrics, labels, logits, unreduced, weights, loss)
        return loss

    def eval_results(self):
        """The head's evaluation metrics keyed as the estimator's `evaluate` keyed them."""
        return self.head.results(self._eval_metrics)

    def test_step(self, data):
        self.update_eval_metrics(data)
        return self.eval_results()

    def predict_step(self, data):
        features, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        return self.head.predictions(self(features, training=False))

    # -- TF1 checkpoints ---------------------------------------------------------------------

    def tf1_variable_names(self) -> dict[str, Any]:
        """TF1 name -> variable, as the canned estimator named its variables."""
        return dict(self._tf1)

    def _slot_candidates(self, name: str, suffix: str, keys: set[str]) -> list[str]:
        if self.api == "v1":
            return [f"{name}/{suffix}", f"{name}/t_0/{suffix}", f"{name}/part_0/{suffix}"]
        slot = _V2_SLOTS.get(suffix, suffix)
        tail = f"/{name}/{slot}"
        return sorted(k for k in keys if k.startswith("training/") and k.endswith(tail))

    def load_tf1_checkpoint(self, path, *, assignment_map=None, include_optimizer=True, only_mapped=False):
        """Restores the canned estimator's TF1 checkpoint (weights, slots, global step) into the model.

        Called by `tfmigrate.runtime.tf1_checkpoint.load_tf1_checkpoint` (and so by `fit`/`evaluate`
        finding an Estimator's `model_dir`). `assignment_map`/`only_mapped` restrict it to the
        variables an `init_from_checkpoint`/`warm_start_from` covers.

        Raises:
          ValueError: a variable or slot is missing or has another shape (nothing is restored).
        """
        from . import tf1_checkpoint as tf1

        if tf.io.gfile.isdir(path):
            latest = tf.train.latest_checkpoint(path)
            if latest is None:
                raise ValueError(f"no checkpoint in directory {path!r}")
            path = latest
        reader = tf.train.load_checkpoint(path)
        shapes = reader.get_variable_to_shape_map()
        keys = set(shapes)
        partitioned = tf1._partitioned_variables(shapes)  # noqa: SLF001
        plan: list[tuple[Any, str, float]] = []
        missing: list[str] = []

        def wanted(name: str) -> bool:
            return not only_mapped or tf1._mapped_name(name, assignment_map) is not None  # noqa: SLF001

        for name, variable in self._tf1.items():
            if not wanted(name):
                continue
            ckpt = tf1._apply_assignment_map(name, assignment_map)  # noqa: SLF001
            if ckpt not in keys and ckpt not in partitioned:
                missing.append(ckpt)
                continue
            plan.append((variable, ckpt, 1.0))
        optimizers = []
        if include_optimizer:
            for part in self.parts:
                optimizer = self.optimizer if part == self.parts[0] else self.part_optimizers.get(part)
                if optimizer is None:
                    continue
                optimizers.append(optimizer)
                if not optimizer.built:
                    optimizer.build([v for v in self._part_variables[part] if v.trainable])
                for attr, suffix, scale in tf1.slot_map(optimizer):
                    if self.api == "v2":
                        scale = 1.0  # Keras 2 kept Keras's own slot values
                    slots = getattr(optimizer, attr)
                    mine = {id(v) for v in self._part_variables[part]}
                    for name, variable in self._tf1.items():
                        if not variable.trainable or id(variable) not in mine or not wanted(name):
                            continue
                        found = [k for k in self._slot_candidates(name, suffix, keys) if k in keys]
                        if not found:
                            missing.append(f"optimizer slot {suffix} of {name}")
                            continue
                        plan.append((slots[optimizer._get_variable_index(variable)], found[0], scale))  # noqa: SLF001
        if missing:
            raise ValueError(
                f"TF1 checkpoint {path!r} does not hold every variable of the canned model; nothing was restored. "
                f"Missing: {', '.join(missing)}."
            )
        values = {}
        for variable, ckpt, _ in plan:
            values[ckpt] = tf1._read(reader, ckpt, partitioned)  # noqa: SLF001
            if tuple(values[ckpt].shape) != tuple(variable.shape):
                raise ValueError(
                    f"TF1 variable {ckpt!r} has shape {tuple(values[ckpt].shape)}, the model's has {tuple(variable.shape)}"
                )
        report = tf1.LoadReport(path=path)
        for variable, ckpt, scale in plan:
            variable.assign(values[ckpt] * scale if scale != 1.0 else values[ckpt])
            report.assigned[getattr(variable, "path", ckpt)] = ckpt
        if include_optimizer and "global_step" in keys and wanted("global_step"):
            step = int(reader.get_tensor("global_step"))
            report.global_step = step
            for optimizer in optimizers:
                optimizer.iterations.assign(step)
                if isinstance(optimizer, tf1_optimizers.Adam):
                    for key, powers in (("beta1_power", optimizer._beta_1_powers), ("beta2_power", optimizer._beta_2_powers)):  # noqa: SLF001
                        found = sorted(k for k in keys if k == key or k.endswith("/" + key))
                        if found:
                            for power in powers:
                                power.assign(reader.get_tensor(found[0]))
            report.assigned["iterations"] = "global_step"
        return report


def _for_optimizer(gradients, optimizer):
    """TF1's runtime optimizers take sparse gradients as TF1 did; Keras's are given dense ones
    (Keras 3 applies duplicate sparse indices one by one, TF1 summed them first; for Adagrad, Ftrl,
    SGD and Keras 2's Adam a zero gradient row is a no-op, so dense is what TF1 computed)."""
    if isinstance(optimizer, (tf1_optimizers.Adam, tf1_optimizers.Momentum, tf1_optimizers.RMSProp)):
        return gradients
    return [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in gradients]


# -- the estimator-named builders ------------------------------------------------------------------


def _compile(model: CannedModel, optimizers: dict[str, Any], steps_per_execution: int) -> CannedModel:
    model.set_optimizers(optimizers)
    model.compile(optimizer=optimizers[model.parts[0]], steps_per_execution=steps_per_execution, jit_compile=False)
    return model


def _warm_start(model: CannedModel, warm_start_from: Any) -> None:
    if warm_start_from is None:
        return
    from .tf1_checkpoint import init_from_checkpoint

    path = getattr(warm_start_from, "ckpt_to_initialize_from", warm_start_from)
    # TF1 WarmStartSettings' default: every trainable variable, no optimizer slots, no global step.
    init_from_checkpoint(model, path, {"/": "/"})


def _check_api(api: str) -> str:
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
    api = _check_api(api)
    head = _Head("classifier", api=api, n_classes=n_classes, weight_column=weight_column,
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
    api = _check_api(api)
    head = _Head("regressor", api=api, label_dimension=label_dimension, weight_column=weight_column,
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
    api = _check_api(api)
    head = _Head("classifier", api=api, n_classes=n_classes, weight_column=weight_column,
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
    api = _check_api(api)
    head = _Head("regressor", api=api, label_dimension=label_dimension, weight_column=weight_column,
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
    api = _check_api(api)
    head = _Head("classifier", api=api, n_classes=n_classes, weight_column=weight_column,
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
    api = _check_api(api)
    head = _Head("regressor", api=api, label_dimension=label_dimension, weight_column=weight_column,
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
    api = _check_api(api)
    head = _Head("classifier", api=api, n_classes=n_classes, weight_column=weight_column,
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
    api = _check_api(api)
    head = _Head("regressor", api=api, label_dimension=label_dimension, weight_column=weight_column,
                 loss_reduction=loss_reduction)
    model = CannedModel(head, api=api, baseline=True)
    return _compile(model, {"baseline": get_optimizer(optimizer, 0.3, api)}, steps_per_execution)
