"""`RunConfig(train_distribute=...)` / `eval_distribute=...` on the hosted Estimator.

TF 2.15's Estimator ran the model_fn under a strategy in TF1 graph mode, and TF 2.21's
`MirroredStrategy` / `OneDeviceStrategy` still build those graph-mode replicas (measured: the
oracle's numbers come back within 1e-5: the hosted programs mirrored_dnn and bn_dnn in
tests/runtime/test_hosted_estimator.py). This module
does what TF 2.15's `Estimator._actual_train_model_distributed` and
`_call_model_fn_eval_distributed` did:

  * training: a fresh graph; under `strategy.scope()` and the strategy's "scale the loss for
    Estimator" context (a V1 optimizer then divides each replica's loss by the replica count, as
    TF1 did), the graph seed is set, `input_fn` is called through
    `strategy.make_input_fn_iterator` (once per input pipeline, with `input_context` when it asks
    for one; each replica takes its own batch of the dataset, so the batch size in `input_fn` is
    the per-replica batch), then the global step is created, then `model_fn` runs once per
    replica (`extended.call_for_each_replica`). The reported loss is the replicas' losses
    reduced (MEAN when the optimizer scaled them, else SUM), the train op is the replicas' train
    ops grouped, the replicas' Scaffolds are merged, and hooks come from the first replica.
    Checkpoints, hooks and the session are Estimator's usual ones;
  * evaluation: the steps-per-run local variable, then under `strategy.scope()`: seed, global
    step, `input_fn` through the strategy, `model_fn` per replica, `loss` as a per-replica
    `metrics.mean` (metrics aggregate across replicas), metric update ops grouped per replica;
  * `predict` and exports never used the strategy in TF 2.15, and do not here.

Other strategies (MultiWorkerMirrored, ParameterServer, CentralStorage, TPU) are refused with an
error that says what to do; they were not checked against the oracle. So is a multi-device
MirroredStrategy whose cross-device ops are `CollectiveAllReduce` (the choice on CPUs when the
strategy is created with eager execution on): Estimator's training `session.run` never returns
with it, on TF 2.15 as on TF 2.21 (measured on two logical CPUs, with 2 and 8 inter-op threads).
Created after `disable_eager_execution()`, MirroredStrategy reduces with `ReductionToOneDevice`.

Measured, and reproduced here because TF 2.15 does it: when the evaluation input ends unevenly
(some replica gets no last batch), whether the other replicas' last batch is counted is a race
in TF 2.15 (run to run, the oracle's metrics differ); give every replica whole batches.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf
from tensorflow.python.training import basic_session_run_hooks
from tensorflow.python.training import training_util

from ...inputs import ModeKeys
from ..strategy.replicas import estimator_loss_scaling, first_replica
from ...estimator.spec import LOSS_METRIC_KEY, EstimatorSpec
from ..input_fn import split_features_labels

_SUPPORTED = ("MirroredStrategy", "MirroredStrategyV1", "OneDeviceStrategy", "OneDeviceStrategyV1")


def _collective_all_reduce(strategy: Any) -> bool:
    from tensorflow.python.distribute import cross_device_ops

    ops = getattr(strategy.extended, "_cross_device_ops", None)
    return strategy.num_replicas_in_sync > 1 and isinstance(ops, cross_device_ops.CollectiveAllReduce)


def check_strategy(strategy: Any) -> None:
    """Raises NotImplementedError for a strategy the hosted Estimator does not run."""
    name = type(strategy).__name__
    if isinstance(strategy, (tf.distribute.MirroredStrategy, tf.compat.v1.distribute.MirroredStrategy)):
        if _collective_all_reduce(strategy):
            raise NotImplementedError(
                f"tfm.estimator.Estimator: RunConfig(train_distribute/eval_distribute={name}) over "
                f"{strategy.num_replicas_in_sync} devices all-reduces with CollectiveAllReduce (what MirroredStrategy "
                "picks on CPUs when it is created with eager execution on). Estimator's graph-mode training "
                "session never returns with it: TF 2.15 + tensorflow-estimator hang the same way (measured on "
                "two logical CPUs), so there are no TF1 numbers to reproduce. Create the strategy after "
                "tf.compat.v1.disable_eager_execution() (it then reduces with ReductionToOneDevice, as TF1 "
                "programs did), or pass cross_device_ops=tf.distribute.ReductionToOneDevice()."
            )
        return
    if isinstance(strategy, (tf.distribute.OneDeviceStrategy, tf.compat.v1.distribute.OneDeviceStrategy)):
        return
    raise NotImplementedError(
        f"tfm.estimator.Estimator: RunConfig(train_distribute/eval_distribute={name}) is not supported. "
        "The hosted tier runs a TF1 model_fn under tf.distribute.MirroredStrategy or OneDeviceStrategy "
        f"(in-process replicas, TF 2.15's graph-mode path); {name} was not checked against TF 2.15. "
        "Use MirroredStrategy(devices=[...]) for one machine, remove the strategy to train on one device, "
        "or migrate the program with `tfmigrate --target keras` for multi-worker training."
    )


class _IteratorInitializerHook(tf.compat.v1.train.SessionRunHook):
    """Initializes a strategy's input_fn iterator when the session is created."""

    def __init__(self, iterator: Any) -> None:
        self._iterator = iterator

    def begin(self) -> None:
        self._initializer = self._iterator.initialize()

    def after_create_session(self, session, coord) -> None:
        session.run(self._initializer)


