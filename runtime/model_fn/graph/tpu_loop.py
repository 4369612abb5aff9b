"""TPUEstimator's `iterations_per_loop` on the CPU: the training step run in an in-graph loop.

TF 2.15's TPUEstimator ran one `session.run` per step off TPU; on TPU it ran `iterations_per_loop`
steps per `session.run` in a `while_loop` around `model_fn`. `TPUEstimator.train` here does the
latter wherever it gives the per-step numbers, because per-step session overhead dominates small
models (a hosted program ran at a third of the speed of the same program migrated to Keras with
`steps_per_execution`).

What keeps the numbers the per-step ones:

  * the loop body reads the next batch, calls `model_fn` and runs its `train_op`; iterations run
    one at a time (`parallel_iterations=1`, the next batch read after the previous update);
  * op-level random seeds come from a per-graph counter of random ops, not the op count, so the
    loop's own ops change no seed;
  * TF1 control flow (as the original's TF 1.x built it), so the body's reference variables are
    read afresh in each iteration;
  * `tf.compat.v1.train.init_from_checkpoint` in `model_fn` builds its restore ops outside the loop,
    as TPUEstimator required of it (in `scaffold_fn`) on TPU;
  * within an iteration, every read of a variable runs before that iteration's writes to it, unless
    the program orders them itself (`step_order`: the step-by-step path orders its steps so too);
  * an iteration reads its batch after its ops that do not need the batch have run, so the
    iteration that finds the input ended runs what TF 1.x's last run did (see
    `batch_after_data_free_ops`);
  * a loop ends at every step where the per-step run would have saved a checkpoint or written the
    `loss` summary, and at the last step, so both land on the same steps with the same values.

`build_train_loop` raises `NotLoopable`, and training runs step by step as TF 2.15 did, when the
loop could change what the program sees: `train(hooks=...)`, `training_hooks` or a `host_call`
(hooks may fetch tensors inside the loop), summaries made in `model_fn`, an `input_fn` that returns
tensors rather than a `Dataset`, queue runners, or anything the session runs at set-up (variable,
table or summary-writer initializers, scaffold ops, savers) built inside the loop.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import tensorflow as tf
from tensorflow.python.training import checkpoint_utils

from ..input_fn import DatasetInitializerHook, split_features_labels
from ...estimator.spec import EstimatorSpec
from .. import step_order
from ..step_order import is_acyclic
from ..strategy.tf1_build import patched, tf1_control_flow

__all__ = ["NotLoopable", "build_train_loop", "LoopStepsHook", "order_reads_before_writes"]


class NotLoopable(Exception):
    """Why the training step cannot run in an in-graph loop (training then runs step by step)."""


def _restores_outside_loops() -> contextlib.AbstractContextManager:
    """`init_from_checkpoint` called in the loop body builds its restore ops outside the loop."""
    original = checkpoint_utils._init_from_checkpoint  # noqa: SLF001 - the function init_from_checkpoint calls

    def outside_loops(*args: Any, **kwargs: Any) -> Any:
        with tf.control_dependencies(None):  # also clears the while-loop context
            return original(*args, **kwargs)

    return patched((checkpoint_utils, "_init_from_checkpoint", outside_loops))


def _in_loop(value: Any) -> bool:
    op = _as_op(value)
    return op is not None and op._get_control_flow_context() is not None  # noqa: SLF001 - TF1 control-flow context


def _as_op(value: Any) -> Any:
    return getattr(value, "op", value) if value is not None else None


def _set_up_ops(graph: tf.Graph, spec: EstimatorSpec) -> Iterator[tuple[str, Any]]:
    """(what, op) for everything the session runs when it is created."""
    keys = tf.compat.v1.GraphKeys
    for variable in graph.get_collection(keys.GLOBAL_VARIABLES) + graph.get_collection(keys.LOCAL_VARIABLES):
        yield f"the initializer of variable {variable.name}", variable.initializer
    for op in graph.get_collection(keys.TABLE_INITIALIZERS):
        yield "a lookup table initializer", _as_op(op)
    for op in graph.get_collection("_SUMMARY_WRITER_V2"):
        yield "a summary writer", _as_op(op)
    scaffold = spec.scaffold
    for name in ("init_op", "ready_op", "ready_for_local_init_op", "local_init_op", "summary_op"):
        yield f"the scaffold's {name}", _as_op(getattr(scaffold, name, None))
    savers = list(graph.get_collection(keys.SAVERS)) + ([scaffold.saver] if scaffold.saver is not None else [])
    for saver in savers:
        saver_def = getattr(saver, "saver_def", None)
        if saver_def is not None and saver_def.restore_op_name:
            yield "a Saver", graph.get_operation_by_name(saver_def.restore_op_name)


def _blocker(graph: tf.Graph, spec: EstimatorSpec) -> str | None:
    keys = tf.compat.v1.GraphKeys
    if spec.training_hooks or spec.training_chief_hooks:
        return "the spec has training hooks (or a host_call)"
    if graph.get_collection(keys.SUMMARIES):
        return "model_fn makes summaries"
    if graph.get_collection(keys.QUEUE_RUNNERS):
        return "the graph has queue runners"
    for what, op in _set_up_ops(graph, spec):
        if _in_loop(op):
            return f"{what} is built inside model_fn's loop"
    return None


def _check_acyclic(ops: list) -> None:
    if not is_acyclic(ops):
        raise NotLoopable("ordering the iteration's reads, writes and batch would make a cycle")


def order_reads_before_writes(ops: list, context: Any) -> int:
    """`step_order.order_reads_before_writes` for a loop body; raises `NotLoopable` on a cycle."""
    added = step_order.order_reads_before_writes(ops, context)
    if added:
        _check_acyclic(ops)
    return added


_LOOP_STRUCTURE = frozenset({"Enter", "RefEnter", "Merge", "RefMerge", "Switch", "RefSwitch", "NextIteration",
                             "RefNextIteration", "Exit", "RefExit", "LoopCond"})


def _consumers(op: Any) -> list:
    return [c for t in op.outputs for c in t.consumers()] + list(op._control_outputs)  # noqa: SLF001


def batch_after_data_free_ops(ops: list, context: Any, batch: Any) -> None:
    """Makes the iteration's `get_next` wait for the iteration's ops that do not depend on the
    batch. Step by step, TF 1.x ran those in the run that found the input ended (a
    `global_step.assign(global_step + 1)` beside the train_op counts that run, TF 2.15's
    TPUEstimator gives 9 steps for 8 batches) and nothing that needs the batch; the loop's last
    iteration then does the same."""
    members = {op for op in ops if op._get_control_flow_context() is context}  # noqa: SLF001
    downstream, todo = {batch}, [batch]
    while todo:
        for consumer in _consumers(todo.pop()):
            if consumer in members and consumer not in downstream:
                downstream.add(consumer)
                todo.append(consumer)
    upstream, todo = {batch}, [batch]
    while todo:
        op = todo.pop()
        for source in [t.op for t in op.inputs] + list(op.control_inputs):
            if source in members and source not in upstream:
                upstream.add(source)
                todo.append(source)
    free = {op for op in members if op not in downstream and op not in upstream and op.type not in _LOOP_STRUCTURE}
    for op in free:
        if not any(consumer in free for consumer in _consumers(op)):  # a sink: the rest of `free` comes before it
            batch._add_control_input(op)  # noqa: SLF001 - the graph is being built


def build_train_loop(
    graph: tf.Graph, dataset: Any, call_model_fn: Callable[[Any, Any], EstimatorSpec], iterations: int
) -> tuple[EstimatorSpec, Any, list, Any]:
    """A training spec whose `train_op` runs up to `iterations` steps of `model_fn` in one run.

    Returns (spec, iterations placeholder, input hooks, global step after the run). The spec's
    `loss` is the last step's (as float32), its scaffold `model_fn`'s. Raises `NotLoopable`."""
    if not isinstance(dataset, tf.data.Dataset):
        raise NotLoopable("input_fn returns tensors, not a Dataset")
    iterator = tf.compat.v1.data.make_initializable_iterator(dataset)
    count = tf.compat.v1.placeholder_with_default(tf.constant(iterations, tf.int32), shape=[], name="iterations_per_loop")
    specs: list[EstimatorSpec] = []
    contexts: list[Any] = []
    batches: list[Any] = []

    def body(step: Any, _loss: Any) -> tuple[Any, Any]:
        contexts.append(graph._get_control_flow_context())  # noqa: SLF001 - the loop body's
        with tf.control_dependencies([step]):  # the next batch is read after the previous update
            batch = iterator.get_next()
        batches.append(tf.nest.flatten(batch)[0].op)
        features, labels = split_features_labels(batch)
        # The model_fn's names as a step of its own gives them (a Keras 2 layer names its
        # variables by name scope: `dense/kernel`, not `iterations_per_loop_loop/dense/kernel`).
        with graph.name_scope(None):
            spec = call_model_fn(features, labels)
        specs.append(spec)
        if spec.train_op is None:
            raise NotLoopable("model_fn returned no train_op")
        with tf.control_dependencies([spec.train_op]):
            return step + 1, tf.identity(tf.cast(spec.loss, tf.float32))

    first = len(graph.get_operations())
    try:
        with tf1_control_flow(), _restores_outside_loops():
            _, loss = tf.compat.v1.while_loop(
                lambda step, _loss: step < count, body, [tf.constant(0), tf.constant(0.0)],
                parallel_iterations=1, name="iterations_per_loop_loop",
            )
    except NotLoopable:
        raise
    except Exception as error:  # noqa: BLE001 - any build failure means: run step by step instead
        raise NotLoopable(f"model_fn does not build inside a loop ({type(error).__name__}: {error})") from error
    spec = specs[0]
    blocker = _blocker(graph, spec)
    if blocker:
        raise NotLoopable(blocker)
    body = graph.get_operations()[first:]
    order_reads_before_writes(body, contexts[0])
    batch_after_data_free_ops(body, contexts[0], batches[0])
    _check_acyclic(body)
    global_step = tf.compat.v1.train.get_global_step(graph)
    with tf.control_dependencies([loss]):
        step_after = tf.identity(global_step.read_value() if hasattr(global_step, "read_value") else global_step)
    loop_spec = EstimatorSpec(mode=spec.mode, loss=loss, train_op=tf.group(loss), scaffold=spec.scaffold)
    return loop_spec, count, [DatasetInitializerHook(iterator)], step_after


def _next_boundary(step: int, first: int, every: int | None) -> int | None:
    """The smallest `first + m * every` after `step` (m >= 0), or None without `every`."""
    if not every:
        return None
    if step < first:
        return first
    return first + ((step - first) // every + 1) * every


class LoopStepsHook(tf.compat.v1.train.SessionRunHook):
    """Feeds each run's iteration count, writes the `loss` summary and stops at the last step.

    A run ends at the last step and at each step where the per-step run saved a checkpoint
    (every `save_steps` from the step the session started at) or wrote summaries (the first step,
    then every `summary_steps`): the `CheckpointSaverHook` then saves at the same steps, and the
    `loss` summary (the loop's last step) is written here at the same steps with the same value."""

    def __init__(self, count: Any, step_after: Any, iterations: int, steps: int | None, max_steps: int | None,
                 save_steps: int | None, summary_steps: int | None, output_dir: str) -> None:
        self._count, self._step_after, self._iterations = count, step_after, iterations
        self._steps, self._max_steps = steps, max_steps
        self._save_steps, self._summary_steps, self._output_dir = save_steps, summary_steps, output_dir

    def begin(self) -> None:
        self._summary = tf.compat.v1.summary.merge_all() if self._summary_steps else None
        self._writer = tf.compat.v1.summary.FileWriterCache.get(self._output_dir) if self._summary is not None else None
        self._read = tf.compat.v1.train.get_global_step().read_value()

    def after_create_session(self, session, coord) -> None:
        self._first = self._step = int(session.run(self._read))
        self._last = self._max_steps if self._max_steps is not None else (
            self._first + self._steps if self._steps is not None else None)
        self._started = False

    def _plan(self) -> tuple[int, bool]:
        """(iterations for the next run, whether it ends on a summary step)."""
        ends = [self._step + self._iterations]
        if self._last is not None:
            ends.append(self._last)
        save = _next_boundary(self._step, self._first, self._save_steps)
        summary = _next_boundary(self._step, self._first + 1, self._summary_steps) if self._summary is not None else None
        ends += [end for end in (save, summary) if end is not None]
        end = min(ends)
        return max(end - self._step, 0), summary == end

    def before_run(self, run_context):
        count, self._summarize = self._plan()
        fetches = {"step": self._step_after}
        if self._summarize:
            fetches["summary"] = self._summary
        return tf.compat.v1.train.SessionRunArgs(fetches, feed_dict={self._count: count})

    def after_run(self, run_context, run_values) -> None:
        self._step = int(run_values.results["step"])
        if self._writer is not None and not self._started:
            self._writer.add_session_log(tf.compat.v1.SessionLog(status=tf.compat.v1.SessionLog.START), self._step)
            self._started = True
        if self._summarize:
            self._writer.add_summary(run_values.results["summary"], self._step)
        if self._last is not None and self._step >= self._last:
            run_context.request_stop()

    def end(self, session) -> None:
        if self._writer is not None:
            self._writer.flush()
