"""`RunConfig` and `TPUConfig`: TF1 `tf.estimator[.tpu]` configuration objects, kept as options.

Separation of concerns: these classes only *hold and validate* what a TF1 program configured. They
never touch TensorFlow. `make_strategy` turns the distribution fields into a `tf.distribute.Strategy`,
`fit`/`evaluate` read the checkpoint fields (`model_dir`, `save_checkpoints_*`,
`keep_checkpoint_*`, `tf_random_seed`), and the model's `compile(steps_per_execution=...)` takes
`RunConfig.iterations_per_loop`. Fields that mean nothing in TF2 (sessions, device functions, RPC
protocols, ...) are accepted so migrated code keeps running, and are reported once per process
with `logging.warning`.

Both classes are frozen dataclasses: build a changed copy with `replace(**changes)`.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import types
from typing import Any, ClassVar, Mapping

from ._logging import warn_once
from .run_config_cluster import ClusterSettings, cluster_settings

__all__ = ["InputPipelineConfig", "RunConfig", "TPUConfig"]


class InputPipelineConfig:
    """How TPUEstimator fed a TPU host's cores (`TPUConfig.per_host_input_for_training`).

    TF1 used the integers 1-5 for these; the codemod writes the names, and both are accepted.
    """

    PER_SHARD_V1 = "PER_SHARD_V1"
    PER_HOST_V1 = "PER_HOST_V1"
    PER_HOST_V2 = "PER_HOST_V2"
    BROADCAST = "BROADCAST"
    SLICED = "SLICED"

    #: TF1's `tf.estimator.tpu.InputPipelineConfig` integer values.
    TF1_VALUES: ClassVar[Mapping[int, str]] = types.MappingProxyType(
        {1: PER_SHARD_V1, 2: PER_HOST_V1, 3: PER_HOST_V2, 4: BROADCAST, 5: SLICED}
    )


_TRAINING_PIPELINES = (
    InputPipelineConfig.PER_SHARD_V1,
    InputPipelineConfig.PER_HOST_V1,
    InputPipelineConfig.PER_HOST_V2,
    InputPipelineConfig.BROADCAST,
)
_EVAL_PIPELINES = (InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.SLICED)
_CORES_PER_REPLICA = (1, 2, 4, 8, 16, 32, 64, 128)
_TIME_INTERVAL = re.compile(r"^\s*(\d+)\s*([smh])\s*$")
_KNOWN_TF1_TPU_EXTRAS = ("experimental_allow_per_host_v2_parallel_get_next", "experimental_feed_hook")
_USE_DEFAULT = object()  # "not given", so `save_checkpoints_secs` can default to 600 like TF1.


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return type(value).__module__ == "numpy" and hasattr(value, "dtype") and value.dtype.kind in "iu"


def _check_positive_int(value: Any, name: str) -> int:
    if not _is_int(value):
        raise TypeError(f"`{name}` must be an int, got {value!r} ({type(value).__name__}).")
    if value <= 0:
        raise ValueError(f"`{name}` must be positive, got {value!r}.")
    return int(value)


def _check_non_negative(value: Any, name: str) -> Any:
    if value is not None and not value >= 0:
        raise ValueError(f"`{name}` should be >= 0, got {value!r}.")
    return value


def _pipeline_name(value: Any, *, argument: str, allowed: tuple[str, ...]) -> str:
    """Normalises a TF1 input pipeline setting (bool, TF1 int, name, or enum-like object) to its name."""
    if value is True:
        name = InputPipelineConfig.PER_HOST_V1
    elif value is False:
        name = InputPipelineConfig.PER_SHARD_V1
    elif _is_int(value) and int(value) in InputPipelineConfig.TF1_VALUES:
        name = InputPipelineConfig.TF1_VALUES[int(value)]
    elif isinstance(value, str):
        name = value.rsplit(".", 1)[-1].upper()
    elif isinstance(getattr(value, "name", None), str):
        name = value.name.upper()
    else:
        name = repr(value)
    if name not in allowed:
        raise ValueError(f"`{argument}` must be one of {', '.join(allowed)} (or True/False), got {value!r}.")
    return name


def _parse_iterations_per_loop(value: Any) -> int:
    """`TPUConfig.iterations_per_loop` as a step count; TF1's time form ("60s") has no Keras equivalent."""
    if isinstance(value, str):
        text = value.strip()
        if _TIME_INTERVAL.match(text):
            raise ValueError(
                f"`iterations_per_loop` ({value!r}) is a time interval. TF1 TPUEstimator autotuned the "
                "number of steps per loop from it, but Keras `steps_per_execution` is a fixed step count "
                "with no time-based form: pass a positive int such as iterations_per_loop=100."
            )
        if text.isdigit():
            value = int(text)
        else:
            raise ValueError(f"`iterations_per_loop` must be a positive int, got {value!r}.")
    if not _is_int(value) or value <= 0:
        raise ValueError(f"`iterations_per_loop` must be a positive int, got {value!r}.")
    return int(value)


