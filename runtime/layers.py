"""Keras layers that behave like their TF1 `tf.compat.v1.layers` counterparts where Keras differs.

  * `BatchNormalization`: TF1 ran 4-D/5-D inputs through the fused kernel, whose moving variance
    is updated with the **Bessel-corrected** batch variance (n/(n-1)); Keras uses the biased one
    (measured on TF 2.15: 1.4433 vs 1.3531 after one step with momentum 0 on 16 values). Rank-2
    inputs took the non-fused path, biased like Keras. TF1 also updated the moving statistics only
    when the train op depended on `tf.GraphKeys.UPDATE_OPS`; `update_moving_statistics=False`
    reproduces a model_fn that never added that dependency.
"""

from __future__ import annotations

import tensorflow as tf

keras = tf.keras


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
            self.moving_mean.assign(self.moving_mean - (self.moving_mean - mean) * decay)
            self.moving_variance.assign(self.moving_variance - (self.moving_variance - update_variance) * decay)
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
