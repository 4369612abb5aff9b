"""Running a TF1 model_fn: the strategy tier (TF2) beside the graph-mode tier (TF1 graph mode).

`tfm.estimator.Estimator` (`runtime/estimator/core.py`: the calls' contract, Estimator's
arguments, checkpoints and results) takes each train/evaluate/predict/export call to the strategy
tier where it can (`tier()`), and runs it in graph mode otherwise, logging why. The layout, lowest
first (as Orbit layers a loop's step functions, then its controller, then its runner):

  * shared by both tiers: `step_order.py` (within a training step, reads before writes);
  * `strategy/` (the TF2 engine): the model_fn run as written inside the strategy's `tf.function`,
    its variables found once and held (`held.py`), its gradients met across replicas as the program
    meant (`replicas.py`), what TF 1.x's graph build did kept in the trace (`tf1_build.py`), what
    TF2 cannot run found before anything runs (`checks.py`), its steps looped
    `iterations_per_loop` times per call (`runner.py`), its hooks run where they act
    (`session_hooks.py`: when the session is made; `step_hooks.py`: with every step;
    `hook_runs.py`: the runner's part), a TPU `host_call` on the host (`host_calls.py`), the `loss`
    events (`summaries.py`), an input_fn's one-shot iterator made a dataset again
    (`runtime/iterator_input.py`, which `input_fn_data` shares), its exports TF2 SavedModels (`exports.py`);
  * `graph/` (the graph-mode engine's pieces): a RunConfig strategy's replicas in one graph
    (`distribute.py`), TPUEstimator's `iterations_per_loop` as an in-graph loop (`tpu_loop.py`),
    TF1 SavedModels (`saved_model.py`); the Session loops themselves are `Estimator`'s methods.

Environment (read when an Estimator is made):
  * `TFMIGRATE_MODEL_FN_TIER`: `strategy` (the default: the model_fn in TF2, each call that TF2
    cannot run as TF 1.x ran it in graph mode, with the reason logged) or `graph` (every call in
    TF1 graph mode);
  * `TFMIGRATE_STRATEGY`: the strategy a program without one of its own runs under: `default`,
    `one_device`, `mirrored` (all local devices; `TFMIGRATE_CPU_DEVICES=N` first splits the CPU
    into N logical devices), `multi_worker` (from `TF_CONFIG`) or `parameter_server` (from
    `TF_CONFIG`, this process the coordinator: training on the workers, asynchronously, as TF 1.x's
    parameter-server cluster trained; `strategy/parameter_servers.py`); while it is set, a
    `TPUClusterResolver` the program makes resolves to this machine's devices
    (`runtime/strategy.py`'s `tpu_resolvers_local_under_strategy_override`, applied when
    `tfmigrate.runtime` is imported);
  * `TFMIGRATE_JIT_COMPILE=1`: every step compiled with XLA, the compiler a TPU runs.
"""

from __future__ import annotations

import os

import tensorflow as tf

from .strategy.runner import ModelFnRunner, Unsupported, jit_compile_requested
from .strategy.session_hooks import hooks_unsupported

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
    if kind == "parameter_server":
        from ..cluster import tf_config

        task = tf_config()
        if task is not None and task.task_type in ("ps", "worker", "evaluator"):  # the program run on every task,
            return make_strategy("auto")  # as TF 1.x ran it: a ps or worker task serves its server until ended, the
            # evaluator evaluates on its own; the chief trains
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