@dataclasses.dataclass(frozen=True, init=False)
class TPUConfig:
    """TPU settings of a TF1 `tf.estimator.tpu.TPUConfig`, validated as TF1 validated them.

    Only `iterations_per_loop` (-> Keras `steps_per_execution`) and `per_host_input_for_training`
    (-> whether `input_fn` batches are global or per replica) change what the runtime does.
    The other fields are kept for reference; non-default values of the ones the runtime cannot honour
    are reported once with `logging.warning`.

    Attributes:
        iterations_per_loop: Train steps per device loop, a positive int.
        num_shards: Deprecated in TF1 too; only validated.
        num_cores_per_replica: Cores per replica for model parallelism (1, 2, 4, ..., 128) or None.
        per_host_input_for_training: One of the `InputPipelineConfig` names; TF1's True is
            "PER_HOST_V1" and False is "PER_SHARD_V1".
        tpu_job_name: Name of the TPU job, or None.
        initial_infeed_sleep_secs: Seconds the TF1 infeed thread waited, or None.
        input_partition_dims: Spatial partitioning of the input tensors, or None.
        eval_training_input_configuration: "PER_HOST_V1" or "SLICED".
        experimental_host_call_every_n_steps: How often TF1 ran `host_call`.
        unknown: Any other keyword given to the constructor, read-only.
    """

    iterations_per_loop: int
    num_shards: int | None
    num_cores_per_replica: int | None
    per_host_input_for_training: str
    tpu_job_name: str | None
    initial_infeed_sleep_secs: int | None
    input_partition_dims: Any
    eval_training_input_configuration: str
    experimental_host_call_every_n_steps: int
    unknown: Mapping[str, Any]

    def __init__(
        self,
        iterations_per_loop: int = 2,
        num_shards: int | None = None,
        num_cores_per_replica: int | None = None,
        per_host_input_for_training: Any = True,
        tpu_job_name: str | None = None,
        initial_infeed_sleep_secs: int | None = None,
        input_partition_dims: Any = None,
        eval_training_input_configuration: Any = None,
        experimental_host_call_every_n_steps: int = 1,
        **unknown: Any,
    ) -> None:
        """Validates and stores the TF1 TPU settings.

        Args:
            iterations_per_loop: Positive int (or a string of digits). A TF1 time interval
                such as "60s" raises, because Keras has no time-based `steps_per_execution`.
            num_shards: Positive int or None.
            num_cores_per_replica: 1, 2, 4, 8, 16, 32, 64, 128 or None.
            per_host_input_for_training: True, False, an `InputPipelineConfig` name or TF1 value.
            tpu_job_name: TPU job name or None.
            initial_infeed_sleep_secs: Positive int or None.
            input_partition_dims: A list of one or two partition specs, or None; needs
                `per_host_input_for_training="PER_HOST_V2"` and `num_cores_per_replica`.
            eval_training_input_configuration: "PER_HOST_V1" (the default when None) or "SLICED".
            experimental_host_call_every_n_steps: Positive int.
            **unknown: Other keywords (e.g. TF1's `experimental_feed_hook`); kept in `unknown` and
                reported once as ignored.

        Raises:
            ValueError: If a value is out of range; the message names the argument.
            TypeError: If `num_shards` or `initial_infeed_sleep_secs` is not an int.
        """
        set_ = object.__setattr__
        set_(self, "iterations_per_loop", _parse_iterations_per_loop(iterations_per_loop))
        if num_shards is not None:
            num_shards = _check_positive_int(num_shards, "num_shards")
        set_(self, "num_shards", num_shards)
        if num_cores_per_replica is not None and num_cores_per_replica not in _CORES_PER_REPLICA:
            raise ValueError(
                f"`num_cores_per_replica` must be one of {_CORES_PER_REPLICA}, got {num_cores_per_replica!r}."
            )
        set_(self, "num_cores_per_replica", num_cores_per_replica)
        pipeline = _pipeline_name(
            per_host_input_for_training, argument="per_host_input_for_training", allowed=_TRAINING_PIPELINES
        )
        set_(self, "per_host_input_for_training", pipeline)
        if input_partition_dims is not None:
            if len(input_partition_dims) not in (1, 2):
                raise ValueError(
                    f"`input_partition_dims` must be a list/tuple with one or two elements, got "
                    f"{input_partition_dims!r}."
                )
            if pipeline != InputPipelineConfig.PER_HOST_V2:
                raise ValueError(
                    "`input_partition_dims` is only supported with "
                    f"`per_host_input_for_training='PER_HOST_V2'`, got {pipeline!r}."
                )
            if num_cores_per_replica is None:
                raise ValueError("`input_partition_dims` requires setting `num_cores_per_replica`.")
        set_(self, "input_partition_dims", input_partition_dims)
        set_(self, "tpu_job_name", tpu_job_name)
        if initial_infeed_sleep_secs:
            initial_infeed_sleep_secs = _check_positive_int(initial_infeed_sleep_secs, "initial_infeed_sleep_secs")
        set_(self, "initial_infeed_sleep_secs", initial_infeed_sleep_secs)
        set_(
            self,
            "eval_training_input_configuration",
            _pipeline_name(
                InputPipelineConfig.PER_HOST_V1
                if eval_training_input_configuration is None
                else eval_training_input_configuration,
                argument="eval_training_input_configuration",
                allowed=_EVAL_PIPELINES,
            ),
        )
        set_(
            self,
            "experimental_host_call_every_n_steps",
            _check_positive_int(experimental_host_call_every_n_steps, "experimental_host_call_every_n_steps"),
        )
        set_(self, "unknown", types.MappingProxyType(dict(unknown)))
        self._report_ignored()

    def _report_ignored(self) -> None:
        ignored = {
            "tpu_job_name": self.tpu_job_name is not None,
            "initial_infeed_sleep_secs": self.initial_infeed_sleep_secs is not None,
            "input_partition_dims": self.input_partition_dims is not None,
            "num_cores_per_replica": self.num_cores_per_replica not in (None, 1),
            "experimental_host_call_every_n_steps": self.experimental_host_call_every_n_steps != 1,
            "eval_training_input_configuration": (
                self.eval_training_input_configuration != InputPipelineConfig.PER_HOST_V1
            ),
        }
        for name, given in ignored.items():
            if given:
                warn_once(
                    f"TPUConfig.{name}",
                    "tfmigrate.runtime: TPUConfig(%s=%r) is ignored: it has no equivalent in "
                    "TPUStrategy + Keras as used by tfmigrate.runtime.",
                    name,
                    getattr(self, name),
                )
        for name, value in self.unknown.items():
            kind = "is a TF1 TPUEstimator setting with no TF2 meaning" if name in _KNOWN_TF1_TPU_EXTRAS else (
                "is not a TF1 TPUConfig argument"
            )
            warn_once(f"TPUConfig.{name}", "tfmigrate.runtime: TPUConfig(%s=%r) %s; ignored.", name, value, kind)

    @property
    def per_replica_input(self) -> bool:
        """Whether TF1 gave each `input_fn` call a per-replica batch (`PER_HOST_V2`, `PER_SHARD_V1`).

        This is what `input_fn_data(per_replica=...)` wants for training.
        """
        return self.per_host_input_for_training in (InputPipelineConfig.PER_HOST_V2, InputPipelineConfig.PER_SHARD_V1)

    def __deepcopy__(self, memo: dict) -> TPUConfig:
        """A copy, validated again (`unknown`'s read-only view does not copy itself)."""
        kwargs = {f.name: copy.deepcopy(getattr(self, f.name), memo) for f in dataclasses.fields(self) if f.name != "unknown"}
        kwargs.update(copy.deepcopy(dict(self.unknown), memo))
        return TPUConfig(**kwargs)

    def __reduce__(self):
        kwargs = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "unknown"}
        kwargs.update(self.unknown)
        return _tpu_config, (kwargs,)

    def replace(self, **changes: Any) -> TPUConfig:
        """Returns a copy with `changes` applied (and validated again)."""
        kwargs = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "unknown"}
        kwargs.update(self.unknown)
        kwargs.update(changes)
        return TPUConfig(**kwargs)


