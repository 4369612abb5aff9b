"""A Keras train step that hands the gradients to the TF1 model_fn's own gradient code.

TF1 programs often computed, transformed and applied gradients themselves
(`tf.gradients` + `tf.clip_by_global_norm` + `apply_gradients`, as BERT does, or
`compute_gradients`/`apply_gradients` around a clip). Keras's `clipnorm`/`global_clipnorm` clip
each replica's 1/R-scaled gradients, which is not what such code did under TPUEstimator, so the
migrated model keeps that code in a method and `train_step` here calls it with the loss and the
tape:

  * `scale_loss=False` (code that called `tf.gradients(loss, ...)`): the gradients are those of
    the replica's unscaled loss; the optimizer sums them across replicas, as
    `CrossShardOptimizer.apply_gradients` did.
  * `scale_loss=True` (code that called `optimizer.compute_gradients(loss)` on a
    `CrossShardOptimizer`, which divided the loss by the number of shards): Keras's scaling.

On one replica both are the plain gradients. Everything else is Keras's own `train_step`: the loss
tracker, `compute_metrics`.
"""

from __future__ import annotations

from typing import Callable

import tensorflow as tf

keras = tf.keras


def train_step(model: keras.Model, data, apply_gradients_fn: Callable, *, scale_loss: bool = True):
    """One training step of `model` whose gradient handling is `apply_gradients_fn(loss, tape)`.

    Args:
      model: the compiled Keras model (call this from its `train_step`).
      data: the batch Keras passes to `train_step`.
      apply_gradients_fn: called as `fn(loss, tape)` with a persistent `tf.GradientTape` that
        recorded the forward pass and the loss; it computes, transforms and applies gradients.
      scale_loss: pass the loss scaled by 1/replicas (Keras's, and CrossShardOptimizer's
        `compute_gradients`) or unscaled (TF1 `tf.gradients` on a replica's loss).

    Returns:
      The logs `compute_metrics` returns, as Keras's own `train_step` does.
    """
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    with tf.GradientTape(persistent=True) as tape:
        y_pred = model(x, training=True)
        loss = model.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=True)
        unscaled = loss * tf.cast(replicas, loss.dtype) if replicas > 1 else loss
        batch = tf.shape(tf.nest.flatten(x)[0])[0]
        model._loss_tracker.update_state(unscaled, sample_weight=batch)
        gradient_loss = loss if scale_loss else unscaled
    apply_gradients_fn(gradient_loss, tape)
    del tape
    return model.compute_metrics(x, y, y_pred, sample_weight=sample_weight)
