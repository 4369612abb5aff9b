"""The cluster a program runs in: `TF_CONFIG`, who is chief, where a worker writes checkpoints.

Separation of concerns: this module only *reads and validates* the cluster description (the
`TF_CONFIG` environment variable, or a cluster resolver) and answers questions about it; it creates
no strategy (`strategy.make_strategy` does) and writes no file (`estimator_calls`'s checkpoint saver
does, in the directory `checkpoint_dir` names).

`TF_CONFIG` is the JSON TF1 `RunConfig` and TF2's `TFConfigClusterResolver` read:

    {"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222"], "ps": ["host2:2222"]},
     "task": {"type": "worker", "index": 0}, "rpc_layer": "grpc"}

`parse_tf_config` rejects what TensorFlow would misread or fail on later, far from the cause: text
that is not JSON, a missing `cluster` or `task`, a task type or index that is not in the cluster.
Unset or empty (`""`, `"{}"`) means "no cluster".
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
from typing import Any, Mapping

__all__ = [
    "TF_CONFIG",
    "TFConfig",
    "checkpoint_dir",
    "is_chief",
    "is_multi_worker",
    "parse_tf_config",
    "tf_config",
]

#: The environment variable holding the cluster description.
TF_CONFIG = "TF_CONFIG"

_TASK_TYPES = ("chief", "worker", "ps", "evaluator")


@dataclasses.dataclass(frozen=True)
class TFConfig:
    """A validated `TF_CONFIG`.

    Attributes:
        cluster: Job name -> task addresses ("host:port"), in task-index order.
        task_type: This process's job ("chief", "worker", "ps" or "evaluator").
        task_index: This process's index in its job.
        rpc_layer: The `rpc_layer` field ("grpc" when absent).
    """

    cluster: Mapping[str, tuple[str, ...]]
    task_type: str
    task_index: int
    rpc_layer: str = "grpc"

    @property
    def has_ps(self) -> bool:
        """Whether the cluster has parameter servers (a ParameterServerStrategy cluster)."""
        return bool(self.cluster.get("ps"))

    @property
    def num_workers(self) -> int:
        """The tasks that train: the chief plus the workers."""
        return len(self.cluster.get("chief", ())) + len(self.cluster.get("worker", ()))

    @property
    def is_chief(self) -> bool:
        """TF's chief: the "chief" task, or worker 0 of a cluster without one."""
        return _is_chief(self.cluster, self.task_type, self.task_index)

    def cluster_resolver(self) -> Any:
        """A `tf.distribute.cluster_resolver.SimpleClusterResolver` over this configuration."""
        import tensorflow as tf

        spec = tf.train.ClusterSpec({job: list(tasks) for job, tasks in self.cluster.items()})
        return tf.distribute.cluster_resolver.SimpleClusterResolver(
            spec, task_type=self.task_type, task_id=self.task_index, rpc_layer=self.rpc_layer
        )


def _is_chief(cluster: Mapping[str, Any], task_type: str | None, task_index: int | None) -> bool:
    if task_type == "chief":
        return True
    return task_type == "worker" and task_index == 0 and not cluster.get("chief")


def _fail(problem: str, value: Any) -> ValueError:
    return ValueError(f"{TF_CONFIG} {problem}; {TF_CONFIG}={value!r}.")


def _addresses(job: str, tasks: Any, raw: Any) -> tuple[str, ...]:
    if isinstance(tasks, Mapping):  # TF's sparse form: {"0": "host:port", ...}.
        try:
            indexed = {int(index): address for index, address in tasks.items()}
        except (TypeError, ValueError):
            problem = f'cluster job "{job}" has task indices that are not integers ({sorted(tasks)!r})'
            raise _fail(problem, raw) from None
        if sorted(indexed) != list(range(len(indexed))):
            raise _fail(f'cluster job "{job}" must number its tasks 0..n-1, got indices {sorted(indexed)}', raw)
        tasks = [indexed[index] for index in range(len(indexed))]
    if isinstance(tasks, str) or not isinstance(tasks, (list, tuple)):
        raise _fail(f'cluster job "{job}" must be a list of "host:port" addresses, got {tasks!r}', raw)
    if not tasks:
        raise _fail(f'cluster job "{job}" has no tasks', raw)
    for address in tasks:
        if not isinstance(address, str) or ":" not in address:
            raise _fail(f'cluster job "{job}" has an address that is not "host:port": {address!r}', raw)
    return tuple(tasks)