def _input_iterator(estimator: Any, strategy: Any, input_fn: Any, mode: str) -> tuple[Any, list]:
    iterator = strategy.make_input_fn_iterator(
        lambda input_context: estimator._call_input_fn(input_fn, mode, input_context)  # noqa: SLF001
    )
    return iterator, [_IteratorInitializerHook(iterator)]


def _loss_reduce_op() -> Any:
    """MEAN where a V1 optimizer scaled each replica's loss (Estimator's loss report), else SUM."""
    if getattr(tf.compat.v1.get_default_graph(), "_is_loss_scaled_by_optimizer", False):
        return tf.compat.v1.distribute.get_loss_reduction()
    return tf.distribute.ReduceOp.SUM


def _per_replica_ready_for_local_init_op(scaffold: Any) -> Any:
    if scaffold.ready_for_local_init_op is not None:
        return scaffold.ready_for_local_init_op
    return tf.compat.v1.train.Scaffold.get_or_default(
        "ready_for_local_init_op",
        tf.compat.v1.GraphKeys.READY_FOR_LOCAL_INIT_OP,
        lambda: tf.compat.v1.report_uninitialized_variables(tf.compat.v1.global_variables()),
    )


def combine_scaffolds(grouped: Any, strategy: Any) -> Any:
    """One Scaffold from the replicas' Scaffolds (ops grouped, readiness concatenated, first saver)."""
    scaffolds = strategy.experimental_local_results(grouped)

    def grouped_or_none(values: list) -> Any:
        return strategy.group(values) if values else None

    def concatenated(value: Any) -> Any:
        if value is None:
            return None
        parts = tf.nest.flatten(strategy.experimental_local_results(value))
        return parts[0] if len(parts) == 1 else tf.concat(parts, 0)

    feeds = [s.init_feed_dict for s in scaffolds if s.init_feed_dict is not None]
    init_fns = [s._user_init_fn for s in scaffolds if s._user_init_fn is not None]  # noqa: SLF001 - as TF1
    ready = strategy.extended.call_for_each_replica(lambda scaffold: scaffold.ready_op, args=(grouped,))
    ready_for_local = strategy.extended.call_for_each_replica(_per_replica_ready_for_local_init_op, args=(grouped,))
    savers = [s.saver for s in scaffolds if s.saver is not None]
    return tf.compat.v1.train.Scaffold(
        init_op=grouped_or_none([s.init_op for s in scaffolds if s.init_op is not None]),
        ready_op=concatenated(ready),
        ready_for_local_init_op=concatenated(ready_for_local),
        local_init_op=grouped_or_none([s.local_init_op for s in scaffolds if s.local_init_op is not None]),
        summary_op=grouped_or_none([s.summary_op for s in scaffolds if s.summary_op is not None]),
        saver=savers[0] if savers else None,
        init_feed_dict=grouped_or_none(feeds),
        init_fn=init_fns[0] if init_fns else None,
    )