def _tpu_config(kwargs: dict[str, Any]) -> TPUConfig:
    """A pickled `TPUConfig` back (`TPUConfig.__reduce__`)."""
    return TPUConfig(**kwargs)


# RunConfig fields that have no TF2 meaning for the runtime, with their TF1 defaults: a value other
# than the default is reported once as ignored.
_IGNORED_RUN_CONFIG_FIELDS: Mapping[str, Any] = types.MappingProxyType(
    {
        "session_config": None,
        "device_fn": None,
        "protocol": None,
        "experimental_distribute": None,
        "experimental_max_worker_delay_secs": None,
        "session_creation_timeout_secs": 7200,
        "checkpoint_save_graph_def": True,
        "evaluation_master": None,
    }
)
_IGNORED_WHY: dict[str, str] = {}


@dataclasses.dataclass(frozen=True, init=False)
class RunConfig:
    """A TF1 `tf.estimator.RunConfig` / `tf.estimator.tpu.RunConfig`, as options for the runtime.

    Every TF1 keyword is accepted. `fit`/`evaluate` use `model_dir`, `save_checkpoints_steps`,
    `save_checkpoints_secs`, `keep_checkpoint_max`, `keep_checkpoint_every_n_hours` and
    `tf_random_seed`; the model takes `iterations_per_loop` as `steps_per_execution`;
    `make_strategy` takes `cluster` (and `train_distribute` is kept for code that reads it).
    Fields with no TF2 meaning (`session_config`, `device_fn`, `protocol`, `experimental_*`,
    `session_creation_timeout_secs`, `checkpoint_save_graph_def`, `evaluation_master`, and for now
    `save_summary_steps` and `log_step_count_steps`) are reported once per process when set to a
    non-default value, and otherwise ignored.

    Attributes:
        model_dir: Directory of checkpoints, or None (then nothing is saved or restored).
        tf_random_seed: Seed for `keras.utils.set_random_seed`, or None.
        save_summary_steps: `fit` writes `loss`, the other logs and `global_step/sec` summaries
            to the model directory every this many global steps (None or 0: never).
        save_checkpoints_steps: Save every this many steps, or None.
        save_checkpoints_secs: Save every this many seconds, or None (600 when neither is given).
        session_config: Ignored.
        keep_checkpoint_max: Checkpoints to keep (`CheckpointManager.max_to_keep`).
        keep_checkpoint_every_n_hours: Also keep one checkpoint per this many hours.
        log_step_count_steps: `fit` logs `loss = ..., step = ...` and `global_step/sec` every this
            many global steps (None or 0: never).
        train_distribute: A `tf.distribute.Strategy` for training, or None.
        device_fn: Ignored.
        protocol: Ignored.
        eval_distribute: A `tf.distribute.Strategy` for evaluation, or None.
        experimental_distribute: Ignored.
        experimental_max_worker_delay_secs: Ignored.
        session_creation_timeout_secs: Ignored.
        checkpoint_save_graph_def: Ignored.
        cluster: A cluster resolver (`TPUClusterResolver` for TPUs), or None.
        master: Address of the TF1 master (for TPUs, the TPU), or None.
        evaluation_master: Ignored.
        tpu_config: A `TPUConfig`, or None for a non-TPU `RunConfig`.
    """

    model_dir: str | None
    tf_random_seed: int | None
    save_summary_steps: int
    save_checkpoints_steps: int | None
    save_checkpoints_secs: float | None
    session_config: Any
    keep_checkpoint_max: int
    keep_checkpoint_every_n_hours: float
    log_step_count_steps: int
    train_distribute: Any
    device_fn: Any
    protocol: str | None
    eval_distribute: Any
    experimental_distribute: Any
    experimental_max_worker_delay_secs: int | None
    session_creation_timeout_secs: int
    checkpoint_save_graph_def: bool
    cluster: Any
    master: str | None
    evaluation_master: str | None
    tpu_config: TPUConfig | None

    def __init__(
        self,
        model_dir: str | os.PathLike | None = None,
        tf_random_seed: int | None = None,
        save_summary_steps: int = 100,
        save_checkpoints_steps: Any = _USE_DEFAULT,
        save_checkpoints_secs: Any = _USE_DEFAULT,
        session_config: Any = None,
        keep_checkpoint_max: int = 5,
        keep_checkpoint_every_n_hours: float = 10000,
        log_step_count_steps: int = 100,
        train_distribute: Any = None,
        device_fn: Any = None,
        protocol: str | None = None,
        eval_distribute: Any = None,
        experimental_distribute: Any = None,
        experimental_max_worker_delay_secs: int | None = None,
        session_creation_timeout_secs: int = 7200,
        checkpoint_save_graph_def: bool = True,
        cluster: Any = None,
        master: str | None = None,
        evaluation_master: str | None = None,
        tpu_config: TPUConfig | None = None,
    ) -> None:
        """Validates and stores the TF1 run settings.

        Args:
            model_dir: Checkpoint directory (str or path-like) or None; must not be empty.
            tf_random_seed: Integer seed or None.
            save_summary_steps: >= 0.
            save_checkpoints_steps: >= 0 or None. When neither this nor `save_checkpoints_secs`
                is given, checkpoints are saved every 600 seconds, as in TF1.
            save_checkpoints_secs: >= 0 or None; cannot be set together with
                `save_checkpoints_steps`.
            session_config: Ignored (a `tf.compat.v1.ConfigProto` in TF1).
            keep_checkpoint_max: >= 0.
            keep_checkpoint_every_n_hours: > 0.
            log_step_count_steps: > 0.
            train_distribute: A `tf.distribute.Strategy` or None.
            device_fn: Ignored.
            protocol: Ignored; None, "grpc" or "grpc+verbs".
            eval_distribute: A `tf.distribute.Strategy` or None.
            experimental_distribute: Ignored.
            experimental_max_worker_delay_secs: Ignored; an int or None.
            session_creation_timeout_secs: Ignored; > 0.
            checkpoint_save_graph_def: Ignored.
            cluster: A cluster resolver or None; cannot be set together with `master`.
            master: A master address or None.
            evaluation_master: Ignored.
            tpu_config: A `TPUConfig` or None.

        Raises:
            ValueError: If a value is out of range or two settings conflict; the message names the
                arguments.
            TypeError: If `tf_random_seed` is not an int or `tpu_config` is not a `TPUConfig`.
        """
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set.")
        if model_dir is not None:
            model_dir = os.fspath(model_dir)
            if isinstance(model_dir, bytes):
                model_dir = model_dir.decode()
            if not model_dir:
                raise ValueError("`model_dir` should be non-empty (use None for no checkpoints).")
        if tf_random_seed is not None and not _is_int(tf_random_seed):
            raise TypeError(f"`tf_random_seed` must be an int, got {tf_random_seed!r}.")
        _check_non_negative(save_summary_steps, "save_summary_steps")
        _check_non_negative(save_checkpoints_steps, "save_checkpoints_steps")
        _check_non_negative(save_checkpoints_secs, "save_checkpoints_secs")
        _check_non_negative(keep_checkpoint_max, "keep_checkpoint_max")
        if keep_checkpoint_every_n_hours is not None and not keep_checkpoint_every_n_hours > 0:
            raise ValueError(f"`keep_checkpoint_every_n_hours` should be > 0, got {keep_checkpoint_every_n_hours!r}.")
        if log_step_count_steps is not None and not log_step_count_steps > 0:
            raise ValueError(f"`log_step_count_steps` should be > 0, got {log_step_count_steps!r}.")
        if session_creation_timeout_secs is not None and not session_creation_timeout_secs > 0:
            raise ValueError(f"`session_creation_timeout_secs` should be > 0, got {session_creation_timeout_secs!r}.")
        if experimental_max_worker_delay_secs is not None and not _is_int(experimental_max_worker_delay_secs):
            raise ValueError(
                "`experimental_max_worker_delay_secs` must be an int if set, got "
                f"{experimental_max_worker_delay_secs!r}."
            )
        if protocol not in (None, "grpc", "grpc+verbs"):
            raise ValueError(f"`protocol` should be grpc or grpc+verbs, got {protocol!r}.")
        if master is not None and cluster is not None:
            raise ValueError("Both `master` and `cluster` are set; give one of them.")
        if tpu_config is not None and not isinstance(tpu_config, TPUConfig):
            raise TypeError(
                f"`tpu_config` must be a tfmigrate.runtime.TPUConfig, got {type(tpu_config).__name__}."
            )
        values = dict(
            model_dir=model_dir,
            tf_random_seed=None if tf_random_seed is None else int(tf_random_seed),
            save_summary_steps=save_summary_steps,
            save_checkpoints_steps=save_checkpoints_steps,
            save_checkpoints_secs=save_checkpoints_secs,
            session_config=session_config,
            keep_checkpoint_max=keep_checkpoint_max,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            log_step_count_steps=log_step_count_steps,
            train_distribute=train_distribute,
            device_fn=device_fn,
            protocol=protocol,
            eval_distribute=eval_distribute,
            experimental_distribute=experimental_distribute,
            experimental_max_worker_delay_secs=experimental_max_worker_delay_secs,
            session_creation_timeout_secs=session_creation_timeout_secs,
            checkpoint_save_graph_def=checkpoint_save_graph_def,
            cluster=cluster,
            master=master,
            evaluation_master=evaluation_master,
            tpu_config=tpu_config,
        )
        for name, value in values.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_cluster", None)  # read off TF_CONFIG when first asked (`_cluster_settings`)
        self._report_ignored()

    def _cluster_settings(self) -> ClusterSettings:
        if self._cluster is None:  # type: ignore[attr-defined]
            object.__setattr__(self, "_cluster", cluster_settings())
        return self._cluster  # type: ignore[attr-defined]

    # TF1's task and cluster properties, read off `TF_CONFIG` as TF1's RunConfig read them
    # (`run_config_cluster`): on first use, so a TF_CONFIG TF1 refused fails only where it is read.
    @property
    def cluster_spec(self) -> Any:
        """A `tf.train.ClusterSpec` of `TF_CONFIG`'s cluster (empty without one)."""
        import tensorflow as tf

        return tf.train.ClusterSpec({job: list(tasks) for job, tasks in self._cluster_settings().cluster.items()})

    @property
    def is_chief(self) -> bool:
        """Whether this task is the chief: always without a cluster."""
        return self._cluster_settings().is_chief

    @property
    def task_type(self) -> str:
        """This task's job: "worker" without a cluster."""
        return self._cluster_settings().task_type

    @property
    def task_id(self) -> int:
        """This task's index in its job."""
        return self._cluster_settings().task_id

    @property
    def num_ps_replicas(self) -> int:
        """The cluster's parameter servers."""
        return self._cluster_settings().num_ps_replicas

    @property
    def num_worker_replicas(self) -> int:
        """The tasks that train, the chief included (1 without a cluster)."""
        return self._cluster_settings().num_worker_replicas

    @property
    def global_id_in_cluster(self) -> int | None:
        """TF1's global id: the chief 0, the other jobs in name order, ps last; None for an evaluator."""
        return self._cluster_settings().global_id_in_cluster

    @property
    def service(self) -> Mapping[str, Any] | None:
        """`TF_CONFIG`'s "service" object, or None."""
        return self._cluster_settings().service

    def __deepcopy__(self, memo: dict) -> RunConfig:
        """A copy as TF1's TPUEstimator handed each `model_fn` call: the settings copied, the
        strategies, cluster resolver and session config (TF objects) shared."""
        copied = object.__new__(type(self))
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            shared = field.name in _SHARED_ON_COPY
            object.__setattr__(copied, field.name, value if shared else copy.deepcopy(value, memo))
        object.__setattr__(copied, "_cluster", self._cluster)  # type: ignore[attr-defined]
        return copied

    def _report_ignored(self) -> None:
        for name, default in _IGNORED_RUN_CONFIG_FIELDS.items():
            value = getattr(self, name)
            if value is default or _safe_equal(value, default):
                continue
            why = _IGNORED_WHY.get(name, "it has no meaning in TF2 (no sessions or graphs to configure)")
            warn_once(f"RunConfig.{name}", "tfmigrate.runtime: RunConfig(%s=%r) is ignored: %s.", name, value, why)

    @property
    def iterations_per_loop(self) -> int:
        """Steps per device loop: `tpu_config.iterations_per_loop`, or 1 without a `tpu_config`.

        Use it as the model's `compile(steps_per_execution=...)`.
        """
        return self.tpu_config.iterations_per_loop if self.tpu_config is not None else 1

    def replace(self, **changes: Any) -> RunConfig:
        """Returns a copy with `changes` applied, with TF1's rule for the two save settings.

        As in TF1 `RunConfig.replace`, setting one of `save_checkpoints_steps` and
        `save_checkpoints_secs` to a value clears the other one.

        Args:
            **changes: New values for any of the constructor's arguments.

        Returns:
            A new, validated `RunConfig`.

        Raises:
            TypeError: If a key is not a `RunConfig` argument.
            ValueError: As the constructor.
        """
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise TypeError(f"RunConfig.replace() got unknown argument(s): {', '.join(unknown)}.")
        kwargs = {name: getattr(self, name) for name in names}
        kwargs.update(changes)
        both = "save_checkpoints_steps" in changes and "save_checkpoints_secs" in changes
        if not both:
            if changes.get("save_checkpoints_steps") is not None:
                kwargs["save_checkpoints_secs"] = None
            elif changes.get("save_checkpoints_secs") is not None:
                kwargs["save_checkpoints_steps"] = None
        return RunConfig(**kwargs)


# RunConfig fields holding TF objects (which do not copy): a deep copy shares them.
_SHARED_ON_COPY = frozenset({"train_distribute", "eval_distribute", "cluster", "session_config", "device_fn",
                             "experimental_distribute"})


def _safe_equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - arbitrary user objects.
        return False
