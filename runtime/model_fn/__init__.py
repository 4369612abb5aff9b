"""Running a TF1 model_fn: the strategy tier (TF2, `runner.py`) beside the graph-mode tier
(`tfm.estimator`'s Estimator clone, `runtime/estimator/`).

The strategy tier runs the model_fn as written inside the strategy's `tf.function`: its variables
found once and held (`held.py`), its gradients met across replicas as the program meant
(`replicas.py`), its train/eval/predict steps looped `iterations_per_loop` times per call
(`runner.py`), its hooks run where they act (`session_hooks.py`: when the session is made;
`step_hooks.py`: with every step), an input_fn's one-shot iterator made a dataset again
(`tensor_input.py`), its exports TF2 SavedModels (`exports.py`). `tfm.estimator.Estimator` takes it per call where it can (`tier()`), and runs the
call in graph mode otherwise, logging why.

Environment (read when an Estimator is made):
  * `TFMIGRATE_MODEL_FN_TIER`: `strategy` (the default: the model_fn in TF2, each call that TF2
    cannot run as TF 1.x ran it in graph mode, with the reason logged) or `graph` (every call in
    TF1 graph mode);
  * `TFMIGRATE_STRATEGY`: the strategy a program without one of its own runs under: `default`,
    `one_device`, `mirrored` (all local devices; `TFMIGRATE_CPU_DEVICES=N` first splits the CPU
    into N logical devices) or `multi_worker` (from `TF_CONFIG`); `parameter_server` is refused with
    a message (the tier runs synchronous strategies only);
  * `TFMIGRATE_JIT_COMPILE=1`: every step compiled with XLA, the compiler a TPU runs.
"""

from __future__ import annotations

import os

import tensorflow as tf

from .runner import PARAMETER_SERVER_UNSUPPORTED, ModelFnRunner, Unsupported, jit_compile_requested
from .session_hooks import hooks_unsupported

__all__ = ["ModelFnRunner", "Unsupported", "distribute_unsupported", "hooks_unsupported", "jit_compile_requested",
           "strategy_from_env", "tier"]

_TIERS = ("graph", "strategy")
_KINDS = {
    "default": "default",
    "one_device": "one_device",
    "mirrored": "mirrored",
    "multi_worker": "multi_worker_mirrored",
    "multi_worker_mirrored": "multi_worker_mirrored",
    "parameter_server": "parameter_server",
}


def tier() -> str:
    """The tier `TFMIGRATE_MODEL_FN_TIER` asks for (`strategy` when unset)."""
    value = os.environ.get("TFMIGRATE_MODEL_FN_TIER", "").strip().lower() or "strategy"
    if value not in _TIERS:
        raise ValueError(f"TFMIGRATE_MODEL_FN_TIER={value!r}: expected one of {', '.join(_TIERS)}")
    return value


def strategy_from_env() -> tf.distribute.Strategy | None:
    """The strategy `TFMIGRATE_STRATEGY` names, or None when unset."""
    from ..strategy import make_strategy, split_cpu_from_env

    value = os.environ.get("TFMIGRATE_STRATEGY", "").strip().lower()
    if not value:
        return None
    kind = _KINDS.get(value)
    if kind is None:
        raise ValueError(f"TFMIGRATE_STRATEGY={value!r}: expected one of {', '.join(sorted(_KINDS))}")
    if kind == "parameter_server":  # (before connecting to the cluster)
        raise NotImplementedError(f"TFMIGRATE_STRATEGY={value}: {PARAMETER_SERVER_UNSUPPORTED}")
    devices = os.environ.get("TFMIGRATE_CPU_DEVICES", "").strip()
    split_cpu_from_env()
    if kind == "mirrored" and devices and not tf.config.list_physical_devices("GPU"):
        names = [device.name for device in tf.config.list_logical_devices("CPU")]
        return make_strategy("mirrored", devices=names)
    return make_strategy(kind)


# A RunConfig's own strategy the strategy tier runs as TF 1.x's Estimator ran it (synchronous, in-process
# or multi-worker replicas). TF 1.x's Estimator ran no other (ParameterServer trained through its own
# workers' sessions; TPUStrategy and CentralStorage were not Estimator strategies).
_RUNCONFIG_STRATEGIES = (
    tf.distribute.MirroredStrategy, tf.compat.v1.distribute.MirroredStrategy,
    tf.distribute.OneDeviceStrategy, tf.compat.v1.distribute.OneDeviceStrategy,
    tf.distribute.MultiWorkerMirroredStrategy, tf.compat.v1.distribute.experimental.MultiWorkerMirroredStrategy,
)


def distribute_unsupported(strategy: tf.distribute.Strategy) -> str | None:
    """Why a RunConfig's `train_distribute`/`eval_distribute` runs in graph mode, or None."""
    if isinstance(strategy, _RUNCONFIG_STRATEGIES):
        return None
    return (f"RunConfig's train_distribute/eval_distribute {type(strategy).__name__} runs on TF 2.15's graph-mode "
            "replica path only")