def train(estimator: Any, strategy: Any, input_fn: Any, hooks: list, listeners: list) -> Any:
    """Builds the replicated training graph in a fresh graph and trains; returns the last loss."""
    config = estimator.config
    strategy.configure(estimator._session_config)  # noqa: SLF001 - as TF 2.15 did
    with tf.Graph().as_default() as graph:
        with strategy.scope(), estimator_loss_scaling(strategy):
            tf.compat.v1.random.set_random_seed(config.tf_random_seed)
            iterator, worker_hooks = _input_iterator(estimator, strategy, input_fn, ModeKeys.TRAIN)
            global_step = estimator._create_global_step(graph)  # noqa: SLF001
            if global_step is None:
                raise ValueError("Estimator needs a global step; model_fn's graph has none.")
            tf.compat.v1.add_to_collection(training_util.GLOBAL_STEP_READ_KEY, strategy.extended.read_var(global_step))
            features, labels = split_features_labels(iterator.get_next())
            grouped = strategy.extended.call_for_each_replica(
                estimator._call_model_fn, args=(features, labels, ModeKeys.TRAIN, config)  # noqa: SLF001
            )
            loss = strategy.reduce(_loss_reduce_op(), grouped.loss, axis=None)
            spec = EstimatorSpec(
                mode=ModeKeys.TRAIN,
                loss=loss,
                train_op=strategy.group(grouped.train_op),
                training_hooks=first_replica(strategy, grouped.training_hooks),
                training_chief_hooks=first_replica(strategy, grouped.training_chief_hooks),
                scaffold=combine_scaffolds(grouped.scaffold, strategy),
            )
            return estimator._train_with_spec(spec, worker_hooks, hooks, global_step, listeners)  # noqa: SLF001


def build_eval_graph(estimator: Any, strategy: Any, graph: Any, input_fn: Any) -> tuple:
    """(scaffold, evaluation hooks, input hooks, update op, value ops) of the replicated eval graph.

    Called under `strategy.scope()` in a fresh graph, after the seed and the global step.
    """
    config = estimator.config
    iterator, input_hooks = _input_iterator(estimator, strategy, input_fn, ModeKeys.EVAL)
    features, labels = split_features_labels(iterator.get_next())
    grouped = strategy.extended.call_for_each_replica(
        estimator._call_model_fn, args=(features, labels, ModeKeys.EVAL, config)  # noqa: SLF001
    )
    metric_ops = dict(grouped.eval_metric_ops)
    if LOSS_METRIC_KEY in metric_ops:
        raise ValueError(
            f'Metric with name "{LOSS_METRIC_KEY}" is not allowed, because Estimator already defines a default '
            "metric with the same name."
        )
    metric_ops[LOSS_METRIC_KEY] = strategy.extended.call_for_each_replica(
        tf.compat.v1.metrics.mean, args=(grouped.loss,)
    )
    updates, values = [], {}
    for key, (value, update) in sorted(metric_ops.items()):
        values[key] = value
        updates.append(strategy.group(update))
    update_op = tf.group(*updates) if updates else None
    scaffold = combine_scaffolds(grouped.scaffold, strategy)
    evaluation_hooks = first_replica(strategy, grouped.evaluation_hooks)
    return scaffold, evaluation_hooks, input_hooks, update_op, values


def eval_scope(strategy: Any) -> Any:
    """What TF 2.15 entered around a distributed evaluation's graph: the steps-per-run variable
    (created outside the strategy, on the host), then `strategy.scope()`."""
    basic_session_run_hooks.get_or_create_steps_per_run_variable()
    return strategy.scope()
