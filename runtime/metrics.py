"""`tf.compat.v1.metrics.*` as Keras 3 metrics, with TF1's arguments and TF1's numbers.

A TF1 metric was a `(value, update_op)` pair over local variables; the Keras form is a stateful
`keras.metrics.Metric`. The classes here keep the TF1 call signature in `update_state`
(`labels=`, `predictions=`, `values=`, `weights=`) and TF1's arithmetic, which differs from the
nearest Keras metric in places:

  * `Accuracy`: exact match of `predictions` and `labels` (after casting predictions to the labels'
    dtype), averaged over every element: `keras.metrics.Accuracy`, not the `"accuracy"` string.
  * `Precision`/`Recall`: TF1 casts predictions and labels to bool (non-zero is positive); Keras
    thresholds predictions at 0.5.
  * `AUC`: TF1's `summation_method="trapezoidal"` with its epsilon (1e-6) in the rates; for PR
    curves Keras's interpolation gives different numbers (0.822481 vs 0.822512, measured).
  * `Mean*`/`RootMeanSquaredError`: weighted means over all elements, like TF1.

Weights broadcast to the values' shape, as in TF1.
"""

from __future__ import annotations

import tensorflow as tf

keras = tf.keras


def _broadcast_weights(weights, values):
    values = tf.convert_to_tensor(values)
    if weights is None:
        return tf.ones_like(values, dtype=tf.float32)
    weights = tf.cast(weights, tf.float32)
    return tf.broadcast_to(tf.reshape(weights, tf.concat([tf.shape(weights), tf.ones(tf.rank(values) - tf.rank(weights), tf.int32)], 0)), tf.shape(values))


def _squeeze_like(labels, predictions):
    """TF1's `remove_squeezable_dimensions`: drop a trailing 1 where ranks differ by one."""
    labels = tf.convert_to_tensor(labels)
    predictions = tf.convert_to_tensor(predictions)
    if labels.shape.rank is not None and predictions.shape.rank is not None:
        if labels.shape.rank == predictions.shape.rank + 1 and labels.shape[-1] == 1:
            labels = tf.squeeze(labels, -1)
        elif predictions.shape.rank == labels.shape.rank + 1 and predictions.shape[-1] == 1:
            predictions = tf.squeeze(predictions, -1)
    return labels, predictions


class _WeightedMean(keras.metrics.Metric):
    """total / count over every element, TF1's `metrics.mean`."""

    def __init__(self, name=None, dtype="float32"):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total", dtype="float32")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count", dtype="float32")

    def _add(self, values, weights):
        values = tf.cast(values, tf.float32)
        weights = _broadcast_weights(weights, values)
        self.total.assign_add(tf.reduce_sum(values * weights))
        self.count.assign_add(tf.reduce_sum(weights))

    def result(self):
        return tf.math.divide_no_nan(self.total, self.count)


class Mean(_WeightedMean):
    """`tf.compat.v1.metrics.mean(values, weights=None)`."""

    def update_state(self, values, weights=None, sample_weight=None):
        self._add(values, weights if weights is not None else sample_weight)


class Accuracy(_WeightedMean):
    """`tf.compat.v1.metrics.accuracy(labels, predictions, weights=None)`."""

    def update_state(self, labels, predictions, weights=None, sample_weight=None):
        labels, predictions = _squeeze_like(labels, predictions)
        if labels.dtype != predictions.dtype:
            predictions = tf.cast(predictions, labels.dtype)
        self._add(tf.cast(tf.equal(predictions, labels), tf.float32), weights if weights is not None else sample_weight)


class MeanSquaredError(_WeightedMean):
    """`tf.compat.v1.metrics.mean_squared_error(labels, predictions, weights=None)`."""

    def update_state(self, labels, predictions, weights=None, sample_weight=None):
        labels, predictions = _squeeze_like(labels, predictions)
        diff = tf.math.squared_difference(tf.cast(predictions, tf.float32), tf.cast(labels, tf.float32))
        self._add(diff, weights if weights is not None else sample_weight)


class RootMeanSquaredError(MeanSquaredError):
    """`tf.compat.v1.metrics.root_mean_squared_error(labels, predictions, weights=None)`."""

    def result(self):
        return tf.sqrt(super().result())


