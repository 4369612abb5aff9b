"""The graph-mode tier's calls: Estimator's `train`, `evaluate` and `predict` in a TF1 graph and
Session, as TF 2.15's Estimator ran them (`tfm.estimator.Estimator` takes a call here where the
strategy tier cannot run it, or under TFMIGRATE_MODEL_FN_TIER=graph).

`GraphModeCalls` is a part of `Estimator` (a mixin): it uses the estimator's own construction of
a mode (`_start_graph`, `_call_input_fn`, `_call_model_fn`, `_maybe_warm_start`), its config,
`model_dir` and Session config, and TPUEstimator overrides its `_train_in_graph` (the in-graph
`iterations_per_loop` loop, `tpu_loop.py`).
"""

from __future__ import annotations

import contextlib
from typing import Any

import tensorflow as tf
from tensorflow.python.training import evaluation as tf1_evaluation
from tensorflow.python.training import training_util

from ..._logging import logger
from ...estimator.spec import LOSS_METRIC_KEY
from ...inputs import ModeKeys
from ..input_fn import parse_input_fn_result
from ..step_order import order_step_reads_before_writes, order_writes_after_read
from . import distribute

__all__ = ["GraphModeCalls", "select_keys"]


class GraphModeCalls:
    """Estimator's calls in TF1 graph mode (see the module doc)."""

    # -- train -----------------------------------------------------------------------------------

    def _train_in_graph_mode(self, input_fn, hooks, steps, max_steps, listeners):
        """Estimator's `train` in a TF1 graph: a `MonitoredTrainingSession` with Estimator's hooks
        (under a RunConfig strategy, its replicas in that graph: `distribute.py`)."""
        if steps is not None or max_steps is not None:
            hooks.append(tf.compat.v1.train.StopAtStepHook(steps, max_steps))
        if self._config.train_distribute is not None:
            distribute.check_strategy(self._config.train_distribute)
            loss = distribute.train(self, self._config.train_distribute, input_fn, hooks, listeners)
        else:
            with tf.Graph().as_default() as graph, graph.device(self._config.device_fn):
                loss = self._train_in_graph(graph, input_fn, hooks, listeners)
        logger.info("Loss for final step: %s.", loss)

    def _train_in_graph(self, graph, input_fn, hooks, listeners):
        global_step = self._start_graph(graph)
        first = len(graph.get_operations())
        step_read = None
        if global_step is not None:
            step_read = training_util._get_or_create_global_step_read(graph)  # noqa: SLF001 - Estimator's step read
        features, labels, input_hooks = parse_input_fn_result(self._call_input_fn(input_fn, ModeKeys.TRAIN))
        spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self._config)
        if order_step_reads_before_writes(graph, first, [spec.train_op, spec.loss]) is None:
            logger.info("The training step's reads and writes of its variables run in the order TF picks: "
                        "ordering reads first would make a cycle.")
        global_step = tf.compat.v1.train.get_global_step(graph)
        if step_read is not None and global_step is not None:  # (what the hooks fetch: the step's first value)
            order_writes_after_read(graph, first, [spec.train_op, spec.loss], global_step, step_read)
        return self._train_with_spec(spec, list(input_hooks), hooks, global_step, listeners)

    def _training_hooks(self, spec, worker_hooks, hooks, global_step, steps_per_run=1):
        worker_hooks.extend(hooks)
        worker_hooks.append(tf.compat.v1.train.NanTensorHook(spec.loss))
        if self._config.log_step_count_steps is not None:
            worker_hooks.append(
                tf.compat.v1.train.LoggingTensorHook(
                    {"loss": spec.loss, "step": global_step},
                    every_n_iter=max(1, self._config.log_step_count_steps // steps_per_run),
                )
            )
        worker_hooks.extend(spec.training_hooks)
        return worker_hooks

    def _train_with_spec(self, spec, worker_hooks, hooks, global_step, listeners, steps_per_run=1):
        """Runs `spec.train_op` until a hook stops. `steps_per_run` > 1: each run is a loop of up to
        that many steps (`tpu_loop`), whose hooks write the summaries."""
        config = self._config
        if self._warm_start_settings and not tf.train.latest_checkpoint(self._model_dir):
            logger.info("Warm-starting with WarmStartSettings: %s", self._warm_start_settings)
            tf.compat.v1.train.warm_start(*self._warm_start_settings)
        summaries = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
        if not any(summary.op.name == "loss" for summary in summaries):
            tf.compat.v1.summary.scalar("loss", spec.loss)
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.LOSSES, spec.loss)
        worker_hooks = self._training_hooks(spec, worker_hooks, hooks, global_step, steps_per_run)
        if not (spec.scaffold.saver or tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SAVERS)):
            tf.compat.v1.add_to_collection(
                tf.compat.v1.GraphKeys.SAVERS,
                tf.compat.v1.train.Saver(
                    sharded=True,
                    max_to_keep=config.keep_checkpoint_max,
                    keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
                    defer_build=True,
                    save_relative_paths=True,
                ),
            )
        chief_hooks = []
        saver_hooks = [
            h for h in worker_hooks + list(spec.training_chief_hooks) if isinstance(h, tf.compat.v1.train.CheckpointSaverHook)
        ]
        if (config.save_checkpoints_secs or config.save_checkpoints_steps) and not saver_hooks:
            chief_hooks = [
                tf.compat.v1.train.CheckpointSaverHook(
                    self._model_dir,
                    save_secs=config.save_checkpoints_secs,
                    save_steps=config.save_checkpoints_steps,
                    scaffold=spec.scaffold,
                    save_graph_def=config.checkpoint_save_graph_def,
                )
            ]
            saver_hooks = [chief_hooks[0]]
        if listeners:
            if not saver_hooks:
                raise ValueError(
                    "There should be a CheckpointSaverHook to use saving_listeners. Please set one of the "
                    "RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs."
                )
            for listener in listeners:
                if listener not in saver_hooks[0]._listeners:  # noqa: SLF001 - TF1 appended to the hook's list
                    saver_hooks[0]._listeners.append(listener)  # noqa: SLF001
        with tf.compat.v1.train.MonitoredTrainingSession(
            is_chief=True,
            checkpoint_dir=self._model_dir,
            scaffold=spec.scaffold,
            hooks=worker_hooks,
            chief_only_hooks=tuple(chief_hooks) + tuple(spec.training_chief_hooks),
            save_checkpoint_secs=0,
            save_summaries_steps=config.save_summary_steps if steps_per_run == 1 else 0,
            config=self._session_config,
            max_wait_secs=config.session_creation_timeout_secs,
            log_step_count_steps=config.log_step_count_steps,
            save_graph_def=config.checkpoint_save_graph_def,
        ) as session:
            loss, steps = None, 0
            while not session.should_stop():
                steps += 1
                _, loss = session.run([spec.train_op, spec.loss])
        if steps == 0:
            logger.warning("Training with estimator made no steps. Perhaps input is empty or misspecified.")
        return loss

    # -- evaluate --------------------------------------------------------------------------------

    def _evaluate_in_graph_mode(self, input_fn, hooks, checkpoint_path) -> dict:
        """Estimator's `evaluate` in a TF1 graph: TF1's own evaluation loop (`_evaluate_once`)."""
        strategy = self._config.eval_distribute
        if strategy is not None:
            distribute.check_strategy(strategy)
        with tf.Graph().as_default() as graph:
            scope = distribute.eval_scope(strategy) if strategy is not None else contextlib.nullcontext()
            with scope:
                scaffold, update_op, eval_dict, all_hooks = self._evaluate_build_graph(graph, input_fn, hooks, checkpoint_path)
                return tf1_evaluation._evaluate_once(  # noqa: SLF001 - TF1's evaluation loop, still in TF
                    checkpoint_path=checkpoint_path,
                    master=self._config.evaluation_master or "",
                    scaffold=scaffold,
                    eval_ops=update_op,
                    final_ops=eval_dict,
                    hooks=all_hooks,
                    config=self._session_config,
                )

    def _evaluate_build_graph(self, graph, input_fn, hooks, checkpoint_path):
        self._start_graph(graph)
        if self._config.eval_distribute is not None:
            scaffold, evaluation_hooks, input_hooks, update_op, eval_dict = distribute.build_eval_graph(
                self, self._config.eval_distribute, graph, input_fn
            )
        else:
            scaffold, evaluation_hooks, input_hooks, update_op, eval_dict = self._build_eval_ops(input_fn)
        self._maybe_warm_start(checkpoint_path)
        if tf.compat.v1.GraphKeys.GLOBAL_STEP in eval_dict:
            raise ValueError(
                "Metric with name `global_step` is not allowed, because Estimator already defines a default metric "
                "with the same name."
            )
        eval_dict[tf.compat.v1.GraphKeys.GLOBAL_STEP] = tf.compat.v1.train.get_global_step(graph)
        all_hooks = list(input_hooks) + list(hooks) + list(evaluation_hooks or [])
        if scaffold and scaffold.local_init_op:
            tf1_evaluation._get_or_create_eval_step()  # noqa: SLF001
            scaffold = tf.compat.v1.train.Scaffold(
                local_init_op=tf.group(scaffold.local_init_op, tf.compat.v1.train.Scaffold.default_local_init_op()),
                copy_from_scaffold=scaffold,
            )
        return scaffold, update_op, eval_dict, all_hooks

    def _build_eval_ops(self, input_fn):
        features, labels, input_hooks = parse_input_fn_result(self._call_input_fn(input_fn, ModeKeys.EVAL))
        spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self._config)
        metric_ops = dict(spec.eval_metric_ops)
        if LOSS_METRIC_KEY in metric_ops:
            raise ValueError(
                f'Metric with name "{LOSS_METRIC_KEY}" is not allowed, because Estimator already defines a default '
                "metric with the same name."
            )
        metric_ops[LOSS_METRIC_KEY] = tf.compat.v1.metrics.mean(spec.loss)
        updates, eval_dict = [], {}
        for key, (value, update) in sorted(metric_ops.items()):
            eval_dict[key] = value
            updates.append(update)
        update_op = tf.group(*updates) if updates else None
        return spec.scaffold, spec.evaluation_hooks, input_hooks, update_op, eval_dict

    # -- predict ---------------------------------------------------------------------------------

    def _predict_in_graph_mode(self, input_fn, predict_keys, hooks, checkpoint_path, yield_single_examples):
        """Estimator's `predict` in a TF1 graph: a `MonitoredSession` run per batch."""
        with tf.Graph().as_default() as graph:
            self._start_graph(graph)
            features, _, input_hooks = parse_input_fn_result(self._call_input_fn(input_fn, ModeKeys.PREDICT))
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self._config)
            self._maybe_warm_start(checkpoint_path)
            predictions = select_keys(spec.predictions, predict_keys)
            all_hooks = list(input_hooks) + hooks + list(spec.prediction_hooks or [])
            creator = tf.compat.v1.train.ChiefSessionCreator(
                checkpoint_filename_with_path=checkpoint_path, scaffold=spec.scaffold, config=self._session_config
            )
            with tf.compat.v1.train.MonitoredSession(session_creator=creator, hooks=all_hooks) as session:
                while not session.should_stop():
                    values = session.run(predictions)
                    if not yield_single_examples:
                        yield values
                    elif not isinstance(predictions, dict):
                        yield from values
                    else:
                        for index in range(_batch_length(values)):
                            yield {key: value[index] for key, value in values.items()}


def select_keys(predictions: Any, predict_keys: Any) -> Any:
    if not predict_keys:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
    chosen = {key: value for key, value in predictions.items() if key in predict_keys}
    if not chosen:
        raise ValueError(f"Expected to run at least one output from {list(predictions)}, provided {predict_keys}.")
    return chosen


def _batch_length(values: dict) -> int:
    length = None
    for key, value in values.items():
        length = length or value.shape[0]
        if value.shape[0] != length:
            raise ValueError(f"Batch length of predictions should be same. {key} has different batch length than others.")
    return length or 0
