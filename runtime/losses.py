"""TF1 `tf.compat.v1.losses` with TF1's numbers, usable eagerly and inside `tf.function`.

Keras losses reduce differently: with weights, TF1's default `SUM_BY_NONZERO_WEIGHTS` divides the
weighted sum by the number of non-zero weights, Keras's "sum_over_batch_size" by the number of
elements and "mean_with_sample_weight" by the sum of the weights (with weights [0, 0.5, 2, 1] they
disagree). These functions keep TF1's argument names and order, its float32 arithmetic, its weight
broadcasting rules and all six `Reduction`s.

`scope` and `loss_collection` are accepted for compatibility and ignored, as TF1 ignored collections
when executing eagerly: use the returned tensor (e.g. return it from a Keras `train_step`).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

__all__ = [
    "Reduction",
    "absolute_difference",
    "compute_weighted_loss",
    "regularization_loss",
    "cosine_distance",
    "hinge_loss",
    "huber_loss",
    "log_loss",
    "mean_squared_error",
    "scale_loss_for_replicas",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]


class Reduction:
    """TF1 `tf.compat.v1.losses.Reduction`: how a weighted loss tensor becomes the loss.

    * `NONE`: the weighted losses, unreduced.
    * `SUM`: their sum.
    * `MEAN`: the sum divided by the sum of the (broadcast) weights.
    * `SUM_OVER_BATCH_SIZE`: the sum divided by the number of loss elements.
    * `SUM_BY_NONZERO_WEIGHTS` (= `SUM_OVER_NONZERO_WEIGHTS`, the default): the sum divided by the
      number of loss elements whose broadcast weight is not zero.

    A zero denominator gives 0, never NaN.
    """

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        """Every valid reduction value."""
        return (
            cls.NONE,
            cls.SUM,
            cls.MEAN,
            cls.SUM_OVER_BATCH_SIZE,
            cls.SUM_OVER_NONZERO_WEIGHTS,
            cls.SUM_BY_NONZERO_WEIGHTS,
        )

    @classmethod
    def validate(cls, key: str) -> None:
        """Raises ValueError if `key` is not a valid reduction."""
        if key not in cls.all():
            raise ValueError(f"Invalid `reduction` {key!r}; it should be one of {cls.all()}.")


def _require(value: Any, name: str) -> None:
    if value is None:
        raise ValueError(f"Argument `{name}` must not be None.")


def _check_compatible(a: tf.Tensor, b: tf.Tensor, a_name: str, b_name: str) -> None:
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(f"Shapes of `{a_name}` {a.shape} and `{b_name}` {b.shape} are incompatible.")


def _check_broadcastable(weights: tf.Tensor, losses: tf.Tensor) -> None:
    """TF1's rule: weights are a scalar, or have the losses' rank with each dimension 1 or equal."""
    w_rank, l_rank = weights.shape.rank, losses.shape.rank
    if w_rank is None or l_rank is None or w_rank == 0:
        return
    if w_rank != l_rank:
        raise ValueError(
            f"`weights` can not be broadcast to the losses: weights.shape={weights.shape}, "
            f"losses.shape={losses.shape} (TF1 needs a scalar or the same rank)."
        )
    for w_dim, l_dim in zip(weights.shape, losses.shape):
        if w_dim is not None and l_dim is not None and w_dim not in (1, l_dim):
            raise ValueError(
                f"`weights` can not be broadcast to the losses: weights.shape={weights.shape}, "
                f"losses.shape={losses.shape}."
            )


def compute_weighted_loss(
    losses: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: Any = None,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> tf.Tensor:
    """TF1 `tf.compat.v1.losses.compute_weighted_loss`: weights `losses` and reduces them.

    Args:
        losses: Loss tensor of shape `[batch_size, d1, ..., dN]`.
        weights: A scalar, or a tensor of the losses' rank whose dimensions are 1 or the losses'.
        scope: Ignored (a TF1 name scope).
        loss_collection: Ignored (TF1 collections are not used in TF2).
        reduction: A `Reduction` value.

    Returns:
        The weighted loss, in `losses`' dtype: a scalar, or the losses' shape for `Reduction.NONE`.

    Raises:
        ValueError: If `reduction` is invalid or `weights` cannot be broadcast to `losses`.
    """
    del scope, loss_collection
    Reduction.validate(reduction)
    losses = tf.convert_to_tensor(losses)
    input_dtype = losses.dtype
    losses = tf.cast(losses, tf.float32)
    weights = tf.cast(weights, tf.float32)
    _check_broadcastable(weights, losses)
    weighted = tf.multiply(losses, weights)
    if reduction == Reduction.NONE:
        return tf.cast(weighted, input_dtype)
    total = tf.reduce_sum(weighted)
    if reduction == Reduction.MEAN:
        total = tf.math.divide_no_nan(total, tf.reduce_sum(tf.ones_like(losses) * weights))
    elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
        present = tf.where(tf.equal(weights, 0.0), tf.zeros_like(weights), tf.ones_like(weights))
        present = tf.multiply(present, tf.ones_like(losses))  # Broadcast to the losses' shape.
        total = tf.math.divide_no_nan(total, tf.reduce_sum(present))
    elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
        total = tf.math.divide_no_nan(total, tf.cast(tf.size(losses), tf.float32))
    return tf.cast(total, input_dtype)


def _float_pair(first: Any, second: Any, first_name: str, second_name: str) -> tuple[tf.Tensor, tf.Tensor]:
    _require(first, first_name)
    _require(second, second_name)
    first = tf.cast(first, tf.float32)
    second = tf.cast(second, tf.float32)
    _check_compatible(second, first, second_name, first_name)
    return first, second


def absolute_difference(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: Any = None,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> tf.Tensor:
    """TF1 `tf.compat.v1.losses.absolute_difference`: `|predictions - labels|`, weighted and reduced.

    Args:
        labels: Ground truth, the shape of `predictions`.
        predictions: Predicted values.
        weights: See `compute_weighted_loss`.
        scope: Ignored.
        loss_collection: Ignored.
        reduction: A `Reduction` value.

    Returns:
        The weighted loss (float32).

    Raises:
        ValueError: If an argument is None or shapes are incompatible.
    """
    labels, predictions = _float_pair(labels, predictions, "labels", "predictions")
    losses = tf.abs(tf.subtract(predictions, labels))
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def cosine_distance(
    labels: Any,
    predictions: Any,
    axis: int | None = None,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: Any = None,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
    dim: int | None = None,
) -> tf.Tensor:
    """TF1 `tf.compat.v1.losses.cosine_distance`: `1 - sum(predictions * labels, axis)`.

    Both inputs are assumed unit-normalised along `axis`, as in TF1. The per-example losses keep
    `axis` as a dimension of size 1.

    Args:
        labels: Tensor of the shape of `predictions`.
        predictions: Tensor.
        axis: The dimension along which the distance is computed (required).
        weights: See `compute_weighted_loss`.
        scope: Ignored.
        loss_collection: Ignored.
        reduction: A `Reduction` value.
        dim: TF1's deprecated name for `axis`.

    Returns:
        The weighted loss (float32).

    Raises:
        ValueError: If `axis` is missing (or given twice), an argument is None, or shapes mismatch.
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both `axis` and `dim` (its deprecated name).")
        axis = dim
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    labels, predictions = _float_pair(labels, predictions, "labels", "predictions")
    losses = 1 - tf.reduce_sum(tf.multiply(predictions, labels), axis=(axis,), keepdims=True)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def hinge_loss(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: Any = None,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> tf.Tensor:
    """TF1 `tf.compat.v1.losses.hinge_loss`: `relu(1 - (2 * labels - 1) * logits)`.

    Args:
        labels: 0/1 labels, the shape of `logits`.
        logits: Unbounded, 0-centred scores.
        weights: See `compute_weighted_loss`.
        scope: Ignored.
        loss_collection: Ignored.
        reduction: A `Reduction` value.

    Returns:
        The weighted loss (float32).

    Raises:
        ValueError: If an argument is None or shapes are incompatible.
    """
    labels, logits = _float_pair(labels, logits, "labels", "logits")
    ones = tf.ones_like(labels)
    signed_labels = tf.subtract(2 * labels, ones)
    losses = tf.nn.relu(tf.subtract(ones, tf.multiply(signed_labels, logits)))
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def huber_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    delta: float = 1.0,
    scope: str | None = None,
    loss_collection: Any = None,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> tf.Tensor:
    """TF1 `tf.compat.v1.losses.huber_loss`: `0.5 x^2` for `|x| <= delta`, else linear.

    Args:
        labels: Ground truth, the shape of `predictions`.
        predictions: Predicted values.
        weights: See `compute_weighted_loss`.
        delta: Where the loss turns from quadratic to linear.
        scope: Ignored.
        loss_collection: Ignored.
        reduction: A `Reduction` value.

    Returns:
        The weighted loss (float32).

    Raises:
        ValueError: If an argument is None or shapes are incompatible.
    """
    labels, predictions = _float_pair(labels, predictions, "labels", "predictions")
    abs_error = tf.abs(tf.subtract(predictions, labels))
    quadratic = tf.minimum(abs_error, delta)
    linear = tf.subtract(abs_error, quadratic)
    losses = tf.add(
        tf.multiply(tf.constant(0.5, dtype=quadratic.dtype), tf.multiply(quadratic, quadratic)),
        tf.multiply(delta, linear),
    )
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def log_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    epsilon: float = 1e-7,
    scope: str | None = None,
    loss_collection: Any = None,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> tf.Tensor:
    """TF1 `tf.compat.v1.losses.log_loss`: binary cross-entropy on probabilities, `epsilon` inside the logs.

    Args:
        labels: Ground truth in [0, 1], the shape of `predictions`.
        predictions: Probabilities.
        weights: See `compute_weighted_loss`.
        epsilon: Added to the arguments of both logarithms.
        scope: Ignored.
        loss_collection: Ignored.
        reduction: A `Reduction` value.

    Returns:
        The weighted loss (float32).

    Raises:
        ValueError: If an argument is None or shapes are incompatible.
    """
    labels, predictions = _float_pair(labels, predictions, "labels", "predictions")
    losses = -tf.multiply(labels, tf.math.log(predictions + epsilon)) - tf.multiply(
        (1 - labels), tf.math.log(1 - predictions + epsilon)
    )
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: Any = None,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> tf.Tensor:
    """TF1 `tf.compat.v1.losses.mean_squared_error`: `(predictions - labels)^2`, weighted and reduced.

    Args:
        labels: Ground truth, the shape of `predictions`.
        predictions: Predicted values.
        weights: See `compute_weighted_loss`.
        scope: Ignored.
        loss_collection: Ignored.
        reduction: A `Reduction` value.

    Returns:
        The weighted loss (float32).

    Raises:
        ValueError: If an argument is None or shapes are incompatible.
    """
    labels, predictions = _float_pair(labels, predictions, "labels", "predictions")
    losses = tf.math.squared_difference(predictions, labels)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def sigmoid_cross_entropy(
    multi_class_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: str | None = None,
    loss_collection: Any = None,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> tf.Tensor:
    """TF1 `tf.compat.v1.losses.sigmoid_cross_entropy`, with TF1's label smoothing towards 1/2.

    Args:
        multi_class_labels: 0/1 labels, the shape of `logits`.
        logits: Logits.
        weights: See `compute_weighted_loss`.
        label_smoothing: If > 0, labels become `labels * (1 - s) + 0.5 * s`.
        scope: Ignored.
        loss_collection: Ignored.
        reduction: A `Reduction` value.

    Returns:
        The weighted loss, in `logits`' dtype.

    Raises:
        ValueError: If an argument is None or shapes are incompatible.
    """
    _require(multi_class_labels, "multi_class_labels")
    _require(logits, "logits")
    logits = tf.convert_to_tensor(logits)
    labels = tf.cast(multi_class_labels, logits.dtype)
    _check_compatible(logits, labels, "logits", "multi_class_labels")
    if label_smoothing > 0:
        labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
    losses = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def softmax_cross_entropy(
    onehot_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: str | None = None,
    loss_collection: Any = None,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> tf.Tensor:
    """TF1 `tf.compat.v1.losses.softmax_cross_entropy`, with TF1's label smoothing over the classes.

    The labels are not differentiated through (`tf.stop_gradient`), as in TF1.

    Args:
        onehot_labels: One-hot labels `[batch_size, num_classes]`.
        logits: Logits `[batch_size, num_classes]`.
        weights: A scalar or `[batch_size]` (see `compute_weighted_loss`).
        label_smoothing: If > 0, labels become `labels * (1 - s) + s / num_classes`.
        scope: Ignored.
        loss_collection: Ignored.
        reduction: A `Reduction` value.

    Returns:
        The weighted loss, in `logits`' dtype.

    Raises:
        ValueError: If an argument is None or shapes are incompatible.
    """
    _require(onehot_labels, "onehot_labels")
    _require(logits, "logits")
    logits = tf.convert_to_tensor(logits)
    labels = tf.cast(onehot_labels, logits.dtype)
    _check_compatible(logits, labels, "logits", "onehot_labels")
    if label_smoothing > 0:
        num_classes = tf.cast(tf.shape(labels)[-1], logits.dtype)
        labels = labels * (1.0 - label_smoothing) + label_smoothing / num_classes
    labels = tf.stop_gradient(labels)
    losses = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def _squeeze_labels_and_weights(
    labels: tf.Tensor, logits: tf.Tensor, weights: Any
) -> tuple[tf.Tensor, tf.Tensor, Any]:
    """TF1's `_remove_squeezable_dimensions(expected_rank_diff=1)` for static ranks.

    Labels `[batch, 1]` next to logits `[batch, classes]` lose their last dimension (logits
    `[batch, classes, 1]` next to labels `[batch]` lose theirs), and weights of rank `labels + 1`
    lose their last dimension. With unknown ranks nothing is squeezed.
    """
    labels_rank, logits_rank = labels.shape.rank, logits.shape.rank
    if labels_rank is not None and logits_rank is not None:
        if logits_rank - labels_rank == 2 and logits.shape[-1] in (None, 1):
            logits = tf.squeeze(logits, [-1])
        elif logits_rank - labels_rank == 0 and labels.shape[-1] in (None, 1):
            labels = tf.squeeze(labels, [-1])
            labels_rank -= 1
    if weights is not None:
        weights = tf.convert_to_tensor(weights)
        if labels_rank is not None and weights.shape.rank is not None and weights.shape.rank - labels_rank == 1:
            weights = tf.squeeze(weights, [-1])
    return labels, logits, weights


def sparse_softmax_cross_entropy(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: Any = None,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> tf.Tensor:
    """TF1 `tf.compat.v1.losses.sparse_softmax_cross_entropy`: cross-entropy from integer class ids.

    Args:
        labels: Class ids `[batch_size]` (or `[batch_size, 1]`, squeezed as TF1 did).
        logits: Logits `[batch_size, num_classes]`.
        weights: A scalar or `[batch_size]` (or `[batch_size, 1]`); see `compute_weighted_loss`.
        scope: Ignored.
        loss_collection: Ignored.
        reduction: A `Reduction` value.

    Returns:
        The weighted loss, in `logits`' dtype.

    Raises:
        ValueError: If an argument is None or shapes are incompatible.
    """
    _require(labels, "labels")
    _require(logits, "logits")
    labels = tf.convert_to_tensor(labels)
    logits = tf.convert_to_tensor(logits)
    labels, logits, weights = _squeeze_labels_and_weights(labels, logits, weights)
    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def scale_loss_for_replicas(loss: Any) -> tf.Tensor:
    """Divides a per-replica loss by the number of replicas, as a Keras `compute_loss` must return it.

    Keras 3 sums the replicas' gradients and expects `Model.compute_loss` to return a loss already
    divided by `num_replicas_in_sync` (its own loss objects do this in a strategy scope, and it
    undoes the division for the logged `loss`). TF1 did the same in `Optimizer._scale_loss`
    (Estimator + distribution strategy) and `CrossShardOptimizer(reduction=MEAN)`. Without a
    strategy, or with one replica, `loss` is returned unchanged.

    Args:
        loss: The loss of this replica's batch, e.g. from one of this module's functions.

    Returns:
        `loss / num_replicas_in_sync`, in `loss`' dtype.
    """
    loss = tf.convert_to_tensor(loss)
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    if replicas == 1:
        return loss
    return tf.multiply(loss, tf.cast(1.0 / replicas, loss.dtype))


def regularization_loss(model) -> tf.Tensor:
    """`tf.compat.v1.losses.get_regularization_loss()` for a Keras model: the sum of its layers'
    regularization penalties (`model.losses`), or 0.0 when there are none."""
    penalties = list(model.losses)
    if not penalties:
        return tf.constant(0.0)
    return tf.add_n([tf.cast(p, tf.float32) for p in penalties])


def regularization_losses(model) -> list[tf.Tensor]:
    """`tf.compat.v1.losses.get_regularization_losses()`: the model's regularization penalties."""
    return [tf.cast(p, tf.float32) for p in model.losses]


def total_loss(losses, model=None) -> tf.Tensor:
    """`tf.compat.v1.losses.get_total_loss()`: `add_n` of the losses TF1 collected (in the order the
    loss functions ran), plus the model's regularization penalties when `model` is given."""
    terms = [tf.convert_to_tensor(loss) for loss in losses]
    if model is not None:
        terms += regularization_losses(model)
    if not terms:
        raise ValueError("No losses to add (TF1's get_total_loss raised here too).")
    return tf.add_n(terms)
