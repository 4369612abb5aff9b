"""Keras layers that behave like their TF1 `tf.compat.v1.layers` counterparts where Keras differs.

  * `BatchNormalization`: TF1 ran 4-D/5-D inputs through the fused kernel, whose moving variance
    is updated with the **Bessel-corrected** batch variance (n/(n-1)); Keras uses the biased one
    (measured on TF 2.15: 1.4433 vs 1.3531 after one step with momentum 0 on 16 values). Rank-2
    inputs took the non-fused path, biased like Keras. TF1 also updated the moving statistics only
    when the train op depended on `tf.GraphKeys.UPDATE_OPS`; `update_moving_statistics=False`
    reproduces a model_fn that never added that dependency. Under a strategy of several replicas
    the moving statistics are the mean of the replicas' updates, as TF1 read them (`_replica_mean`).
  * `LayerNorm`: `tf.contrib.layers.layer_norm` (slim's, BERT's): moments over the axes from
    `begin_norm_axis` on, `beta`/`gamma` over the axes from `begin_params_axis` on, epsilon 1e-12,
    computed with `tf.nn.moments` + `tf.nn.batch_normalization` as TF1 did. Keras's
    `LayerNormalization` defaults to epsilon 1e-3 and ties both axes together.
"""

from __future__ import annotations

import tensorflow as tf

keras = tf.keras


def _replica_mean(*values):
    """The mean over the replicas of each replica's moving-statistic update.

    TF1 kept a batch-norm moving statistic per replica and read the mean of them (a sync-on-read
    variable, MEAN aggregation). Keras 3's are mirrored variables with no aggregation, whose copies
    each replica overwrites with its own: they drift apart, and evaluation and checkpoints read
    replica 0's (measured: MirroredStrategy over two CPUs, replicas assigning 1 and 2 read 1).
    The update is linear in the batch statistics, so every copy set to the replicas' mean is TF1's
    value."""
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return values
    return tuple(context.all_reduce(tf.distribute.ReduceOp.MEAN, list(values)))


