"""How a model_fn's gradients meet across replicas in the strategy tier.

A TF1 model_fn reduces its gradients in one of two ways, and the strategy tier keeps each:

  * **The TPU code path** (`TPUEstimator(use_tpu=True)`, `params['use_tpu']`): the model_fn wraps
    its optimizer in `tf.compat.v1.tpu.CrossShardOptimizer`, which divides the loss by the shard
    count (when it computes the gradients) and sums the gradients across shards with
    `tpu_ops.cross_replica_sum` (when it applies them). On a TPU that op is the TPU's all-reduce;
    under any other strategy `tpu_code_path` makes it the strategy's SUM all-reduce and sets the
    shard count to the replica count. TF1's V1 optimizers knew no strategy on a TPU, so they see
    none here either (no loss scaling of their own, no second all-reduce): each replica applies
    the same summed gradients. A model that clips each replica's gradients before
    `CrossShardOptimizer` sums them (BERT) does so here too.
  * **Everything else**: gradients are the mean over the replicas of each replica's gradients,
    taken where the model_fn asks for them (`tf.gradients`, `tf.compat.v1.gradients`, a V1
    optimizer's `compute_gradients`), before any clipping (`mean_gradients`). That gives a
    replicated run the numbers of one device on the whole batch wherever the model's math does
    not depend on the split. V1 optimizers then apply those means as they did with no strategy
    (no loss scaling, no second all-reduce of their own).

`IndexedSlices` (an embedding's gradient) stay sparse through the all-reduce.

A program's own strategy (`RunConfig(train_distribute=...)`, `eval_distribute`) is run as TF 1.x's
Estimator ran it (`estimator_loss_scaling`): TF's own V1-optimizer code under the strategy, in the
strategy's "scale the loss for Estimator" context. A V1 optimizer's `compute_gradients` divides
each replica's loss by the replica count (unless the last `tf.compat.v1.losses` reduction was a
SUM) and its `apply_gradients` sums the gradients across replicas; gradients a model_fn takes
itself are not met. The reported loss is the replicas' losses meaned where the optimizer scaled
them, else summed (`estimator_loss_reduction`), as Estimator reported it.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import tensorflow as tf
from tensorflow.python.distribute import device_util
from tensorflow.python.ops import gradients as _gradients_module
from tensorflow.python.ops import gradients_impl
from tensorflow.python.tpu import tpu_function
from tensorflow.python.tpu.ops import tpu_ops
from tensorflow.python.training import optimizer as _v1_optimizer

from .tf1_build import patched

__all__ = ["estimator_loss_reduction", "estimator_loss_scaling", "first_replica", "mean_gradients", "tpu_code_path",
           "tpu_shards", "values_of_the_first_replica"]


def _replica_context() -> Any:
    context = tf.distribute.get_replica_context()
    return context if context is not None and context.num_replicas_in_sync > 1 else None


def _placed(value: Any) -> Any:
    """`value`, on the replica's device where it has none: a strategy all-reduces a tensor to its
    own device, and TF's gradient code builds some sums with no device (an `AddN` of a variable's
    gradients from several uses, seen in BERT under MultiWorkerMirrored in a `while_loop`)."""
    if isinstance(value, tf.Tensor) and not value.device:
        with tf.device(device_util.current()):
            return tf.identity(value)
    return value


def _all_reduce(op: Any, values: list[Any]) -> list[Any]:
    context = _replica_context()
    if context is None or not values:
        return values
    return list(context.all_reduce(op, [_placed(v) for v in values]))


def _meaned(gradient_fn: Any) -> Any:
    def gradients(ys, xs, *args, **kwargs):
        result = gradient_fn(ys, xs, *args, **kwargs)
        present = [i for i, g in enumerate(result) if g is not None]
        reduced = _all_reduce(tf.distribute.ReduceOp.MEAN, [result[i] for i in present])
        result = list(result)
        for i, value in zip(present, reduced):
            result[i] = value
        return result

    gradients.__wrapped__ = gradient_fn
    return gradients


@contextlib.contextmanager
def mean_gradients() -> Iterator[None]:
    """While a step is traced: gradients are the mean over the replicas (see the module doc)."""
    v1 = gradients_impl.gradients
    v2 = gradients_impl.gradients_v2
    with patched(
        (tf, "gradients", _meaned(v2)),
        (tf.compat.v1, "gradients", _meaned(v1)),
        (_gradients_module, "gradients", _meaned(v1)),
    ), _v1_optimizers_without_strategy():
        yield


def _cross_replica_sum(x, group_assignment=None, name=None):
    if group_assignment is not None:
        raise NotImplementedError("cross_replica_sum with a group_assignment runs on TPUs only")
    return _all_reduce(tf.distribute.ReduceOp.SUM, [x])[0]


def _unscaled_loss(loss_value):
    return loss_value


def _apply_without_strategy(original: Any) -> Any:
    def apply_gradients(self, grads_and_vars, global_step=None, name=None, skip_gradients_aggregation=False):
        return original(self, grads_and_vars, global_step=global_step, name=name, skip_gradients_aggregation=True)

    return apply_gradients


@contextlib.contextmanager
def tpu_code_path(num_replicas: int) -> Iterator[None]:
    """While a step is traced: `CrossShardOptimizer` sums over the strategy's replicas, as it
    summed over TPU shards, and V1 optimizers do as they did on a TPU (see the module doc)."""
    del num_replicas  # each replica's own thread enters `tpu_shards`
    with patched((tpu_ops, "cross_replica_sum", _cross_replica_sum)), _v1_optimizers_without_strategy():
        yield


@contextlib.contextmanager
def tpu_shards(num_replicas: int) -> Iterator[None]:
    """Entered in each replica's call on the TPU code path: the shard count CrossShardOptimizer
    divides the loss by (TF's TPU context is per thread, and MirroredStrategy's replicas are
    threads)."""
    if tpu_function.get_tpu_context().number_of_shards is not None:
        yield
        return
    with tpu_function.tpu_shard_context(num_replicas):
        yield


@contextlib.contextmanager
def _v1_optimizers_without_strategy() -> Iterator[None]:
    """V1 optimizers apply the gradients they are given on each replica, as they did with no
    strategy: no loss divided by the replica count, no SUM all-reduce of their own (the gradients
    met already: `mean_gradients`, or CrossShardOptimizer's sum)."""
    optimizer = _v1_optimizer.Optimizer
    with patched(
        (optimizer, "_scale_loss", staticmethod(_unscaled_loss)),
        (optimizer, "apply_gradients", _apply_without_strategy(optimizer.apply_gradients)),
    ):
        yield


def estimator_loss_scaling(strategy: Any) -> contextlib.AbstractContextManager:
    """While inside (a step traced, or TF 1.x's graph-mode replicas built, under a RunConfig's
    strategy): V1 optimizers scale the loss and meet the gradients as they did under TF 1.x's
    Estimator (see the module doc). The strategy's own "scale the loss for Estimator" switch."""
    scale = getattr(strategy, "_scale_loss_for_estimator_enabled", None)
    return scale() if scale is not None else contextlib.nullcontext()


def first_replica(strategy: Any, values: Any) -> list:
    """Each of `values` (per-replica) as the first replica computed it: TF 1.x's Estimator took a
    replicated spec's hooks, and their fetches, from the first replica."""
    return [strategy.experimental_local_results(value)[0] for value in values]


def estimator_loss_reduction() -> Any:
    """MEAN where a V1 optimizer scaled each replica's loss in the graph being traced, else SUM
    (how TF 1.x's Estimator reduced the replicas' losses for its report)."""
    if getattr(tf.compat.v1.get_default_graph(), "_is_loss_scaled_by_optimizer", False):
        return tf.distribute.ReduceOp.MEAN
    return tf.distribute.ReduceOp.SUM


def values_of_the_first_replica(strategy: Any, variables: list) -> None:
    """Sets every copy of `variables`, on every worker, to the value the first replica holds (the
    chief's, which read the checkpoint): one all-reduce in which only replica 0 gives its values.
    Under several workers each process restored what its own `model_dir` showed; TF 1.x's chief
    restored, and the other workers took the chief's values."""
    numeric = [v for v in variables if v.dtype.is_floating or v.dtype.is_integer or v.dtype == tf.bool]
    if not numeric:
        return

    def replica() -> list:
        first = tf.equal(tf.distribute.get_replica_context().replica_id_in_sync_group, 0)
        values = [tf.cast(v.read_value(), tf.float64) for v in numeric]  # (exact for float32, int32 and steps)
        given = [tf.where(first, value, tf.zeros_like(value)) for value in values]
        return tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, given)

    summed = strategy.experimental_local_results(strategy.run(tf.function(replica)))[0]
    for variable, value in zip(numeric, summed):
        for copy in strategy.experimental_local_results(variable):
            copy.assign(tf.cast(value, variable.dtype))