def parse_tf_config(value: str | Mapping[str, Any] | None) -> TFConfig | None:
    """Parses and validates a `TF_CONFIG` value.

    Args:
        value: The JSON text (or the already-decoded dict). None, "", "{}" and {} mean no cluster.

    Returns:
        The `TFConfig`, or None when `value` describes no cluster.

    Raises:
        ValueError: Naming `TF_CONFIG` and the value, when it is not a JSON object, lacks `cluster`
            or `task`, names a job other than chief/worker/ps/evaluator, has a task type that is not
            in the cluster or an index out of range, or more than one chief.
    """
    raw = value
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            value = json.loads(value)
        except json.JSONDecodeError as error:
            raise _fail(f"is not valid JSON ({error})", raw) from None
    if not isinstance(value, Mapping):
        raise _fail(f"must be a JSON object, got {type(value).__name__}", raw)
    if not value:
        return None
    cluster = value.get("cluster")
    task = value.get("task")
    if not isinstance(cluster, Mapping) or not cluster:
        raise _fail('has no "cluster" (a non-empty object of job name -> addresses)', raw)
    if not isinstance(task, Mapping):
        raise _fail('has no "task" (an object {"type": ..., "index": ...})', raw)
    jobs: dict[str, tuple[str, ...]] = {}
    for job, tasks in cluster.items():
        if job not in _TASK_TYPES:
            hint = ' (TF1\'s "master" is TF2\'s "chief")' if job == "master" else ""
            raise _fail(f'cluster job "{job}" is not one of {", ".join(_TASK_TYPES)}{hint}', raw)
        jobs[job] = _addresses(job, tasks, raw)
    if len(jobs.get("chief", ())) > 1:
        raise _fail(f'cluster has {len(jobs["chief"])} "chief" tasks; there can be only one', raw)
    task_type = task.get("type")
    task_index = task.get("index", 0)
    if not isinstance(task_type, str) or not task_type:
        raise _fail(f'task "type" must be a job name, got {task_type!r}', raw)
    if task_type not in jobs and task_type != "evaluator":  # The evaluator may sit outside the cluster.
        hint = ' (TF1\'s "master" is TF2\'s "chief")' if task_type == "master" else ""
        raise _fail(f'task type "{task_type}" is not a job of the cluster ({", ".join(jobs)}){hint}', raw)
    if isinstance(task_index, bool) or not isinstance(task_index, int):
        raise _fail(f'task "index" must be an integer, got {task_index!r}', raw)
    size = len(jobs.get(task_type, ())) if task_type in jobs else 1
    if not 0 <= task_index < size:
        raise _fail(f'task index {task_index} is out of range: job "{task_type}" has {size} task(s)', raw)
    rpc_layer = value.get("rpc_layer") or "grpc"
    if not isinstance(rpc_layer, str):
        raise _fail(f'"rpc_layer" must be a string, got {rpc_layer!r}', raw)
    return TFConfig(
        cluster=types.MappingProxyType(jobs), task_type=task_type, task_index=task_index, rpc_layer=rpc_layer
    )


def tf_config(environ: Mapping[str, str] | None = None) -> TFConfig | None:
    """The validated `TF_CONFIG` of this process (or of `environ`), or None when unset or empty.

    Raises:
        ValueError: As `parse_tf_config`.
    """
    environ = os.environ if environ is None else environ
    return parse_tf_config(environ.get(TF_CONFIG))


