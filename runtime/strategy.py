"""`make_strategy`: the `tf.distribute.Strategy` that replaces a TF1 RunConfig/TPUEstimator setup.

Each kind of strategy has one builder function in `_BUILDERS`; `make_strategy(kind)` only validates
arguments and dispatches. To add a kind, write a `_build_<kind>(request)` function, register it in
`_BUILDERS`, and list the options it takes in `_KIND_OPTIONS`.

Which loop trains a model under each kind (Keras's own, or the runtime's engine) is decided in
`estimator_calls`/`engine`, not here.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import weakref
from typing import Any, Callable, NoReturn, Sequence

import tensorflow as tf

from . import cluster
from ._logging import logger, warn_once

__all__ = ["STRATEGY_KINDS", "cluster_coordinator", "make_strategy", "tpu_resolvers_local_under_strategy_override"]


@dataclasses.dataclass(frozen=True)
class _StrategyRequest:
    """The arguments of one `make_strategy` call, handed to a builder."""

    kind: str
    cluster_resolver: Any
    tpu: str | None
    use_tpu: bool | None
    devices: tuple[str, ...] | None
    cross_device_ops: Any
    communication_options: Any = None
    variable_partitioner: Any = None
    parameter_device: str | None = None


# TPU systems this process already initialised, by master address: initialising twice would
# reset the TPU and lose its variables.
_initialized_tpus: dict[str, Any] = {}
_lock = threading.RLock()


def _visible_gpus() -> list[str]:
    return [device.name for device in tf.config.list_logical_devices("GPU")]


def _visible_tpus() -> bool:
    # Physical devices: listing them does not start the eager context, which a
    # MultiWorkerMirroredStrategy chosen later by "auto" must still be able to configure. (A remote
    # TPU is only found through `tpu=` or a TPUClusterResolver.)
    return bool(tf.config.list_physical_devices("TPU"))


def _check_devices(request: _StrategyRequest, names: Sequence[str], argument: str) -> None:
    """Raises ValueError unless every local device in `names` exists in this process.

    Devices of a remote job (`/job:worker/...`, anything but `localhost`) are not checked: only the
    cluster knows them.
    """
    local = {}
    for device in tf.config.list_logical_devices():
        spec = tf.DeviceSpec.from_string(device.name)
        local[(spec.device_type.upper(), spec.device_index)] = device.name
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(
                f"make_strategy(kind={request.kind!r}): `{argument}` must hold device names, got {name!r}."
            )
        try:
            spec = tf.DeviceSpec.from_string(name)
        except ValueError as error:
            raise ValueError(
                f"make_strategy(kind={request.kind!r}): {name!r} in `{argument}` is not a device name: {error}"
            ) from None
        if spec.job not in (None, "localhost"):
            continue
        if spec.device_type is None or (spec.device_type.upper(), spec.device_index or 0) not in local:
            raise ValueError(
                f"make_strategy(kind={request.kind!r}): device {name!r} (in `{argument}`) does not exist in "
                f"this process; the devices are {sorted(local.values())}."
            )


def _build_default(request: _StrategyRequest) -> tf.distribute.Strategy:
    del request
    return tf.distribute.get_strategy()


def _build_one_device(request: _StrategyRequest) -> tf.distribute.Strategy:
    if request.devices:
        if len(request.devices) != 1:
            raise ValueError(
                f"make_strategy(kind='one_device') takes one device, got `devices`={list(request.devices)!r}."
            )
        _check_devices(request, request.devices, "devices")
        device = request.devices[0]
    else:
        device = "/gpu:0" if _visible_gpus() else "/cpu:0"
    return tf.distribute.OneDeviceStrategy(device)


# MirroredStrategy objects by (devices, cross_device_ops), reused for identical requests: a second
# MirroredStrategy over the same devices restarts the collective keys, and training a different
# model under it fails with "Shape mismatch in the collective instance 100" (tensorflow#62790,
# measured on TF 2.21 with two logical CPUs; sharing one strategy object does not fail).
_mirrored: dict[tuple[Any, ...], tf.distribute.MirroredStrategy] = {}


def _mirrored_strategy(devices: Sequence[str] | None, cross_device_ops: Any) -> tf.distribute.MirroredStrategy:
    key = (tuple(devices) if devices else None, id(cross_device_ops) if cross_device_ops is not None else None)
    with _lock:
        strategy = _mirrored.get(key)
        if strategy is None:  # The cache keeps `cross_device_ops` alive, so its id is not reused.
            strategy = tf.distribute.MirroredStrategy(
                devices=list(devices) if devices else None, cross_device_ops=cross_device_ops
            )
            _mirrored[key] = strategy
    return strategy


def _build_mirrored(request: _StrategyRequest) -> tf.distribute.Strategy:
    if request.devices:
        _check_devices(request, request.devices, "devices")
    return _mirrored_strategy(request.devices, request.cross_device_ops)


def _build_central_storage(request: _StrategyRequest) -> tf.distribute.Strategy:
    if request.devices:
        _check_devices(request, request.devices, "devices")
    if request.parameter_device is not None:
        _check_devices(request, [request.parameter_device], "parameter_device")
    return tf.distribute.experimental.CentralStorageStrategy(
        compute_devices=list(request.devices) if request.devices else None,
        parameter_device=request.parameter_device,
    )


# -- multi-worker kinds --------------------------------------------------------------------------


def _is_tpu_resolver(resolver: Any) -> bool:
    return isinstance(resolver, tf.distribute.cluster_resolver.TPUClusterResolver)


def _cluster_jobs(resolver: Any, kind: str) -> dict[str, list[str]]:
    try:
        return dict(resolver.cluster_spec().as_dict())
    except (AttributeError, TypeError, ValueError) as error:
        raise ValueError(
            f"make_strategy(kind={kind!r}): `cluster_resolver`={resolver!r} gives no cluster spec: {error}"
        ) from error


def _cluster_source(request: _StrategyRequest) -> tuple[Any, Any]:
    """(cluster resolver or None, cache key): the request's resolver, else a validated TF_CONFIG."""
    if request.cluster_resolver is not None:
        return request.cluster_resolver, ("resolver", id(request.cluster_resolver))
    config = cluster.tf_config()  # ValueError naming TF_CONFIG when malformed.
    if config is None:
        return None, ("local",)
    return tf.distribute.cluster_resolver.TFConfigClusterResolver(), ("tf_config", repr(config))


