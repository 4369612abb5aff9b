"""The inner-loop interfaces the `Controller` drives: `Trainer.train(num_steps)`, `Evaluator.evaluate(num_steps)`.

A trainer or evaluator owns *what one loop of steps does* (the model, the step function, the input
iterator, the metrics); the `Controller` (controller.py) owns *when loops run* (the outer loop,
checkpoints, summaries, actions). `StandardTrainer`/`StandardEvaluator` (standard.py) implement these
interfaces with per-step hooks; implement them directly for full control over the loop.
"""

from __future__ import annotations

import abc
from typing import Any, Mapping

import tensorflow as tf

__all__ = ["Evaluator", "Logs", "Trainer"]

#: What `train`/`evaluate` return: scalar tensors, NumPy values or Python numbers keyed by name
#: (e.g. `{"loss": 0.31, "mae": 0.42}`); nested dicts are allowed and flattened for summaries.
Logs = Mapping[str, Any]


class Trainer(tf.Module, metaclass=abc.ABCMeta):
    """Runs `num_steps` training steps per call: the inner loop of a `Controller`.

    Subclasses are `tf.Module`s, so the variables they hold are tracked (and can be checkpointed
    through `tf.train.Checkpoint(trainer=...)`).
    """

    @abc.abstractmethod
    def train(self, num_steps: int | tf.Tensor) -> Logs | None:
        """Runs `num_steps` training steps (fewer if the input ends first).

        The `Controller` calls this with `num_steps` of at most its `steps_per_loop`, and with the default
        summary writer and a `tf.summary.record_if` condition installed, so summaries written inside the
        steps land in the controller's summary directory every `summary_interval` steps.

        Args:
            num_steps: The number of steps to run: a Python int or a scalar int32 tensor (a tensor lets a
                `tf.function` loop run any number of steps without retracing).

        Returns:
            The logs of this loop (e.g. the mean loss and metric values over its steps), or None. The
            controller logs them, writes them as scalar summaries and passes them to its train actions.
        """


class Evaluator(tf.Module, metaclass=abc.ABCMeta):
    """Runs `num_steps` evaluation steps per call, or until the input ends."""

    @abc.abstractmethod
    def evaluate(self, num_steps: int | tf.Tensor) -> Logs:
        """Runs `num_steps` evaluation steps and returns the aggregated results.

        Args:
            num_steps: The number of steps to run, or -1 to run until the evaluation input ends. A Python
                int or a scalar int32 tensor.

        Returns:
            The evaluation logs (e.g. `{"loss": ..., "accuracy": ...}`). The controller logs them, writes
            them as scalar summaries at the current global step and passes them to its eval actions.
        """