class BatchNormalization(keras.layers.BatchNormalization):
    """`tf.compat.v1.layers.batch_normalization` as a Keras layer.

    Args:
      fused: TF1's `fused`: None (the default) or True uses the fused kernel's statistics on 4-D and
        5-D inputs (Bessel-corrected moving variance); False uses the biased variance everywhere.
      update_moving_statistics: whether training updates the moving mean/variance (TF1: only when
        the train op depended on UPDATE_OPS).
      **kwargs: `keras.layers.BatchNormalization` arguments (TF1's names are the same).
    """

    def __init__(self, *args, fused=None, update_moving_statistics=True, **kwargs):
        for unsupported in ("renorm", "virtual_batch_size", "adjustment"):
            if kwargs.get(unsupported):
                raise ValueError(f"`{unsupported}` is not supported by tfmigrate.runtime.layers.BatchNormalization")
            kwargs.pop(unsupported, None)
        kwargs.pop("renorm_clipping", None)
        kwargs.pop("renorm_momentum", None)
        super().__init__(*args, **kwargs)
        self.fused = fused
        self.update_moving_statistics = bool(update_moving_statistics)

    def _bessel(self, inputs) -> bool:
        rank = len(inputs.shape)
        axis = self.axis % rank
        return self.fused is not False and rank in (4, 5) and axis in (1, rank - 1)

    def call(self, inputs, training=None, mask=None):
        if not (training and self.trainable) or mask is not None:
            return super().call(inputs, training=training, mask=mask)
        compute_dtype = "float32" if inputs.dtype in (tf.float16, tf.bfloat16) else inputs.dtype
        inputs = tf.cast(inputs, compute_dtype)
        mean, variance = self._moments(inputs, mask)
        if self.update_moving_statistics:
            decay = tf.cast(1.0 - self.momentum, compute_dtype)
            update_variance = variance
            if self._bessel(inputs):
                n = tf.cast(tf.size(inputs) // tf.size(variance), compute_dtype)
                update_variance = variance * (n / (n - 1.0))
            new_mean, new_variance = _replica_mean(
                self.moving_mean - (self.moving_mean - mean) * decay,
                self.moving_variance - (self.moving_variance - update_variance) * decay,
            )
            self.moving_mean.assign(new_mean)
            self.moving_variance.assign(new_variance)
        outputs = keras.ops.batch_normalization(
            x=inputs,
            mean=mean,
            variance=variance,
            axis=self.axis,
            offset=self.beta if self.center else None,
            scale=self.gamma if self.scale else None,
            epsilon=self.epsilon,
        )
        return tf.cast(outputs, self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(fused=self.fused, update_moving_statistics=self.update_moving_statistics)
        return config



class SlimBatchNorm(BatchNormalization):
    """slim's `batch_norm` (`tf.contrib.layers.batch_norm`, `tf_slim.batch_norm`).

    slim runs TF1's fused kernel on 2-D inputs too (it reshapes them to `[-1, 1, 1, C]`), so the
    moving variance is Bessel-corrected for rank 2 as for rank 4 (`BatchNormalization` corrects
    rank 4 and 5, as `tf.layers.batch_normalization` did). The codemod spells slim's defaults
    (`decay` 0.999 -> `momentum`, `scale=False`, `epsilon` 0.001).
    """

    def _bessel(self, inputs) -> bool:
        rank = len(inputs.shape)
        return self.fused is not False and rank in (2, 4) and self.axis % rank == rank - 1

class LayerNorm(keras.layers.Layer):
    """`tf.contrib.layers.layer_norm` as a Keras layer (TF1 arithmetic; weights `beta`, `gamma`).

    Args:
      center: add the learned offset `beta`.
      scale: multiply by the learned `gamma`.
      activation: applied to the output, or None.
      begin_norm_axis: first axis the moments are taken over (negative counts from the end).
      begin_params_axis: first axis of `beta`/`gamma`'s shape.
      **kwargs: `keras.layers.Layer` arguments (`trainable`, `name`, `dtype`).
    """

    def __init__(self, center=True, scale=True, activation=None, begin_norm_axis=1, begin_params_axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.center = bool(center)
        self.scale = bool(scale)
        self.activation = keras.activations.get(activation)
        self.begin_norm_axis = int(begin_norm_axis)
        self.begin_params_axis = int(begin_params_axis)

    def build(self, input_shape):
        rank = len(input_shape)
        if rank is None or rank < 1:
            raise ValueError(f"LayerNorm needs inputs of known rank, got shape {input_shape}")
        params_axis = self.begin_params_axis % rank
        params_shape = tuple(input_shape[params_axis:])
        if any(dim is None for dim in params_shape):
            raise ValueError(f"LayerNorm: axes from {self.begin_params_axis} of {input_shape} must be known")
        self.beta = self.add_weight(name="beta", shape=params_shape, initializer="zeros") if self.center else None
        self.gamma = self.add_weight(name="gamma", shape=params_shape, initializer="ones") if self.scale else None

    def call(self, inputs):
        rank = len(inputs.shape)
        norm_axes = list(range(self.begin_norm_axis % rank, rank))
        mean, variance = tf.nn.moments(inputs, norm_axes, keepdims=True)
        outputs = tf.nn.batch_normalization(
            inputs, mean, variance, offset=self.beta, scale=self.gamma, variance_epsilon=1e-12
        )
        return self.activation(outputs) if self.activation is not None else outputs

    def get_config(self):
        config = super().get_config()
        config.update(
            center=self.center,
            scale=self.scale,
            activation=keras.activations.serialize(self.activation) if self.activation else None,
            begin_norm_axis=self.begin_norm_axis,
            begin_params_axis=self.begin_params_axis,
        )
        return config


class _StaticShape:
    """Stands for a tensor whose static shape is all a `DeferredWeight`'s arguments read."""

    def __init__(self, shape) -> None:
        self.shape = tf.TensorShape(shape)

    def get_shape(self) -> tf.TensorShape:
        return self.shape


class DeferredWeight(keras.layers.Layer):
    """A TF1 `tf.get_variable` whose shape came from a tensor's static shape (BERT's
    `hidden_size = output_layer.shape[-1].value`, then `tf.get_variable('output_weights',
    [num_labels, hidden_size])`).

    A Keras model makes its weights before any tensor exists; this layer makes the variable when
    it is first called on the tensor, from `arguments(tensor)` (the `add_weight` arguments; the
    function may read only the tensor's `shape`/`get_shape()`), and returns the variable.
    """

    def __init__(self, arguments, **kwargs):
        super().__init__(**kwargs)
        self._arguments = arguments
        self.variable = None

    def build(self, input_shape):
        self.variable = self.add_weight(**self._arguments(_StaticShape(input_shape)))

    def call(self, inputs):
        return self.variable