# Multi-worker strategies by (cluster, options): TensorFlow configures collective ops and connects
# to a cluster once per process, so an identical second request gets the same strategy object.
_multi_worker: dict[tuple[Any, ...], tf.distribute.Strategy] = {}
_keep_alive: list[Any] = []  # Options objects whose id() is part of a cache key.


def _build_multi_worker_mirrored(request: _StrategyRequest) -> tf.distribute.Strategy:
    resolver, source_key = _cluster_source(request)
    if resolver is not None and "ps" in _cluster_jobs(resolver, request.kind):
        setting = "`cluster_resolver`" if request.cluster_resolver is not None else cluster.TF_CONFIG
        raise ValueError(
            f"make_strategy(kind={request.kind!r}): the cluster ({setting}) has \"ps\" tasks, which "
            "MultiWorkerMirroredStrategy cannot use; use kind='parameter_server' (or 'auto')."
        )
    key = ("multi_worker_mirrored", source_key, id(request.communication_options))
    with _lock:
        strategy = _multi_worker.get(key)
        if strategy is None:
            try:
                strategy = tf.distribute.MultiWorkerMirroredStrategy(
                    cluster_resolver=resolver, communication_options=request.communication_options
                )
            except RuntimeError as error:
                raise RuntimeError(
                    f"make_strategy(kind={request.kind!r}) could not configure collective ops: {error}. Create "
                    "the strategy at the start of the program, before any other TensorFlow operation runs."
                ) from error
            _multi_worker[key] = strategy
            _keep_alive.append(request.communication_options)
    return strategy


