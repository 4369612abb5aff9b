"""What a TF1 `RunConfig` read from `TF_CONFIG` as it was built: this task and its cluster.

TF1 programs read these off their `RunConfig` (`config.is_chief`, `config.num_worker_replicas`,
`config.task_type`...), in their `model_fn` or around it: a summary written by the chief only, a
batch size divided by the workers. `cluster_settings` works them out as TF 1.15's Estimator did
(`tensorflow_estimator`'s `run_config.py`), TF1's own names and rules included: a task not in the
cluster is a `ValueError` as it was there, and "master" is TF1's chief (a cluster has one or the
other). One rule is TF2's: a cluster with no "chief" job, which TF1 refused and TF2's
MultiWorkerMirroredStrategy runs (`cluster.parse_tf_config`), has worker 0 for its chief.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Mapping

_CHIEF, _MASTER, _WORKER, _PS, _EVALUATOR = "chief", "master", "worker", "ps", "evaluator"
_GRPC = "grpc://"


@dataclasses.dataclass(frozen=True)
class ClusterSettings:
    """This task's place in its cluster, as TF1's `RunConfig` reported it.

    Attributes:
        cluster: Job name -> task addresses (empty without a cluster, and for an evaluator).
        task_type: "worker" without a cluster; else the task's job.
        task_id: The task's index in its job.
        is_chief: Whether this task is the chief ("chief", or "master" in a cluster that has one).
        num_ps_replicas: The cluster's parameter servers.
        num_worker_replicas: The tasks that train (workers plus the chief; 1 without a cluster).
        global_id_in_cluster: The chief 0, the other jobs in name order, ps last; None for an evaluator.
        master: The TF1 session master ("" for one task, else the task's grpc address).
        evaluation_master: The evaluator's session master ("" unless `TF_CONFIG` names one).
        service: `TF_CONFIG`'s "service" object, or None.
    """

    cluster: Mapping[str, tuple[str, ...]]
    task_type: str
    task_id: int
    is_chief: bool
    num_ps_replicas: int
    num_worker_replicas: int
    global_id_in_cluster: int | None
    master: str
    evaluation_master: str
    service: Mapping[str, Any] | None


def cluster_settings(environ: Mapping[str, str] | None = None) -> ClusterSettings:
    """TF1 `RunConfig`'s reading of `TF_CONFIG` (of this process, or of `environ`).

    Raises:
        ValueError: Where TF1's `RunConfig` raised: text that is not a JSON object, a cluster
            with no "chief" (or "master") job or more than one, a task type or index the cluster
            lacks, a task other than worker 0 without a cluster.
        TypeError: A "service" that is not an object.
    """
    environ = os.environ if environ is None else environ
    raw = environ.get("TF_CONFIG") or "{}"
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"TF_CONFIG is not valid JSON ({error}); TF_CONFIG={raw!r}.") from None
    if not isinstance(config, Mapping):
        raise ValueError(f"TF_CONFIG must be a JSON object; TF_CONFIG={raw!r}.")
    service = config.get("service")
    if service is not None and not isinstance(service, Mapping):
        raise TypeError(f'If "service" is set in TF_CONFIG, it must be a dict. Given {type(service)}')
    cluster = {job: _tasks(tasks) for job, tasks in (config.get("cluster") or {}).items()}
    task = config.get("task") or {}
    if not cluster:
        return _local(config, task, service)
    chief = _MASTER if _MASTER in cluster else _CHIEF
    if chief == _MASTER and _CHIEF in cluster:
        raise ValueError("If `master` node exists in `cluster`, job `chief` is not supported.")
    task_type, task_id = _validated_task(cluster, task, chief)
    if task_type == _EVALUATOR:
        if chief == _MASTER:
            raise ValueError("If `master` node exists in `cluster`, task_type `evaluator` is not supported.")
        return ClusterSettings(
            cluster={}, task_type=task_type, task_id=task_id, is_chief=False,
            num_ps_replicas=0, num_worker_replicas=0, global_id_in_cluster=None, master="",
            evaluation_master=config.get("eval_session_master", ""), service=service,
        )
    if chief in cluster:
        is_chief = task_type == chief
    else:  # TF2's chief
        is_chief = task_type == _WORKER and task_id == 0
    return ClusterSettings(
        cluster=dict(cluster), task_type=task_type, task_id=task_id, is_chief=is_chief,
        num_ps_replicas=len(cluster.get(_PS, ())),
        num_worker_replicas=len(cluster.get(_WORKER, ())) + len(cluster.get(chief, ())),
        global_id_in_cluster=_global_id(cluster, task_type, task_id, chief),
        master=config.get("session_master") or _master(cluster, task_type, task_id),
        evaluation_master="", service=service,
    )


def _tasks(tasks: Any) -> tuple[str, ...]:
    if isinstance(tasks, Mapping):  # TF's sparse form: {"0": "host:port", ...}
        return tuple(tasks[key] for key in sorted(tasks, key=int))
    return tuple(tasks)


def _local(config: Mapping[str, Any], task: Mapping[str, Any], service: Any) -> ClusterSettings:
    task_type, task_id = task.get("type", _WORKER), int(task.get("index", 0))
    if task_type != _WORKER:
        raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be WORKER.')
    if task_id != 0:
        raise ValueError('If "cluster" is not set in TF_CONFIG, task index must be 0.')
    return ClusterSettings(
        cluster={}, task_type=task_type, task_id=task_id, is_chief=True,
        num_ps_replicas=0, num_worker_replicas=1, global_id_in_cluster=0,
        master=config.get("session_master", ""), evaluation_master=config.get("eval_session_master", ""),
        service=service,
    )


def _validated_task(cluster: Mapping[str, tuple[str, ...]], task: Mapping[str, Any], chief: str) -> tuple[str, int]:
    if len(cluster.get(chief, ())) > 1:
        raise ValueError(f'The "cluster" in TF_CONFIG must have only one "{chief}" node.')
    task_type, task_id = task.get("type"), task.get("index")
    if not task_type:
        raise ValueError('If "cluster" is set in TF_CONFIG, task type must be set.')
    if task_id is None:
        raise ValueError('If "cluster" is set in TF_CONFIG, task index must be set.')
    task_id = int(task_id)
    if task_id < 0:
        raise ValueError("Task index must be non-negative number.")
    if task_type == _EVALUATOR:
        return task_type, task_id
    if task_type not in cluster:
        raise ValueError(f"{task_type} is not a valid task_type in the cluster_spec: {dict(cluster)}")
    if task_id >= len(cluster[task_type]):
        raise ValueError(f"{task_id} is not a valid task_id for task_type {task_type} in the cluster_spec: {dict(cluster)}")
    return task_type, task_id


def _global_id(cluster: Mapping[str, tuple[str, ...]], task_type: str, task_id: int, chief: str) -> int:
    order = [job for job in (chief,) if job in cluster]
    order += [job for job in sorted(cluster) if job not in (chief, _PS)] + ([_PS] if _PS in cluster else [])
    before = 0
    for job in order:
        if job == task_type:
            return before + task_id
        before += len(cluster[job])
    raise ValueError(f"task type {task_type!r} is not in the cluster {dict(cluster)}")  # (validated before)


def _master(cluster: Mapping[str, tuple[str, ...]], task_type: str, task_id: int) -> str:
    if len(cluster) == 1 and len(next(iter(cluster.values()))) == 1:
        return ""  # one task: TF1 ran it locally
    return _GRPC + cluster[task_type][task_id]
