"""`EstimatorLoop`: the host side of a custom training loop migrated from a TF1 Estimator (`--target ctl`).

`tfmigrate --target ctl` writes each TF1 `model_fn` as a class deriving from `EstimatorLoop`, in the
style of the TF2 distribution guides. The split follows Orbit's (`StandardTrainer` + `Controller`):

  * The generated class owns *what a step does*: the model, optimizer, metrics and
    `tf.train.Checkpoint` created in `strategy.scope()`; `train_step` (one replica: the forward
    pass on a `tf.GradientTape`, the loss averaged with `tf.nn.compute_average_loss`, the gradients
    applied), `train_steps` (a `tf.function` running up to `steps` of them through `strategy.run`:
    TPUEstimator's `iterations_per_loop`), `test_step`/`test_steps` (metrics updated inside
    `strategy.run`) and `predict_step`/`distributed_predict_step`.
  * `EstimatorLoop` owns *when and how much*, i.e. TF1 Estimator's contract: `train(data, steps,
    max_steps)` with the global step (`optimizer.iterations`), `steps_per_loop` steps per
    `train_steps` call and a shorter last call, checkpoints `ckpt-<global_step>` in `model_dir`
    saved at the start, every `save_checkpoints_steps` (checked after each call, as TPUEstimator
    checked after each loop) and at the end, `keep_checkpoint_max` of them kept; restoring the
    latest checkpoint of `model_dir` (a TF1 Estimator's too, through `tf1_checkpoint`) before the
    first step; `evaluate(data, steps)` returning `loss` (the mean of the per-batch losses, as
    Estimator reported it), the metrics by name and `global_step`; `predict(data)` yielding one
    dict per example. It also distributes the data: `tf.data.Dataset`s of global batches with
    `strategy.experimental_distribute_dataset`, per-replica `input_fn`s with
    `strategy.distribute_datasets_from_function` (`InputFnData.per_replica`).

Strategies: default, one-device, mirrored and multi-worker mirrored run `train_steps` in this
process. Under multi-worker mirrored every worker takes part in every save (a save may read
variables collectively); the chief writes into `model_dir` and the others into a temporary
directory they delete (`cluster.checkpoint_dir`). Under ParameterServerStrategy `train_steps` is
scheduled on the workers through a `ClusterCoordinator` (one call per worker per wave, each worker
reading its own copy of the data: `create_per_worker_dataset`); evaluation and prediction run on
the coordinator (TF's "inline evaluation").
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Mapping

import keras
import numpy as np
import tensorflow as tf

from . import checkpoints, cluster
from ._logging import logger
from .keras_compat import _DataSource, _check_steps, seed_from_config, training_summaries
from .strategy import cluster_coordinator

__all__ = ["EstimatorLoop"]


def _is_parameter_server(strategy: tf.distribute.Strategy) -> bool:
    return isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy)


class EstimatorLoop:
    """Runs a migrated model_fn's steps with TF1 Estimator's `train`/`evaluate`/`predict` semantics.

    Subclasses (written by `tfmigrate --target ctl`) create in `__init__`, inside
    `strategy.scope()`: `self.model` (a Keras model), `self.optimizer` (whose `iterations` is the
    global step), `self.checkpoint` (a `tf.train.Checkpoint` of both) and, when the model_fn had
    eval metrics, `self.eval_metrics` (a list of Keras metrics); and they define `train_steps`,
    `test_steps` and, with a PREDICT branch, `distributed_predict_step` (see the module docstring).

    Args:
        strategy: The `tf.distribute.Strategy` the loop runs under.
        config: A `RunConfig` or None: `model_dir`, `save_checkpoints_steps`/`_secs`,
            `keep_checkpoint_max`, `tf_random_seed`.
        model_dir: Overrides `config.model_dir`.
        steps_per_loop: Train steps per `train_steps` call (TPUEstimator's `iterations_per_loop`).
    """

    model: keras.Model
    optimizer: keras.optimizers.Optimizer
    checkpoint: tf.train.Checkpoint
    eval_metrics: list[keras.metrics.Metric]

    def __init__(
        self,
        strategy: tf.distribute.Strategy,
        *,
        config: Any = None,
        model_dir: str | os.PathLike | None = None,
        steps_per_loop: int = 1,
    ) -> None:
        if isinstance(steps_per_loop, bool) or not isinstance(steps_per_loop, (int, np.integer)) or steps_per_loop < 1:
            raise ValueError(f"`steps_per_loop` must be a positive int, got {steps_per_loop!r}.")
        self.strategy = strategy
        self.config = config
        if model_dir is None and config is not None:
            model_dir = getattr(config, "model_dir", None)
        self.model_dir = None if model_dir is None else os.fspath(model_dir)
        if self.model_dir is not None and "://" not in self.model_dir:
            # Under ParameterServerStrategy the parameter servers write the files: a relative
            # directory would be resolved against their working directory, not this program's.
            self.model_dir = os.path.abspath(self.model_dir)
        self.steps_per_loop = int(steps_per_loop)
        self.eval_metrics = []
        self._prepared = False

    # -- state ---------------------------------------------------------------------------------

    @property
    def global_step(self) -> int:
        """TF1's global step: the optimizer's `iterations`."""
        return int(self.optimizer.iterations.numpy())

    def _prepare(self, data: Any) -> None:
        """Seeds, builds every variable (from the data's first batch) and restores from `model_dir`, once."""
        if self._prepared:
            return
        seed_from_config(self.config)
        if not self.model.built:
            features, _, _ = keras.utils.unpack_x_y_sample_weight(_DataSource(data, self.strategy).first_batch())
            with self.strategy.scope():
                self.model(features, training=False)
        if not self.optimizer.built:
            with self.strategy.scope():
                self.optimizer.build(self.model.trainable_variables)
        restored = self.restore(self.model_dir) if self.model_dir is not None else None
        if restored is None and self.global_step == 0:
            # A fresh start: TF1's `init_from_checkpoint` initializers apply.
            from .tf1_checkpoint import apply_init_checkpoints

            apply_init_checkpoints(self.model, optimizer=self.optimizer)
        self._prepared = True

    def restore(self, model_dir: str | os.PathLike) -> str | None:
        """Restores the latest checkpoint of `model_dir` (TF2, or a TF1 Estimator's) into the loop.

        The optimizer's learning rate is kept: TF1 graphs held it as a constant no checkpoint
        restored.

        Returns:
            The checkpoint restored, or None when `model_dir` has none.

        Raises:
            ValueError: If the checkpoint does not fit the model.
        """
        path = checkpoints.latest_checkpoint(model_dir)
        if path is None:
            return None
        learning_rate = getattr(self.optimizer, "_learning_rate", None)
        if not isinstance(learning_rate, (keras.Variable, tf.Variable)):
            learning_rate = None
        kept = None if learning_rate is None else learning_rate.numpy()
        if checkpoints.is_tf1_checkpoint(path):
            from .tf1_checkpoint import load_tf1_checkpoint

            load_tf1_checkpoint(self.model, path, optimizer=self.optimizer)
        else:
            status = self.checkpoint.restore(path)
            try:
                status.assert_existing_objects_matched()
            except AssertionError as error:
                raise ValueError(f"Checkpoint {path!r} does not match the model being restored: {error}") from error
            status.expect_partial()
        if learning_rate is not None:
            learning_rate.assign(kept)
        logger.info("tfmigrate.runtime.ctl: restored %s (global step %d).", path, self.global_step)
        return path

    def _checkpoint_manager(self) -> tuple[tf.train.CheckpointManager, bool]:
        directory, temporary = cluster.checkpoint_dir(self.model_dir, self.strategy)
        max_to_keep = getattr(self.config, "keep_checkpoint_max", 5) if self.config is not None else 5
        manager = tf.train.CheckpointManager(
            self.checkpoint,
            directory=directory,
            max_to_keep=max_to_keep or None,  # TF1: 0 or None keeps every checkpoint.
            checkpoint_name=checkpoints.CHECKPOINT_NAME,
        )
        return manager, temporary

    def save(self, manager: tf.train.CheckpointManager, temporary: bool) -> None:
        """Saves `ckpt-<global_step>`; a non-chief worker's temporary directory is deleted after."""
        path = manager.save(checkpoint_number=self.global_step)
        if temporary:
            tf.io.gfile.rmtree(manager.directory)
        else:
            logger.info("tfmigrate.runtime.ctl: saved checkpoint %s.", path)

    # -- data ----------------------------------------------------------------------------------

    def distribute(self, data: Any, limit: int | None = None) -> Any:
        """`data` (a dataset, an `InputFnData` or a dataset function) distributed over the replicas."""
        return _DataSource(data, self.strategy).distributed(limit)

    # -- train ---------------------------------------------------------------------------------

    def train(self, data: Any, *, steps: int | None = None, max_steps: int | None = None) -> "EstimatorLoop":
        """Trains as TF1 `Estimator.train(input_fn, steps, max_steps)` did.

        Args:
            data: A `tf.data.Dataset` of global batches, an `InputFnData` (`input_fn_data`) or a
                function of `tf.distribute.InputContext`.
            steps: Train this many more steps (fewer if the data ends first).
            max_steps: Train until the global step reaches `max_steps`; nothing runs if it has.

        Returns:
            self.

        Raises:
            ValueError: If both `steps` and `max_steps` are given or either is not positive.
        """
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both `steps` and `max_steps`.")
        steps = _check_steps(steps, "steps")
        max_steps = _check_steps(max_steps, "max_steps")
        self._prepare(data)
        start = self.global_step
        if max_steps is not None and start >= max_steps:
            logger.info("tfmigrate.runtime.ctl: global step %d has reached max_steps=%d; not training.", start, max_steps)
            return self
        limit = max_steps - start if max_steps is not None else steps
        saver = _Saver(self) if self.model_dir is not None else None
        if saver is not None:
            saver.begin()
        with training_summaries(self.model, self.model_dir, self.config, optimizer=self.optimizer):
            self._train(data, limit, saver)
        if saver is not None:
            saver.end()
        logger.info("tfmigrate.runtime.ctl: global step %d -> %d.", start, self.global_step)
        return self

    def _train(self, data: Any, limit: int | None, saver: "_Saver | None") -> None:
        if _is_parameter_server(self.strategy):
            self._train_on_workers(data, limit, saver)
        else:
            iterator = iter(self.distribute(data, limit))
            done = 0
            while limit is None or done < limit:
                wanted = self.steps_per_loop if limit is None else min(self.steps_per_loop, limit - done)
                before = self.global_step
                self.train_steps(iterator, tf.constant(wanted))
                ran = self.global_step - before
                done += ran
                if saver is not None:
                    saver.after_loop()
                if ran < wanted:
                    break  # The input ended, as TF1 training ends.

    def _train_on_workers(self, data: Any, limit: int | None, saver: "_Saver | None") -> None:
        """ParameterServerStrategy: waves of one `train_steps` call per worker, then a join."""
        coordinator = cluster_coordinator(self.strategy)
        iterator = iter(coordinator.create_per_worker_dataset(_DataSource(data, self.strategy).per_worker()))
        workers = max(1, int(getattr(self.strategy, "_num_workers", 1)))
        done = 0
        while limit is None or done < limit:
            before = self.global_step
            wanted, budget = 0, (np.iinfo(np.int32).max if limit is None else limit - done)
            for _ in range(workers):
                if budget <= 0:
                    break
                count = min(self.steps_per_loop, budget)
                coordinator.schedule(self.train_steps, args=(iterator, tf.constant(count)))
                wanted, budget = wanted + count, budget - count
            coordinator.join()
            ran = self.global_step - before
            done += ran
            if saver is not None:
                saver.after_loop()
            if ran < wanted:
                break

    # -- evaluate ------------------------------------------------------------------------------

    def evaluate(self, data: Any, *, steps: int | None = None) -> dict[str, Any]:
        """Evaluates as TF1 `Estimator.evaluate(input_fn, steps)` did.

        Returns:
            `loss` (the mean of the per-batch losses), each eval metric by name, and `global_step`.

        Raises:
            ValueError: If `steps` is not positive, or `model_dir` has no checkpoint for a loop
                that never trained (as TF1 raised).
        """
        steps = _check_steps(steps, "steps")
        if (
            not self._prepared
            and self.model_dir is not None
            and checkpoints.latest_checkpoint(self.model_dir) is None
        ):
            raise ValueError(f"Could not find trained model in model_dir: {self.model_dir!r} (nothing to evaluate).")
        self._prepare(data)
        for metric in self.eval_metrics:
            metric.reset_state()
        if _is_parameter_server(self.strategy):
            iterator = iter(_DataSource(data, self.strategy).local(steps))  # On the coordinator.
        else:
            iterator = iter(self.distribute(data, steps))
        loss_sum, batches = 0.0, 0
        while steps is None or batches < steps:
            wanted = self.steps_per_loop if steps is None else min(self.steps_per_loop, steps - batches)
            total, ran = self.test_steps(iterator, tf.constant(wanted))
            loss_sum, batches = loss_sum + float(total), batches + int(ran)
            if int(ran) < wanted:
                break
        results: dict[str, Any] = {"loss": loss_sum / batches if batches else float("nan")}
        for metric in self.eval_metrics:
            results[metric.name] = _to_python(metric.result())
        results["global_step"] = self.global_step
        return results

    # -- predict -------------------------------------------------------------------------------

    def predict(
        self, data: Any, *, predict_keys: Any = None, yield_single_examples: bool = True
    ) -> Iterator[Any]:
        """Yields predictions as TF1 `Estimator.predict(input_fn)` did: one dict per example.

        Args:
            data: As for `train`; labels in the batches are ignored.
            predict_keys: Only these keys of the prediction dicts (a str or a list), or all.
            yield_single_examples: False yields each batch's dict of arrays instead.
        """
        if (
            not self._prepared
            and self.model_dir is not None
            and checkpoints.latest_checkpoint(self.model_dir) is None
        ):
            raise ValueError(f"Could not find trained model in model_dir: {self.model_dir!r} (nothing to predict).")
        self._prepare(data)
        if isinstance(predict_keys, str):
            predict_keys = [predict_keys]
        if _is_parameter_server(self.strategy):
            batches, step = _DataSource(data, self.strategy).local(None), tf.function(self.predict_step)
        else:
            batches, step = self.distribute(data), self.distributed_predict_step
        for batch in batches:
            outputs = tf.nest.map_structure(lambda t: t.numpy(), step(batch))
            if isinstance(outputs, Mapping) and predict_keys is not None:
                outputs = {key: outputs[key] for key in predict_keys}
            if not yield_single_examples:
                yield outputs
                continue
            size = len(tf.nest.flatten(outputs)[0])
            for index in range(size):
                yield tf.nest.map_structure(lambda array: array[index], outputs)

    # -- what the generated subclass defines -----------------------------------------------------

    def train_steps(self, iterator: Any, steps: tf.Tensor) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError("the migrated loop defines `train_steps`")

    def test_steps(self, iterator: Any, steps: tf.Tensor) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError("the migrated loop defines `test_steps`")

    def predict_step(self, batch: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError("the model_fn had no PREDICT branch that tfmigrate could migrate")

    def distributed_predict_step(self, batch: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError("the model_fn had no PREDICT branch that tfmigrate could migrate")


def _to_python(value: Any) -> Any:
    array = np.asarray(value)
    return float(array) if array.size == 1 else array.tolist()


class _Saver:
    """TF1's `CheckpointSaverHook` for an `EstimatorLoop`: at the start, every
    `save_checkpoints_steps` steps or `save_checkpoints_secs` seconds (checked after each
    `train_steps` call) and at the end."""

    def __init__(self, loop: EstimatorLoop) -> None:
        import time

        self._time = time.monotonic
        self._loop = loop
        self._manager, self._temporary = loop._checkpoint_manager()
        config = loop.config
        if config is None:  # TF1's default RunConfig: every 600 seconds.
            self._save_steps, self._save_secs = None, 600.0
        else:
            self._save_steps = config.save_checkpoints_steps or None
            self._save_secs = config.save_checkpoints_secs or None
        self._multi_worker = cluster.is_multi_worker(loop.strategy)
        self._last_step: int | None = None
        self._last_time = 0.0

    def _save(self) -> None:
        self._loop.save(self._manager, self._temporary)
        self._last_step, self._last_time = self._loop.global_step, self._time()

    def begin(self) -> None:
        step = self._loop.global_step
        prefix = os.path.join(self._loop.model_dir, f"{checkpoints.CHECKPOINT_NAME}-{step}")
        if not self._multi_worker and tf.io.gfile.exists(prefix + ".index"):
            self._last_step, self._last_time = step, self._time()
        else:
            self._save()

    def after_loop(self) -> None:
        step = self._loop.global_step
        if step == self._last_step:
            return
        due = self._save_steps is not None and (self._last_step is None or step >= self._last_step + self._save_steps)
        if not due and self._save_secs is not None:
            due = self._time() - self._last_time >= self._save_secs
            if self._multi_worker:  # Every worker must take part in the save: agree on it.
                votes = self._loop.strategy.run(lambda: tf.constant(1.0 if due else 0.0))
                due = float(self._loop.strategy.reduce("SUM", votes, axis=None)) > 0
        if due:
            self._save()

    def end(self) -> None:
        if self._loop.global_step != self._last_step:
            self._save()