# ClusterCoordinators of the ParameterServerStrategy objects made here (TF keeps one per strategy).
_coordinators: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _build_parameter_server(request: _StrategyRequest) -> tf.distribute.Strategy:
    resolver, source_key = _cluster_source(request)
    setting = "`cluster_resolver`" if request.cluster_resolver is not None else cluster.TF_CONFIG
    if resolver is None:
        raise ValueError(
            f"make_strategy(kind={request.kind!r}) needs a cluster with \"ps\" and \"worker\" tasks: "
            f"{cluster.TF_CONFIG} is unset and no `cluster_resolver` was given."
        )
    jobs = _cluster_jobs(resolver, request.kind)
    missing = [job for job in ("ps", "worker") if not jobs.get(job)]
    if missing:
        absent = " and no ".join(repr(job) for job in missing)
        raise ValueError(
            f"make_strategy(kind={request.kind!r}): the cluster ({setting}) has no {absent} tasks; "
            f"ParameterServerStrategy needs both. Cluster: {jobs!r}."
        )
    task_type = getattr(resolver, "task_type", None)
    if task_type not in (None, "chief"):
        raise ValueError(
            f"make_strategy(kind={request.kind!r}): this task is {task_type!r} ({setting}), but only the "
            "\"chief\" task (the coordinator) runs a ParameterServerStrategy program; on \"worker\" and \"ps\" "
            "tasks run `tf.distribute.Server(cluster_spec, job_name=task_type, task_index=task_id, "
            "protocol='grpc').join()` instead."
        )
    key = ("parameter_server", source_key, id(request.variable_partitioner))
    with _lock:
        strategy = _multi_worker.get(key)
        if strategy is None:
            strategy = tf.distribute.experimental.ParameterServerStrategy(
                resolver, variable_partitioner=request.variable_partitioner
            )
            _coordinators[strategy] = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
            _multi_worker[key] = strategy
            _keep_alive.append(request.variable_partitioner)
    return strategy


def cluster_coordinator(strategy: tf.distribute.Strategy) -> Any:
    """The `ClusterCoordinator` of a ParameterServerStrategy (created once per strategy).

    Args:
        strategy: A `tf.distribute.experimental.ParameterServerStrategy`, e.g. from
            `make_strategy("parameter_server")`.

    Returns:
        Its `tf.distribute.experimental.coordinator.ClusterCoordinator`; `fit` schedules training
        steps through it.

    Raises:
        ValueError: If `strategy` is not a ParameterServerStrategy.
    """
    if not isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy):
        raise ValueError(
            f"cluster_coordinator: `strategy` must be a ParameterServerStrategy, got {type(strategy).__name__}."
        )
    with _lock:
        coordinator = _coordinators.get(strategy)
        if coordinator is None:  # A strategy built by hand: TF's ClusterCoordinator is a singleton per strategy.
            coordinator = _coordinators[strategy] = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    return coordinator


# -- TPU -----------------------------------------------------------------------------------------


def _resolve_tpu(request: _StrategyRequest) -> Any:
    """Returns a connected, initialised TPU cluster resolver, or raises ValueError naming the setting."""
    setting = f"cluster_resolver={request.cluster_resolver!r}, tpu={request.tpu!r}"
    resolver = request.cluster_resolver
    if resolver is None:
        if request.tpu in (None, "", "local") and not _visible_tpus():
            raise ValueError(
                f"make_strategy(kind={request.kind!r}) found no TPU ({setting}): no TPU devices are visible "
                "to this process. Pass `tpu=` (the TPU name or grpc:// address, TF1's "
                "`TPUClusterResolver(tpu=...)`/`RunConfig(master=...)`) or `cluster_resolver=`, or use "
                "kind='auto' to fall back to CPU/GPU."
            )
        try:
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=request.tpu or "")
        except (ValueError, OSError, RuntimeError) as error:  # URLError is an OSError.
            raise ValueError(
                f"make_strategy(kind={request.kind!r}) could not resolve a TPU ({setting}): {error}"
            ) from error
    master = str(resolver.master()) if hasattr(resolver, "master") else repr(resolver)
    with _lock:
        if master in _initialized_tpus:
            return resolver
        try:
            if master:  # A remote TPU; "" is the local TPU of a TPU VM.
                tf.config.experimental_connect_to_cluster(resolver)
            _initialized_tpus[master] = tf.tpu.experimental.initialize_tpu_system(resolver)
        except (tf.errors.OpError, ValueError, RuntimeError) as error:
            raise ValueError(
                f"make_strategy(kind={request.kind!r}) could not connect to or initialise the TPU "
                f"({setting}, master={master!r}): {error}"
            ) from error
    return resolver


