"""Learning-rate schedules TF1 had and Keras lacks.

The `tf.compat.v1.train.*_decay` functions that Keras has (exponential, inverse-time, polynomial,
piecewise-constant, cosine, cosine-restarts) map onto `keras.optimizers.schedules.*` and give
bit-identical rates; the ones here fill the gaps.
"""

from __future__ import annotations

import tensorflow as tf


class NaturalExpDecay(tf.keras.optimizers.schedules.ExponentialDecay):
    """`tf.compat.v1.train.natural_exp_decay`: `lr * exp(-decay_rate * step / decay_steps)`.

    TF1 computes it as exponential decay with rate `exp(-decay_rate)` taken in float32; so does
    this class.

    Args:
      learning_rate: the initial learning rate.
      decay_steps: how often to apply decay.
      decay_rate: the natural-exponential decay rate.
      staircase: decay in discrete intervals.
    """

    def __init__(self, learning_rate, decay_steps, decay_rate, staircase=False, name="NaturalExpDecay"):
        super().__init__(learning_rate, decay_steps, decay_rate, staircase=staircase, name=name)
        self.natural_decay_rate = decay_rate

    def __call__(self, step):
        rate = tf.exp(-tf.cast(self.natural_decay_rate, tf.float32))
        initial = tf.cast(self.initial_learning_rate, tf.float32)
        p = tf.cast(step, tf.float32) / tf.cast(self.decay_steps, tf.float32)
        if self.staircase:
            p = tf.floor(p)
        return initial * tf.pow(rate, p)

    def get_config(self):
        config = super().get_config()
        config["decay_rate"] = self.natural_decay_rate
        return config


class StepFunction(tf.keras.optimizers.schedules.LearningRateSchedule):
    """A learning rate computed by a function of the global step.

    TF1 programs computed rates by hand from `global_step` (the linear warmup blend
    `(1 - is_warmup) * decayed + is_warmup * init_lr * step / warmup_steps`); the migration keeps
    that code in a function of the step, which the optimizer calls with `optimizer.iterations`
    before each update, where TF1 read `global_step` (also restored from TF1 checkpoints).

    Args:
      fn: `fn(global_step) -> learning rate` (a scalar tensor).
      name: a name for the schedule.
    """

    def __init__(self, fn, name="StepFunction"):
        super().__init__()
        self.fn = fn
        self.name = name

    def __call__(self, step):
        return self.fn(step)

    def get_config(self):
        # The function is code, not configuration: a saved optimizer config names it only.
        return {"name": self.name, "fn": getattr(self.fn, "__qualname__", repr(self.fn))}