def _task_of(strategy: Any) -> tuple[Mapping[str, Any], str | None, int | None] | None:
    """(cluster, task_type, task_id) of a multi-worker MultiWorkerMirroredStrategy, else None."""
    import tensorflow as tf

    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return None
    if not strategy.extended._in_multi_worker_mode():  # noqa: SLF001 (no public accessor)
        return None
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None:
        return None
    return resolver.cluster_spec().as_dict(), resolver.task_type, resolver.task_id


def is_multi_worker(strategy: Any) -> bool:
    """Whether `strategy` runs the same program in lockstep on several worker processes.

    True for a MultiWorkerMirroredStrategy over a cluster of more than one worker; False for a
    ParameterServerStrategy (only its coordinator runs Python) and every single-process strategy.
    """
    return _task_of(strategy) is not None


def is_chief(strategy: Any) -> bool:
    """Whether this process is the chief of `strategy`'s cluster: the one that writes checkpoints and summaries.

    True for a ParameterServerStrategy coordinator (workers and ps run bare servers, no Python), for
    a strategy without a cluster resolver (default, one-device, mirrored) or with a TPU one (one
    client), and for a MultiWorkerMirroredStrategy that is not in multi-worker mode. In a cluster,
    the chief is the task of type "chief", or worker 0 when the cluster has no "chief" job
    (TensorFlow's convention).

    Args:
        strategy: A `tf.distribute.Strategy` (or anything with a `cluster_resolver` attribute).
    """
    import tensorflow as tf

    if isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy):
        return True  # Only the coordinator runs Python; workers and ps run bare servers.
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        task = _task_of(strategy)
        return True if task is None else _is_chief(*task)
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or isinstance(resolver, tf.distribute.cluster_resolver.TPUClusterResolver):
        return True
    task_type, task_id = getattr(resolver, "task_type", None), getattr(resolver, "task_id", None)
    if task_type is None:
        return True
    try:
        jobs = resolver.cluster_spec().as_dict()
    except (ValueError, RuntimeError, OSError):  # No cluster spec to read: a lone worker.
        jobs = {}
    return _is_chief(jobs, task_type, 0 if task_id is None else task_id)


def on_any_worker(strategy: Any, flag: bool) -> bool:
    """Whether `flag` is True on at least one worker (a collective: every worker must call it)."""
    import tensorflow as tf

    votes = strategy.run(lambda: tf.constant(1.0 if flag else 0.0))
    return float(strategy.reduce("SUM", votes, axis=None)) > 0


def chief_value(strategy: Any, value: float) -> float:
    """The chief's `value`, on every worker of a multi-worker strategy (`value` elsewhere).

    A collective: every worker must call it, and none returns before all have called it, so it
    also orders what the chief wrote before it (evaluation results, an export) before what the
    other workers read after it.
    """
    if not is_multi_worker(strategy):
        return value
    import tensorflow as tf

    mine = float(value) if is_chief(strategy) else 0.0
    summed = strategy.reduce("SUM", strategy.run(lambda: tf.constant(mine, tf.float64)), axis=None)
    return float(summed)


def checkpoint_dir(model_dir: str | os.PathLike, strategy: Any) -> tuple[str, bool]:
    """Where this process writes its checkpoints for `model_dir` under `strategy`.

    The TF multi-worker convention: every worker takes part in a save (a save may need collective
    reads), but only the chief writes to `model_dir`; every other worker writes to its own
    `<model_dir>/workertemp_<task_id>` and deletes it after the save.

    Args:
        model_dir: The model directory.
        strategy: The model's strategy.

    Returns:
        (directory, temporary): `model_dir` and False on the chief; the worker's temporary
        directory and True elsewhere.
    """
    model_dir = os.fspath(model_dir)
    if is_chief(strategy):
        return model_dir, False
    task = _task_of(strategy)
    assert task is not None  # is_chief() is True for single-process strategies.
    _, task_type, task_id = task
    return os.path.join(model_dir, f"workertemp_{task_type}_{task_id}"), True
