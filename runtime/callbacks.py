"""What `RunConfig`'s logging and summary fields did, as Keras callbacks.

  * `log_step_count_steps`: TF1 Estimator logged `loss = ..., step = ...` and `global_step/sec`
    every N steps (TPUEstimator: every N steps rounded up to whole `iterations_per_loop` loops,
    which is what callbacks firing every `steps_per_execution` batches give).
  * `save_summary_steps`: TF1 wrote `loss` and `global_step/sec` scalar summaries to `model_dir`
    every N steps; `SummarySaver` writes them (and the other logs) with `tf.summary` to the same
    directory, readable by TensorBoard.

Both count the global step (`optimizer.iterations`), not Keras's per-`fit` batch index, so the
cadence survives several `fit` calls, as TF1's did across `train` calls.
"""

from __future__ import annotations

import logging
import time

import tensorflow as tf

from . import summary

keras = tf.keras
logger = logging.getLogger("tfmigrate.runtime")


class _EveryNSteps(keras.callbacks.Callback):
    def __init__(self, every_n_steps: int) -> None:
        super().__init__()
        if not isinstance(every_n_steps, int) or every_n_steps <= 0:
            raise ValueError(f"`every_n_steps` ({every_n_steps!r}) must be a positive int")
        self.every_n_steps = every_n_steps
        self._last_step: int | None = None
        self._last_time = 0.0

    def _step(self) -> int:
        return int(self.model.optimizer.iterations.numpy())

    def on_train_begin(self, logs=None):
        self._last_step = self._step()
        self._last_time = time.time()

    def on_train_batch_end(self, batch, logs=None):
        step = self._step()
        if self._last_step is None or step // self.every_n_steps == self._last_step // self.every_n_steps:
            return
        now = time.time()
        rate = (step - self._last_step) / max(now - self._last_time, 1e-9)
        self._emit(step, rate, logs or {})
        self._last_step, self._last_time = step, now

    def _emit(self, step: int, steps_per_sec: float, logs: dict) -> None:
        raise NotImplementedError


class StepLogger(_EveryNSteps):
    """Logs `loss = ..., step = N` and `global_step/sec` every `every_n_steps` global steps."""

    def __init__(self, every_n_steps: int) -> None:
        super().__init__(every_n_steps)
        self.records: list[tuple[int, float | None]] = []

    def _emit(self, step, steps_per_sec, logs):
        loss = logs.get("loss")
        loss = None if loss is None else float(loss)
        self.records.append((step, loss))
        logger.info("loss = %s, step = %d", loss, step)
        logger.info("global_step/sec: %g", steps_per_sec)


class SummarySaver(_EveryNSteps):
    """Writes `loss`, the other logs and `global_step/sec` as scalar summaries to `log_dir`."""

    def __init__(self, log_dir: str, every_n_steps: int) -> None:
        super().__init__(every_n_steps)
        self.log_dir = log_dir
        self._writer = None

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        if self._writer is None:
            self._writer = tf.summary.create_file_writer(self.log_dir)

    def _emit(self, step, steps_per_sec, logs):
        with self._writer.as_default(step=step):
            for name, value in sorted(logs.items()):
                summary.scalar(name, float(value), step)
            summary.scalar("global_step/sec", steps_per_sec, step)
        self._writer.flush()

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer.flush()
