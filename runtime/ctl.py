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
    checked after each loop) and at the end, `keep_checkpoint_max` of them kept
    (`checkpoints.SaveSchedule`, the schedule `fit` uses too); restoring the
    latest checkpoint of `model_dir` (a TF1 Estimator's too, through `tf1_checkpoint`) before the
    first step; `evaluate(data, steps)` returning `loss` (the mean of the per-batch losses, as
    Estimator reported it), the metrics by name and `global_step`; `predict(data)` yielding one
    dict per example. It also distributes the data: `tf.data.Dataset`s of global batches with
    `strategy.experimental_distribute_dataset`, per-replica `input_fn`s with
    `strategy.distribute_datasets_from_function` (`InputFnData.per_replica`).
  * TF1's hooks: `train`/`evaluate`/`predict(hooks=...)` and the generated class's
    `training_hooks()`/`evaluation_hooks()`/`prediction_hooks()` run the Keras target's
    `tfmigrate.runtime.hooks` objects, driven by `hooks.LoopHooks` around each session run (one
    step while hooks or saving listeners watch, except under a TPUStrategy, as TF1 ran one step
    per `Session.run` off TPU); `train(saving_listeners=...)`; `evaluate(name=...)` writes the
    results to `model_dir/eval[_name]` as TF1 did; `export_saved_model` (the Keras target's
    `export.export_saved_model` of the loop's model); `tfm.train_and_evaluate(loop, ...)`
    (`training.train_and_evaluate`).

Strategies: default, one-device, mirrored and multi-worker mirrored run `train_steps` in this
process. Under multi-worker mirrored every worker takes part in every save (a save may read
variables collectively); the chief writes into `model_dir` and the others into a temporary
directory they delete (`cluster.checkpoint_dir`). Under ParameterServerStrategy `train_steps` is
scheduled on the workers through a `ClusterCoordinator` (one call per worker per wave, each worker
reading its own copy of the data: `create_per_worker_dataset`); evaluation and prediction run on
the coordinator (TF's "inline evaluation").
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator, Mapping

import keras
import numpy as np
import tensorflow as tf

from . import checkpoints, cluster, early_stopping, engine, session_run
from . import hooks as hooks_lib
from ._logging import logger
from .data_source import DataSource, check_steps, ensure_built
from .estimator_calls import seed_from_config, training_summaries
from .strategy import cluster_coordinator
from .tf1_checkpoint import apply_init_checkpoints
from .tf1_checkpoint import load_tf1_checkpoint
from .export import export_saved_model

__all__ = ["CannedLoop", "EstimatorLoop"]


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
        self._build_variables(data)
        restored = self.restore(self.model_dir) if self.model_dir is not None else None
        if restored is None and self.global_step == 0:
            # A fresh start: TF1's `init_from_checkpoint` initializers apply.
            apply_init_checkpoints(self.model, optimizer=self.optimizer)
        self._prepared = True

    def _build_variables(self, data: Any) -> None:
        """Creates the model's and the optimizer's variables (the model from the data's first batch)."""
        if not self.model.built:
            features, _, _ = keras.utils.unpack_x_y_sample_weight(DataSource(data, self.strategy).first_batch())
            with self.strategy.scope():
                self.model(features, training=False)
        if not self.optimizer.built:
            with self.strategy.scope():
                self.optimizer.build(self.model.trainable_variables)

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
        return self.restore_path(path)

    def restore_path(self, path: str) -> str:
        """Restores the checkpoint `path` (TF2, or a TF1 Estimator's) into the loop; see `restore`."""
        learning_rate = getattr(self.optimizer, "_learning_rate", None)
        if not isinstance(learning_rate, (keras.Variable, tf.Variable)):
            learning_rate = None
        kept = None if learning_rate is None else learning_rate.numpy()
        if checkpoints.is_tf1_checkpoint(path):
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

    # -- data ----------------------------------------------------------------------------------

    def distribute(self, data: Any, limit: int | None = None) -> Any:
        """`data` (a dataset, an `InputFnData` or a dataset function) distributed over the replicas."""
        return DataSource(data, self.strategy).distributed(limit)

    # -- train ---------------------------------------------------------------------------------

    def train(
        self,
        data: Any,
        *,
        steps: int | None = None,
        max_steps: int | None = None,
        hooks: list[Any] | None = None,
        saving_listeners: list[Any] | None = None,
    ) -> "EstimatorLoop":
        """Trains as TF1 `Estimator.train(input_fn, hooks, steps, max_steps, saving_listeners)` did.

        Args:
            data: A `tf.data.Dataset` of global batches, an `InputFnData` (`input_fn_data`) or a
                function of `tf.distribute.InputContext`.
            steps: Train this many more steps (fewer if the data ends first).
            max_steps: Train until the global step reaches `max_steps`; nothing runs if it has.
            hooks: TF1 `SessionRunHook`s (`tfmigrate.runtime.hooks`), run with the loop's own
                `training_hooks()` (a model_fn's `training_hooks`) after the checkpoint saver, as
                TF1 ordered them. With hooks or listeners a session run is one step, except under
                a TPUStrategy (TF1 ran `iterations_per_loop` steps per run only on a TPU).
            saving_listeners: TF1 `CheckpointSaverListener`s, called around each checkpoint save
                (`after_save` returning True stops training). A `CheckpointSaverHook` among the
                hooks replaces the loop's own saver and gets the listeners, as in TF1.

        Returns:
            self.

        Raises:
            ValueError: If both `steps` and `max_steps` are given or either is not positive, or
                there are listeners but no checkpoint saver (no `model_dir`).
        """
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both `steps` and `max_steps`.")
        steps = check_steps(steps, "steps")
        max_steps = check_steps(max_steps, "max_steps")
        self._prepare(data)
        start = self.global_step
        if max_steps is not None and start >= max_steps:
            logger.info("tfmigrate.runtime.ctl: global step %d has reached max_steps=%d; not training.", start, max_steps)
            return self
        limit = max_steps - start if max_steps is not None else steps
        run_hooks = self._hooks(hooks, "train", "train")
        listeners = list(saving_listeners or [])
        user_saver = next((h for h in run_hooks.hooks if isinstance(h, hooks_lib.CheckpointSaverHook)), None)
        saver = None
        if user_saver is not None:
            user_saver._listeners.extend(l for l in listeners if l not in user_saver._listeners)  # noqa: SLF001
        elif self.model_dir is not None:
            saver = checkpoints.SaveSchedule(
                self.checkpoint, self.model_dir, self.strategy, self.config,
                global_step=lambda: self.global_step, listeners=listeners,
            )
        elif listeners:
            raise ValueError(
                "There should be a CheckpointSaverHook to use saving_listeners: give the loop a model directory "
                "(`model_dir` or `config.model_dir`) or a CheckpointSaverHook."
            )
        per_run = self._steps_per_run(bool(run_hooks or listeners))
        stopped = saver is not None and saver.begin()
        run_hooks.begin()
        with training_summaries(self.model, self.model_dir, self.config, optimizer=self.optimizer):
            if not stopped:
                self._train(data, limit, per_run, saver, run_hooks)
        if saver is not None:
            saver.end()
        run_hooks.end()
        logger.info("tfmigrate.runtime.ctl: global step %d -> %d.", start, self.global_step)
        return self

    def _hooks(self, hooks: Any, mode: str, caller: str) -> session_run.LoopHooks:
        """The caller's hooks and the loop's own (`training_hooks()`...), driven by this loop."""
        found = session_run.check_hooks(hooks, f"ctl.EstimatorLoop.{caller}") + session_run.model_hooks(self, mode)
        return session_run.LoopHooks(
            found, self.model, mode, global_step=lambda: self.global_step, checkpoint=self.checkpoint
        )

    def _steps_per_run(self, hooked: bool) -> int:
        """Steps per `train_steps`/`test_steps` call: one per TF1 session run while hooks watch them."""
        if hooked and not isinstance(self.strategy, tf.distribute.TPUStrategy):
            return 1
        return self.steps_per_loop

    def _train(
        self, data: Any, limit: int | None, per_run: int, saver: checkpoints.SaveSchedule | None, run_hooks: session_run.LoopHooks
    ) -> None:
        """Session runs of `per_run` steps (under ParameterServerStrategy, waves of one per worker)."""
        if _is_parameter_server(self.strategy):
            coordinator = cluster_coordinator(self.strategy)
            iterator = iter(coordinator.create_per_worker_dataset(DataSource(data, self.strategy).per_worker()))
        else:
            iterator = iter(self.distribute(data, limit))
        done = 0
        while limit is None or done < limit:
            budget = np.iinfo(np.int32).max if limit is None else limit - done
            before = self.global_step
            run_hooks.before_run()
            if _is_parameter_server(self.strategy):
                loss, wanted = self._train_on_workers(coordinator, iterator, budget, per_run, fetch=bool(run_hooks))
            else:
                wanted = min(per_run, budget)
                loss = self.train_steps(iterator, tf.constant(wanted))
            ran = self.global_step - before
            done += ran
            if ran == 0:
                break  # The input had ended: TF1's session run raised before the hooks' after_run.
            stop = saver is not None and saver.after_run()
            stop = run_hooks.after_run(_loss_value(loss)) or stop
            if stop or ran < wanted:
                break  # A hook or listener asked to stop, or the input ended, as TF1 training ends.

    def _train_on_workers(
        self, coordinator: Any, iterator: Any, budget: int, per_run: int, *, fetch: bool
    ) -> tuple[Any, int]:
        """ParameterServerStrategy: one wave of `train_steps` calls, one per worker, then a join.

        Returns the loss of the wave's last call (when `fetch`) and the steps scheduled."""
        workers = max(1, int(getattr(self.strategy, "_num_workers", 1)))
        wanted, results = 0, []
        for _ in range(workers):
            if budget <= 0:
                break
            count = min(per_run, budget)
            results.append(coordinator.schedule(self.train_steps, args=(iterator, tf.constant(count))))
            wanted, budget = wanted + count, budget - count
        coordinator.join()
        return (results[-1].fetch() if fetch and results else None), wanted

    # -- evaluate ------------------------------------------------------------------------------

    def evaluate(
        self,
        data: Any,
        *,
        steps: int | None = None,
        hooks: list[Any] | None = None,
        name: str | None = None,
        checkpoint_path: str | os.PathLike | None = None,
    ) -> dict[str, Any]:
        """Evaluates as TF1 `Estimator.evaluate(input_fn, steps, hooks, name)` did.

        Args:
            data: As for `train`.
            steps: Evaluate this many batches, or until the data ends.
            hooks: TF1 `SessionRunHook`s, run with the loop's own `evaluation_hooks()`; one
                session run per batch off TPU (see `train`).
            name: TF1's evaluation name: with a `model_dir`, the results are written as TF1 wrote
                them, scalar summaries at the global step in `model_dir/eval` (`eval_<name>`),
                where early-stopping hooks and `BestExporter` read them.
            checkpoint_path: Evaluate this checkpoint's weights and global step, then go back to
                the loop's own (a TF1 name, `model.ckpt-8`, finds the runtime's `ckpt-8`).

        Returns:
            `loss` (the mean of the per-batch losses), each eval metric by name, and `global_step`.

        Raises:
            ValueError: If `steps` is not positive, or `model_dir` has no checkpoint for a loop
                that never trained (as TF1 raised).
        """
        steps = check_steps(steps, "steps")
        if checkpoint_path is None:
            self._check_trained("evaluate")
        self._prepare(data)
        with self._weights_from(checkpoint_path):
            return self._evaluate(data, steps, hooks, name)

    def _evaluate(self, data: Any, steps: int | None, hooks: list[Any] | None, name: str | None) -> dict[str, Any]:
        run_hooks = self._hooks(hooks, "eval", "evaluate")
        per_run = self._steps_per_run(bool(run_hooks))
        for metric in self.eval_metrics:
            metric.reset_state()
        if _is_parameter_server(self.strategy):
            iterator = iter(DataSource(data, self.strategy).local(steps))  # On the coordinator.
        else:
            iterator = iter(self.distribute(data, steps))
        loss_sum, batches, held = 0.0, 0, 0.0
        run_hooks.begin()
        while steps is None or batches < steps:
            wanted = per_run if steps is None else min(per_run, steps - batches)
            run_hooks.before_run()
            total, ran, *counted = self.test_steps(iterator, tf.constant(wanted))
            ran = int(ran)
            if ran == 0:
                break
            # A loop that counts its replicas' batches (`test_steps` returning three values) sums
            # batch losses over them: a last step may leave a replica an empty batch, which TF1,
            # evaluating one batch at a time, never had. Older loops sum one loss per step.
            run_batches = float(counted[0]) if counted else float(ran)
            loss_sum, batches, held = loss_sum + float(total), batches + ran, held + run_batches
            # The hooks' LOSS: the run's batch loss (one batch per run while hooks watch).
            if run_hooks.after_run(float(total) / max(run_batches, 1.0)) or ran < wanted:
                break
        run_hooks.end()
        results = self.evaluation_results(loss_sum, held)
        results["global_step"] = self.global_step
        if self.model_dir is not None:
            if cluster.is_chief(self.strategy):
                early_stopping.write_eval_results(early_stopping.eval_dir(self.model_dir, name), results, results["global_step"])
            cluster.chief_value(self.strategy, 0.0)  # Other workers' early-stopping hooks read them next.
        return results

    def evaluation_results(self, loss_sum: float, batches: float) -> dict[str, Any]:
        """What `evaluate` returns besides `global_step`: `loss` (the mean of the `batches` per-batch
        losses that summed to `loss_sum`) and each of `eval_metrics` by name. A loop whose model
        keeps its own metrics (`CannedLoop`) overrides it."""
        results: dict[str, Any] = {"loss": loss_sum / batches if batches else float("nan")}
        for metric in self.eval_metrics:
            results[metric.name] = _to_python(metric.result())
        return results

    @contextlib.contextmanager
    def _weights_from(self, checkpoint_path: str | os.PathLike | None) -> Iterator[None]:
        """TF1's `evaluate`/`predict(checkpoint_path=...)`: the block runs on that checkpoint's
        weights and global step, then the loop gets its own back (`checkpoints.weights_from`)."""
        with checkpoints.weights_from(self.model, checkpoint_path, optimizer=self.optimizer, restore=self.restore_path):
            yield

    def _check_trained(self, caller: str) -> None:
        """TF1 raised when `evaluate`/`predict` found no checkpoint for an estimator never trained."""
        if (
            not self._prepared
            and self.model_dir is not None
            and checkpoints.latest_checkpoint(self.model_dir) is None
        ):
            raise ValueError(f"Could not find trained model in model_dir: {self.model_dir!r} (nothing to {caller}).")

    # -- predict -------------------------------------------------------------------------------

    def predict(
        self,
        data: Any,
        *,
        predict_keys: Any = None,
        hooks: list[Any] | None = None,
        yield_single_examples: bool = True,
        checkpoint_path: str | os.PathLike | None = None,
    ) -> Iterator[Any]:
        """Yields predictions as TF1 `Estimator.predict(input_fn)` did: one dict per example.

        Args:
            data: As for `train`; labels in the batches are ignored.
            predict_keys: Only these keys of the prediction dicts (a str or a list), or all.
            hooks: TF1 `SessionRunHook`s, run with the loop's own `prediction_hooks()`: one
                session run per batch, its hooks' `after_run` before the batch is yielded.
            yield_single_examples: False yields each batch's dict of arrays instead.
            checkpoint_path: Predict with this checkpoint's weights (see `evaluate`).
        """
        if checkpoint_path is None:
            self._check_trained("predict")
        self._prepare(data)
        with self._weights_from(checkpoint_path):
            yield from self._predict(data, predict_keys, hooks, yield_single_examples)

    def _predict(self, data: Any, predict_keys: Any, hooks: list[Any] | None, yield_single_examples: bool) -> Iterator[Any]:
        if isinstance(predict_keys, str):
            predict_keys = [predict_keys]
        if _is_parameter_server(self.strategy):
            batches, step = DataSource(data, self.strategy).local(None), tf.function(self.predict_step)
        else:
            batches, step = self.distribute(data), self.distributed_predict_step
        run_hooks = self._hooks(hooks, "infer", "predict")
        run_hooks.begin()
        for batch in batches:
            run_hooks.before_run()
            outputs = tf.nest.map_structure(lambda t: t.numpy(), step(batch))
            stop = run_hooks.after_run()
            if isinstance(outputs, Mapping) and predict_keys is not None:
                outputs = {key: outputs[key] for key in predict_keys}
            if not yield_single_examples:
                yield outputs
            else:
                size = len(tf.nest.flatten(outputs)[0])
                for index in range(size):
                    yield tf.nest.map_structure(lambda array: array[index], outputs)
            if stop:
                break
        run_hooks.end()

    # -- export --------------------------------------------------------------------------------

    def export_saved_model(
        self,
        export_dir_base: str | os.PathLike,
        serving_input_receiver_fn: Any,
        assets_extra: Mapping[str, str] | None = None,
        as_text: bool = False,
        checkpoint_path: str | None = None,
        experimental_mode: Any = None,
    ) -> bytes:
        """TF1 `Estimator.export_saved_model`: the PREDICT signatures of this loop's model.

        The loop's `export_outputs(features)` (a model_fn's `export_outputs=`) or its
        `predict_step` give the signatures (`tfmigrate.runtime.export.export_saved_model`). A loop
        that has not run yet exports `model_dir`'s latest checkpoint, as TF1 did.

        Returns:
            The timestamped export directory, as bytes.
        """
        return export_saved_model(
            self,
            export_dir_base,
            serving_input_receiver_fn,
            assets_extra=assets_extra,
            as_text=as_text,
            checkpoint_path=checkpoint_path,
            experimental_mode=experimental_mode,
        )

    # -- what the generated subclass defines -----------------------------------------------------

    def train_steps(self, iterator: Any, steps: tf.Tensor) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError("the migrated loop defines `train_steps`")

    def test_steps(self, iterator: Any, steps: tf.Tensor) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError("the migrated loop defines `test_steps`")

    def counted_test_step(self, batch: Any) -> tuple[Any, Any]:
        """`test_step` on one replica's batch, and 1.0 where that batch held examples, 0.0 where
        it was the empty one a last step leaves a replica (its loss counted 0)."""
        held = tf.cast(tf.shape(tf.nest.flatten(batch)[0])[0] > 0, tf.float32)
        loss = tf.cast(self.test_step(batch), tf.float32)
        return tf.where(held > 0, loss, tf.zeros_like(loss)), held

    def predict_step(self, batch: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError("the model_fn had no PREDICT branch that tfmigrate could migrate")

    def distributed_predict_step(self, batch: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError("the model_fn had no PREDICT branch that tfmigrate could migrate")


class CannedLoop(EstimatorLoop):
    """A custom training loop driving a canned estimator's Keras model (`tfm.canned.*`, `--target ctl`).

    The canned model already owns its steps (`train_step` with the head's loss and each part's
    optimizer, `update_eval_metrics` for the head's metrics, `predict_step` for the head's
    predictions), so nothing is generated: this loop runs them through `strategy.run` (the
    runtime engine's `step_on_replicas`, up to `steps_per_loop` of them per `tf.function` call)
    with `EstimatorLoop`'s host side: `steps`/`max_steps`, checkpoints in `model_dir` (the Keras
    target's object graph, so either target continues the other's), restoring the latest one
    (a TF1 estimator's through the model's own `load_tf1_checkpoint`), hooks, listeners and
    exports. `evaluate` returns the head's keys (`loss`, `average_loss`, `accuracy`, `auc`, ...)
    and `global_step`, as the estimator did.

    Args:
        strategy: The strategy the model was built under (`with strategy.scope(): model = ...`).
        model: A `tfm.canned` model (`DNNClassifier(...)`, ...), built in `strategy.scope()`.
        config, model_dir, steps_per_loop: As for `EstimatorLoop`.

    Raises:
        TypeError: If `model` is not a canned model.
        ValueError: Under ParameterServerStrategy (train the canned model with the Keras target's
            `tfm.fit`, whose engine schedules it on the workers).
    """

    def __init__(
        self,
        strategy: tf.distribute.Strategy,
        model: keras.Model,
        *,
        config: Any = None,
        model_dir: str | os.PathLike | None = None,
        steps_per_loop: int = 1,
    ) -> None:
        super().__init__(strategy, config=config, model_dir=model_dir, steps_per_loop=steps_per_loop)
        if not (isinstance(model, keras.Model) and hasattr(model, "update_eval_metrics") and hasattr(model, "eval_results")):
            raise TypeError(f"CannedLoop drives a tfmigrate.runtime.canned model, got {type(model).__name__}.")
        if _is_parameter_server(strategy):
            raise ValueError(
                "CannedLoop does not run under ParameterServerStrategy: train the canned model with "
                "`tfm.fit`/`tfm.evaluate` (the Keras target), whose engine schedules its steps on the workers."
            )
        if model.distribute_strategy is not strategy:
            raise ValueError("Build the canned model in the loop's `strategy.scope()`.")
        self.model = model
        self.optimizer = model.optimizer
        self.checkpoint = checkpoints.model_checkpoint(model)
        self.eval_metrics = list(model.metrics)
        self._train_function = engine.multi_step_function(engine.step_on_replicas(model, "train_step", gather=False))
        self._test_function = engine.multi_step_function(
            engine.step_on_replicas(model, "update_eval_metrics", gather=False)
        )
        self.distributed_predict_step = tf.function(engine.step_on_replicas(model, "predict_step", gather=True))

    def _build_variables(self, data: Any) -> None:
        # As `tfm.fit` builds it: every layer, the optimizer, the TF-native increments some strategies need.
        ensure_built(self.model, DataSource(data, self.strategy), with_labels=False)

    def restore_path(self, path: str) -> str:
        """Restores the checkpoint `path` (the runtime's, or the canned estimator's TF1 one) as
        `tfm.fit` does: every part's optimizer, the compiled learning rate kept."""
        return checkpoints.restore_path(self.model, path, where="CannedLoop")

    def train_steps(self, iterator: Any, steps: tf.Tensor) -> Any:
        """Up to `steps` train steps through `strategy.run`; the last step's loss (None if none ran)."""
        _, outputs = self._train_function(iterator, steps)
        return outputs.get_value()["loss"] if outputs.has_value() else None

    def test_steps(self, iterator: Any, steps: tf.Tensor) -> tuple[Any, Any]:
        """Up to `steps` batches into the head's metrics: (the last batch's loss, batches run)."""
        ran, outputs = self._test_function(iterator, steps)
        return (outputs.get_value() if outputs.has_value() else 0.0), ran

    def predict_step(self, batch: Any) -> Any:
        return self.model.predict_step(batch)

    def evaluation_results(self, loss_sum: float, batches: float) -> dict[str, Any]:
        """The head's results, keyed as the canned estimator's `evaluate` keyed them."""
        return {key: _to_python(value) for key, value in self.model.eval_results().items()}


def _loss_value(loss: Any) -> float | None:
    """A `train_steps`/`test_steps` loss as a Python float (None when the loop returned none)."""
    if loss is None:
        return None
    return float(np.asarray(loss))


def _to_python(value: Any) -> Any:
    array = np.asarray(value)
    return float(array) if array.size == 1 else array.tolist()