class MeanAbsoluteError(_WeightedMean):
    """`tf.compat.v1.metrics.mean_absolute_error(labels, predictions, weights=None)`."""

    def update_state(self, labels, predictions, weights=None, sample_weight=None):
        labels, predictions = _squeeze_like(labels, predictions)
        diff = tf.abs(tf.cast(predictions, tf.float32) - tf.cast(labels, tf.float32))
        self._add(diff, weights if weights is not None else sample_weight)


class _BoolConfusion(keras.metrics.Metric):
    def __init__(self, name=None, dtype="float32"):
        super().__init__(name=name, dtype=dtype)
        self.true_positives = self.add_variable(shape=(), initializer="zeros", name="tp", dtype="float32")
        self.other = self.add_variable(shape=(), initializer="zeros", name="other", dtype="float32")

    def _counts(self, labels, predictions, weights):
        labels, predictions = _squeeze_like(labels, predictions)
        labels = tf.cast(labels, tf.bool)
        predictions = tf.cast(predictions, tf.bool)
        weights = _broadcast_weights(weights, tf.cast(labels, tf.float32))
        return labels, predictions, weights


class Precision(_BoolConfusion):
    """`tf.compat.v1.metrics.precision(labels, predictions, weights=None)`: tp / (tp + fp)."""

    def update_state(self, labels, predictions, weights=None, sample_weight=None):
        labels, predictions, w = self._counts(labels, predictions, weights if weights is not None else sample_weight)
        self.true_positives.assign_add(tf.reduce_sum(w * tf.cast(labels & predictions, tf.float32)))
        self.other.assign_add(tf.reduce_sum(w * tf.cast(~labels & predictions, tf.float32)))

    def result(self):
        return tf.math.divide_no_nan(self.true_positives, self.true_positives + self.other)


class Recall(_BoolConfusion):
    """`tf.compat.v1.metrics.recall(labels, predictions, weights=None)`: tp / (tp + fn)."""

    def update_state(self, labels, predictions, weights=None, sample_weight=None):
        labels, predictions, w = self._counts(labels, predictions, weights if weights is not None else sample_weight)
        self.true_positives.assign_add(tf.reduce_sum(w * tf.cast(labels & predictions, tf.float32)))
        self.other.assign_add(tf.reduce_sum(w * tf.cast(labels & ~predictions, tf.float32)))

    def result(self):
        return tf.math.divide_no_nan(self.true_positives, self.true_positives + self.other)


