"""The canned estimators' heads: loss (with `loss_reduction`), predictions and evaluation metrics."""

from __future__ import annotations

from typing import Any, Sequence

import tensorflow as tf

from .. import feature_columns as fc
from .. import losses as tf1_losses
from .. import metrics as tf1_metrics

keras = tf.keras

__all__ = ["Head"]

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


# -- heads ---------------------------------------------------------------------------------------


class Head:
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
        # (one batch, one loss; none for an empty batch, Keras's last step on input of unknown size)
        metrics["loss"].update_state(training_loss, tf.cast(tf.shape(logits)[0] > 0, training_loss.dtype))
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