def _build_tpu(request: _StrategyRequest) -> tf.distribute.Strategy:
    return tf.distribute.TPUStrategy(_resolve_tpu(request))


# -- auto ----------------------------------------------------------------------------------------


def _auto_choice(request: _StrategyRequest) -> tuple[_StrategyRequest, str]:
    """What "auto" builds when it builds no TPU strategy: (the request to build, a description)."""
    resolver = request.cluster_resolver
    if resolver is not None and not _is_tpu_resolver(resolver):
        jobs = _cluster_jobs(resolver, request.kind)
        source = "`cluster_resolver`"
    else:
        resolver = None
        config = cluster.tf_config()  # ValueError naming TF_CONFIG when malformed.
        jobs = dict(config.cluster) if config is not None else {}
        source = cluster.TF_CONFIG
        if config is not None and config.task_type == "evaluator":
            # TF1's evaluator task evaluated by itself, outside the training cluster.
            jobs = {}
        elif config is not None and jobs.get("ps") and config.task_type in ("ps", "worker"):
            _serve_forever(config)
    if jobs.get("ps"):
        return (
            dataclasses.replace(request, kind="parameter_server", cluster_resolver=resolver),
            f"ParameterServerStrategy ({source} has \"ps\" tasks)",
        )
    workers = len(jobs.get("chief", ())) + len(jobs.get("worker", ()))
    if workers > 1:
        return (
            dataclasses.replace(request, kind="multi_worker_mirrored", cluster_resolver=resolver),
            f"MultiWorkerMirroredStrategy over {workers} workers ({source})",
        )
    local = dataclasses.replace(request, cluster_resolver=None)
    gpus = _visible_gpus()
    if len(gpus) > 1:
        mirrored = dataclasses.replace(local, kind="mirrored", devices=tuple(gpus))
        return mirrored, f"MirroredStrategy over {len(gpus)} GPUs"
    if gpus:
        return dataclasses.replace(local, kind="one_device", devices=(gpus[0],)), "OneDeviceStrategy on the GPU"
    return dataclasses.replace(local, kind="default"), "the default strategy (CPU)"


def _serve_forever(config: cluster.TFConfig) -> NoReturn:
    """A ps or worker task of a parameter-server cluster: run its server until the process is ended.

    Under ParameterServerStrategy only the chief (the coordinator) runs the program; TF1's ps tasks
    likewise ran `server.join()` in `train_and_evaluate`, and TF2's workers are servers the
    coordinator schedules steps on.
    """
    logger.info(
        "tfmigrate.runtime.make_strategy('auto'): this is the %r task %d of a parameter-server cluster (%s); "
        "it runs its tf.distribute.Server until ended, and the chief runs the program.",
        config.task_type,
        config.task_index,
        cluster.TF_CONFIG,
    )
    spec = tf.train.ClusterSpec({job: list(tasks) for job, tasks in config.cluster.items()})
    # A small inter-op pool deadlocks ParameterServerStrategy's remote functions on few cores.
    session_config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=max(16, os.cpu_count() or 1))
    server = tf.distribute.Server(
        spec,
        job_name=config.task_type,
        task_index=config.task_index,
        protocol=config.rpc_layer,
        config=session_config,
        start=True,
    )
    server.join()
    raise SystemExit(0)  # join() does not return while the server runs.


