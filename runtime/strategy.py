"""`make_strategy`: the `tf.distribute.Strategy` that replaces a TF1 RunConfig/TPUEstimator setup.

Each kind of strategy has one builder function in `_BUILDERS`; `make_strategy(kind)` only validates
arguments and dispatches. To add a kind (central_storage, multi_worker_mirrored, parameter_server),
write a `_build_<kind>(request)` function and register it in `_BUILDERS`.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Callable, Sequence

import tensorflow as tf

from ._logging import logger, warn_once

__all__ = ["STRATEGY_KINDS", "make_strategy"]


@dataclasses.dataclass(frozen=True)
class _StrategyRequest:
    """The arguments of one `make_strategy` call, handed to a builder."""

    kind: str
    cluster_resolver: Any
    tpu: str | None
    use_tpu: bool | None
    devices: tuple[str, ...] | None
    cross_device_ops: Any


# TPU systems this process already initialised, by master address: initialising twice would
# reset the TPU and lose its variables.
_initialized_tpus: dict[str, Any] = {}
_lock = threading.RLock()


def _visible_gpus() -> list[str]:
    return [device.name for device in tf.config.list_logical_devices("GPU")]


def _visible_tpus() -> bool:
    return bool(tf.config.list_logical_devices("TPU") or tf.config.list_physical_devices("TPU"))


def _build_default(request: _StrategyRequest) -> tf.distribute.Strategy:
    del request
    return tf.distribute.get_strategy()


def _build_one_device(request: _StrategyRequest) -> tf.distribute.Strategy:
    if request.devices:
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
    return _mirrored_strategy(request.devices, request.cross_device_ops)


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


def _build_auto(request: _StrategyRequest) -> tf.distribute.Strategy:
    explicitly_off = request.use_tpu is not None and not request.use_tpu
    if not explicitly_off:
        is_tpu_resolver = isinstance(request.cluster_resolver, tf.distribute.cluster_resolver.TPUClusterResolver)
        if is_tpu_resolver or request.tpu or _visible_tpus():
            try:
                return _build_tpu(dataclasses.replace(request, kind="tpu"))
            except ValueError as error:
                reason = str(error)
        else:
            reason = "no TPU devices are visible and neither `tpu` nor a TPUClusterResolver was given"
        gpus = _visible_gpus()
        fallback = "MirroredStrategy over %d GPUs" % len(gpus) if len(gpus) > 1 else (
            "OneDeviceStrategy on the GPU" if gpus else "the default strategy (CPU)"
        )
        warn_once(
            "make_strategy.auto.no_tpu",
            "tfmigrate.runtime.make_strategy('auto', use_tpu=%r): no TPU found (%s); falling back to %s.",
            request.use_tpu,
            reason,
            fallback,
        )
    gpus = _visible_gpus()
    if len(gpus) > 1:
        return _mirrored_strategy(gpus, request.cross_device_ops)
    if len(gpus) == 1:
        return tf.distribute.OneDeviceStrategy(gpus[0])
    return tf.distribute.get_strategy()


_BUILDERS: dict[str, Callable[[_StrategyRequest], tf.distribute.Strategy]] = {
    "auto": _build_auto,
    "default": _build_default,
    "one_device": _build_one_device,
    "mirrored": _build_mirrored,
    "tpu": _build_tpu,
}

#: The `kind`s `make_strategy` accepts.
STRATEGY_KINDS: tuple[str, ...] = tuple(_BUILDERS)


def make_strategy(
    kind: str = "auto",
    *,
    cluster_resolver: Any = None,
    tpu: str | None = None,
    use_tpu: bool | None = None,
    devices: Sequence[str] | None = None,
    cross_device_ops: Any = None,
) -> tf.distribute.Strategy:
    """Creates the `tf.distribute.Strategy` a migrated Estimator/TPUEstimator program runs under.

    Kinds:
      * "default": `tf.distribute.get_strategy()` (no distribution, or the strategy in scope).
      * "one_device": `OneDeviceStrategy(devices[0])`, or on "/gpu:0" / "/cpu:0".
      * "mirrored": `MirroredStrategy(devices, cross_device_ops)`. Identical requests get the same
        strategy object: a second MirroredStrategy over the same devices breaks collective
        all-reduces of a different model in the same process (tensorflow#62790).
      * "tpu": `TPUStrategy` on `cluster_resolver`, or on `TPUClusterResolver(tpu=tpu)`; the TPU
        system is connected to and initialised once per process. Raises when no TPU can be
        resolved; it never falls back.
      * "auto": TPUEstimator's choice. With `use_tpu` explicitly falsy, no TPU is tried. Otherwise a
        TPU is tried when `cluster_resolver` is a `TPUClusterResolver`, `tpu` is given, or TPU
        devices are visible; when that finds no TPU a warning is logged once and the strategy falls
        back to MirroredStrategy (several GPUs), OneDeviceStrategy (one GPU) or the default strategy.

    Args:
        kind: One of `STRATEGY_KINDS`.
        cluster_resolver: A cluster resolver (TF1 `RunConfig(cluster=...)`), or None.
        tpu: TPU name or grpc:// address (TF1 `TPUClusterResolver(tpu=...)` or `RunConfig(master=...)`).
        use_tpu: TF1 `TPUEstimator(use_tpu=...)`; only "auto" reads it.
        devices: Device names for "one_device" and "mirrored".
        cross_device_ops: A `tf.distribute.CrossDeviceOps` for "mirrored" (and "auto" on GPUs).

    Returns:
        The strategy. Build and compile the model inside its `scope()`.

    Raises:
        ValueError: If `kind` is unknown, `devices` is empty or a string, or kind="tpu" finds no TPU.
    """
    if kind not in _BUILDERS:
        raise ValueError(f"make_strategy: unknown `kind` {kind!r}; valid kinds are {', '.join(STRATEGY_KINDS)}.")
    if isinstance(devices, str):
        raise ValueError(f"make_strategy: `devices` must be a sequence of device names, got the string {devices!r}.")
    if devices is not None:
        devices = tuple(devices)
        if not devices:
            raise ValueError("make_strategy: `devices` must not be empty (use None for the default devices).")
    request = _StrategyRequest(
        kind=kind,
        cluster_resolver=cluster_resolver,
        tpu=tpu,
        use_tpu=use_tpu,
        devices=devices,
        cross_device_ops=cross_device_ops,
    )
    strategy = _BUILDERS[kind](request)
    logger.info("tfmigrate.runtime.make_strategy(%r) -> %s", kind, type(strategy).__name__)
    return strategy