class AUC(keras.metrics.AUC):
    """`tf.compat.v1.metrics.auc(labels, predictions, weights=None, num_thresholds=200, curve='ROC',
    summation_method='trapezoidal')`, with TF1's thresholds and trapezoidal sum."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="trapezoidal", name=None, dtype=None):
        if summation_method not in ("trapezoidal", "careful_interpolation"):
            raise ValueError(f"`summation_method` ({summation_method!r}) must be 'trapezoidal' or 'careful_interpolation'")
        self.tf1_summation_method = summation_method
        self.tf1_curve = str(curve).upper()
        super().__init__(
            num_thresholds=num_thresholds,
            curve=curve,
            summation_method="interpolation",
            name=name,
            dtype=dtype,
        )

    def update_state(self, labels, predictions, weights=None, sample_weight=None):
        labels, predictions = _squeeze_like(labels, predictions)
        w = weights if weights is not None else sample_weight
        if w is not None:
            w = _broadcast_weights(w, tf.cast(labels, tf.float32))
        return super().update_state(tf.cast(labels, tf.bool), tf.cast(predictions, tf.float32), sample_weight=w)

    def result(self):
        if self.tf1_summation_method == "careful_interpolation":
            return super().result()
        epsilon = 1.0e-6
        tp, fp, tn, fn = self.true_positives, self.false_positives, self.true_negatives, self.false_negatives
        recall = (tp + epsilon) / (tp + fn + epsilon)
        if self.tf1_curve == "ROC":
            x = fp / (fp + tn + epsilon)
            y = recall
        else:
            x = recall
            y = (tp + epsilon) / (tp + fp + epsilon)
        return tf.reduce_sum((x[: self.num_thresholds - 1] - x[1:]) * (y[: self.num_thresholds - 1] + y[1:]) / 2.0)


class MeanPerClassAccuracy(keras.metrics.Metric):
    """`tf.compat.v1.metrics.mean_per_class_accuracy(labels, predictions, num_classes, weights=None)`:
    the mean over all `num_classes` of per-class accuracy (a class never seen counts as 0, as in TF1)."""

    def __init__(self, num_classes, name=None, dtype="float32"):
        super().__init__(name=name, dtype=dtype)
        self.num_classes = int(num_classes)
        self.total = self.add_variable(shape=(self.num_classes,), initializer="zeros", name="total", dtype="float32")
        self.count = self.add_variable(shape=(self.num_classes,), initializer="zeros", name="count", dtype="float32")

    def update_state(self, labels, predictions, weights=None, sample_weight=None):
        labels, predictions = _squeeze_like(labels, predictions)
        labels = tf.reshape(tf.cast(labels, tf.int32), [-1])
        predictions = tf.reshape(tf.cast(predictions, tf.int32), [-1])
        w = weights if weights is not None else sample_weight
        w = tf.reshape(_broadcast_weights(w, tf.cast(tf.reshape(labels, [-1]), tf.float32)), [-1])
        correct = tf.cast(tf.equal(labels, predictions), tf.float32)
        self.total.assign_add(tf.math.unsorted_segment_sum(w, labels, self.num_classes))
        self.count.assign_add(tf.math.unsorted_segment_sum(w * correct, labels, self.num_classes))

    def result(self):
        return tf.reduce_mean(tf.math.divide_no_nan(self.count, self.total))

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes}


class _WeightedCount(keras.metrics.Metric):
    """A weighted count of the elements where a condition on bool labels/predictions holds."""

    def __init__(self, name=None, dtype="float32"):
        super().__init__(name=name, dtype=dtype)
        self.accumulator = self.add_variable(shape=(), initializer="zeros", name="accumulator", dtype="float32")

    def _condition(self, labels, predictions):
        raise NotImplementedError

    def update_state(self, labels, predictions, weights=None, sample_weight=None):
        labels, predictions = _squeeze_like(labels, predictions)
        labels = tf.cast(labels, tf.bool)
        predictions = tf.cast(predictions, tf.bool)
        w = _broadcast_weights(weights if weights is not None else sample_weight, tf.cast(labels, tf.float32))
        self.accumulator.assign_add(tf.reduce_sum(w * tf.cast(self._condition(labels, predictions), tf.float32)))

    def result(self):
        return tf.identity(self.accumulator)


class TruePositives(_WeightedCount):
    """`tf.compat.v1.metrics.true_positives(labels, predictions, weights=None)`."""

    def _condition(self, labels, predictions):
        return labels & predictions


class FalsePositives(_WeightedCount):
    """`tf.compat.v1.metrics.false_positives(labels, predictions, weights=None)`."""

    def _condition(self, labels, predictions):
        return ~labels & predictions


class TrueNegatives(_WeightedCount):
    """`tf.compat.v1.metrics.true_negatives(labels, predictions, weights=None)`."""

    def _condition(self, labels, predictions):
        return ~labels & ~predictions


class FalseNegatives(_WeightedCount):
    """`tf.compat.v1.metrics.false_negatives(labels, predictions, weights=None)`."""

    def _condition(self, labels, predictions):
        return labels & ~predictions


class MeanRelativeError(_WeightedMean):
    """`tf.compat.v1.metrics.mean_relative_error(labels, predictions, normalizer, weights=None)`:
    the mean of |labels - predictions| / normalizer (0 where the normalizer is 0)."""

    def update_state(self, labels, predictions, normalizer, weights=None, sample_weight=None):
        labels, predictions = _squeeze_like(labels, predictions)
        labels = tf.cast(labels, tf.float32)
        predictions = tf.cast(predictions, tf.float32)
        normalizer = tf.cast(normalizer, tf.float32)
        relative = tf.where(
            tf.equal(normalizer, 0.0), tf.zeros_like(labels), tf.math.divide(tf.abs(labels - predictions), normalizer)
        )
        self._add(relative, weights if weights is not None else sample_weight)


class PercentageBelow(_WeightedMean):
    """`tf.compat.v1.metrics.percentage_below(values, threshold, weights=None)`."""

    def __init__(self, threshold, name=None, dtype="float32"):
        super().__init__(name=name, dtype=dtype)
        self.threshold = float(threshold)

    def update_state(self, values, weights=None, sample_weight=None):
        below = tf.cast(tf.less(tf.cast(values, tf.float32), self.threshold), tf.float32)
        self._add(below, weights if weights is not None else sample_weight)

    def get_config(self):
        return {**super().get_config(), "threshold": self.threshold}


class MeanCosineDistance(_WeightedMean):
    """`tf.compat.v1.metrics.mean_cosine_distance(labels, predictions, dim, weights=None)`: 1 minus
    the mean over `dim`-reduced elementwise products (inputs are unit-normalized by the caller)."""

    def __init__(self, dim, name=None, dtype="float32"):
        super().__init__(name=name, dtype=dtype)
        self.dim = int(dim)

    def update_state(self, labels, predictions, weights=None, sample_weight=None):
        labels, predictions = _squeeze_like(labels, predictions)
        products = tf.multiply(tf.cast(predictions, tf.float32), tf.cast(labels, tf.float32))
        self._add(tf.reduce_sum(products, axis=[self.dim], keepdims=True), weights if weights is not None else sample_weight)

    def result(self):
        return 1.0 - super().result()

    def get_config(self):
        return {**super().get_config(), "dim": self.dim}


class MeanIoU(keras.metrics.Metric):
    """`tf.compat.v1.metrics.mean_iou(labels, predictions, num_classes, weights=None)`: the mean
    intersection-over-union of the classes that occurred (labelled or predicted)."""

    def __init__(self, num_classes, name=None, dtype="float32"):
        super().__init__(name=name, dtype=dtype)
        self.num_classes = int(num_classes)
        self.confusion = self.add_variable(
            shape=(self.num_classes, self.num_classes), initializer="zeros", name="total_confusion_matrix", dtype="float64"
        )

    def update_state(self, labels, predictions, weights=None, sample_weight=None):
        labels, predictions = _squeeze_like(labels, predictions)
        labels = tf.reshape(tf.cast(labels, tf.int64), [-1])
        predictions = tf.reshape(tf.cast(predictions, tf.int64), [-1])
        w = weights if weights is not None else sample_weight
        w = None if w is None else tf.reshape(_broadcast_weights(w, tf.cast(labels, tf.float32)), [-1])
        matrix = tf.math.confusion_matrix(labels, predictions, self.num_classes, weights=w, dtype=tf.float64)
        self.confusion.assign_add(matrix)

    def result(self):
        matrix = tf.cast(self.confusion, tf.float32)
        rows = tf.reduce_sum(matrix, 0)
        cols = tf.reduce_sum(matrix, 1)
        diag = tf.linalg.diag_part(matrix)
        denominator = rows + cols - diag
        valid = tf.reduce_sum(tf.cast(tf.not_equal(denominator, 0), tf.float32))
        denominator = tf.where(denominator > 0, denominator, tf.ones_like(denominator))
        iou = tf.math.divide(diag, denominator)
        return tf.where(valid > 0, tf.math.divide(tf.reduce_sum(iou), valid), 0.0)

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes}


# TF1 metric function -> (class, parameters of update_state in TF1 order, constructor parameters).
TF1_METRICS = {
    "accuracy": (Accuracy, ("labels", "predictions", "weights"), ()),
    "mean": (Mean, ("values", "weights"), ()),
    "mean_squared_error": (MeanSquaredError, ("labels", "predictions", "weights"), ()),
    "root_mean_squared_error": (RootMeanSquaredError, ("labels", "predictions", "weights"), ()),
    "mean_absolute_error": (MeanAbsoluteError, ("labels", "predictions", "weights"), ()),
    "precision": (Precision, ("labels", "predictions", "weights"), ()),
    "recall": (Recall, ("labels", "predictions", "weights"), ()),
    "auc": (AUC, ("labels", "predictions", "weights"), ("num_thresholds", "curve", "summation_method")),
    "mean_per_class_accuracy": (MeanPerClassAccuracy, ("labels", "predictions", "num_classes", "weights"), ("num_classes",)),
    "true_positives": (TruePositives, ("labels", "predictions", "weights"), ()),
    "false_positives": (FalsePositives, ("labels", "predictions", "weights"), ()),
    "true_negatives": (TrueNegatives, ("labels", "predictions", "weights"), ()),
    "false_negatives": (FalseNegatives, ("labels", "predictions", "weights"), ()),
    "mean_relative_error": (MeanRelativeError, ("labels", "predictions", "normalizer", "weights"), ()),
    "percentage_below": (PercentageBelow, ("values", "threshold", "weights"), ("threshold",)),
    "mean_cosine_distance": (MeanCosineDistance, ("labels", "predictions", "dim", "weights"), ("dim",)),
    "mean_iou": (MeanIoU, ("labels", "predictions", "num_classes", "weights"), ("num_classes",)),
}