def _build_auto(request: _StrategyRequest) -> tf.distribute.Strategy:
    explicitly_off = request.use_tpu is not None and not request.use_tpu
    reason = None
    if not explicitly_off:
        if _is_tpu_resolver(request.cluster_resolver) or request.tpu or _visible_tpus():
            try:
                return _build_tpu(dataclasses.replace(request, kind="tpu"))
            except ValueError as error:
                reason = str(error)
        else:
            reason = "no TPU devices are visible and neither `tpu` nor a TPUClusterResolver was given"
    choice, description = _auto_choice(request)
    if reason is not None:
        warn_once(
            "make_strategy.auto.no_tpu",
            "tfmigrate.runtime.make_strategy('auto', use_tpu=%r): no TPU found (%s); falling back to %s.",
            request.use_tpu,
            reason,
            description,
        )
    return _BUILDERS[choice.kind](choice)


_BUILDERS: dict[str, Callable[[_StrategyRequest], tf.distribute.Strategy]] = {
    "auto": _build_auto,
    "default": _build_default,
    "one_device": _build_one_device,
    "mirrored": _build_mirrored,
    "tpu": _build_tpu,
    "central_storage": _build_central_storage,
    "multi_worker_mirrored": _build_multi_worker_mirrored,
    "parameter_server": _build_parameter_server,
}

#: The `kind`s `make_strategy` accepts.
STRATEGY_KINDS: tuple[str, ...] = tuple(_BUILDERS)

# The options each explicit kind takes ("auto" takes all and hands each to the kind it picks).
# `use_tpu` is accepted everywhere and read only by "auto".
_KIND_OPTIONS: dict[str, tuple[str, ...]] = {
    "default": (),
    "one_device": ("devices",),
    "mirrored": ("devices", "cross_device_ops"),
    "tpu": ("cluster_resolver", "tpu"),
    "central_storage": ("devices", "parameter_device"),
    "multi_worker_mirrored": ("cluster_resolver", "communication_options"),
    "parameter_server": ("cluster_resolver", "variable_partitioner"),
}


def tpu_resolvers_local_under_strategy_override() -> None:
    """Under `TFMIGRATE_STRATEGY` (a program run under another strategy than its own, as the proof
    of a TPU program on CPUs), a `TPUClusterResolver` the program makes resolves to this machine's
    devices instead of looking up the TPU it names. TF 1.x TPU programs make one wherever `use_tpu`
    is set (`TPUClusterResolver(FLAGS.tpu, zone=..., project=...)`, which raises off Cloud TPU with
    no TPU name), and the strategy the variable names replaces the TPU's. Called when
    `tfmigrate.runtime` is imported; without the variable, nothing changes."""
    if not os.environ.get("TFMIGRATE_STRATEGY", "").strip():
        return
    resolver_class = tf.distribute.cluster_resolver.TPUClusterResolver
    original = resolver_class.__init__
    if getattr(original, "resolves_locally", False):
        return

    def __init__(self: Any, tpu: Any = None, *args: Any, **kwargs: Any) -> None:
        warn_once("tpu-resolver-local", "TFMIGRATE_STRATEGY is set: TPUClusterResolver(tpu=%r) resolves to this "
                  "machine's devices, not to a TPU", tpu)
        original(self, "local")

    __init__.resolves_locally = True  # type: ignore[attr-defined]
    resolver_class.__init__ = __init__


def split_cpu_from_env() -> None:
    """`TFMIGRATE_CPU_DEVICES=N`: the CPU split into N logical devices (for `TFMIGRATE_STRATEGY=
    mirrored` on one CPU), done by the first strategy made, before TensorFlow sets up its devices."""
    value = os.environ.get("TFMIGRATE_CPU_DEVICES", "").strip()
    if not value:
        return
    count = int(value)
    cpu = tf.config.list_physical_devices("CPU")[0]
    current = tf.config.get_logical_device_configuration(cpu)
    if current and len(current) == count:
        return
    try:
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * count)
    except RuntimeError as error:
        raise RuntimeError(
            f"TFMIGRATE_CPU_DEVICES={count}: TensorFlow's devices were set up before the strategy was made "
            f"({error}); set it before the program runs any TensorFlow operation"
        ) from error


