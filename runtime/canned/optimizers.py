"""The canned estimators' optimizers: TF1's and Keras 2's by name, with each estimator's defaults."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import tensorflow as tf

from .. import optimizers as tf1_optimizers

keras = tf.keras

__all__ = ["LegacyAdagrad", "LegacyRMSprop", "from_tf1", "get_optimizer"]


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


def from_tf1(optimizer: tf.compat.v1.train.Optimizer) -> keras.optimizers.Optimizer:
    """A TF1 optimizer object given to a canned estimator (`optimizer=my_optimizer`, a
    `tf.train.GradientDescentOptimizer(...)` made beforehand) as the Keras optimizer that updates
    the same way: the classes the v1 estimators' optimizer names map to, with its hyperparameters.
    Its learning rate must be a number (a tensor or decay schedule built in TF1's graph has no
    Keras counterpart here)."""
    v1 = tf.compat.v1.train
    rate = getattr(optimizer, "_learning_rate", getattr(optimizer, "_lr", None))
    if isinstance(rate, (tf.Tensor, tf.Variable)) or callable(rate) or rate is None:
        raise ValueError(f"{type(optimizer).__name__}'s learning rate must be a number for a canned estimator; given {rate!r}")
    rate = float(rate)
    kind = type(optimizer)
    if kind is v1.GradientDescentOptimizer:
        return keras.optimizers.SGD(learning_rate=rate)
    if kind is v1.AdagradOptimizer:
        return keras.optimizers.Adagrad(learning_rate=rate, initial_accumulator_value=optimizer._initial_accumulator_value, epsilon=0.0)
    if kind is v1.AdamOptimizer:
        return tf1_optimizers.Adam(learning_rate=rate, beta_1=optimizer._beta1, beta_2=optimizer._beta2, epsilon=optimizer._epsilon)
    if kind is v1.MomentumOptimizer:
        return tf1_optimizers.Momentum(rate, optimizer._momentum, use_nesterov=optimizer._use_nesterov)
    if kind is v1.RMSPropOptimizer:
        return tf1_optimizers.RMSProp(rate, decay=optimizer._decay, momentum=optimizer._momentum, epsilon=optimizer._epsilon,
                                      centered=optimizer._centered)
    if kind is v1.FtrlOptimizer and not (optimizer._l1_regularization_strength or optimizer._l2_regularization_strength
                                         or optimizer._l2_shrinkage_regularization_strength or optimizer._beta):
        return keras.optimizers.Ftrl(learning_rate=rate, learning_rate_power=optimizer._learning_rate_power,
                                     initial_accumulator_value=optimizer._initial_accumulator_value)
    raise ValueError(f"The TF1 optimizer {kind.__name__} (with these settings) has no Keras counterpart for a canned estimator yet; "
                     "give the estimator a Keras optimizer, or its name")


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
    if isinstance(optimizer, tf.compat.v1.train.Optimizer):
        optimizer = from_tf1(optimizer)
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
