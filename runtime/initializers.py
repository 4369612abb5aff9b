"""`tf.contrib.layers` / slim initializers with TF1's distributions.

`variance_scaling_initializer(factor=2.0, mode='FAN_IN', uniform=False)` drew from
`truncated_normal(0, sqrt(1.3 * factor / n))` (two-sigma truncation) or from
`uniform(-sqrt(3 * factor / n), sqrt(3 * factor / n))`, with `n` the kernel's fan-in, fan-out or
their average; a conv kernel's fans are its last two dimensions times its receptive field.
Keras's `VarianceScaling` truncates a normal of stddev `sqrt(scale / n) / 0.8796...`, 0.3% narrower
than TF1's `sqrt(1.3 * factor / n)`: the uniform case (`xavier_initializer()` =
`GlorotUniform`) is the same distribution, the truncated one is not.
"""

from __future__ import annotations

import math
import random

import tensorflow as tf

keras = tf.keras

_MODES = ("FAN_IN", "FAN_OUT", "FAN_AVG")


def fans(shape) -> tuple[float, float]:
    """TF1's (fan_in, fan_out) estimate for a variable of `shape`."""
    shape = [int(d) for d in shape]
    if shape:
        fan_in = float(shape[-2]) if len(shape) > 1 else float(shape[-1])
        fan_out = float(shape[-1])
    else:
        fan_in = fan_out = 1.0
    for dim in shape[:-2]:
        fan_in *= float(dim)
        fan_out *= float(dim)
    return fan_in, fan_out


class VarianceScaling(keras.initializers.Initializer):
    """`tf.contrib.layers.variance_scaling_initializer` as a Keras initializer (TF1's arguments)."""

    def __init__(self, factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=tf.float32):
        if not tf.as_dtype(dtype).is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        if mode not in _MODES:
            raise TypeError("Unknown mode %s [FAN_IN, FAN_OUT, FAN_AVG]" % mode)
        self.factor = float(factor)
        self.mode = mode
        self.uniform = bool(uniform)
        self.dtype = tf.as_dtype(dtype).name
        self._init_seed = seed
        # As Keras's random initializers: an unseeded one draws its seed from Python's `random`
        # (which `keras.utils.set_random_seed` seeds).
        self.seed = seed if seed is not None else random.randint(1, 2**31 - 1)

    def scale(self, shape) -> float:
        """The uniform limit or the truncated normal's stddev parameter for `shape`."""
        fan_in, fan_out = fans(shape)
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[self.mode]
        return math.sqrt((3.0 if self.uniform else 1.3) * self.factor / n)

    def __call__(self, shape, dtype=None, partition_info=None, **kwargs):
        dtype = tf.as_dtype(dtype or self.dtype)
        if not dtype.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        shape = [int(d) for d in shape]
        scale = self.scale(shape)
        if self.uniform:
            return keras.random.uniform(shape, -scale, scale, dtype=dtype.name, seed=self.seed)
        return keras.random.truncated_normal(shape, 0.0, scale, dtype=dtype.name, seed=self.seed)

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode, "uniform": self.uniform, "seed": self._init_seed,
                "dtype": self.dtype}


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=tf.float32):
    """`tf.contrib.layers.variance_scaling_initializer` (slim's): see `VarianceScaling`."""
    return VarianceScaling(factor=factor, mode=mode, uniform=uniform, seed=seed, dtype=dtype)


def xavier_initializer(uniform=True, seed=None, dtype=tf.float32):
    """`tf.contrib.layers.xavier_initializer`: variance scaling with factor 1 over the average fan."""
    return VarianceScaling(factor=1.0, mode="FAN_AVG", uniform=uniform, seed=seed, dtype=dtype)


xavier_initializer_conv2d = xavier_initializer