def make_strategy(
    kind: str = "auto",
    *,
    cluster_resolver: Any = None,
    tpu: str | None = None,
    use_tpu: bool | None = None,
    devices: Sequence[str] | None = None,
    cross_device_ops: Any = None,
    communication_options: Any = None,
    variable_partitioner: Any = None,
    parameter_device: str | None = None,
) -> tf.distribute.Strategy:
    """Creates the `tf.distribute.Strategy` a migrated Estimator/TPUEstimator program runs under.

    Kinds:
      * "default": `tf.distribute.get_strategy()` (no distribution, or the strategy in scope).
      * "one_device": `OneDeviceStrategy(devices[0])`, or on "/gpu:0" / "/cpu:0".
      * "mirrored": `MirroredStrategy(devices, cross_device_ops)`. Identical requests get the same
        strategy object: a second MirroredStrategy over the same devices breaks collective
        all-reduces of a different model in the same process (tensorflow#62790).
      * "central_storage": `CentralStorageStrategy(compute_devices=devices, parameter_device)`.
      * "tpu": `TPUStrategy` on `cluster_resolver`, or on `TPUClusterResolver(tpu=tpu)`; the TPU
        system is connected to and initialised once per process. Raises when no TPU can be
        resolved; it never falls back.
      * "multi_worker_mirrored": `MultiWorkerMirroredStrategy(cluster_resolver,
        communication_options)`; the cluster is `cluster_resolver`, else `TF_CONFIG` (validated),
        else this process alone. Create it before any other TensorFlow operation runs.
      * "parameter_server": `ParameterServerStrategy(cluster_resolver, variable_partitioner)` on the
        chief (coordinator) task, plus its `ClusterCoordinator` (`cluster_coordinator(strategy)`).
        The cluster (`cluster_resolver`, else `TF_CONFIG`) must have "ps" and "worker" tasks, and
        those tasks must be running `tf.distribute.Server`s.
      * "auto": what a user would pick by hand. A TPU when one resolves (tried unless `use_tpu` is
        explicitly falsy, when `cluster_resolver` is a `TPUClusterResolver`, `tpu` is given, or TPU
        devices are visible; when that finds no TPU a warning is logged once). Otherwise, from the
        cluster (a non-TPU `cluster_resolver`, else `TF_CONFIG`): "ps" tasks -> "parameter_server";
        more than one chief/worker task -> "multi_worker_mirrored"; on the `TF_CONFIG` "evaluator"
        task (which evaluates outside the training cluster, as TF1's did) the local choice; on a
        "ps" or "worker" task of a cluster with "ps" tasks it runs that task's
        `tf.distribute.Server` and never returns (only the chief runs a parameter-server program). Otherwise several GPUs ->
        "mirrored", one GPU -> "one_device", else "default".

    Multi-worker kinds are created once per process and cluster: an identical request returns the
    same strategy object.

    `fit`/`evaluate`/`predict` run a model of every kind: through Keras's own loops under default,
    one_device, mirrored, central_storage and tpu, and through the runtime's engine under
    multi_worker_mirrored (keras-team/keras#20585) and parameter_server (no Keras 3 support); see
    `estimator_calls` and `engine`.

    Args:
        kind: One of `STRATEGY_KINDS`.
        cluster_resolver: A cluster resolver (TF1 `RunConfig(cluster=...)`): a `TPUClusterResolver`
            for "tpu", any resolver for "multi_worker_mirrored"/"parameter_server", or None.
        tpu: TPU name or grpc:// address (TF1 `TPUClusterResolver(tpu=...)` or `RunConfig(master=...)`).
        use_tpu: TF1 `TPUEstimator(use_tpu=...)`; only "auto" reads it.
        devices: Device names for "one_device" (one), "mirrored" and "central_storage" (the
            compute devices). Local devices must exist in this process.
        cross_device_ops: A `tf.distribute.CrossDeviceOps` for "mirrored" (and "auto" on GPUs).
        communication_options: A `tf.distribute.experimental.CommunicationOptions` for
            "multi_worker_mirrored".
        variable_partitioner: A `tf.distribute.experimental.partitioners.Partitioner` for
            "parameter_server".
        parameter_device: The device holding the variables under "central_storage".

    Returns:
        The strategy. Build and compile the model inside its `scope()`.

    Raises:
        ValueError: If `kind` is unknown; an option is given to an explicit kind that does not take
            it; `devices` is empty, a string, or names a device that does not exist; `TF_CONFIG` is
            malformed (not JSON, no `cluster`/`task`, a task index out of range, ...); kind="tpu"
            finds no TPU; or the cluster does not fit the kind (no "ps" tasks for
            "parameter_server", "ps" tasks for "multi_worker_mirrored", a non-chief task running
            "parameter_server").
        RuntimeError: If "multi_worker_mirrored" is created after TensorFlow has started.
    """
    if kind not in _BUILDERS:
        raise ValueError(f"make_strategy: unknown `kind` {kind!r}; valid kinds are {', '.join(STRATEGY_KINDS)}.")
    split_cpu_from_env()
    if isinstance(devices, str):
        raise ValueError(f"make_strategy: `devices` must be a sequence of device names, got the string {devices!r}.")
    if devices is not None:
        devices = tuple(devices)
        if not devices:
            raise ValueError("make_strategy: `devices` must not be empty (use None for the default devices).")
    options = {
        "cluster_resolver": cluster_resolver,
        "tpu": tpu,
        "devices": devices,
        "cross_device_ops": cross_device_ops,
        "communication_options": communication_options,
        "variable_partitioner": variable_partitioner,
        "parameter_device": parameter_device,
    }
    if kind != "auto":
        unused = [name for name, value in options.items() if value is not None and name not in _KIND_OPTIONS[kind]]
        if unused:
            takes = ", ".join(f"`{name}`" for name in _KIND_OPTIONS[kind]) or "no options"
            given = ", ".join(f"`{name}`={options[name]!r}" for name in unused)
            raise ValueError(f"make_strategy(kind={kind!r}) does not use {given}; it takes {takes}.")
    request = _StrategyRequest(kind=kind, use_tpu=use_tpu, **options)
    strategy = _BUILDERS[kind](request)
    logger.info("tfmigrate.runtime.make_strategy(%r) -> %s", kind, type(strategy).__name__)
    return strategy


def strategy_from_config(config: Any, *, use_tpu: bool | None = None, mode: str = "train") -> tf.distribute.Strategy:
    """The strategy a TF1 `RunConfig` asked for.

    `train_distribute` (or `eval_distribute` for `mode="eval"`, falling back to
    `train_distribute` as Estimator did) when set; otherwise `make_strategy("auto")` with the
    config's `cluster` (a TPU cluster resolver under TPUEstimator) and `use_tpu`.

    Args:
        config: A `tfmigrate.runtime.RunConfig` (or anything with those attributes), or None.
        use_tpu: TPUEstimator's `use_tpu`, for "auto".
        mode: "train" or "eval".

    Returns:
        A `tf.distribute.Strategy`.

    Raises:
        ValueError: If `mode` is neither "train" nor "eval".
    """
    if mode not in ("train", "eval"):
        raise ValueError(f"`mode` ({mode!r}) must be 'train' or 'eval'")
    chosen = None
    if config is not None:
        if mode == "eval":
            chosen = getattr(config, "eval_distribute", None)
        chosen = chosen or getattr(config, "train_distribute", None)
    if chosen is not None:
        return chosen
    options: dict[str, Any] = {}
    cluster = getattr(config, "cluster", None) if config is not None else None
    if cluster is not None:
        options["cluster_resolver"] = cluster
    if use_tpu is not None:
        options["use_tpu"] = use_tpu
    return make_strategy("auto", **options)
